#!/usr/bin/env bash
# Installs the Firefox Profiler's own importer (@firefox-devtools/profiler-cli, which needs
# Node >= 24) and speedscope (whose bundle holds its importer) with a Node 24 binary into
# DIR (default build/npm), unless already there, and prints DIR. Used by build.sh and, when
# build.sh did not run, by tests/cli/tach2gecko.bats and tach2speedscope.bats.
# The Node binary comes from the npm package node-linux-ARCH: the package the `node` package
# installs from its install script, named directly so that no install script has to run.
# Fails loudly (exit 1) when npm is missing or the registry cannot be reached.
set -euo pipefail
dir=${1:-build/npm}
if [ -x "$dir/node_modules/.bin/node" ] &&
	[ -f "$dir/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js" ] &&
	[ -f "$dir/node_modules/speedscope/dist/release/file-format-schema.json" ]; then
	cd "$dir" && pwd
	exit 0
fi
if ! command -v npm >/dev/null; then
	echo "npm-tools.sh: npm not found (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
case "$(uname -m)" in
x86_64) arch=x64 ;;
aarch64) arch=arm64 ;;
ppc64le) arch=ppc64le ;;
s390x) arch=s390x ;;
*) echo "npm-tools.sh: no Node binary package for $(uname -m)" >&2; exit 1 ;;
esac
mkdir -p "$dir"
echo "npm-tools.sh: installing node-linux-$arch@24, @firefox-devtools/profiler-cli and speedscope into $dir" >&2
if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
	"node-linux-$arch@24" "@firefox-devtools/profiler-cli@^0.10.0" "speedscope@~1.25.0" >&2; then
	echo "npm-tools.sh: npm install failed: the Gecko and speedscope import checks cannot run" >&2
	exit 1
fi
"$dir/node_modules/.bin/node" --version >/dev/null
cd "$dir" && pwd
