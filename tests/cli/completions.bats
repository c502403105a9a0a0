#!/usr/bin/env bats
# The shell completions are written at build time from the programs' option tables
# (completions/generate.c). For every program: the built bash, zsh and fish files offer
# exactly the long options its --help prints, are valid scripts, install where each shell
# looks, and equal what a fresh run of the generator writes; the bash one completes as
# readline calls it. Programs come from cmd/meson.build, so a new program is checked as soon
# as it is built.

setup() {
	S=$SOURCE_ROOT
	C=$BUILD_ROOT/completions
}

# The quoted names of a meson list or dict: NAME = [ ... ] or NAME = { 'key' : ..., }.
meson_names() { # file variable
	awk -v v="$2" '
		$0 ~ "^" v " = [[{]" { on = 1; next }
		on && /^[]}]/ { exit }
		on { if (match($0, /^[[:space:]]*'"'"'[^'"'"']*'"'"'/)) {
			s = substr($0, RSTART, RLENGTH); gsub(/[[:space:]'"'"']/, "", s); print s } }
	' "$1"
}

programs() {
	meson_names "$S/cmd/meson.build" programs
}

help_longs() { # prog
	"$1" --help | sed -n 's/^ \{2,\}\(-[A-Za-z0-9], \)\{0,1\}--\([a-z0-9][a-z0-9-]*\).*/\2/p' | sort -u
}

# What the bash completion offers for the command line PROG WORD... (the last word being
# completed): the script is sourced and the function it registers is called the way
# readline calls it. One reply a line.
bash_complete() { # file prog word...
	bash -c '
		file=$1
		shift
		source "$file" >/dev/null 2>&1 || exit 3
		spec=$(complete -p "$1" 2>/dev/null) || exit 4
		fn=$(sed -n "s/.* -F \([^ ]*\) .*/\1/p" <<<"$spec")
		[ -n "$fn" ] || exit 5
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" || exit 6
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$@"
}

bash_longs() { # prog file
	bash_complete "$2" "$1" -- | sed -n 's/^--//p' | sort -u
}

# _arguments' option specs: the names before each description
zsh_longs() { # file
	grep "^[[:space:]]*'" "$1" | sed 's/\[.*//' | grep -o -- '--[a-z0-9][a-z0-9-]*' |
		sed 's/^--//' | sort -u
}

fish_longs() { # file
	grep -v '^[[:space:]]*#' "$1" |
		grep -oE -- '(^|[[:space:]])(-l|--long|--long-option)[[:space:]=]+[a-z0-9][a-z0-9-]*' |
		sed -E 's/.*[[:space:]=]//' | sort -u
}

compare() { # what want-file got-file
	if ! diff -q "$2" "$3" >/dev/null; then
		echo "$1:" >&2
		comm -23 "$2" "$3" | sed 's/^/  missing: --/' >&2
		comm -13 "$2" "$3" | sed 's/^/  not in --help: --/' >&2
		return 1
	fi
}

@test "there are programs to check" {
	[ "$(programs | wc -l)" -ge 2 ]
	programs | grep -qx tach-decode
}

@test "every program is listed in man_pages" {
	local bad=0
	for p in $(programs); do
		meson_names "$S/docs/meson.build" man_pages | grep -qx "$p.1" ||
			{ echo "$p.1 is not in man_pages (docs/meson.build)" >&2; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "completions offer exactly the long options of --help" {
	local bad=0 tmp=$BATS_TEST_TMPDIR
	for p in $(programs); do
		help_longs "$p" >"$tmp/help"
		[ -s "$tmp/help" ] || { echo "$p --help shows no long options" >&2; bad=1; continue; }
		for f in "$p" "_$p" "$p.fish"; do
			local file=$C/$f
			if [ ! -f "$file" ]; then
				echo "missing completion file $file" >&2
				bad=1
				continue
			fi
			case $f in
			*.fish) fish_longs "$file" >"$tmp/got" ;;
			_*) zsh_longs "$file" >"$tmp/got" ;;
			*) bash_longs "$p" "$file" >"$tmp/got" ;;
			esac
			compare "completions/$f" "$tmp/help" "$tmp/got" || bad=1
		done
	done
	[ "$bad" -eq 0 ]
}

@test "each program's man page mentions every long option" {
	local bad=0
	for p in $(programs); do
		local page=$S/docs/$p.1.scd
		if [ ! -f "$page" ]; then
			echo "missing man page docs/$p.1.scd" >&2
			bad=1
			continue
		fi
		for o in $(help_longs "$p"); do
			grep -qE -- "--$o([^a-z0-9-]|\$)" "$page" ||
				{ echo "docs/$p.1.scd does not mention --$o" >&2; bad=1; }
		done
		for s in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' EXAMPLES 'SEE ALSO'; do
			grep -qx "# $s" "$page" || { echo "docs/$p.1.scd has no section $s" >&2; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

@test "each man page's --count-unit says what the program does with a count that is a time" {
	# the model keeps a time as one record standing for it, never samples of an interval;
	# each page says how its own output shows that time
	local bad=0 p page text
	for p in $(programs); do
		page=$S/docs/$p.1.scd
		help_longs "$p" | grep -qx count-unit || continue
		text=$(awk '/^\*--count-unit\* /{on=1; next} on && !/^\t/{exit} on' "$page" | tr -s ' \t\n' '   ')
		[[ "$text" != *"samples of one interval each"* ]] ||
			{ echo "docs/$p.1.scd: a time as samples of one interval" >&2; bad=1; }
		[[ "$text" == *"one record standing for that time exactly"* ]] ||
			{ echo "docs/$p.1.scd: --count-unit does not say a time is one record" >&2; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "the built completions are what the generator writes now, and install where each shell looks" {
	local tmp=$BATS_TEST_TMPDIR/fresh bad=0
	mkdir "$tmp"
	"$C/generate" "$tmp"
	# what meson installs: the built file's path, a tab, where it goes
	jq -r 'to_entries[] | "\(.key)\t\(.value)"' "$BUILD_ROOT/meson-info/intro-installed.json" \
		>"$BATS_TEST_TMPDIR/installed"
	for p in $(programs); do
		for pair in "$p:bash-completion/completions" "_$p:zsh/site-functions" \
			"$p.fish:fish/vendor_completions.d"; do
			local f=${pair%%:*} dir=${pair#*:}
			cmp "$tmp/$f" "$C/$f" || { echo "$C/$f is not what the generator writes" >&2; bad=1; }
			local dest
			dest=$(awk -F '\t' -v k="$C/$f" '$1 == k { print $2 }' "$BATS_TEST_TMPDIR/installed")
			[[ $dest == */share/$dir/$f ]] ||
				{ echo "$C/$f installs as '$dest', not as .../share/$dir/$f" >&2; bad=1; }
		done
	done
	# and nothing else: three files a program
	[ "$(ls "$tmp" | wc -l)" -eq $((3 * $(programs | wc -l))) ]
	[ "$bad" -eq 0 ]
}

@test "every completion is a valid script of its shell (zsh and fish when installed)" {
	local bad=0 p
	for p in $(programs); do
		bash -n "$C/$p" || { echo "bash -n $C/$p failed" >&2; bad=1; }
	done
	if command -v zsh >/dev/null; then
		for p in $(programs); do
			zsh -n "$C/_$p" || { echo "zsh -n $C/_$p failed" >&2; bad=1; }
		done
	else
		echo "# zsh is not installed: zsh -n skipped" >&3
	fi
	if command -v fish >/dev/null; then
		for p in $(programs); do
			fish -n "$C/$p.fish" || { echo "fish -n $C/$p.fish failed" >&2; bad=1; }
		done
	else
		echo "# fish is not installed: fish -n skipped" >&3
	fi
	[ "$bad" -eq 0 ]
}

@test "bash: --from completes the formats the library reads, auto and help, for every program that detects its input" {
	local want n=0 p
	want=$( (tach-decode --from help; echo auto; echo help) | sort)
	[ "$(echo "$want" | wc -l)" -ge 5 ]
	for p in $(programs); do
		help_longs "$p" | grep -qx from || continue
		[ "$(bash_complete "$C/$p" "$p" --from '' | sort)" = "$want" ] ||
			{ echo "$p --from: $(bash_complete "$C/$p" "$p" --from '' | tr '\n' ' ')" >&2; return 1; }
		# --from=VALUE too: bash splits the word at '='
		[ "$(bash_complete "$C/$p" "$p" --from = ppr | sort | tr '\n' ' ')" = "pprof pproftext " ]
		n=$((n + 1))
	done
	[ "$n" -ge 10 ]
}

@test "bash: -o completes files, --binary-path directories, --status the states one by one" {
	cd "$BATS_TEST_TMPDIR"
	mkdir -p prof.d
	touch prof.tach prof.txt
	[ "$(bash_complete "$C/tach2pprof" tach2pprof -o prof | sort | tr '\n' ' ')" = "prof.d prof.tach prof.txt " ]
	[ "$(bash_complete "$C/tach2pprof" tach2pprof --output prof.t | sort | tr '\n' ' ')" = "prof.tach prof.txt " ]
	[ "$(bash_complete "$C/gperf2tach" gperf2tach --binary-path prof)" = prof.d ]
	# the input: any file, not only .tach
	[ "$(bash_complete "$C/tach2flamegraph" tach2flamegraph --hash prof.t | sort | tr '\n' ' ')" = "prof.tach prof.txt " ]
	[ "$(bash_complete "$C/tach-decode" tach-decode --status gil,no-i)" = gil,no-idle ]
	[ "$(bash_complete "$C/tach-decode" tach-decode -F s)" = samples ]
	[ "$(bash_complete "$C/tach-encode" tach-encode --level 2 | tr '\n' ' ')" = "2 20 21 22 " ]
	[ "$(bash_complete "$C/tach2gecko" tach2gecko --level '' | wc -l)" -eq 9 ]
	# a value of its own (a number): nothing offered
	[ -z "$(bash_complete "$C/tach-decode" tach-decode --max-depth '')" ]
}

@test "fish: --from and --status complete their values (when fish is installed)" {
	command -v fish >/dev/null || skip "fish is not installed"
	local got
	got=$(fish -c "source '$C/tach2speedscope.fish'; complete -C 'tach2speedscope --from '" |
		cut -f1 | sort)
	[ "$got" = "$( (tach-decode --from help; echo auto; echo help) | sort)" ]
	got=$(fish -c "source '$C/tach-merge.fish'; complete -C 'tach-merge --status gil,no-i'" | cut -f1)
	[ "$got" = gil,no-idle ]
}
