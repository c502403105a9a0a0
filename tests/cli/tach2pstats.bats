#!/usr/bin/env bats
# tach2pstats as a user runs it: for every TACH fixture the stats equal what
# tests/cli/pstats_check.py computes independently from tach-decode's samples text by the
# rules of CPython's sampling PstatsCollector, and Debian's python3 loads the file with
# pstats; every option and error path.

load checked

setup() {
	T=$BATS_TEST_TMPDIR
	CASES=$FIXTURES/tach/cases
	CHECK="python3 $SOURCE_ROOT/tests/cli/pstats_check.py"
}

# same_as_decode TACH PSTATS [DECODE_OPTIONS...] [-- CHECK_OPTIONS...]
same_as_decode() {
	local tach=$1 out=$2
	shift 2
	local dopts=() copts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do dopts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	copts=("$@")
	tach-decode -q --format samples "${dopts[@]}" "$tach" >"$T/want.samples"
	$CHECK "$T/want.samples" "$out" "${copts[@]}"
}

# Checks NAME.m.pstats (with the marker) and NAME.p.pstats (without) against NAME.samples
# for each line "NAME NONEMPTY" of LIST, in the current directory, in one interpreter: the
# stats CPython's collector gives (pstats_check.py), the marker the only difference, and
# when the profile has stacks, Debian's pstats loads and prints the file. Every fixture is
# checked; each failure is named.
pstats_list() { # LIST
	python3 - "$SOURCE_ROOT/tests/cli" "$1" <<'EOF'
import io, marshal, pstats, sys
sys.path.insert(0, sys.argv[1])
import pstats_check
bad = []
for line in open(sys.argv[2]):
    name, nonempty = line.split()
    try:
        if pstats_check.check(name + ".samples", name + ".m.pstats", marker=True):
            bad.append(name + " (marker)")
        if pstats_check.check(name + ".samples", name + ".p.pstats", marker=False):
            bad.append(name)
        a = marshal.load(open(name + ".m.pstats", "rb"))
        b = marshal.load(open(name + ".p.pstats", "rb"))
        if not (a.pop(("__sampled__",)) is True and a == b):
            bad.append(name + ": the marker is not the only difference")
        if nonempty == "1":
            out = io.StringIO()
            pstats.Stats(name + ".p.pstats", stream=out).sort_stats("cumulative").print_stats(5)
            if "Ordered by: cumulative time" not in out.getvalue():
                bad.append(name + ": pstats prints no cumulative order")
    except Exception as e:
        bad.append("%s: %s: %s" % (name, type(e).__name__, e))
sys.exit("failed: " + ", ".join(bad) if bad else 0)
EOF
}

@test "every TACH fixture: the stats CPython's collector gives, and pstats loads them" {
	local f n=0 p
	mkdir "$T/v"
	cd "$T/v"
	for f in "$CASES"/*.tach "$FIXTURES"/tach/layout-a/*.tach "$FIXTURES"/tach/big-endian/*.tach; do
		p=${f#"$FIXTURES"/tach/}
		p=${p//\//-}
		tach2pstats -q --sampled-marker "$f" -o "$p.m.pstats"
		tach2pstats -q "$f" -o "$p.p.pstats"
		tach-decode -q --format samples "$f" >"$p.samples"
		echo "$p $([ "$(tach-decode -q "$f" | wc -l)" -gt 0 ] && echo 1 || echo 0)" >>list
		n=$((n + 1))
	done
	[ "$n" -ge 40 ]
	checked * -- pstats_list list
}

@test "the check fails on wrong stats" {
	local f=$CASES/recursion.tach
	tach2pstats "$f" -o "$T/p.pstats"
	# with a marker expected, without it written
	run same_as_decode "$f" "$T/p.pstats" -- --marker
	[ "$status" -eq 1 ]
	# another profile's samples
	run same_as_decode "$CASES/transitions.tach" "$T/p.pstats"
	[ "$status" -eq 1 ]
	# one count changed
	python3 -c 'import marshal, sys
d = marshal.load(open(sys.argv[1], "rb")); k = next(iter(d)); v = d[k]
d[k] = (v[0], v[1] + 1) + v[2:]; marshal.dump(d, open(sys.argv[1], "wb"))' "$T/p.pstats"
	run same_as_decode "$f" "$T/p.pstats"
	[ "$status" -eq 1 ]
	# all at once, as for every fixture: the one that differs is named, the other passes
	mkdir "$T/l"
	cd "$T/l"
	local n
	for n in a b; do
		tach2pstats --sampled-marker "$f" -o $n.m.pstats
		tach2pstats "$f" -o $n.p.pstats
		tach-decode --format samples "$f" >$n.samples
		echo "$n 1" >>list
	done
	cp "$T/p.pstats" b.p.pstats
	run pstats_list list
	[ "$status" -eq 1 ]
	[ "${lines[${#lines[@]} - 1]}" = "failed: b, b: the marker is not the only difference" ]
}

@test "recursion counts once per sample for cumulative; callers from adjacent frames" {
	tach2pstats --sampled-marker "$CASES/recursion.tach" -o "$T/r.pstats"
	run python3 -c 'import marshal, sys
d = marshal.load(open(sys.argv[1], "rb"))
for k, v in d.items(): print(k, v)' "$T/r.pstats"
	[ "${lines[0]}" = "('rec.py', 3, 'fib') (9, 9, 0.009000000000000001, 0.009000000000000001, {('rec.py', 10, 'main'): 9, ('rec.py', 3, 'fib'): 424})" ]
	[ "${lines[1]}" = "('rec.py', 10, 'main') (0, 9, 0.0, 0.009000000000000001, {})" ]
	[ "${lines[2]}" = "('__sampled__',) True" ]
}

@test "marshal: long ints past 32 bits, long and non-ASCII strings, shared references" {
	# A folded profile with a count past 2^31 (one weighted sample: expanding it into
	# samples text would take 3 billion lines, so the values are checked here), a 300-byte
	# ASCII path and a non-ASCII name.
	local long
	long=$(printf 'd%.0s' $(seq 300))
	printf 'main;work 3000000000\n%s.py:main:1;%s.py:f:2 2\nmain;\303\274n 1\n' "$long" "$long" >"$T/big.folded"
	# counts of samples carry no time unless the interval is given (7434ead7): give 1 ms
	collapsed2tach --interval 1000 "$T/big.folded" -o "$T/big.tach"
	tach2pstats --sampled-marker "$T/big.tach" -o "$T/big.pstats"
	python3 -c 'import marshal, sys
raw = open(sys.argv[1], "rb").read(); d = marshal.loads(raw)
iv = 0.001
assert d[("~", 0, "work")] == (3000000000, 3000000000, 3000000000 * iv, 3000000000 * iv,
                               {("~", 0, "main"): 3000000000}), d[("~", 0, "work")]
assert d[("~", 0, "main")][:2] == (0, 3000000001), d[("~", 0, "main")]
assert d[("~", 0, "\u00fcn")][:2] == (1, 1)
k = [k for k in d if k[-1] == "f"][0]
assert len(k[0]) == 303 and k[1] == 2 and d[k][4] == {(k[0], 1, "main"): 2}, k
# 'l' with two 15-bit digits... three: 3e9 < 2^45
assert b"l\x03\x00\x00\x00" in raw
# each key and name once, then references: "main" appears once as a string
assert raw.count(b"main") == 1, raw.count(b"main")
assert list(d)[-1] == ("__sampled__",)' "$T/big.pstats"
	tach-decode --format info "$T/big.tach" | grep -q interval_us.*1000
}

@test "invalid UTF-8 is repaired with one warning; -q silences it" {
	tach-encode "$TESTDATA/gecko_strings.samples" -o "$T/s.tach"
	run tach2pstats "$T/s.tach" -o "$T/s.pstats"
	[ "$status" -eq 0 ]
	[ "$output" = "tach2pstats: $T/s.tach: warning: a string is not valid UTF-8: invalid bytes written as U+FFFD" ]
	python3 -c 'import marshal, sys
d = marshal.load(open(sys.argv[1], "rb"))
assert ("bad\ufffdfile.py", 3, "f\ufffd\ufffd") in d, list(d)' "$T/s.pstats"
	run tach2pstats -q "$T/s.tach" -o "$T/s.pstats"
	[ -z "$output" ]
}

@test "filters: --thread, --status, --from-us/--to-us, as tach-decode applies them" {
	local f=$CASES/threads_interleaved.tach tid
	tid=$(tach-decode --format samples "$f" | awk '!/^[@#]/ { print $1; exit }')
	tach2pstats --thread "$tid" "$f" -o "$T/t.pstats"
	same_as_decode "$f" "$T/t.pstats" --thread "$tid"
	f=$CASES/transitions.tach
	tach2pstats --status gil "$f" -o "$T/g.pstats"
	same_as_decode "$f" "$T/g.pstats" --status gil
	tach2pstats --status no-gil,no-cpu "$f" -o "$T/n.pstats"
	same_as_decode "$f" "$T/n.pstats" --status no-gil,no-cpu
	tach2pstats --from-us 1000002000 --to-us 1000004000 "$f" -o "$T/r.pstats"
	same_as_decode "$f" "$T/r.pstats" --from-us 1000002000 --to-us 1000004000
	# nothing left: only the marker
	tach2pstats -q --sampled-marker --thread 1 "$f" -o "$T/e.pstats"
	[ "$(python3 -c 'import marshal, sys; print(marshal.load(open(sys.argv[1], "rb")))' "$T/e.pstats")" = "{('__sampled__',): True}" ]
}

@test "output is deterministic and the same from stdin as from a file" {
	local f=$CASES/many_frames.zstd.tach
	tach2pstats "$f" -o "$T/a.pstats"
	tach2pstats "$f" -o "$T/b.pstats"
	cmp "$T/a.pstats" "$T/b.pstats"
	tach2pstats <"$f" >"$T/c.pstats"
	cmp "$T/a.pstats" "$T/c.pstats"
	cat "$f" | tach2pstats - >"$T/d.pstats"
	cmp "$T/a.pstats" "$T/d.pstats"
	TACHFMT_THREADS=1 tach2pstats "$f" | cmp - "$T/a.pstats"
}

@test "binary output is refused on a terminal without --force" {
	command -v script >/dev/null || skip "script (util-linux) not installed"
	run script -qec "tach2pstats '$CASES/recursion.tach'" /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2pstats: "*"terminal"* ]]
	run script -qec "tach2pstats -f '$CASES/recursion.tach' >/dev/null" /dev/null
	[ "$status" -eq 0 ]
}

@test "damaged TACH files: exit 1 with tach-decode's message, no -o file left" {
	local f
	for f in "$FIXTURES"/tach/errors/err_*.tach; do
		if tach-decode "$f" >/dev/null 2>"$T/want.err"; then
			continue
		fi
		sed 's/^tach-decode:/tach2pstats:/' "$T/want.err" >"$T/want2.err"
		run tach2pstats "$f" -o "$T/out.pstats"
		[ "$status" -eq 1 ]
		diff -u "$T/want2.err" <(printf '%s\n' "$output")
		[[ "$output" == *"tach2pstats: $f: offset "* ]]
		[ ! -e "$T/out.pstats" ]
		[ -z "$(ls "$T" | grep '^out\.pstats\.')" ]
	done
	printf 'hello\n' >"$T/x.txt"
	run tach2pstats "$T/x.txt" -o "$T/o.pstats"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2pstats: $T/x.txt: "* ]]
	[ ! -e "$T/o.pstats" ]
}

@test "I/O errors: missing input, unwritable output, full disk" {
	run tach2pstats "$T/missing.tach"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pstats: $T/missing.tach: No such file or directory" ]
	run tach2pstats "$CASES/recursion.tach" -o "$T/no/such/dir/p.pstats"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2pstats: $T/no/such/dir/p.pstats: "* ]]
	[ -c /dev/full ] || skip "/dev/full is not the full device on this machine"
	run bash -c 'tach2pstats "$1" >/dev/full' _ "$CASES/many_frames.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tach2pstats: <stdout>: "*"No space left on device"* ]]
}

@test "usage errors exit 2" {
	run tach2pstats --bogus
	[ "$status" -eq 2 ]
	[[ "$output" == *"tach2pstats: invalid option --bogus"* ]]
	# (two inputs are one profile: two missing files are an I/O error, not a usage one)
	run tach2pstats a.tach b.tach
	[ "$status" -eq 1 ]
	run tach2pstats --no-sampled-marker=yes "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2pstats --max-depth 0 "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2pstats --status sleepy "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
	run tach2pstats --format pstats "$CASES/recursion.tach"
	[ "$status" -eq 2 ]
}

@test "--max-depth, --strict and -v reach the TACH reader" {
	run tach2pstats --max-depth 10 "$CASES/deep_stack_300.tach" -o "$T/p.pstats"
	[ "$status" -eq 1 ]
	[ ! -e "$T/p.pstats" ]
	tach2pstats --max-depth 300 "$CASES/deep_stack_300.tach" -o "$T/p.pstats"
	run tach2pstats --strict "$FIXTURES/tach/errors/err_footer_filesize_wrong.tach" -o "$T/p.pstats"
	[ "$status" -eq 1 ]
	run tach2pstats -v "$CASES/recursion.tach" -o "$T/p.pstats"
	[ "$status" -eq 0 ]
	[[ "$output" == *"samples read"* ]]
}

@test "--help lists every option, -V the versions" {
	run tach2pstats --help
	[ "$status" -eq 0 ]
	local o
	for o in --sampled-marker --no-sampled-marker --output --force --quiet --verbose --strict \
		--max-depth --thread --status --from-us --to-us --help --version; do
		[[ "$output" == *"$o"* ]]
	done
	run tach2pstats -V
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "tach2pstats (tachfmt) "* ]]
	[[ "${lines[1]}" == "libtachfmt "* ]]
}

@test "keys compare names by text: a TACH table holding one string twice gives one key" {
	python3 "$TESTDATA/dup_strings.py" >"$T/dup.tach"
	tach2pstats "$T/dup.tach" -o "$T/d.pstats"
	same_as_decode "$T/dup.tach" "$T/d.pstats"
	[ "$(python3 -c 'import marshal, sys; print(marshal.load(open(sys.argv[1], "rb")))' "$T/d.pstats")" = "{('a.py', 1, 'f'): (2, 2, 0.002, 0.002, {})}" ]
}

@test "high-cardinality input (past the lookahead threshold): the stats CPython's collector gives" {
	python3 "$TESTDATA/wide_folded.py" "$T/wide.folded" "$T/want" 160000
	collapsed2tach "$T/wide.folded" -o "$T/wide.tach"
	tach2pstats "$T/wide.tach" -o "$T/wide.pstats"
	same_as_decode "$T/wide.tach" "$T/wide.pstats"
}

@test "the README's recipe: the default file loads in this Python's pstats (3.11 to 3.15), --sampled-marker is 3.15's" {
	local f=$CASES/recursion.tach
	tach2pstats "$f" -o "$T/x.pstats"
	# as the README has it: python3 -m pstats, here with its commands on stdin
	printf 'sort cumulative\nstats 3\nquit\n' | python3 -m pstats "$T/x.pstats" >"$T/out" 2>&1
	grep -q 'fib' "$T/out"
	! grep -q 'Invalid timing data' "$T/out" || false
	same_as_decode "$f" "$T/x.pstats"
	tach2pstats --no-sampled-marker "$f" | cmp - "$T/x.pstats"
	tach2pstats --sampled-marker "$f" -o "$T/m.pstats"
	same_as_decode "$f" "$T/m.pstats" -- --marker
	# Python before 3.15 refuses the marked file; 3.15 shows sample columns with it
	if python3 -c 'import sys; sys.exit(sys.version_info >= (3, 15))'; then
		run python3 -c 'import pstats, sys; pstats.Stats(sys.argv[1])' "$T/m.pstats"
		[ "$status" -ne 0 ]
	fi
}
