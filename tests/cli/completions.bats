#!/usr/bin/env bats
# For every program: the completions for bash, zsh and fish offer exactly the long options its
# --help prints, and its man page mentions each of them. Programs come from cmd/meson.build, so
# a new program is checked as soon as it is built.

setup() {
	S=$SOURCE_ROOT
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

# What the bash completion really offers after "PROG --": the script is sourced and the
# function it registers is called the way readline calls it.
bash_longs() { # prog file
	bash -c '
		source "$2" >/dev/null 2>&1 || exit 3
		spec=$(complete -p "$1" 2>/dev/null) || exit 4
		fn=$(sed -n "s/.* -F \([^ ]*\) .*/\1/p" <<<"$spec")
		[ -n "$fn" ] || exit 5
		COMP_WORDS=("$1" --)
		COMP_CWORD=1
		COMP_LINE="$1 --"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" -- "$1" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$1" "$2" | sed -n 's/^--//p' | sort -u
}

# --names in a completion script, comments left out
script_longs() { # file
	grep -v '^[[:space:]]*#' "$1" | grep -o -- '--[a-z0-9][a-z0-9-]*' | sed 's/^--//' | sort -u
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

@test "every program is listed in completion_programs and man_pages" {
	local bad=0
	for p in $(programs); do
		meson_names "$S/completions/meson.build" completion_programs | grep -qx "$p" ||
			{ echo "$p is not in completion_programs (completions/meson.build)" >&2; bad=1; }
		meson_names "$S/docs/meson.build" man_pages | grep -qx "$p.1" ||
			{ echo "$p.1 is not in man_pages (docs/meson.build)" >&2; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "completions offer exactly the long options of --help" {
	local bad=0 tmp=$BATS_TEST_TMPDIR
	for p in $( (programs; meson_names "$S/completions/meson.build" completion_programs) | sort -u); do
		help_longs "$p" >"$tmp/help"
		[ -s "$tmp/help" ] || { echo "$p --help shows no long options" >&2; bad=1; continue; }
		for f in "bash/$p" "zsh/_$p" "fish/$p.fish"; do
			local file=$S/completions/$f
			if [ ! -f "$file" ]; then
				echo "missing completion file completions/$f" >&2
				bad=1
				continue
			fi
			case $f in
			fish/*) fish_longs "$file" >"$tmp/got" ;;
			bash/*) bash_longs "$p" "$file" >"$tmp/got" ;;
			*) script_longs "$file" >"$tmp/got" ;;
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

@test "every --from value list in the completions is the formats --from help lists, and help" {
	local want n=0 f
	want="$(tach-decode --from help | tr '\n' ' ')help"
	for f in "$S"/completions/bash/* "$S"/completions/zsh/_* "$S"/completions/fish/*.fish; do
		# the --from value list: the words from the first format to help
		local got
		got=$(grep -o "'tach gperf[a-z0-9 ]*help'\|\"tach gperf[a-z0-9 ]*help\"\|(tach gperf[a-z0-9 ]*help)" "$f" |
			tr -d "'\"()" | sort -u)
		[ -n "$got" ] || continue
		[ "$got" = "$want" ] || { echo "$f: '$got', want '$want'"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge 27 ]
}
