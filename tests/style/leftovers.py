#!/usr/bin/env python3
"""Fails when git tracks what a fuzzer or a test run leaves behind.

libFuzzer writes crash-*, slow-unit-*, leak-*, timeout-* and oom-* files into the directory
it runs in; a crash worth keeping belongs in a corpus under tests/fuzz/corpus/, where it
replays in every test run. Captures and profiles made by hand at the root (*.tach, *.data,
*.jfr) are scratch. .gitignore keeps them out of `git add .`; this catches `git add -f` and
files added before the ignore rules.

usage: leftovers.py ROOT            (the files git tracks in ROOT; exit 77 when ROOT is not
                                     a git checkout, as in a release tarball)
       leftovers.py --list FILE     (the paths in FILE or - for stdin, one a line: the
                                     check's own test)
"""
import os
import re
import subprocess
import sys

FUZZ = re.compile(r"(^|/)(crash|slow-unit|leak|timeout|oom)-[^/]*$")
ROOT_SCRATCH = re.compile(r"^[^/]+\.(tach|data|jfr)$")
CORPUS = "tests/fuzz/corpus/"


def tracked(root):
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--list":
        f = sys.stdin if sys.argv[2] == "-" else open(sys.argv[2], encoding="utf-8")
        paths = [l.rstrip("\n") for l in f if l.strip()]
    elif len(sys.argv) == 2:
        paths = tracked(sys.argv[1])
        if paths is None:
            print(f"{sys.argv[1]} is not a git checkout: nothing to check")
            return 77
    else:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    bad = [p for p in paths
           if (FUZZ.search(p) and not p.startswith(CORPUS)) or ROOT_SCRATCH.match(p)]
    for p in bad:
        print(f"{p}: a fuzzing or scratch leftover is tracked (git rm --cached it; crashes "
              f"worth keeping go in {CORPUS}<target>/)")
    if not bad:
        print(f"{len(paths)} tracked files, no leftovers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
