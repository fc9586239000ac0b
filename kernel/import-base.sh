#!/usr/bin/env bash
# Import a verified base tarball into the project's base git repository as a
# single commit and tag it. Idempotent; an interrupted import leaves nothing
# half-done behind (it is built in a temporary directory and renamed).
# Usage: import-base.sh PACKAGE VERSION TARBALL SHA256  -> prints REPO and TAG
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../ci/lib/common.sh
source "$here/../ci/lib/common.sh"

[ $# -eq 4 ] || die "usage: $0 PACKAGE VERSION TARBALL SHA256"
pkg=$1 ver=$2 tarball=$3 sha=$4
tag="base/${pkg}_${ver//\~/_}"
repo="$PROJECT_CACHE/base.git"

if git -C "$repo" rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null 2>&1; then
	printf 'BASE_REPO=%s\nBASE_TAG=%s\n' "$repo" "$tag"
	exit 0
fi

# One scratch directory per tag: imports of different trees may run at once.
tmp="$PROJECT_CACHE/import.tmp.${tag//\//_}"
rm -rf "$tmp"
mkdir -p "$tmp"
log "unpacking $(basename "$tarball")"
tar -xJf "$tarball" -C "$tmp"
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n1)
[ -f "$src/Makefile" ] || die "$tarball does not hold a kernel tree"

# Debian's packaging stanza ignores every top-level entry ("/*", "!/debian/"),
# which would hide files a patch or a developer adds. Drop only that stanza.
sed -i '/^# Debian packaging: ignore everything at the top level/,/^!\/debian\/$/d' "$src/.gitignore"
sed -i '${/^#$/d}' "$src/.gitignore"

log "importing $pkg $ver into git (about 2 minutes)"
# Fixed identity and dates (the tree's Makefile mtime): the same tarball
# always gives the same commit id, so exported patches name a stable base.
stamp="@$(stat -c %Y "$src/Makefile") +0000"
export GIT_AUTHOR_DATE="$stamp" GIT_COMMITTER_DATE="$stamp"
ident=(-c user.name="Base Import" -c user.email="base-import@localhost")
subject="Import $pkg $ver"
body="Debian kernel source package $pkg $ver,
tarball sha256 $sha, imported unmodified except for Debian's
top-level ignore stanza in .gitignore."

if [ -d "$repo/.git" ]; then
	# Keep the versions already imported: write this tree's objects straight
	# into the repository, with an index of its own, and tag a root commit.
	# The same commit as a fresh repository's, without copying the objects
	# into it a second time.
	export GIT_DIR="$repo/.git" GIT_INDEX_FILE="$tmp/index"
	(cd "$src" && git --work-tree=. -c gc.auto=0 add -A -f)
	commit=$(git "${ident[@]}" commit-tree "$(git write-tree)" -m "$subject" -m "$body")
	git tag "$tag" "$commit"
	unset GIT_DIR GIT_INDEX_FILE
	rm -rf "$tmp"
else
	git -C "$src" init -q -b base
	git -C "$src" -c gc.auto=0 add -A -f
	git -C "$src" "${ident[@]}" commit -q -m "$subject" -m "$body"
	git -C "$src" tag "$tag"
	rm -rf "$repo"
	mv "$src" "$repo"
	rm -rf "$tmp"
fi
printf 'BASE_REPO=%s\nBASE_TAG=%s\n' "$repo" "$tag"
