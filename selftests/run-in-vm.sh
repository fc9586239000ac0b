#!/usr/bin/env bash
# Runs inside the VM (as root): every selftest program listed in
# selftests/programs.txt, each program's KTAP to OUT/<name>.ktap and its exit
# code to OUT/<name>.rc. Exits 0 when all ran; judging is done on the host.
# Usage: run-in-vm.sh OUT BINDIR [KERNEL_TREE] [--only=NAME,NAME...]
# (--only: run just those programs, e.g. on a stable tree)
set -uo pipefail
out=$1 bindir=$2 kernel_tree='' only=''
for arg in "${@:3}"; do
	case "$arg" in
	--only=*) only=${arg#--only=} ;;
	*) kernel_tree=$arg ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
uname -r > "$out/uname"
while read -r name kind cmd; do
	case "$name" in '' | '#'*) continue ;; esac
	[ -z "$only" ] || [[ ",$only," == *",$name,"* ]] || continue
	cmd=${cmd//@BIN@/$bindir}
	cmd=${cmd//@TREE@/$kernel_tree}
	cmd=${cmd//@SELFTESTS@/$here}
	cmd=${cmd//@CHURN_SECONDS@/${CHURN_SECONDS:-20}}
	echo "### running $name: $cmd"
	timeout 900 bash -c "$cmd" > "$out/$name.out" 2> "$out/$name.stderr"
	rc=$?
	echo $rc > "$out/$name.rc"
	if [ "$kind" != exit ]; then
		cp "$out/$name.out" "$out/$name.ktap"
	else
		case $rc in
		0) res="ok 1 $name" ;;
		4) res="ok 1 $name # SKIP $(tail -n 3 "$out/$name.out" | tr '\n' ' ')" ;;
		*) res="not ok 1 $name" ;;
		esac
		printf 'TAP version 13\n1..1\n%s\n' "$res" > "$out/$name.ktap"
	fi
	sed 's/^/    /' "$out/$name.out" | tail -n 40
	echo "### $name exit $rc"
done < "$here/programs.txt"
# Debug kernels (kernel/configs/debug.config): an explicit kmemleak scan after
# all programs. Its reports ("unreferenced object 0x...") go to the console,
# where the host counts them as splats (ci/vm.py).
leaks=/sys/kernel/debug/kmemleak
[ -e "$leaks" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$leaks" ]; then
	# Objects younger than 5 s are not reported: scan, wait, scan again.
	echo scan > "$leaks"
	sleep 6
	echo scan > "$leaks"
	cat "$leaks" > "$out/kmemleak"
	echo "### kmemleak: $(grep -c '^unreferenced object' "$out/kmemleak") unreferenced objects"
	cat "$out/kmemleak"
fi
echo "done" > "$out/complete"
