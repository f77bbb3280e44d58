#!/usr/bin/env python3
# A stand-in for pure-run in the record.py/compare.py tests: the "program" is a list of commands, one a line.
# Standard library only; must not depend on the real pure-run or the project's build.
"""fake_pure_run.py [--OPTION VALUE]... FILE [ARGS...]; commands in FILE:
  say TEXT     print TEXT to stdout          warn TEXT   print TEXT to stderr
  args         print each argument a line    stdin       copy stdin to stdout
  path         print FILE as given           engine      print PURE_JIT
  env NAME     print the variable NAME       bytes HEX   write raw bytes to stdout
  sleep SECS   sleep                         exit N      exit with N
  options      print each --OPTION VALUE pair given before FILE, a pair a line
"""

import os
import sys
import time


def run(path, arguments, options):
    with open(path, encoding="utf-8") as source:
        lines = source.read().splitlines()
    out = sys.stdout.buffer
    for number, line in enumerate(lines, start=1):
        command, _, operand = line.partition(" ")
        if command == "say":
            out.write(operand.encode("utf-8") + b"\n")
        elif command == "warn":
            out.flush()
            sys.stderr.write(operand + "\n")
        elif command == "args":
            out.write("".join(argument + "\n" for argument in arguments).encode("utf-8"))
        elif command == "stdin":
            out.write(sys.stdin.buffer.read())
        elif command == "options":
            out.write("".join(f"{name} {value}\n" for name, value in options).encode("utf-8"))
        elif command == "path":
            out.write(path.encode("utf-8") + b"\n")
        elif command == "engine":
            out.write(os.environ.get("PURE_JIT", "<unset>").encode("utf-8") + b"\n")
        elif command == "env":
            out.write(os.environ.get(operand, "<unset>").encode("utf-8") + b"\n")
        elif command == "bytes":
            out.write(bytes.fromhex(operand))
        elif command == "sleep":
            out.flush()
            time.sleep(float(operand))
        elif command == "exit":
            out.flush()
            return int(operand)
        else:
            sys.stderr.write(f"{path}:{number}:1: error: unknown command '{command}'\n")
            return 1
    return 0


def main(argv):
    options = []
    while len(argv) >= 2 and argv[0].startswith("--"):
        options.append((argv[0], argv[1]))
        argv = argv[2:]
    if not argv:
        sys.stderr.write("usage: fake_pure_run.py [--OPTION VALUE]... FILE [ARGS...]\n")
        return 2
    return run(argv[0], argv[1:], options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
