#!/usr/bin/env bash
# Runs inside the debug VMs (as root), after run-in-vm.sh: the state of the
# debug instruments at the end of the run, to OUT/instruments, which the host
# reads with the console log (ci/matrix/debug_checks.py): lockdep's
# debug_locks (0 once lockdep turned itself off), whether kmemleak still
# takes commands (it refuses them once disabled), KCSAN's debugfs state.
# Usage: instruments.sh OUT
set -uo pipefail
out=$1
dbg=/sys/kernel/debug
mkdir -p "$out"
[ -e "$dbg/kmemleak" ] || [ -e "$dbg/kcsan" ] || mount -t debugfs none "$dbg" 2>/dev/null
{
	if [ -r /proc/lockdep_stats ]; then
		awk '$1 == "debug_locks:" { print "lockdep: debug_locks " $2 }' /proc/lockdep_stats
	else
		echo "lockdep: absent"
	fi
	if [ ! -e "$dbg/kmemleak" ]; then
		echo "kmemleak: absent"
	elif err=$( (echo scan > "$dbg/kmemleak") 2>&1); then
		echo "kmemleak: enabled"
	else
		echo "kmemleak: disabled (${err##*: })"
	fi
	if [ -r "$dbg/kcsan" ]; then
		echo "kcsan: $(head -n 1 "$dbg/kcsan")"
	else
		echo "kcsan: absent"
	fi
} > "$out/instruments"
sed 's/^/### instruments: /' "$out/instruments"
