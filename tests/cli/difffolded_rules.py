#!/usr/bin/env python3
"""difffolded.pl's rules, written again from its documented behaviour, for checking
tach-diff without perl's script:

    difffolded_rules.py [-n] [-s] FOLDED1 FOLDED2

Each line "STACK COUNT" adds COUNT to STACK's column (1 or 2); -s first writes every
0x[0-9a-fA-F]+ in STACK as "0x..."; -n, when the totals differ, makes column 1
int(count1 * total2 / total1). Output: "STACK COUNT1 COUNT2", sorted by bytes (the script
prints in hash order; tach-diff sorts).
"""
import re
import sys


def read(path, strip):
    counts = {}
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            m = re.match(rb"^(.*)\s+?(\d+(?:\.\d*)?)$", line)
            if not m:
                continue
            stack = m.group(1)
            if strip:
                stack = re.sub(rb"0x[0-9a-fA-F]+", b"0x...", stack)
            counts[stack] = counts.get(stack, 0) + int(m.group(2))
    return counts


def main(argv):
    norm = "-n" in argv
    strip = "-s" in argv
    files = [a for a in argv if a not in ("-n", "-s")]
    a, b = read(files[0], strip), read(files[1], strip)
    t1, t2 = sum(a.values()), sum(b.values())
    out = sys.stdout.buffer
    for stack in sorted(set(a) | set(b)):
        c1, c2 = a.get(stack, 0), b.get(stack, 0)
        if norm and t1 != t2:
            c1 = int(c1 * t2 / t1)
        out.write(b"%s %d %d\n" % (stack, c1, c2))


if __name__ == "__main__":
    main(sys.argv[1:])
