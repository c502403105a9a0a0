#!/usr/bin/env python3
"""Compares tachfmt's samples of a JFR recording with the JDK's own reading of it.

usage: jfr_compare.py [--depth N] SAMPLES_TEXT PRINT_JSON [EVENT_TYPE...]
       jfr_compare.py --folded FOLDED PRINT_JSON [EVENT_TYPE...]

SAMPLES_TEXT is `tach-decode -F samples X.jfr`; PRINT_JSON is `jfr print --json X.jfr` (or
a .zst of it). The events of the listed types (default: jdk.ExecutionSample,
jdk.NativeMethodSample, profiler.WallClockSample) are compared one for one (a wall-clock
event of N samples is N samples), both sides in time order (`jfr print` sorts the events,
the reader gives them in file order): the timestamp in µs (the JDK's ns,
rounded down), the thread (its name, and one thread id per JDK thread and back), the
status its state gives, and the whole stack, frame for frame: the method as
class.method (a bare name for native code), the line (0: none), the bytecode index (our
column, where there is a line) and the frame type.
--depth N: the JSON was printed with --stack-depth N (jfr print's default is 5): only the
leaf N frames of each of our stacks are compared, with N frames present wherever the
JDK's stack has N.
--folded: FOLDED is `tach-decode X.jfr` (cpython labels, with --total where it applies),
compared with the events' values summed per thread and whole stack: one, or what jfrconv's
--total adds up (a wall-clock event's samples, an allocation's bytes, a lock's delay in
ns).
Prints what differs and exits 1, or prints how many samples agree.
"""
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from samples_text import unescape as unescape_bytes  # noqa: E402

DEFAULT = ["jdk.ExecutionSample", "jdk.NativeMethodSample", "profiler.WallClockSample"]


def unescape(s):
    return unescape_bytes(s).decode("utf-8", "replace")


def parse_frame(f):
    # FILE:FUNC:LINE:END_LINE:COL:END_COL:OPCODE, the column a Java frame's bytecode index
    parts = f.split(":")
    file, func, line = parts[0], parts[1], parts[2]
    col = parts[4] if len(parts) > 4 else "-"
    return (unescape(file), unescape(func), None if line == "-" else int(line),
            None if col in ("-", "-1") else int(col))


def read_samples(path):
    out = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("@") or line.startswith("#") or not line.strip():
            continue
        head, _, frames = line.rstrip("\n").partition("\t")
        fields = head.split()
        tid, _iid, ts, status = fields[:4]
        # TIME_NS and WEIGHT follow where a record stands for several samples of its own
        # time (a wall-clock event's samples and timeSpan)
        weight = int(fields[5]) if len(fields) > 5 else 1
        ns = int(fields[4]) if len(fields) > 4 else None
        stack = [parse_frame(f) for f in frames.split(";")] if frames else []
        name = None
        if stack and stack[-1][0] == "[comm]":
            name = stack.pop()[1]
        out.extend([(int(tid), name, int(ts), int(status), stack, ns)] * weight)
    return out


def iso_us(s):
    # "2026-12-01T19:14:17.731967800Z": nanoseconds, rounded down to µs
    date, frac = s.rstrip("Z").split(".") if "." in s else (s.rstrip("Z"), "0")
    t = datetime.datetime.strptime(date, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    ns = int(frac.ljust(9, "0")[:9])
    return int(t.timestamp()) * 1000000 + ns // 1000


def expect_frames(frames, kernel_types):
    out = []
    for fr in frames:
        m = fr.get("method") or {}
        ftype = fr.get("type") or "unknown"
        cls = ((m.get("type") or {}).get("name")) or ""
        name = m.get("name") or ""
        native = ftype in ("C++", "Kernel") or (ftype == "Native" and kernel_types)
        if not m:
            func = "unknown"
        elif native or not cls:
            func = name
        else:
            func = cls + ("." + name if name else "")
        if not func:
            func = "unknown"
        line = fr.get("lineNumber") or 0
        bci = fr.get("bytecodeIndex")
        out.append(("[" + ftype + "]", func, line if line > 0 else None,
                    bci if line > 0 and bci is not None and bci >= 0 else None))
    return out


PRIMS = {"B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "Z": "boolean",
         "F": "float", "D": "double"}


def java_class(name):
    """A class as jfrconv shows an allocated one: dotted, arrays as NAME[]."""
    dims = len(name) - len(name.lstrip("["))
    e = name[dims:]
    if dims and e[:1] in PRIMS:
        e = PRIMS[e[:1]]
    elif dims and e.startswith("L") and len(e) >= 2:
        e = e[1:-1]
    return e.replace("/", ".") + "[]" * dims


# The class frame an event ends in, and its file: allocations and locks.
CLASS_FRAMES = {
    "jdk.ObjectAllocationInNewTLAB": ("objectClass", "[allocated class]"),
    "jdk.ObjectAllocationOutsideTLAB": ("objectClass", "[allocated outside TLAB]"),
    "jdk.ObjectAllocationSample": ("objectClass", "[allocated outside TLAB]"),
    "jdk.JavaMonitorEnter": ("monitorClass", "[lock class]"),
    "jdk.ThreadPark": ("parkedClass", "[lock class]"),
}


def duration_ns(s):
    m = re.fullmatch(r"(-?)PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d+))?S)?", s)
    if not m:
        raise ValueError(s)
    h, mi, sec = (int(m.group(i) or 0) for i in (2, 3, 4))
    frac = m.group(5) or ""
    ns = ((h * 60 + mi) * 60 + sec) * 1000000000 + int(frac.ljust(9, "0")[:9] or 0)
    return -ns if m.group(1) else ns


def event_value(e):
    """What jfrconv's --total adds up for the event (and tachfmt's option total)."""
    v = e["values"]
    t = e["type"]
    if t == "profiler.WallClockSample":
        return v.get("samples", 1)
    if t == "jdk.ObjectAllocationSample":
        return v.get("weight", 0)
    if t == "jdk.ObjectAllocationInNewTLAB" and v.get("tlabSize"):
        return v["tlabSize"]
    if t.startswith("jdk.ObjectAllocation"):
        return v.get("allocationSize", 0)
    if t in ("jdk.JavaMonitorEnter", "jdk.ThreadPark"):
        return duration_ns(v["duration"])
    return 1


def load_json(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True,
                              stdout=subprocess.PIPE).stdout
    else:
        data = open(path, "rb").read()
    return json.loads(data)["recording"]["events"]


def read_folded(path):
    """tid:N;[comm]:NAME:0;FILE:FUNC:LINE;... COUNT into {(name, frames leaf first): sum}."""
    out = {}
    for line in open(path, encoding="utf-8"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        parts = stack.split(";")
        name, frames = None, []
        for p in parts[1:]:
            file, _, rest = p.partition(":")
            func, _, ln = rest.rpartition(":")
            if file == "[comm]":
                name = func
            else:
                frames.append((file, func, int(ln) or None))
        key = (name, tuple(reversed(frames)))
        out[key] = out.get(key, 0) + int(count)
    return out


def folded_main(args):
    ours = read_folded(args[0])
    types = args[2:] or DEFAULT
    events = [e for e in load_json(args[1]) if e["type"] in types]
    kernel = any(fr.get("type") in ("Kernel", "C++")
                 for e in events for fr in ((e["values"].get("stackTrace") or {})
                                            .get("frames") or []))
    theirs = {}
    for e in events:
        v = e["values"]
        th = v.get("sampledThread") or v.get("eventThread") or {}
        frames = expect_frames((v.get("stackTrace") or {}).get("frames") or [], kernel)
        if e["type"] in CLASS_FRAMES:
            field, file = CLASS_FRAMES[e["type"]]
            cls = v.get(field)
            if cls is not None:
                frames = [(file, java_class(cls.get("name") or "null"), None, None)] + frames
        frames = [f[:3] for f in frames]  # folded lines have no bytecode index
        if not frames or not event_value(e):
            continue
        key = (th.get("javaName") or th.get("osName"), tuple(frames))
        theirs[key] = theirs.get(key, 0) + event_value(e)
    bad = [k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k)]
    for k in sorted(bad, key=str)[:10]:
        print(f"{k[0]} {k[1][:3]}...: {ours.get(k)}, the JDK's events {theirs.get(k)}")
    if bad:
        print(f"{len(bad)} stacks differ")
        return 1
    print(f"{len(ours)} stacks of {sum(ours.values())} equal the JDK's events' values")
    return 0


def main():
    args = sys.argv[1:]
    if args[0] == "--folded":
        return folded_main(args[1:])
    depth = None
    if args[0] == "--depth":
        depth = int(args[1])
        args = args[2:]
    samples = read_samples(args[0])
    types = args[2:] or DEFAULT
    events = [e for e in load_json(args[1]) if e["type"] in types]
    # async-profiler's recordings mark C code "Native" beside "Kernel" and "C++"
    kernel = any(fr.get("type") in ("Kernel", "C++")
                 for e in events for fr in ((e["values"].get("stackTrace") or {})
                                            .get("frames") or []))
    expected = []
    for e in events:
        v = e["values"]
        th = v.get("sampledThread") or v.get("eventThread") or {}
        name = th.get("javaName") or th.get("osName")
        state = v.get("state")
        status = 4 if state is None else 2 if state in ("STATE_RUNNABLE", "STATE_DEFAULT") else 0
        frames = expect_frames((v.get("stackTrace") or {}).get("frames") or [], kernel)
        if e["type"] in CLASS_FRAMES:
            field, file = CLASS_FRAMES[e["type"]]
            cls = v.get(field)
            if cls is not None:
                frames = [(file, java_class(cls.get("name") or "null"), None, None)] + frames
        key = (th.get("osThreadId"), th.get("javaThreadId"), name)
        n = v.get("samples", 1) if e["type"] == "profiler.WallClockSample" else 1
        # the time a CPU-time sample stands for: its samplingPeriod
        ns = duration_ns(v["samplingPeriod"]) if e["type"] == "jdk.CPUTimeSample" else None
        for _ in range(n):
            expected.append((key, name, iso_us(v["startTime"]), status, frames, ns))
    if depth is not None:
        samples = [s[:4] + (s[4][:depth],) + s[5:] for s in samples]
    order = lambda s: (s[2], s[1] or "", s[3], s[4])
    samples.sort(key=order)
    expected.sort(key=order)
    bad = 0
    if len(samples) != len(expected):
        print(f"{len(samples)} samples, the JDK reads {len(expected)}")
        bad += 1
    ours, theirs = {}, {}
    for i, (s, x) in enumerate(zip(samples, expected)):
        tid, name, ts, status, stack, ns = s
        key, xname, xts, xstatus, xframes, xns = x
        why = []
        if xns is not None and ns != xns:
            why.append(f"time {ns} ns, the JDK {xns}")
        if ours.setdefault(tid, key) != key or theirs.setdefault(key, tid) != tid:
            why.append(f"thread {tid} is not one JDK thread {key}")
        if name != xname:
            why.append(f"thread name {name!r}, the JDK {xname!r}")
        if ts != xts:
            why.append(f"timestamp {ts}, the JDK {xts}")
        if status != xstatus:
            why.append(f"status {status}, the JDK {xstatus}")
        if stack != xframes:
            for k in range(max(len(stack), len(xframes))):
                a = stack[k] if k < len(stack) else None
                b = xframes[k] if k < len(xframes) else None
                if a != b:
                    why.append(f"frame {k}: {a}, the JDK {b}")
                    break
        if why:
            bad += 1
            if bad <= 10:
                print(f"sample {i}: " + "; ".join(why))
    if bad:
        print(f"{bad} differences")
        return 1
    print(f"{len(samples)} samples equal the JDK's reading ({len(ours)} threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
