#!/usr/bin/env bats
# callgrind input (valgrind --tool=callgrind, xdebug, tach2callgrind) as a user reads it:
# a recording made here has callgrind_annotate's self cost per function, the call tree
# the program has, and the stacks speedscope's own importer builds (its npm bundle,
# tests/cli/speedscope_callgrind.mjs); the peers' files (speedscope's and xdebug's samples) give the stacks
# speedscope's importer builds from their call graphs; tach2callgrind's output read back
# and written again gives callgrind_annotate the same table; damaged files are one line
# naming the line. PEERS_DIR overrides where the peers' files are (a worktree).

bats_require_minimum_version 1.5.0

setup() {
	T=$BATS_TEST_TMPDIR
	P=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	CASES=$FIXTURES/tach/cases
}

need_valgrind() {
	command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
		skip "valgrind not installed (Debian package valgrind)"
	command -v gcc >/dev/null || skip "gcc not installed"
}

# callgrind_annotate's function table of FILE: "COST file:function" per line, sorted (the
# file's base name, as collapsed output labels frames).
annotate() {
	callgrind_annotate --threshold=100 "$@" |
		sed -n '/file:function/,$p' | grep -E '^ *[0-9,]+ \(' |
		sed -E 's/^ *([0-9,]+) \([ 0-9.%]+\) +([^ ]+).*/\1 \2/; s/,//g' |
		awk '{n = split($2, a, "/"); print $1, a[n]}' | sort
}

# Self cost per function of tach-decode's collapsed output: "COST file:function".
self_costs() {
	tach-decode -q -F collapsed "$@" |
		awk '{ w = $NF; l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";")
		       sub(/:[0-9-]+$/, "", f[n]); s[f[n]] += w }
		     END { for (k in s) print s[k], k }' | sort
}

@test "a recording of a known call tree: callgrind_annotate's self costs, the stacks, detection" {
	need_valgrind
	cp "$TESTDATA/callgrind/calltree.c" "$T/calltree.c"
	gcc -O1 -g -o "$T/calltree" "$T/calltree.c"
	(cd "$T" && valgrind -q --tool=callgrind --callgrind-out-file=cg.out ./calltree)
	run --separate-stderr tach-decode -v -F collapsed "$T/cg.out"
	[ "$status" -eq 0 ]
	[[ $stderr == *"callgrind input"* ]]
	# the program's functions: callgrind_annotate's self costs, exactly
	annotate "$T/cg.out" | grep ' calltree\.c:' >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 4 ]
	self_costs "$T/cg.out" | grep ' calltree\.c:' | diff "$T/want" -
	# and the call tree: leaf under mid under main, other under main, nowhere else
	printf '%s\n' "$output" | grep 'calltree\.c:' | sed -E 's/.*(calltree\.c:main)/\1/; s/:[0-9]+;/;/g; s/:[0-9]+ / /' |
		sort >"$T/tree"
	awk '{print $1}' "$T/tree" | tr '\n' ' ' | grep -qx 'calltree.c:main calltree.c:main;calltree.c:mid calltree.c:main;calltree.c:mid;calltree.c:leaf calltree.c:main;calltree.c:other '
	# the first event is Ir: the weights are its counts, the value type says so
	tach-decode -q -F info "$T/cg.out" | grep -q 'Ir'
}

# speedscope's bundle and node (TACHFMT_NPM_DIR, else installed by npm-tools.sh)
speedscope_import() { # file: its stacks as speedscope's callgrind importer builds them
	local dir=${TACHFMT_NPM_DIR:-}
	if [ -z "$dir" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
		dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm")
	fi
	"$dir/node_modules/.bin/node" "$SOURCE_ROOT/tests/cli/speedscope_callgrind.mjs" \
		"$dir"/node_modules/speedscope/dist/release/speedscope-*.js "$1"
}

@test "a recording of a whole process (ld.so, libc: several callers, recursion): speedscope's stacks" {
	need_valgrind
	cp "$TESTDATA/callgrind/calltree.c" "$T/calltree.c"
	gcc -O1 -g -o "$T/calltree" "$T/calltree.c"
	(cd "$T" && valgrind -q --tool=callgrind --callgrind-out-file=cg.out ./calltree)
	speedscope_import "$T/cg.out" >"$T/ss"
	tach-decode -q -F collapsed "$T/cg.out" | sed 's/^tid:0;//' | sort >"$T/ours"
	# the same stacks; each weight within 1 of speedscope's (it rounds its flame graph's
	# positions, we a running sum of the self costs)
	[ "$(wc -l <"$T/ours")" -gt 100 ]
	diff <(sed 's/ [0-9]*$//' "$T/ss") <(sed 's/ [0-9]*$//' "$T/ours")
	paste -d ' ' <(awk '{print $NF}' "$T/ss") <(awk '{print $NF}' "$T/ours") |
		awk '{ d = $1 - $2; if (d < -1 || d > 1) { print "off by " d ": " NR; bad = 1 } }
		     END { exit bad }'
	# speedscope's own reading of the peers' example, exactly
	[ -f "$P/formats/callgrind-example.log" ] || skip "no ../shared/peers beside the source tree"
	speedscope_import "$P/formats/callgrind-example.log" |
		diff - <(tach-decode -q -F collapsed "$P/formats/callgrind-example.log" | sed 's/^tid:0;//' | sort)
}

@test "the peers' callgrind files: the stacks speedscope's importer builds, both events of xdebug's" {
	[ -f "$P/formats/callgrind-example.log" ] || skip "no ../shared/peers beside the source tree"
	# speedscope's rule: main (820) gives func1 820 x 400/820 and func2 400; func1 gives
	# func2 400 x 300/400; each keeps the rest
	for f in callgrind-example.log callgrind-xdebug.log; do
		run --separate-stderr tach-decode -v -F collapsed "$P/formats/$f"
		[ "$status" -eq 0 ]
		[[ $stderr == *"callgrind input"* ]]
		# func2 has two callers: said once
		[ "$(grep -c 'holds a call graph, not stacks' <<<"$stderr")" -eq 1 ]
		[ "$output" = "tid:0;file1.c:main:0;file2.c:func2:0 400
tid:0;file1.c:main:0;file1.c:func1:0;file2.c:func2:0 300
tid:0;file1.c:main:0;file1.c:func1:0 100
tid:0;file1.c:main:0 20" ]
	done
	# xdebug's second event (Memory_(bytes)) is a value of its own: main's 15000 + 20000 +
	# 3000 in all, written back as callgrind's second event
	tach2callgrind -q "$P/formats/callgrind-xdebug.log" -o "$T/x.cg"
	grep -qx 'events: Time__10ns_ Memory__bytes_' "$T/x.cg"
	grep -qx 'totals: 820 38000' "$T/x.cg"
}

@test "tach2callgrind's output read back: callgrind_annotate's table again, samples and times" {
	command -v callgrind_annotate >/dev/null || skip "valgrind not installed"
	for f in "$CASES"/*.tach; do
		# deep_stack_300's stacks start at two depths: a function with two callers, whose
		# split the call graph cannot know
		case ${f##*/} in deep_stack_300.tach) continue ;; esac
		tach2callgrind -q "$f" -o "$T/a.cg"
		tach2callgrind -q "$T/a.cg" -o "$T/b.cg"
		annotate "$T/a.cg" >"$T/a.tab"
		annotate "$T/b.cg" | diff "$T/a.tab" - || { echo "${f##*/}"; false; }
		# the events are samples and time again, not two counts
		if grep -q Time_ns "$T/a.cg"; then
			head -8 "$T/b.cg" | grep -q '^events: Samples Time_ns$'
		fi
	done
	# one sample's stack and time, exactly: handler called by main called by <module>
	tach2callgrind -q "$CASES/single_sample.tach" -o "$T/one.cg"
	run --separate-stderr tach-decode -F collapsed "$T/one.cg"
	[ "$output" = "tid:0;app.py:<module>:0;app.py:main:0;app.py:handler:0 1" ]
	# a call tree: its stacks are exact, nothing to say
	[ -z "$stderr" ]
	run tach-decode -q -F info "$T/one.cg"
	[[ $output == *"interval"*"1000"* ]]
}

@test "damaged callgrind files: one line naming the line" {
	bad() { # text message
		printf "$1" >"$T/bad.cg"
		run --separate-stderr tach-decode --from callgrind "$T/bad.cg"
		[ "$status" -eq 1 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] &&
			[[ $stderr == "tach-decode: $T/bad.cg:"*"$2"* ]] || { echo "$1: $stderr"; return 1; }
	}
	bad 'events: Ir\nfn=a\n1 2 3\n' '3: a cost line with more costs than events'
	bad 'fn=a\n1 2\n' '2: a cost line before "events:"'
	bad 'events: Ir\nfn=(1)\n' '2: a compressed name used before it is defined'
	bad 'events: Ir\nfn=(1) a\nfn=(1) b\n' '3: a compressed name defined twice'
	bad 'events: Ir\nfn=a\n+1 2\n' '3: a cost line'"'"'s position is no number, or relative to none'
	bad 'events: Ir\nfn=a\n1 99999999999999999999\n' '3: a cost is no number'
	bad 'events: Ir\nfn=a\ncalls=1 2\n' 'the input ends after "calls="'
	bad 'events: Ir\nhello\n' '2: not a callgrind line'
	bad 'events: Ir\nevents: Ir\n' '2: a second "events:" line'
	bad 'version: 1\n' 'no "events:" line'
	bad 'events: Ir\nfn=a\n1 9223372036854775807\n1 1\n' '4: costs add up past 2^63 - 1'
	# a chain deeper than the depth limit is refused, not cut
	{ echo 'events: Ir'; for i in $(seq 1 40); do printf 'fn=f%d\n1 1\ncfn=f%d\ncalls=1 1\n1 %d\n' \
		"$i" $((i + 1)) $((41 - i)); done; } >"$T/deep.cg"
	run --separate-stderr tach-decode --max-depth 20 "$T/deep.cg"
	[ "$status" -eq 1 ] && [[ $stderr == *"deeper than the depth limit of 20"* ]]
	run --separate-stderr tach-decode -q -F collapsed "$T/deep.cg"
	[ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 40 ]
}
