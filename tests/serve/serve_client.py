"""tests/serve/serve_client.py — helpers shared by the pure-serve tests and bench/serve: start a
real server on 127.0.0.1 with a free port (it logs the port it got) on a data directory (a fresh
temporary one unless given), wait until its modules have recovered, and a small keep-alive HTTP
client on a raw socket (fast enough to load the server from Python)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time


class Server:
    """A pure-serve process listening on 127.0.0.1 at a free port, its stderr collected.
    data: the --data directory (None: a fresh temporary one, removed by cleanup()). ready: also
    wait until every module has recovered (a module_ready line each, or a recovery_failed). env: variables
    set for the server on top of this process's environment (e.g. PURE_JIT). port: listen on this
    port instead of a free one (a server started again where clients knew the last one)."""

    def __init__(self, binary, modules, *extra, wait=20.0, data=None, ready=True, preexec_fn=None, env=None, port=0):
        self.own_data = data is None
        self.data = tempfile.mkdtemp(prefix="pure-serve-") if data is None else data
        self.args = [binary, "--listen", f"127.0.0.1:{port}", "--data", self.data, *extra, *modules]
        environment = None if env is None else {**os.environ, **env}
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec_fn,
                                     env=environment)
        self.lines = []
        self._ready = threading.Event()
        self._recovered = threading.Event()
        self._modules = len(modules)
        self.port = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(wait) or self.port is None:
            self.kill()
            raise RuntimeError("pure-serve did not start: " + "\n".join(self.lines))
        if ready and not self._recovered.wait(wait):
            self.kill()
            raise RuntimeError("pure-serve did not recover: " + "\n".join(self.lines))

    def cleanup(self):
        if self.own_data:
            shutil.rmtree(self.data, ignore_errors=True)

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == "listening":
                self.port = int(entry["address"].rsplit(":", 1)[1])
                self._ready.set()
            if entry.get("event") == "recovery_failed" or len(self.log("module_ready")) == self._modules:
                self._recovered.set()
        self._ready.set()
        self._recovered.set()

    def log(self, event):
        out = []
        for line in list(self.lines):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("event") == event:
                out.append(entry)
        return out

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, timeout=20.0):
        """SIGTERM; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self.kill()
            self._reader.join(10)  # the last lines (shutdown) are read before anyone looks at them
            self.cleanup()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Conn:
    """One keep-alive HTTP/1.1 connection on a raw socket."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def request(self, method, path, body=None, headers=None):
        self.send_raw(build(method, path, body, headers))
        return self.read_response()

    def read_response(self):
        """(status, headers dict lower-case, body bytes); raises ConnectionError when closed."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before a response")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed mid-body")
            self.buf += chunk
        body, self.buf = self.buf[:n], self.buf[n:]
        if status == 100:
            return self.read_response()
        return status, headers, body

    def json(self, method, path, obj=None, headers=None):
        body = None if obj is None else (obj if isinstance(obj, (bytes, str)) else json.dumps(obj))
        status, _, data = self.request(method, path, body, headers)
        return status, json.loads(data) if data else None


def build(method, path, body=None, headers=None):
    if isinstance(body, str):
        body = body.encode()
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if method == "POST" and not any(k.lower() == "content-type" for k in (headers or {})):
        lines.append("Content-Type: application/json")  # pure-serve refuses a POST of any other type (415)
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def find_binary():
    binary = os.environ.get("PURE_SERVE")
    if not binary or not os.path.exists(binary):
        raise RuntimeError("set PURE_SERVE to the pure-serve binary")
    return binary


def serve_for(test, modules, data=None):
    """A Server for a unittest.TestCase and a Conn to it, both ended by the test's clean-ups."""
    server = Server(find_binary(), modules, data=data)
    test.addCleanup(server.kill)
    c = Conn(server.port)
    test.addCleanup(c.close)
    return server, c


def wait_until(pred, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def metric(port, name, module=None):
    """The value of the series NAME in GET /metrics, as an int: NAME unlabelled (or written with its
    labels), or labelled {module="MODULE"} when module is given."""
    if module:
        name += '{module="%s"}' % module
    c = Conn(port)
    try:
        status, _, body = c.request("GET", "/metrics")
    finally:
        c.close()
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    raise AssertionError(f"no metric {name}")
