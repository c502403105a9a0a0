"""A randomized argument and input fuzzer for the tachfmt module (no Atheris needed).

Calls open/stacks/convert/write and the named-tuple methods with hostile arguments (odd
types, huge and negative numbers, file objects whose fileno/tell/read misbehave, samples
and frames of every wrong shape) and mutated inputs from the fuzz corpus. Any exception
that is an ordinary Python error is fine; a crash (or a sanitizer report) is the finding.
Run under an ASan build of the module for a fixed number of rounds or seconds:

  LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
    PYTHONPATH=build-asan/python python3 tests/python/fuzz_args.py CORPUS_DIR SECONDS [SEED]
"""
import io
import os
import random
import sys
import time
import warnings

import tachfmt

OK = (tachfmt.Error, TypeError, ValueError, OverflowError, OSError, KeyError, IndexError,
      AttributeError, MemoryError, RecursionError, StopIteration, UnicodeError)

WEIRD = [None, True, False, 0, 1, -1, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64, -2 ** 64, 2 ** 200,
         0.5, float("nan"), "", "x", "gil", "no-idle", "a,b", ",", "no-", "\udcff", b"x",
         [], [1], (1, 2), {}, {"a": 1}, object(), "0x10", "1e3", "99999999999999999999"]
OPTION_NAMES = ["gzip", "level", "labels", "compression", "max_samples", "max_input",
                "max_depth", "strict", "sample_index", "count_unit", "symbolize", "width",
                "sampled_marker", "zero_weight", "thread_frames", "diff", "bogus", "x" * 100,
                "labels_", "_", ""]
READ = [f for f, rd, _ in tachfmt.formats() if rd]
WRITE = [f for f, _, wr in tachfmt.formats() if wr]


def fmt(rnd, names, none=False):
    c = rnd.random()
    if c < 0.05:
        return rnd.choice(["auto", "nope", "", 5])
    if none and c < 0.5:
        return None
    return rnd.choice(names)


class OddFile:
    """A file object with misbehaving methods."""

    def __init__(self, rnd, data):
        self.rnd, self.data = rnd, data
        self.name = rnd.choice(["odd", 5, None, "\udcff"])

    def fileno(self):
        c = self.rnd.random()
        if c < 0.3:
            raise io.UnsupportedOperation("no")
        return self.rnd.choice([-1, 2 ** 31, 2 ** 32, 2 ** 64, "3", 1.5, 10 ** 30])

    def tell(self):
        return self.rnd.choice([0, -1, 2 ** 70, "x"])

    def read(self, *a):
        c = self.rnd.random()
        if c < 0.2:
            return "text"
        if c < 0.3:
            return None
        if c < 0.4:
            raise OSError("read failed")
        return self.data


def mutate(rnd, data):
    b = bytearray(data)
    for _ in range(rnd.randint(0, 8)):
        op = rnd.random()
        if not b or op < 0.3:
            b[rnd.randint(0, len(b)):rnd.randint(0, len(b))] = rnd.randbytes(rnd.randint(0, 16))
        elif op < 0.7:
            i = rnd.randrange(len(b))
            b[i] = rnd.randrange(256)
        else:
            del b[rnd.randint(0, len(b)):]
    return bytes(b)


def kwargs(rnd):
    kw = {}
    for _ in range(rnd.choice([0, 0, 0, 1, 2, 3])):
        kw[rnd.choice(OPTION_NAMES)] = rnd.choice(WEIRD)
    for name in ("thread", "status", "from_us", "to_us", "max_depth"):
        if rnd.random() < 0.08:
            kw[name] = rnd.choice(WEIRD + [[1, 2 ** 64 - 1], ["gil", "no-cpu"], "idle,no-idle"])
    return kw


def source(rnd, seeds, tmpdir):
    data = mutate(rnd, rnd.choice(seeds))
    c = rnd.random()
    if c < 0.4:
        return data
    if c < 0.6:
        p = os.path.join(tmpdir, "in")
        with open(p, "wb") as f:
            f.write(data)
        return p
    if c < 0.75:
        return io.BytesIO(data)
    if c < 0.85:
        p = os.path.join(tmpdir, "in2")
        with open(p, "wb") as f:
            f.write(data)
        f = open(p, "rb")
        f.read(rnd.randint(0, 10))
        return f
    if c < 0.97:
        return OddFile(rnd, data)
    return rnd.choice(WEIRD)


def frame(rnd):
    c = rnd.random()
    if c < 0.6:
        return (rnd.choice(["a.py", "b.py", "\udcff", ";:"]), rnd.choice(["f", "g", ""]),
                rnd.choice([1, None, -1, 2 ** 31, 2 ** 40]))
    if c < 0.8:
        return tuple(rnd.choice(WEIRD) for _ in range(rnd.choice([3, 7, 2, 8])))
    return rnd.choice(WEIRD)


def sample(rnd):
    c = rnd.random()
    fields = [rnd.choice([1, 7, 0, -1, 2 ** 64, 2 ** 64 - 1, "1"]),
              rnd.choice([0, 1, 2 ** 32, -1]), rnd.choice([0, 1000, -5, 2 ** 64 - 1, 2 ** 64]),
              rnd.choice([0, 1, 255, 256]),
              tuple(frame(rnd) for _ in range(rnd.choice([0, 1, 2, 300])))]
    if c < 0.5:
        fields.append(rnd.choice([1, 0, 3, 2 ** 64, -1]))
    if c < 0.1:
        return rnd.choice(WEIRD)
    return tuple(fields)


def one(rnd, seeds, tmpdir):
    c = rnd.random()
    kw = kwargs(rnd)
    if c < 0.3:
        with tachfmt.open(source(rnd, seeds, tmpdir), fmt(rnd, READ, True), **kw) as r:
            for i, s in enumerate(r):
                if i < 3:
                    s._asdict()
                    s._replace(tid=rnd.choice(WEIRD)) if rnd.random() < 0.3 else None
                    for f in s.frames:
                        f._asdict()
                    r.meta
                if i > 20000:
                    break
    elif c < 0.45:
        tachfmt.stacks(source(rnd, seeds, tmpdir), fmt(rnd, READ, True), **kw)
    elif c < 0.75:
        dst = rnd.choice([None] * 6 + [io.BytesIO(), os.path.join(tmpdir, "out"), tmpdir,
                                       rnd.choice(WEIRD)])
        ropts = rnd.choice([None] * 8 + [{}, {"bogus": 1}, {"max_depth": 2}, 5])
        tachfmt.convert(source(rnd, seeds, tmpdir), dst, fmt(rnd, WRITE), fmt(rnd, READ, True),
                        ropts, **kw)
    elif c < 0.95:
        samples = [sample(rnd) for _ in range(rnd.randint(0, 20))]
        meta = rnd.choice([None, {}, {"interval_us": rnd.choice(WEIRD)},
                           {"python_version": rnd.choice(WEIRD)},
                           {"program": rnd.choice(WEIRD)}, {"compression": rnd.choice(WEIRD)},
                           {"bogus": 1}, None, None, None, rnd.choice(WEIRD)])
        kw = {k: v for k, v in kw.items() if k not in ("thread", "status", "from_us", "to_us")}
        tachfmt.write(rnd.choice([None, io.BytesIO()]), samples, meta,
                      fmt(rnd, WRITE), **kw)
    else:
        t = rnd.choice([tachfmt.Sample, tachfmt.Frame])
        x = t._make(rnd.choice([[1, 2, 3], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6], [], "abcdefg",
                                list(range(8))]))
        x._replace(**{rnd.choice(["tid", "file", "weight", "opcode", "zz"]): rnd.choice(WEIRD)})
        x._asdict()


def main():
    corpus, seconds = sys.argv[1], float(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rnd = random.Random(seed)
    seeds = []
    for d in sorted(os.listdir(corpus)):
        p = os.path.join(corpus, d)
        for f in sorted(os.listdir(p))[:60] if os.path.isdir(p) else []:
            with open(os.path.join(p, f), "rb") as fh:
                seeds.append(fh.read(200000))
    warnings.simplefilter("ignore")
    tmpdir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fuzz_args.{os.getpid()}")
    os.makedirs(tmpdir, exist_ok=True)
    os.chdir(tmpdir)  # a str argument taken as a relative path writes there
    end, n, kinds = time.monotonic() + seconds, 0, {}
    while time.monotonic() < end:
        try:
            one(rnd, seeds, tmpdir)
            kinds["ok"] = kinds.get("ok", 0) + 1
        except OK as e:
            kinds[type(e).__name__] = kinds.get(type(e).__name__, 0) + 1
        n += 1
    print(f"{n} executions, seed {seed}: {kinds}")


if __name__ == "__main__":
    main()
