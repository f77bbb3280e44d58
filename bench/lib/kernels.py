# bench/lib/kernels.py: the process-timed kernels (fib, mandelbrot, sieve, textbuild, textkeys, spectralnorm, fannkuch), their sizes, and the
# round-robin loop that runs every system once per round. Standard library only.
import os

from measure import RunFailed, run_timed
from systems import PrepareFailed

# Arguments per kernel: "full" sizes give C at least tens of milliseconds and the slowest baseline
# (CPython) a few seconds; "quick" sizes are a CI smoke test that checks agreement, not speed.
KERNELS = {
    "fib": {"full": ["32", "10"], "quick": ["24", "1"]},                # fib(N), R times
    "mandelbrot": {"full": ["400", "400", "1000"], "quick": ["60", "40", "200"]},  # W H max-iterations
    "sieve": {"full": ["5000000", "4"], "quick": ["100000", "1"]},      # primes below N, R times
    "textbuild": {"full": ["2000000"], "quick": ["20000"]},             # N numbers joined by commas
    "textkeys": {"full": ["2000000", "5000"], "quick": ["20000", "500"]},  # N words from D distinct, counted
    "spectralnorm": {"full": ["1000"], "quick": ["50"]},                # N x N matrix, 10 power-method rounds
    "fannkuch": {"full": ["10"], "quick": ["7"]},                       # permutations of N, prefix reversals
}


class Result:
    """What one system produced for one benchmark: timing samples (ms), its check, or the error that stopped it."""

    def __init__(self, system):
        self.system = system
        self.samples = []
        self.check = None
        self.error = None
        self.extra = {}

    def record_check(self, check):
        if self.check is None:
            self.check = check
        elif check != self.check:
            raise RunFailed("check changed between runs: %r then %r" % (self.check, check))


def prepare_all(systems, source_for, build_dir, log):
    """Returns (results, argv prefixes) for the systems whose source could be prepared; failures are recorded."""
    results, prefixes = [], {}
    for system in systems:
        result = Result(system)
        results.append(result)
        source = source_for(system)
        if not os.path.isfile(source):
            result.error = "no source file %s" % source
            log("  %s: FAILED: %s" % (system.name, result.error))
            continue
        try:
            prefixes[system.name] = system.prepare(source, build_dir)
        except PrepareFailed as error:
            result.error = str(error)
            log("  %s: FAILED: %s" % (system.name, result.error))
    return results, prefixes


def run_kernel(name, systems, options, build_dir, log):
    """Runs kernel `name` round robin: round 1 of every system, then round 2, ... Returns the Results."""
    kernels_dir = os.path.join(options.bench_dir, "kernels")
    arguments = KERNELS[name]["quick" if options.quick else "full"]
    results, prefixes = prepare_all(
        systems, lambda system: os.path.join(kernels_dir, name + system.extension), build_dir, log)
    for round_number in range(1, options.runs + 1):
        for result in results:
            if result.error:
                continue
            try:
                timing = run_timed(prefixes[result.system.name] + arguments, timeout=options.timeout)
                result.record_check(timing.stdout.strip())
            except RunFailed as error:
                result.error = str(error)
                log("  %s: FAILED: %s" % (result.system.name, result.error))
                continue
            result.samples.append(timing.ms(options.clock))
            log("[%s] run %d/%d %-8s %10.1f ms wall %10.1f ms cpu  check %s" % (
                name, round_number, options.runs, result.system.name, timing.wall_ms, timing.cpu_ms, result.check))
    return results
