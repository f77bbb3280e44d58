#!/usr/bin/env python3
"""tests/jit/engines_agree.py PURE_RUN [EMULATOR [ARGS...]]: records every example with scripts/record.py by
the interpreter (--engine interp) and by the JIT (--engine jit, every loop compiled on first entry whatever its
native share), and checks with scripts/compare.py that both recordings hold the same bytes. A cross build passes
its emulator prefix (qemu-aarch64 -L ...) after PURE_RUN. Exit code: compare.py's."""
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    pure_run = os.path.abspath(sys.argv[1])
    emulator = sys.argv[2:]
    scripts = os.path.join(ROOT, "scripts")
    with tempfile.TemporaryDirectory(prefix="pure-engines-") as folder:
        outs = []
        for engine in ("interp", "jit"):
            out = os.path.join(folder, engine + ".jsonl")
            env = dict(os.environ, PURE_JIT_THRESHOLD="0", PURE_JIT_MIN_SHARE="0")
            command = [sys.executable, os.path.join(scripts, "record.py"), "--engine", engine,
                       "--pure-run", pure_run, "--out", out]
            if emulator:
                command += ["--emulator", shlex.join(emulator)]
            subprocess.run(command, check=True, env=env)
            outs.append(out)
        return subprocess.run([sys.executable, os.path.join(scripts, "compare.py")] + outs).returncode


if __name__ == "__main__":
    sys.exit(main())
