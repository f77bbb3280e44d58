#!/usr/bin/env python3
# Compares recordings made by record.py run by run and names the first differing line of each difference.
# Standard library only; knows nothing of pure-run beyond the JSON-lines format record.py writes.
"""Compare two or more recordings of pure-run (JSON lines from record.py).

Runs are matched by file and arguments; every recording is compared with the first one.
Compared: exit code, timeout, stdout and stderr bytes (arch, engine and timing are expected
to differ). Exit status: 0 all identical, 1 any difference or missing run, 2 unreadable input.
"""

import argparse
import base64
import hashlib
import json
import sys

SHOWN_CHARACTERS = 200
COMPARED_VALUES = ("exit_code", "timed_out")
COMPARED_STREAMS = ("stdout", "stderr")


class RecordingError(Exception):
    pass


class Recording:
    """One JSON-lines file: its runs keyed by (file, args), and a label naming its arch and engine."""

    def __init__(self, path):
        self.path = path
        self.runs = {}
        for number, line in enumerate(read_lines(path), start=1):
            if not line.strip():
                continue
            try:
                run = json.loads(line)
                key = (run["file"], tuple(run["args"]))
            except (ValueError, KeyError, TypeError) as error:
                raise RecordingError(f"{path}:{number}: not a record.py line ({error})") from error
            if key in self.runs:
                raise RecordingError(f"{path}:{number}: run {describe_run(key)} recorded twice")
            self.runs[key] = run
        machines = sorted({f"{run.get('arch', '?')}/{run.get('engine', '?')}" for run in self.runs.values()})
        self.label = f"{path} ({', '.join(machines) or 'empty'})"


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as stream:
            return stream.read().split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise RecordingError(f"{path}: {error}") from error


def describe_run(key):
    file_name, arguments = key
    return file_name + (" " + " ".join(arguments) if arguments else "")


def output_bytes(run, stream, where):
    """The raw bytes of stdout or stderr, checked against the recorded hash."""
    text = run.get(stream, "")
    data = base64.b64decode(text) if run.get(stream + "_base64") else text.encode("utf-8")
    recorded_hash = run.get(stream + "_sha256")
    if recorded_hash is not None and hashlib.sha256(data).hexdigest() != recorded_hash:
        raise RecordingError(f"{where}: {stream} does not match its sha256 (file edited or damaged?)")
    return data


def split_lines(data):
    """Lines split on b'\\n' only, each keeping its newline (so a missing final newline shows)."""
    pieces = data.split(b"\n")
    lines = [piece + b"\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def first_differing_line(left, right):
    """(1-based line number, left line, right line) of two different byte strings; None = no such line."""
    left_lines, right_lines = split_lines(left), split_lines(right)
    for index in range(max(len(left_lines), len(right_lines))):
        left_line = left_lines[index] if index < len(left_lines) else None
        right_line = right_lines[index] if index < len(right_lines) else None
        if left_line != right_line:
            return index + 1, left_line, right_line
    raise AssertionError("outputs differ but no line does")


def shown_line(line):
    """A line for the report: repr of its text where it is UTF-8 (so characters show), else of its bytes."""
    if line is None:
        return "<no such line>"
    try:
        shown = repr(line.decode("utf-8"))
    except UnicodeDecodeError:
        shown = repr(line)
    return shown if len(shown) <= SHOWN_CHARACTERS else shown[:SHOWN_CHARACTERS] + "..."


def compare_stream(stream, key, base, other):
    where = describe_run(key)
    base_data = output_bytes(base.runs[key], stream, f"{base.path}: {where}")
    other_data = output_bytes(other.runs[key], stream, f"{other.path}: {where}")
    if base_data == other_data:
        return []
    number, base_line, other_line = first_differing_line(base_data, other_data)
    return [f"{where}: {stream} differs at line {number}\n"
            f"  {base.label}: {shown_line(base_line)}\n"
            f"  {other.label}: {shown_line(other_line)}"]


def compare_value(field, key, base, other):
    base_value, other_value = base.runs[key].get(field), other.runs[key].get(field)
    if base_value == other_value:
        return []
    return [f"{describe_run(key)}: {field} differs\n"
            f"  {base.label}: {json.dumps(base_value)}\n"
            f"  {other.label}: {json.dumps(other_value)}"]


def compare_recordings(base, other):
    """Every difference between two recordings, as report paragraphs, in run order."""
    differences = []
    for key in sorted(set(base.runs) | set(other.runs)):
        if key not in other.runs:
            differences.append(f"{describe_run(key)}: missing run\n  in {other.label}, present in {base.label}")
            continue
        if key not in base.runs:
            differences.append(f"{describe_run(key)}: missing run\n  in {base.label}, present in {other.label}")
            continue
        for field in COMPARED_VALUES:
            differences += compare_value(field, key, base, other)
        for stream in COMPARED_STREAMS:
            differences += compare_stream(stream, key, base, other)
    return differences


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording", nargs="+", help="JSON-lines files written by record.py (two or more)")
    options = parser.parse_args(argv)
    if len(options.recording) < 2:
        parser.error("give at least two recordings")
    try:
        recordings = [Recording(path) for path in options.recording]
        differences = []
        for other in recordings[1:]:
            differences += compare_recordings(recordings[0], other)
    except RecordingError as error:
        print(f"compare.py: {error}", file=sys.stderr)
        return 2
    for difference in differences:
        print(difference)
    if differences:
        print(f"compare.py: {len(differences)} differences across {len(recordings)} recordings")
        return 1
    runs = len(recordings[0].runs)
    if runs == 0:
        print("compare.py: the recordings hold no runs")
        return 1
    print(f"compare.py: {runs} runs identical across {len(recordings)} recordings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
