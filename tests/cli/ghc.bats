#!/usr/bin/env bats
# GHC's cost-centre profiles, read by every program without naming the format: the .prof
# report (+RTS -p, -P) folds to what inferno's ghcprof collapser made of the peers' file
# (../shared/peers, PEERS_DIR elsewhere: expected/formats/ghc-ticks.folded), the -pj JSON
# gives what speedscope's own Haskell importer (speedscope_import.mjs --as=haskell) gives,
# time and allocations alike; our files written to GHC's documented output (tests/data/ghc)
# too. No live GHC: Debian's ghc is about 780 MB installed, too much for the CI machine.
# Compared through tests/cli/ghc_fold.py (frame labels cut to the cost centres' names).

load speedscope_bundle

setup() {
	T=$BATS_TEST_TMPDIR
	PEER=${PEERS_DIR:-$SOURCE_ROOT/../shared/peers}
	D=$TESTDATA/ghc
	FOLD="python3 $SOURCE_ROOT/tests/cli/ghc_fold.py"
}


# as_speedscope FILE.json: ticks and allocations per stack are speedscope's, from the
# file, a pipe and --from, and so are the totals.
as_speedscope() {
	local f=$1 p v
	"$NODE" "$SOURCE_ROOT/tests/cli/speedscope_import.mjs" --as=haskell "$BUNDLE" "$f" >"$T/imp"
	for p in time:count allocation:alloc; do
		v=${p##*:}
		$FOLD speedscope "$f" "${p%%:*}" "$T/imp" >"$T/want"
		[ -s "$T/want" ]
		tach-decode -q --no-thread-frames --value "$v" "$f" | $FOLD ours "$f" | diff -u "$T/want" -
		tach-decode -q --no-thread-frames --value "$v" <"$f" | $FOLD ours "$f" | diff -u "$T/want" -
		tach-decode -q --no-thread-frames --value "$v" --from ghcpj "$f" | $FOLD ours "$f" |
			diff -u "$T/want" -
		[ "$(awk '{ t += $NF } END { print t }' "$T/want")" = \
			"$(awk -F'\t' -v p="${p%%:*}" '/^#/ && $2 ~ (" " p "$") { print $4 }' "$T/imp")" ]
	done
	run tach-decode -v -q -F info "$f"
	[[ ${lines[0]} == "tach-decode: $f: ghcpj input" ]]
}

@test "the peers' .prof report folds as inferno's ghcprof collapser folds it" {
	[ -f "$PEER/formats/ghc-ticks.prof" ] || skip "../shared/peers is not there"
	local f=$PEER/formats/ghc-ticks.prof
	$FOLD peer "$f" "$PEER/expected/formats/ghc-ticks.folded" >"$T/want"
	[ -s "$T/want" ]
	tach-decode -q --no-thread-frames "$f" | $FOLD ours "$f" | diff -u "$T/want" -
	tach-decode -q --no-thread-frames <"$f" | $FOLD ours "$f" | diff -u "$T/want" -
	tach-decode -q --no-thread-frames --from ghcprof "$f" | $FOLD ours "$f" | diff -u "$T/want" -
	# the allocations add up to the report's total, the ticks to its total ticks
	[ "$(tach-decode -q --value alloc "$f" | awk '{ t += $NF } END { print t }')" = 59542424 ]
	[ "$(tach-decode -q "$f" | awk '{ t += $NF } END { print t }')" = 23 ]
	# a tick is the report's interval: 23 ticks @ 1000 us
	[ "$(tach-decode -q --value time "$f" | awk '{ t += $NF } END { print t }')" = 23000 ]
	# what the tree cannot say is said once, and the format is named
	run tach-decode -v -F info "$f"
	[[ ${lines[0]} == "tach-decode: $f: warning: a GHC profile holds each cost-centre stack's totals, not samples: "* ]]
	[[ ${lines[1]} == "tach-decode: $f: ghcprof input" ]]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c 'warning: a GHC profile')" -eq 1 ]
}

@test "the peers' -pj profile: speedscope's time and allocation profiles" {
	[ -f "$PEER/formats/ghc-pj.json" ] || skip "../shared/peers is not there"
	speedscope_bundle
	as_speedscope "$PEER/formats/ghc-pj.json"
}

@test "our files: a -p report (percentages only), a -pj profile with allocations and no tick" {
	speedscope_bundle
	as_speedscope "$D/fib.json"
	tach-decode -q --no-thread-frames "$D/fib.json" >"$T/c"
	grep -qx 'MAIN.MAIN;Main.CAF;fib.hs:Main.main:10;fib.hs:Main.fib:5 400' "$T/c"
	[ "$(wc -l <"$T/c")" -eq 2 ]
	# a stack of allocations only: in the allocations, and in pprof as a sample of no time
	tach-decode -q --no-thread-frames --value alloc "$D/fib.json" | grep -qx 'MAIN.MAIN;Main.CAF:lvl1_r1 100'
	tach2pprof -q "$D/fib.json" -o "$T/p.pb.gz"
	tach-decode -q --no-thread-frames --value alloc "$T/p.pb.gz" | grep -qx 'MAIN.MAIN;Main.CAF:lvl1_r1 100'
	[ "$(tach-decode -q --value cpu "$T/p.pb.gz" | awk '{ t += $NF } END { print t }')" = 500000000 ]
	[ "$(tach-decode -q --value time "$D/fib.json" | awk '{ t += $NF } END { print t }')" = 500000 ]
	# -p: ticks and bytes from %time and %alloc of the totals, said once
	run tach-decode --no-thread-frames "$D/percent.prof"
	[ "$status" -eq 0 ]
	[[ $output == *"percent.prof:15: warning: no ticks and bytes columns (+RTS -P writes them): each stack's are estimated from its %time and %alloc"* ]]
	tach-decode -q --no-thread-frames "$D/percent.prof" | sort >"$T/c"
	printf '%s\n' 'MAIN.MAIN;Main.CAF;fib.hs:Main.main:10 100' \
		'MAIN.MAIN;Main.CAF;fib.hs:Main.main:10;fib.hs:Main.fib:5 400' | diff -u - "$T/c"
	tach-decode -q --no-thread-frames --value alloc "$D/percent.prof" | sort >"$T/c"
	printf '%s\n' 'MAIN.MAIN;Main.CAF;fib.hs:Main.main:10 400000' \
		'MAIN.MAIN;Main.CAF;fib.hs:Main.main:10;fib.hs:Main.fib:5 600000' | diff -u - "$T/c"
	run tach-decode -v -q -F info "$D/percent.prof"
	[[ ${lines[0]} == "tach-decode: $D/percent.prof: ghcprof input" ]]
}

@test "errors: one line with the line or offset, exit 1" {
	bad() { # file message
		run tach-decode "$1"
		[ "$status" -eq 1 ]
		[ "$output" = "tach-decode: $1:$2" ] || { echo "$output"; false; }
	}
	head -n 14 "$D/percent.prof" >"$T/notree.prof"
	bad "$T/notree.prof" "14: no cost-centre tree (its header line, COST CENTRE MODULE ... no. ...) in the report"
	{ head -n 17 "$D/percent.prof"; echo ' CAF Main <entire-module> 219 0 0.0'; } >"$T/short.prof"
	run tach-decode -q "$T/short.prof"
	[ "$status" -eq 1 ]
	[[ $output == *"short.prof:18: a cost centre line with fewer columns than the tree's header" ]]
	{ head -n 17 "$D/percent.prof"; echo ' CAF Main <entire-module> 219 0 x.0 0.0 100.0 100.0'; } >"$T/nan.prof"
	run tach-decode -q "$T/nan.prof"
	[ "$status" -eq 1 ]
	[[ $output == *"nan.prof:18: a cost centre's %time or %alloc is no percentage" ]]
	run tach-decode -q --max-depth 3 "$D/percent.prof"
	[ "$status" -eq 1 ]
	[[ $output == *"percent.prof:20: a stack of 4 frames is deeper than the limit of 3" ]]
	sed 's/"id": 221, "entries": 1664079/"id": 9, "entries": 1664079/' "$D/fib.json" >"$T/noid.json"
	run tach-decode -q "$T/noid.json"
	[ "$status" -eq 1 ]
	[[ $output == *"noid.json: offset "*": cost centre 9 is not in \"cost_centres\"" ]]
	sed 's/"ticks": 400/"ticks": -4/' "$D/fib.json" >"$T/neg.json"
	run tach-decode -q "$T/neg.json"
	[ "$status" -eq 1 ]
	[[ $output == *"neg.json: offset "*": a node's ticks must be an integer 0..9223372036854775807" ]]
	printf '{"rts_arguments":[],"initial_capabilities":0}' >"$T/empty.json"
	run tach-decode -q "$T/empty.json"
	[ "$status" -eq 1 ]
	[ "$output" = "tach-decode: $T/empty.json: offset 0: not a GHC -pj profile: no \"cost_centres\" and \"profile\"" ]
	head -c 900 "$D/fib.json" >"$T/cut.json"
	run tach-decode -q --from ghcpj "$T/cut.json"
	[ "$status" -eq 1 ]
	[[ $output == *"cut.json: offset "*": JSON: "* ]]
}
