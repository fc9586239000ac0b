#!/usr/bin/env bash
# Configure (KCONFIG_BASE, default tinyconfig, + fragments) and build a
# kernel tree out of tree.
# Usage: build.sh SRC OUT ARCH FRAGMENT... [-- MAKE_ARGS...]
# Reconfigures only when the fragments change; builds incrementally with ccache.
# KCONFIG_BASE (default tinyconfig) is the starting config, e.g. allmodconfig;
# LLVM=1 or LLVM=-NN builds with clang.
# Fails when an option a fragment asks for did not survive olddefconfig (the
# last fragment naming an option wins, as in merge_config.sh), unless
# KCONFIG_UNMET names a file listing it ("CONFIG_X why" lines, or
# "CONFIG_X@ARCH why" for one ARCH). "m" asked and "y" given counts as
# applied: the module is built in.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../ci/lib/common.sh
source "$here/../ci/lib/common.sh"

[ $# -ge 4 ] || die "usage: $0 SRC OUT ARCH FRAGMENT... [-- MAKE_ARGS...]"
src=$(realpath "$1") out=$2 arch=$3
shift 3
frags=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	frags+=("$(realpath "$1")")
	shift
done
[ "${1:-}" = -- ] && shift
mkdir -p "$out"
out=$(realpath "$out")

export CCACHE_DIR="${CCACHE_DIR:-$PROJECT_CACHE/ccache}"
# Trees live at the same depth under $PROJECT_CACHE/ws: let them share hits.
export CCACHE_BASEDIR="$PROJECT_CACHE" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
jobs=${JOBS:-$(($(nproc) + 1))}
mk=(make -C "$src" O="$out" ARCH="$arch" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc")
# LLVM=1 or LLVM=-NN (a versioned toolchain, e.g. Debian's clang-19) in the
# environment: clang and the LLVM binutils instead of gcc.
case "${LLVM:-}" in
"") ;;
1 | -*)
	sfx=${LLVM#1}
	mk=(make -C "$src" O="$out" ARCH="$arch" -j"$jobs" LLVM="$LLVM" CC="ccache clang$sfx"
		HOSTCC="ccache clang$sfx") ;;
*) die "LLVM=$LLVM: want 1 or -NN" ;;
esac

kbase=${KCONFIG_BASE:-tinyconfig}
unmet=${KCONFIG_UNMET:-/dev/null}
stamp=$( (echo "$kbase ${LLVM:-}"; cat "${frags[@]}" "$unmet") | sha256sum | cut -c1-16)
if [ "$(cat "$out/.config.fragments" 2>/dev/null)" != "$stamp" ] || [ ! -f "$out/.config" ]; then
	log "configuring $out: $kbase + ${frags[*]##*/}"
	"${mk[@]}" -s "$kbase" >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}" >/dev/null
	"${mk[@]}" -s olddefconfig >/dev/null
	# An option the tree does not define (e.g. one a patch adds, asked for on
	# the base too) is noted; one it defines but did not take is an error.
	known() { grep -rqsE "^\s*(menu)?config ${1#CONFIG_}\s*$" --include='Kconfig*' "$src"; }
	listed() { awk -v o="$1" -v a="$arch" '$1 == o || $1 == o "@" a { $1 = ""; print substr($0, 2); f = 1 } END { exit !f }' "$unmet"; }
	missing=0
	while IFS= read -r line; do
		opt=${line%%=*}
		case "$line" in
		CONFIG_*=n) ! grep -q "^$opt=" "$out/.config" || { warn "config: $line not applied"; missing=1; } ;;
		CONFIG_*=*) if grep -qx "$line" "$out/.config" ||
				{ [ "${line#*=}" = m ] && grep -qx "$opt=y" "$out/.config"; }; then
				! listed "$opt" >/dev/null || log "config: $opt is listed in $unmet but applied: take it off the list"
				continue
			fi
			if why=$(listed "$opt"); then
				log "config: $line not applied, as listed: $why"
			elif known "$opt"; then
				warn "config: $line not applied (unmet dependency?)"
				missing=1
			else
				log "config: $opt is not defined in this tree, ignored"
			fi ;;
		esac
	done < <(cat "${frags[@]}" | awk -F= '/^CONFIG_[A-Za-z0-9_]+=/ { last[$1] = $0; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
		END { for (i = 0; i < n; i++) print last[order[i]] }')
	[ $missing -eq 0 ] || die "kernel config for $out lacks options asked for by its fragments"
	echo "$stamp" > "$out/.config.fragments"
fi
log "building $(git -C "$src" describe --always --tags 2>/dev/null || echo "$src") in $out (make -j$jobs $*)"
# A build of the kernel (no target, or one that links it) is stamped with
# the tree commit built (common/stamp.py build_source) once it succeeded: a
# failed one leaves no stamp. Objects built alone leave the kernel, and its
# stamp, as they were.
whole=1
for arg in "$@"; do
	case "$arg" in
	*=* | -*) ;;
	all | vmlinux | bzImage | linux) whole=1 && break ;;
	*) whole=0 ;;
	esac
done
[ $whole = 0 ] || rm -f "$out/build-source.json"
"${mk[@]}" "$@"
[ $whole = 0 ] ||
	PYTHONPATH="$here/..${PYTHONPATH:+:$PYTHONPATH}" python3 -m common.stamp build-source "$src" "$out"
