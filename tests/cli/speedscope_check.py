#!/usr/bin/env python3
"""Checks a tach2speedscope file: its JSON against the file format's rules (sampled
profiles, frame indices in range, weights and samples of one length, endValue the sum of
the weights, no two consecutive identical stacks, frames interned once), what speedscope's
own importer made of it (speedscope_import.mjs output: the same totals and sample counts),
and that importer's stacks per thread id against tach-decode's collapsed output of the same
input, with weights divided by the interval (µs, or a fraction of one such as 0.001 to compare
nanoseconds; 0: weights are sample counts), to a relative 1e-9 (weights of fractional µs
add up in floating point).

usage: speedscope_check.py FILE.json IMPORTED.txt COLLAPSED.txt INTERVAL_US
       speedscope_check.py --list LIST: the same for each line of LIST, four fields
       separated by spaces, every file checked and each difference named by its FILE.json
Exit 0 when everything agrees, 1 with the first difference (of each file)."""
import collections
import json
import re
import sys


def fail(msg):
    print(msg)
    sys.exit(1)


def check_file(doc, interval):
    if doc.get("$schema") != "https://www.speedscope.app/file-format-schema.json":
        fail("no speedscope $schema")
    if not doc.get("exporter", "").startswith("tachfmt@"):
        fail(f"exporter {doc.get('exporter')!r}")
    frames = doc["shared"]["frames"]
    keys = [json.dumps(f, sort_keys=True) for f in frames]
    if len(set(keys)) != len(keys):
        fail("a frame is written twice")
    unit = "microseconds" if interval else "none"
    for p in doc["profiles"]:
        if p["type"] != "sampled" or p["unit"] != unit or p["startValue"] != 0:
            fail(f"profile {p['name']}: type {p['type']}, unit {p['unit']}, start {p['startValue']}")
        if len(p["samples"]) != len(p["weights"]):
            fail(f"profile {p['name']}: {len(p['samples'])} samples, {len(p['weights'])} weights")
        # a sample may stand for no time (two V8 samples in one us): weight 0
        if not close(sum(p["weights"]), p["endValue"]) or any(w < 0 for w in p["weights"]):
            fail(f"profile {p['name']}: endValue {p['endValue']}, weights sum {sum(p['weights'])}")
        for a, b in zip(p["samples"], p["samples"][1:]):
            if a == b:
                fail(f"profile {p['name']}: consecutive identical stacks not merged")
        for s in p["samples"]:
            if not s or any(not (0 <= i < len(frames)) for i in s):
                fail(f"profile {p['name']}: bad stack {s}")


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1)


def check(path, imported, collapsed, interval):
    interval = float(interval)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    check_file(doc, interval)
    div = interval or 1
    heads = {}
    got = collections.Counter()
    with open(imported, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#\t"):
                _, name, unit, total, n = line.split("\t")
                heads[name] = (unit, float(total), int(n))
                continue
            name, _, rest = line.partition("\t")
            stack, _, w = rest.rpartition(" ")
            tid = re.search(r"\(tid (\d+)", name)
            got[f"tid:{tid.group(1)};{stack}" if tid else stack] += float(w) / div
    for p in doc["profiles"]:
        unit, total, n = heads[p["name"]]
        # speedscope's importer leaves out the samples of weight 0
        if unit != p["unit"] or not close(total, p["endValue"]) or n != sum(w > 0 for w in p["weights"]):
            fail(f"{p['name']}: imported as {unit} {total} {n} samples; file says "
                 f"{p['unit']} {p['endValue']} {len(p['samples'])}")
    want = collections.Counter()
    with open(collapsed, encoding="utf-8") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            want[stack] += int(n)
    if set(got) != set(want) or any(not close(got[k], want[k]) for k in want):
        diff = sorted(set(got.items()) ^ set(want.items()))[:10]
        fail(f"stacks differ from tach-decode's (first few of either side): {diff}")
    print(f"ok: {len(doc['profiles'])} profiles, {len(want)} stacks")


def main():
    if sys.argv[1] != "--list":
        check(*sys.argv[1:5])
        return
    bad = 0
    with open(sys.argv[2], encoding="utf-8") as f:
        entries = [line.split() for line in f if line.strip()]
    for e in entries:
        try:
            check(*e)
        except SystemExit as x:
            bad += 1
            print(f"{e[0]}: the check above failed ({x.code})")
        except Exception as x:  # a file that does not even parse
            bad += 1
            print(f"{e[0]}: {type(x).__name__}: {x}")
    print(f"{len(entries) - bad} of {len(entries)} files agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
