#!/usr/bin/env python3
"""difffolded.pl's rules, written again from its behaviour, for checking tach-diff
without perl's script:

    difffolded_rules.py [-n] [-s] FOLDED1 FOLDED2
    difffolded_rules.py --check LIST

Each line (its LF removed) matching ^(.*)\\s+?(\\d+(?:\\.\\d*)?)$ adds COUNT to STACK's
column (1 or 2); a line that does not match adds nothing to the empty stack (the script's
hash still gets that key). -s first writes every 0x[0-9a-fA-F]+ in STACK as "0x..."; -n,
when the totals differ, makes column 1 int(count1 * total2 / total1). Output: "STACK
COUNT1 COUNT2", sorted by bytes (the script prints in hash order; tach-diff sorts).

--check LIST: each line of LIST is "OPTS<TAB>FOLDED1<TAB>FOLDED2<TAB>GOT"; every GOT must
be the rules' output for its inputs, or the differences are printed and the exit is 1.
One interpreter for many pairs.
"""
import re
import sys

LINE = re.compile(rb"^(.*)\s+?(\d+(?:\.\d*)?)$", re.S)


UV_MAX = 2**64 - 1


def number(text):
    # perl: a whole number up to 2^64 - 1 exactly, anything else a double
    if b"." in text or int(text) > UV_MAX:
        return float(text)
    return int(text)


def whole(x):
    # perl does integer arithmetic on a double that is whole and below 2^53
    if isinstance(x, float) and 0 <= x < 2.0**53 and x == int(x):
        return int(x)
    return x


def add(a, b):
    a, b = whole(a), whole(b)
    if isinstance(a, int) and isinstance(b, int) and a + b <= UV_MAX:
        return a + b
    return float(a) + float(b)


def differ(a, b):
    # perl's != : whole numbers exactly, otherwise as doubles
    a, b = whole(a), whole(b)
    if isinstance(a, int) and isinstance(b, int):
        return a != b
    return float(a) != float(b)


def scale(c, t2, t1):
    """int(c * t2 / t1) as perl computes it."""
    c, t2, t1 = whole(c), whole(t2), whole(t1)
    if isinstance(c, int) and isinstance(t2, int) and c * t2 <= UV_MAX:
        p = c * t2
        if isinstance(t1, int) and p >= t1 and p % t1 == 0:
            return p // t1
    else:
        p = float(c) * float(t2)
    q = float(p) / float(t1)
    return int(q) if q < 2.0**64 else float(int(q))


def read(path, strip):
    """The stacks' counts and the total, both added line by line as perl adds them."""
    counts, total = {}, 0
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        m = LINE.match(line)
        stack, count = (m.group(1), number(m.group(2))) if m else (b"", 0)
        if strip:
            stack = re.sub(rb"0x[0-9a-fA-F]+", b"0x...", stack)
        counts[stack] = add(counts.get(stack, 0), count)
        total = add(total, count)
    return counts, total


def fmt(x):
    if isinstance(x, float) and x == float("inf"):
        return b"Inf"
    if isinstance(x, float):
        return b"%.15g" % x
    return b"%d" % x


def diff(opts, a_path, b_path):
    (a, t1), (b, t2) = read(a_path, "-s" in opts), read(b_path, "-s" in opts)
    out = []
    for stack in sorted(set(a) | set(b)):
        c1, c2 = a.get(stack, 0), b.get(stack, 0)
        if "-n" in opts and differ(t1, t2) and t1:
            c1 = scale(c1, t2, t1)
        out.append(b"%s %s %s\n" % (stack, fmt(c1), fmt(c2)))
    return b"".join(out)


def check(list_path):
    bad = 0
    with open(list_path) as f:
        for row in f:
            opts, a, b, got = row.rstrip("\n").split("\t")
            want = diff(opts.split(), a, b)
            with open(got, "rb") as g:
                if g.read() != want:
                    print("differs: %s %s %s" % (opts, a, b))
                    bad = 1
    return bad


def main(argv):
    if argv[:1] == ["--check"]:
        sys.exit(check(argv[1]))
    opts = [a for a in argv if a in ("-n", "-s")]
    files = [a for a in argv if a not in ("-n", "-s")]
    sys.stdout.buffer.write(diff(opts, files[0], files[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
