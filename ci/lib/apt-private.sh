#!/usr/bin/env bash
# Private apt state reaching Debian suites newer than the host's, without
# touching the system's apt configuration. Source this file, then call
# apt_private update / apt_private download PKG... / apt_private source
# --download-only SRC (deb-src: sparse is built from sid's source).
set -euo pipefail

: "${PROJECT_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/mqbypass}"
APT_PRIVATE_DIR="$PROJECT_CACHE/apt"
APT_PRIVATE_SUITES="${APT_PRIVATE_SUITES:-trixie trixie-backports sid}"

apt_private_init() {
	local uri
	mkdir -p "$APT_PRIVATE_DIR/lists/partial" "$APT_PRIVATE_DIR/debs"
	uri=${APT_PRIVATE_URI:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	cat > "$APT_PRIVATE_DIR/sources.sources" <<SRC
Types: deb deb-src
URIs: $uri
Suites: $APT_PRIVATE_SUITES
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}

apt_private() {
	apt-get -o Dir::Etc::sourcelist="$APT_PRIVATE_DIR/sources.sources" \
		-o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::State::Lists="$APT_PRIVATE_DIR/lists" \
		-o Dir::Cache::archives="$APT_PRIVATE_DIR/debs" \
		-o Debug::NoLocking=1 "$@"
}

# Refresh the private lists at most once per run (APT_PRIVATE_FRESH=1 skips).
apt_private_update() {
	apt_private_init
	if [ "${APT_PRIVATE_FRESH:-0}" != 1 ]; then
		apt_private -qq --error-on=any update >&2 || {
			echo "error: apt update of private suites ($APT_PRIVATE_SUITES) failed: registry unreachable?" >&2
			return 1
		}
		export APT_PRIVATE_FRESH=1
	fi
}
