#!/usr/bin/env bats
# Instruments' xctrace export XML (xctrace export --xpath
# '/trace-toc/run/data/table[@schema="time-profile"]'), which no Debian program writes: the
# peers' export (../shared/peers, PEERS or PEERS_DIR elsewhere) folds to what inferno's
# xctrace collapser made of it (expected/formats/xctrace-basic.folded), and our files
# written to Apple's documented output (tests/data/xctrace: refs, frames without a binary,
# several threads and processes, a row without a backtrace) fold to what the collapser's
# rules give, through tests/cli/xctrace_fold.py (Python's XML parser reads them); each
# sample keeps its time, thread and weight; damaged input is one line with the byte
# offset, exit 1.

bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-${PEERS:-$SOURCE_ROOT/../shared/peers}}
	FOLD="python3 $SOURCE_ROOT/tests/cli/xctrace_fold.py"
}

# Our folded lines as inferno writes them: bare frame names, no thread root (the [comm]
# root naming the thread dropped: inferno's lines name no thread).
inferno_style() {
	tach-decode -q --no-thread-frames "$@" | sed 's/^\[comm\]:[^;]*;//' | sort
}

# folds FILE: ours from the file, a pipe and with --from equal the collapser's rules', in
# counts (inferno's), with threads, and in time.
folds() {
	local f=$1
	$FOLD "$f" >"$T/want"
	[ -s "$T/want" ]
	inferno_style "$f" | diff -u "$T/want" -
	$FOLD "$f" --tach >"$T/want"
	tach-decode -q "$f" | sort | diff -u "$T/want" -
	tach-decode -q <"$f" | sort | diff -u "$T/want" -
	tach-decode -q --from xctrace "$f" | sort | diff -u "$T/want" -
	$FOLD "$f" --time >"$T/want"
	tach-decode -q --value time "$f" | sort | diff -u "$T/want" -
}

@test "the peers' xctrace export folds as inferno's xctrace collapser folds it" {
	f=$PEER/formats/xctrace-basic.xml
	[ -e "$f" ] || skip "../shared/peers is not there"
	# the checker's rules give inferno's lines, and so do we
	$FOLD "$f" | diff -u <(sort "$PEER/expected/formats/xctrace-basic.folded") -
	inferno_style "$f" | diff -u <(sort "$PEER/expected/formats/xctrace-basic.folded") -
	folds "$f"
	run tach-decode -v -q "$f"
	[[ ${lines[0]} == "tach-decode: $f: xctrace input" ]]
	# 9581 rows of 1 ms each, their own times, from 57.246708 ms to 9.641250125 s
	tach-decode -F info "$f" >"$T/info"
	grep -qx 'samples: 9581' "$T/info"
	grep -qx 'weight_total_us: 9581000' "$T/info"
	grep -qx 'first_timestamp_us: 57246' "$T/info"
	grep -qx 'threads: 1' "$T/info"
	tach-decode -F samples "$f" | sed -n 4p | grep -q '^8683713 49374 57246 4 1000000	~:0x18d3df0f1:'
}

@test "our xctrace exports: refs, frames without a binary, several threads and processes" {
	for f in "$TESTDATA"/xctrace/*.xml; do
		folds "$f"
		run tach-decode -v -q "$f"
		[[ ${lines[0]} == "tach-decode: $f: xctrace input" ]]
	done
	f=$TESTDATA/xctrace/threads.xml
	tach-decode -q "$f" >"$T/out"
	# entities decoded, Rust names fixed, a worker's thread and its 2.5 ms weights
	grep -qx 'tid:115376;\[comm\]:worker  0x1c2b0 (demo, pid: 4711):4711;thread_start;_pthread_start;<demo::Body as demo::Step>::step;demo::physics::solve;std::vector<int, std::allocator<int>>::push_back(int const&) 2' "$T/out"
	# unsymbolized frames without a binary, behind frames given by ref
	grep -qx 'tid:115363;\[comm\]:Main Thread 0x1c2a3 (demo, pid: 4711):4711;start;main;0x104a2c120;0x104a2c3f8 2' "$T/out"
	[ "$(wc -l <"$T/out")" -eq 4 ]
	# the row with a <sentinel/> for its backtrace is left out, said
	run --separate-stderr tach-decode -o "$T/o" "$f"
	[ "$status" -eq 0 ]
	[[ $stderr == *"1 row without a backtrace (a <sentinel/> in its place) left out"* ]]
	# each sample its own time (µs of sample-time), thread, process and weight (ns)
	tach-decode -F samples "$f" >"$T/s"
	grep -q '^115376 4711 121750 4 2500000	' "$T/s"
	grep -q '^115363 4711 124500 4 1000000	' "$T/s"
	tach-decode -F info "$f" >"$T/info"
	grep -qx 'samples: 7' "$T/info"
	grep -qx 'weight_total_us: 10000' "$T/info"
	grep -qx 'threads: 2' "$T/info"
	# two processes: the kernel's thread (pid 0) and WindowServer's
	tach-decode -q "$TESTDATA/xctrace/processes.xml" | grep -qx 'tid:12081;\[comm\]:0x2f31 (kernel_task, pid: 0):0;0xfffffe0008a1c3d0 2'
}

@test "xctrace exports convert: OTLP and pprof keep the addresses and binaries, Gecko names the threads" {
	f=$TESTDATA/xctrace/threads.xml
	tach2pprof -o "$T/p.pb.gz" "$f"
	[ -s "$T/p.pb.gz" ]
	# Engine::step at 0x100e3e1cc in the demo binary, its UUID the build id; the frames
	# without a binary have an address and no mapping
	tach2otlp --json -o "$T/o.json" "$f"
	python3 - "$T/o.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["dictionary"]
s, maps, attrs = d["stringTable"], d["mappingTable"], d["attributeTable"]
def loc(addr):
    return next(l for l in d["locationTable"] if int(l.get("address", 0)) == addr)
m = maps[loc(0x100e3e1cc)["mappingIndex"]]
assert s[m["filenameStrindex"]] == "/Users/dev/demo/build/demo", m
ids = [attrs[i]["value"].get("stringValue") for i in m["attributeIndices"]]
assert "8A1C2E3F-4B5D-3E6F-9A0B-1C2D3E4F5A6B" in ids, ids
assert "mappingIndex" not in loc(0x104a2c3f8), loc(0x104a2c3f8)
PY
	tach2gecko -o "$T/g.json.gz" "$f"
	zcat "$T/g.json.gz" | grep -q '"worker  0x1c2b0 (demo, pid: 4711) (tid 115376)"'
}

# bad INPUT OFFSET MESSAGE: INPUT (printf's format) is refused in one line at OFFSET, from a
# file and from a pipe with --from.
bad() {
	printf "$1" >"$T/bad.xml"
	run tach-decode -o "$T/out" "$T/bad.xml"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: $T/bad.xml: offset $2: $3"* ]]
	[ ! -e "$T/out" ]
	run tach-decode --from xctrace -o "$T/out" <"$T/bad.xml"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == "tach-decode: <stdin>: offset $2: $3"* ]]
	[ ! -e "$T/out" ]
}

@test "damaged xctrace exports: one line with the byte offset, exit 1, no output" {
	H='<?xml version="1.0"?>\n<trace-query-result>\n<node><schema name="time-profile"/>'
	R='<row><sample-time id="1">5000</sample-time><weight id="2">1000000</weight>'
	# cut short: inside an element, inside a tag
	head -c 2500 "$TESTDATA/xctrace/threads.xml" >"$T/cut.xml"
	run tach-decode "$T/cut.xml"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"cut.xml: offset 2500: XML: the input ends inside "* ]]
	bad "$H$R"'<backtrace id="3"><frame id="4" name="f"/></backtrace></row>' 212 \
		"XML: the input ends inside an element"
	# a ref to no earlier element, and one to another kind of element
	bad "$H$R"'<backtrace ref="9"/></row></node></trace-query-result>' 152 \
		"xctrace export: a <backtrace> ref to 9, which no element before it has as its id"
	bad "$H$R"'<backtrace ref="2"/></row></node></trace-query-result>' 152 \
		"xctrace export: a <backtrace> ref to 2, which is a <weight>"
	bad "$H$R"'<backtrace id="1"/></row></node></trace-query-result>' 152 \
		"xctrace export: id 1 given twice"
	bad "$H$R"'<backtrace id="x3"/></row></node></trace-query-result>' 152 \
		'xctrace export: id="x3", no number'
	# nesting too deep
	bad "$H$R<backtrace id=\"3\">$(printf '<a>%.0s' $(seq 70))" 350 "XML: elements nested deeper than 64"
	# a frame without its name, a row without its time, a time that is no number
	bad "$H$R"'<backtrace id="3"><frame id="4"/></backtrace></row></node></trace-query-result>' 170 \
		"xctrace export: a <frame> without its name"
	bad "$H"'<row><weight id="2">1</weight><backtrace id="3"/></row></node></trace-query-result>' 78 \
		"xctrace export: a row with a backtrace but no <sample-time>"
	bad "$H"'<row><sample-time id="1">5 ms</sample-time></row></node></trace-query-result>' 83 \
		"xctrace export: a <sample-time> that holds no number"
	# not XML after all: an entity that is none, a mismatched end tag, text outside
	bad "$H$R"'<backtrace id="3"><frame id="4" name="a & b"/></backtrace></row></node></trace-query-result>' 192 \
		"XML: an '&' that starts no entity it knows"
	bad "$H"'<row></node></trace-query-result>' 83 "XML: an end tag that does not close the element open"
	bad "$H"'</node></trace-query-result>\nmore\n' 107 "XML: text outside the root element"
	# another XML document, named as xctrace
	printf '<?xml version="1.0"?>\n<svg><g/></svg>\n' >"$T/svg.xml"
	run tach-decode --from xctrace -o "$T/out" "$T/svg.xml"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"svg.xml: offset 22: xctrace export: the root element is not <trace-query-result>" ]]
	# a table of another schema: no time-profile in it
	printf '<?xml version="1.0"?>\n<trace-query-result><node><schema name="cpu-profile"/></node></trace-query-result>\n' >"$T/other.xml"
	run tach-decode -o "$T/out" "$T/other.xml"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"other.xml: offset 105: xctrace export: no time-profile table"* ]]
	# limits
	run tach-decode --max-depth 2 -o "$T/out" "$TESTDATA/xctrace/threads.xml"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"threads.xml: offset 1782: stack deeper than the limit of 2 frames"* ]]
	# at the fourth row with a backtrace, the third frame of the first
	run tach-decode -F samples --max-samples 3 -o "$T/out" "$TESTDATA/xctrace/threads.xml"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"threads.xml: offset 3240: more than 3 samples (see --max-samples)" ]]
}
