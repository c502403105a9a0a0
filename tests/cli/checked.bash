# checked FILE... -- COMMAND [ARG...]: runs COMMAND, a check by an outside tool (go tool
# pprof, a Node importer, a Python checker) whose verdict depends only on the bytes of the
# FILEs and on its other arguments.
#
# With TACHFMT_CHECK_CACHE set to a directory (build.sh sets one for all the passes of one
# run and empties it first), a check that passed is remembered by those bytes and
# arguments, and passes again on the same bytes without running. Every program still runs
# in every pass and its output is still compared, by hash, with one that passed: what the
# sanitizer and window passes skip is only rerunning the outside tool on an output the
# plain pass had it accept (output depends only on input). Without the variable (meson test
# run by hand) every check runs.
#
# A FILE's path in the arguments counts as its position, so that files in per-test
# temporary directories give the same key in every pass; the key also holds the checker
# scripts (tests/**.py, .mjs) named in the arguments.
checked() {
	local files=() args=() a i key=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	[ "${1:-}" = -- ] || { echo "checked: no -- before the command" >&2; return 2; }
	shift
	if [ -z "${TACHFMT_CHECK_CACHE:-}" ]; then
		"$@"
		return
	fi
	for a in "$@"; do
		for i in "${!files[@]}"; do
			[ "$a" = "${files[$i]}" ] && a="@$i"
		done
		case $a in *.py | *.mjs) [ -f "$a" ] && files+=("$a") ;; esac
		args+=("$a")
	done
	local sums h
	sums=$(sha256sum -- "${files[@]}") || return
	while read -r h _; do key+=$h; done <<<"$sums"
	key=$(printf '%s\0' "$key" "${args[@]}" | sha256sum)
	key=${key%% *}
	[ -e "$TACHFMT_CHECK_CACHE/$key" ] && return 0
	"$@" || return
	mkdir -p "$TACHFMT_CHECK_CACHE" && : >"$TACHFMT_CHECK_CACHE/$key"
}
