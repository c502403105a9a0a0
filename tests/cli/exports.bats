#!/usr/bin/env bats
# The public ABI: the header's TACH_API declarations, the version script and the symbols the
# built library exports must be the same set; and pkg-config finds the library.

setup() {
	LIB=$BUILD_ROOT/lib/libtachfmt.so
	cd "$BATS_TEST_TMPDIR"
}

header_names() {
	sed -n 's/^TACH_API .*[ *]\(tach_[a-z0-9_]*\)(.*/\1/p' "$SOURCE_ROOT/lib/tachfmt.h" | sort
}

map_names() {
	sed -n '/global:/,/local:/p' "$SOURCE_ROOT/lib/tachfmt.map" |
		sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);.*/\1/p' | sort
}

# Every defined dynamic symbol except the version node itself.
lib_names() {
	nm -D --defined-only "$LIB" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort
}

@test "every TACH_API declaration is one line the parser sees" {
	# a declaration split so that the name is not on the TACH_API line would be missed
	local n
	n=$(grep -c '^TACH_API' "$SOURCE_ROOT/lib/tachfmt.h")
	[ "$n" -gt 20 ]
	[ "$(header_names | wc -l)" -eq "$n" ]
	# nothing exported without the macro
	! grep -E '^(const |struct |int |void |uint)[^;]*tach_[a-z_]+\(' "$SOURCE_ROOT/lib/tachfmt.h" || false
}

@test "header, version script and nm -D agree exactly" {
	header_names >h
	map_names >m
	lib_names >l
	diff -u h m
	diff -u h l
	[ -s h ]
	# every export carries the version node
	! nm -D --defined-only "$LIB" | awk '$2 != "A"' | grep -v '@@TACHFMT_0$' || false
}

@test "no internal symbol leaks from the library" {
	! nm -D --defined-only "$LIB" | grep -E ' (tachi_|tc_)' || false
}

@test "the pkg-config file is generated and names the library" {
	local pc=$BUILD_ROOT/meson-private/libtachfmt.pc
	[ -f "$pc" ]
	grep -qx 'Name: libtachfmt' "$pc"
	grep -q '^Libs: .*-ltachfmt' "$pc"
	grep -q '^Cflags: ' "$pc"
	grep -qx "Version: $(sed -n "s/^  version : '\(.*\)',/\1/p" "$SOURCE_ROOT/meson.build")" "$pc"
	if command -v pkg-config >/dev/null; then
		PKG_CONFIG_PATH=$BUILD_ROOT/meson-private pkg-config --libs libtachfmt | grep -q -- -ltachfmt
	fi
}

@test "the library's version matches the project's" {
	local v
	v=$(sed -n "s/^  version : '\(.*\)',/\1/p" "$SOURCE_ROOT/meson.build")
	[ -n "$v" ]
	tach-decode -V | grep -qx "libtachfmt $v"
	[ -e "$BUILD_ROOT/lib/libtachfmt.so.$v" ]
}

@test "libtachfmt.pc asks a static link for exactly the libraries the shared one links" {
	local pc=$BUILD_ROOT/meson-private/libtachfmt.pc
	[ -f "$pc" ]
	# NEEDED entries of the library, as pkg-config package names (sanitizer runtimes aside)
	local needed want
	needed=$(readelf -d "$LIB" | sed -n 's/.*Shared library: \[\(lib[^.]*\)\.so.*/\1/p' |
		grep -vx -e libc -e libm -e libpthread -e libasan -e libubsan -e libtsan -e liblsan |
		sed 's/^libz$/zlib/' | sort | tr '\n' ' ')
	want=$(sed -n 's/^Requires.private: //p' "$pc" | tr -d ' ' | tr ',' '\n' | sort | tr '\n' ' ')
	echo "NEEDED: $needed"
	echo "Requires.private: $want"
	[ -n "$needed" ]
	[ "$needed" = "$want" ]
	[[ $want != *xxhash* ]]
}
