#!/usr/bin/env python3
"""Writes a folded-stack file shaped like perf's (stackcollapse-perf.pl) for the tach-diff
benchmark: short native names, a process name at the root, depth 4-24, many distinct
stacks sharing their roots, counts 1-40.

usage: gen_diff_folded.py MEGABYTES SEED > out.folded

Two seeds give two profiles of one program: the same names, the stacks drawn afresh, so
most stacks are in both and many in one only. Deterministic for a given SEED.
"""
import random
import sys


def main():
    mb, seed = int(sys.argv[1]), int(sys.argv[2])
    names = random.Random(0)
    funcs = ["%s_%s" % (names.choice(["do", "__x64", "vfs", "ksys", "tcp", "ext4", "memcpy",
                                       "std::vector<int>::push_back", "malloc", "main"]), i)
             for i in range(3000)]
    rng = random.Random(seed)
    base = ["app;" + ";".join(rng.choice(funcs[:200]) for _ in range(rng.randint(2, 6)))
            for _ in range(3000)]
    out = sys.stdout
    size, want, buf = 0, mb * 1000 * 1000, []
    while size < want:
        stack = rng.choice(base) + ";" + ";".join(
            rng.choice(funcs) for _ in range(rng.randint(2, 18)))
        line = "%s %d\n" % (stack, rng.choice((1, 1, 1, 2, 3, 5, 40)))
        buf.append(line)
        size += len(line)
        if len(buf) >= 4096:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


if __name__ == "__main__":
    main()
