# bench/lib/measure.py: runs one command as a timed child process (wall time and the child's processor time,
# start-up included) and sums up samples. Standard library only; knows nothing about systems or kernels.
import os
import statistics
import subprocess
import tempfile
import threading
import time


class RunFailed(Exception):
    """The child exited non-zero, timed out, or could not start."""


class Timing:
    """One finished child: wall milliseconds, processor milliseconds (user + system, from wait4), stdout."""

    def __init__(self, wall_ms, cpu_ms, stdout):
        self.wall_ms = wall_ms
        self.cpu_ms = cpu_ms
        self.stdout = stdout

    def ms(self, clock):
        return self.cpu_ms if clock == "cpu" else self.wall_ms


def run_timed(command, stdin_path=None, timeout=600):
    """Runs `command` with stdout and stderr in temporary files (no pipe to drain while timing)."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            began = time.perf_counter()
            child = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=stderr)
            status, usage = wait_with_usage(child, timeout, command)
            wall_ms = (time.perf_counter() - began) * 1e3
        except OSError as error:
            raise RunFailed("could not start %s: %s" % (" ".join(command), error))
        finally:
            if stdin_path:
                stdin.close()
        stdout.seek(0)
        stderr.seek(0)
        output = stdout.read().decode("utf-8", "replace")
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            tail = stderr.read().decode("utf-8", "replace").strip().splitlines()[-15:]
            raise RunFailed("exit code %d from %s\n  %s" % (code, " ".join(command), "\n  ".join(tail)))
    return Timing(wall_ms, (usage.ru_utime + usage.ru_stime) * 1e3, output)


def wait_with_usage(child, timeout, command):
    """Blocks in os.wait4, which gives this child's own resource usage; a timer kills a child that hangs."""
    expired = []

    def kill():
        expired.append(True)
        child.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        timer.cancel()
    child.returncode = status  # the child is reaped: keeps Popen from waiting for it again
    if expired:
        raise RunFailed("killed after the %d s timeout: %s" % (timeout, " ".join(command)))
    return status, usage


def summarize(samples_ms):
    """Median, min and max of a list of milliseconds, rounded for printing."""
    return {
        "median_ms": round(statistics.median(samples_ms), 3),
        "runs": len(samples_ms),
        "min_ms": round(min(samples_ms), 3),
        "max_ms": round(max(samples_ms), 3),
    }
