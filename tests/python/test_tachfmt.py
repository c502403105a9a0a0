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
        # TIME_NS and WEIGHT follow where a record's time is not its intervals
        tid, iid, ts, st = map(int, head.split()[:4])
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
    share = VENV_BIN.parent / "share"
    assert (share / "bash-completion" / "completions" / "tach-decode").exists()
    assert (share / "zsh" / "site-functions" / "_tach-decode").exists()
    assert (share / "fish" / "vendor_completions.d" / "tach-decode.fish").exists()
    so = pathlib.Path(tachfmt.__file__)
    assert so.name == "__init__.abi3.so" and so.parent.name == "tachfmt"
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
    ("gecko", "tach2gecko", {"processed": True, "gzip": False}, ["--processed", "--no-gzip"]),
    ("speedscope", "tach2speedscope", {}, []),
    ("sampler", "tach2sampler", {}, []),
    ("pstats", "tach2pstats", {}, []),
    ("pstats", "tach2pstats", {"sampled_marker": True}, ["--sampled-marker"]),
    ("pstats", "tach2pstats", {"sampled_marker": False}, ["--no-sampled-marker"]),
    ("callgrind", "tach2callgrind", {}, []),
    ("otlp", "tach2otlp", {}, []),
    ("otlp", "tach2otlp", {"json": True}, ["--json"]),
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
    # named: a file with a line that is no stack is not detected as folded stacks
    assert tachfmt.convert(inp, to="flamegraph", from_="collapsed") == \
        run("tach2flamegraph", "--from", "collapsed", inp).stdout


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
    with pytest.raises(TypeError, match="no_such_option"):
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


# ---- pstats that loads (issue 44.1) ----

def test_pstats_loads_on_this_python(tmp_path):
    """By default without the ("__sampled__",) marker, as tach2pstats: loads in every Python."""
    import pstats
    src = CASES / "threads_interleaved.tach"
    out = tmp_path / "x.pstats"
    tachfmt.convert(src, out, to="pstats")
    st = pstats.Stats(str(out))
    assert st.total_calls > 0
    marked = run("tach2pstats", "--sampled-marker", src).stdout
    unmarked = run("tach2pstats", src).stdout
    assert marked != unmarked
    assert out.read_bytes() == unmarked
    assert tachfmt.convert(src, to="pstats", sampled_marker=True) == marked
    assert tachfmt.convert(src, to="pstats", sampled_marker=False) == unmarked
    with tachfmt.open(src) as r:
        got = tachfmt.write(None, r, r.meta, to="pstats")
    assert got == unmarked
    assert "sampled_marker" in tachfmt.convert.__doc__


# ---- named tuples (issue 44.2) ----

def test_sample_and_frame_are_named_tuples():
    import collections
    with tachfmt.open(CASES / "opcodes_columns.tach") as r:
        s = next(r)
    f = s.frames[0]
    assert isinstance(s, tuple) and isinstance(f, tuple)
    assert tachfmt.Sample._fields == ("tid", "interpreter", "timestamp_us", "status", "frames")
    assert tachfmt.Frame._fields == ("file", "function", "line")
    assert s._fields == tachfmt.Sample._fields and tachfmt.Frame._field_defaults == {}
    # what a collections.namedtuple of the same fields gives
    NT = collections.namedtuple("NT", s._fields)
    nt = NT(*s)
    assert nt == s and tuple(nt) == tuple(s)
    assert {k: v for k, v in s._asdict().items() if k in s._fields} == nt._asdict()
    assert s._asdict()["weight"] == s.weight == 1
    assert f._asdict() == {"file": f.file, "function": f.function, "line": f.line,
                           "end_line": f.end_line, "col": f.col, "end_col": f.end_col,
                           "opcode": f.opcode}
    tid, interp, ts, status, frames = s
    file, function, line = f
    s2 = s._replace(tid=5, weight=3)
    assert type(s2) is tachfmt.Sample and s2.tid == 5 and s2.weight == 3 and s2[1:] == s[1:]
    assert s._replace() == s and s._replace().weight == s.weight
    f2 = f._replace(line=99, opcode=None)
    assert f2.line == 99 and f2.opcode is None and f2.col == f.col
    with pytest.raises(TypeError, match="bogus"):
        f._replace(bogus=1)
    assert tachfmt.Frame._make(["a.py", "g", 4]) == ("a.py", "g", 4)
    assert tachfmt.Sample._make([1, 0, 2, 0, (), 7]).weight == 7
    # still one Frame per distinct frame, not one per sample
    seen = {}
    with tachfmt.open(CASES / "threads_interleaved.tach") as r:
        for s in r:
            for f in s.frames:
                assert seen.setdefault(tuple(f._asdict().values()), f) is f
    assert len(seen) > 1


# ---- signatures and types (issue 44.3) ----

def test_signatures():
    import inspect
    sig = {name: inspect.signature(getattr(tachfmt, name))
           for name in ("open", "convert", "stacks", "write", "formats")}
    filters = ["thread", "status", "from_us", "to_us", "max_depth"]
    assert list(sig["open"].parameters) == ["src", "from_", *filters, "reader_options"]
    assert list(sig["stacks"].parameters) == ["src", "from_", *filters, "reader_options"]
    assert list(sig["convert"].parameters) == ["src", "dst", "to", "from_", "reader_options",
                                               *filters, "options"]
    assert list(sig["write"].parameters) == ["dst", "samples", "meta", "to", "options"]
    assert list(sig["formats"].parameters) == []
    assert sig["convert"].parameters["to"].default == "pprof"
    assert sig["open"].parameters["thread"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig["open"].parameters["reader_options"].kind is inspect.Parameter.VAR_KEYWORD
    with tachfmt.open(CASES / "single_sample.tach") as r:
        assert str(inspect.signature(r.close)) == "()"
        s = next(r)
    assert str(inspect.signature(s._replace)) == "(**fields)"
    assert str(inspect.signature(s._asdict)) == "()"
    assert str(inspect.signature(tachfmt.Frame._make)) == "(iterable, /)"


MYPY_EXAMPLE = '''
import io
import tachfmt

def main(path: str) -> int:
    n = 0
    with tachfmt.open(path, thread=[1, 2], status="gil,no-exception") as r:
        interval: int = r.meta["interval_us"]
        for tid, interp, ts, status, frames in r:
            file, function, line = frames[0]
            n += tid + ts + interval + (line or 0) + len(file + function)
    data: bytes = tachfmt.convert(path, to="pstats", gzip=False)
    none: None = tachfmt.convert(path, "o.pb", to="pprof", max_depth=64)
    for (tid, fr), count in tachfmt.stacks(data, from_="tach").items():
        n += tid + count + (fr[0].end_line or 0)
    out: bytes = tachfmt.write(None, [(1, 0, 0, 0, [("a.py", "f", 1)])], {"interval_us": 100})
    with tachfmt.open(path) as r2:
        for s in r2:
            n += (s.time_ns or 0) + sum(s.values) + s.weight
    out += tachfmt.write(None, [(1, 0, 0, 0, [("a.py", "f", 1)], 1, 5, (1, 5))],
                         {"value_types": [("samples", "count"), ("cpu", "nanoseconds")]},
                         to="pprof")
    tachfmt.write(io.BytesIO(), [], None, to="collapsed")
    return n + len([name for name, rd, wr in tachfmt.formats() if wr]) + len(out)
'''


def test_stubs_installed_and_mypy_strict(tmp_path):
    pkg = pathlib.Path(tachfmt.__file__).parent
    assert (pkg / "__init__.pyi").exists() and (pkg / "py.typed").exists()
    try:
        import mypy  # noqa: F401  Debian's python3-mypy, seen through the venv
    except ImportError:
        pytest.skip("no mypy")
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(MYPY_EXAMPLE)
    bad.write_text("import tachfmt\nx: str = tachfmt.convert('p.tach')\n")
    def mypy(f):
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                               "--cache-dir", str(tmp_path / "cache"), str(f)],
                              capture_output=True, text=True, cwd=tmp_path)
    p = mypy(good)
    assert p.returncode == 0, p.stdout + p.stderr
    p = mypy(bad)
    assert p.returncode == 1 and 'has type "bytes"' in p.stdout, p.stdout + p.stderr


# ---- errors (issue 44.4, issue 43.7) ----

def test_unknown_keyword_is_type_error():
    src = CASES / "single_sample.tach"
    calls = {
        "convert": lambda: tachfmt.convert(src, bogus=1),
        "open": lambda: tachfmt.open(src, bogus=1),
        "stacks": lambda: tachfmt.stacks(src, bogus=1),
        "write": lambda: tachfmt.write(None, [], bogus=1),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == f"{name}() got an unexpected keyword argument 'bogus'"
    with pytest.raises(TypeError, match="multiple values for argument 'dst'"):
        tachfmt.convert(src, None, dst=None)
    with pytest.raises(TypeError, match=r"missing required argument 'src'"):
        tachfmt.stacks()
    with pytest.raises(TypeError, match="argument 'level' must be str, int, float or bool"):
        tachfmt.convert(src, level=[1])


def test_option_value_errors_name_the_option(tmp_path):
    src = CASES / "single_sample.tach"
    for dst in (None, tmp_path / "x.pb"):
        with pytest.raises(tachfmt.Error) as e:
            tachfmt.convert(src, dst, level=99)
        assert str(e.value) == "convert() argument 'level': gzip level must be 1-9, not 99"
    assert list(tmp_path.iterdir()) == []
    # the value is what is wrong, not the option (the reader takes max_input)
    with pytest.raises(tachfmt.Error) as e:
        tachfmt.convert(src, max_input=0)
    assert str(e.value) == "convert() argument 'max_input': bad max-input: 0"
    with pytest.raises(TypeError, match=r"convert\(\) argument 'from_' must be str or None, not int"):
        tachfmt.convert(src, from_=5)
    with pytest.raises(TypeError, match=r"open\(\) argument 'from_' must be str or None, not int"):
        tachfmt.open(src, from_=5)
    with pytest.raises(tachfmt.Error, match="max-depth limit of 3 frames"):
        tachfmt.stacks(CASES / "deep_stack_300.tach", max_depth=3)
    p = run("tach-decode", "--max-depth", "3", CASES / "deep_stack_300.tach", check=False)
    assert p.returncode == 1 and b"max-depth limit of 3 frames" in p.stderr


def test_directory_fails_alike_as_source_and_destination(tmp_path):
    src = CASES / "single_sample.tach"
    for call in (lambda: tachfmt.convert(tmp_path), lambda: tachfmt.open(tmp_path),
                 lambda: tachfmt.stacks(tmp_path), lambda: tachfmt.convert(src, tmp_path),
                 lambda: tachfmt.write(tmp_path, [])):
        with pytest.raises(IsADirectoryError) as e:
            call()
        assert e.value.filename == str(tmp_path)


def test_write_field_errors():
    fr = (("a.py", "f", 1),)
    with pytest.raises(ValueError) as e:
        tachfmt.write(None, [(1, 0, 10, 0, fr), (1, 0, -5, 0, fr)], {})
    assert str(e.value) == "write(): sample 1: timestamp_us is -5, not in 0..18446744073709551615"
    with pytest.raises(ValueError, match="sample 0: status is 256, not in 0..255"):
        tachfmt.write(None, [(1, 0, 0, 256, fr)], {})
    with pytest.raises(ValueError, match=r"sample 0: weight is 0, not at least 1 \(0 only with values\)"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 0)], {})
    with pytest.raises(TypeError, match="sample 0: tid must be an int, not str"):
        tachfmt.write(None, [("1", 0, 0, 0, fr)], {})
    with pytest.raises(ValueError, match="meta interval_us is -1"):
        tachfmt.write(None, [], {"interval_us": -1})
    with pytest.raises(ValueError, match=r"sample 0: frame line is 1267650600228229401496703205376, not in"):
        tachfmt.write(None, [(1, 0, 0, 0, (("a.py", "f", 2 ** 100),))], {})
    with pytest.raises(TypeError, match="sample 0: frame opcode must be an int or None, not str"):
        tachfmt.write(None, [(1, 0, 0, 0, (("a.py", "f", 1, 1, 0, 0, "x"),))], {})
    with pytest.raises(ValueError, match="unknown meta key 'interval'"):
        tachfmt.write(None, [], {"interval": 100})
    # every key Reader.meta gives is taken back
    with tachfmt.open(CASES / "threads_interleaved.tach") as r:
        tachfmt.write(None, [], r.meta)


# ---- time and values (issue 51.6) ----

PPROF_GEN = TESTDATA.parent / "cli" / "pprof_gen.py"
PPROF_TOTALS = TESTDATA.parent / "cli" / "pprof_totals.py"


def pprof_case(tmp_path, case):
    p = tmp_path / (case + ".pb")
    p.write_bytes(subprocess.run([sys.executable, str(PPROF_GEN), case], check=True,
                                 capture_output=True).stdout)
    return p


def totals(data, tmp_path):
    """{type/unit: total} of pprof bytes, by tests/cli/pprof_totals.py (as pprof -top)."""
    p = tmp_path / "totals.pb.gz"
    p.write_bytes(data)
    out = subprocess.run([sys.executable, str(PPROF_TOTALS), str(p)], check=True,
                         capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (ln.split("\t") for ln in out.splitlines())}


def test_sample_values_and_value_types(tmp_path):
    src = pprof_case(tmp_path, "cpubytes")   # samples/count, cpu/nanoseconds, mem/bytes
    with tachfmt.open(src) as r:
        samples = list(r)
        meta = r.meta
    assert meta["value_types"] == (("samples", "count"), ("cpu", "nanoseconds"), ("mem", "bytes"))
    assert meta["weight_type"] == 1 and meta["default_type"] == 1 and meta["weight_unit"] is None
    assert [s.values for s in samples] == [(2, 2000000, 4096)]
    assert samples[0].weight == 2
    d = samples[0]._asdict()
    assert d["values"] == (2, 2000000, 4096) and "time_ns" in d
    # inputs without values: an empty tuple, and no value types
    with tachfmt.open(CASES / "recursion.tach") as r:
        assert r.meta["value_types"] == () and "weight_type" not in r.meta
        assert all(s.values == () for s in r)
    # written back with its meta: every value kept, as the program converts it
    with tachfmt.open(src) as r:
        out = tachfmt.write(None, r, r.meta, to="pprof")
    assert totals(out, tmp_path) == {"samples/count": 2, "cpu/nanoseconds": 2000000,
                                     "mem/bytes": 4096}
    assert totals(out, tmp_path) == totals(run("tach2pprof", src).stdout, tmp_path)


def test_sample_time_ns(tmp_path):
    # a sample's time_ns is None exactly where the samples carry no time
    for src in [CASES / "recursion.tach", TESTDATA / "collapsed" / "cpython.txt",
                pprof_case(tmp_path, "labels")]:
        with tachfmt.open(src) as r:
            for s in r:
                if r.meta["sample_time"]:
                    assert isinstance(s.time_ns, int)
                else:
                    assert s.time_ns is None
    # TACH: one interval each
    with tachfmt.open(CASES / "recursion.tach") as r:
        assert r.meta["sample_time"] is True
        assert {(s.weight, s.time_ns) for s in r} == {(1, r.meta["interval_us"] * 1000)}
    # records of their own time (the samples text's TIME_NS WEIGHT): cut by --from-us and
    # --to-us as the programs cut them, each part with its share of the time
    src = tmp_path / "t.samples"
    src.write_text("@interval_us 1000\n1 0 1000 0 9000000 3\ta.py:f:1\n"
                   "1 0 5000 0 4000000 4\ta.py:g:1\n")
    with tachfmt.open(src) as r:
        assert [(s.timestamp_us, s.weight, s.time_ns) for s in r] == \
            [(1000, 3, 9000000), (5000, 4, 4000000)]
        assert r.meta["sample_time"] is True
    with tachfmt.open(src, from_us=2000, to_us=6000) as r:
        got = [(s.timestamp_us, s.weight, s.time_ns) for s in r]
    assert got == [(4000, 1, 3000000), (5000, 1, 1000000)]
    text = run("tach-decode", "-F", "samples", "--from-us", "2000", "--to-us", "6000",
               src).stdout.decode()
    assert "1 0 4000 0 3000000\t" in text and "1 0 5000 0\t" in text


def test_write_takes_time_and_values(tmp_path):
    f, g = ("a.py", "f", 1), ("a.py", "g", 2)
    # times of their own: 5 ms and 1 ms, not weight x interval (1 and 2 ms)
    timed = [(1, 0, 1000, 0, [f], 1, 5_000_000), (1, 0, 2000, 0, [g], 2, 1_000_000)]
    out = tachfmt.write(None, timed, {"interval_us": 1000}, to="pprof")
    assert totals(out, tmp_path) == {"samples/count": 3, "wall/nanoseconds": 6_000_000}
    # the same from Sample objects, which carry time_ns and values as attributes
    objs = [tachfmt.Sample._make([1, 0, 1000, 0, (f,), 1, 5_000_000, ()]),
            tachfmt.Sample._make([1, 0, 2000, 0, (g,), 2, 1_000_000, ()])]
    assert objs[0].time_ns == 5_000_000 and objs[0].values == ()
    assert tachfmt.write(None, objs, {"interval_us": 1000}, to="pprof") == out
    # samples without time_ns: each counts its weight's intervals
    plain = [t[:6] for t in timed]
    out = tachfmt.write(None, plain, {"interval_us": 1000}, to="pprof")
    assert totals(out, tmp_path) == {"samples/count": 3, "wall/nanoseconds": 3_000_000}
    # a Reader's samples and meta, written back: the same times (node's own)
    v8 = TESTDATA / "v8" / "node_hot.cpuprofile"
    with tachfmt.open(v8) as r:
        out = tachfmt.write(None, r, r.meta, to="pprof")
    want = totals(run("tach2pprof", v8).stdout, tmp_path)
    assert totals(out, tmp_path) == want and want["wall/nanoseconds"] > 0
    with tachfmt.open(v8) as r:
        assert r.meta["sample_time"] is True and [s.time_ns for s in r][:1] != [None]
    # values of the meta's types, each sample's own
    meta = {"interval_us": 1000, "value_types": [("samples", "count"), ("cpu", "nanoseconds"),
                                                 ("mem", "bytes")], "weight_type": 1,
            "default_type": 1}
    vals = [(1, 0, 1000, 0, [f], 1, 5_000_000, (1, 5_000_000, 100)),
            (1, 0, 2000, 0, [g], 2, 1_000_000, [2, 1_000_000, 7])]
    out = tachfmt.write(None, vals, meta, to="pprof")
    assert totals(out, tmp_path) == {"samples/count": 3, "cpu/nanoseconds": 6_000_000,
                                     "mem/bytes": 107}
    with tachfmt.open(out) as r:
        assert r.meta["value_types"] == (("samples", "count"), ("cpu", "nanoseconds"),
                                         ("mem", "bytes"))
        assert r.meta["default_type"] == 1
        assert sorted(s.values for s in r) == [(1, 5_000_000, 100), (2, 1_000_000, 7)]
    # a weight of 0 is a sample of values only
    out = tachfmt.write(None, [vals[0], (1, 0, 3000, 0, [g], 0, 0, (0, 0, 50))], meta, to="pprof")
    assert totals(out, tmp_path)["mem/bytes"] == 150


def test_write_time_and_values_errors():
    fr = (("a.py", "f", 1),)
    with pytest.raises(ValueError, match="write\\(\\): sample 1 has no time_ns, but the samples carry time"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 1, 10), (1, 0, 1, 0, fr, 1)], {}, to="pprof")
    with pytest.raises(ValueError, match="sample 1 has a time_ns, but the samples carry no time"):
        tachfmt.write(None, [(1, 0, 0, 0, fr), (1, 0, 1, 0, fr, 1, 10)], {}, to="pprof")
    with pytest.raises(ValueError, match="sample 0 has no time_ns, but the samples carry time"):
        tachfmt.write(None, [(1, 0, 0, 0, fr)], {"sample_time": True}, to="pprof")
    with pytest.raises(ValueError, match="sample 0 has 1 values, but meta value_types has 0"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 1, None, (5,))], {}, to="pprof")
    with pytest.raises(ValueError, match="sample 0: values\\[1\\] is 'x', not a 64-bit int"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 1, None, (5, "x"))],
                      {"value_types": [("a", "count"), ("b", "count")]}, to="pprof")
    with pytest.raises(ValueError, match="sample 0: time_ns is -1, not in"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 1, -1)], {}, to="pprof")
    with pytest.raises(ValueError, match="meta value_types\\[0\\] is 'cpu', not a \\(type, unit\\) pair"):
        tachfmt.write(None, [], {"value_types": ["cpu"]}, to="pprof")
    with pytest.raises(ValueError, match="meta weight_type is 2, not in 0..1"):
        tachfmt.write(None, [], {"value_types": [("a", "count"), ("b", "count")],
                                 "weight_type": 2}, to="pprof")
    with pytest.raises(ValueError, match="has 9 items"):
        tachfmt.write(None, [(1, 0, 0, 0, fr, 1, 1, (), 0)], {})


# ---- the programs' filters (issue 44.5) ----

FILTERS = [
    ({"thread": 139637976735744}, ["--thread", "139637976735744"]),
    ({"thread": [139637976735744, 139637976756224]},
     ["--thread", "139637976735744", "--thread", "139637976756224"]),
    ({"status": "gil"}, ["--status", "gil"]),
    ({"status": ["cpu", "no-gil"]}, ["--status", "cpu,no-gil"]),
    ({"status": "idle,exception"}, ["--status", "idle,exception"]),
    ({"from_us": 1000000500}, ["--from-us", "1000000500"]),
    ({"from_us": 1000000500, "to_us": 1000002000}, ["--from-us", "1000000500", "--to-us", "1000002000"]),
    ({"thread": 139637976739840, "status": "cpu", "to_us": 1000003000},
     ["--thread", "139637976739840", "--status", "cpu", "--to-us", "1000003000"]),
    ({"max_depth": 64}, ["--max-depth", "64"]),
]


@pytest.mark.parametrize("opts,args", FILTERS, ids=lambda v: str(v))
def test_filters_as_the_programs(opts, args):
    src = CASES / "threads_interleaved.tach"
    rows = text_samples(src, *args)
    assert expanded(src, **opts) == rows and rows != []
    assert tachfmt.convert(src, to="pprof", gzip=False, **opts) == \
        run("tach2pprof", "--no-gzip", *args, src).stdout
    assert tachfmt.convert(src, to="collapsed", **opts) == run("tach-decode", *args, src).stdout
    want = {}
    for tid, _, _, _, frames in expanded(src, **opts):
        want[tid] = want.get(tid, 0) + 1
    got = {}
    for (tid, _), n in tachfmt.stacks(src, **opts).items():
        got[tid] = got.get(tid, 0) + n
    assert got == want


def test_time_range_cuts_weighted_samples(tmp_path):
    # folded counts carry no time of their own: given an interval, each count is that many
    # samples one interval apart, which the cut then splits
    src = tmp_path / "cpython.tach"
    run("collapsed2tach", "-q", "--interval", "1000", TESTDATA / "collapsed" / "cpython.txt",
        "-o", src)
    args = ["--from-us", "2500", "--to-us", "9000"]
    rows = text_samples(src, *args)
    assert expanded(src, from_us=2500, to_us=9000) == rows
    assert 0 < len(rows) < len(text_samples(src))
    assert tachfmt.convert(src, to="speedscope", from_us=2500, to_us=9000) == \
        run("tach2speedscope", *args, src).stdout
    assert sum(tachfmt.stacks(src, from_us=2500, to_us=9000).values()) == len(rows)


def test_filter_argument_errors():
    src = CASES / "single_sample.tach"
    with pytest.raises(ValueError, match="unknown state 'gill'"):
        tachfmt.open(src, status="gill")
    with pytest.raises(TypeError, match="'thread' must be int"):
        tachfmt.stacks(src, thread="1")
    with pytest.raises(ValueError, match="'from_us' must be in 0..2"):
        tachfmt.convert(src, from_us=-1)
    with pytest.raises(TypeError, match="'to_us' must be int, not bool"):
        tachfmt.convert(src, to_us=True)
    with pytest.raises(tachfmt.Error, match="argument 'max_depth': bad max-depth: 0"):
        tachfmt.open(src, max_depth=0)


# ---- file objects (issue 43.2) ----

def test_file_object_kept_alive(tmp_path):
    import gc
    import tempfile
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"A 1\n" * 100000)
    b.write_bytes(b"B 1\n" * 100000)

    def reader():
        f = tempfile.TemporaryFile()
        f.write(a.read_bytes())
        f.seek(0)
        return tachfmt.open(f)
    r = reader()
    gc.collect()
    others = [open(b, "rb") for _ in range(4)]  # would take the freed descriptor
    try:
        counts = {}
        for s in r:
            key = ";".join(f.function for f in reversed(s.frames))
            counts[key] = counts.get(key, 0) + s.weight
    finally:
        for o in others:
            o.close()
    assert counts == {"A": 100000}


def test_file_object_read_from_its_position(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes(b"\x00 not a stack\n" + b"a;b 1\n" * 2000)
    want = {"a;b": 2000}
    for opener in (lambda: open(p, "rb"), lambda: open(p, "rb", buffering=0)):
        with opener() as f:
            f.readline()
            got = {}
            for (tid, frames), n in tachfmt.stacks(f, from_="collapsed").items():
                key = ";".join(fr.function for fr in reversed(frames))
                got[key] = got.get(key, 0) + n
        assert got == want
    with open(p, "rb") as f:
        f.readline()
        assert tachfmt.convert(f, to="collapsed", from_="collapsed") == b"tid:0;a;b 2000\n"


def test_fileno_out_of_range():
    class Odd:
        def __init__(self, n):
            self.n = n

        def fileno(self):
            return self.n

        def read(self):
            return b""
    for n in (2 ** 32, -5, 2 ** 70):
        with pytest.raises(ValueError, match="fileno"):
            tachfmt.open(Odd(n))


# ---- README "From Python" (issue 44.6) ----

README = TESTDATA.parent.parent / "README.md"


def test_readme_install_and_example(tmp_path, monkeypatch):
    text = README.read_text()
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    for words in ("python3-mesonpy", "--system-site-packages",
                  "pip install --no-build-isolation --no-index .", "/usr/bin/python3 -m venv",
                  "zstd"):
        assert words in section, words
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    src = CASES / "transitions.zstd.tach"
    (tmp_path / "profile.tach").write_bytes(src.read_bytes())
    monkeypatch.chdir(tmp_path)
    with tachfmt.open(src) as r:
        env = {"samples": list(r), "meta": r.meta}
    exec(compile(code, "README", "exec"), env)
    assert (tmp_path / "out.pb.gz").exists() and (tmp_path / "new.tach").exists()
    # a zstd file comes back with the same samples, not the same bytes (see the README)
    assert expanded(tmp_path / "new.tach") == expanded(src)


def test_convert_nothing_left():
    """An empty input fails and one the filters empty gives what the program gives (the
    module once handed the writer a sample it never read)."""
    src = CASES / "threads_interleaved.tach"
    empty = run("tach-decode", "-F", "samples", "--thread", "1", src).stdout
    assert tachfmt.convert(src, to="samples", thread=1) == empty
    for name, _, can_write in tachfmt.formats():
        if can_write:
            # no input at all is an error, as for the programs
            with pytest.raises(tachfmt.Error, match="empty input"):
                tachfmt.convert(b"", to=name, from_="collapsed")
            tachfmt.convert(src, to=name, thread=[])
    assert tachfmt.convert(src, to="speedscope", thread=1) == \
        run("tach2speedscope", "--thread", "1", src).stdout


def test_argument_fuzz_findings(tmp_path):
    """What tests/python/fuzz_args.py found: a warning about a file whose name does not
    decode, a meta compression that does not encode, a keyword too long to be an option
    beside one the module looks for (SystemError, a crash, SystemError)."""
    src = tmp_path / os.fsdecode(b"bad\xffname.txt")
    src.write_bytes((TESTDATA / "collapsed" / "invalid.txt").read_bytes())
    with pytest.warns(tachfmt.Warning, match="lines with invalid format ignored"):
        tachfmt.stacks(src, from_="collapsed")
    with pytest.raises(UnicodeEncodeError):
        tachfmt.write(None, [], {"compression": "\udcff"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'x+'"):
        tachfmt.convert(CASES / "single_sample.tach", to="tach", **{"x" * 100: 1, "max_samples": 5})


def test_status_no_idle_is_the_complement_of_idle():
    """no-NAME drops a state; for idle (neither gil nor cpu) too."""
    src = CASES / "threads_interleaved.tach"
    every = expanded(src)
    idle = expanded(src, status="idle")
    busy = expanded(src, status="no-idle")
    assert idle and busy and sorted(idle + busy) == sorted(every)
    assert all(r[3] & (tachfmt.STATUS_HAS_GIL | tachfmt.STATUS_ON_CPU) for r in busy)


# ---- what a new user meets first ----

def test_meta_is_whole_before_the_first_sample(tmp_path):
    """A perf script capture learns its interval and program from its first sample: .meta
    asked first reads it ahead, iteration still gives every sample, and write() with that
    meta keeps the interval."""
    src = FIXTURES / "perf" / "inputs" / "perf-dd-stacks-01.txt"
    with tachfmt.open(src) as r:
        meta = r.meta
        got = list(r)
        after = r.meta
    assert meta == after
    assert meta["interval_us"] > 0
    assert meta["python_version"] is None
    iv = meta["interval_us"]
    rows = [(s.tid, s.interpreter, s.timestamp_us + k * iv, s.status,
             tuple(shown(f) for f in s.frames)) for s in got for k in range(s.weight)]
    assert rows == text_samples(src)
    out = tmp_path / "w.tach"
    tachfmt.write(out, got, meta)
    info = run("tach-decode", "-F", "info", out).stdout.decode()
    assert f"interval_us: {meta['interval_us']}\n" in info
    with tachfmt.open(out) as r:
        assert r.meta["interval_us"] == meta["interval_us"]


def test_every_error_has_its_attributes():
    src = CASES / "single_sample.tach"
    cases = [
        (lambda: tachfmt.convert(src, to="svg"), "convert() argument 'to'",
         "unknown output format 'svg' (the formats written: tach, otlp, pprof"),
        (lambda: tachfmt.open(src, "svg"), "open() argument 'from_'",
         "unknown input format 'svg' (the formats read: auto, tach"),
        (lambda: tachfmt.open(src, status="gill"), "open() argument 'status'",
         "unknown state 'gill' (gil cpu unknown gil-wait exception main idle, or no-NAME)"),
        (lambda: tachfmt.stacks(src, status=["gil", "gill"]), "stacks() argument 'status'",
         "unknown state 'gill'"),
    ]
    for call, filename, reason in cases:
        with pytest.raises(tachfmt.Error) as e:
            call()
        assert isinstance(e.value.filename, str) and e.value.filename == filename
        assert e.value.reason.startswith(reason), e.value.reason
        assert str(e.value) == f"{filename}: {e.value.reason}"
        assert e.value.position is None and e.value.position_kind is None
        assert isinstance(e.value.code, int) and e.value.code < 0
    # every writable format is listed where the bad one is named
    with pytest.raises(tachfmt.Error) as e:
        tachfmt.convert(src, to="svg")
    for name, _, can_write in tachfmt.formats():
        assert (f" {name}," in e.value.reason or f" {name})" in e.value.reason) == bool(can_write)


def test_tach_runs_are_weighted_samples():
    """As the README says: a TACH run of one stack is one sample weighing its length."""
    with tachfmt.open(CASES / "rle_runs.tach") as r:
        got = list(r)
    assert max(s.weight for s in got) > 1
    assert sum(s.weight for s in got) == len(text_samples(CASES / "rle_runs.tach"))
