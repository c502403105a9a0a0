"""The tachfmt module, installed from the wheel built in this run (tests/python/run.sh).

The build tree's programs (PROGRAMS) are the reference: convert() gives their bytes with the
same options, iteration gives what `tach-decode --format samples` prints, sample for sample.
"""
import io
import os
import pathlib
import subprocess
import sys
import warnings

import pytest
import tachfmt

PROGRAMS = pathlib.Path(os.environ["PROGRAMS"])
FIXTURES = pathlib.Path(os.environ["FIXTURES"])
TESTDATA = pathlib.Path(os.environ["TESTDATA"])
CORPUS = pathlib.Path(os.environ["CORPUS"])
VENV_BIN = pathlib.Path(sys.executable).parent

CASES = FIXTURES / "tach" / "cases"
TACH_FILES = sorted(CASES.glob("*.tach"))
# CPython's writer made these before it split long runs at 16 KiB (fixtures README).
NOT_REWRITTEN = {"rle_long_10000.tach"}
SAME_ROWS = {"synthetic_frames.tach"}


def run(prog, *args, check=True):
    p = subprocess.run([str(PROGRAMS / prog), *map(str, args)], capture_output=True)
    if check and p.returncode:
        raise AssertionError(f"{prog} {args}: {p.stderr.decode()}")
    return p


def unescape(s):
    out, i = bytearray(), 0
    b = s.encode()
    while i < len(b):
        if b[i] == 0x25:
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(b[i])
            i += 1
    return out.decode("utf-8", "surrogateescape")


def parse_frame(text):
    """A samples-text frame (always the 7-field form, maybe FRAME@K) as 7 values."""
    text = text.rsplit("@", 1)[0] if "@" in text.rsplit(":", 1)[-1] else text
    file, func, *nums = text.split(":")
    assert len(nums) == 5, text
    line, end, col, ecol, op = (None if n in ("-", "-1") else int(n) for n in nums)
    return (unescape(file), unescape(func), line, end, col, ecol, op)


def text_samples(path, *opts):
    """tach-decode --format samples, as (tid, iid, ts, status, frames) tuples."""
    out = run("tach-decode", "-F", "samples", *opts, path).stdout.decode("utf-8", "surrogateescape")
    rows = []
    for ln in out.splitlines():
        if not ln or ln[0] in "#@":
            continue
        head, _, stack = ln.partition("\t")
        tid, iid, ts, st = map(int, head.split())
        rows.append((tid, iid, ts, st, tuple(parse_frame(f) for f in stack.split(";") if f)))
    return rows


def shown(fr):
    """A Frame as the samples text shows it: no end line without a line."""
    end = fr.end_line if fr.line is not None else None
    col = fr.col if fr.col != -1 else None
    return (fr.file, fr.function, fr.line, end, col, fr.end_col, fr.opcode)


def expanded(path, **opts):
    """Iteration with each weight-N sample as N samples one interval apart."""
    rows = []
    with tachfmt.open(path, **opts) as r:
        for s in r:
            iv = r.meta["interval_us"]
            frames = tuple(shown(f) for f in s.frames)
            for k in range(s.weight):
                rows.append((s.tid, s.interpreter, s.timestamp_us + k * iv, s.status, frames))
    return rows


# ---- the wheel ----

def test_wheel_programs_stand_alone(tmp_path):
    exe = VENV_BIN / "tach-decode"
    assert exe.exists(), "the wheel's programs land in the venv's bin/"
    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    assert "libtachfmt" not in ldd, ldd
    src = CASES / "threads_interleaved.tach"
    mine = subprocess.run([str(exe), src], capture_output=True, check=True).stdout
    assert mine == run("tach-decode", src).stdout
    assert (VENV_BIN.parent / "share" / "man" / "man1" / "tach-decode.1").exists()
    so = pathlib.Path(tachfmt.__file__)
    assert so.name == "tachfmt.abi3.so"
    assert "libtachfmt" not in subprocess.run(["ldd", str(so)], capture_output=True, text=True).stdout


# ---- reading ----

@pytest.mark.parametrize("path", TACH_FILES, ids=lambda p: p.name)
def test_iteration_equals_samples_text(path):
    assert expanded(path) == text_samples(path)


def test_iteration_weighted_text_input():
    src = TESTDATA / "collapsed" / "cpython.txt"
    assert expanded(src) == text_samples(src)
    with tachfmt.open(src) as r:
        assert r.meta["format"] == "collapsed"
        assert any(s.weight > 1 for s in r)


def test_meta_and_sources(tmp_path):
    path = CASES / "threads_interleaved.tach"
    data = path.read_bytes()
    with tachfmt.open(path) as r:
        meta, want = r.meta, list(r)
    assert meta["format"] == "tach" and meta["thread_count"] > 1
    assert meta["python_version"] == "3.15.0" and meta["interval_us"] > 0
    info = run("tach-decode", "-F", "info", path).stdout.decode()
    assert f"start_time_us: {meta['start_time_us']}\n" in info
    assert f"thread_count: {meta['thread_count']}\n" in info
    for src in (str(path), data, bytearray(data), memoryview(data), io.BytesIO(data)):
        with tachfmt.open(src) as r:
            assert list(r) == want
    with open(path, "rb") as f, tachfmt.open(f) as r:
        assert list(r) == want
    with tachfmt.open(data, from_="tach") as r:
        assert list(r) == want
    s = want[0]
    tid, interp, ts, status, frames = s
    assert frames[0] == (frames[0].file, frames[0].function, frames[0].line)
    assert s.weight >= 1


def test_full_locations():
    with tachfmt.open(CASES / "opcodes_columns.tach") as r:
        frames = {f for s in r for f in s.frames}
    assert any(f.opcode is not None and f.col is not None for f in frames)


def test_closed_reader():
    r = tachfmt.open(CASES / "single_sample.tach")
    r.close()
    with pytest.raises(ValueError):
        next(r)


# ---- stacks ----

@pytest.mark.parametrize("name", ["threads_interleaved.tach", "rle_runs.tach", "recursion.tach",
                                  "non_ascii.tach"])
def test_stacks_counts(name):
    path = CASES / name
    want = {}
    with tachfmt.open(path) as r:
        for s in r:
            want[(s.tid, s.frames)] = want.get((s.tid, s.frames), 0) + s.weight
    got = tachfmt.stacks(path)
    assert got == want
    # the same counts as the collapsed text (tid:N root, outermost first)
    folded = {}
    for (tid, frames), n in got.items():
        if frames:
            key = f"tid:{tid};" + ";".join(f"{f.file}:{f.function}:{f.line}" for f in reversed(frames))
            folded[key] = folded.get(key, 0) + n
    text = run("tach-decode", "--full-paths", path).stdout.decode()
    lines = {ln.rsplit(" ", 1)[0]: int(ln.rsplit(" ", 1)[1]) for ln in text.splitlines()}
    if name != "non_ascii.tach":  # collapsed escapes ; and : in names
        assert folded == lines


# ---- convert ----

CONVERSIONS = [
    ("pprof", "tach2pprof", {}, []),
    ("pprof", "tach2pprof", {"gzip": False, "labels": False}, ["--no-gzip", "--no-labels"]),
    ("gecko", "tach2gecko", {}, []),
    ("speedscope", "tach2speedscope", {}, []),
    ("sampler", "tach2sampler", {}, []),
    ("pstats", "tach2pstats", {}, []),
    ("flamegraph", "tach2flamegraph", {"width": 800}, ["--width", "800"]),
    ("collapsed", "tach-decode", {"labels": "pyspy"}, ["--labels", "pyspy"]),
    ("samples", "tach-decode", {}, ["-F", "samples"]),
]


@pytest.mark.parametrize("to,prog,opts,args", CONVERSIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["threads_interleaved.tach", "rle_runs.tach", "non_ascii.tach",
                                  "transitions.zstd.tach"])
def test_convert_equals_program(tmp_path, name, to, prog, opts, args):
    src = CASES / name
    if not src.exists():
        pytest.skip(f"no {name}")
    want = run(prog, *args, src).stdout
    assert tachfmt.convert(src, to=to, **opts) == want
    out = tmp_path / "out"
    assert tachfmt.convert(src, out, to, **opts) is None
    assert out.read_bytes() == want
    buf = io.BytesIO()
    tachfmt.convert(src.read_bytes(), buf, to=to, **opts)
    assert buf.getvalue() == want


@pytest.mark.parametrize("inp", sorted((TESTDATA / "collapsed").glob("*.txt")), ids=lambda p: p.name)
def test_convert_folded_flamegraph(inp):
    """tach2flamegraph's settings for folded input hold in convert() too."""
    assert tachfmt.convert(inp, to="flamegraph") == run("tach2flamegraph", inp).stdout


@pytest.mark.parametrize("case,opts,args", [
    ("types", {}, []),
    ("types", {"sample_index": "inuse_space"}, ["--sample-index", "inuse_space"]),
    ("labels", {}, []),
], ids=lambda v: str(v))
def test_convert_pprof_keeps_types_and_labels(tmp_path, case, opts, args):
    """pprof to pprof keeps every sample type, the labels and the samples of weight 0, as
    tach2pprof does (the second case has a sample with no inuse_space)."""
    src = tmp_path / "in.pb"
    src.write_bytes(subprocess.run([sys.executable, str(TESTDATA.parent / "cli" / "pprof_gen.py"),
                                    case], check=True, capture_output=True).stdout)
    want = run("tach2pprof", "--no-gzip", *args, src).stdout
    got = tachfmt.convert(src, to="pprof", gzip=False, **opts)
    assert got == want
    for word in {"types": [b"alloc_objects", b"inuse_space"], "labels": [b"worker", b"w3"]}[case]:
        assert word in got
    if opts:  # the sample of weight 0 is there: without it, fewer bytes
        assert len(tachfmt.convert(src, to="pprof", gzip=False, zero_weight=False, **opts)) < len(got)


def test_convert_to_tach_reads_back(tmp_path):
    src = TESTDATA / "collapsed" / "cpython.txt"
    out, ref = tmp_path / "x.tach", tmp_path / "y.tach"
    tachfmt.convert(src, out, to="tach")
    run("collapsed2tach", src, "-o", ref)
    assert text_samples(out) == text_samples(ref) != []


def test_convert_every_writer():
    src = CASES / "threads_interleaved.tach"
    for name, _, can_write in tachfmt.formats():
        if can_write:
            assert tachfmt.convert(src, to=name)


def test_convert_errors(tmp_path):
    src = CASES / "single_sample.tach"
    with pytest.raises(tachfmt.Error, match="unknown output format"):
        tachfmt.convert(src, to="nope")
    with pytest.raises(tachfmt.Error, match="level"):
        tachfmt.convert(src, to="pprof", level=99)
    with pytest.raises(tachfmt.Error, match="option"):
        tachfmt.convert(src, to="pprof", no_such_option=1)
    bad = FIXTURES / "tach" / "errors" / "err_bad_magic.tach"
    out = tmp_path / "o.pb.gz"
    with pytest.raises(tachfmt.Error):
        tachfmt.convert(bad, out)
    assert list(tmp_path.iterdir()) == [], "no partial output"


# ---- write ----

@pytest.mark.parametrize("path", [p for p in TACH_FILES if ".zstd." not in p.name
                                  and p.name not in NOT_REWRITTEN], ids=lambda p: p.name)
def test_write_back_is_byte_identical(path):
    with tachfmt.open(path) as r:
        meta = r.meta
        samples = list(r)
    out = tachfmt.write(None, samples, meta)
    if path.name in SAME_ROWS:
        # Two table rows equal in all seven fields (CPython keyed them on what it was given):
        # tach_dict_intern_frame makes them one, so only the samples come back.
        assert out != path.read_bytes()
        assert expanded(out) == expanded(path)
        return
    assert out == path.read_bytes()
    # and streamed straight from a reader
    with tachfmt.open(path) as r:
        assert tachfmt.write(None, r, r.meta) == path.read_bytes()


def test_write_from_python_round_trip(tmp_path):
    f1 = ("app.py", "main", 3)
    f2 = ("app.py", "work", 10)
    f3 = ("lib/ü.py", "x;y:z", None)
    samples = [
        (7, 0, 1_000_100, tachfmt.STATUS_HAS_GIL, (f2, f1)),
        (7, 0, 1_000_200, tachfmt.STATUS_HAS_GIL, (f2, f1)),
        (8, 1, 1_000_250, tachfmt.STATUS_ON_CPU, (f3, f1)),
        (7, 0, 1_000_300, 0, (f1,), 3),
    ]
    meta = {"start_time_us": 1_000_000, "interval_us": 100, "python_version": "3.15.0"}
    out = tmp_path / "py.tach"
    tachfmt.write(out, samples, meta, compression="none")
    rows = sorted(text_samples(out))
    want = []
    for s in samples:
        frames = tuple((f[0], f[1], f[2], f[2], None, None, None) for f in s[4])
        for k in range(s[5] if len(s) > 5 else 1):
            want.append((s[0], s[1], s[2] + k * 100, s[3], frames))
    assert rows == sorted(want)
    folded = tachfmt.write(None, samples, meta, to="collapsed").decode()
    assert "tid:7;app.py:main:3;app.py:work:10 2\n" in folded
    assert "tid:7;app.py:main:3 3\n" in folded


def test_write_bad_samples():
    with pytest.raises(ValueError):
        tachfmt.write(None, [(1, 2, 3)], {})
    with pytest.raises(TypeError):
        tachfmt.write(None, [(1, 0, 0, 0, ((1, 2, 3),))], {})


# ---- hostile input ----

def test_error_message_is_the_programs(tmp_path):
    for bad in sorted((FIXTURES / "tach" / "errors").glob("err_*.tach")):
        p = run("tach-decode", bad, check=False)
        if p.returncode == 0:
            continue
        with pytest.raises(tachfmt.Error) as e:
            with tachfmt.open(bad) as r:
                for _ in r:
                    pass
        assert p.stderr.decode() == f"tach-decode: {e.value}\n"
        assert isinstance(e.value, ValueError)
        assert e.value.filename == str(bad) and e.value.reason in str(e.value)


def read_all(src, **opts):
    try:
        with tachfmt.open(src, **opts) as r:
            for _ in r:
                pass
    except tachfmt.Error:
        pass
    try:
        tachfmt.stacks(src, **opts)
    except tachfmt.Error:
        pass


def test_fuzz_corpus_never_crashes():
    warnings.simplefilter("ignore", tachfmt.Warning)
    files = sorted((CORPUS / "auto").iterdir()) + sorted((CORPUS / "tach").iterdir())
    assert len(files) > 100
    for f in files:
        read_all(f.read_bytes(), symbolize=False)


def test_truncated_fixtures(tmp_path):
    """Cut fixtures: an error exactly where the program reports one, with its message."""
    warnings.simplefilter("ignore", tachfmt.Warning)
    cut_file = tmp_path / "cut.tach"
    failures = 0
    for path in TACH_FILES:
        data = path.read_bytes()
        for cut in sorted({1, 7, 63, 64, 65, len(data) // 2, len(data) - 1}):
            if not 0 < cut < len(data):
                continue
            cut_file.write_bytes(data[:cut])
            p = run("tach-decode", "-F", "samples", cut_file, check=False)
            try:
                with tachfmt.open(cut_file) as r:
                    for _ in r:
                        pass
                assert p.returncode == 0, p.stderr
            except tachfmt.Error as e:
                failures += 1
                assert p.stderr.decode().endswith(f"tach-decode: {e}\n")
            read_all(data[:cut])
    assert failures > 50
