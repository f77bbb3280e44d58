# bench/lib/report.py: turns Results into the JSON lines of shared/design/bench-format.md, compares checks,
# and writes the summary (Pure against C, CPython and Lua 5.4). Standard library only.
import json

from measure import summarize

SUMMARY_BASELINES = ["c", "cpython", "lua5.4"]


def result_lines(bench, results, machine, clock):
    """One dict per system that produced samples, in the order the systems ran; `clock` is "wall" or "cpu"."""
    finished = [result for result in results if result.samples and not result.error]
    medians = {result.system.name: summarize(result.samples)["median_ms"] for result in finished}
    lines = []
    for result in finished:
        line = {"bench": bench, "system": result.system.name}
        line.update(summarize(result.samples))
        if medians.get("c"):
            line["ratio_to_c"] = round(line["median_ms"] / medians["c"], 3)
        line["check"] = result.check
        line["machine"] = machine
        line["engine"] = result.system.engine
        line["clock"] = clock
        lines.append(line)
    return lines


def checks_agree(lines):
    return len({line["check"] for line in lines}) <= 1


def summary_line(bench, lines):
    """Pure's ratio to each baseline that ran (its median over theirs: below 1 means Pure is faster)."""
    by_system = {line["system"]: line for line in lines}
    pure = by_system.get("pure") or by_system.get("pure-jit")
    if pure is None:
        return None
    summary = {"bench": "summary", "kernel": bench, "system": pure["system"],
               "median_ms": pure["median_ms"], "runs": pure["runs"]}
    for baseline in SUMMARY_BASELINES:
        if baseline in by_system and by_system[baseline]["median_ms"] > 0:
            summary["ratio_to_" + baseline] = round(pure["median_ms"] / by_system[baseline]["median_ms"], 3)
    return summary


def emit(line, stream):
    stream.write(json.dumps(line) + "\n")
    stream.flush()


def table(all_lines):
    """A human-readable table of medians and ratios to C, for stderr."""
    systems = []
    for line in all_lines:
        if line["system"] not in systems:
            systems.append(line["system"])
    rows = ["%-11s" % "bench" + "".join("%22s" % system for system in systems)]
    for bench in dict.fromkeys(line["bench"] for line in all_lines):
        cells = []
        for system in systems:
            match = [line for line in all_lines if line["bench"] == bench and line["system"] == system]
            if match:
                ratio = match[0].get("ratio_to_c")
                cells.append("%22s" % ("%.2f ms (%sx C)" % (match[0]["median_ms"], "%.2f" % ratio if ratio else "?")))
            else:
                cells.append("%22s" % "-")
        rows.append("%-11s" % bench + "".join(cells))
    return "\n".join(rows)
