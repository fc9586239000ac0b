#!/usr/bin/env bash
# Install what the pipeline needs on a Debian 12 host, saying what it installs.
# Debian packages come from the host's own apt sources; virtme-ng (1.41, from
# sid) comes through the project's private apt state (ci/lib/apt-private.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
# shellcheck source=lib/apt-private.sh
source "$here/lib/apt-private.sh"

VNG_VERSION=1.41-1
PACKAGES=(
	# kernel build and per-patch checks
	build-essential flex bison bc cpio kmod rsync libelf-dev libssl-dev
	ccache sparse coccinelle b4 perl python3 python3-yaml python3-jsonschema
	python3-ply python3-git
	# VM (TCG) and the tests run inside it
	qemu-system-x86 busybox-static iproute2 ethtool python3-pyroute2 python3-scapy
	# C++ selftests and tools
	cmake g++ libmnl-dev libgtest-dev clang-format clang-tidy
	nlohmann-json3-dev libcli11-dev libtracefs-dev pkg-config
	# Python lint of the glue
	flake8
	# reports
	gnuplot-nox
)
# Extra packages (space-separated), e.g. for a local tool; also used by tests.
read -r -a extra <<< "${SETUP_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
vng_ok=no
if dpkg-query -W -f='${Version}' virtme-ng 2>/dev/null | grep -qxF "$VNG_VERSION"; then
	vng_ok=yes
fi
if [ ${#missing[@]} -eq 0 ] && [ $vng_ok = yes ]; then
	log "host packages: all present"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]:-} virtme-ng=$VNG_VERSION) and not root: run as root or install them"

if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed: Debian archive unreachable?"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install failed for: ${missing[*]}"
fi
if [ $vng_ok = no ]; then
	log "installing virtme-ng $VNG_VERSION from Debian sid (private apt state, system sources untouched)"
	apt_private_update
	dl=$(mktemp -d)
	(cd "$dl" && apt_private -q download "virtme-ng=$VNG_VERSION" >&2) ||
		die "apt-get download virtme-ng=$VNG_VERSION failed (gone from sid?)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$dl"/virtme-ng_*.deb >&2 ||
		die "installing virtme-ng failed"
	rm -rf "$dl"
fi
log "host packages: ready"
