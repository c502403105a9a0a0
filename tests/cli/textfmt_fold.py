#!/usr/bin/env python3
"""What inferno's collapsers make of text reports of call trees, to check our readers.

    textfmt_fold.py macsample FILE [--raw]   inferno's sample collapser (collapse/sample.rs)

Prints "stack count" lines, root first, the counts of equal stacks summed, sorted; --raw
prints the collapser's lines as it writes them, one per leaf, in file order; --last-wins
keeps of equal stacks the last line's count (what the peers' expected files hold, made by
a step that did not sum repeated lines), sorted. Written from
the collapsers' rules, not from our C code."""
import re
import sys
from collections import Counter

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from dtrace_fold import fix_rust  # noqa: E402  (inferno's one Rust fix for both)

WAITS = ("__psynch_cvwait", "__select", "__semwait_signal", "__ulock_wait", "__wait4",
         "__workq_kernreturn", "kevent", "mach_msg_trap", "read", "semaphore_wait_trap")


def sample_frame(rest):
    """The text after a node's count as inferno names it: module`func."""
    func = rest.split("(", 1)[0].rstrip()
    fixed = fix_rust(func)
    func = fixed if fixed is not None else func
    module = ""
    if "(in " in rest:
        after = rest.rsplit("(in ", 1)[1]
        if ")" in after:
            module = after[:after.index(")")]
        if module.endswith(".dylib"):
            module = module[:-6]
    return f"{module}`{func}" if module else func


def sample(path):
    lines = open(path, encoding="utf-8", errors="surrogateescape").read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("Call graph:"))
    stack, count, out = [], 0, []

    def write():
        if stack and not stack[-1].endswith(WAITS):
            out.append((";".join(stack), count))

    for line in lines[start + 1:]:
        line = line.rstrip()
        if line.startswith("Total number in stack"):
            break
        if not line:
            continue
        assert line.startswith("    "), line
        body = line[4:]
        indent = len(body) - len(body.lstrip(" +|:!"))
        depth = indent // 2 + 1
        if depth <= len(stack):
            write()
            del stack[depth - 1:]
        n, rest = body[indent:].split(" ", 1)
        count = int(n)
        # a thread's line: its name alone (tachfmt's thread, the collapser's root frame)
        m = re.match(r"(Thread_\d+)(\s|$)", rest) if depth == 1 else None
        stack.append(m.group(1) if m else sample_frame(rest))
    write()
    return out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    lines = {"macsample": sample}[kind](path)
    if "--raw" in sys.argv[3:]:
        for s, c in lines:
            print(f"{s} {c}")
        return
    total = Counter()
    for s, c in lines:
        total[s] = c if "--last-wins" in sys.argv[3:] else total[s] + c
    for s in sorted(f"{s} {c}" for s, c in total.items()):
        print(s)


if __name__ == "__main__":
    main()
