#!/usr/bin/env python3
# Records what pure-run prints for each example: one JSON line per run, for compare.py to check across devices.
# Standard library only; must not depend on the project's build (any pure-run binary or wrapper will do).
"""Run pure-run over the examples and write one JSON line per run.

Each example NAME.pure runs from inside its own folder as `pure-run FLAGS... NAME.pure ARGS...`,
so diagnostics name the file the same way on every machine. NAME.flags (pure-run options, one a
line, before the file name), NAME.args (one argument a line, after it) and NAME.in (stdin; absent
means empty stdin) are applied. Lines are sorted by file and arguments,
so two recordings line up.

Fields: file, args, flags, arch, engine, exit_code (null on timeout), timed_out, seconds,
stdout/stderr (text if valid UTF-8, else base64 with stdout_base64/stderr_base64 true),
stdout_sha256/stderr_sha256 (of the raw bytes).
"""

import argparse
import base64
import hashlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:
    import resource
except ImportError:  # not on every platform; only used to keep crash dumps out of the examples folder
    resource = None

ENGINE_JIT_SETTING = {"interp": "0", "jit": "1"}

# ELF e_machine and Mach-O cputype values of the architectures Pure targets.
ELF_MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
MACHO_CPU_TYPES = {0x01000007: "x86_64", 0x0100000C: "aarch64"}
ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


class RunError(Exception):
    """pure-run could not be started at all (as opposed to a run that failed)."""


def normalize_arch(name):
    return ARCH_ALIASES.get(name.lower(), name.lower())


def binary_arch(path):
    """The architecture an executable was built for, read from its header; None for scripts."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(20)
    except OSError:
        return None
    if header[:4] == b"\x7fELF" and len(header) >= 20:
        byte_order = "little" if header[5] == 1 else "big"
        return ELF_MACHINES.get(int.from_bytes(header[18:20], byte_order))
    if header[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe") and len(header) >= 8:
        return MACHO_CPU_TYPES.get(int.from_bytes(header[4:8], "little"))
    return None


def engine_setting(engine):
    """PURE_JIT value for an engine name: 'interp' -> 0; 'jit' or 'jit-<backend>' -> 1."""
    if engine in ENGINE_JIT_SETTING:
        return ENGINE_JIT_SETTING[engine]
    if engine.startswith("jit-"):
        return ENGINE_JIT_SETTING["jit"]
    raise ValueError(f"unknown engine {engine!r}: use interp, jit or jit-<backend>")


def resolve_program(path):
    """Absolute path of pure-run (runs change directory), looking a bare name up on PATH."""
    if os.sep not in path:
        found = shutil.which(path)
        if found:
            return os.path.abspath(found)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"pure-run not found: {path}")
    return os.path.abspath(path)


def find_examples(examples_dir, requested):
    """(folder, NAME.pure) pairs: every *.pure in examples_dir, or the requested names or paths."""
    if not requested:
        return [(examples_dir, path.name) for path in sorted(examples_dir.glob("*.pure"))]
    found = []
    for item in requested:
        path = Path(item)
        if path.suffix != ".pure":
            path = path.with_name(path.name + ".pure")
        if not path.is_file() and not path.is_absolute():
            path = examples_dir / path
        if not path.is_file():
            raise FileNotFoundError(f"example not found: {item}")
        found.append((path.parent.resolve(), path.name))
    return found


def read_arguments(args_file):
    """One argument per line (NAME.args, NAME.flags); the final newline ends the last line, adding none."""
    if not args_file.is_file():
        return []
    text = args_file.read_text(encoding="utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def encode_output(name, data):
    """JSON fields for one output stream: text when it is valid UTF-8, base64 otherwise, plus a hash."""
    fields = {}
    try:
        fields[name] = data.decode("utf-8")
        fields[name + "_base64"] = False
    except UnicodeDecodeError:
        fields[name] = base64.b64encode(data).decode("ascii")
        fields[name + "_base64"] = True
    fields[name + "_sha256"] = hashlib.sha256(data).hexdigest()
    return fields


def disable_core_dumps():
    """A crashing program (or qemu, for a crashing guest) must not leave core files in the examples folder."""
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_example(command_prefix, folder, file_name, arch, engine, timeout):
    stem = file_name[: -len(".pure")]
    arguments = read_arguments(folder / (stem + ".args"))
    flags = read_arguments(folder / (stem + ".flags"))
    stdin_file = folder / (stem + ".in")
    stdin_data = stdin_file.read_bytes() if stdin_file.is_file() else b""
    environment = dict(os.environ, PURE_JIT=engine_setting(engine))
    started = time.monotonic()
    try:
        finished = subprocess.run(
            command_prefix + flags + [file_name] + arguments,
            cwd=folder, input=stdin_data, capture_output=True, env=environment, timeout=timeout,
            preexec_fn=disable_core_dumps)
        exit_code, stdout, stderr, timed_out = finished.returncode, finished.stdout, finished.stderr, False
    except subprocess.TimeoutExpired as expired:
        exit_code, stdout, stderr, timed_out = None, expired.stdout or b"", expired.stderr or b"", True
    except OSError as error:
        raise RunError(f"cannot run {' '.join(command_prefix)} in {folder}: {error}") from error
    record = {
        "file": file_name, "args": arguments, "flags": flags, "arch": arch, "engine": engine,
        "exit_code": exit_code, "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 3),
    }
    record.update(encode_output("stdout", stdout))
    record.update(encode_output("stderr", stderr))
    return record


def parse_arguments(argv):
    default_examples = Path(__file__).resolve().parent.parent / "examples"
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pure-run", required=True, help="the pure-run executable to record")
    parser.add_argument("--out", required=True, help="JSON-lines file to write")
    parser.add_argument("--engine", default="interp", help="interp (PURE_JIT=0), jit or jit-<backend> (PURE_JIT=1)")
    parser.add_argument("--emulator", default="",
                        help="command that runs pure-run, e.g. 'qemu-aarch64 -L /usr/aarch64-linux-gnu'")
    parser.add_argument("--arch", help="architecture to record (default: read from pure-run, else this machine's)")
    parser.add_argument("--examples", type=Path, default=default_examples, help="folder of NAME.pure examples")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per run (default 60)")
    parser.add_argument("example", nargs="*", help="examples to run (NAME, NAME.pure or a path); default all")
    return parser.parse_args(argv)


def record_all(options):
    program = resolve_program(options.pure_run)
    engine_setting(options.engine)
    arch = normalize_arch(options.arch or binary_arch(program) or platform.machine())
    command_prefix = shlex.split(options.emulator) + [program]
    examples = find_examples(options.examples.resolve(), options.example)
    records = [run_example(command_prefix, folder, name, arch, options.engine, options.timeout)
               for folder, name in examples]
    records.sort(key=lambda record: (record["file"], record["args"]))
    return records


def main(argv=None):
    options = parse_arguments(argv)
    started = time.monotonic()
    try:
        records = record_all(options)
    except (FileNotFoundError, ValueError, RunError) as error:
        print(f"record.py: {error}", file=sys.stderr)
        return 2
    with open(options.out, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    timed_out = [record["file"] for record in records if record["timed_out"]]
    arch_engine = f"{records[0]['arch']}/{records[0]['engine']}" if records else "nothing"
    print(f"record.py: {len(records)} runs ({arch_engine}) in {time.monotonic() - started:.1f} s -> {options.out}")
    if timed_out:
        print(f"record.py: timed out after {options.timeout:g} s: {' '.join(timed_out)}", file=sys.stderr)
        return 1
    if not records:
        print("record.py: no examples found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
