#!/usr/bin/env python3
"""What inferno's collapsers make of text reports of call trees, to check our readers.

    textfmt_fold.py macsample FILE [--raw]   inferno's sample collapser (collapse/sample.rs)
    textfmt_fold.py vtune FILE       inferno's vtune collapser (collapse/vtune.rs): ms
    textfmt_fold.py vsprof FILE      inferno's vsprof collapser (collapse/vsprof.rs): calls
    textfmt_fold.py instruments FILE [--self-column]
                                  speedscope's deep copy importer (import/instruments.ts):
                                  each stack's time in ms (or bytes) from the call tree's
                                  totals; --self-column: Instruments' own "Self" column;
                                  --exact: the values' decimals kept, in µs or bytes

Prints "stack count" lines, root first, the counts of equal stacks summed, sorted; --raw
prints the collapser's lines as it writes them, one per leaf, in file order; --last-wins
keeps of equal stacks the last line's count (what the peers' expected files hold, made by
a step that did not sum repeated lines), sorted. Written from
the collapsers' rules, not from our C code."""
import re
import sys
from collections import Counter
from decimal import Decimal
from fractions import Fraction

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


def vtune(path):
    lines = open(path, encoding="utf-8-sig").read().split("\n")
    start = next(i for i, l in enumerate(lines)
                 if l.startswith("Function Stack,CPU Time:Self,Module"))
    stack, out = [], []
    for line in lines[start + 1:]:
        line = line.rstrip()
        if not line:
            continue
        spaces = len(line) - len(line.lstrip(" "))
        assert spaces <= len(stack), line
        del stack[spaces:]
        body = line[spaces:]
        func, rest = body[1:].split('",', 1) if body.startswith('"') else body.split(",", 1)
        time, module = rest.split(",", 1)
        stack.append(f"{module}`{func}" if module else func)
        ms = int(Decimal(time) * 1000 + Decimal("0.5"))  # f64 round: half away from 0
        if ms > 0:
            out.append((";".join(stack), ms))
    return out


def vsprof_number(rest):
    """get_next_number: a leading ',' dropped, a number (quoted with thousands commas)."""
    rest = rest[1:] if rest.startswith(",") else rest
    if rest.startswith('"'):
        num, rest = rest[1:].split('"', 1)
        rest = rest[1:] if rest.startswith(",") else rest
    else:
        num, rest = rest.split(",", 1)
    return int(num.replace(",", "")), rest


def vsprof(path):
    lines = open(path, encoding="utf-8-sig").read().split("\n")
    stack, out = [], []

    def write():
        if stack and stack[-1][1] > 0:
            out.append((";".join(f for f, _ in stack), stack[-1][1]))

    for line in lines[1:]:
        line = line.rstrip()
        if not line:
            continue
        depth, rest = vsprof_number(line)
        name, rest = rest[1:].split('"', 1)
        calls, _ = vsprof_number(rest)
        if len(stack) == depth:
            write()
            stack[-1:] = []
        elif len(stack) > depth:
            prev = 0
            for _ in range(len(stack) - depth + 1):
                if prev != stack[-1][1]:
                    write()
                prev = stack.pop()[1]
                if not stack:
                    break
                if prev < stack[-1][1]:
                    stack[-1] = (stack[-1][0], stack[-1][1] - prev)
        stack.append((name, calls))
    write()
    return out


def deep_copy_value(row, exact):
    """getWeight: the whole number before the unit, in ms or bytes; 0 when not a value.
    exact: the number with its decimals, in µs or bytes (what tachfmt reads; speedscope's
    parseInt drops the decimals)."""
    if "Bytes Used" in row:
        m = re.search(r"\s*(\d+(?:[.]\d+)?) (\w+)\s+(?:\d+(?:[.]\d+))%", row["Bytes Used"])
        mul = {"Bytes": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
    else:
        m = re.search(r"\s*(\d+(?:[.]\d+)?) ?(\w+)\s+(?:\d+(?:[.]\d+))%",
                      row.get("Weight") or row.get("Running Time") or "")
        mul = {"ms": 1, "s": 1000}  # (speedscope takes min as 1000 too: not in our files)
    if not m:
        return 0
    if exact:
        unit = 1 if "Bytes Used" in row else 1000
        return int(Fraction(m.group(1)) * mul[m.group(2)] * unit)
    return int(m.group(1).split(".")[0]) * mul[m.group(2)]


def instruments(path, self_column=False, exact=False):
    lines = open(path, encoding="utf-8").read().split("\n")
    head = lines[0].rstrip("\r").split("\t")
    rows = [dict(zip(head, l.rstrip("\r").split("\t"))) for l in lines[1:]]
    # speedscope's call tree builder: a node enters at the running value, ends at it plus
    # its total, and leaving moves the running value to the latest end; a stack's time
    # is the time it is the top of the builder's stack
    stack, now, mark, out, own = [], 0, 0, [], []

    def top_until(t):
        nonlocal mark
        if stack and t > mark:
            out.append((";".join(f for f, _ in stack), t - mark))
        mark = max(mark, t)

    for row in rows:
        name = row.get("Symbol Name")
        if not name or not name.strip():
            continue
        depth = len(name) - len(name.strip())
        assert depth <= len(stack), name
        while len(stack) > depth:
            now = max(now, stack[-1][1])
            top_until(now)
            stack.pop()
        top_until(now)
        if self_column:
            self_ms = int(row[next(k for k in head if k.startswith("Self"))])
            if self_ms:
                own.append((";".join([f for f, _ in stack] + [name.strip()]), self_ms))
        stack.append((name.strip(), now + deep_copy_value(row, exact)))
    while stack:
        now = max(now, stack[-1][1])
        top_until(now)
        stack.pop()
    return own if self_column else out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "instruments":
        lines = instruments(path, "--self-column" in sys.argv[3:], "--exact" in sys.argv[3:])
    else:
        lines = {"macsample": sample, "vtune": vtune, "vsprof": vsprof}[kind](path)
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
