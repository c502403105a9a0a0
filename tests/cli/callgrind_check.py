#!/usr/bin/env python3
"""callgrind_annotate's reading of tach2callgrind's output against the samples themselves.

usage: callgrind_check.py SAMPLES.txt CALLGRIND.out [[!]SAMPLES.txt CALLGRIND.out]...

SAMPLES.txt is `tach-decode --format samples` of the same input (a line per sample or per
record "TID IID TIMESTAMP_US STATUS[ TIME_NS[ WEIGHT]]", frames innermost first). For each
pair, callgrind_annotate (run from /, so that it shortens no path) must show, for the event
Samples and, where the samples carry time, for Time_ns (each record's TIME_NS, else the
interval's):
- PROGRAM TOTALS: the samples' total, those with an empty stack included;
- per function (file:name, as callgrind_annotate names them; "???:name [OBJECT]", a native
  frame without a source file, as OBJECT:name, the binary the samples name): the self cost,
  of the samples whose innermost frame it is, and with --inclusive=yes the inclusive cost,
  of the samples with the function anywhere on the stack, once however often it recurs; the
  samples with an empty stack are the self and inclusive cost of "???:(no stack)".
Functions the samples give no cost may be listed with 0 or not at all; "(root)" (the
writer's caller of outermost frames, see tach2callgrind(1)) is left out of the comparison
but must then have the total of the samples with a stack as its inclusive cost.

A pair whose SAMPLES.txt is written !SAMPLES.txt must disagree (the check of the check, in
the same run). Exit 1 when a pair does not come out as expected.
"""
import re
import subprocess
import sys
from collections import Counter

ROW = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def unescape(s):
    out = re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), s)
    out = bytes(b if b >= 0x20 and b != 0x7F else 0x3F for b in out)
    return out or b"???"


NO_STACK = b"???:(no stack)"


def expected(path, event):
    """The total, the self and inclusive costs of event (Samples or Time_ns), and the
    total of the samples with an empty stack."""
    total, empty, self_, incl = 0, 0, Counter(), Counter()
    interval, timed = 0, None
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if line.startswith(b"@interval_us "):
                interval = int(line.split()[1])
            if line.startswith(b"@sample_time "):
                timed = line.split()[1] == b"1"
            if not line or line[:1] in (b"@", b"#"):
                continue
            head, _, stack = line.partition(b"\t")
            fields = [int(x) for x in head.split()]
            weight = fields[5] if len(fields) > 5 else 1
            time = fields[4] if len(fields) > 4 else weight * interval * 1000
            cost = weight if event == "Samples" else time
            total += cost
            if not stack:
                empty += cost
                self_[NO_STACK] += cost
                incl[NO_STACK] += cost
                continue
            names = []
            for frame in stack.split(b";"):
                parts = frame.split(b":")
                names.append(unescape(parts[0]) + b":" + unescape(parts[1]))
            self_[names[0]] += cost
            for n in set(names):
                incl[n] += cost
    if timed is None:
        timed = interval != 0
    return total, empty, self_, incl, timed


def annotate(path, inclusive, objects, event):
    """PROGRAM TOTALS and the function table of event (its rows up to the blank line after
    it; the source annotations that follow have rows of the same shape)."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--show=" + event,
                          "--sort=" + event,
                          "--inclusive=" + ("yes" if inclusive else "no"), path],
                         cwd="/", check=True, capture_output=True).stdout
    total, costs, in_table = None, Counter(), False
    for raw in out.split(b"\n"):
        if raw.endswith(b"file:function"):
            in_table = True
            continue
        if in_table and not raw.strip():
            break
        m = ROW.match(raw.decode("latin-1"))
        if not m:
            continue
        cost = int(m.group(1).replace(",", ""))
        name = m.group(2).encode("latin-1")
        if name == b"PROGRAM TOTALS":
            total = cost
            continue
        for ob in objects:
            if name.endswith(b" [" + ob + b"]"):
                name = name[:-len(ob) - 3]
                # a native frame with no source file: the samples name it by its binary,
                # callgrind by its object and file "???" (tach2callgrind(1))
                if name.startswith(b"???:") and name != b"???:(root)":
                    name = ob + name[3:]
                break
        costs[name] += cost
    return total, costs


def compare(label, want, got, errors):
    for name in sorted(set(want) | set(got)):
        if want[name] != got[name]:
            errors.append(f"{label}: {name.decode('latin-1')}: samples say {want[name]}, "
                          f"callgrind_annotate {got[name]}")


def check_event(samples, cg, event, objects, errors, show=None):
    total, empty, self_, incl, timed = expected(samples, event)
    if event != "Samples" and not timed:
        return total
    for inclusive, want in ((False, self_), (True, incl)):
        got_total, got = annotate(cg, inclusive, objects, show or event)
        kind = "inclusive" if inclusive else "self"
        if got_total != total:
            errors.append(f"{cg}: {event}: PROGRAM TOTALS {got_total}, samples {total}")
        root = got.pop(b"???:(root)", None)
        if root is not None and inclusive and root != total - empty:
            errors.append(f"{cg}: {event}: (root) inclusive {root}, samples {total - empty}")
        compare(f"{cg} {kind} {event}", want, got, errors)
    return total


def check(samples, cg):
    errors = []
    with open(cg, "rb") as f:
        text = f.read()
    objects = {m.group(1) for m in re.finditer(rb"^c?ob=\(\d+\) (.*)$", text, re.M)}
    # the count's event: Samples, or the input's own count type where it names one (a JFR
    # recording's "samples")
    first = re.search(rb"^events: (\S+)", text, re.M)
    show = "Samples"
    if first and not re.search(rb"^events: .*\bSamples\b", text, re.M) and \
            first.group(1) == b"samples":
        show = "samples"
    total = check_event(samples, cg, "Samples", objects, errors, show)
    _, _, _, _, timed = expected(samples, "Time_ns")
    if timed and not re.search(rb"^events: .*\bTime_ns\b", text, re.M):
        errors.append(f"{cg}: the samples carry time, but there is no event Time_ns")
    else:
        check_event(samples, cg, "Time_ns", objects, errors)
    return total, errors


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    failed = False
    for samples, cg in zip(args[::2], args[1::2]):
        must_fail = samples.startswith("!")
        total, errors = check(samples.lstrip("!"), cg)
        if must_fail:
            print(f"{cg}: {total} samples, {'disagrees as it must' if errors else 'FAIL: agrees'}")
            failed |= not errors
            continue
        for e in errors[:20]:
            print(e)
        failed |= bool(errors)
        print(f"{cg}: {total} samples, {'FAIL' if errors else 'ok'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
