# Loaded by the bats files that check with speedscope's own importer: its bundle and a Node,
# from build.sh (TACHFMT_NPM_DIR), else installed now into build/npm. Never skipped: without
# them the checks fail and say why.
speedscope_bundle() {
	local dir=${TACHFMT_NPM_DIR:-}
	if [ -z "$dir" ] || [ ! -f "$dir/node_modules/speedscope/dist/release/file-format-schema.json" ]; then
		dir=$(bash "$SOURCE_ROOT/tests/cli/npm-tools.sh" "$SOURCE_ROOT/build/npm") || {
			echo "cannot install speedscope from npm (see above)" >&2
			return 1
		}
	fi
	NODE=$dir/node_modules/.bin/node
	BUNDLE=$(ls "$dir"/node_modules/speedscope/dist/release/speedscope-*.js | head -n 1)
	[ -f "$BUNDLE" ]
}
