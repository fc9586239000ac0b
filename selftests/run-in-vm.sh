#!/usr/bin/env bash
# Runs inside the VM (as root): every selftest program listed in
# selftests/programs.txt, each program's stdout to OUT/<name>.out (KTAP, the
# kselftest runner's output or tdc's TAP, by its kind; written as it runs, so
# a program still running when the VM stops leaves what it got to), its
# stderr to OUT/<name>.stderr, its exit code to OUT/<name>.rc and its wall
# time in seconds to OUT/<name>.seconds.
# Exits 0 when all ran; judging is done on the host.
# Usage: SELFTEST_KERNEL=base|patched run-in-vm.sh OUT BINDIR [KERNEL_TREE] [--only=NAME,NAME...]
#        [--kselftests=DIR]
# (--only: run just those programs, e.g. on a stable tree; --kselftests: the
# tree's selftests as installed on the host, @KSFT@ of programs.txt)
# SELFTEST_KERNEL: the tree the kernel under test is built from, given by the
# host (ci/matrix/run.py run_matrix()) and exported to every program.
#
# Each program but tc-testing (kind tdc: see below) runs in namespaces of its
# own: a fresh network namespace with lo up, and a mount namespace where
# sysfs is mounted again (sysfs shows the
# devices of the namespace that mounted it; a bare unshare --net still shows
# the initial namespace's /sys/class/net), with tracefs and debugfs under it.
# Whatever devices a program leaves go with its namespace.
# The C++ programs (kind ktap) make a netns again for each case
# (selftests/lib/harness.cpp enter_own_netns()), so each case starts fresh;
# theirs stays here too: the harness mounts tracefs and debugfs again only
# where the namespace it starts in has them, and this one is where they are
# sure to be (the guest's initial mount namespace need not have them:
# fault-inject.sh and the kmemleak scan below mount them when missing).
# Without it, what a case sees would hang on the guest's own mounts, which
# cannot be checked without a VM (Documentation/pipeline.md).
set -uo pipefail
out=$1 bindir=$2 kernel_tree='' only='' ksft=''
for arg in "${@:3}"; do
	case "$arg" in
	--only=*) only=${arg#--only=} ;;
	--kselftests=*) ksft=${arg#--kselftests=} ;;
	*) kernel_tree=$arg ;;
	esac
done
case "${SELFTEST_KERNEL:-}" in
base | patched) export SELFTEST_KERNEL ;;
*)
	echo "$0: SELFTEST_KERNEL must be base or patched, not '${SELFTEST_KERNEL:-}'" >&2
	exit 2
	;;
esac
here=$(cd "$(dirname "$0")" && pwd)
# Run by bash -c in the new namespaces, the program's command as $1; a
# failure of the setup is the program's (exit code and stderr).
# shellcheck disable=SC2016 # $1 is the inner shell's
in_netns='set -e
mount -t sysfs sysfs /sys
mount -t tracefs nodev /sys/kernel/tracing
mount -t debugfs nodev /sys/kernel/debug
ip link set lo up
exec bash -c "$1"'
mkdir -p "$out"
uname -r > "$out/uname"
# /dev/stdout and its siblings as every system has them. With udev in the
# guest, virtme-ng links /dev/stdout to its console port
# (/dev/virtio-ports/virtme.dev_stdout): the kselftest runner, which writes
# a test's output through 4>>/dev/stdout, would send it to the console
# instead of the program's own output.
for std in 0:stdin 1:stdout 2:stderr; do
	ln -sfn "/proc/self/fd/${std%%:*}" "/dev/${std#*:}"
done
# timeout(1) below, and ping's -W, need POSIX timers (CONFIG_POSIX_TIMERS):
# without them a hung program hangs the VM. The host names it (no-timers).
timeout 1 sleep 3
rc=$?
if [ $rc -ne 124 ]; then
	echo "timeout 1 sleep 3 exited $rc, not 124" > "$out/no-timers"
	echo "### no POSIX timers: timeout 1 sleep 3 exited $rc, not 124"
fi
# The tree's net/config builds tunnel drivers in (IPV6_SIT, IPV6_VTI,
# NET_IPIP, NET_IPVTI): each new network namespace would get their fallback
# devices (sit0, tunl0, ...). The programs' namespaces hold lo alone.
fb=/proc/sys/net/core/fb_tunnels_only_for_init_net
if ! echo 1 > "$fb"; then
	echo "### cannot write $fb: new namespaces get fallback tunnels"
fi
while read -r name kind cmd; do
	case "$name" in '' | '#'*) continue ;; esac
	[ -z "$only" ] || [[ ",$only," == *",$name,"* ]] || continue
	cmd=${cmd//@BIN@/$bindir}
	cmd=${cmd//@TREE@/$kernel_tree}
	cmd=${cmd//@KSFT@/$ksft}
	cmd=${cmd//@SELFTESTS@/$here}
	cmd=${cmd//@CHURN_SECONDS@/${CHURN_SECONDS:-20}}
	cmd=${cmd//@TDC_CATEGORIES@/${TDC_CATEGORIES:-all}}
	echo "### running $name: $cmd"
	start=$SECONDS
	limit=900
	if [ "$kind" = tdc ]; then
		# tdc makes a netns of its own for each case and puts the peer of
		# its veth in /proc/1/ns/net, where it then looks for it: it runs
		# in the initial namespaces.
		run=(bash -c "$cmd")
		# The whole suite takes longer: the host gives its limit.
		limit=${TDC_TIMEOUT:-900}
	else
		run=(unshare --net --mount -- bash -c "$in_netns" _ "$cmd")
	fi
	if [ "$kind" = kselftest ]; then
		# The runner kills the test at its collection's settings timeout
		# (45 s without one) and says so: this limit is a minute past it.
		# Its Python tests run by "#!/usr/bin/env python3": Debian's
		# (python3-yaml, pyroute2), as tc-testing.sh's.
		test=$(grep -oE '[[:alnum:]_][[:alnum:]_/.-]*:[[:alnum:]_.-]+' <<< "$cmd" | head -n 1)
		settings=$ksft/${test%%:*}/settings
		secs=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$settings" 2> /dev/null | tail -n 1)
		limit=$((${secs:-45} + 60))
		run=(env PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH" "${run[@]}")
	fi
	# stdout in append mode: the kselftest runner writes the test's
	# prefixed lines through a file it opens again (4>>/dev/stdout), with
	# an offset of its own; without O_APPEND on both, its own lines land
	# over them.
	: > "$out/$name.out"
	timeout "$limit" "${run[@]}" >> "$out/$name.out" 2> "$out/$name.stderr"
	rc=$?
	seconds=$((SECONDS - start))
	echo $rc > "$out/$name.rc"
	echo $seconds > "$out/$name.seconds"
	sed 's/^/    /' "$out/$name.out" | tail -n 40
	echo "### $name exit $rc after ${seconds}s"
done < "$here/programs.txt"
# Debug kernels (kernel/configs/debug.config): an explicit kmemleak scan after
# all programs. Its reports ("unreferenced object 0x...") go to the console,
# where the host counts them as splats (common/vm.py).
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
