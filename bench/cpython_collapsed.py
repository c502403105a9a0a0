#!/usr/bin/env python3
"""CPU time of the collapsed-stack collection as CPython's sampling profiler does it, next
to tach-decode's collapsed output on the same TACH file; prints both and their ratio.

    bench/cpython_collapsed.py FILE.tach [TACH_DECODE]

The samples come from `tach-decode --format samples` and are parsed into frame tuples
(file, line, func) first, as the profiler's unwinder hands them over; that part is not
timed. Timed: counting each (reversed stack, thread) in a Counter, then the export
(each frame as basename:func:line, lines sorted by count descending then text, written).
This reports; it never fails on timing.
"""
import collections
import os
import subprocess
import sys
import tempfile
import time


def parse(text_lines):
    """Samples text lines -> list of (frames innermost first, thread id)."""
    frames_seen = {}
    samples = []
    for ln in text_lines:
        if not ln or ln[0] in "@#\n":
            continue
        head, _, stack = ln.rstrip("\n").partition("\t")
        tid = int(head.split(" ", 1)[0])
        frames = []
        for fr in stack.split(";") if stack else ():
            f = frames_seen.get(fr)
            if f is None:
                parts = fr.rsplit(":", 6) if fr.count(":") >= 6 else fr.rsplit(":", 2)
                line = int(parts[2]) if parts[2].lstrip("-").isdigit() else 0
                f = frames_seen[fr] = (parts[0], line, parts[1])
            frames.append(f)
        samples.append((frames, tid))
    return samples


def collect_and_export(samples, out_path):
    counter = collections.Counter()
    for frames, tid in samples:
        if frames:
            counter[(tuple(reversed(frames)), tid)] += 1
    lines = []
    for (call_tree, tid), count in counter.items():
        parts = [f"tid:{tid}"]
        for file, line, func in call_tree:
            parts.append(func if file == "~" and line == 0
                         else f"{os.path.basename(file)}:{func}:{line}")
        lines.append((";".join(parts), count))
    lines.sort(key=lambda x: (-x[1], x[0]))
    with open(out_path, "w") as f:
        for stack, count in lines:
            f.write(f"{stack} {count}\n")
    return len(lines)


def cpu_of(cmd):
    """User + system CPU seconds of cmd (output discarded), the best of three runs."""
    best = None
    for _ in range(3):
        before = os.times()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        after = os.times()
        cpu = (after.children_user - before.children_user +
               after.children_system - before.children_system)
        best = cpu if best is None else min(best, cpu)
    return best


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: cpython_collapsed.py FILE.tach [TACH_DECODE]")
    path = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    decode = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.environ.get("BUILD_ROOT", os.path.join(here, "..", "build")), "cmd", "tach-decode")
    text = subprocess.run([decode, "--format", "samples", path], stdout=subprocess.PIPE,
                          check=True, text=True).stdout.splitlines()
    samples = parse(text)
    del text
    with tempfile.TemporaryDirectory() as d:
        t0 = time.process_time()
        nlines = collect_and_export(samples, os.path.join(d, "out.collapsed"))
        py = time.process_time() - t0
    c = cpu_of([decode, path])
    print(f"{os.path.basename(path)}: {len(samples)} samples, {nlines} distinct lines")
    print(f"  CPython-style collector + export  {py:8.3f} s CPU")
    print(f"  tach-decode (collapsed, whole run) {c:8.3f} s CPU")
    print(f"  ratio                              {py / max(c, 0.001):8.1f}x")


if __name__ == "__main__":
    main()
