#!/usr/bin/env python3
"""What the collapsers make of a DTrace aggregation or a bpftrace map, to check our readers.

    dtrace_fold.py dtrace FILE     inferno's dtrace collapser (collapse/dtrace.rs) rules
    dtrace_fold.py bpftrace FILE   stackcollapse-bpftrace.pl's rules

Prints "stack count" lines, root first, the counts of equal stacks summed, sorted. Written
from the collapsers' rules (regexes and string steps), not from our C code."""
import re
import sys
from collections import Counter

ESC = {"$SP$": "@", "$BP$": "*", "$RF$": "&", "$LT$": "<", "$GT$": ">", "$LP$": "(",
       "$RP$": ")", "$C$": ",", "$u7e$": "~", "$u20$": " ", "$u27$": "'", "$u3d$": "=",
       "$u5b$": "[", "$u5d$": "]", "$u7b$": "{", "$u7d$": "}", "$u3b$": ";", "$u2b$": "+",
       "$u21$": "!", "$u22$": '"'}


def fix_rust(sym):
    """common.rs fix_partially_demangled_rust_symbol: None when there is no hash."""
    if not re.search(r"h[0-9a-fA-F]{16}$", sym):
        return None
    rest = sym[:-17]
    if rest.endswith("::"):
        rest = rest[:-2]
    if rest.startswith("_$"):
        rest = rest[1:]
    out = ""
    while rest:
        if rest.startswith(".."):
            out, rest = out + "::", rest[2:]
        elif rest.startswith("."):
            out, rest = out + ".", rest[1:]
        elif rest.startswith("$"):
            for k, v in ESC.items():
                if rest.startswith(k):
                    out, rest = out + v, rest[len(k):]
                    break
            else:
                out, rest = out + rest, ""
        else:
            m = re.match(r"[^$.]+", rest)
            out, rest = out + m.group(0), rest[m.end():]
    return out


def dtrace_frames(line):
    """One trimmed stack line as its frames, outermost first."""
    inl, cpp, semi = "->" in line, "::" in line, ";" in line
    frame = line[:line.rfind("+")] if "+" in line else line
    if cpp:
        i = frame.find("::")
        m = max(frame.rfind("(", i + 2), frame.rfind("<", i + 2))
        if m >= 0:
            frame = frame[:m]
    if not frame:
        frame = "-"
    elif "`" in frame:
        mod, func = frame.split("`", 1)
        fixed = fix_rust(func.rstrip())
        if fixed is not None:
            frame = mod + "`" + fixed
    if inl:
        parts = [p.lstrip("L") for p in frame.split("->")]
        parts = [p.replace(";", ":") if semi else p for p in parts]
        return [p + ("_[i]" if i else "") for i, p in enumerate(parts)]
    return [frame.replace(";", ":")]


def dtrace(text):
    counts = Counter()
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i].strip():
        i += 1
    stack = []
    for line in lines[i + 1:]:
        line = line.strip()
        if not line:
            continue
        if re.fullmatch(r"\+?[0-9]+", line):
            counts[";".join(stack)] += int(line)
            stack = []
        else:
            stack = dtrace_frames(line) + stack
    return counts


def bpftrace(text):
    counts = Counter()
    stack, in_stack = [], False
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not in_stack:
            if line == "@[":
                in_stack = True
            else:
                m = re.match(r"@\[,\s(.*)\]: (\d+)", line)
                if m:
                    counts[m.group(1)] += int(m.group(2))
            continue
        m = re.match(r",?\s?(.*)\]: (\d+)", line)
        if m:
            if m.group(1):
                stack.append(m.group(1))
            counts[";".join(reversed(stack))] += int(m.group(2))
            stack, in_stack = [], False
        else:
            line = re.sub(r"^\s+", "", line)
            if line:
                stack.append(line)
    return counts


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        counts = (dtrace if kind == "dtrace" else bpftrace)(f.read())
    for stack, n in sorted(counts.items()):
        if stack:
            print(f"{stack} {n}")


if __name__ == "__main__":
    main()
