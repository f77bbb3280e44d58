# bench/lib/systems.py: the systems a benchmark runs on (C, CPython, Lua 5.4, LuaJIT, Pure) and how each
# turns a source file into a command line. Standard library only; knows nothing about kernels or timing.
import os
import shutil
import platform
import subprocess
import sys

ALL_SYSTEMS = ["pure", "pure-jit", "c", "cpython", "lua5.4", "luajit"]
C_FLAGS = ["-O2", "-ffp-contract=off"]
INTERPRETER_ENGINES = ("", "0", "off", "no", "none", "interp")


class SystemMissing(Exception):
    """The system's program is not installed (skipped with a note, not a failure)."""


class PrepareFailed(Exception):
    """A source file could not be made runnable (e.g. the C compiler rejected it): a failure."""


def first_line(command):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


class System:
    """One system: `key` is what --systems selects, `name` what the JSON line's "system" says."""

    extension = ""

    def __init__(self, key, name, program):
        self.key = key
        self.name = name
        self.program = program
        self.engine = "unknown"

    def prepare(self, source, build_dir):
        """Returns the argv prefix that runs `source` (compiling it first if the system needs to)."""
        return [self.program, source]


class CSystem(System):
    extension = ".c"

    def __init__(self, program):
        super().__init__("c", "c", program)
        self.engine = first_line([program, "--version"]) + " " + " ".join(C_FLAGS)
        self.compiled = {}

    def prepare(self, source, build_dir):
        if source not in self.compiled:
            binary = os.path.join(build_dir, os.path.splitext(os.path.basename(source))[0] + "-c")
            # -lm after the source: a kernel may call the math library (spectralnorm's sqrt)
            done = subprocess.run([self.program, *C_FLAGS, "-o", binary, source, "-lm"], capture_output=True, text=True)
            if done.returncode != 0:
                raise PrepareFailed("cc failed on %s:\n%s" % (source, done.stderr))
            self.compiled[source] = binary
        return [self.compiled[source]]


class ScriptSystem(System):
    def __init__(self, key, program, extension, version_flag):
        super().__init__(key, key, program)
        self.extension = extension
        self.engine = first_line([program, version_flag])


class PureSystem(System):
    """pure-run with its engine set explicitly: `pure` is the interpreter (or, when PURE_JIT is set to an engine,
    that engine, named pure-jit as before), `pure-jit` the JIT (PURE_JIT=1, compile time included)."""
    extension = ".pure"

    def __init__(self, program, key="pure"):
        engine = "1" if key == "pure-jit" else os.environ.get("PURE_JIT", "").strip()
        interpreted = engine.lower() in INTERPRETER_ENGINES
        super().__init__(key, "pure" if interpreted else "pure-jit", program)
        self.engine = "interp" if interpreted else ("llvm" if engine == "1" else engine)
        self.setting = "0" if interpreted else engine

    def prepare(self, source, build_dir):
        return ["env", "PURE_JIT=" + self.setting, self.program, source]


def find_system(key, pure_run):
    """Returns the System for `key`, or raises SystemMissing with the reason."""
    def need(program):
        path = shutil.which(program)
        if path is None:
            raise SystemMissing("%s: `%s` not found on PATH" % (key, program))
        return path

    if key == "c":
        return CSystem(need("cc"))
    if key == "cpython":
        # The interpreter running this harness, when it is CPython: a version-manager shim on PATH would add its
        # own start-up (tens of milliseconds) to every measured run.
        if platform.python_implementation() == "CPython" and sys.executable:
            return ScriptSystem("cpython", sys.executable, ".py", "--version")
        return ScriptSystem("cpython", need("python3"), ".py", "--version")
    if key in ("lua5.4", "luajit"):
        return ScriptSystem(key, need(key), ".lua", "-v")
    if key in ("pure", "pure-jit"):
        if not (os.path.isfile(pure_run) and os.access(pure_run, os.X_OK)):
            raise SystemMissing("%s: %s does not exist or is not executable (build it, or pass --pure-run)" % (key, pure_run))
        return PureSystem(os.path.abspath(pure_run), key)
    raise ValueError("unknown system %r (known: %s)" % (key, ",".join(ALL_SYSTEMS)))
