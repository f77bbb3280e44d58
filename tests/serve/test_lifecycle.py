"""tests/serve/test_lifecycle.py — pure-serve's processes on 127.0.0.1 over their lifetime: a
bounded load test whose count of 200 event replies must equal what the state holds before and after
a restart, durability (503 while recovering, a poisoned log, a damaged data directory refused), a
graceful shutdown on SIGTERM and SIGINT, compile errors and usage at start-up, two modules served,
and the JIT tier (compiled loops answer as the interpreter). Run by ctest with PURE_SERVE set to the
binary. The routes and bad input are test_serve.py; the SIGKILL crash test is test_kill.py."""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHOP = os.path.join(HERE, "shop.pure")
warnings.simplefilter("ignore", ResourceWarning)  # sockets the tests drop on purpose


class Load(unittest.TestCase):
    CONNECTIONS = 64
    SECONDS = 3.0

    def test_every_200_event_reply_is_in_the_state_before_and_after_a_restart(self):
        data = tempfile.mkdtemp(prefix="pure-serve-load-")
        self.addCleanup(shutil.rmtree, data, True)
        server = Server(find_binary(), [SHOP], data=data)
        try:
            ok = [0] * self.CONNECTIONS
            other = []
            stop = time.monotonic() + self.SECONDS

            def client(i):
                c = Conn(server.port)
                n = 0
                while time.monotonic() < stop:
                    if n % 4 == 3:
                        status, _, _ = c.request("POST", "/v1/shop/total_hits", b"{}")
                        if status != 200:
                            other.append(status)
                    else:
                        status, _, _ = c.request("POST", "/v1/shop/hit", b'{"name":"k%d"}' % (i % 8))
                        if status == 200:
                            ok[i] += 1
                        else:
                            other.append(status)
                    n += 1
                c.close()

            threads = [threading.Thread(target=client, args=(i,)) for i in range(self.CONNECTIONS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(self.SECONDS + 30)
            self.assertEqual(other, [])
            total = sum(ok)
            self.assertGreater(total, 0)
            self.assertEqual(Conn(server.port).json("POST", "/v1/shop/total_hits", {}), (200, {"result": total}))
            text = Conn(server.port).request("GET", "/metrics")[2].decode()
            self.assertIn(f'pure_events_total{{module="shop",outcome="committed"}} {total}', text)
            self.assertIn(f'pure_log_records_total{{module="shop"}} {total}', text)
            bursts = int(text.split('pure_log_bursts_total{module="shop"} ')[1].split()[0])
            self.assertLess(bursts, total)  # group commit: 64 connections share fsyncs
            self.assertIn(f'pure_fsync_seconds_count{{module="shop"}} ', text)
            self.assertIn('pure_snapshots_held{module="shop"} 1\n', text)  # every reply is in: the visible one
        finally:
            self.assertEqual(server.stop(), 0)
        # the same data directory, a new process: the state is what the 200s said, nothing more
        again = Server(find_binary(), [SHOP], data=data)
        try:
            self.assertEqual(Conn(again.port).json("POST", "/v1/shop/total_hits", {}), (200, {"result": total}))
            recovered = again.log("recovered")
            self.assertEqual(recovered[0]["sequence"], total)
            text = Conn(again.port).request("GET", "/metrics")[2].decode()
            self.assertIn(f'pure_visible_sequence{{module="shop"}} {total}', text)
        finally:
            self.assertEqual(again.stop(), 0)


SLOW = """list work by id: int { steps: int }
event grind(id: int, n: int) {
  var i = 0
  while i < n { i += 1 }
  work[id] = { steps: i }
}
query done() -> int { return work.count() }
"""


class Durable(unittest.TestCase):
    def module(self, text, name):
        d = tempfile.mkdtemp(prefix="pure-serve-mod-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_503_while_recovering_then_serving(self):
        slow = self.module(SLOW, "slow.pure")
        data = tempfile.mkdtemp(prefix="pure-serve-rec-")
        self.addCleanup(shutil.rmtree, data, True)
        server = Server(find_binary(), [slow], "--max-steps", "100000000", data=data)
        try:
            c = Conn(server.port, timeout=60)
            for i in range(12):
                self.assertEqual(c.json("POST", "/v1/slow/grind", {"id": i, "n": 4000000})[0], 200)
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        # the replay takes a while: meanwhile the module's routes and /health answer 503
        server = Server(find_binary(), [slow], "--max-steps", "100000000", data=data, ready=False)
        try:
            c = Conn(server.port)
            # the replay of 12 events of 4,000,000 steps takes most of a second; the first
            # requests come a few milliseconds after the socket listens
            self.assertEqual(c.json("GET", "/health"), (503, {"ok": False, "modules": {"slow": "recovering"}}))
            status, body = c.json("POST", "/v1/slow/done", {})
            self.assertEqual(status, 503, body)
            self.assertIn("module slow is recovering", body["error"])
            status, body = c.json("POST", "/v1/slow/grind", {"id": 99, "n": 1})
            self.assertEqual(status, 503, body)
            self.assertEqual(c.json("GET", "/v1/slow/lists/work")[0], 503)
            status, body = c.json("GET", "/v1/slow")  # the interface is served; its row counts wait
            self.assertEqual(status, 200)
            self.assertEqual(body["lists"][0]["count"], None)
            self.assertEqual(server.log("module_ready"), [])
            self.assertTrue(wait_until(lambda: c.json("GET", "/health")[0] == 200, 60))
            self.assertEqual(c.json("POST", "/v1/slow/done", {}), (200, {"result": 12}))
            # the line is written before the module serves, but the reader thread may not have
            # taken it from the pipe yet
            self.assertTrue(wait_until(lambda: server.log("recovered"), 10))
            recovered = server.log("recovered")[0]
            self.assertEqual(recovered["records_replayed"], 12)
            self.assertEqual(recovered["sequence"], 12)
            self.assertTrue(server.log("recovery_started"))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)

    def test_poisoned_log_gives_503_and_unhealthy(self):
        # A file-size limit makes the log's write fail (EFBIG) once the segment passes it: the log
        # is poisoned, the event is not acknowledged, /health says why, later events get 503.
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

        server = Server(find_binary(), [SHOP], preexec_fn=limit)
        try:
            c = Conn(server.port)
            statuses = []
            for i in range(400):
                status, body = c.json("POST", "/v1/shop/hit", {"name": "p" * 40})
                statuses.append(status)
                if status != 200:
                    self.assertEqual(status, 503, body)
                    self.assertIn("event log poisoned", body["error"])
                    break
            self.assertIn(503, statuses)
            acked = statuses.count(200)
            status, body = c.json("GET", "/health")
            self.assertEqual(status, 503)
            self.assertIn("unhealthy: event log poisoned", body["modules"]["shop"])
            self.assertIn("File too large", body["modules"]["shop"])
            status, body = c.json("POST", "/v1/shop/hit", {"name": "later"})
            self.assertEqual(status, 503)
            self.assertIn("is unhealthy", body["error"])
            # queries go on against the last durable state
            self.assertEqual(c.json("POST", "/v1/shop/total_hits", {}), (200, {"result": acked}))
            self.assertTrue(wait_until(lambda: server.log("log_poisoned")))  # stderr is read by another thread
            text = c.request("GET", "/metrics")[2].decode()
            self.assertIn('pure_module_healthy{module="shop"} 0', text)
            c.close()
        finally:
            server.stop()

    def test_damaged_data_directory_stops_the_start(self):
        data = tempfile.mkdtemp(prefix="pure-serve-bad-")
        self.addCleanup(shutil.rmtree, data, True)
        server = Server(find_binary(), [SHOP], data=data)
        c = Conn(server.port)
        for i in range(3):
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "n%d" % i})[0], 200)
        c.close()
        self.assertEqual(server.stop(), 0)
        seg = os.path.join(data, "shop", sorted(os.listdir(os.path.join(data, "shop")))[0])
        with open(seg, "r+b") as f:
            f.seek(50)  # inside the first record, two valid records follow: damage, not a torn tail
            byte = f.read(1)
            f.seek(50)
            f.write(bytes([byte[0] ^ 0xff]))
        p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", data, SHOP], capture_output=True,
                           timeout=30)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn(b"recovery_failed", p.stderr)
        self.assertIn(f"{seg}: offset 40: record checksum mismatch".encode(), p.stderr)
        # a changed module is refused without --upgrade (its plan is the reason), and with it
        # becomes the directory's next version, its data kept
        changed = self.module(open(SHOP).read().replace("qty must not be negative", "qty must be >= 0"), "shop.pure")
        shutil.rmtree(data)
        server = Server(find_binary(), [SHOP], data=data)
        self.assertEqual(Conn(server.port).json("POST", "/v1/shop/hit", {"name": "x"})[0], 200)
        self.assertEqual(server.stop(), 0)
        p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", data, changed], capture_output=True,
                           timeout=30)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn(b"the source differs from version 1 of this directory", p.stderr)
        self.assertIn(b"(the stored lists are unchanged: the code alone changes)", p.stderr)
        server = Server(find_binary(), [changed], "--upgrade", data=data)
        try:
            self.assertEqual(Conn(server.port).json("POST", "/v1/shop/total_hits", {}), (200, {"result": 1}))
            upgraded = server.log("upgraded")
            self.assertEqual([(e["version"], e["sequence"]) for e in upgraded], [(2, 2)], server.lines)
            status, info = Conn(server.port).json("GET", "/v1/shop")
            self.assertEqual(status, 200)
            self.assertEqual(info["version"], 2)
            size = len(open(changed).read().encode())
            self.assertEqual([(v["version"], v["begins"]) for v in info["versions"]], [(1, 0), (2, 2)])
            self.assertEqual(info["versions"][1]["source_bytes"], size)
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertIn("version-0000000002.src", os.listdir(os.path.join(data, "shop")))


class Lifecycle(unittest.TestCase):
    def test_sigterm_finishes_in_flight_events_and_exits_0(self):
        server = Server(find_binary(), [SHOP])
        statuses = []
        refusals = []
        errors = []
        started = threading.Event()

        def client():
            try:
                c = Conn(server.port)
            except OSError as e:
                errors.append(e)
                return
            started.set()
            while True:
                try:
                    status, _, body = c.request("POST", "/v1/shop/hit", b'{"name":"x"}')
                except (ConnectionError, OSError):
                    return
                if status == 503:  # sent after the owner closed: refused whole, never half-done
                    refusals.append(body)
                    return
                statuses.append(status)

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        started.wait(5)
        time.sleep(0.3)
        code = server.stop()
        for t in threads:
            t.join(10)
        self.assertEqual(code, 0, "\n".join(server.lines))
        self.assertGreater(len(statuses), 0)
        self.assertEqual(set(statuses), {200})  # no request got a broken or failed reply
        for body in refusals:
            self.assertIn(b"is shutting down", body)
        self.assertTrue(server.log("shutdown_started"))
        closed = server.log("module_closed")
        self.assertEqual(len(closed), 1)
        # every 200 the clients saw is an event the module committed
        self.assertEqual(closed[0]["committed"], len(statuses))
        self.assertTrue(server.log("shutdown"))

    def test_sigint_exits_0(self):
        server = Server(find_binary(), [SHOP])
        server.proc.send_signal(signal.SIGINT)
        self.assertEqual(server.proc.wait(10), 0)

    def test_compile_errors_are_printed_like_pure_run_and_exit_1(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.pure")
            with open(bad, "w") as f:
                f.write("event e(x: int) {\n  let y: text = x\n}\n")
            p = subprocess.run([find_binary(), bad], capture_output=True, timeout=20)
            self.assertEqual(p.returncode, 1)
            self.assertIn(f"{bad}:2:".encode(), p.stderr)
            self.assertIn(b"error", p.stderr)

    def test_implementation_limits_are_compile_errors_like_pure_run(self):
        # a frame past 60000 slots: pure-serve skipped lowering's located error and printed the
        # loader's "1:1: error: function 'e' is too large (60003 slots; ...)"; it now prints what
        # pure-run prints (both compile through tools/compile_module)
        with tempfile.TemporaryDirectory() as d:
            big = os.path.join(d, "big.pure")
            with open(big, "w") as f:
                f.write("list t seq { n: int }\nevent e() {\n  let xs = [" + ", ".join(["1"] * 60001) + "]\n"
                        "  t.push({ n: xs.count() })\n}\n")
            p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", os.path.join(d, "data"), big],
                               capture_output=True, timeout=20)
            self.assertEqual(p.returncode, 1)
            self.assertIn(f"{big}:3:12: error: event 'e' is too large: it needs more than 60000 slots".encode(), p.stderr)

    def test_usage(self):
        p = subprocess.run([find_binary(), "--help"], capture_output=True, timeout=20)
        self.assertEqual(p.returncode, 0)
        for word in [b"--listen", b"--data", b"--sync", b"--max-steps", b"--token-file", b"--allow-host", b"--tls-cert",
                     b"--tls-key"]:
            self.assertIn(word, p.stdout)
        self.assertEqual(subprocess.run([find_binary()], capture_output=True, timeout=20).returncode, 2)
        self.assertEqual(subprocess.run([find_binary(), "--sync", "sometimes", SHOP], capture_output=True,
                                        timeout=20).returncode, 2)
        self.assertEqual(subprocess.run([find_binary(), "--listen", "nope", SHOP], capture_output=True,
                                        timeout=20).returncode, 2)

    def test_main_is_not_run_and_two_modules_are_served(self):
        examples = os.path.join(HERE, "..", "..", "examples", "bank_ledger.pure")
        server = Server(find_binary(), [SHOP, examples])
        try:
            c = Conn(server.port)
            self.assertEqual(c.json("POST", "/v1/bank_ledger/total", {}), (200, {"result": 0.0}))
            self.assertEqual(c.json("POST", "/v1/bank_ledger/open", {"id": 1, "owner": "ann", "deposit": 100.0}),
                             (200, {"ok": True, "version": 1, "seq": 1}))
            self.assertEqual(c.json("POST", "/v1/shop/hit", {"name": "z"}), (200, {"ok": True, "version": 1, "seq": 1}))
            self.assertEqual(c.json("GET", "/health"), (200, {"ok": True, "modules": {"shop": "serving",
                                                                                       "bank_ledger": "serving"}}))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        self.assertEqual(server.proc.stdout.read(), b"")  # main printed nothing: it did not run


LOOPS = """list nums by k: int { v: int }
event fill(n: int) {
  for i in 0 .. n { nums[i] = { v: i * 3 } }
}
event double_up(x: int) {
  var a = x
  for i in 0 .. 80 { a = a * 2 }
  nums[-1] = { v: a }
}
query total() -> int {
  var t = 0
  for x in nums { t += x.v }
  return t
}
query count_to(n: int) -> int {
  var t = 0
  var i = 0
  while i < n {
    t += i % 7
    i += 1
  }
  return t
}
query scaled(n: int, f: num) -> num {
  var s = 0.0
  for i in 0 .. n { s = s + num(i) * f }
  return s
}
"""


class JitTier(unittest.TestCase):
    """pure-serve runs events' and queries' hot loops through the same JIT tier as pure-run (PURE_JIT):
    every loop compiled on first entry answers byte for byte what the interpreter answers, faults and
    spent budgets included, and the stats line at shutdown says the loops were compiled. PURE_JIT=sync
    compiles on the thread that runs the loop, so every loop is native from its first pass on."""

    def setUp(self):
        help_text = subprocess.run([find_binary(), "--help"], capture_output=True, timeout=20).stdout
        if b"PURE_JIT=1 (the default)" not in help_text:
            self.skipTest("this pure-serve has no JIT")
        self.dir = tempfile.mkdtemp(prefix="pure-serve-jit-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.module = os.path.join(self.dir, "loops.pure")
        with open(self.module, "w") as f:
            f.write(LOOPS)

    def session(self, env):
        server = Server(find_binary(), [self.module], "--max-steps", "50000", "--sync", "none",
                        data=os.path.join(self.dir, "data-" + env["PURE_JIT"]), env=env)
        replies = []
        try:
            c = Conn(server.port)
            calls = [("fill", {"n": 500}), ("total", {}), ("fill", {"n": 20}), ("total", {}),
                     ("double_up", {"x": 1}),           # overflows inside the loop: 409, rolled back
                     ("total", {}), ("count_to", {"n": 1000}),
                     ("count_to", {"n": 10000000}),     # spends the step budget inside the loop
                     ("scaled", {"n": 300, "f": 0.1}), ("fill", {"n": 100000}),  # the budget, in an event
                     ("total", {})]
            for name, args in calls:
                replies.append((name, c.json("POST", "/v1/loops/" + name, args)))
            c.close()
        finally:
            self.assertEqual(server.stop(), 0)
        return replies, server

    def test_compiled_loops_answer_as_the_interpreter(self):
        interpreted, plain = self.session({"PURE_JIT": "0"})
        compiled, jit = self.session({"PURE_JIT": "sync", "PURE_JIT_THRESHOLD": "0", "PURE_JIT_MIN_SHARE": "0",
                                      "PURE_JIT_STATS": "1"})
        self.assertEqual(compiled, interpreted)
        statuses = [reply[0] for _, reply in interpreted]
        self.assertEqual(statuses, [200, 200, 200, 200, 409, 200, 200, 409, 200, 409, 200], interpreted)
        self.assertEqual(plain.log("start")[0]["jit"], "off")
        self.assertNotEqual(jit.log("start")[0]["jit"], "off")
        stats = [line for line in jit.lines if line.startswith("pure-jit: ")]
        self.assertEqual(len(stats), 1, jit.lines)
        compiled_loops = int(stats[0].split()[1])
        self.assertGreaterEqual(compiled_loops, 4, stats[0])

    def test_a_malformed_setting_is_a_usage_error(self):
        p = subprocess.run([find_binary(), "--listen", "127.0.0.1:0", "--data", os.path.join(self.dir, "d"), self.module],
                           capture_output=True, timeout=20, env={**os.environ, "PURE_JIT": "sometimes"})
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"pure-serve: ", p.stderr)
        self.assertIn(b"PURE_JIT", p.stderr)




if __name__ == "__main__":
    unittest.main()
