#!/usr/bin/env bats
# V8's --prof tick logs. A program recorded now by node --prof and preprocessed by the same
# node (--prof-process --preprocess): its JSON read as speedscope's own importer reads it
# (its npm bundle, run by speedscope_import.mjs --any): the same stacks, times and total.
# The raw log read into the same ticks as the JSON of the same log: with the preprocessor's
# nm switched off (--nm=/bin/false) sample for sample, library addresses named "(LIB) PATH"
# on both sides; with the ELF symbolizer on, the same samples where a library address
# becomes its symbol. (The preprocessor's own nm reading differs in its C++ frames, which
# are not compared: node's polyfill keeps only the first MiB of nm's output, and a non-PIE
# executable's symbols are placed the .text's file offset less its address away, so most
# of node's own symbols miss.) Our small logs, the peers' node 8 log, damaged files.

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/v8log
	P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
}

summed() {
	awk '{ n = split($0, a, " "); w[substr($0, 1, length($0) - length(a[n]) - 1)] += a[n] }
		END { for (s in w) if (w[s]) print s, w[s] }' | LC_ALL=C sort
}

# every tick's time, summed: what the samples stand for (an empty stack too, which the
# collapsed output has no line for)
our_total() {
	tach-decode -q -F info "$@" | awk -F': ' '$1 == "weight_total_us" { print $2 }'
}

# The preprocessed JSON $1 as speedscope reads it and as we do: stacks and times, total.
same_as_speedscope() {
	local f=$1
	cp "$f" "$T/x.v8log.json"
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/x.v8log.json" \
		>"$T/imp" 2>"$T/imp.err"
	grep -qx 'Importing as --prof-process v8 log' "$T/imp.err"
	python3 "$SOURCE_ROOT/tests/cli/v8log_speedscope.py" "$T/imp" >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q --no-thread-frames --value time "$f" | summed >"$T/got"
	diff -u "$T/want" "$T/got"
	tach-decode -q --no-thread-frames --value time <"$f" | summed | diff -u "$T/want" -
	[ "$(awk -F'\t' '/^#/ { print $4 }' "$T/imp")" = "$(our_total "$f")" ]
}

# A log's samples, the header lines left out (the raw log knows the interval, its JSON
# not): a line that stands for one interval, which the writer gives no time, gets the
# interval's, so that a tick exactly one interval after the one before reads the same
# from the log and from its JSON.
samples() {
	tach-decode -q -F samples "$@" | awk -F'\t' -v OFS='\t' '
		/^@interval_us / { split($0, a, " "); iv = a[2]; next }
		/^@/ { next }
		{ if (iv && split($1, h, " ") == 4) $1 = $1 " " iv * 1000; print }'
}

# The preprocessor's JSON of log $1 into $2 (node prints a line before it when the log is
# of another V8 version).
preprocess() {
	"$NODE" --prof-process --preprocess "${@:3}" "$1" 2>/dev/null | sed -n '/^{/,$p' >"$2"
	[ -s "$2" ]
}

@test "node --prof now: the JSON as speedscope reads it; the raw log as the same ticks" {
	speedscope_bundle
	mkdir "$T/rec"
	cp "$D/work.js" "$T/rec/"
	(cd "$T/rec" && "$NODE" --prof work.js >/dev/null)
	local log
	log=$(ls "$T"/rec/isolate-*-v8.log)
	preprocess "$log" "$T/nm.json"
	same_as_speedscope "$T/nm.json"
	grep -q ';work.js:(anonymous work.js:1):1;work.js:run:9' "$T/got"
	grep -q ';work.js:mid:8;work.js:leaf:3' "$T/got"
	# the raw log without symbols: the preprocessor's JSON without nm, sample for sample
	preprocess "$log" "$T/nonm.json" --nm=/bin/false --objdump=/bin/false --readelf=/bin/false
	same_as_speedscope "$T/nonm.json"
	samples --no-symbolize "$log" >"$T/raw.s"
	samples "$T/nonm.json" | diff -u - "$T/raw.s"
	grep -q '(LIB) [^:]*/node:' "$T/raw.s"
	[ "$(our_total "$log")" = "$(our_total "$T/nm.json")" ]
	# with the ELF symbolizer: the same samples, some library addresses named
	samples "$log" >"$T/sym.s"
	python3 - "$T/raw.s" "$T/sym.s" <<'EOF'
import sys
a = open(sys.argv[1]).read().splitlines()
b = open(sys.argv[2]).read().splitlines()
assert len(a) == len(b), (len(a), len(b))
named = 0
for x, y in zip(a, b):
    hx, _, fx = x.partition('\t')
    hy, _, fy = y.partition('\t')
    assert hx == hy, (x, y)
    fx, fy = fx.split(';'), fy.split(';')
    assert len(fx) == len(fy), (x, y)
    for u, v in zip(fx, fy):
        if u != v:
            assert u.startswith('~:(LIB) '), (u, v)
            named += 1
assert named > 0
EOF
	run tach-decode -v -q -F info "$log"
	[[ ${lines[0]} == "tach-decode: $log: v8log input" ]]
	grep -qx 'sample_interval_us: 1000' <(tach-decode -q -F info "$log")
}

@test "our JSON: speedscope's names, the walk of s, unknown and address ids, tm order" {
	speedscope_bundle
	same_as_speedscope "$D/small.v8log.json"
	grep -qx 'node::Start(int, char\*\*);(c++) v8::internal::Heap::Collect 100' "$T/got"
	grep -qx '(IC) LoadIC;(unknown file):x:7;(LIB) /usr/lib/libfake.so 100' "$T/got"
	grep -qx '0x1869f;0x11;(unknown type);(unknown type);(unknown type);(SFI) odd 150' "$T/got"
	# each tick a sample at its tm, in time order, the time from the previous tick's
	samples "$D/small.v8log.json" | cut -f1 >"$T/heads"
	[ "$(cut -d' ' -f3 "$T/heads" | tr '\n' ' ')" = "100 200 200 300 450 500 700 " ]
	[ "$(sed -n 3p "$T/heads")" = "0 0 200 4" ]
	[ "$(sed -n 7p "$T/heads")" = "0 0 700 4 200000" ]
	# the VM state is a label, which pprof keeps
	tach2pprof -q "$D/small.v8log.json" -o "$T/s.pb.gz"
	python3 "$SOURCE_ROOT/tests/cli/pprof_labels.py" "$T/s.pb.gz" | grep -qx 'label vm state'
}

@test "our raw log: moves, deletes left alone, function entries, relative frames, escapes, as node's tick processor reads them" {
	speedscope_bundle
	preprocess "$D/small.log" "$T/small.json"
	samples "$T/small.json" | diff -u - <(samples "$D/small.log")
	same_as_speedscope "$T/small.json"
	# the line whose state the tick processor does not know made no entry
	[ "$(grep -c skipped "$T/small.json")" -eq 0 ]
	[ "$(samples "$D/small.log" | grep -c skipped)" -eq 0 ]
	# a pc past a function's zero-size entry, inside the code below it, is in no entry
	samples "$D/small.log" | grep -q $'^0 0 350 4 50000\t~:script-code [^;]*;/srv/app/main.js:inner:7'
}

@test "the peers' node 8 log (macOS, its libraries not here): what node's JSON of it says" {
	[ -f "$P/formats/v8-isolate.log" ] || skip "no ../shared/peers"
	speedscope_bundle
	local f=$P/formats/v8-isolate.log
	preprocess "$f" "$T/peer.json"
	samples "$T/peer.json" | diff -u - <(samples "$f")
	same_as_speedscope "$T/peer.json"
	# one sample per tick; the time up to the last tick's
	[ "$(samples "$f" | wc -l)" -eq "$(grep -c '^tick,' "$f")" ]
	[ "$(our_total "$f")" = "$(grep '^tick,' "$f" | cut -d, -f3 | sort -n | tail -n 1)" ]
	# node 8 quoted its names, and today's tick processor keeps the quotes
	grep -q '^(LIB) "/usr/local/bin/node" ' "$T/got"
	grep -q 'bootstrap_node.js:' "$T/got"
}

@test "damaged tick logs: one line with the offset or line, exit 1" {
	local j=$D/small.v8log.json l=$D/small.log
	head -c 700 "$j" >"$T/cut.json"
	run tach-decode -q --from v8log "$T/cut.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"cut.json: offset "* ]]
	sed 's/"tm": 300,/"tm": "300",/' "$j" >"$T/tm.json"
	run tach-decode -q "$T/tm.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"offset "*"a tick's tm must be an integer"* ]]
	sed 's/"s": \[7, 9, 3\]/"s": [7, "x"]/' "$j" >"$T/s.json"
	run tach-decode -q "$T/s.json"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"offset "*"a tick's stack holds integers"* ]]
	sed 's/"type": "CPP"}/"type": 7}/' "$j" >"$T/type.json"
	run tach-decode -q "$T/type.json"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"offset "*"a code entry's type must be a string"* ]]
	sed 's/^tick,0x30010,150,/tick,zz,150,/' "$l" >"$T/pc.log"
	run tach-decode -q "$T/pc.log"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"pc.log:20: tick: the pc is no number" ]]
	sed 's/^code-creation,Stub,0,13,0x7f0000003000,64,CEntry$/code-creation,Stub,0,13/' "$l" >"$T/cc.log"
	run tach-decode -q "$T/cc.log"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"cc.log:10: code-creation: fewer than 6 fields" ]]
	sed 1d "$l" >"$T/nover.log"
	run tach-decode -q --from v8log "$T/nover.log"
	[ "$status" -eq 1 ]
	[[ ${lines[0]} == *"nover.log: offset 0: not a V8 tick log: its first line is no v8-version record" ]]
	# a log cut inside its last line: that line is left out, with a warning
	head -c -5 "$l" >"$T/trunc.log"
	run --separate-stderr tach-decode -F samples "$T/trunc.log"
	[ "$status" -eq 0 ]
	[[ $stderr == *"the log ends inside a line, which is left out"* ]]
	run tach-decode -q --strict "$T/trunc.log"
	[ "$status" -eq 1 ]
}
