"""tests/serve/test_security.py — pure-serve's defences as a real process on 127.0.0.1
(docs/serve.md, "Security"): request smuggling refused on both parse paths (the hand-written
fast path and Beast's), Host and Origin checks (DNS rebinding, cross-site requests), JSON bodies
only, token scopes, HEAD, nosniff, and JSON numbers that overflow. Raw sockets for malformed
HTTP. Run by ctest with PURE_SERVE set to the binary."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, build, find_binary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
warnings.simplefilter("ignore", ResourceWarning)


def responses(data):
    """The HTTP responses in data, each (status, headers lower-case, body)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        out.append((int(lines[0].split(" ")[1]), headers, rest[:n]))
        data = rest[n:]
    return out


class Served(unittest.TestCase):
    EXTRA = ()

    @classmethod
    def setUpClass(cls):
        cls.server = Server(find_binary(), [SHOP], "--request-timeout-ms", "2000", *cls.EXTRA)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0

    def conn(self):
        c = Conn(self.server.port)
        self.addCleanup(c.close)
        return c

    def raw(self, pieces, pause=0.0):
        """Sends the pieces (a pause between them) on a fresh connection and reads until the server
        closes it or goes quiet for a second; returns the bytes."""
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=5)
        try:
            for i, piece in enumerate(pieces):
                if i and pause:
                    time.sleep(pause)
                try:
                    s.sendall(piece)
                except (BrokenPipeError, ConnectionResetError):
                    break
            s.settimeout(1.0)
            out = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except (socket.timeout, ConnectionResetError):
                    break
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()

    def hits(self, name):
        status, body = self.conn().json("POST", "/v1/shop/count", {"name": name})
        self.assertEqual(status, 200, body)
        return body["result"]


class Smuggling(Served):
    """A request whose framing the server and a proxy in front could read differently is refused
    with 400 and the connection closed: the body, itself a request, never runs. Each case goes
    whole in one write (the fast path sees it first) and a byte at a time after the first line
    (Beast's parser reads it piece by piece)."""

    INNER = build("POST", "/v1/shop/hit", '{"name":"smuggled"}')

    def refused(self, head, words, body=None):
        body = self.INNER if body is None else body
        request = head + b"Content-Type: application/json\r\n\r\n" + body
        first = request.index(b"\r\n") + 2
        for pieces in ([request], [request[:first]] + [request[i:i + 1] for i in range(first, len(request))]):
            with self.subTest(head=head, split=len(pieces) > 1):
                got = responses(self.raw(pieces))
                self.assertEqual(len(got), 1, got)  # one answer: the body was not read as a request
                status, headers, text = got[0]
                self.assertEqual(status, 400, text)
                self.assertEqual(headers.get("connection"), "close")
                self.assertIn(words, json.loads(text)["error"])
        self.assertEqual(self.hits("smuggled"), 0)

    def test_transfer_encodings_other_than_chunked(self):
        start = b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for coding in [b"xchunked", b"chunked, identity", b"identity", b"", b'"chunked"', b"gzip, chunked, x",
                       b"chunked;q=1", b"chunkedx"]:
            self.refused(start + b"Transfer-Encoding: " + coding + b"\r\n", "Transfer-Encoding must be exactly 'chunked'")

    def test_repeated_and_folded_transfer_encodings(self):
        start = b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        self.refused(start + b"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", "two Transfer-Encoding")
        self.refused(start + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "bad HTTP request")
        self.refused(start + b"Transfer-Encoding: identity\r\n chunked\r\n", "bad HTTP request")  # obs-fold
        self.refused(start + b"Transfer-Encoding : chunked\r\n", "bad HTTP request")
        self.refused(start + b"X: y\r\n Transfer-Encoding: chunked\r\n", "bad HTTP request")

    def test_content_length_with_transfer_encoding(self):
        start = b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        n = b"%d" % len(self.INNER)
        self.refused(start + b"Content-Length: " + n + b"\r\nTransfer-Encoding: xchunked\r\n", "Transfer-Encoding")
        self.refused(start + b"Transfer-Encoding: identity\r\nContent-Length: " + n + b"\r\n", "Transfer-Encoding")
        self.refused(start + b"Transfer-Encoding: chunked\r\nContent-Length: " + n + b"\r\n", "bad HTTP request",
                     b"0\r\n\r\n" + self.INNER)
        self.refused(start + b"Content-Length: " + n + b"\r\nTransfer-Encoding: chunked\r\n", "bad HTTP request",
                     b"0\r\n\r\n" + self.INNER)

    def test_transfer_encoding_in_http_1_0(self):
        # RFC 9112 section 6.1: the framing of an HTTP/1.0 message with Transfer-Encoding is faulty
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(self.INNER), self.INNER)
        self.refused(b"POST /v1/shop/hit HTTP/1.0\r\nTransfer-Encoding: chunked\r\n", "HTTP/1.0", chunked)
        self.refused(b"POST /v1/shop/hit HTTP/1.0\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n", "HTTP/1.0",
                     chunked)

    def test_host_and_authorization_headers(self):
        self.refused(b"POST /v1/shop/hit HTTP/1.1\r\nContent-Length: 1\r\n", "needs a Host header", b"x" + self.INNER)
        self.refused(b"POST /v1/shop/hit HTTP/1.1\r\nHost:\r\nContent-Length: 1\r\n", "needs a Host header",
                     b"x" + self.INNER)
        self.refused(b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n",
                     "two Host headers", b"x" + self.INNER)
        self.refused(b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\r\n"
                     b"Authorization: Bearer b\r\nContent-Length: 1\r\n", "two Authorization headers", b"x" + self.INNER)
        self.refused(b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\n"
                     b"Origin: http://127.0.0.1\r\nContent-Length: 1\r\n", "two Origin headers", b"x" + self.INNER)
        # GET without a Host: the fast path would take it whole, Beast's parser in pieces
        self.refused(b"GET /health HTTP/1.1\r\n", "needs a Host header", b"")

    def test_good_requests_on_both_paths(self):
        # HTTP/1.0 needs no Host; chunked alone is fine; the same request whole and in pieces
        self.assertTrue(self.raw([b"GET /health HTTP/1.0\r\n\r\n"]).startswith(b"HTTP/1.1 200 "))
        body = b'{"name":"framed"}'
        for head in [b"Transfer-Encoding: chunked\r\n", b"Transfer-Encoding: Chunked \r\n",
                     b"Content-Length: %d\r\n" % len(body)]:
            payload = body if b"Content-Length" in head else b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
            request = (b"POST /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Connection: close\r\n" + head + b"\r\n" + payload)
            for pieces in ([request], [request[:10], request[10:]]):
                got = responses(self.raw(pieces, pause=0.05))
                self.assertEqual([g[0] for g in got], [200], got)
        self.assertEqual(self.hits("framed"), 6)


class HostsAndOrigins(Served):
    """DNS rebinding and cross-site requests: only the listen address's Host names (and
    --allow-host), only same-origin pages, only JSON bodies for POST."""

    def status(self, method, path, headers, body=None):
        c = self.conn()
        if method == "POST":
            headers = {**headers, "Content-Type": "application/json"}
        c.send_raw(raw_request(method, path, headers, body))
        status, _, text = c.read_response()
        return status, json.loads(text) if text and text.startswith(b"{") else text

    def post(self, headers, path, body):  # with exactly these headers
        c = self.conn()
        c.send_raw(raw_request("POST", path, headers, body))
        status, _, text = c.read_response()
        return status, json.loads(text)

    def test_host_names(self):
        port = self.server.port
        for host in ["127.0.0.1", f"127.0.0.1:{port}", "localhost", f"LocalHost:{port}", "[::1]", f"[::1]:{port}",
                     "localhost:1"]:  # the port is not compared: tunnels and port maps change it
            with self.subTest(host=host):
                self.assertEqual(self.status("GET", "/v1/shop", {"Host": host})[0], 200)
        for host in ["evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "localhost.", "10.0.0.1",
                     "[::2]", "local host", "127.0.0.1:x"]:
            with self.subTest(host=host):
                status, body = self.status("GET", "/v1/shop", {"Host": host})
                self.assertEqual(status, 421, body)
                self.assertIn("does not serve the host", body["error"])
                self.assertIn("--allow-host", body["error"])
        # an event too, before anything runs
        status, body = self.status("POST", "/v1/shop/hit", {"Host": "evil.example"}, '{"name":"rebound"}')
        self.assertEqual(status, 421)
        self.assertEqual(self.hits("rebound"), 0)

    def test_origins(self):
        port = self.server.port
        host = f"127.0.0.1:{port}"
        ok = {"Host": host, "Origin": f"http://{host}"}
        self.assertEqual(self.status("POST", "/v1/shop/hit", ok, '{"name":"same"}')[0], 200)
        self.assertEqual(self.status("GET", "/v1/shop", {"Host": host, "Origin": f"HTTP://{host.upper()}"})[0], 200)
        for origin in ["http://evil.example", "null", f"https://{host}", f"http://localhost:{port}", "http://127.0.0.1",
                       f"http://{host}/", f"http://{host}.evil"]:
            with self.subTest(origin=origin):
                status, body = self.status("POST", "/v1/shop/hit", {"Host": host, "Origin": origin}, '{"name":"cross"}')
                self.assertEqual(status, 403, body)
                self.assertIn("cross-origin requests are refused", body["error"])
                self.assertEqual(self.status("GET", "/v1/shop/lists/hits", {"Host": host, "Origin": origin})[0], 403)
        self.assertEqual(self.hits("cross"), 0)
        self.assertEqual(self.hits("same"), 1)

    def test_json_bodies_only(self):
        # what a form or fetch(url, {mode: "no-cors"}) can send without a preflight never runs
        for kind in [None, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                     "multipart/form-data; boundary=x", "application/jsonx", "application/json-patch+json", "json"]:
            with self.subTest(kind=kind):
                headers = {"Host": "127.0.0.1", "Content-Type": kind} if kind else {"Host": "127.0.0.1"}
                status, body = self.post(headers, "/v1/shop/hit", '{"name":"form"}')
                self.assertEqual(status, 415, body)
                self.assertIn("send 'Content-Type: application/json'", body["error"])
                self.assertIn("got none" if kind is None else f"got '{kind}'", body["error"])
                self.assertEqual(self.post(headers, "/v1/shop/count", '{"name":"form"}')[0], 415)
        self.assertEqual(self.hits("form"), 0)
        for kind in ["application/json", "Application/JSON", "application/json; charset=utf-8",
                     "application/json;charset=UTF-8"]:
            with self.subTest(kind=kind):
                self.assertEqual(self.post({"Host": "127.0.0.1", "Content-Type": kind}, "/v1/shop/hit",
                                           '{"name":"json"}')[0], 200)
        self.assertEqual(self.hits("json"), 4)

    def test_head_answers_as_get_without_a_body(self):
        for path in ["/", "/console/console.js", "/health", "/v1/shop", "/v1/shop/source", "/v1/shop/lists/hits",
                     "/metrics"]:
            with self.subTest(path=path):
                got = self.conn().request("GET", path)
                out = self.raw([b"HEAD " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"])
                head, rest = out.split(b"\r\n\r\n", 1)
                self.assertTrue(head.startswith(b"HTTP/1.1 200 "), head)
                headers = dict(line.lower().split(": ", 1) for line in head.decode().split("\r\n")[1:])
                self.assertEqual(headers["content-type"], got[1]["content-type"])
                if path != "/metrics":  # its figures move between the two requests
                    self.assertEqual(int(headers["content-length"]), len(got[2]))
                self.assertTrue(rest.startswith(b"HTTP/1.1 200 "), rest[:100])  # no body came between
        out = self.raw([b"HEAD /v1/shop/hit HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"])
        self.assertTrue(out.startswith(b"HTTP/1.1 405 "), out)
        self.assertIn(b"\r\nAllow: POST\r\n", out)
        self.assertTrue(out.endswith(b"\r\n\r\n"), out)  # no body

    def test_nosniff_on_every_answer(self):
        c = self.conn()
        for method, path, body in [("GET", "/health", None), ("GET", "/v1/shop", None), ("POST", "/v1/shop/hit", "{}"),
                                   ("GET", "/nope", None), ("POST", "/v1/shop/count", '{"name":"n"}'),
                                   ("GET", "/metrics", None), ("GET", "/", None)]:
            status, headers, _ = c.request(method, path, body)
            self.assertEqual(headers.get("x-content-type-options"), "nosniff", (method, path, status))
        out = self.raw([b"GET /health HTTP/9.9\r\n\r\n"])
        self.assertIn(b"X-Content-Type-Options: nosniff\r\n", out)


def raw_request(method, path, headers, body=None):
    lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
    data = body.encode() if isinstance(body, str) else body
    if data is not None:
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (data or b"")


class AllowHost(Served):
    EXTRA = ("--allow-host", "App.Example", "--allow-host", "10.1.2.3")

    def test_allowed_names_beside_the_listen_address(self):
        c = self.conn()
        for host, want in [("app.example", 200), ("APP.EXAMPLE:8443", 200), ("10.1.2.3", 200), ("localhost", 200),
                           ("other.example", 421), ("10.1.2.4", 421)]:
            c.send_raw(raw_request("GET", "/health", {"Host": host}))
            self.assertEqual(c.read_response()[0], want, host)
        # the same-origin check uses the name the page was loaded from
        c.send_raw(raw_request("POST", "/v1/shop/hit", {"Host": "app.example", "Origin": "http://app.example",
                                                        "Content-Type": "application/json"}, '{"name":"a"}'))
        self.assertEqual(c.read_response()[0], 200)

    def test_bad_values_and_any(self):
        for value in ["a b", "host:80", "", "http://x", "a/b"]:
            p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--allow-host", value, SHOP],
                               capture_output=True, timeout=20)
            self.assertEqual(p.returncode, 2, value)
            self.assertIn(b"--allow-host takes a host name without a port", p.stderr)
        server = Server(find_binary(), [SHOP], "--allow-host", "*")
        try:
            c = Conn(server.port)
            c.send_raw(raw_request("GET", "/health", {"Host": "anything.example"}))
            self.assertEqual(c.read_response()[0], 200)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)


class Numbers(Served):
    """JSON numbers: a literal that overflows a num is refused (the strings "inf" and "-inf" are how
    infinities are sent), an int out of range names the range; the fast argument path (plain
    keys) and the JSON document path (the same body with an escaped key) answer byte for byte
    alike."""

    INT = "expected int in -9223372036854775808..9223372036854775807"
    NUMS = ["1e400", "-1e400", "1E400", "123456789e305", "-0.0", "1e-400", "0.1", "1.5", "-0", "7", "1e2",
            "123456789012345678", "1234567890123456789", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e26", "-1e26", "1.0",
            "2.5e-3", '"inf"', '"-inf"', '"nan"', '"1e400"', "true", "null", "[1]"]

    def replies(self, path, key, other, value):
        c = self.conn()
        fast = c.request("POST", path, '{"%s": %s%s}' % (key, value, other))
        escaped = '{"\\u%04x%s": %s%s}' % (ord(key[0]), key[1:], value, other)
        document = c.request("POST", path, escaped)
        self.assertEqual((fast[0], fast[2]), (document[0], document[2]), value)
        return fast[0], json.loads(fast[2])

    def test_both_argument_paths_agree(self):
        for value in self.NUMS:
            with self.subTest(value=value):
                self.replies("/v1/shop/big", "n", "", value)
                self.replies("/v1/shop/ratio", "a", ', "b": 1', value)
                self.replies("/v1/shop/sum_all", "xs", "", "[1, %s]" % value)

    def test_overflowing_nums_are_refused(self):
        for value, sign in [("1e400", "above "), ("-1e400", "below -"), ("1E400", "above "), ("123456789e305", "above ")]:
            status, body = self.replies("/v1/shop/ratio", "a", ', "b": 1', value)
            self.assertEqual(status, 400, body)
            self.assertEqual(body["error"], "parameter 'a': the number overflows num (%s1.7976931348623157e308); "
                                            'send the string "inf" or "-inf" for an infinity' % sign)
        status, body = self.replies("/v1/shop/sum_all", "xs", "", "[1, 1e999]")
        self.assertEqual(status, 400, body)
        self.assertIn("parameter 'xs[1]': the number overflows num", body["error"])
        self.assertEqual(self.replies("/v1/shop/ratio", "a", ', "b": 1', '"inf"'), (200, {"result": "inf"}))
        self.assertEqual(self.replies("/v1/shop/ratio", "a", ', "b": 1', '"-inf"'), (200, {"result": "-inf"}))
        self.assertEqual(self.replies("/v1/shop/ratio", "a", ', "b": 1', "1e-400"), (200, {"result": 0.0}))
        self.assertEqual(self.replies("/v1/shop/ratio", "a", ', "b": 1', "1.7976931348623157e308")[0], 200)

    def test_int_range_errors_name_the_range(self):
        for value, shown in [("1e26", "1e26"), ("-1e26", "-1e26"), ("9223372036854775808", "9223372036854775808"),
                             ("18446744073709551615", "18446744073709551615"),
                             ("-9223372036854775809", "-9.223372036854776e18"),
                             ("18446744073709551616", "1.8446744073709552e19"), ("1e400", "a number above "),
                             ("-1e400", "a number below ")]:
            status, body = self.replies("/v1/shop/big", "n", "", value)
            self.assertEqual(status, 400, body)
            self.assertTrue(body["error"].startswith("parameter 'n': %s, got %s" % (self.INT, shown)), body)
        self.assertEqual(self.replies("/v1/shop/big", "n", "", "1.5")[1]["error"],
                         "parameter 'n': expected int (a JSON integer), got the number 1.5")
        self.assertEqual(self.replies("/v1/shop/big", "n", "", "-9223372036854775808")[0], 409)  # in range; n * 2 overflows
        self.assertEqual(self.replies("/v1/shop/big", "n", "", "4611686018427387903"), (200, {"result": 9223372036854775806}))


TOKENS = """# tokens for test_security.py
read r-token
write  w-token
admin a-token
read,write rw-token
"""


class Scopes(unittest.TestCase):
    """--token-file with scopes: once a read token exists every read needs a token of scope read,
    events scope write (write includes read, admin both); 401 tells a missing token from a wrong
    one (RFC 6750's WWW-Authenticate), 403 a token of too small a scope; /health and the
    console's files stay open."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pure-serve-tokens-")
        cls.tokens = os.path.join(cls.dir, "tokens")
        with open(cls.tokens, "w") as f:
            f.write(TOKENS)
        cls.server = Server(find_binary(), [SHOP], "--token-file", cls.tokens)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0
        shutil.rmtree(cls.dir, True)

    def ask(self, method, path, auth=None, body=None):
        c = Conn(self.server.port)
        try:
            status, headers, text = c.request(method, path, body, {"Authorization": auth} if auth else None)
        finally:
            c.close()
        return status, headers, json.loads(text) if text.startswith(b"{") else text

    READS = [("GET", "/v1/shop", None), ("GET", "/v1/shop/lists/hits", None), ("GET", "/v1/shop/source", None),
             ("GET", "/metrics", None), ("POST", "/v1/shop/count", '{"name":"s"}'), ("GET", "/v1", None),
             ("GET", "/v1/nomodule", None)]  # the last one answers 404 whatever the token

    def test_missing_and_wrong_tokens(self):
        for method, path, body in self.READS + [("POST", "/v1/shop/hit", '{"name":"s"}')]:
            # without a valid token nothing of the modules shows: not even that hit is an event (then 403 names write)
            scope = "read"
            with self.subTest(path=path):
                status, headers, got = self.ask(method, path, None, body)
                self.assertEqual(status, 401, got)
                self.assertEqual(headers["www-authenticate"], f'Bearer realm="pure-serve", scope="{scope}"')
                self.assertIn(f"needs a token of scope {scope}: none was sent", got["error"])
                self.assertIn("Authorization: Bearer TOKEN", got["error"])
                status, headers, got = self.ask(method, path, "Bearer nope", body)
                self.assertEqual(status, 401, got)
                self.assertIn('error="invalid_token"', headers["www-authenticate"])
                self.assertIn(f"needs a token of scope {scope}: the token sent is not valid", got["error"])
                self.assertNotIn("nope", got["error"])
                status, headers, got = self.ask(method, path, "Basic cjp0b2tlbg==", body)
                self.assertEqual(status, 401, got)
                self.assertIn("must use the Bearer scheme", got["error"])
                for near in ["Bearer r-toke", "Bearer r-tokenn", "Bearer R-TOKEN", "Bearer", "Bearer  ", "r-token"]:
                    self.assertEqual(self.ask(method, path, near, body)[0], 401, near)
        self.assertEqual(self.ask("POST", "/v1/shop/count", "Bearer r-token", '{"name":"s"}')[2], {"result": 0})

    def test_scopes(self):
        for token, reads, writes in [("r-token", True, False), ("w-token", True, True), ("a-token", True, True),
                                     ("rw-token", True, True)]:
            for scheme in ["Bearer", "bearer", "BEARER"]:
                auth = f"{scheme} {token}"
                with self.subTest(auth=auth):
                    for method, path, body in self.READS[:-1]:
                        self.assertEqual(self.ask(method, path, auth, body)[0], 200, path)
                    status, headers, got = self.ask("POST", "/v1/shop/hit", auth, '{"name":"scoped"}')
                    if writes:
                        self.assertEqual(status, 200, got)
                    else:
                        self.assertEqual(status, 403, got)
                        self.assertEqual(headers["www-authenticate"],
                                         'Bearer realm="pure-serve", error="insufficient_scope", scope="write"')
                        self.assertIn("event hit needs a token of scope write: the token sent has scope read",
                                      got["error"])
        self.assertEqual(self.ask("POST", "/v1/shop/count", "Bearer r-token", '{"name":"scoped"}')[2],
                         {"result": 9})
        status, _, got = self.ask("GET", "/v1/shop", "Bearer r-token")
        self.assertEqual((got["events_need_token"], got["reads_need_token"]), (True, True))

    def test_open_routes(self):
        self.assertEqual(self.ask("GET", "/health")[0], 200)
        for path in ["/", "/console/console.js", "/console/console.css"]:
            self.assertEqual(self.ask("GET", path)[0], 200, path)

    def test_write_tokens_alone_keep_reads_open(self):
        path = os.path.join(self.dir, "writers")
        with open(path, "w") as f:
            f.write("w1\nwrite,admin w2\n")
        server = Server(find_binary(), [SHOP], "--token-file", path)
        try:
            c = Conn(server.port)
            self.assertEqual(c.json("POST", "/v1/shop/count", {"name": "x"})[0], 200)
            self.assertEqual(c.json("GET", "/v1/shop/lists/hits")[0], 200)
            status, body = c.json("GET", "/v1/shop")
            self.assertEqual((status, body["events_need_token"], body["reads_need_token"]), (200, True, False))
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "x"})[0], 401)
            for token in ["w1", "w2"]:
                self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "x"}, {"Authorization": "Bearer " + token})[0],
                                 200)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_tokens_that_could_never_be_sent_are_refused_at_start(self):
        cases = [
            (b"read ok\nwrite bad\x00token\n", "line 2: the token holds the byte 0x00"),
            (b"read a\x01b\n", "line 1: the token holds the byte 0x01"),
            (b"read caf\xc3\xa9\n", "line 1: the token holds the byte 0xc3"),
            (b"read one two\n", "line 1: expected 'SCOPE[,SCOPE] TOKEN' or a lone TOKEN, got 3 words"),
            (b"\n# c\nreader tok\n", "line 3: unknown scope 'reader' (the scopes are read, write and admin)"),
            (b"read,,write tok\n", "line 1: unknown scope ''"),
            (b"read tok\nwrite tok\n", "line 2: the same token as line 1"),
            (b"# only a comment\n\n", "holds no token"),
            (b"", "holds no token"),
            (b"read " + b"x" * 200 + b"\n",
             "line 1: the token is 200 bytes: 'Authorization: Bearer TOKEN' could never fit --header-limit (200 bytes)"),
        ]
        for text, words in cases:
            with self.subTest(text=text[:30]):
                path = os.path.join(self.dir, "bad")
                with open(path, "wb") as f:
                    f.write(text)
                p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", os.path.join(self.dir, "d"),
                                    "--header-limit", "200", "--token-file", path, SHOP], capture_output=True, timeout=20)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"pure-serve: the token file '{path}' {words}".encode(), p.stderr)
                self.assertNotIn(b"xxxxx", p.stderr)
                self.assertNotIn(b"tok\n", p.stderr)


class Tls(unittest.TestCase):
    """--tls-cert and --tls-key: HTTPS against a self-signed certificate the test makes with openssl,
    checked with curl --cacert and Python's ssl module (TLS 1.2 and 1.3, AEAD ciphers, no
    compression); /health, the console and the API over it; plain HTTP on its port gets nothing."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pure-serve-tls-")
        cls.server = None
        openssl = shutil.which("openssl")
        if not openssl or not shutil.which("curl"):
            raise unittest.SkipTest("openssl or curl is missing")
        cls.cert, cls.key = os.path.join(cls.dir, "cert.pem"), os.path.join(cls.dir, "key.pem")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-keyout", cls.key, "-out", cls.cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True,
                       timeout=60)
        probe = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", os.path.join(cls.dir, "probe"),
                                "--tls-cert", cls.cert, "--tls-key", os.path.join(cls.dir, "missing.pem"), SHOP],
                               capture_output=True, timeout=20)
        if b"built without TLS" in probe.stderr:
            raise unittest.SkipTest("this pure-serve has no TLS")
        cls.server = Server(find_binary(), [SHOP], "--tls-cert", cls.cert, "--tls-key", cls.key,
                            "--request-timeout-ms", "2000")

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            assert cls.server.stop() == 0
        shutil.rmtree(cls.dir, True)

    def curl(self, *args):
        p = subprocess.run(["curl", "-sS", "--cacert", self.cert, "-w", "\n%{http_code}", *args], capture_output=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        body, _, code = p.stdout.rpartition(b"\n")
        return int(code), body

    def url(self, path):
        return f"https://127.0.0.1:{self.server.port}{path}"

    def tls_socket(self, **versions):
        import ssl
        ctx = ssl.create_default_context(cafile=self.cert)
        for k, v in versions.items():
            setattr(ctx, k, v)
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        return ctx.wrap_socket(raw, server_hostname="127.0.0.1")

    def test_curl_over_https(self):
        self.assertIs(self.server.log("listening")[0]["tls"], True)
        code, body = self.curl(self.url("/health"))
        self.assertEqual((code, json.loads(body)), (200, {"ok": True, "modules": {"shop": "serving"}}))
        code, body = self.curl(self.url("/"))
        self.assertEqual(code, 200)
        self.assertIn(b"<title>Pure console</title>", body)
        code, body = self.curl(self.url("/console/console.js"))
        self.assertEqual(code, 200)
        code, body = self.curl("-X", "POST", "-H", "Content-Type: application/json", "-H",
                               f"Origin: https://127.0.0.1:{self.server.port}", self.url("/v1/shop/hit"),
                               "-d", '{"name":"tls"}')
        self.assertEqual(code, 200, body)
        # same origin is https:// on a TLS server
        code, body = self.curl("-X", "POST", "-H", "Content-Type: application/json", "-H",
                               f"Origin: http://127.0.0.1:{self.server.port}", self.url("/v1/shop/hit"),
                               "-d", '{"name":"tls"}')
        self.assertEqual(code, 403, body)
        code, body = self.curl("-X", "POST", "-H", "Content-Type: application/json", self.url("/v1/shop/count"),
                               "-d", '{"name":"tls"}')
        self.assertEqual((code, json.loads(body)), (200, {"result": 1}))
        # curl refuses a server it cannot verify: the certificate is what it says
        p = subprocess.run(["curl", "-sS", self.url("/health")], capture_output=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)

    def test_protocol_versions_and_ciphers(self):
        import ssl
        for version in [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3]:
            with self.subTest(version=version):
                s = self.tls_socket(minimum_version=version, maximum_version=version)
                try:
                    self.assertEqual(s.version(), version.name.replace("_", "."))
                    name, _, bits = s.cipher()
                    self.assertTrue("GCM" in name or "CHACHA20" in name, name)  # AEAD
                    if version == ssl.TLSVersion.TLSv1_2:
                        self.assertTrue(name.startswith("ECDHE-"), name)  # forward secrecy
                    self.assertIsNone(s.compression())
                finally:
                    s.close()
        # TLS 1.1 is refused, when this client can still offer it at all
        try:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        except (ValueError, ssl.SSLError):
            return
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        with self.assertRaises(ssl.SSLError) as refused:
            ctx.wrap_socket(raw, server_hostname="127.0.0.1").close()
        raw.close()
        self.assertNotIn("NO_PROTOCOLS_AVAILABLE", str(refused.exception).upper())  # the server said no

    def test_keep_alive_pipelining_and_large_replies(self):
        s = self.tls_socket()
        try:
            c = Conn.__new__(Conn)
            c.sock, c.buf = s, b""
            c.send_raw(build("POST", "/v1/shop/hit", '{"name":"p"}') + build("POST", "/v1/shop/count", '{"name":"p"}') +
                       build("GET", "/health"))
            self.assertEqual([c.read_response()[0] for _ in range(3)], [200, 200, 200])
            big = "x" * 300000
            status, _, body = c.request("POST", "/v1/shop/echo", json.dumps({"t": big}))
            self.assertEqual((status, json.loads(body)["result"]), (200, big))
            self.assertEqual(c.json("POST", "/v1/shop/count", {"name": "p"}), (200, {"result": 1}))
        finally:
            s.close()

    def test_plain_http_on_the_tls_port_gets_nothing(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=5)
        try:
            s.sendall(build("POST", "/v1/shop/hit", '{"name":"clear"}'))
            out = b""
            try:
                while chunk := s.recv(4096):
                    out += chunk
            except ConnectionResetError:
                pass
            self.assertNotIn(b"HTTP/1.1", out)
        finally:
            s.close()
        code, body = self.curl("-X", "POST", "-H", "Content-Type: application/json", self.url("/v1/shop/count"),
                               "-d", '{"name":"clear"}')
        self.assertEqual(json.loads(body), {"result": 0})

    def test_a_handshake_that_never_comes_is_closed(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        try:
            start = time.monotonic()
            self.assertEqual(s.recv(100), b"")  # closed by the server at --request-timeout-ms (2 s)
            self.assertLess(time.monotonic() - start, 6)
        finally:
            s.close()
        code, _ = self.curl(self.url("/health"))
        self.assertEqual(code, 200)

    def test_bad_certificate_files_stop_the_start(self):
        other_key = os.path.join(self.dir, "other.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out",
                        other_key], check=True, capture_output=True, timeout=60)
        garbage = os.path.join(self.dir, "garbage.pem")
        with open(garbage, "w") as f:
            f.write("not a certificate\n")
        for args, words in [(["--tls-cert", self.cert], b"--tls-cert and --tls-key go together"),
                            (["--tls-key", self.key], b"--tls-cert and --tls-key go together"),
                            (["--tls-cert", garbage, "--tls-key", self.key], b"cannot load the certificate --tls-cert"),
                            (["--tls-cert", os.path.join(self.dir, "none.pem"), "--tls-key", self.key],
                             b"cannot load the certificate --tls-cert"),
                            (["--tls-cert", self.cert, "--tls-key", garbage], b"cannot load the private key --tls-key"),
                            (["--tls-cert", self.cert, "--tls-key", other_key], b"mismatch")]:
            with self.subTest(args=args):
                p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", os.path.join(self.dir, "d"),
                                    *args, SHOP], capture_output=True, timeout=20)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)


class BeyondLoopback(unittest.TestCase):
    def test_warnings_without_a_token_or_tls(self):
        # listening on every interface, inside a network namespace of its own (no interface but a
        # loopback that is down: nothing outside can reach it), only to read the start's log
        unshare = shutil.which("unshare")
        if not unshare or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
            self.skipTest("no network namespaces here (unshare -rn)")
        data = tempfile.mkdtemp(prefix="pure-serve-wide-")
        self.addCleanup(shutil.rmtree, data, True)
        token = os.path.join(data, "token")
        with open(token, "w") as f:
            f.write("write tok\n")
        for extra, warned in [([], "without --token-file: anyone who can connect can send events"),
                              (["--token-file", token], "without --tls-cert: tokens and data cross the network in clear")]:
            p = subprocess.Popen([unshare, "-rn", find_binary(), "--listen", "0.0.0.0:0", "--data", data, *extra, SHOP],
                                 stderr=subprocess.PIPE)
            lines = []
            try:
                for raw in p.stderr:
                    lines.append(json.loads(raw))
                    if lines[-1]["event"] == "module_ready":
                        break
            finally:
                p.terminate()
                p.wait(20)
            warnings_seen = [l["message"] for l in lines if l["event"] == "warning"]
            self.assertEqual(len(warnings_seen), 1, lines)
            self.assertIn("listening beyond loopback (0.0.0.0:", warnings_seen[0])
            self.assertIn(warned, warnings_seen[0])
        # on loopback: no warning
        server = Server(find_binary(), [SHOP])
        self.assertEqual(server.log("warning"), [])
        self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
