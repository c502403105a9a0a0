#!/usr/bin/env bats
# speedscope2tach over speedscope files written as py-spy, austin2speedscope and speedscope
# write them (tests/data/speedscope/): the stacks, threads, timestamps and weights that
# tests/cli/speedscope_expect.py computes from the JSON on its own; the TACH output through
# every writer; every option and error path.

load checked

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/speedscope
	EXPECT="python3 $SOURCE_ROOT/tests/cli/speedscope_expect.py"
}

# The same samples, order aside: tid iid ts and the function names of each.
timeline_of() { # TACH -> sorted timeline
	tach-decode --format samples "$1" | $EXPECT from-samples | LC_ALL=C sort
}

@test "collapsed stacks as computed from the JSON: py-spy, austin, speedscope, odd files" {
	for f in "$D"/*.json; do
		speedscope2tach "$f" -o "$T/p.tach"
		tach-decode "$T/p.tach" > "$T/got.txt" 2>/dev/null
		$EXPECT collapsed "$f" > "$T/want.txt"
		[ -s "$T/want.txt" ]
		diff -u "$T/want.txt" "$T/got.txt" || { echo "in $f"; false; }
	done
}

@test "threads, timestamps and weights as computed from the JSON" {
	for f in "$D"/*.json; do
		speedscope2tach "$f" -o "$T/p.tach"
		timeline_of "$T/p.tach" > "$T/got.txt"
		$EXPECT timeline "$f" | LC_ALL=C sort > "$T/want.txt"
		diff -u "$T/want.txt" "$T/got.txt" || { echo "in $f"; false; }
	done
}

@test "py-spy: thread ids from the profile names, 10 ms interval, status unknown" {
	speedscope2tach "$D/pyspy.json" -o "$T/p.tach"
	tach-decode --format info "$T/p.tach" | grep -qx 'sample_interval_us: 10000'
	tach-decode --format samples "$T/p.tach" | grep -v '^@' | cut -d' ' -f1,4 | cut -f1 | sort -u > "$T/t"
	[ "$(cat "$T/t")" = "$(printf '12345 4\n12350 4')" ]
	# Process PID Thread 0xHEX: the thread in hex, the process as interpreter id
	speedscope2tach "$D/pyspy-subprocess.json" | tach-decode --format samples | grep -v '^@' |
		cut -f1 | cut -d' ' -f1,2 | sort -u > "$T/t"
	[ "$(cat "$T/t")" = "$(printf '139887808087872 4321\n4331 4330')" ]
}

@test "evented profiles: the stack between two events, one sample standing for the time between them" {
	speedscope2tach -q "$D/speedscope-evented.json" -o "$T/e.tach"
	# 1.5, 2.5, 0.25, 4.75 and 4.5 ms: a common divisor of 250 us, the interval recorded
	tach-decode --format info "$T/e.tach" | grep -qx 'sample_interval_us: 250'
	# each stretch is one sample of its own time, not samples of 250 us
	tach-decode -q --thread 0 --value time "$D/speedscope-evented.json" > "$T/got"
	printf '%s\n' 'tid:0;a;d 4750' 'tid:0;c.js:c:0;c.js:c:0 4500' 'tid:0;a;b.js:b:3;d 2500' \
		'tid:0;a;b.js:b:3;c.js:c:0 1500' 'tid:0;a 250' > "$T/want"
	diff -u "$T/want" "$T/got"
	tach-decode -q --thread 0 -F samples "$D/speedscope-evented.json" | grep -v '^@' | cut -f1 >"$T/s"
	[ "$(wc -l <"$T/s")" -eq 5 ]
	awk '{ if ($6 != "" && $6 != 1) exit 1 }' "$T/s"
}

@test "--interval: the interval recorded; time weights and timestamps unchanged" {
	speedscope2tach --interval 1000 "$D/austin-wall.json" -o "$T/i.tach"
	tach-decode --format info "$T/i.tach" | grep -qx 'sample_interval_us: 1000'
	diff -u <($EXPECT collapsed "$D/austin-wall.json" 1000) <(tach-decode "$T/i.tach")
	diff -u <($EXPECT timeline "$D/austin-wall.json" 1000 | LC_ALL=C sort) <(timeline_of "$T/i.tach")
	# unit none: the spacing of samples
	speedscope2tach --interval 7 "$D/pyspy-old.json" -o "$T/o.tach"
	diff -u <($EXPECT timeline "$D/pyspy-old.json" 7 | LC_ALL=C sort) <(timeline_of "$T/o.tach")
	for bad in 0 -1 x 4294967296; do
		run speedscope2tach --interval "$bad" "$D/pyspy.json"
		[ "$status" -eq 2 ]
		[[ "$output" == *"interval must be 1..4294967295 microseconds, not $bad"* ]]
	done
}

@test "--profile: one profile of the file" {
	speedscope2tach --profile 1 "$D/austin-memory.json" -o "$T/m.tach"
	[ "$(tach-decode "$T/m.tach")" = "tid:31337;mem.py:<module>:20;mem.py:shrink:14 2048" ]
	diff -u <($EXPECT timeline "$D/austin-memory.json" 0 1 | LC_ALL=C sort) <(timeline_of "$T/m.tach")
	run speedscope2tach --profile 2 "$D/austin-memory.json"
	[ "$status" -eq 1 ]
	[ "$output" = "speedscope2tach: $D/austin-memory.json: profile 2 asked for, but the file has 2 profiles" ]
	run speedscope2tach --profile x "$D/austin-memory.json"
	[ "$status" -eq 2 ]
}

@test "through every writer: samples, collapsed, sampler, pprof" {
	for f in "$D"/*.json; do
		speedscope2tach "$f" -o "$T/p.tach"
		$EXPECT collapsed "$f" > "$T/want"
		# the samples text and back
		tach-decode --format samples "$T/p.tach" | tach-encode -o "$T/s.tach"
		diff -u "$T/want" <(tach-decode "$T/s.tach" 2>/dev/null)
		# an Apple Sampler trace and back: threads, files, lines and counts survive
		tach2sampler -q "$T/p.tach" | sampler2tach -o "$T/a.tach"
		diff -u "$T/want" <(tach-decode "$T/a.tach" 2>/dev/null)
		# pprof: the stacks and counts go tool pprof reads, as tach-decode reads them
		tach2pprof -q --no-gzip "$T/p.tach" -o "$T/p.pb"
		[ -s "$T/p.pb" ]
		if command -v go >/dev/null; then
			HOME=$T PPROF_TMPDIR=$T go tool pprof -raw "$T/p.pb" 2>/dev/null |
				python3 "$SOURCE_ROOT/tests/pprof_stacks.py" raw > "$T/pgot"
			tach-decode --format samples "$T/p.tach" |
				python3 "$SOURCE_ROOT/tests/pprof_stacks.py" samples > "$T/pwant"
			diff -u "$T/pwant" "$T/pgot"
		fi
	done
	# collapsed in py-spy's labels, read back by collapsed2tach
	speedscope2tach "$D/pyspy.json" -o "$T/p.tach"
	tach-decode --labels pyspy "$T/p.tach" | collapsed2tach -o "$T/c.tach"
	diff -u <($EXPECT collapsed "$D/pyspy.json") <(tach-decode "$T/c.tach")
}

@test "through the Gecko writer: the Firefox Profiler's importer sees the same call trees" {
	local dir=${TACHFMT_NPM_DIR:-}
	if [ -z "$dir" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
		dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm")
	fi
	local pcli="$dir/node_modules/.bin/node $dir/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js"
	for f in pyspy speedscope-evented; do
		speedscope2tach "$D/$f.json" -o "$T/$f.tach"
		tach-decode --format samples "$T/$f.tach" > "$T/$f.txt"
		tach2gecko --no-gzip "$T/$f.tach" -o "$T/$f.json"
		checked "$T/$f.json" "$T/$f.txt" -- \
			python3 "$SOURCE_ROOT/tests/cli/gecko_calltree.py" "$pcli" "$T/$f.json" "$T/$f.txt"
	done
}

@test "errors: messages with offsets, exit 1" {
	check() { # json offset message
		printf '%s' "$1" > "$T/bad.json"
		run speedscope2tach "$T/bad.json"
		[ "$status" -eq 1 ]
		[ "$output" = "speedscope2tach: $T/bad.json: offset $2: $3" ] || { echo "$output"; false; }
	}
	local f='"shared":{"frames":[{"name":"a"}]}'
	local s='{"type":"sampled","unit":"none","samples":'
	check '' 0 'JSON: unexpected end of input'
	check 'tid:1;a 1' 0 'JSON: unexpected character'
	check '[]' 0 'not a speedscope file: expected a JSON object'
	check '{}' 0 'not a speedscope file: no "shared" and "profiles"'
	check "{$f,\"profiles\":[$s[[0]],\"weights\":[1]}" 110 'JSON: unexpected end of input'
	check "{$f,\"profiles\":[$s[[1]],\"weights\":[1]}]}" 92 'frame index 1 is not an index into shared.frames (1 frames)'
	check "{$f,\"profiles\":[$s[[0]],\"weights\":[-2]}]}" 107 'negative weight'
	check "{$f,\"profiles\":[$s[[0]],\"weights\":[NaN]}]}" 107 'JSON: unexpected character'
	check "{$f,\"profiles\":[$s[[0]],\"weights\":[1e400]}]}" 107 'weight 1e400 is out of range'
	check "{$f,\"profiles\":[$s[[0]],\"weights\":[1,1]}]}" 94 '"samples" and "weights" differ in length'
	check "{$f,\"profiles\":[{\"type\":\"evented\",\"unit\":\"none\",\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":1}]}]}" 119 '1 frames still open at the end of the events'
	check "{$f,\"profiles\":[{\"type\":\"flat\",\"unit\":\"none\"}]}" 56 'profile type must be "sampled" or "evented"'
	check "{\"\$schema\":\"https://example.com/schema.json\",$f,\"profiles\":[]}" 11 '$schema does not name speedscope'"'"'s file-format-schema'
	check "{$f,\"profiles\":[]}x" 50 'JSON: unexpected bytes after the value'
	# a byte order mark is skipped, as RFC 8259 allows and browsers do: below every
	# reader, so that offsets count the text after it (tachfmt(5), COMPRESSED INPUT)
	printf '\xef\xbb\xbf{}' > "$T/bom.json"
	run speedscope2tach "$T/bom.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0: not a speedscope file: no \"shared\" and \"profiles\"" ]]
	{ printf '\xef\xbb\xbf'; cat "$D/pyspy.json"; } > "$T/bom.json"
	speedscope2tach "$T/bom.json" | tach-decode > "$T/got"
	diff -u <($EXPECT collapsed "$D/pyspy.json") "$T/got"
	run speedscope2tach "$FIXTURES/tach/cases/single_sample.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 0: JSON: "* ]]
}

@test "a cut file, -o: nothing is left behind" {
	head -c 700 "$D/pyspy.json" > "$T/cut.json"
	run speedscope2tach "$T/cut.json" -o "$T/out.tach"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 697: JSON: unterminated string" ]]
	[ ! -e "$T/out.tach" ]
	[ -z "$(ls "$T" | grep -v cut.json)" ]
}

@test "--max-depth and --max-samples" {
	run speedscope2tach --max-depth 3 "$D/pyspy.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 237: stack deeper than the depth limit of 3 frames" ]]
	speedscope2tach --max-depth 4 "$D/pyspy.json" -o "$T/d.tach"
	run speedscope2tach --max-samples 9 "$D/pyspy.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 422: the weights add up to more than 9 samples (see --max-samples)" ]]
	speedscope2tach --max-samples 10 "$D/pyspy.json" -o "$T/s.tach"
	# a time weight is one sample whatever the interval: austin's 8244 us in 6 samples
	run speedscope2tach --interval 1 --max-samples 5 "$D/austin-wall.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"the weights add up to more than 5 samples"* ]]
	speedscope2tach -q --interval 1 --max-samples 6 "$D/austin-wall.json" -o "$T/a.tach"
}

@test "--compression and --level reach the TACH writer" {
	speedscope2tach --compression none "$D/pyspy.json" > "$T/n.tach"
	tach-decode -F info "$T/n.tach" | grep -qx 'compression: none'
	speedscope2tach --compression zstd --level 19 "$D/pyspy.json" > "$T/z.tach"
	tach-decode -F info "$T/z.tach" | grep -qx 'compression: zstd'
	[ "$(tach-decode "$T/n.tach")" = "$(tach-decode "$T/z.tach")" ]
	run speedscope2tach --compression lz4 "$D/pyspy.json"
	[ "$status" -eq 2 ]
}

@test "stdin, -o, filters, -v, -q, --strict, -f" {
	speedscope2tach < "$D/pyspy.json" > "$T/a.tach"
	speedscope2tach -o "$T/b.tach" - < "$D/pyspy.json"
	cmp "$T/a.tach" "$T/b.tach"
	speedscope2tach -f --strict -q "$D/pyspy.json" > "$T/c.tach"
	cmp "$T/a.tach" "$T/c.tach"
	speedscope2tach --thread 12350 "$D/pyspy.json" > "$T/t.tach"
	[ "$(tach-decode "$T/t.tach" | cut -d';' -f1 | sort -u)" = "tid:12350" ]
	speedscope2tach --from-us 20000 --to-us 40000 --thread 12345 "$D/pyspy.json" > "$T/w.tach"
	[ "$(tach-decode -F samples "$T/w.tach" | grep -v '^@' | cut -f1 | cut -d' ' -f3 | tr '\n' ' ')" = "20000 30000 " ]
	speedscope2tach --status no-unknown "$D/pyspy.json" > "$T/none.tach"
	[ -z "$(tach-decode "$T/none.tach")" ]
	speedscope2tach --status unknown "$D/pyspy.json" > "$T/all.tach"
	cmp "$T/a.tach" "$T/all.tach"
	run speedscope2tach -v "$D/pyspy.json" -o "$T/v.tach"
	[ "$status" -eq 0 ]
	[[ "$output" == *"10 samples read, 10 written"* ]]
}

@test "I/O errors and usage errors" {
	run sh -c "speedscope2tach '$D/pyspy.json' > /dev/full"
	[ "$status" -eq 1 ]
	run speedscope2tach "$T/nonexistent.json"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No such file or directory"* ]]
	# two inputs are one profile, merged: twice the samples
	speedscope2tach -q "$D/pyspy.json" "$D/pyspy.json" -o "$T/two.tach"
	speedscope2tach -q "$D/pyspy.json" -o "$T/one.tach"
	[ "$(tach-decode -F info "$T/two.tach" | sed -n 's/^samples_decoded: //p')" -eq \
		$((2 * $(tach-decode -F info "$T/one.tach" | sed -n 's/^samples_decoded: //p'))) ]
	run speedscope2tach --nope "$D/pyspy.json"
	[ "$status" -eq 2 ]
	run speedscope2tach -o "$T/nodir/x.tach" "$D/pyspy.json"
	[ "$status" -eq 1 ]
}

@test "help lists the options; version names the library" {
	run speedscope2tach --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"--interval US"* && "$output" == *"--profile N"* ]]
	run speedscope2tach --version
	[ "$status" -eq 0 ]
	[[ "$output" == *"libtachfmt"* ]]
}

@test "the man page documents every option" {
	for o in $(speedscope2tach --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$o\*" "$SOURCE_ROOT/docs/speedscope2tach.1.scd" || { echo "missing $o"; false; }
	done
}

@test "weights in a time unit are each sample's exact time" {
	printf '%s' '{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"},{"name":"b"}]},"profiles":[{"type":"sampled","name":"t","unit":"microseconds","startValue":0,"endValue":3.75,"samples":[[0],[0,1]],"weights":[1.5,2.25]}]}' >"$T/t.json"
	# 1.5 and 2.25 us: 1500 and 2250 ns, whatever whole intervals (2 us) they round to
	[ "$(tach-decode -q -F samples "$T/t.json" | grep -v '^@' | cut -f1)" = "$(printf '0 0 0 4 1500\n0 0 1 4 2250')" ]
	tach-decode -q -F info "$T/t.json" | grep -qx 'weight_total_us: 3'
	# a count unit carries no time of its own
	sed 's/"microseconds"/"none"/' "$T/t.json" >"$T/n.json"
	[ "$(tach-decode -q -F samples "$T/n.json" | grep -v '^@' | cut -f1 | awk '{ print NF }' | sort -u)" = 4 ]
}
