#!/usr/bin/env bats
# Formats speedscope reads that had no reader of ours, read as speedscope's own importer
# reads them (its npm bundle, run by speedscope_import.mjs --any, which picks the importer
# by the file's contents as speedscope's app does): the same stacks, weights and total for
# each of our files; damaged ones are one line with the line or offset, exit 1; each file
# is detected without --from, from a file and a pipe.

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
}

summed() {
	awk '{ n = split($0, a, " "); w[substr($0, 1, length($0) - length(a[n]) - 1)] += a[n] }
		END { for (s in w) print s, w[s] }' | LC_ALL=C sort
}

# Each FILE read by speedscope (which must say it took it as KIND) and by us: the same
# stacks and weights, the same total; and ours the same from a pipe, detected as FMT.
# SCALE 1: the weights are counts, the total their sum; SCALE 1000: they are speedscope's
# ms, our time in µs, and speedscope's total (which counts the time no frame is open) is
# our duration_ns.
same_as_speedscope() {
	local fmt=$1 kind=$2 scale=$3 f n=0 opts=(-q --no-thread-frames)
	shift 3
	[ "$scale" = 1 ] || opts+=(--value time)
	rm -rf "$T/imp"
	mkdir -p "$T/imp"
	for f; do cp "$f" "$T/imp/"; n=$((n + 1)); done
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T"/imp/* \
		2>"$T/imp.err" >/dev/null
	[ "$(grep -cx "Importing as $kind" "$T/imp.err")" -eq "$n" ]
	for f; do
		local imp=$T/imp/${f##*/}.imp.txt total
		python3 "$SOURCE_ROOT/tests/cli/ssrest_speedscope.py" --scale "$scale" "$imp" | summed >"$T/want"
		[ -s "$T/want" ]
		tach-decode "${opts[@]}" "$f" | summed >"$T/got"
		diff -u "$T/want" "$T/got"
		tach-decode "${opts[@]}" <"$f" | summed | diff -u "$T/want" -
		total=$(python3 "$SOURCE_ROOT/tests/cli/ssrest_speedscope.py" --total --scale "$scale" "$imp")
		if [ "$scale" = 1 ]; then
			[ "$total" = "$(awk '{ t += $NF } END { print t }' "$T/got")" ]
		else
			tach-decode -q -F info "$f" | grep -qx "duration_ns: ${total}000"
		fi
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: $fmt input" ]]
		cp "$T/want" "$T/want.${f##*/}"
	done
}

# A damaged FILE: exit 1, one line naming WHERE (a line number, or "offset N") and saying
# WHAT.
refused() {
	local file=$1 where=$2 what=$3
	shift 3
	run tach-decode -q "$@" "$file"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"${file##*/}"?"$where: "*"$what"* ]]
}

# FreeBSD pmcstat's call graph text (pmcstat -R FILE -G OUT).

@test "pmcstat call graphs: speedscope's stacks, counts and total, from a file and a pipe" {
	speedscope_bundle
	same_as_speedscope pmcstat "pmcstat callgraph format" 1 "$TESTDATA"/pmcstat/*.txt
	# a name in two files is one frame, in the file it first came with (the kernel's
	# memcpy shows libc's); a level keeps its last node for a deeper one after it
	grep -qx 'kernel:amd64_syscall:0;kernel:sys_read:0;kernel:uiomove:0;libc.so.7:memcpy:0;libc.so.7:memcpy:0 20' \
		"$T/want.two-events.txt"
	grep -qx 'libthr.so.3:spin:0;app:lock_wait:0;libthr.so.3:spin:0 3' "$T/want.two-events.txt"
	grep -qx 'libb.so:jump_b:0;liba.so:mid_a:0;libb.so:leaf_b:0 4' "$T/want.speedscope-shapes.txt"
	# the counts are the event's samples, no time
	run tach-decode -q -F info "$TESTDATA/pmcstat/two-events.txt"
	[[ $output == *"weight_total: 126"* ]] || { echo "$output"; false; }
}

@test "damaged pmcstat call graphs: one line with the line, exit 1; speedscope refuses them too" {
	speedscope_bundle
	printf '@ x [3 samples]\n\n100.0%%  [3]  a\n  100.0%%  [3]    c @ /lib/c.so\n' >"$T/hole.txt"
	refused "$T/hole.txt" 4 "indented 2 spaces without a node indented 1"
	run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/hole.txt"
	[ "$status" -eq 1 ]
	printf '@ x [3 samples]\n\nno node here\n' >"$T/none.txt"
	refused "$T/none.txt" 3 "no pmcstat call graph node" --from pmcstat
	run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/none.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"none.txt: not imported"* ]]
	printf '@ x [3 samples]\n\n100.0%%  [3]  a\n 100.0%%  [99999999999999999999]  b\n' >"$T/big.txt"
	refused "$T/big.txt" 4 "count is past 64 bits"
	refused "$TESTDATA/pmcstat/two-events.txt" 6 "limit of 3 frames" --max-depth 3
}

# Papyrus profiles of Skyrim's and Fallout 4's scripts (StartPapyrusScriptProfile, ...).

@test "Papyrus profiles: speedscope's stacks and times, its total, from a file and a pipe" {
	speedscope_bundle
	same_as_speedscope papyrus "Papyrus profile" 1000 "$TESTDATA"/papyrus/*.log
	# a POP before any event is a frame run from the start; one of a function not the
	# innermost after that is ignored; the frames open at the end close at the last line
	grep -qx 'STACK 4120;mq_setup_quest..Finish 12000' "$T/want.stack.log"
	# a call on another stack nests its STACK frame; a PUSH's POP at its time leaves it then
	grep -qx 'STACK 3211;mq_trade_script..Haggle;STACK 3053;mq_trade_script..OnInit 8000' \
		"$T/want.script.log"
	# each stretch of time a sample at its own time (the log's ms as µs), its length as time
	run tach-decode -q -F samples "$TESTDATA/papyrus/script.log"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -v '^@' | cut -f1 | cut -d' ' -f3,5 | head -n 3)" = \
		"$(printf '%s\n' '10400000 12000000' '10412000 8000000' '10420000 11000000')" ]
}

@test "damaged Papyrus profiles: one line with the line, exit 1; speedscope refuses them too" {
	speedscope_bundle
	local h='Stack_1 log opened (PC)\n' f
	printf "${h}1:START:1\n2:PUSH:1:1:None:a\nLog closed\n" >"$T/pushlast.log"
	printf "${h}10:START:1\n12:PUSH:1:1:None:a\n5:POP:1:1:None:a\n20:STOP:1\n" >"$T/back.log"
	printf "${h}1:PUSH:1:1:None:a\n2:POP:1:1:None:a\njunk\n" >"$T/lastjunk.log"
	printf "${h}1:START:1\r\n2:PUSH:1:1:None:a\r\n3:POP:1:1:None:a\r\nLog closed\r\n" >"$T/crlf.log"
	printf "${h}1:QUEUE_PUSH:1:1\n2:PUSH:1:1:None:a\n3:POP:1:1:None:a\n" >"$T/qpush.log"
	printf "${h}Log closed\n" >"$T/none.log"
	refused "$T/pushlast.log" 3 "PUSH with no line after it"
	refused "$T/back.log" 4 "time that goes back"
	refused "$T/lastjunk.log" 4 "last line that is no event"
	refused "$T/crlf.log" 5 "last line that is no event" --from papyrus
	refused "$T/qpush.log" 2 "QUEUE_PUSH without a name"
	refused "$T/none.log" 2 "without a line of events"
	for f in pushlast back lastjunk crlf qpush none; do
		run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/$f.log"
		[ "$status" -eq 1 ] || { echo "speedscope took $f.log"; false; }
	done
	# speedscope never ends reading these (its look for the POP runs past the end), or
	# makes NaN of their times: ours alone
	printf "${h}1:START:1\n5:PUSH:1:1:None:a\n5:POP:1:1:None:b\n" >"$T/endless.log"
	refused "$T/endless.log" 3 "speedscope never ends reading it"
	printf "${h}0:START:1\n2:PUSH:1:1:None:a\nzz:POP:1:1:None:a\n9:POP:1:1:None:a\n" >"$T/nan.log"
	refused "$T/nan.log" 4 "time is no number"
	printf "${h}x:START:1\n2:PUSH:1:1:None:a\n3:POP:1:1:None:a\n" >"$T/nanstart.log"
	refused "$T/nanstart.log" 2 "first line whose time is no number"
	printf "${h}1:START:1\n2:PUSH:1:1:None:a\n3:POP:1:1:None:a\n99999999999999:STOP:1\n" >"$T/far.log"
	refused "$T/far.log" 5 "time past 9*10^12 ms"
	printf "${h}1:START:1\n2:PUSH:1:1:None\n3:POP:1:1:None:a\n" >"$T/noname.log"
	refused "$T/noname.log" 3 "without a name"
}

# Safari's timeline recordings (Web Inspector, Timelines, Export).

@test "Safari timeline recordings: speedscope's stacks and times, its total, from a file and a pipe" {
	speedscope_bundle
	same_as_speedscope safari "Safari profile" 1000000 "$TESTDATA"/safari/*-recording.json
	# an anonymous function is named by its url's file and line, as speedscope names it
	grep -qx 'loop.js:tick:2;eval.js:(anonymous eval.js:null):0 500' "$T/want.anonymous-recording.json"
	grep -qx 'app.js:(program):1;app.js:main:3;app.js:render:40;vendor.min.js:(anonymous vendor.min.js:7):7;forEach 999' \
		"$T/want.shop-recording.json"
	# each sample at its own timestamp standing for its own duration; none for the one of 0 s
	run tach-decode -q -F samples "$TESTDATA/safari/shop-recording.json"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -v '^@' | cut -f1 | cut -d' ' -f3,5 | sed -n '1p;5,7p')" = \
		"$(printf '%s\n' '4512001 1003000' '4523004 1003000' '4525002 1001000' '4526004 1002000')" ]
	# a version other than 1 is read, said once, as speedscope says it
	run tach-decode "$TESTDATA/safari/anonymous-recording.json"
	[[ ${lines[0]} == *": offset "*": warning: a Safari recording whose version is not 1: read as version 1" ]]
}

@test "damaged Safari timeline recordings: one line with the offset, exit 1; speedscope refuses them too" {
	speedscope_bundle
	local s='{"timestamp":1.5,"stackFrames":[{"name":"f","url":"a.js","line":1,"column":1}]}' f
	echo '{"version":1}' >"$T/norec-recording.json"
	echo '{"version":1,"recording":{"sampleStackTraces":[],"sampleDurations":[]}}' >"$T/empty-recording.json"
	echo '{"version":1,"recording":{"sampleStackTraces":[{"timestamp":1,"stackFrames":"f"}],"sampleDurations":[0.1]}}' >"$T/frames-recording.json"
	echo '{"version":1,"recording":{"sampleStackTraces":['"$s"'],"sampleDurations":[-0.5]}}' >"$T/neg-recording.json"
	echo '{"version":1,"recording":{"sampleStackTraces":[null],"sampleDurations":[0.1]}}' >"$T/null-recording.json"
	refused "$T/norec-recording.json" " offset 0" 'no "recording"' --from safari
	refused "$T/empty-recording.json" " offset 46" "without samples" --from safari
	refused "$T/frames-recording.json" " offset 76" '"stackFrames" must be an array' --from safari
	refused "$T/neg-recording.json" " offset 147" "duration is negative" --from safari
	refused "$T/null-recording.json" " offset 47" "sample must be an object" --from safari
	for f in norec empty frames neg null; do
		run "$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --any "$BUNDLE" "$T/$f-recording.json"
		[ "$status" -eq 1 ] || { echo "speedscope took $f-recording.json"; false; }
	done
	# where speedscope's numbers would be NaN: ours alone
	echo '{"version":1,"recording":{"sampleStackTraces":['"$s"','"$s"'],"sampleDurations":[0.1]}}' >"$T/few-recording.json"
	refused "$T/few-recording.json" " offset 226" 'fewer "sampleDurations" than samples' --from safari
	echo '{"version":1,"recording":{"sampleStackTraces":['"${s/1.5/\"1.5\"}"'],"sampleDurations":[0.1]}}' >"$T/ts-recording.json"
	refused "$T/ts-recording.json" " offset 60" "timestamp must be a number" --from safari
	echo '{"version":1,"recording":{"sampleStackTraces":['"${s/\"f\"/7}"'],"sampleDurations":[0.1]}}' >"$T/name-recording.json"
	refused "$T/name-recording.json" " offset 87" "name must be a string or null" --from safari
}
