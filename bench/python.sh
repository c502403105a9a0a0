#!/bin/sh
# The tachfmt module against a pure-Python loop over `tach-decode --format samples`:
# iterating 1 M samples (the churn shape: a new stack nearly every sample) and counting 10 M
# samples by (thread, stack) with stacks(). Prints CPU seconds and the ratio; never fails on
# timing. Needs a python3 that imports tachfmt (a venv with the wheel, or PYTHONPATH at a
# -Dpython=enabled build's python/), e.g.
#   PY=/tmp/venv/bin/python sh bench/python.sh
# Environment: BUILD_ROOT (default ./build), PY (default python3), N1 (1000000), N2 (10000000).
set -eu
BUILD_ROOT=${BUILD_ROOT:-build}
PY=${PY:-python3}
N1=${N1:-1000000}
N2=${N2:-10000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD_ROOT/bench/gen_tach" churn "$N1" "$tmp/a.tach"
"$BUILD_ROOT/bench/gen_tach" churn "$N2" "$tmp/b.tach"
DECODE=$BUILD_ROOT/cmd/tach-decode "$PY" - "$tmp/a.tach" "$tmp/b.tach" <<'PYEOF'
import os, resource, subprocess, sys, tachfmt

def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

def text_loop(path, count):
    """The pure-Python way: parse the samples text, frames as (file, function, line)."""
    p = subprocess.Popen([os.environ["DECODE"], "-F", "samples", path], stdout=subprocess.PIPE)
    n, stacks = 0, {}
    for line in p.stdout:
        if line[:1] in (b"#", b"@"):
            continue
        head, _, rest = line.rstrip(b"\n").partition(b"\t")
        tid, iid, ts, st = head.split()
        frames = tuple(tuple(f.split(b":")[:3]) for f in rest.split(b";")) if rest else ()
        n += 1
        if count:
            k = (int(tid), frames)
            stacks[k] = stacks.get(k, 0) + 1
    p.wait()
    return n, len(stacks)

def timed(what, fn):
    t = cpu()
    r = fn()
    d = cpu() - t
    print(f"{what:55s} {d:7.2f} CPU-s  {r}")
    return d

a, b = sys.argv[1], sys.argv[2]
def iterate():
    n = 0
    with tachfmt.open(a) as r:
        for s in r:
            n += s.weight
    return n
m = timed("tachfmt.open: iterate 1 M samples", iterate)
t = timed("pure Python over tach-decode -F samples: 1 M samples", lambda: text_loop(a, False))
print(f"  ratio: {t / m:.1f}x")
m = timed("tachfmt.stacks: 10 M samples", lambda: len(tachfmt.stacks(b)))
t = timed("pure Python over tach-decode -F samples: count 10 M", lambda: text_loop(b, True))
print(f"  ratio: {t / m:.1f}x")
PYEOF
