#!/usr/bin/env bats
# Ruby stackprof dumps, read by every program without naming the format, as speedscope's own
# stackprof importer reads them (its npm bundle, run in node by speedscope_import.mjs
# --as=stackprof): the same stacks with the same weights (µs in cpu and wall mode, counts in
# object mode) and the same total, for the peers' file (../shared/peers, PEERS_DIR
# elsewhere), our files written to stackprof's output (tests/data/stackprof) and dumps that
# Debian's ruby-stackprof records in the run; damaged input is one line with its offset.

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	D=$TESTDATA/stackprof
}


# Lines "STACK WEIGHT" summed per stack, sorted (speedscope keeps two frames of one name,
# file and line apart by id, tachfmt interns them as one).
summed() {
	awk '{ n = split($0, a, " "); w[substr($0, 1, length($0) - length(a[n]) - 1)] += a[n] }
		END { for (s in w) print s, w[s] }' | LC_ALL=C sort
}

# same_as_speedscope FILE VALUE: our folded stacks (VALUE: time or count) are speedscope's,
# from the file, a pipe and --from; the total is speedscope's total weight.
same_as_speedscope() {
	local f=$1 value=$2
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --as=stackprof "$BUNDLE" "$f" >"$T/imp"
	# its frame label for a frame of no file (":NAME:0") is ours, NAME
	grep -v '^#' "$T/imp" | cut -f2- |
		sed -e 's/\(^\|;\):\([^;]*\):0\(;\| \)/\1\2\3/g' -e 's/\(^\|;\):\([^;]*\):0\(;\| \)/\1\2\3/g' |
		summed >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q --no-thread-frames --value "$value" "$f" | summed >"$T/got"
	diff -u "$T/want" "$T/got"
	tach-decode -q --no-thread-frames --value "$value" <"$f" | summed | diff -u "$T/want" -
	tach-decode -q --no-thread-frames --value "$value" --from stackprof "$f" | summed |
		diff -u "$T/want" -
	local total
	total=$(awk -F'\t' '/^#/ { print $4 }' "$T/imp")
	[ "$(awk '{ t += $NF } END { print t }' "$T/got")" = "$total" ]
	run tach-decode -v -q -F info "$f"
	[[ ${lines[0]} == "tach-decode: $f: stackprof input" ]]
}

@test "the peers' stackprof dump: speedscope's stacks and weights" {
	[ -f "$PEER/formats/stackprof-simple.json" ] || skip "../shared/peers is not there"
	speedscope_bundle
	same_as_speedscope "$PEER/formats/stackprof-simple.json" time
	# its collections alone go on the stack before them, as speedscope puts them
	tach-decode -q --no-thread-frames "$PEER/formats/stackprof-simple.json" >"$T/c"
	grep -q ';simple.rb:Object#d:23;(garbage collection) [0-9]*$' "$T/c"
	run grep -c '^(garbage collection) ' "$T/c"
	[ "$output" = 0 ]
}

@test "our dumps: object mode, collections alone, frames without name or line, an id twice" {
	speedscope_bundle
	same_as_speedscope "$D/object-gc.json" count
	same_as_speedscope "$D/wall-gc.json" time
	tach-decode -q --no-thread-frames "$D/object-gc.json" >"$T/c"
	grep -qx 'app.rb:<main>:0;new.rb:(unknown):40 1' "$T/c"
	grep -qx 'app.rb:<main>:0;app.rb:Object#work:3;<cfunc>:Array#map:0;(garbage collection) 1' "$T/c"
	# wall time is the deltas', the timestamps their sums; the interval is stackprof's
	tach-decode -F samples "$D/wall-gc.json" >"$T/s"
	grep -qx '@interval_us 1000' "$T/s"
	grep -q '^0 0 1000 4 3100000 3	' "$T/s"
	# through pprof: the sample counts and the wall time as two value types
	tach2pprof -q "$D/wall-gc.json" -o "$T/p.pb.gz"
	tach-decode -q --no-thread-frames --value wall "$T/p.pb.gz" | summed >"$T/w"
	grep -qx 'w.rb:<main>:0;w.rb:Object#loop:5 4300000' "$T/w"
	tach-decode -q --no-thread-frames --value samples "$T/p.pb.gz" | summed | grep -qx 'w.rb:<main>:0;w.rb:Object#loop:5 4'
}

@test "dumps that ruby-stackprof records now, in cpu, wall and object mode" {
	command -v ruby >/dev/null || skip "ruby not installed (Debian packages ruby, ruby-stackprof)"
	ruby -rstackprof -e '' 2>/dev/null || skip "ruby-stackprof not installed"
	speedscope_bundle
	cat >"$T/prog.rb" <<-'EOF'
		require 'stackprof'
		require 'json'
		def leaf(n) = (1..n).reduce(0) { |a, b| a + b * b }
		def mid(n) = leaf(n) + leaf(n / 2)
		def top
		  t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
		  mid(20000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t < 0.2
		end
		mode = ARGV[0].to_sym
		prof = StackProf.run(mode: mode, raw: true, interval: mode == :object ? 5 : 1000) do
		  top
		  GC.start
		end
		File.write(ARGV[1], JSON.dump(prof))
	EOF
	for m in wall cpu object; do
		ruby "$T/prog.rb" $m "$T/$m.json"
		if [ $m = object ]; then v=count; else v=time; fi
		same_as_speedscope "$T/$m.json" $v
		grep -q 'prog.rb:Object#top:5;prog.rb:Object#mid:4;prog.rb:Object#leaf:3' "$T/got"
	done
}

@test "errors: one line with the offset, exit 1" {
	check() { # json offset message
		printf '%s' "$1" >"$T/bad.json"
		run tach-decode --from stackprof "$T/bad.json"
		[ "$status" -eq 1 ]
		[ "$output" = "tach-decode: $T/bad.json: offset $2: $3" ] || { echo "$output"; false; }
	}
	local fr='"frames":{"1":{"name":"a"}}'
	check '[]' 0 'not a stackprof dump: expected a JSON object'
	check "{$fr,\"mode\":\"wall\"}" 0 'a stackprof dump without "raw" (recorded without raw: true): its call graph holds no stacks'
	check "{$fr,\"raw\":[]}" 0 'not a stackprof dump: no "mode"'
	check "{$fr,\"mode\":\"wall\",\"raw\":[1,1,1]}" 0 'no "raw_timestamp_deltas", which weigh the samples'
	check "{$fr,\"mode\":\"object\",\"raw\":[1,2,1]}" 54 'frame id 2 is not in "frames"'
	check "{$fr,\"mode\":\"object\",\"raw\":[1,1]}" 55 '"raw" ends inside an entry'
	check "{$fr,\"mode\":\"object\",\"raw\":[0,1]}" 52 "an entry's frame count must be an integer of 1 or more"
	check "{$fr,\"mode\":\"object\",\"raw\":[1,1,0]}" 56 "an entry's count must be an integer 1..9223372036854775807"
	check "{$fr,\"mode\":\"wall\",\"raw\":[1,1,2],\"raw_timestamp_deltas\":[5]}" 54 '"raw_timestamp_deltas" ends before this entry'"'"'s samples'
	check "{$fr,\"mode\":\"wall\",\"raw\":[1,1,1],\"raw_timestamp_deltas\":[-5]}" 81 'a timestamp delta must be an integer 0..9223372036854775807'
	check "{$fr,\"mode\":\"cpu\",\"raw\":[1,1,1]}" 0 'a cpu-mode dump without its "interval"'
	check '{"frames":{"1":7},"mode":"object","raw":[]}' 15 'a frame must be an object'
	check '{"frames":{"1":{"name":1}},"mode":"object","raw":[]}' 23 "a frame's name must be a string or null"
	check "{$fr,\"mode\":\"object\",\"raw\":[1,1,1]" 58 'JSON: unexpected end of input'
	run tach-decode --max-depth 2 --from stackprof <(printf '{%s,"mode":"object","raw":[3,1,1,1,1]}' "$fr")
	[ "$status" -eq 1 ]
	[[ $output == *"offset 52: a stack of 3 frames is deeper than the limit of 2" ]]
	run tach-decode -F samples --max-samples 3 --from stackprof <(printf '{%s,"mode":"object","raw":[1,1,2,1,1,2]}' "$fr")
	[ "$status" -eq 1 ]
	[[ $output == *"offset 62: the counts add up to more than 3 samples (see --max-samples)" ]]
	# a cut file names where it ends, and is not taken for another format
	head -c 400 "$D/wall-gc.json" >"$T/cut.json"
	run tach-decode "$T/cut.json"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/cut.json: offset 389: JSON: unterminated string" ]
}
