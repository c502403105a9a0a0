#!/usr/bin/env python3
"""Fails when a C function in the given trees is longer than the limit (default 80 lines).

usage: func_length.py [--max N] DIR...

How it finds a function: the tree's style puts a function definition's opening brace alone
at column 0 ("{"), and its closing brace alone at column 0 ("}"); nothing else in the code
does (struct, enum and initializer braces close with "};" or sit after other text). The
definition starts at the first line of its signature: walking back from the "{" over the
lines that belong to it (the name line and continuation lines of its parameters) to the
line that starts at column 0 with neither "}", "#", a comment nor a blank. A function's
length is from that line to its closing brace, both included.
"""
import os
import sys


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        # the signature: back to a line at column 0 that is not a continuation
        start = i - 1
        while start > 0 and (lines[start][:1] in ("\t", " ") or lines[start] == ""):
            start -= 1
        name = lines[start]
        end = i + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        yield start + 1, end - start + 1, name.strip()
        i = end + 1


def main(argv):
    limit = 80
    if len(argv) > 2 and argv[1] == "--max":
        limit = int(argv[2])
        argv = argv[2:]
    bad = 0
    seen = 0
    for top in argv[1:]:
        for root, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, fn)
                for line, length, sig in functions(path):
                    seen += 1
                    if length > limit:
                        print("%s:%d: %d lines (limit %d): %s" % (path, line, length, limit, sig))
                        bad += 1
    print("%d functions checked, %d over %d lines" % (seen, bad, limit))
    return 1 if bad or not seen else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
