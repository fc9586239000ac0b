#!/usr/bin/env bash
# Install what the pipeline needs on a Debian 12 host, saying what it installs.
# Debian packages come from the host's own apt sources; virtme-ng (1.41, from
# sid) and b4 (0.14.2, from trixie) come through the project's private apt
# state (ci/lib/apt-private.sh). Not sid's b4 0.16: it needs python3-pygit2
# >= 1.14 (b4/_rewrite.py imports pygit2.enums), Debian 12 has 1.11.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
# shellcheck source=lib/apt-private.sh
source "$here/lib/apt-private.sh"

VNG_VERSION=1.41-1
B4_VERSION=0.14.2-2
# Pinned packages from the private suites, as package=version.
PRIVATE_DEBS=("virtme-ng=$VNG_VERSION" "b4=$B4_VERSION")
PACKAGES=(
	# kernel build and per-patch checks
	build-essential flex bison bc cpio kmod rsync libelf-dev libssl-dev
	# (ocaml-nox: two of scripts/coccinelle's semantic patches are OCaml scripts)
	ccache coccinelle ocaml-nox perl python3 python3-yaml python3-jsonschema
	python3-ply python3-git
	# VM (TCG) and the tests run inside it
	qemu-system-x86 busybox-static iproute2 ethtool python3-pyroute2 python3-scapy
	# ping: the setup of the tc-testing cases 82d9 and c797; patchelf:
	# tc-testing.sh's copies of the kernel's ip and tc (their own loader)
	iputils-ping patchelf
	# udevadm: lib/py's NetdevSimDev settles udev after creating a netdevsim
	# (the drivers/net tests on netdevsim); socat: netdevsim/peer.sh's traffic
	udev socat
	# C++ selftests and tools
	cmake g++ libmnl-dev libgtest-dev clang-format clang-tidy
	nlohmann-json3-dev libcli11-dev libtracefs-dev libtraceevent-dev pkg-config
	# Python lint of the glue, and its type check (mypy.ini)
	flake8 python3-mypy
	# netdev CI's checks by name: build_clang (the kernel needs clang >=
	# 17.0.1, Debian 12's default is 14), pylint, shellcheck, yamllint,
	# checkpatch --codespell; ruff runs on node (below)
	clang-19 lld-19 llvm-19 pylint shellcheck yamllint codespell nodejs npm
	# reports
	gnuplot-nox
	# the mailing list on loopback (mailing-list stage)
	public-inbox python3-aiosmtpd
)
# Extra packages (space-separated), e.g. for a local tool; also used by tests.
read -r -a extra <<< "${SETUP_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")

# node and npm count as present whoever packaged them: a nodejs from another
# archive (NodeSource's bundles npm) conflicts with Debian's npm package.
provided_by_command() {
	case "$1" in
	nodejs) command -v node > /dev/null ;;
	npm) command -v npm > /dev/null ;;
	*) return 1 ;;
	esac
}
missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		provided_by_command "$p" || missing+=("$p")
done
private=()
for pv in "${PRIVATE_DEBS[@]}"; do
	dpkg-query -W -f='${Version}' "${pv%%=*}" 2>/dev/null | grep -qxF "${pv#*=}" || private+=("$pv")
done
# ruff: Debian 12 has no package; its WebAssembly build is on npm (the
# same linter; tools/series/ruff-check.js runs it).
RUFF_WASM=@astral-sh/ruff-wasm-nodejs@0.17.4
RUFF_DIR=${RUFF_WASM_DIR:-$PROJECT_CACHE/npm-tools}
ruff_ok() { [ "$(cd "$RUFF_DIR" 2>/dev/null && node -p 'require("@astral-sh/ruff-wasm-nodejs/package.json").version' 2>/dev/null)" = "${RUFF_WASM##*@}" ]; }
install_ruff() {
	ruff_ok && return 0
	log "installing $RUFF_WASM (npm) in $RUFF_DIR"
	mkdir -p "$RUFF_DIR"
	(cd "$RUFF_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
		npm install --no-audit --no-fund --silent "$RUFF_WASM" >&2) ||
		die "npm install $RUFF_WASM failed: npm registry unreachable?"
}
# sparse: the kernel's scripts/checker-valid.sh refuses Debian 12's 0.6.4 (no
# __typeof_unqual__), so C=1 would check nothing. sid's 0.6.5~rc1 passes it,
# but its binary needs glibc 2.38: it is built from sid's source package into
# the cache (tools/series/checks/kbuild.py sparse_command() uses it).
SPARSE_SOURCE=sparse=0.6.5~rc1-2
SPARSE_DIR=$PROJECT_CACHE/tools/sparse-${SPARSE_SOURCE#*=}
sparse_ok() { [ -x "$SPARSE_DIR/bin/sparse" ]; }
install_sparse() {
	sparse_ok && return 0
	log "building $SPARSE_SOURCE from Debian's source package into $SPARSE_DIR"
	apt_private_update
	local dl
	dl=$(mktemp -d)
	(cd "$dl" && apt_private -q --download-only source "$SPARSE_SOURCE" >&2) ||
		die "apt-get source $SPARSE_SOURCE failed (gone from $APT_PRIVATE_SUITES?)"
	(cd "$dl" && dpkg-source -q -x ./*.dsc src >&2) || die "dpkg-source -x $SPARSE_SOURCE failed"
	make -C "$dl/src" -s -j"$(nproc)" CC=gcc PREFIX="$SPARSE_DIR" install >&2 ||
		die "building $SPARSE_SOURCE failed (its log is above)"
	rm -rf "$dl"
	sparse_ok || die "$SPARSE_SOURCE built, but $SPARSE_DIR/bin/sparse is missing"
}
# iproute2: tc-testing of the 7.3 tree needs the tc of its own version
# (cake_mq, dualpi2, ...); Debian 12's 6.1 fails those cases in setup. sid's
# 7.3.0 binary needs glibc 2.38 and the archive serves no source of it, so it
# runs with sid's glibc through that glibc's own loader (bin/ip, bin/tc), its
# other libraries (same sonames) the host's. Unpacked into the cache; the
# host's iproute2 stays. common/tools.py iproute2_bin() finds it (version:
# lib/iproute2.version).
IPROUTE2_VERSION=$(cat "$here/lib/iproute2.version")
GLIBC_VERSION=2.43-7
IPROUTE2_DIR=$PROJECT_CACHE/tools/iproute2-$IPROUTE2_VERSION
iproute2_ok() { "$IPROUTE2_DIR/bin/tc" -V 2>/dev/null | grep -qF "iproute2-${IPROUTE2_VERSION%-*}"; }
install_iproute2() {
	iproute2_ok && return 0
	log "unpacking iproute2 $IPROUTE2_VERSION and glibc $GLIBC_VERSION (sid) into $IPROUTE2_DIR"
	apt_private_update
	local dl root lib tool
	dl=$(mktemp -d)
	(cd "$dl" && apt_private -q download "iproute2=$IPROUTE2_VERSION" "libc6=$GLIBC_VERSION" >&2) ||
		die "apt-get download iproute2=$IPROUTE2_VERSION libc6=$GLIBC_VERSION failed (gone from $APT_PRIVATE_SUITES?)"
	rm -rf "$IPROUTE2_DIR"
	root=$IPROUTE2_DIR/root lib=$IPROUTE2_DIR/root/usr/lib/x86_64-linux-gnu
	mkdir -p "$root" "$IPROUTE2_DIR/bin"
	for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$root" || die "dpkg-deb -x $deb failed"; done
	rm -rf "$dl"
	for tool in ip tc; do
		cat > "$IPROUTE2_DIR/bin/$tool" <<WRAP
#!/bin/sh
# iproute2 $IPROUTE2_VERSION (Debian sid) on glibc $GLIBC_VERSION: ci/setup-host.sh
TC_LIB_DIR=$lib/tc exec $lib/ld-linux-x86-64.so.2 --argv0 $tool --library-path $lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu $root/usr/sbin/$tool "\$@"
WRAP
		chmod 755 "$IPROUTE2_DIR/bin/$tool"
	done
	iproute2_ok || die "iproute2 $IPROUTE2_VERSION unpacked, but $IPROUTE2_DIR/bin/tc -V does not run: $("$IPROUTE2_DIR/bin/tc" -V 2>&1 | head -n 3)"
}
if [ ${#missing[@]} -eq 0 ] && [ ${#private[@]} -eq 0 ] && ruff_ok && sparse_ok && iproute2_ok; then
	log "host packages: all present"
	exit 0
fi
[ ${#missing[@]} -eq 0 ] && [ ${#private[@]} -eq 0 ] || [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]:-} ${private[*]:-}) and not root: run as root or install them"

if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed: Debian archive unreachable?"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install failed for: ${missing[*]}"
fi
if [ ${#private[@]} -gt 0 ]; then
	log "installing ${private[*]} from newer Debian suites (private apt state, system sources untouched)"
	apt_private_update
	dl=$(mktemp -d)
	(cd "$dl" && apt_private -q download "${private[@]}" >&2) ||
		die "apt-get download ${private[*]} failed (gone from $APT_PRIVATE_SUITES?)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$dl"/*.deb >&2 ||
		die "installing ${private[*]} failed"
	rm -rf "$dl"
fi
install_ruff
install_sparse
install_iproute2
log "host packages: ready"
