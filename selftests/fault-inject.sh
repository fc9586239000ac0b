#!/usr/bin/env bash
# Runs inside the debug VM (as root), before run-in-vm.sh: fault_inject, the
# n-th allocation of each request of the series failing, its KTAP to
# OUT/fault_inject.out, its exit code to OUT/fault_inject.rc and its table to
# OUT/fault-table.md (judged on the host: ci/matrix/debug_checks.py). kmemleak's
# scan at the end of run-in-vm.sh covers this run too.
# Usage: fault-inject.sh OUT BINDIR
set -uo pipefail
out=$1 bindir=$2
mkdir -p "$out"
[ -e /sys/kernel/debug/kmemleak ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -e /sys/kernel/tracing/trace ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
echo "### running fault_inject"
timeout 2400 "$bindir/selftests/fault_inject" --table "$out/fault-table.md" \
	> "$out/fault_inject.out" 2> "$out/fault_inject.stderr"
rc=$?
echo $rc > "$out/fault_inject.rc"
sed 's/^/    /' "$out/fault_inject.out" | tail -n 60
echo "### fault_inject exit $rc"
