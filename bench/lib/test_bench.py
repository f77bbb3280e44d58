# bench/lib/test_bench.py: tests of the harness itself (generator, summaries, exit status on a wrong check).
# Run with `python3 -m unittest discover -s bench/lib -p 'test_*.py'`; needs cc for the end-to-end cases.
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph  # noqa: E402
import report  # noqa: E402
from kernels import KERNELS, Result  # noqa: E402
from measure import RunFailed, summarize  # noqa: E402

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(BENCH, "run")


class FakeSystem:
    def __init__(self, name):
        self.name = name
        self.key = name
        self.engine = "test"


def finished(name, samples, check):
    result = Result(FakeSystem(name))
    result.samples = samples
    result.check = check
    return result


class GeneratorTest(unittest.TestCase):
    def test_splitmix64_matches_the_reference_sequence_for_seed_zero(self):
        random = graph.SplitMix64(0)
        self.assertEqual([random.next() for _ in range(3)],
                         [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F])

    def test_edges_are_distinct_sorted_without_self_loops(self):
        edges = graph.generate_edges(60, 500, seed=7)
        self.assertEqual(len(edges), 500)
        self.assertEqual(len(set(edges)), 500)
        self.assertEqual(edges, sorted(edges))
        self.assertFalse(any(source == target for source, target in edges))
        self.assertTrue(all(0 <= node < 60 for pair in edges for node in pair))

    def test_same_seed_same_graph_other_seed_other_graph(self):
        self.assertEqual(graph.generate_edges(100, 300, 1), graph.generate_edges(100, 300, 1))
        self.assertNotEqual(graph.generate_edges(100, 300, 1), graph.generate_edges(100, 300, 2))

    def test_too_many_edges_is_refused(self):
        with self.assertRaises(ValueError):
            graph.generate_edges(3, 7)

    def test_start_nodes(self):
        self.assertEqual(graph.start_nodes(100000), [0, 20000, 40000, 60000, 80000])


class ReportTest(unittest.TestCase):
    def test_median_and_ratio_to_c(self):
        lines = report.result_lines("k", [finished("c", [10.0, 30.0, 20.0], "1"),
                                          finished("cpython", [100.0, 300.0, 200.0, 250.0], "1")], "x", "wall")
        self.assertEqual(lines[0]["median_ms"], 20.0)
        self.assertEqual(lines[1]["median_ms"], 225.0)
        self.assertEqual(lines[1]["ratio_to_c"], 11.25)
        self.assertEqual((lines[1]["min_ms"], lines[1]["max_ms"], lines[1]["runs"]), (100.0, 300.0, 4))

    def test_failed_systems_are_left_out(self):
        broken = finished("lua5.4", [5.0], "1")
        broken.error = "exit code 3"
        lines = report.result_lines("k", [finished("c", [1.0], "1"), broken], "x", "wall")
        self.assertEqual([line["system"] for line in lines], ["c"])

    def test_checks_agree(self):
        self.assertTrue(report.checks_agree([{"check": "5"}, {"check": "5"}]))
        self.assertFalse(report.checks_agree([{"check": "5"}, {"check": "6"}]))

    def test_summary_ratios(self):
        lines = [{"system": "c", "median_ms": 10.0}, {"system": "cpython", "median_ms": 80.0},
                 {"system": "lua5.4", "median_ms": 40.0}, {"system": "pure", "median_ms": 20.0, "runs": 5}]
        summary = report.summary_line("fib", lines)
        self.assertEqual((summary["ratio_to_c"], summary["ratio_to_cpython"], summary["ratio_to_lua5.4"]),
                         (2.0, 0.25, 0.5))
        self.assertIsNone(report.summary_line("fib", lines[:3]))

    def test_a_changing_check_is_an_error(self):
        result = finished("c", [], None)
        result.record_check("1")
        with self.assertRaises(RunFailed):
            result.record_check("2")

    def test_every_kernel_has_a_program_for_every_system(self):
        for name in KERNELS:
            for extension in (".c", ".py", ".lua", ".pure"):
                self.assertTrue(os.path.isfile(os.path.join(BENCH, "kernels", name + extension)), name + extension)

    def test_summarize(self):
        self.assertEqual(summarize([3.0, 1.0, 2.0])["median_ms"], 2.0)


@unittest.skipIf(shutil.which("cc") is None, "needs cc")
class EndToEndTest(unittest.TestCase):
    def fake_pure_run(self, directory, script):
        path = os.path.join(directory, "pure-run")
        with open(path, "w") as stream:
            stream.write("#!/bin/sh\n" + script + "\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def run_bench(self, *arguments):
        return subprocess.run([sys.executable, RUN, "--quick", *arguments], capture_output=True, text=True)

    def test_lines_follow_the_format(self):
        done = self.run_bench("--only", "fib", "--systems", "c,cpython")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [json.loads(text) for text in done.stdout.splitlines()]
        self.assertEqual([line["system"] for line in lines], ["c", "cpython"])
        for line in lines:
            for field in ("bench", "system", "median_ms", "runs", "ratio_to_c", "check", "machine", "engine"):
                self.assertIn(field, line)
            self.assertEqual(line["check"], "46368")

    def test_textkeys_counts_agree_between_c_and_cpython(self):
        done = self.run_bench("--only", "textkeys", "--systems", "c,cpython")
        self.assertEqual(done.returncode, 0, done.stderr)
        checks = {json.loads(text)["check"] for text in done.stdout.splitlines()}
        self.assertEqual(checks, {"500 abctsaajs zzwsyfatd 4973021"})

    def test_spectralnorm_agrees_between_c_and_cpython(self):
        done = self.run_bench("--only", "spectralnorm", "--systems", "c,cpython")
        self.assertEqual(done.returncode, 0, done.stderr)
        checks = {json.loads(text)["check"] for text in done.stdout.splitlines()}
        self.assertEqual(checks, {"1.274193837"})

    def test_a_wrong_check_makes_the_run_fail(self):
        with tempfile.TemporaryDirectory() as directory:
            done = self.run_bench("--only", "sieve", "--systems", "c,pure",
                                  "--pure-run", self.fake_pure_run(directory, "echo 42"))
        self.assertEqual(done.returncode, 1)
        self.assertIn("checks disagree", done.stderr)

    def test_a_crashing_system_makes_the_run_fail(self):
        with tempfile.TemporaryDirectory() as directory:
            done = self.run_bench("--only", "fib", "--systems", "c,pure",
                                  "--pure-run", self.fake_pure_run(directory, "exit 3"))
        self.assertEqual(done.returncode, 1)
        self.assertEqual([json.loads(text)["system"] for text in done.stdout.splitlines()], ["c"])

    def test_bfs_times_pure_by_difference_and_checks_its_edge_count(self):
        # Stands in for pure-run: runs the CPython port of the same program and keeps its first line.
        script = 'file="$1"; shift; "%s" "${file%%.pure}.py" "$@" | head -n 1' % sys.executable
        with tempfile.TemporaryDirectory() as directory:
            done = self.run_bench("--only", "bfs", "--systems", "c,pure", "--pure-run",
                                  self.fake_pure_run(directory, script))
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = {line["system"]: line for line in map(json.loads, done.stdout.splitlines()) if line["bench"] == "bfs"}
        self.assertEqual(lines["pure"]["check"], lines["c"]["check"])
        self.assertEqual(lines["pure"]["runs"], 1)
        self.assertEqual(lines["c"]["runs"], 5)
        self.assertIn("loading alone took", done.stderr)

    def test_a_missing_system_is_skipped(self):
        done = self.run_bench("--only", "fib", "--systems", "c,pure", "--pure-run", "/nonexistent/pure-run")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("skipping pure", done.stderr)


class ExamplesTest(unittest.TestCase):
    """bench/examples: both engines over a folder of examples, with stand-in pure-run scripts."""

    def run_examples(self, script, runs="2"):
        with tempfile.TemporaryDirectory() as directory:
            examples = os.path.join(directory, "examples")
            os.mkdir(examples)
            for name in ("a", "b"):
                with open(os.path.join(examples, name + ".pure"), "w") as stream:
                    stream.write("fn main() {}\n")
            with open(os.path.join(examples, "b.args"), "w") as stream:
                stream.write("x\ny\n")
            program = os.path.join(directory, "pure-run")
            with open(program, "w") as stream:
                stream.write("#!/bin/sh\n" + script + "\n")
            os.chmod(program, os.stat(program).st_mode | stat.S_IXUSR)
            return subprocess.run([sys.executable, os.path.join(BENCH, "examples"), "--pure-run", program,
                                   "--examples", examples, "--runs", runs], capture_output=True, text=True)

    def test_two_systems_and_a_ratio(self):
        done = self.run_examples('echo "$@"; exit 3')  # same bytes and exit code on both engines
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = [json.loads(text) for text in done.stdout.splitlines()]
        self.assertEqual([line["system"] for line in lines], ["pure", "pure-jit"])
        for line in lines:
            self.assertEqual((line["bench"], line["runs"], line["examples"], line["clock"]), ("examples", 2, 2, "cpu"))
        self.assertEqual(lines[0]["check"], lines[1]["check"])
        self.assertEqual(lines[1]["ratio_to"], "pure")
        self.assertIn("ratio", lines[1])

    def test_engines_that_disagree_fail(self):
        done = self.run_examples('echo "$PURE_JIT"')
        self.assertEqual(done.returncode, 1)
        self.assertIn("differs", done.stderr)

    def test_a_run_that_changes_fails(self):
        done = self.run_examples('date +%N', runs="1")  # differs from one run to the next
        self.assertEqual(done.returncode, 1)


if __name__ == "__main__":
    unittest.main()
