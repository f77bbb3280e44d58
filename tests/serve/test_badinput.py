#!/usr/bin/env python3
"""tests/serve/test_badinput.py — malformed requests against a real pure-serve, as sequences.

Each request starts as a valid event (`put` of tests/serve/kill.pure, a key no other request uses)
sent on a connection of its own, then one mutation of a random kind is applied: a byte changed,
the request cut short, a framing header added (Transfer-Encoding variants, a second Content-Length
or Host, obsolete line folding), or the JSON body replaced by a bad one (wrong types, numbers out
of range, deep nesting, invalid UTF-8, extra or missing fields). Checks:

  * no part of a request runs as a request of its own (smuggling): bytes the server reads as a
    further request on the connection are refused with a 4xx; and no answer is a 5xx;
  * /health answers 200 after every batch of requests, and the server is alive at the end;
  * the state holds exactly the events that were answered 200 with a seq: none lost, none extra
    (the count query, after a restart on the same directory too).

Usage: test_badinput.py PURE_SERVE [--requests N] [--seed S]. Prints one summary line with the
answers by status; exit 0 when every check held (a failure names its seed and request)."""
import argparse
import collections
import json
import os
import random
import shutil
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Server  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(HERE, "kill.pure")

BAD_HEADERS = [
    b"Transfer-Encoding: xchunked", b"Transfer-Encoding: chunked, identity", b"Transfer-Encoding: identity",
    b"Transfer-Encoding: ", b'Transfer-Encoding: "chunked"', b"Transfer-Encoding: chunked",
    b"Content-Length: 0", b"Content-Length: 99999999999999999999", b"Content-Length: -1", b"Host: other.example",
    b" folded: continuation", b"Content-Type: text/plain", b"Origin: http://evil.example", b"Authorization: Bearer x",
    b"X: " + b"a" * 20000, b"Expect: 100-continue", b"Connection: upgrade",
]

BAD_BODIES = [
    b"", b"{", b"[]", b"null", b'{"client": "1", "n": 1, "pad": "x"}', b'{"client": 1e400, "n": 1, "pad": "x"}',
    b'{"client": 9223372036854775808, "n": 1, "pad": "x"}', b'{"client": 1.5, "n": 1, "pad": "x"}',
    b'{"client": 1, "n": 1}', b'{"client": 1, "n": 1, "pad": "x", "extra": 2}', b'{"client": 1, "n": 1, "pad": "\xff\xfe"}',
    b'{"client": 1, "n": 1, "pad": "\\ud800"}', b'{"client": 1, "client": 2, "n": 1, "pad": "x"}',
    b"[" * 100000, b'{"client": 1, "n": 1, "pad": "x"} trailing', b'{"client": 1, "n": 1, "pad": "' + b"x" * 2000000 + b'"}',
]


def valid(port, client, n):
    body = json.dumps({"client": client, "n": n, "pad": "p%d" % n}).encode()
    head = ("POST /v1/kill/put HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (port, len(body))).encode()
    return head, body


def mutate(rng, head, body):
    kind = rng.choice(["byte", "cut", "header", "body", "none"])
    if kind == "byte":
        raw = bytearray(head + body)
        raw[rng.randrange(len(raw))] = rng.randrange(256)
        return kind, bytes(raw), False
    if kind == "cut":
        raw = head + body
        return kind, raw[:rng.randrange(len(raw))], True
    if kind == "header":
        lines = head.split(b"\r\n")
        lines.insert(rng.randrange(1, len(lines) - 1), rng.choice(BAD_HEADERS))
        return kind, b"\r\n".join(lines) + body, False
    if kind == "body":
        bad = rng.choice(BAD_BODIES)
        fixed = head.split(b"Content-Length: ")[0] + b"Content-Length: %d\r\n\r\n" % len(bad)
        return kind, fixed + bad, False
    return kind, head + body, False


def exchange(port, raw, half_close):
    """Sends raw on a new connection and reads until the server closes or goes quiet; returns
    the statuses and bodies of the answers read."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        try:
            s.sendall(raw)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may answer and close before it has read everything (413, 431)
        # Up to the server's request timeout (1 s) and a margin for the first answer; once one
        # has arrived whole, a short wait for a second one (a body run as a request would
        # answer at once) before the connection, kept alive, is left.
        data = b""
        s.settimeout(2.0)
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
            if complete(data):
                s.settimeout(0.2)
    finally:
        s.close()
    answers = []
    while data.startswith(b"HTTP/1."):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        head = data[:end].decode("latin-1")
        status = int(head.split(" ", 2)[1])
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if status >= 200:  # an interim 100 Continue is not an answer
            answers.append((status, data[end + 4:end + 4 + length]))
        data = data[end + 4 + length:]
    return answers


def complete(data):
    """Whether data holds at least one whole final answer."""
    while data.startswith(b"HTTP/1."):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = data[:end].decode("latin-1")
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if len(data) < end + 4 + length:
            return False
        if int(head.split(" ", 2)[1]) >= 200:
            return True
        data = data[end + 4 + length:]
    return False


def ask(port, path, obj=None):
    body = b"" if obj is None else json.dumps(obj).encode()
    method = "GET" if obj is None else "POST"
    raw = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
           "Connection: close\r\n\r\n" % (method, path, port, len(body))).encode() + body
    (status, reply), = exchange(port, raw, False)
    return status, json.loads(reply) if reply else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pure_serve")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    data = tempfile.mkdtemp(prefix="pure-badinput-")
    server = Server(args.pure_serve, [MODULE], "--request-timeout-ms", "1000", data=data)
    statuses = collections.Counter()
    committed = 0
    try:
        for i in range(args.requests):
            head, body = valid(server.port, 1, i + 1)
            kind, raw, half_close = mutate(rng, head, body)
            answers = exchange(server.port, raw, half_close)
            where = "seed %d, request %d (%s): %r" % (seed, i, kind, raw[:300])
            # Bytes after a request whose framing ended early (a Content-Length name changed) are
            # the next request on the connection: a 400 for them is right; anything else ran them.
            if any(status < 400 for status, _ in answers[1:]):
                raise SystemExit("FAIL: the rest of a request ran as a request of its own: %r, %s" % (answers, where))
            for status, reply in answers:
                statuses[status] += 1
                if status >= 500:
                    raise SystemExit("FAIL: %d %r, %s" % (status, reply[:200], where))
                if status == 200 and b'"seq"' in reply:
                    committed += 1
            if not answers:
                statuses["closed"] += 1
            if i % 100 == 99 and ask(server.port, "/health")[0] != 200:
                raise SystemExit("FAIL: /health not 200 after %s" % where)
        count = ask(server.port, "/v1/kill/count", {})
        if count != (200, {"result": committed}):
            raise SystemExit("FAIL: seed %d: %d events answered 200, the state holds %r" % (seed, committed, count))
        if server.stop() != 0:
            raise SystemExit("FAIL: seed %d: the server did not stop cleanly" % seed)
        again = Server(args.pure_serve, [MODULE], data=data)
        try:
            count = ask(again.port, "/v1/kill/count", {})
            if count != (200, {"result": committed}):
                raise SystemExit("FAIL: seed %d: after a restart the state holds %r, not %d" % (seed, count, committed))
            again.stop()
        finally:
            again.kill()
    finally:
        server.kill()
        shutil.rmtree(data, ignore_errors=True)
    shown = ", ".join("%s: %d" % (k, v) for k, v in sorted(statuses.items(), key=lambda kv: str(kv[0])))
    print("test_badinput: %d mutated requests (a fifth of them left valid), seed %d: %d events committed and all present after a "
          "restart; answers %s" % (args.requests, seed, committed, shown))


if __name__ == "__main__":
    main()
