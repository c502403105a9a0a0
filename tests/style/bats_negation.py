#!/usr/bin/env python3
"""Fails when a bats test negates a command with a bare '!' ('! grep -q x f').

bats runs tests under bash's set -e, which ignores a negated command's status: unless it
is the test's last command, '! cmd' never fails the test, whatever cmd does. Write
'! cmd || false' (or 'run ! cmd') instead.

usage: bats_negation.py DIR...   (its *.bats and *.bash files)
"""
import glob
import os
import re
import sys

BARE = re.compile(r"^\s*!\s")


def main():
    bad = 0
    paths = [p for d in sys.argv[1:] for ext in ("bats", "bash")
             for p in sorted(glob.glob(os.path.join(d, "*." + ext)))]
    if not paths:
        print("no bats files found")
        return 1
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if BARE.match(line) and "||" not in line:
                    print(f"{path}:{n}: a bare '!' cannot fail the test: {line.strip()}")
                    bad += 1
    if bad:
        print(f"{bad} bare negations; end each with '|| false'")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
