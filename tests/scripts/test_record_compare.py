#!/usr/bin/env python3
# Tests of scripts/record.py and scripts/compare.py, driven through their command lines with a fake pure-run.
# Standard library only; must not depend on the real pure-run (fake_pure_run.py stands in for it).

import base64
import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent.parent / "scripts"
RECORD = SCRIPTS / "record.py"
COMPARE = SCRIPTS / "compare.py"
FAKE_PURE_RUN = HERE / "fake_pure_run.py"


def load_script(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(script, *arguments):
    return subprocess.run([sys.executable, str(script), *map(str, arguments)],
                          capture_output=True, text=True, timeout=120)


class Scratch(unittest.TestCase):
    """A temporary folder with an examples/ folder the test fills with fake programs."""

    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(prefix="pure-record-test-"))
        self.examples = self.folder / "examples"
        self.examples.mkdir()

    def tearDown(self):
        shutil.rmtree(self.folder)

    def write_example(self, name, program, args=None, stdin=None, examples=None, flags=None):
        folder = examples or self.examples
        (folder / f"{name}.pure").write_text(program, encoding="utf-8")
        if args is not None:
            (folder / f"{name}.args").write_text(args, encoding="utf-8")
        if flags is not None:
            (folder / f"{name}.flags").write_text(flags, encoding="utf-8")
        if stdin is not None:
            (folder / f"{name}.in").write_bytes(stdin)

    def record(self, out_name, *extra, examples=None, expect_status=0):
        out = self.folder / out_name
        finished = run_script(RECORD, "--pure-run", FAKE_PURE_RUN, "--out", out,
                              "--examples", examples or self.examples, *extra)
        self.assertEqual(finished.returncode, expect_status, finished.stderr)
        return out

    def read_runs(self, path):
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def compare(self, *recordings):
        return run_script(COMPARE, *recordings)


class RecordTests(Scratch):
    def test_every_example_recorded_once_sorted_by_file(self):
        self.write_example("zeta", "say last\n")
        self.write_example("alpha", "say first\n")
        runs = self.read_runs(self.record("all.jsonl"))
        self.assertEqual([run["file"] for run in runs], ["alpha.pure", "zeta.pure"])
        self.assertEqual(runs[0]["stdout"], "first\n")
        self.assertEqual(runs[0]["exit_code"], 0)
        self.assertFalse(runs[0]["timed_out"])

    def test_program_path_is_the_bare_file_name(self):
        self.write_example("where", "path\n")
        runs = self.read_runs(self.record("path.jsonl"))
        self.assertEqual(runs[0]["stdout"], "where.pure\n")

    def test_args_and_stdin_files_are_applied(self):
        self.write_example("echo", "args\nstdin\n", args="one\ntwo words\n\n", stdin=b"from stdin\n")
        run = self.read_runs(self.record("echo.jsonl"))[0]
        self.assertEqual(run["args"], ["one", "two words", ""])
        self.assertEqual(run["stdout"], "one\ntwo words\n\nfrom stdin\n")

    def test_flags_go_before_the_file_and_args_after(self):
        self.write_example("limited", "options\npath\nargs\n", flags="--max-steps\n1000\n", args="after\n")
        run = self.read_runs(self.record("flags.jsonl"))[0]
        self.assertEqual(run["flags"], ["--max-steps", "1000"])
        self.assertEqual(run["stdout"], "--max-steps 1000\nlimited.pure\nafter\n")

    def test_unrunnable_pure_run_is_reported_without_traceback(self):
        self.write_example("any", "say x\n")
        not_executable = self.folder / "pure-run"
        not_executable.write_text("not a program\n")
        finished = run_script(RECORD, "--pure-run", not_executable, "--out", self.folder / "x.jsonl",
                              "--examples", self.examples)
        self.assertEqual(finished.returncode, 2)
        self.assertIn("cannot run", finished.stderr)
        self.assertNotIn("Traceback", finished.stderr)

    def test_missing_stdin_file_means_empty_stdin(self):
        self.write_example("quiet", "stdin\nsay end\n")
        self.assertEqual(self.read_runs(self.record("quiet.jsonl"))[0]["stdout"], "end\n")

    def test_exit_code_and_stderr_are_recorded(self):
        self.write_example("failing", "say partial\nwarn boom\nexit 3\n")
        run = self.read_runs(self.record("failing.jsonl"))[0]
        self.assertEqual((run["exit_code"], run["stdout"], run["stderr"]), (3, "partial\n", "boom\n"))
        self.assertEqual(run["stderr_sha256"], hashlib.sha256(b"boom\n").hexdigest())

    def test_invalid_utf8_is_base64_with_hash_of_raw_bytes(self):
        raw = bytes.fromhex("41ff0a")
        self.write_example("binary", "bytes 41ff0a\nsay ünïcode\n")
        run = self.read_runs(self.record("binary.jsonl"))[0]
        self.assertTrue(run["stdout_base64"])
        expected = raw + "ünïcode\n".encode("utf-8")
        self.assertEqual(base64.b64decode(run["stdout"]), expected)
        self.assertEqual(run["stdout_sha256"], hashlib.sha256(expected).hexdigest())
        self.assertFalse(run["stderr_base64"])

    def test_engine_sets_pure_jit(self):
        self.write_example("engine", "engine\n")
        interp = self.read_runs(self.record("interp.jsonl"))[0]
        jit = self.read_runs(self.record("jit.jsonl", "--engine", "jit"))[0]
        self.assertEqual((interp["engine"], interp["stdout"]), ("interp", "0\n"))
        self.assertEqual((jit["engine"], jit["stdout"]), ("jit", "1\n"))

    def test_unknown_engine_is_a_usage_error(self):
        self.write_example("engine", "engine\n")
        self.record("bad.jsonl", "--engine", "turbo", expect_status=2)

    def test_emulator_prefixes_the_command(self):
        self.write_example("wrapped", "env WRAPPED_BY\n")
        run = self.read_runs(self.record("wrapped.jsonl", "--emulator", "env WRAPPED_BY=emulator"))[0]
        self.assertEqual(run["stdout"], "emulator\n")

    def test_given_examples_only(self):
        for name in ("one", "two", "three"):
            self.write_example(name, f"say {name}\n")
        runs = self.read_runs(self.record("some.jsonl", "two", "one.pure"))
        self.assertEqual([run["file"] for run in runs], ["one.pure", "two.pure"])

    def test_missing_example_is_an_error(self):
        self.record("none.jsonl", "absent", expect_status=2)

    def test_timeout_is_recorded_and_fails_the_recording(self):
        self.write_example("slow", "say started\nsleep 30\n")
        run = self.read_runs(self.record("slow.jsonl", "--timeout", "1", expect_status=1))[0]
        self.assertTrue(run["timed_out"])
        self.assertIsNone(run["exit_code"])

    def test_arch_option_overrides_detection(self):
        self.write_example("arch", "say x\n")
        self.assertEqual(self.read_runs(self.record("arch.jsonl", "--arch", "arm64"))[0]["arch"], "aarch64")


class BinaryArchTests(Scratch):
    def write_header(self, name, header):
        path = self.folder / name
        path.write_bytes(header + bytes(64))
        return path

    def test_elf_machine_names_the_architecture(self):
        record = load_script(RECORD)
        elf_start = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00"
        aarch64 = self.write_header("arm", elf_start + (183).to_bytes(2, "little"))
        x86_64 = self.write_header("x86", elf_start + (62).to_bytes(2, "little"))
        self.assertEqual(record.binary_arch(aarch64), "aarch64")
        self.assertEqual(record.binary_arch(x86_64), "x86_64")

    def test_mach_o_cpu_type_names_the_architecture(self):
        record = load_script(RECORD)
        arm64 = self.write_header("mac", b"\xcf\xfa\xed\xfe" + (0x0100000C).to_bytes(4, "little"))
        self.assertEqual(record.binary_arch(arm64), "aarch64")

    def test_script_has_no_binary_architecture(self):
        self.assertIsNone(load_script(RECORD).binary_arch(FAKE_PURE_RUN))


class CompareTests(Scratch):
    PROGRAM = "say line one\nsay line two\nsay line three\nwarn note\nexit 0\n"

    def setUp(self):
        super().setUp()
        self.write_example("main", self.PROGRAM, args="a\n")
        self.write_example("other", "say other\n")
        self.base = self.record("base.jsonl")

    def changed_copy(self, name, program):
        """A scratch copy of the examples with one program replaced, recorded."""
        copy = self.folder / f"examples-{name}"
        shutil.copytree(self.examples, copy)
        if program is None:
            (copy / "other.pure").unlink()
        else:
            self.write_example("main", program, examples=copy)
        return self.record(f"{name}.jsonl", examples=copy)

    def test_identical_recordings_pass(self):
        again = self.record("again.jsonl")
        finished = self.compare(self.base, again)
        self.assertEqual(finished.returncode, 0, finished.stdout)
        self.assertIn("2 runs identical across 2 recordings", finished.stdout)

    def test_arch_engine_and_timing_do_not_count(self):
        other_machine = self.record("jit.jsonl", "--engine", "jit", "--arch", "aarch64")
        finished = self.compare(self.base, other_machine, self.record("third.jsonl"))
        self.assertEqual(finished.returncode, 0, finished.stdout)
        self.assertIn("2 runs identical across 3 recordings", finished.stdout)

    def test_changed_byte_fails_naming_the_first_differing_line(self):
        changed = self.changed_copy("byte", self.PROGRAM.replace("line three", "line thrEe"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("main.pure a: stdout differs at line 3", finished.stdout)
        self.assertIn("'line three\\n'", finished.stdout)
        self.assertIn("'line thrEe\\n'", finished.stdout)
        self.assertIn("1 differences", finished.stdout)

    def test_changed_byte_in_third_recording_fails(self):
        changed = self.changed_copy("byte", self.PROGRAM.replace("line one", "line 1"))
        finished = self.compare(self.base, self.record("again.jsonl"), changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("stdout differs at line 1", finished.stdout)

    def test_missing_final_newline_is_a_difference(self):
        changed = self.changed_copy("newline", self.PROGRAM.replace("say line three\n", "bytes 6c696e65207468726565\n"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("stdout differs at line 3", finished.stdout)

    def test_extra_output_line_is_reported_against_no_line(self):
        changed = self.changed_copy("longer", self.PROGRAM.replace("exit 0", "say line four\nexit 0"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("stdout differs at line 4", finished.stdout)
        self.assertIn("<no such line>", finished.stdout)

    def test_changed_stderr_fails(self):
        changed = self.changed_copy("stderr", self.PROGRAM.replace("warn note", "warn n0te"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("stderr differs at line 1", finished.stdout)

    def test_changed_exit_code_fails(self):
        changed = self.changed_copy("exit", self.PROGRAM.replace("exit 0", "exit 3"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("main.pure a: exit_code differs", finished.stdout)
        self.assertNotIn("stdout differs", finished.stdout)

    def test_missing_run_fails_on_either_side(self):
        shorter = self.changed_copy("missing", None)
        for recordings in ((self.base, shorter), (shorter, self.base)):
            finished = self.compare(*recordings)
            self.assertEqual(finished.returncode, 1)
            self.assertIn("other.pure: missing run", finished.stdout)
            self.assertIn(f"in {shorter}", finished.stdout)

    def test_binary_difference_is_shown_as_bytes(self):
        changed = self.changed_copy("binary", self.PROGRAM.replace("say line two", "bytes 6c696e65ff0a"))
        finished = self.compare(self.base, changed)
        self.assertEqual(finished.returncode, 1)
        self.assertIn("stdout differs at line 2", finished.stdout)
        self.assertIn("b'line\\xff\\n'", finished.stdout)

    def test_edited_record_is_caught_by_its_hash(self):
        runs = self.read_runs(self.base)
        runs[0]["stdout"] = runs[0]["stdout"].replace("two", "2")
        edited = self.folder / "edited.jsonl"
        edited.write_text("".join(json.dumps(run) + "\n" for run in runs), encoding="utf-8")
        finished = self.compare(self.base, edited)
        self.assertEqual(finished.returncode, 2)
        self.assertIn("sha256", finished.stderr)

    def test_one_recording_is_a_usage_error(self):
        self.assertEqual(self.compare(self.base).returncode, 2)


if __name__ == "__main__":
    unittest.main()
