# Shared by v8.bats and chrome.bats (bats "load"): the Node that records profiles, and a
# profile through every writer, each writer's output read back or checked by its own
# consumer. EXPECT decodes samples text.

# A Node for `node --cpu-prof`: the system's (build.sh installs Debian's nodejs), else the
# one npm-tools.sh brings. Never skipped: without one the test fails and says why.
find_node() {
	NODE=$(command -v node || command -v nodejs || true)
	if [ -z "$NODE" ]; then
		local dir=${TACHFMT_NPM_DIR:-}
		if [ -z "$dir" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
			dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm") || {
				echo "no node to record a profile with (Debian: apt-get install nodejs)" >&2
				return 1
			}
		fi
		NODE=$dir/node_modules/.bin/node
	fi
}

# writer_tools: node, speedscope's bundle and the Firefox Profiler's CLI (npm-tools.sh).
writer_tools() {
	local dir=${TACHFMT_NPM_DIR:-}
	if [ -z "$dir" ] || [ ! -f "$dir/node_modules/speedscope/dist/release/file-format-schema.json" ]; then
		dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm")
	fi
	SNODE=$dir/node_modules/.bin/node
	BUNDLE=$(ls "$dir"/node_modules/speedscope/dist/release/speedscope-*.js | head -n 1)
	PCLI="$SNODE $dir/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js"
}

# notime: the decoded lines without their time (the last field before the TAB).
notime() {
	sed -E 's/ [0-9]+\t/\t/'
}

# time_folded SAMPLES_TEXT: tach-decode's folded stacks of the samples, each counting the
# time its samples stand for in ns (a line's TIME_NS, else one interval) instead of
# samples: the text rewritten with that time as each line's weight (lines of no time left
# out, as no writer that shows time shows them).
time_folded() {
	python3 -c 'import sys
iv = 0
for line in open(sys.argv[1]):
    if line.startswith("@interval_us"):
        iv = int(line.split()[1])
    if line[0] in "@#":
        print(line, end="")
        continue
    head, tab, rest = line.partition("\t")
    f = head.split(" ")
    ns = int(f[4]) if len(f) > 4 else iv * 1000
    if ns:
        print(" ".join(f[:4] + ["0", str(ns)]) + tab + rest, end="")' "$1" | tach-decode -q --from samples
}

# through_writers FILE: each writer's output of FILE is read back or checked by its own
# consumer against the samples.
through_writers() {
	local f=$1
	tach-decode -q -F samples "$f" >"$T/w.samples"
	tach-decode -q "$f" >"$T/w.col"
	# folded --value time: each stack's time in us, the samples' own (time to the next)
	# (time_folded counts ns; each line's sum rounded to the nearest us, half up)
	time_folded "$T/w.samples" | python3 -c 'import sys
for l in sys.stdin:
    stack, n = l.rstrip("\n").rsplit(" ", 1)
    print(stack, (int(n) + 500) // 1000)' >"$T/w.tcol"
	if [ -s "$T/w.tcol" ]; then
		diff -u <(sort "$T/w.tcol") <(tach-decode -q --value time "$f" | sort)
		# and the flame graph of those times: the same total, in us
		tach2flamegraph -q --labels cpython --value time "$f" -o "$T/w.tsvg"
		grep -q "<title>all ($(awk '{ s += $NF } END { printf "%d", s }' "$T/w.tcol" |
			python3 -c 'print(f"{int(input()):,}")') us, 100%)</title>" "$T/w.tsvg"
	else
		# samples that carry no time (a JFR CPU recording's): --value time shows the
		# counts, and says so
		diff -u <(sort "$T/w.col") <(tach-decode -q --value time "$f" | sort)
		tach-decode --value time "$f" 2>&1 >/dev/null | grep -q 'the samples carry no time'
	fi
	# TACH (tach-merge writes it) and back: the same samples
	tach-merge -q "$f" -o "$T/w.tach"
	# (each thread's in the same order, a thread being a tid and an interpreter id:
	# tach-merge interleaves threads by time, and samples of one time in any order; TACH
	# has one interval, no time per sample: the times are left out here)
	diff -u <($EXPECT decode <"$T/w.samples" | notime | LC_ALL=C sort -k1,1n -k2,2n -k3,3n -k4) \
		<(tach-decode -q -F samples "$T/w.tach" | $EXPECT decode | notime | LC_ALL=C sort -k1,1n -k2,2n -k3,3n -k4)
	diff -u "$T/w.col" <(tach-decode "$T/w.tach")
	[ "$(tach-decode -F info "$f" | sed -n 's/^samples_decoded: //p')" -eq "$(grep -c $'\t' "$T/w.samples")" ]
	# pprof: what go tool pprof reads
	tach2pprof -q --no-gzip "$f" -o "$T/w.pb"
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/w.pb" 2>/dev/null |
		python3 "$SOURCE_ROOT/tests/pprof_stacks.py" raw >"$T/pgot"
	python3 "$SOURCE_ROOT/tests/pprof_stacks.py" samples <"$T/w.samples" >"$T/pwant"
	diff -u "$T/pwant" "$T/pgot"
	[ -s "$T/pwant" ]
	# pstats: the stats computed independently from the samples
	tach2pstats -q "$f" -o "$T/w.pstats"
	python3 "$SOURCE_ROOT/tests/cli/pstats_check.py" "$T/w.samples" "$T/w.pstats"
	# Sampler trace: read back by sampler2tach
	tach2sampler -q "$f" -o "$T/w.trace"
	sampler2tach -q "$T/w.trace" | tach-decode -F samples >"$T/w.back"
	python3 "$SOURCE_ROOT/tests/cli/sampler_check.py" pairs "$T/w.samples" "$T/w.back"
	# flame graph: well-formed SVG with every function of the profile (in the labels of
	# tach-decode's lines: perf and JFR input are otherwise drawn with their tools' labels)
	tach2flamegraph -q --labels cpython "$f" -o "$T/w.svg"
	xmllint --noout --nonet "$T/w.svg"
	python3 -c 'import html, re, sys
frames = {f for l in open(sys.argv[1]).read().splitlines() for f in l.rsplit(" ", 1)[0].split(";")}
titles = {html.unescape(t) for t in re.findall(r"<title>(.*?) \([0-9,]+ samples", open(sys.argv[2]).read())}
sys.exit("not drawn: %s" % sorted(frames - titles) if frames - titles else 0)' "$T/w.col" "$T/w.svg"
	# speedscope: its own importer sees tach-decode's stacks, each weighing its samples'
	# time (folded stacks whose counts are those times in ns: time_folded)
	tach2speedscope -q "$f" -o "$T/w.json"
	"$SNODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" "$BUNDLE" "$T/w.json" >"$T/imp.txt"
	time_folded "$T/w.samples" >"$T/w.tcol"
	if grep -q '^[^@#]' "$T/w.tcol"; then
		python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" "$T/w.json" "$T/imp.txt" "$T/w.tcol" 0.001
	else
		# samples that carry no time (a JFR CPU recording's) weigh their counts
		python3 "$SOURCE_ROOT/tests/cli/speedscope_check.py" "$T/w.json" "$T/imp.txt" "$T/w.col" 0
	fi
	# callgrind: callgrind_annotate's self, inclusive and total costs are the samples'
	tach2callgrind -q "$f" -o "$T/w.cg"
	python3 "$SOURCE_ROOT/tests/cli/callgrind_check.py" "$T/w.samples" "$T/w.cg"
	# Gecko: the Firefox Profiler's importer sees the same call trees
	tach2gecko -q --no-gzip "$f" -o "$T/w.gecko.json"
	python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$PCLI" "$T/w.gecko.json" "$T/w.samples"
}

# bad JSON OFFSET MESSAGE: JSON in $T/$BAD_FILE read as $BAD_FROM is one line naming the
# file and offset, exit 1, no -o file left.
bad() {
	local f=$T/$BAD_FILE
	printf '%s' "$1" >"$f"
	run tach2pprof --from "$BAD_FROM" -o "$T/out.pb.gz" "$f"
	[ "$status" -eq 1 ]
	[ "$output" = "tach2pprof: $f: offset $2: $3" ] || { echo "got: $output"; return 1; }
	[ ! -e "$T/out.pb.gz" ]
}

# as_speedscope FILE: tach-decode reads FILE (a Chrome trace or a .cpuprofile) to the stacks
# and weights speedscope's own importer makes of it (chrome_speedscope.py says which of
# speedscope's choices are undone first), per stack and in total.
as_speedscope() {
	writer_tools
	"$SNODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$1" >"$T/ss.txt" 2>"$T/ss.err" ||
		{ cat "$T/ss.err"; return 1; }
	tach-decode -q -F samples "$1" >"$T/ours.txt"
	python3 "$SOURCE_ROOT/tests/cli/chrome_speedscope.py" "$1" "$T/ours.txt" "$T/ss.txt"
}

# peer FILE: the peers' file (../shared/peers/corpora/ss/FILE, PEERS_DIR overrides where
# the peers are), skipping when absent (a release tarball has no ../shared).
peer() {
	PEER=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}/corpora/ss/$1
	[ -f "$PEER" ] || skip "no ../shared/peers beside the source tree"
}
