#!/usr/bin/env python3
"""CPU time of the collapsed-stack collection as CPython's sampling profiler does it, next
to tach-decode's collapsed output on the same TACH file; prints both and their ratio.

    bench/cpython_collapsed.py FILE.tach [TACH_DECODE]

The samples come from `tach-decode --format samples` and are built, untimed, into what
CPython 3.15's replay hands its collector for each record: a list of interpreter entries,
each with thread entries (thread id, status, frames), each frame a (filename, location,
funcname, opcode) tuple whose location is (lineno, end_lineno, col, end_col). A run of the
same thread's identical samples is one call with a list of timestamps, as a REPEAT record
is. Timed: the collector's path for every call (iterate interpreters and threads, rebuild
the stack root first as (filename, lineno, funcname) tuples, count it with the run's weight
per (stack, thread) in a Counter), then its export (each frame as basename:func:line, lines
sorted by count descending then text, written). CPython's C reader that produces those
entries is left out, so the ratio understates CPython's cost. This reports; it never fails
on timing.
"""
import collections
import os
import subprocess
import sys
import tempfile
import time

Interpreter = collections.namedtuple("Interpreter", "interpreter_id threads")
Thread = collections.namedtuple("Thread", "thread_id status frame_info")


def parse(text_lines):
    """Samples text lines -> list of (interpreter list, timestamps) calls."""
    frames_seen = {}
    calls = []
    last_key = None
    for ln in text_lines:
        if not ln or ln[0] in "@#\n":
            continue
        head, _, stack = ln.rstrip("\n").partition("\t")
        tid, interp, ts, status = (int(x) for x in head.split(" ")[:4])
        key = (tid, interp, status, stack)
        if key == last_key:
            calls[-1][1].append(ts)
            continue
        last_key = key
        frames = []
        for fr in stack.split(";") if stack else ():
            f = frames_seen.get(fr)
            if f is None:
                f = frames_seen[fr] = frame_of(fr)
            frames.append(f)
        calls.append(([Interpreter(interp, [Thread(tid, status, frames)])], [ts]))
    return calls


def frame_of(text):
    """One samples-text frame -> (filename, location or None, funcname, opcode)."""
    if text.count(":") < 6:
        file, func, line = text.rsplit(":", 2)
        end, col, end_col, op = line, "-1", "-1", "-"
    else:
        file, func, line, end, col, end_col, op = text.rsplit(":", 6)
    num = lambda v: -1 if v == "-" else int(v)
    op = op.split("@", 1)[0]
    loc = None if line == "-" else (num(line), num(end), num(col), num(end_col))
    return (file, loc, func, None if op == "-" else int(op))


def lineno(location):
    return 0 if location is None else location[0]


class Collapsed:
    """The collapsed collector's per-call and export work, written for this bench."""

    def __init__(self):
        self.stack_counter = collections.Counter()
        self.skip_idle = False

    def stacks(self, interpreters):
        if interpreters and hasattr(interpreters[0], "awaited_by"):
            return
        for interp in interpreters:
            for thread in interp.threads:
                frames = thread.frame_info
                if frames:
                    yield frames, thread.thread_id

    def collect(self, interpreters, timestamps):
        weight = len(timestamps) if timestamps else 1
        for frames, tid in self.stacks(interpreters):
            tree = tuple((f[0], lineno(f[1]), f[2]) for f in reversed(frames))
            self.stack_counter[(tree, tid)] += weight

    def export(self, path):
        lines = []
        for (tree, tid), count in self.stack_counter.items():
            parts = [f"tid:{tid}"]
            for file, line, func in tree:
                parts.append(func if file == "~" and line == 0
                             else f"{os.path.basename(file)}:{func}:{line}")
            lines.append((";".join(parts), count))
        lines.sort(key=lambda x: (-x[1], x[0]))
        with open(path, "w") as f:
            for stack, count in lines:
                f.write(f"{stack} {count}\n")
        return len(lines)


def collect_and_export(calls, out_path):
    c = Collapsed()
    for interpreters, timestamps in calls:
        c.collect(interpreters, timestamps)
    return c.export(out_path)


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
    calls = parse(text)
    del text
    with tempfile.TemporaryDirectory() as d:
        t0 = time.process_time()
        nlines = collect_and_export(calls, os.path.join(d, "out.collapsed"))
        py = time.process_time() - t0
    c = cpu_of([decode, path])
    print(f"{os.path.basename(path)}: {len(calls)} collector calls, {nlines} distinct lines")
    print(f"  CPython-style collector + export  {py:8.3f} s CPU")
    print(f"  tach-decode (collapsed, whole run) {c:8.3f} s CPU")
    print(f"  ratio                              {py / max(c, 0.001):8.1f}x")


if __name__ == "__main__":
    main()
