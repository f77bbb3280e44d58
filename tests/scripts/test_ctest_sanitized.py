"""Unit tests of scripts/ctest_sanitized.py: a throwaway CMake project whose tests fail in chosen
ways, run through the script. Only LeakSanitizer's own tracer crash is rerun, once."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "ctest_sanitized.py")

# each test prints its body's success, then fails the way its name says; the tracer crash happens
# only on the first run (a marker file), as the real one does only sometimes
TEST = textwrap.dedent("""\
    import os, sys
    kind, marker = sys.argv[1], sys.argv[2]
    print("[doctest] Status: SUCCESS!")
    if kind == "pass":
        sys.exit(0)
    if kind == "asan_options":  # what the script hands down: the interceptor off, the caller's options kept
        print("ASAN_OPTIONS=" + os.environ.get("ASAN_OPTIONS", ""))
        sys.exit(0 if "intercept_tls_get_addr=" in os.environ.get("ASAN_OPTIONS", "") else 1)
    if kind == "tracer_once" and os.path.exists(marker):
        sys.exit(0)
    if kind in ("tracer_once", "tracer_always"):
        open(marker, "w").close()
        print("Tracer caught signal 11: addr=0xc28 pc=0x7f5d0c8e80f0 sp=0x7f5d01c7dd10")
        print("==1==LeakSanitizer has encountered a fatal error.")
        sys.exit(1)
    print("check failed")
    sys.exit(1)
    """)


class CtestSanitized(unittest.TestCase):
    def project(self, kinds, regex=()):
        root = tempfile.mkdtemp(prefix="pure-ctest-sanitized-")
        src, build = os.path.join(root, "src"), os.path.join(root, "build")
        os.makedirs(src)
        with open(os.path.join(src, "t.py"), "w") as f:
            f.write(TEST)
        lines = ["cmake_minimum_required(VERSION 3.16)", "project(t NONE)", "enable_testing()"]
        for i, kind in enumerate(kinds):
            marker = os.path.join(root, f"marker{i}")
            lines.append(f'add_test(NAME t{i}.{kind} COMMAND "{sys.executable}" "{src}/t.py" {kind} "{marker}")')
            if i in regex:  # passes by its output, so ctest's log has no "Test Passed." line
                lines.append(f'set_tests_properties(t{i}.{kind} PROPERTIES PASS_REGULAR_EXPRESSION "SUCCESS")')
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run(["cmake", "-S", src, "-B", build], check=True, capture_output=True)
        return build

    def run_script(self, build, *args, env=None):
        r = subprocess.run([sys.executable, SCRIPT, build, "--output-on-failure", *args],
                           capture_output=True, text=True, env=env)
        return r.returncode, r.stdout + r.stderr

    def test_all_pass(self):
        code, out = self.run_script(self.project(["pass", "pass"]))
        self.assertEqual(code, 0)
        self.assertNotIn("rerunning", out)

    def test_tracer_crash_once_is_rerun_and_passes(self):
        code, out = self.run_script(self.project(["pass", "tracer_once"]), "-j", "2")
        self.assertEqual(code, 0, out)
        self.assertIn("tracer crashed at exit in t1.tracer_once", out)

    def test_a_test_passing_by_its_output_is_not_a_failure(self):
        # CI's first real rerun: tpcc_small passed by PASS_REGULAR_EXPRESSION and was read as failed
        code, out = self.run_script(self.project(["pass", "tracer_once"], regex=(0,)))
        self.assertEqual(code, 0, out)
        self.assertIn("tracer crashed at exit in t1.tracer_once", out)
        self.assertNotIn("failed: t0", out)

    def test_tests_run_with_the_tls_interceptor_off(self):
        build = self.project(["asan_options"])
        env = {k: v for k, v in os.environ.items() if k != "ASAN_OPTIONS"}
        code, out = self.run_script(build, "-V", env=env)
        self.assertEqual(code, 0, out)
        self.assertIn("ASAN_OPTIONS=intercept_tls_get_addr=0", out)
        code, out = self.run_script(build, "-V", env=dict(env, ASAN_OPTIONS="detect_odr_violation=0"))
        self.assertIn("ASAN_OPTIONS=detect_odr_violation=0:intercept_tls_get_addr=0", out)
        code, out = self.run_script(build, "-V", env=dict(env, ASAN_OPTIONS="intercept_tls_get_addr=1"))
        self.assertIn("ASAN_OPTIONS=intercept_tls_get_addr=1\n", out)

    def test_tracer_crash_twice_fails(self):
        code, out = self.run_script(self.project(["pass", "tracer_always"]))
        self.assertNotEqual(code, 0)
        self.assertIn("rerunning", out)

    def test_a_real_failure_is_never_rerun(self):
        code, out = self.run_script(self.project(["tracer_once", "check"]))
        self.assertNotEqual(code, 0)
        self.assertNotIn("rerunning", out)
        self.assertIn("failed: t1.check", out)


if __name__ == "__main__":
    unittest.main()
