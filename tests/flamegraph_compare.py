#!/usr/bin/env python3
"""Compares tach2flamegraph's SVGs with flamegraph.pl's own (tests/fixtures/flamegraph).

For every case NAME there (NAME.input, NAME.args, NAME.svg.gz): the folded input goes
through collapsed2tach (frames kept as their folded text, differential counts as both
sides) into tach2flamegraph with the same options, and the two SVGs must have the same
frames as a multiset (title text, rect x/y/width/height within 0.01 px, and the fill when
flamegraph.pl's colours are deterministic: --hash or differential input), the same header
texts and the same image size. Every SVG must be well-formed XML (xmllint).

Each case is drawn three ways: through TACH (collapsed2tach | tach2flamegraph), directly
(CONVERT: the library's collapsed reader into its flamegraph writer), and by tach2flamegraph
given the folded file itself, as a flamegraph.pl user runs it (detected as folded stacks).
Stacks deeper than TACH keeps (256 frames, as CPython) are not compared through TACH.

usage: flamegraph_compare.py BUILD_CMD_DIR FIXTURE_DIR CONVERT
"""
import gzip
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def frames(root):
    box = root.find(f".//{NS}g[@id='frames']")
    out = []
    for g in box:
        title = g.find(f"{NS}title").text or ""
        r = g.find(f"{NS}rect")
        geo = tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
        out.append((title, geo, r.get("fill")))
    return out


def header(root):
    texts = {}
    for t in root.iter(f"{NS}text"):
        if t.get("id") in ("title", "subtitle", "details", "search", "unzoom", "ignorecase", "matched"):
            texts[t.get("id")] = (t.text or "", t.get("x"), t.get("y"))
    return (root.get("width"), root.get("height"), root.get("viewBox")), texts


def match(ours, theirs, fills):
    """Pairs frames by title and geometry; returns a list of problems."""
    problems = []
    pool = {}
    for f in theirs:
        pool.setdefault(f[0], []).append(f)
    for title, geo, fill in ours:
        cands = pool.get(title, [])
        hit = None
        for c in cands:
            if all(abs(a - b) <= 0.01 for a, b in zip(geo, c[1])):
                hit = c
                break
        if hit is None:
            problems.append(f"frame not in flamegraph.pl's: {title!r} {geo}")
            continue
        cands.remove(hit)
        if fills and hit[2] != fill:
            problems.append(f"fill of {title!r} {geo}: ours {fill}, flamegraph.pl {hit[2]}")
    for rest in pool.values():
        for c in rest:
            problems.append(f"frame missing: {c[0]!r} {c[1]}")
    return problems


def deepest(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return max((line.count(";") + 1 for line in f), default=0)


def draw(bindir, convert, inp, args, tmp, name, how):
    svg = os.path.join(tmp, name + "." + how + ".svg")
    if how == "program":
        subprocess.run([os.path.join(bindir, "tach2flamegraph"), *args, inp, "-o", svg],
                       check=True)
    elif how == "tach":
        tach = os.path.join(tmp, name + ".tach")
        subprocess.run([os.path.join(bindir, "collapsed2tach"), "-q", "--labels", "raw",
                        "--keep-thread-frames", "--diff", "both", inp, "-o", tach], check=True)
        subprocess.run([os.path.join(bindir, "tach2flamegraph"), "--no-thread-frames", *args,
                        tach, "-o", svg], check=True)
    else:
        wopts, i = [], 0
        while i < len(args):
            key = args[i][2:]
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                wopts.append(f"w:{key}={args[i + 1]}")
                i += 2
            else:
                wopts.append(f"w:{key}=yes")
                i += 1
        subprocess.run([convert, "collapsed", "flamegraph", inp, svg, "r:labels=raw",
                        "r:keep-thread-frames=yes", "r:diff=both", "w:thread-frames=no",
                        *wopts], check=True)
    subprocess.run(["xmllint", "--noout", "--nonet", svg], check=True)
    return svg


def run_case(bindir, convert, fixdir, name, tmp, how):
    with open(os.path.join(fixdir, name + ".input")) as f:
        inp = os.path.join(fixdir, "inputs", f.read().strip())
    with open(os.path.join(fixdir, name + ".args")) as f:
        args = [a for a in f.read().split("\n") if a != ""]
    ref = gzip.open(os.path.join(fixdir, name + ".svg.gz")).read()
    if how == "tach" and deepest(inp) > 256:
        return None, []
    svg = draw(bindir, convert, inp, args, tmp, name, how)
    ours_root = ET.parse(svg).getroot()
    ref_root = ET.fromstring(ref)
    problems = []
    fills = "--hash" in args or name.startswith("perf_diff")
    ours, theirs = frames(ours_root), frames(ref_root)
    problems += match(ours, theirs, fills)
    (osize, otexts), (rsize, rtexts) = header(ours_root), header(ref_root)
    if osize != rsize:
        problems.append(f"image size: ours {osize}, flamegraph.pl {rsize}")
    for k in ("title", "subtitle", "details", "search", "unzoom", "ignorecase", "matched"):
        if otexts.get(k) != rtexts.get(k):
            problems.append(f"header text {k}: ours {otexts.get(k)}, flamegraph.pl {rtexts.get(k)}")
    return len(ours), problems


def main():
    bindir, fixdir, convert = sys.argv[1], sys.argv[2], sys.argv[3]
    names = sorted(f[:-5] for f in os.listdir(fixdir) if f.endswith(".args"))
    if len(names) < 10:
        print(f"expected ten cases in {fixdir}, found {len(names)}")
        return 1
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for how in ("tach", "convert", "program"):
                n, problems = run_case(bindir, convert, fixdir, name, tmp, how)
                if n is None:
                    print(f"{name} {how}: skipped, stacks deeper than TACH's 256 frames")
                    continue
                status = "ok" if not problems else f"{len(problems)} differences"
                print(f"{name} {how}: {n} frames: {status}")
                for p in problems[:15]:
                    print("   ", p)
                bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
