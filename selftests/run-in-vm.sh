#!/usr/bin/env bash
# Runs inside the VM (as root): every selftest program listed in
# selftests/programs.txt, each program's KTAP to OUT/<name>.ktap and its exit
# code to OUT/<name>.rc. Exits 0 when all ran; judging is done on the host.
set -uo pipefail
out=$1 bindir=$2 kernel_tree=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
uname -r > "$out/uname"
while read -r name cmd; do
	case "$name" in '' | '#'*) continue ;; esac
	cmd=${cmd//@BIN@/$bindir}
	cmd=${cmd//@TREE@/$kernel_tree}
	echo "### running $name: $cmd"
	timeout 300 bash -c "$cmd" > "$out/$name.ktap" 2> "$out/$name.stderr"
	echo $? > "$out/$name.rc"
	echo "### $name exit $(cat "$out/$name.rc")"
done < "$here/programs.txt"
echo done > "$out/complete"
