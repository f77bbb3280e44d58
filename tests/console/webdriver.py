"""tests/console/webdriver.py — the few W3C WebDriver commands the console's browser test needs,
over HTTP to Debian's chromedriver driving its chromium headless (stdlib only: nothing to
install from a package registry). Each call fails with the driver's message."""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference


class WebDriverError(RuntimeError):
    pass


def find_browser():
    """(chromium, chromedriver) paths, or (None, why) when either is missing."""
    chromium = os.environ.get("PURE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("PURE_CHROMEDRIVER") or shutil.which("chromedriver")
    if not chromium or not os.access(chromium, os.X_OK):
        return None, "chromium is not installed (apt-get install chromium chromium-driver, or set PURE_CHROMIUM)"
    if not driver or not os.access(driver, os.X_OK):
        return None, "chromedriver is not installed (apt-get install chromium-driver, or set PURE_CHROMEDRIVER)"
    return (chromium, driver), None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """One headless chromium session through a chromedriver process of its own."""

    def __init__(self, chromium, driver, width=1400, height=1100, timeout=30.0):
        self.port = free_port()
        self.profile = tempfile.mkdtemp(prefix="pure-console-profile-")
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "wb")
        # its own process group, which chromium joins: close() ends them all, even when chromium
        # hangs and chromedriver, ended, would leave it running
        self.proc = subprocess.Popen([driver, f"--port={self.port}"], stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"
        self.session = None
        end = time.monotonic() + timeout
        while True:
            try:
                if self._call("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.05)
        args = ["--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--force-device-scale-factor=1",
                f"--window-size={width},{height}", f"--user-data-dir={self.profile}/chrome"]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # chromium refuses to run as root with its sandbox
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome",
                                                 "goog:chromeOptions": {"binary": chromium, "args": args}}}}
        try:
            self.session = self._call("POST", "/session", caps)["sessionId"]
        except Exception:
            self.close()
            raise

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                payload = json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            payload = json.loads(e.read() or b"{}")
            v = payload.get("value", {})
            raise WebDriverError(f"{method} {path}: {v.get('error')}: {v.get('message', '')[:500]}") from None
        return payload.get("value")

    def _s(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url):
        self._s("POST", "/url", {"url": url})

    def run(self, script, *args):
        """Runs script (a function body; arguments[i] are args) in the page; returns its value."""
        return self._s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css, timeout=10.0):
        """The element css selects, waiting up to timeout for it to appear."""
        end = time.monotonic() + timeout
        while True:
            try:
                found = self._s("POST", "/element", {"using": "css selector", "value": css})
                if isinstance(found, dict) and ELEMENT in found:
                    return found[ELEMENT]
            except WebDriverError:
                if time.monotonic() > end:
                    raise
            if time.monotonic() > end:
                raise WebDriverError(f"no element {css}")
            time.sleep(0.05)

    def find_all(self, css):
        """Every element css selects now (references)."""
        found = self._s("POST", "/elements", {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in found]

    def label(self, element):
        """The accessible name the browser computes for an element reference (what a screen
        reader announces)."""
        return self._s("GET", f"/element/{element}/computedlabel")

    def click(self, css):
        self._s("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css, text, clear=True):
        e = self.find(css)
        if clear:
            self._s("POST", f"/element/{e}/clear", {})
        self._s("POST", f"/element/{e}/value", {"text": text})

    def text(self, css):
        return self._s("GET", f"/element/{self.find(css)}/text")

    def wait(self, script, *args, timeout=10.0, what=None):
        """Polls script until it returns something truthy; returns that."""
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            last = self.run(script, *args)
            if last:
                return last
            time.sleep(0.05)
        raise WebDriverError(f"timed out waiting for {what or script} (last: {last!r})")

    def screenshot(self, path, css=None):
        """The viewport, or one element, as PNG."""
        data = self._s("GET", f"/element/{self.find(css)}/screenshot" if css else "/screenshot")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.session:
            try:
                self._call("DELETE", f"/session/{self.session}")
            except Exception:
                pass
            self.session = None
        for sig in (signal.SIGTERM, signal.SIGKILL):  # the group: chromedriver and every chromium process
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                continue
            time.sleep(0.2)  # chromium's processes end after their leader
        self.proc.poll()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
