#!/usr/bin/env bash
# Fetch a pinned kernel source tarball, verify it and print its description
# as KEY=VALUE lines on stdout:
#   BASE_PACKAGE BASE_VERSION BASE_PINNED(yes|no) BASE_TARBALL BASE_TARBALL_SHA256
# Usage: fetch-base.sh [PIN_FILE]   (default kernel/base.env; the stable trees
# are pinned in kernel/stable/*.env with the same keys)
# BASE_APT=private (default) reaches newer suites through a private apt state;
# BASE_APT=host uses the host's own apt sources (bookworm-security for the
# stable trees). Falls back to the newest package matching
# BASE_FALLBACK_PATTERN when the pinned version is gone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../ci/lib/common.sh
source "$here/../ci/lib/common.sh"
# shellcheck source=../ci/lib/apt-private.sh
source "$here/../ci/lib/apt-private.sh"
pin=${1:-$here/base.env}
[ -f "$pin" ] || die "no pin file $pin"
# shellcheck source=base.env
source "$pin"
BASE_APT=${BASE_APT:-private}
case "$BASE_APT" in private | host) ;; *) die "$pin: BASE_APT must be private or host" ;; esac

tarballs="$PROJECT_CACHE/tarballs"
mkdir -p "$tarballs"

verify() { # file sha256
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] || die "checksum mismatch for $1: expected $2, got $got (delete the file to refetch)"
}

# apt-cache on the private state or on the host's sources.
acache() {
	if [ "$BASE_APT" = host ]; then
		apt-cache "$@"
	else
		apt-cache -o Dir::Etc::sourcelist="$APT_PRIVATE_DIR/sources.sources" \
			-o Dir::Etc::sourceparts=/nonexistent \
			-o Dir::State::Lists="$APT_PRIVATE_DIR/lists" "$@"
	fi
}

# Candidate versions of a package in the configured suites, one per line.
versions_of() {
	acache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -u
}

# Make the package lists current: the private state is refreshed once per
# run; the host's lists only when they lack the pinned version (needs root).
lists_update() {
	if [ "$BASE_APT" = private ]; then
		apt_private_update
	elif ! versions_of "$BASE_PACKAGE" | grep -qxF "$BASE_VERSION"; then
		[ "$(id -u)" = 0 ] || { warn "host apt lists lack $BASE_PACKAGE $BASE_VERSION; not root, not updating them"; return 0; }
		apt-get -qq --error-on=any update >&2 ||
			die "apt-get update failed (registry unreachable?)"
	fi
}

newest_fallback() {
	local best_pkg="" best_ver="" pkg ver
	for pkg in $(acache pkgnames linux-source- 2>/dev/null | grep -E "$BASE_FALLBACK_PATTERN"); do
		for ver in $(versions_of "$pkg"); do
			if [ -z "$best_ver" ] || dpkg --compare-versions "$ver" gt "$best_ver"; then
				best_pkg=$pkg best_ver=$ver
			fi
		done
	done
	[ -n "$best_pkg" ] || die "no package matching $BASE_FALLBACK_PATTERN in the $BASE_APT apt sources"
	echo "$best_pkg $best_ver"
}

# Extract /usr/src/<pkg>.tar.xz from a .deb into $2.
extract_tarball() {
	local deb=$1 out=$2 member
	member=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -E '^\./usr/src/linux-source-[^/]*\.tar\.xz$' | head -n1)
	[ -n "$member" ] || die "$deb holds no /usr/src/linux-source-*.tar.xz"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "$member" > "$out.part"
	mv "$out.part" "$out"
}

fetch() { # pkg version -> path of tarball
	local pkg=$1 ver=$2 deb dl="$PROJECT_CACHE/downloads"
	mkdir -p "$dl"
	deb=$(find "$dl" -maxdepth 1 -name "${pkg}_${ver/\~/?}_all.deb" -print -quit 2>/dev/null || true)
	deb=${deb:-$dl/${pkg}_${ver//:/%3a}_all.deb}
	if [ ! -s "$deb" ]; then
		log "downloading $pkg $ver (about 170 MB)"
		if [ "$BASE_APT" = host ]; then
			(cd "$dl" && apt-get -q download "$pkg=$ver" >&2)
		else
			(cd "$dl" && apt_private -q download "$pkg=$ver" >&2)
		fi || die "apt-get download $pkg=$ver failed (registry unreachable?)"
		# apt names the file after the version ('~' kept, ':' as %3a).
		deb=$(find "$dl" -maxdepth 1 -name "${pkg}_${ver//[~:]/*}_all.deb" -print -quit)
		[ -n "$deb" ] || die "download of $pkg=$ver produced no .deb"
	fi
	echo "$deb"
}

pkg=$BASE_PACKAGE ver=$BASE_VERSION pinned=yes
tarball="$tarballs/${pkg}_${ver//\~/_}.tar.xz"
if [ ! -s "$tarball" ]; then
	lists_update
	if ! versions_of "$pkg" | grep -qxF "$ver"; then
		read -r pkg ver < <(newest_fallback)
		pinned=no
		warn "pinned base $BASE_PACKAGE $BASE_VERSION is no longer in the archive; falling back to $pkg $ver"
		tarball="$tarballs/${pkg}_${ver//\~/_}.tar.xz"
	fi
fi
if [ ! -s "$tarball" ]; then
	deb=$(fetch "$pkg" "$ver")
	log "extracting tarball from $(basename "$deb")"
	extract_tarball "$deb" "$tarball"
	rm -f "$deb"
fi
if [ "$pinned" = yes ]; then
	verify "$tarball" "$BASE_TARBALL_SHA256"
	sha=$BASE_TARBALL_SHA256
else
	# Fallback: apt verified the .deb against the signed archive; record the tarball's hash.
	sha=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ -s "$tarball.sha256" ] && verify "$tarball" "$(cat "$tarball.sha256")"
	echo "$sha" > "$tarball.sha256"
fi
printf 'BASE_PACKAGE=%s\nBASE_VERSION=%s\nBASE_PINNED=%s\nBASE_TARBALL=%s\nBASE_TARBALL_SHA256=%s\n' \
	"$pkg" "$ver" "$pinned" "$tarball" "$sha"
