#!/bin/bash
# The install test: `meson install --destdir` into a temporary directory
# holds the ptloom binary, the man page, the annotations header, its
# pkg-config file and the bash completion; `man -l` renders the page,
# pkg-config finds the header, and the installed binary runs.
#
#   tests/install.sh BUILD_DIR
set -euo pipefail

build=$1
dest=$(mktemp -d /tmp/ptloom-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
fail() { echo "install: $*" >&2; exit 1; }

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet \
	>"$dest/log" 2>&1 || { cat "$dest/log" >&2; fail "meson install failed"; }

find_one() {
	local f
	f=$(find "$dest" -path "*$1" -print -quit)
	[ -n "$f" ] || fail "no $1 in the installed tree:
$(cd "$dest" && find . -type f | sort)"
	echo "$f"
}
bin=$(find_one /bin/ptloom)
man=$(find_one /man1/ptloom.1)
hdr=$(find_one /include/ptloom.h)
pc=$(find_one /pkgconfig/ptloom.pc)
comp=$(find_one /bash-completion/completions/ptloom)

"$bin" --version | grep -q '^ptloom .*(git ' || fail "ptloom --version"
"$bin" --version | grep -q 'capstone' || fail "--version names no capstone"
bash -n "$comp" || fail "the completion script does not parse"
(source "$comp" && complete -p ptloom >/dev/null) ||
	fail "the completion script registers nothing"

if command -v man >/dev/null; then
	out=$(MANWIDTH=80 man -l "$man" 2>&1) || fail "man -l failed: $out"
	grep -q 'EXIT STATUS' <<<"$out" || fail "man -l shows no EXIT STATUS"
	grep -q 'trust-env' <<<"$out" || fail "man -l shows no --trust-env"
else
	echo "install: no man here: skipping the rendering check" >&2
fi
if command -v pkg-config >/dev/null; then
	cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") \
		PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags ptloom)
	echo '#include <ptloom.h>
int main(void) { ptloom_yield("x"); return 0; }' >"$dest/t.c"
	cc $cflags -I"$(dirname "$hdr")" "$dest/t.c" -o "$dest/t" ||
		fail "the installed header does not compile"
	"$dest/t"
fi
echo "install: ok ($bin, $man, $hdr, $pc, $comp)"
