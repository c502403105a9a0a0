#!/usr/bin/env python3
"""Checks a tach2pstats file against stats computed here, independently, from the same
profile's `tach-decode --format samples` text, by the rules of CPython's sampling
PstatsCollector: key (file, line, func) with line 0 for no location; direct samples for the
innermost frame; cumulative once per sample per key; callers from each adjacent pair;
times = samples * interval / 1e6 where each sample is one interval (no TIME_NS in the
text), else the sum of the samples' own times (TIME_NS, ns) / 1e9; keys and callers in first-seen order; the
("__sampled__",): True marker last unless --no-marker.

usage: pstats_check.py SAMPLES_TEXT PSTATS_FILE [--no-marker]
Exit 0 when equal (times to 1e-9), 1 with the first difference otherwise."""
import marshal
import re
import sys

PCT = re.compile(rb"%([0-9A-Fa-f]{2})")


def unescape(b):
    return PCT.sub(lambda m: bytes([int(m.group(1), 16)]), b).decode("utf-8", "replace")


def parse(path):
    interval = 0
    samples = []
    with open(path, "rb") as f:
        for raw in f:
            line = raw.rstrip(b"\n")
            if not line or line.startswith(b"#"):
                continue
            if line.startswith(b"@"):
                k, _, v = line[1:].partition(b" ")
                if k == b"interval_us":
                    interval = int(v)
                continue
            head, _, frames = line.partition(b"\t")
            f = head.split(b" ")
            ns = int(f[4]) if len(f) > 4 else None  # None: one interval
            weight = int(f[5]) if len(f) > 5 else 1
            stack = []
            for fr in frames.split(b";") if frames else []:
                parts = fr.split(b":")
                lineno = 0 if parts[2] == b"-" else int(parts[2])
                stack.append((unescape(parts[0]), lineno, unescape(parts[1])))
            samples.append((stack, ns, weight))
    return interval, samples


def expected(interval, samples):
    direct, cum, callers, tdirect, tcum = {}, {}, {}, {}, {}
    plain = all(ns is None for _, ns, _ in samples)
    for stack, ns, n in samples:
        if not stack:
            continue
        ns = interval * 1000 * n if ns is None else ns
        seen = set()
        for key in stack:
            if key not in seen:
                seen.add(key)
                cum[key] = cum.get(key, 0) + n
                tcum[key] = tcum.get(key, 0) + ns
        direct[stack[0]] = direct.get(stack[0], 0) + n
        tdirect[stack[0]] = tdirect.get(stack[0], 0) + ns
        for callee, caller in zip(stack, stack[1:]):
            c = callers.setdefault(callee, {})
            c[caller] = c.get(caller, 0) + n
    sec = interval / 1_000_000
    out = {}
    for key, n in cum.items():
        d = direct.get(key, 0)
        if plain:
            out[key] = (d, n, d * sec, n * sec, callers.get(key, {}))
        else:
            out[key] = (d, n, tdirect.get(key, 0) / 1e9, tcum[key] / 1e9, callers.get(key, {}))
    return out


def check(samples_path, pstats_path, marker=True):
    """0 when the file holds the stats the samples give, else 1 (the difference printed)."""
    interval, samples = parse(samples_path)
    with open(pstats_path, "rb") as f:
        got = marshal.load(f)
    want = expected(interval, samples)
    if marker:
        want[("__sampled__",)] = True
    gk, wk = list(got), list(want)
    if gk != wk:
        print(f"keys differ:\n got  {gk[:20]}\n want {wk[:20]}")
        return 1
    for key in wk:
        g, w = got[key], want[key]
        if w is True:
            if g is not True:
                print(f"{key}: {g!r}, want True")
                return 1
            continue
        same = (g[0], g[1]) == (w[0], w[1]) and abs(g[2] - w[2]) <= 1e-9 and \
            abs(g[3] - w[3]) <= 1e-9 and list(g[4].items()) == list(w[4].items())
        if not same:
            print(f"{key}:\n got  {g!r}\n want {w!r}")
            return 1
    print(f"ok: {len(wk)} keys, {len(samples)} samples")
    return 0


def main():
    return check(sys.argv[1], sys.argv[2], "--no-marker" not in sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
