# bench/lib/measure.py: runs one command as a timed child process (wall time, startup included) and sums up samples.
# Standard library only; knows nothing about systems or kernels.
import statistics
import subprocess
import time


class RunFailed(Exception):
    """The child exited non-zero, timed out, or could not start."""


def run_timed(command, stdin_path=None, timeout=600):
    """Runs `command`, returns (wall milliseconds, stdout text). Stderr is kept only for the error message."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        began = time.perf_counter()
        done = subprocess.run(command, stdin=stdin, capture_output=True, timeout=timeout)
        elapsed_ms = (time.perf_counter() - began) * 1e3
    except subprocess.TimeoutExpired:
        raise RunFailed("timed out after %d s: %s" % (timeout, " ".join(command)))
    except OSError as error:
        raise RunFailed("could not start %s: %s" % (" ".join(command), error))
    finally:
        if stdin_path:
            stdin.close()
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-15:]
        raise RunFailed("exit code %d from %s\n  %s" % (done.returncode, " ".join(command), "\n  ".join(tail)))
    return elapsed_ms, done.stdout.decode("utf-8", "replace")


def summarize(samples_ms):
    """Median, min and max of a list of milliseconds, rounded for printing."""
    return {
        "median_ms": round(statistics.median(samples_ms), 3),
        "runs": len(samples_ms),
        "min_ms": round(min(samples_ms), 3),
        "max_ms": round(max(samples_ms), 3),
    }
