"""tests/lsp/lsp_client.py — a small Language Server Protocol client over a pure-lsp process's
pipes, shared by tests/lsp/test_protocol.py and bench/lsp: Content-Length framing, requests with
ids, notifications, and every wait bounded (a reader thread puts each message on a queue).
Standard library only."""
import json
import queue
import subprocess
import threading
import time


class Client:
    def __init__(self, binary, timeout=20.0):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.timeout = timeout
        self.messages = queue.Queue()
        self.next_id = 1
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.rstrip(b"\r\n")
                if not line:
                    break
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            body = out.read(int(headers[b"content-length"]))
            self.messages.put(json.loads(body))

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def write_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message):
        body = json.dumps(message).encode()
        self.write_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def receive(self, timeout=None):
        """The next message from the server (None: it closed its output); fails after the timeout."""
        try:
            return self.messages.get(timeout=self.timeout if timeout is None else timeout)
        except queue.Empty:
            raise AssertionError("pure-lsp sent nothing for %.0f s; its stderr: %s" % (self.timeout, "".join(self.stderr)))

    def wait_for(self, predicate):
        """Messages until one satisfies predicate (the others are dropped); bounded by the timeout."""
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("pure-lsp did not send the expected message in time")
            message = self.receive(left)
            if message is None:
                raise AssertionError("pure-lsp closed its output; its stderr: " + "".join(self.stderr))
            if predicate(message):
                return message

    def request_raw(self, method, params=None):
        """The whole reply (result or error) to a request."""
        ident = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(lambda m: m.get("id") == ident and "method" not in m)

    def request(self, method, params=None):
        reply = self.request_raw(method, params)
        if "error" in reply:
            raise AssertionError("%s failed: %s" % (method, reply["error"]))
        return reply["result"]

    def initialize(self):
        result = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        self.notify("initialized", {})
        return result

    def open(self, uri, text, version=1):
        """Opens a document and returns the diagnostics published for it."""
        self.notify("textDocument/didOpen",
                    {"textDocument": {"uri": uri, "languageId": "pure", "version": version, "text": text}})
        return self.diagnostics(uri)

    def change(self, uri, text, version):
        self.notify("textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
        return self.diagnostics(uri)

    def diagnostics(self, uri):
        message = self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
        return message["params"]["diagnostics"]

    def at(self, method, uri, line, character, **extra):
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        params.update(extra)
        return self.request(method, params)

    def close(self):
        """shutdown then exit; returns the exit code."""
        self.request("shutdown")
        self.notify("exit")
        return self.finish()

    def finish(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("pure-lsp did not exit")
