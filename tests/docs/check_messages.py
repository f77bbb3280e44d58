#!/usr/bin/env python3
"""tests/docs/check_messages.py ROOT

Every runtime error message the VM raises with a literal text, `fault(ip, "...")` in vm/, must
appear in docs/errors.md (its literal start, up to the first value spliced in), so that a new or
changed message cannot go undocumented. Internal guards that no checked program can reach are
listed in INTERNAL."""
import os
import re
import sys

# Messages that only a broken compiler could produce (the checker rules them out).
INTERNAL = {
    "bad instruction",
    "bad list instruction",
    "bad stored-list instruction",
    "bad slice instruction",
    "stored lists change only inside events",
}

FAULT = re.compile(r'fault\(ip,\s*"((?:[^"\\]|\\.)*)"')


def literal_start(raw):
    """The C++ literal's text, unescaped; a message that goes on with `+ value` is cut there."""
    return bytes(raw, "utf-8").decode("unicode_escape")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    # a message may be wrapped across lines of the Markdown source
    errors_md = " ".join(open(os.path.join(root, "docs", "errors.md"), encoding="utf-8").read().split())
    vm = os.path.join(root, "vm")
    missing, count = [], 0
    for name in sorted(os.listdir(vm)):
        if not name.endswith((".cpp", ".h")):
            continue
        text = open(os.path.join(vm, name), encoding="utf-8").read()
        for m in FAULT.finditer(text):
            message = literal_start(m.group(1))
            if message in INTERNAL or len(message.strip()) < 4:
                continue
            count += 1
            if " ".join(message.split()) not in errors_md:
                line = text[:m.start()].count("\n") + 1
                missing.append(f"vm/{name}:{line}: {message!r}")
    print(f"check_messages: {count} runtime messages from vm/, {len(missing)} missing from docs/errors.md")
    for m in missing:
        print("  missing: " + m)
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
