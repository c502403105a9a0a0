# Loaded by the bats files that check with the Firefox Profiler's own importer.
# The Firefox Profiler CLI: from build.sh (TACHFMT_NPM_DIR), else installed now. Never
# skipped: without it the import check fails and says why.
profiler_cli() {
	local dir=${TACHFMT_NPM_DIR:-}
	if [ -z "$dir" ] || [ ! -x "$dir/node_modules/.bin/node" ]; then
		dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm") || {
			echo "cannot install the Firefox Profiler CLI from npm (see above)" >&2
			return 1
		}
	fi
	PCLI="$dir/node_modules/.bin/node $dir/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js"
}
