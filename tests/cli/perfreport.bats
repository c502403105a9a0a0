#!/usr/bin/env bats
# Linux perf's perf report --stdio text (--from perfreport, detection): a capture recorded
# now with perf record -g, reported in every exact form (folded, graph and fractal; caller
# and callee; count and period), gives the stacks and counts that tachfmt's own reading of
# the same perf.data gives, frame for frame by function name and comm, the totals being the
# header's; the percent forms are refused with the options that give a readable one;
# damaged text is one line with its line number, exit 1.

setup_file() {
	export PR_DIR=$BATS_FILE_TMPDIR
	PR_SKIP=
	if ! command -v perf >/dev/null; then
		PR_SKIP="perf is not installed (Debian: linux-perf)"
	elif ! perf record -q -e cpu-clock -o "$PR_DIR/probe.data" true >"$PR_DIR/probe.log" 2>&1; then
		PR_SKIP="perf_event_open refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): $(head -1 "$PR_DIR/probe.log")"
	else
		cc -O0 -fno-omit-frame-pointer -pthread "$TESTDATA/perfreport/branchy.c" -o "$PR_DIR/branchy"
		(cd "$PR_DIR" && perf record -q -F 999 -g -e cpu-clock -o b.data -- ./branchy >/dev/null 2>b.log)
	fi
	export PR_SKIP
}

setup() {
	T=$BATS_TEST_TMPDIR
	D=$TESTDATA/perfreport
	CMP="python3 $SOURCE_ROOT/tests/cli/perfreport_cmp.py"
}

live() {
	[ -z "$PR_SKIP" ] || skip "$PR_SKIP"
}

# report FORM [perf report options]: $T/r.txt, perf report's text of the capture.
report() {
	local g=$1
	shift
	perf report -i "$PR_DIR/b.data" --stdio --no-children "$@" -g "$g" >"$T/r.txt" 2>"$T/r.log"
	[ -s "$T/r.txt" ]
}

# same KIND: the report read through --from perfreport and through detection gives, by
# function names, the stacks the perf.data reader gives, and the header's total.
same() {
	local kind=$1 total
	tach-decode -q -F samples "$PR_DIR/b.data" >"$T/want"
	tach-decode -q -F samples --from perfreport "$T/r.txt" >"$T/got"
	tach-decode -q -F samples "$T/r.txt" | cmp - "$T/got"
	total=$($CMP "$kind" "$T/want" "$T/got")
	if [ "$kind" = count ]; then
		[ "$total" -eq "$(sed -n "s/^# Samples: \([0-9]*\)  *of event .*/\1/p" "$T/r.txt")" ]
	else
		[ "$total" -eq "$(sed -n 's/^# Event count (approx.): //p' "$T/r.txt")" ]
	fi
	[ "$total" -gt 50 ]
	# the trees branch: the leaf is reached by three paths in each of the two threads
	[ "$(grep -c $'\t[^;]*:leaf:' "$T/got")" -ge 6 ]
	grep -q ':side-worker:' "$T/got"
}

@test "live: folded count forms, caller and callee, are perf.data's stacks and sample counts" {
	live
	for o in caller callee; do
		report folded,0,$o,count
		same count
	done
}

@test "live: folded period forms are perf.data's stacks and periods, each chain's time exact" {
	live
	for o in caller callee; do
		report folded,0,$o,period
		same period
		# a clock's period is CPU time in ns: each record's weight, in that unit, and its time
		tach-decode -q -F info "$T/r.txt" >"$T/info"
		grep -qx 'value_type: cpu/nanoseconds (the weights) (default)' "$T/info"
		grep -qx 'weight_unit: nanoseconds' "$T/info"
		awk -F'\t' '!/^[#@]/ { split($1, f, " "); if (f[5] != f[6] || f[5] < 1000) bad++; n++ }
			END { exit bad || n < 3 }' "$T/got"
	done
}

@test "live: graph and fractal count forms (with -n), caller and callee" {
	live
	for g in graph fractal; do
		for o in caller callee; do
			report $g,0,$o,function,count -n
			same count
		done
	done
}

@test "live: graph and fractal period forms (with --show-total-period), caller and callee" {
	live
	for g in graph fractal; do
		for o in caller callee; do
			report $g,0,$o,function,period --show-total-period
			same period
		done
	done
}

@test "live: the percent forms are refused with the options that give a readable one" {
	live
	local args
	for args in "" "--no-children" "--no-children -n" "--no-children -g folded" \
		"--no-children -n -g graph,0,caller,function,percent" "--no-children -g graph,0,caller,function,count"; do
		perf report -i "$PR_DIR/b.data" --stdio $args >"$T/r.txt" 2>/dev/null
		run tach-decode -q "$T/r.txt"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ $output == *"perf report --stdio --no-children -g folded,0,caller,count"* ]]
	done
}

@test "live: a threshold or a percent limit that leaves chains out is refused, not read short" {
	live
	# no chain holds 99% of the samples: every entry is left without its chains
	report folded,99,caller,count
	run tach-decode -q "$T/r.txt"
	[ "$status" -eq 1 ]
	[[ $output == *":12: a perf report line of an entry without call chains (a threshold hid them"* ]]
	report folded,0,caller,count --percent-limit 100
	run tach-decode -q "$T/r.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"chains add up to 0, not the header's "*" samples"*"left out"* ]]
	# a chain taken out of a whole report
	report folded,0,callee,count
	grep -n '^[0-9]' "$T/r.txt" | head -1 | cut -d: -f1 >"$T/n"
	sed "$(cat "$T/n")d" "$T/r.txt" >"$T/short.txt"
	run tach-decode -q "$T/short.txt"
	[ "$status" -eq 1 ]
	[[ $output == *"chains add up to"*"left out"* ]]
}

@test "our reports: read, detected, with the comm root, the entry's dso on the innermost frame" {
	tach-decode -q -F samples "$D/folded-caller-count.txt" >"$T/a"
	grep -q $'\tbranchy:leaf:-:-:-:-:-;~:left:-:-:-:-:-;~:side:-:-:-:-:-;~:start_thread:-:-:-:-:-;\[comm\]:side-worker:' "$T/a"
	tach-decode -q -F samples "$D/graph-callee-count.txt" >"$T/b"
	$CMP count "$T/a" "$T/b"
	tach-decode -q -F samples "$D/fractal-caller-period.txt" >"$T/c"
	[ "$(awk -F'\t' '!/^[#@]/ { split($1, f, " "); t += f[5] } END { print t }' "$T/c")" -eq "$(sed -n 's/^# Event count (approx.): //p' "$D/fractal-caller-period.txt")" ]
	for f in "$D"/*.txt; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == "tach-decode: $f: perfreport input" ]]
	done
	run tach-decode "$D/folded-caller-count.txt"
	[[ $output == *"aggregates the samples"*"without the samples' times and threads"* ]]
}

# bad FILE LINE WORDS: one line, with the line number, exit 1.
bad() {
	run tach-decode -q --from perfreport "$1"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ ${lines[0]} == *"$1:$2: "*"$3"* ]]
}

@test "damaged reports: a branch without a parent, a count that is no number, a tree cut short" {
	local g=$D/graph-callee-count.txt f=$D/folded-caller-count.txt
	# a branch two levels below its parent
	sed '16s/^               |--47--left$/               |          |          |--47--left/' "$g" >"$T/deep.txt"
	! cmp -s "$g" "$T/deep.txt" || false
	bad "$T/deep.txt" 16 "more than one level below its parent"
	sed '16s/--47--/--4x7--/' "$g" >"$T/nan.txt"
	bad "$T/nan.txt" 16 "no number"
	sed '13s/^47 /4x7 /' "$f" >"$T/nanf.txt"
	! cmp -s "$f" "$T/nanf.txt" || false
	bad "$T/nanf.txt" 13 "no number"
	# cut inside the first tree: its chain stops at a node that is not the leaf
	head -n 17 "$D/fractal-caller-period.txt" >"$T/cut.txt"
	bad "$T/cut.txt" 17 "does not end at its entry's symbol"
	# cut after a whole entry: the chains fall short of the header's total
	head -n 26 "$D/fractal-caller-period.txt" >"$T/cut2.txt"
	bad "$T/cut2.txt" 26 "add up to"
	# counts past --max-samples: a limit, at the line where they were added up
	run tach-decode -q -F samples --max-samples 100 "$f"
	[ "$status" -eq 1 ]
	[[ $output == "tach-decode: $f:26: the counts add up to more than 100 samples (see --max-samples)" ]]
	# a continuation line out of the tree's columns
	sed '17s/^               |          side$/                |         side/' "$g" >"$T/col.txt"
	! cmp -s "$g" "$T/col.txt" || false
	bad "$T/col.txt" 17 "out of its call graph's columns"
}

@test "live: detection tells perf report text from perf script text and folded stacks" {
	live
	local f
	report folded,0,caller,count --header
	grep -q '^# captured on' "$T/r.txt"
	run tach-decode -v -q -F info "$T/r.txt"
	[[ ${lines[0]} == *": perfreport input" ]]
	perf script -i "$PR_DIR/b.data" >"$T/s.perf" 2>/dev/null
	perf script --header -i "$PR_DIR/b.data" >"$T/sh.perf" 2>/dev/null
	for f in "$T/s.perf" "$T/sh.perf"; do
		run tach-decode -v -q -F info "$f"
		[[ ${lines[0]} == *": perf input" ]]
	done
	tach-decode -q --labels perf "$PR_DIR/b.data" >"$T/f.folded"
	run tach-decode -v -q -F info "$T/f.folded"
	[[ ${lines[0]} == *": collapsed input" ]]
	# the report's chains without its header are no report
	grep '^[0-9]' "$T/r.txt" >"$T/lines.txt"
	run tach-decode -v -q -F info "$T/lines.txt"
	[ "$status" -ne 0 ]
	[[ $output != *"perfreport input"* ]]
}

@test "live: a report of two events reads the first one's section, as the perf.data reader reads its first event, and says so" {
	live
	(cd "$T" && perf record -q -F 999 -g -e cpu-clock -e task-clock -o two.data -- "$PR_DIR/branchy" >/dev/null 2>&1)
	perf report -i "$T/two.data" --stdio --no-children -g folded,0,caller,count >"$T/two.txt" 2>/dev/null
	[ "$(grep -c '^# Samples: .* of event ' "$T/two.txt")" -eq 2 ]
	tach-decode -q -F samples "$T/two.data" >"$T/want"
	tach-decode -F samples "$T/two.txt" 2>"$T/err" >"$T/got"
	[ "$($CMP count "$T/want" "$T/got")" -eq "$(sed -n "1,/^# Samples:/s/^# Samples: \([0-9]*\)  *of event 'cpu-clock'.*/\1/p" "$T/two.txt")" ]
	grep -q "warning: the report's other events from here on are not read; only cpu-clock is" "$T/err"
}
