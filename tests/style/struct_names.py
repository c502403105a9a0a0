#!/usr/bin/env python3
"""Fails when two definitions in the library give a struct (or union) the same name.

usage: struct_names.py LIBDIR

Every .c and .h file under LIBDIR, comments and string literals left out: a definition is
`struct NAME {` (or union), wherever it stands: at the top of a file, after `typedef`, or
inside another struct or a function, its brace on the same line or the next. Two files that
each define `struct walk` compile, since each is private to its file, but a reader of one
meets the other's in a search, a debugger shows either, and one header that includes both
breaks: so each name says its module (`struct pprof_wstate`, `struct stacktab_pkey`).
A header's definition is one however many files include it.
"""
import os
import re
import sys

DEFINITION = re.compile(r"\b(struct|union)\s+([A-Za-z_]\w*)\s*\{")
# comments and literals, in one pass so that "/*" inside a string is not a comment
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def blank(m):
    """A comment or literal as spaces, its newlines kept so line numbers hold."""
    return re.sub(r"[^\n]", " ", m.group(0))


def definitions(libdir):
    found = {}
    for dirpath, dirs, files in os.walk(libdir):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = NOISE.sub(blank, f.read())
            rel = os.path.relpath(path, libdir)
            for m in DEFINITION.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                found.setdefault(m.group(2), []).append(f"{rel}:{line}")
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    found = definitions(sys.argv[1])
    twice = {k: v for k, v in sorted(found.items()) if len(v) > 1}
    for name, where in twice.items():
        print(f"struct {name} is defined {len(where)} times: {', '.join(where)}")
    if twice:
        return 1
    print(f"{len(found)} struct names in {sys.argv[1]}, each defined once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
