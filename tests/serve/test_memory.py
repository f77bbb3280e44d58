"""tests/serve/test_memory.py — pure-serve's memory budgets and reply limit from the outside, with real
processes on 127.0.0.1 (issue 31 items 8 and 9): --max-reply answers 413 for a query or event whose
result would pass it, before building it; --max-memory and --max-memory-total fail the event that would
pass them (409, rolled back, not logged: a restart finds the same state), and /metrics shows each
module's use against its budget; under `ulimit -v` the system refusing memory inside an event or while
copying a query's result out fails that call (409 / 503), never the server. Budgets are small (64 MiB,
a 700 MB address space) so every case stays in a few seconds. Run by ctest (serve.memory) with
PURE_SERVE set to the binary."""
import os
import resource
import shutil
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import Conn, Server, find_binary, metric  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MEM = os.path.join(HERE, "mem.pure")
warnings.simplefilter("ignore", ResourceWarning)


def sanitized(binary):
    """Whether BINARY was built with a sanitizer: AddressSanitizer reserves terabytes of address space
    for its shadow at start, so a process under RLIMIT_AS (`ulimit -v`) cannot start at all."""
    with open(binary, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def ask(port, path, obj):
    c = Conn(port, timeout=60)
    try:
        return c.json("POST", path, obj)
    finally:
        c.close()


class MemoryTest(unittest.TestCase):
    def setUp(self):
        self.dirs = []

    def tearDown(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)

    def temp(self):
        d = tempfile.mkdtemp(prefix="pure-mem-")
        self.dirs.append(d)
        return d

    def start(self, modules, *flags, data=None, limit_as=None):
        preexec = None
        if limit_as:
            preexec = lambda: resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))  # noqa: E731
        s = Server(find_binary(), modules, *flags, data=data, preexec_fn=preexec)
        self.addCleanup(s.kill)
        return s

    def grow_until_refused(self, port, module, steps=40):
        """grow(100000) until an event fails; returns (count before the failure, the failure's reason)."""
        for _ in range(steps):
            before = ask(port, "/v1/%s/count" % module, {})[1]["result"]
            status, body = ask(port, "/v1/%s/grow" % module, {"n": 100000})
            if status != 200:
                self.assertEqual(status, 409, body)
                return before, body["reason"]
        self.fail("no event was refused")

    def test_reply_limit(self):
        data = self.temp()
        # repeat(7, n) spends n steps: a budget that lets n = 2^24 run to its result
        s = self.start([MEM], "--max-reply", "1M", "--max-memory", "256M", "--max-steps", "100000000", data=data)
        status, body = ask(s.port, "/v1/mem/q", {"n": 1000})
        self.assertEqual((status, len(body["result"])), (200, 1000))
        status, body = ask(s.port, "/v1/mem/q", {"n": 400000})  # "7," 400000 times: 800 KB
        self.assertEqual((status, len(body["result"])), (200, 400000))
        for n in (600000, 1 << 24):  # 1.2 MB, 32 MB: refused before the reply is built
            status, body = ask(s.port, "/v1/mem/q", {"n": n})
            self.assertEqual(status, 413, body)
            self.assertEqual(body["error"], "the result of query q is larger than the reply limit of 1048576 bytes "
                                            "of JSON (--max-reply); ask for less (a page, a count), or raise --max-reply")
        # an event's result: the event is committed all the same, and the answer says so
        status, body = ask(s.port, "/v1/mem/mark", {"n": 600000})
        self.assertEqual(status, 413, body)
        self.assertTrue(body["error"].startswith("event mark committed as seq 1; its result is larger than the reply "
                                                 "limit of 1048576 bytes"), body)
        self.assertEqual(ask(s.port, "/v1/mem/count", {}), (200, {"result": 1}))
        self.assertEqual(ask(s.port, "/v1/mem/mark", {"n": 2}), (200, {"ok": True, "version": 1, "seq": 2, "result": [7, 7]}))
        self.assertEqual(s.stop(), 0)

    def test_module_budget(self):
        data = self.temp()
        s = self.start([MEM], "--max-memory", "64M", data=data)
        self.assertEqual(metric(s.port, "pure_memory_budget_bytes", "mem"), 64 << 20)
        before, reason = self.grow_until_refused(s.port, "mem")
        self.assertRegex(reason, r"^runtime error at 6:25: memory budget spent \(64 MiB of texts, lists and stored "
                                 r"rows held at once\); raise it with --max-memory$")
        self.assertGreater(before, 0)
        self.assertEqual(ask(s.port, "/v1/mem/count", {}), (200, {"result": before}))  # rolled back
        used = metric(s.port, "pure_memory_bytes", "mem")
        self.assertGreater(used, 32 << 20)
        self.assertLessEqual(used, 64 << 20)
        self.assertEqual(s.stop(), 0)
        s = self.start([MEM], "--max-memory", "64M", data=data)  # the failed event was not logged
        self.assertEqual(ask(s.port, "/v1/mem/count", {}), (200, {"result": before}))
        self.assertEqual(s.stop(), 0)

    def test_budget_of_all_modules(self):
        work = self.temp()
        other = os.path.join(work, "mem2.pure")
        shutil.copy(MEM, other)
        s = self.start([MEM, other], "--max-memory", "1G", "--max-memory-total", "64M", data=os.path.join(work, "data"))
        self.assertEqual(metric(s.port, "pure_memory_total_budget_bytes"), 64 << 20)
        for _ in range(3):  # the first module takes some of the total
            self.assertEqual(ask(s.port, "/v1/mem/grow", {"n": 100000})[0], 200)
        before, reason = self.grow_until_refused(s.port, "mem2")
        self.assertRegex(reason, r"memory budget spent \(64 MiB of texts, lists and stored rows held at once\); "
                                 r"raise it with --max-memory-total$")
        self.assertEqual(ask(s.port, "/v1/mem2/count", {}), (200, {"result": before}))
        total = metric(s.port, "pure_memory_total_bytes")
        self.assertEqual(total, metric(s.port, "pure_memory_bytes", "mem") + metric(s.port, "pure_memory_bytes", "mem2"))
        self.assertLessEqual(total, 64 << 20)
        self.assertEqual(s.stop(), 0)

    def test_the_system_refusing_memory_fails_the_call_not_the_server(self):
        if sanitized(find_binary()):
            self.skipTest("a sanitizer's shadow memory cannot start under RLIMIT_AS")
        # budgets larger than the address space `ulimit -v` leaves: the allocator refuses first
        data = self.temp()
        flags = ["--max-memory", "8G", "--max-memory-total", "8G", "--max-steps", "100000000"]
        s = self.start([MEM], *flags, data=data, limit_as=700 << 20)
        self.assertEqual(ask(s.port, "/v1/mem/grow", {"n": 10})[0], 200)
        status, body = ask(s.port, "/v1/mem/grow_forever", {})
        self.assertEqual(status, 409, body)
        self.assertRegex(body["reason"], r"^runtime error at 12:\d+: out of memory: the system refused an allocation "
                                         r"\(the memory budget, --max-memory, is 8 GiB\)$")
        # 16M ints: 32 MB of JSON (under the default --max-reply) but more memory to copy out than is left
        status, body = ask(s.port, "/v1/mem/q", {"n": 1 << 24})
        self.assertEqual(status, 503, body)
        self.assertEqual(body["error"], "query q: out of memory: the system refused the memory to copy the result out")
        self.assertEqual(ask(s.port, "/v1/mem/count", {}), (200, {"result": 10}))
        c = Conn(s.port)
        self.assertEqual(c.request("GET", "/health")[0], 200)
        c.close()
        self.assertEqual(s.stop(), 0)
        s = self.start([MEM], *flags, data=data, limit_as=700 << 20)  # grow_forever was not logged
        self.assertEqual(ask(s.port, "/v1/mem/count", {}), (200, {"result": 10}))
        self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    unittest.main()
