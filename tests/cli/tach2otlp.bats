#!/usr/bin/env bats
# tach2otlp: OpenTelemetry profiles out (issue 56). protoc, given the schema from
# ../shared/spec/sources/otlp (never copied here; the tests skip where it is absent),
# decodes the output of a TACH profile, a perf.data recorded now, a V8 profile recorded now
# by node, a gperftools profile and a pprof profile of several sample types; the dictionary
# keeps the schema's rules; the OTLP/JSON form says what protoc says of the protobuf form
# (tests/cli/otlp_json_check.py); bad usage and output errors as every program has them.

setup() {
	T=$BATS_TEST_TMPDIR
	SPEC=${SPEC:-$SOURCE_ROOT/../shared/spec}/sources/otlp
	SHARED_FIX=${SHARED_FIXTURES:-$SOURCE_ROOT/../shared/fixtures}
	GEN="python3 $SOURCE_ROOT/tests/cli/pprof_gen.py"
	JCHECK="python3 $SOURCE_ROOT/tests/cli/otlp_json_check.py"
}

need_spec() {
	command -v protoc >/dev/null || skip "protoc is not installed (Debian: protobuf-compiler)"
	[ -f "$SPEC/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" ] ||
		skip "the OTLP schema is not at $SPEC"
}

# decode FILE: protoc's text of an ExportProfilesServiceRequest; fails when protoc does.
decode() {
	protoc --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		-I "$SPEC" "$SPEC/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" <"$1"
}

# field TEXT NAME: the values of every "NAME: value" line of protoc's text.
field() {
	sed -n "s/^ *$2: //p" "$1"
}

# check_out INPUT [tach2otlp options]: the output decodes, has a Profile per sample type
# with the input's samples in it, and its dictionary tables start with their zero values;
# the JSON form says the same. $T/o.txt is the decoded text.
check_out() {
	local f=$1
	shift
	tach2otlp -q "$@" "$f" -o "$T/o.otlp"
	decode "$T/o.otlp" >"$T/o.txt"
	[ -s "$T/o.txt" ]
	python3 - "$T/o.txt" <<'EOF'
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
# the dictionary's first entries: empty messages, and the string table's ""
d = lines.index("dictionary {")
for t in ("mapping_table", "location_table", "function_table", "stack_table",
          "attribute_table"):
    i = next(j for j in range(d, len(lines)) if lines[j] == "  %s {" % t)
    assert lines[i + 1] == "  }", "%s[0] is not empty" % t
strings = [l[len("  string_table: "):] for l in lines[d:] if l.startswith("  string_table: ")]
assert strings[0] == '""', "string_table[0] is %s" % strings[0]
assert len(strings) == len(set(strings)), "a string twice"
# every profile has samples, every sample as many values as timestamps (or no timestamps)
profiles = sum(1 for l in lines if l == "    profiles {")
assert profiles >= 1, "no profile"
values = times = 0
for l in lines[:d] + ["      samples {"]:
    if l == "      samples {":
        assert times == 0 or values == times, "%d values, %d timestamps" % (values, times)
        values = times = 0
    values += l.startswith("        values: ")
    times += l.startswith("        timestamps_unix_nano: ")
EOF
	tach2otlp -q --json "$@" "$f" -o "$T/o.json"
	$JCHECK "$T/o.txt" "$T/o.json"
	# and the JSON form reads back (detected) to the protobuf form's samples
	tach-decode -q -F samples "$T/o.otlp" >"$T/o.samples"
	tach-decode -q -F samples "$T/o.json" | diff -u "$T/o.samples" -
}

@test "TACH: protoc decodes it; samples/count and wall/nanoseconds, each sample at its time" {
	need_spec
	local f=$FIXTURES/tach/cases/opcodes_columns.tach
	check_out "$f"
	# two profiles: the counts and the time, the period the interval
	[ "$(grep -c '^    profiles {' "$T/o.txt")" -eq 2 ]
	[ "$(field "$T/o.txt" string_table | sed -n '2,$p' | grep -cx '"samples"\|"count"\|"wall"\|"nanoseconds"')" -eq 4 ]
	iv=$(tach-decode -F samples "$f" | sed -n 's/^@interval_us //p')
	[ "$(field "$T/o.txt" period | sort -u)" = "$((iv * 1000))" ]
	# each timestamp (ns) is a sample's of the samples text (µs), in both profiles; the
	# counts add up to the samples
	tach-decode -F samples "$f" | awk -F'\t' '!/^[@#]/ { split($1, h, " "); print h[3] "000" }' |
		sort -u >"$T/want"
	field "$T/o.txt" timestamps_unix_nano | sort -u >"$T/got"
	[ -z "$(comm -13 "$T/want" "$T/got")" ]
	[ "$(field "$T/o.txt" timestamps_unix_nano | wc -l)" -eq $((2 * $(grep -c . "$T/got"))) ]
	want=$(tach-decode -F samples "$f" | grep -c $'\t')
	got=$(awk '/^    profiles \{/ { p++ } p == 1 && /^        values: / { s += $2 } END { print s }' "$T/o.txt")
	[ "$want" = "$got" ]
	# the frame's end line, end column and opcode as attributes, thread id as thread.id
	grep -qx '  string_table: "tachfmt.frame.opcode"' "$T/o.txt"
	grep -qx '  string_table: "thread.id"' "$T/o.txt"
}

@test "gperftools: mappings with their files and build IDs, native frames by address" {
	need_spec
	local f=$FIXTURES/gperf/hotloop/hotloop.prof
	check_out "$f"
	# every mapping of pprof's own reading of it, with its range
	tach2pprof -q --no-gzip "$f" -o "$T/p.pb"
	[ "$(grep -c '^  mapping_table {' "$T/o.txt")" -gt 1 ]
	grep -q '^    memory_start: ' "$T/o.txt"
	grep -q '^    address: ' "$T/o.txt"
	# an unsymbolized location has an address and no line: a backend can symbolize it
	python3 - "$T/o.txt" <<'EOF'
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
bare = 0
for i, l in enumerate(lines):
    if l == "  location_table {" and lines[i + 1].startswith("    mapping_index: "):
        j = i + 1
        while lines[j] != "  }":
            j += 1
        body = lines[i + 1:j]
        bare += not any(b.startswith("    lines {") for b in body)
assert bare > 0, "no unsymbolized location"
EOF
	# resource: the program's name and path
	grep -A3 'key: "process.executable.name"' "$T/o.txt" | grep -q 'string_value: "hotloop"'
}

@test "pprof with three sample types: a Profile per type, values as go tool pprof reads them" {
	need_spec
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	$GEN types >"$T/types.pb"
	check_out "$T/types.pb"
	[ "$(grep -c '^    profiles {' "$T/o.txt")" -eq 3 ]
	# each Profile's type and the sum of its values, as pprof's -raw samples give them
	HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/types.pb" 2>/dev/null | awk '
		/^Samples:/ { on = 1; next }
		on && /^Locations/ { exit }
		on && !head { n = split($0, h, " "); head = 1; next }
		on { for (i = 1; i <= n; i++) { v = $i; sub(/:$/, "", v); s[i] += v } }
		END { for (i = 1; i <= n; i++) { t = h[i]; sub(/\[dflt\]$/, "", t); print t, s[i] } }' >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 3 ]
	# the default type (alloc_space) first: viewers show profiles[0] by default
	python3 - "$T/o.txt" <<'EOF2' >"$T/got.all"
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
strings = [l[len("  string_table: "):].strip('"') for l in lines if l.startswith("  string_table: ")]
out, typ = [], False
for l in lines:
    if l == "    profiles {":
        out.append([None, None, 0])
    elif l == "      sample_type {":
        typ = True
    elif typ and l.startswith("        type_strindex: "):
        out[-1][0] = strings[int(l.split(": ")[1])]
    elif typ and l.startswith("        unit_strindex: "):
        out[-1][1] = strings[int(l.split(": ")[1])]
        typ = False
    elif l.startswith("        values: "):
        out[-1][2] += int(l.split(": ")[1])
for t, u, v in out:
    print("%s/%s %d" % (t, u, v))
EOF2
	[ "$(head -1 "$T/got.all")" = "alloc_space/bytes 4608" ]
	sort "$T/want" >"$T/want.s"
	sort "$T/got.all" | diff -u "$T/want.s" -
}

@test "perf.data recorded now: protoc decodes it; native frames keep addresses and mappings" {
	need_spec
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	perf record -q -e cpu-clock -o "$T/probe.data" true >"$T/probe.log" 2>&1 ||
		skip "perf_event_open refused: $(head -1 "$T/probe.log")"
	cc -O0 -fno-omit-frame-pointer -pthread "$TESTDATA/perf/livetest.c" -o "$T/livetest"
	(cd "$T" && perf record -q -F 499 -e cpu-clock -g -o fp.data ./livetest >/dev/null 2>fp.log)
	check_out "$T/fp.data"
	grep -q '^    address: ' "$T/o.txt"
	# one timestamp per perf sample, the perf clock periods as the time values
	n=$(perf script -i "$T/fp.data" -F time 2>/dev/null | grep -c .)
	[ "$(field "$T/o.txt" timestamps_unix_nano | wc -l)" -eq $((2 * n)) ]
}

@test "node --cpu-prof recorded now: protoc decodes it; each sample's time to the next" {
	need_spec
	command -v node >/dev/null || skip "node is not installed (Debian: nodejs)"
	mkdir -p "$T/rec"
	cp "$TESTDATA/v8/hot.js" "$T/rec/"
	(cd "$T/rec" && node --cpu-prof --cpu-prof-dir "$T/rec" --cpu-prof-name hot.cpuprofile \
		--cpu-prof-interval 250 hot.js)
	check_out "$T/rec/hot.cpuprofile"
	# the time values are the samples' own (TIME_NS of the samples text)
	tach-decode -q -F samples "$T/rec/hot.cpuprofile" | awk -F'\t' '
		/^@interval_us / { split($0, a, " "); iv = a[2] }
		!/^[@#]/ { n = split($1, h, " "); t += n > 4 ? h[5] : iv * 1000 } END { print t }' >"$T/want"
	python3 - "$T/o.txt" <<'EOF' >"$T/got"
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
p, sums = -1, []
for l in lines:
    if l == "    profiles {":
        p += 1
        sums.append(0)
    elif l.startswith("        values: "):
        sums[p] += int(l.split(": ")[1])
print(sums[1])
EOF
	diff -u "$T/want" "$T/got"
}

@test "--no-timestamps: one summed value per Sample, no timestamps" {
	need_spec
	local f=$FIXTURES/tach/cases/rle_runs.tach
	check_out "$f" --no-timestamps
	run grep -c timestamps_unix_nano "$T/o.txt"
	[ "$output" = 0 ]
	[ "$(field "$T/o.txt" values | awk '{ s += $1 } END { print s }')" -gt 0 ]
	# the counts add up to the samples of the input, in the first Profile
	want=$(tach-decode -F info "$f" | sed -n 's/^samples_decoded: //p')
	got=$(awk '/^    profiles \{/ { p++ } p == 1 && /^        values: / { s += $2 } END { print s }' "$T/o.txt")
	[ "$want" = "$got" ]
}

@test "--service names the service; the scope is tachfmt's" {
	need_spec
	check_out "$FIXTURES/tach/cases/single_sample.tach" --service checkout
	grep -A3 'key: "service.name"' "$T/o.txt" | grep -q 'string_value: "checkout"'
	grep -qx '      name: "tachfmt"' "$T/o.txt"
}

@test "usage and output errors" {
	run tach2otlp --service
	[ "$status" -eq 2 ]
	run tach2otlp -o /dev/full "$FIXTURES/tach/cases/single_sample.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach2otlp: "* ]]
	# binary output is refused on a terminal without -f (script gives it one)
	command -v script >/dev/null || skip "script (bsdutils) is not installed"
	run script -qec "tach2otlp $FIXTURES/tach/cases/single_sample.tach" /dev/null
	[ "$status" -eq 2 ]
	# no -o file is left behind by a failure
	printf 'not a profile\x01' >"$T/bad"
	run tach2otlp --from tach "$T/bad" -o "$T/out.otlp"
	[ "$status" -eq 1 ]
	[ ! -e "$T/out.otlp" ]
}

# ---- reading OTLP back ----

# samples FILE: the samples text's sample lines, sorted (OTLP groups a stack's samples, the
# reader gives them back in time order: equal times may come in another order).
samples() {
	tach-decode -q -F samples "$1" | grep -v '^[@#]' | LC_ALL=C sort
}

# round_trip FILE [tach2otlp options]: FILE -> OTLP -> samples text gives FILE's samples.
round_trip() {
	local f=$1
	shift
	samples "$f" >"$T/want"
	[ -s "$T/want" ]
	tach2otlp -q "$@" "$f" -o "$T/rt.otlp"
	samples "$T/rt.otlp" >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "round trips: TACH -> OTLP -> samples text, the same samples (stacks, threads, times, values)" {
	local f n=0
	for f in "$FIXTURES"/tach/cases/*.tach; do
		case $f in */empty*) continue ;; esac
		# two TACH table rows that print alike (FRAME@1) are one Location by value
		if [ "${f##*/}" = synthetic_frames.tach ]; then
			samples "$f" | sed 's/@[0-9]*//g' >"$T/want"
			tach2otlp -q "$f" -o "$T/rt.otlp"
			samples "$T/rt.otlp" | sed 's/@[0-9]*//g' | diff -u "$T/want" -
		else
			round_trip "$f" || { echo "in $f"; return 1; }
		fi
		n=$((n + 1))
	done
	[ "$n" -ge 10 ]
	# the interval and the profile's mode come back
	tach2otlp -q "$FIXTURES/tach/cases/rle_runs.tach" -o "$T/r.otlp"
	[ "$(tach-decode -F samples "$T/r.otlp" | grep '^@interval_us')" = \
	  "$(tach-decode -F samples "$FIXTURES/tach/cases/rle_runs.tach" | grep '^@interval_us')" ]
	run tach-decode -v -F info "$T/r.otlp"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $T/r.otlp: otlp input" ]
	# pipes both ways alike
	samples "$FIXTURES/tach/cases/rle_runs.tach" >"$T/want"
	cat "$FIXTURES/tach/cases/rle_runs.tach" | tach2otlp -q | tach-decode -q -F samples - |
		grep -v '^[@#]' | LC_ALL=C sort | diff -u "$T/want" -
}

@test "round trips: gperftools (native frames, mappings, inline runs) and pprof's own test profiles" {
	local f
	for f in "$FIXTURES"/gperf/{hotloop/hotloop,long/long,recursive/recursive}.prof; do
		[ -f "$f" ] || continue
		round_trip "$f" || { echo "in $f"; return 1; }
	done
	# the frames keep their addresses and mappings: pprof output of the OTLP has them
	tach2otlp -q "$FIXTURES/gperf/hotloop/hotloop.prof" -o "$T/g.otlp"
	tach2pprof -q --no-gzip "$T/g.otlp" -o "$T/a.pb"
	tach2pprof -q --no-gzip "$FIXTURES/gperf/hotloop/hotloop.prof" -o "$T/b.pb"
	cmp <(protoc --decode_raw <"$T/a.pb" | grep -c '^  3: ') <(protoc --decode_raw <"$T/b.pb" | grep -c '^  3: ')
}

@test "round trips: perf.data and node --cpu-prof recorded now" {
	if command -v perf >/dev/null &&
		perf record -q -e cpu-clock -o "$T/probe.data" true >"$T/probe.log" 2>&1; then
		cc -O0 -fno-omit-frame-pointer -pthread "$TESTDATA/perf/livetest.c" -o "$T/livetest"
		(cd "$T" && perf record -q -F 499 -e cpu-clock -g -o fp.data ./livetest >/dev/null 2>fp.log)
		round_trip "$T/fp.data"
	else
		echo "# perf cannot record here: perf.data not checked" >&3
	fi
	command -v node >/dev/null || skip "node is not installed (Debian: nodejs)"
	mkdir -p "$T/rec"
	cp "$TESTDATA/v8/hot.js" "$T/rec/"
	(cd "$T/rec" && node --cpu-prof --cpu-prof-dir "$T/rec" --cpu-prof-name hot.cpuprofile \
		--cpu-prof-interval 250 hot.js)
	round_trip "$T/rec/hot.cpuprofile"
	round_trip "$TESTDATA/v8/node_hot.cpuprofile"
}

# pprof's view, without its "File:" line (the mapping's name says the format read).
view() { # profile pprof-args...
	local f=$1
	shift
	HOME=$T PPROF_TMPDIR=$T go tool pprof "$@" "$f" 2>/dev/null | { grep -v '^File: ' || true; }
}

@test "pprof -> OTLP -> pprof: go tool pprof -top equals the direct conversion's, for every sample type" {
	command -v go >/dev/null || skip "go not installed (Debian package golang-go)"
	local f i
	$GEN types >"$T/types.pb"
	$GEN labels >"$T/labels.pb"
	for f in "$T/types.pb" "$T/labels.pb" "$FIXTURES/gperf/hotloop/hotloop.pprof.pb.gz"; do
		tach2pprof -q "$f" -o "$T/direct.pb.gz"
		tach2otlp -q "$f" -o "$T/via.otlp"
		tach2pprof -q "$T/via.otlp" -o "$T/via.pb.gz"
		view "$T/direct.pb.gz" -top >"$T/want"
		view "$T/via.pb.gz" -top >"$T/got"
		diff -u "$T/want" "$T/got"
		[ "$(wc -l <"$T/want")" -ge 4 ]
		for i in $(view "$T/direct.pb.gz" -raw | sed -n '/^Samples:/{n;p;q}' | sed 's/\[dflt\]//g'); do
			view "$T/direct.pb.gz" -top -sample_index="${i%%/*}" >"$T/want"
			view "$T/via.pb.gz" -top -sample_index="${i%%/*}" >"$T/got"
			diff -u "$T/want" "$T/got"
		done
		view "$T/direct.pb.gz" -tags >"$T/want"
		view "$T/via.pb.gz" -tags >"$T/got"
		diff -u "$T/want" "$T/got"
	done
}

# The fixtures' copy of ../shared/fixtures/jfr, else the shared folder itself.
ap_otlp() {
	local d
	for d in "$FIXTURES/jfr" "$SHARED_FIX/jfr"; do
		[ -f "$d/ap-cpu.otlp" ] && { AP=$d; return 0; }
	done
	skip "async-profiler's OTLP fixture (jfr/ap-cpu.otlp) is not here"
}

@test "async-profiler's OTLP (jfrconv -o otlp): the stacks and counts of its own folded output" {
	ap_otlp
	run tach-decode -v -F info "$AP/ap-cpu.otlp"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "tach-decode: $AP/ap-cpu.otlp: otlp input" ]
	[[ "$output" == *"samples_selected: 1558"* ]]
	tach-decode -q --no-thread-frames "$AP/ap-cpu.otlp" >"$T/ours"
	python3 "$SOURCE_ROOT/tests/cli/otlp_ap_check.py" "$AP/ap-cpu.collapsed" "$T/ours"
	# ... and of tachfmt's own reading of the recording it came from, in jfrconv's words
	tach-decode -q --labels async-profiler "$AP/ap-cpu.jfr" >"$T/jfr.col"
	python3 "$SOURCE_ROOT/tests/cli/otlp_ap_check.py" "$T/jfr.col" "$T/ours"
	# its threads: "[name tid=N]" names give the thread ids
	tach-decode -q "$AP/ap-cpu.otlp" >"$T/ours"
	python3 "$SOURCE_ROOT/tests/cli/otlp_ap_check.py" --threads "$AP/ap-cpu.threads.collapsed" "$T/ours"
	# its samples at their own times, in time order, 1 ms each (its period)
	tach-decode -q -F samples "$AP/ap-cpu.otlp" | awk -F'\t' '
		/^@interval_us / { iv = $0 }
		!/^[@#]/ { split($1, h, " "); if (h[3] < last) bad++; last = h[3] }
		END { print iv; print bad + 0 }' >"$T/got"
	printf '@interval_us 1000\n0\n' | diff -u - "$T/got"
}

@test "every writer takes OTLP input" {
	local f=$T/in.otlp
	tach2otlp -q "$FIXTURES/tach/cases/threads_interleaved.tach" -o "$f"
	tach-merge -q "$f" -o "$T/o.tach"
	samples "$FIXTURES/tach/cases/threads_interleaved.tach" >"$T/want"
	samples "$T/o.tach" | diff -u "$T/want" -
	local p
	for p in "tach2pprof -o $T/o.pb.gz" "tach2gecko -o $T/o.gecko" "tach2speedscope -o $T/o.json" \
		"tach2flamegraph -o $T/o.svg" "tach2callgrind -o $T/o.cg" "tach2pstats -o $T/o.pstats" \
		"tach2sampler -o $T/o.trace" "tach-decode -o $T/o.folded" "tach2otlp -o $T/o2.otlp"; do
		$p -q "$f" || { echo "$p failed"; return 1; }
		[ -s "${p##* }" ] || { echo "$p wrote nothing"; return 1; }
	done
	# the folded stacks are the input's
	diff -u <(tach-decode "$FIXTURES/tach/cases/threads_interleaved.tach") "$T/o.folded"
	# OTLP again: the same bytes
	cmp "$f" "$T/o2.otlp"
	# async-profiler's too
	ap_otlp
	tach2pprof -q "$AP/ap-cpu.otlp" -o "$T/ap.pb.gz"
	tach2gecko -q "$AP/ap-cpu.otlp" -o "$T/ap.gecko"
	tach-merge -q "$AP/ap-cpu.otlp" -o "$T/ap.tach"
	[ "$(tach-decode -q "$T/ap.tach" | awk '{ s += $NF } END { print s }')" -eq 1558 ]
}

@test "detection: OTLP is not taken for pprof, nor pprof for OTLP" {
	tach2otlp -q "$FIXTURES/tach/cases/single_sample.tach" -o "$T/a.otlp"
	run tach-decode -v -F info "$T/a.otlp"
	[ "${lines[0]}" = "tach-decode: $T/a.otlp: otlp input" ]
	# pprof files of every shape we have stay pprof's
	$GEN types >"$T/types.pb"
	tach2pprof -q --no-gzip "$FIXTURES/tach/cases/single_sample.tach" -o "$T/b.pb"
	for f in "$T/types.pb" "$T/b.pb" "$FIXTURES/gperf/hotloop/hotloop.pprof.pb.gz"; do
		run tach-decode -v -F info "$f"
		[ "${lines[0]}" = "tach-decode: $f: pprof input" ] || { echo "$f: ${lines[0]}"; return 1; }
	done
	# the pprof reader refuses OTLP, the OTLP reader pprof
	run tach-decode -q --from pprof "$T/a.otlp"
	[ "$status" -eq 1 ]
	run tach-decode -q --from otlp "$T/b.pb"
	[ "$status" -eq 1 ]
	[[ "$output" == "tach-decode: $T/b.pb: offset "* ]]
}

@test "damaged OTLP: one line with the file and offset, exit 1, no -o file" {
	tach2otlp -q "$FIXTURES/tach/cases/opcodes_columns.tach" -o "$T/a.otlp"
	local n
	n=$(stat -c %s "$T/a.otlp")
	head -c $((n - 3)) "$T/a.otlp" >"$T/cut.otlp"
	run tach2pprof --from otlp "$T/cut.otlp" -o "$T/out.pb.gz"
	[ "$status" -eq 1 ]
	[[ "$output" =~ ^"tach2pprof: $T/cut.otlp: offset "[0-9]+": " ]] || { echo "$output"; return 1; }
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$T/out.pb.gz" ]
	# a stack index past the stack table, made by protoc from the decoded text
	need_spec
	decode "$T/a.otlp" | sed '0,/stack_index: 1$/s//stack_index: 127/' |
		protoc --encode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
			-I "$SPEC" "$SPEC/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" >"$T/bad.otlp"
	run tach-decode --from otlp "$T/bad.otlp"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stack index 127 out of range"* ]] || { echo "$output"; return 1; }
}

@test "issue 56: process.pid and thread.name from a process root, mapping flags as the pprof namespace's attributes; read back as they were" {
	need_spec
	# perf script's text with pid/tid: each sample's thread.id, thread.name and process.pid
	local f=$FIXTURES/perf/inputs/perf-iperf-stacks-pidtid-01.txt
	check_out "$f"
	python3 - "$T/o.txt" "$f" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# perf script's sample lines: "comm pid/tid [cpu] time: ..."
heads = re.findall(r'^(\S+) +(\d+)/\d+ ', open(sys.argv[2]).read(), re.M)
strings = re.findall(r'^  string_table: "(.*)"$', text, re.M)
attrs = []
for body in re.findall(r'^  attribute_table \{\n(.*?)^  \}\n', text, re.M | re.S):
    k = re.search(r'key_strindex: (\d+)', body)
    v = re.search(r'(int_value|string_value|bool_value): (.*)', body)
    attrs.append((strings[int(k.group(1))] if k else "", v.group(2) if v else None))
samples = text.split("      samples {")[1:]
pids, names = set(), set()
for s in samples:
    got = dict(attrs[int(i)] for i in re.findall(r'attribute_indices: (\d+)', s))
    assert "thread.id" in got, got
    pids.add(got.get("process.pid"))
    names.add(got.get("thread.name"))
assert pids == {p for _, p in heads}, pids
assert names == {'"%s"' % c for c, _ in heads}, names
# perf's kernel frames are symbolized: their mapping says it
assert ("pprof.mapping.has_functions", "true") in attrs, attrs[:8]
PY
	# read back: the same samples, and the same stacks (the process root frame once)
	tach-decode -q -F samples "$f" | grep -v '^@' | LC_ALL=C sort >"$T/want"
	tach-decode -q -F samples "$T/o.otlp" | grep -v '^@' | LC_ALL=C sort | diff -u "$T/want" -
	# the mapping flags come back: OTLP of the OTLP has them again
	tach2otlp -q "$T/o.otlp" -o "$T/o2.otlp"
	decode "$T/o2.otlp" | grep -q 'string_table: "pprof.mapping.has_functions"'
	# a Chrome trace's named threads: the pid is the trace's
	printf '%s' '[{"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"CrRendererMain"}},{"ph":"P","name":"Profile","pid":7,"tid":8,"id":"0x1","args":{"data":{"startTime":1}}},{"ph":"P","name":"ProfileChunk","pid":7,"tid":9,"id":"0x1","args":{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":2,"parent":1,"callFrame":{"functionName":"a"}}],"samples":[2]},"timeDeltas":[5]}}}]' >"$T/c.json"
	tach2otlp -q "$T/c.json" -o "$T/c.otlp"
	decode "$T/c.otlp" | grep -A3 'key_strindex' >/dev/null
	decode "$T/c.otlp" | grep -q 'string_value: "CrRendererMain"'
	decode "$T/c.otlp" | grep -q 'int_value: 7$'
	# no process root, no pid: a TACH profile's samples have thread.id alone
	tach2otlp -q "$FIXTURES/tach/cases/threads_interleaved.tach" -o "$T/t.otlp"
	decode "$T/t.otlp" >"$T/t.txt"
	grep -q 'string_table: "thread.id"' "$T/t.txt"
	[ "$(grep -c 'string_table: "process.pid"' "$T/t.txt")" -eq 0 ]
}

@test "issue 56: OTLP/JSON reads back: detected, the protobuf form again; hostile JSON in one line" {
	need_spec
	local f=$FIXTURES/perf/inputs/perf-iperf-stacks-pidtid-01.txt
	tach2otlp -q "$f" -o "$T/p.otlp"
	tach2otlp -q --json "$f" -o "$T/p.json"
	# OTLP/JSON -> OTLP: byte for byte what the direct conversion writes
	tach2otlp -q "$T/p.json" -o "$T/back.otlp"
	cmp "$T/p.otlp" "$T/back.otlp"
	cat "$T/p.json" | tach-decode -v -q -F info 2>&1 | grep -qx 'tach-decode: <stdin>: otlp input'
	# as a collector takes it: other keys skipped, 64-bit integers as numbers, nulls absent
	python3 - "$T/p.json" "$T/alt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["extra"] = {"x": [1, 2]}
d["resourceProfiles"][0]["schemaUrl"] = None
for p in d["resourceProfiles"][0]["scopeProfiles"][0]["profiles"]:
    p["timeUnixNano"] = int(p["timeUnixNano"])
    for s in p["samples"]:
        s["values"] = [int(v) for v in s.get("values", [])]
json.dump(d, open(sys.argv[2], "w"))
PY
	tach-decode -q -F samples "$T/p.otlp" >"$T/want"
	tach-decode -q -F samples "$T/alt.json" | diff -u "$T/want" -
	# hostile: one line with the offset, exit 1
	badj() {
		printf '%s' "$1" >"$T/bad.json"
		run tach-decode --from otlp "$T/bad.json"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[ "$output" = "tach-decode: $T/bad.json: offset $2: $3" ] || { echo "got: $output"; return 1; }
	}
	badj '{"resourceProfiles":{}}' 20 'OTLP/JSON: a repeated field that is no array'
	badj '{"resourceProfiles":[],"dictionary":{"stringTable":[1]}}' 52 'OTLP/JSON: a string field that is no string'
	badj '{"resourceProfiles":[],"dictionary":{"linkTable":[{},{"traceId":"xyz"}]}}' 64 'OTLP/JSON: an ID that is no hex'
	badj '{"resourceProfiles":[],"dictionary":{"mappingTable":[{"filenameStrindex":4294967296}]}}' 73 'OTLP/JSON: a 32-bit field out of range'
	badj '{"resourceProfiles":[],"dictionary":{"mappingTable":[{"memoryStart":"-1"}]}}' 68 'OTLP/JSON: an integer out of range (or not a whole number)'
	badj '{"resourceProfiles":[' 21 'JSON: unexpected end of input'
	# what the protobuf reader refuses is said at the offset of the protobuf form
	run tach-decode --from otlp <<<'{"resourceProfiles":[],"dictionary":{"stringTable":["x"]}}'
	[ "$status" -eq 1 ]
	[[ $output == *"(offset in the protobuf form of this OTLP/JSON) "* ]] || { echo "$output"; return 1; }
	# nested deeper than the parser goes: one line
	python3 -c 'print("{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"value\":" + "{\"arrayValue\":{\"values\":[" * 40000 + "]}}" * 40000 + "}]}}]}")' >"$T/deep.json"
	run tach-decode "$T/deep.json"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"nested deeper than"* ]]
}
