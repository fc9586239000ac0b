#!/usr/bin/env bash
# Runs one drivers/net selftest of the kernel tree (NetDrvEnv: only NETIF,
# no addresses, no remote end) against a dummy device created for it:
#   drv-net-dummy.sh TREE TEST NUMTXQUEUES [NUMRXQUEUES]
# e.g. drv-net-dummy.sh /src/linux stats.py 4
# The test runs in a network namespace of its own, with a mount namespace and
# sysfs of its own so that /sys/class/net shows the test's device (run-in-vm.sh
# runs every program in the VM's initial namespaces): stats.py qstat_by_ifindex
# checks every device of its namespace, which then holds lo and the test's
# dummy only, and the device goes with the namespace whatever the test leaves.
# It runs in the tree, read-only in the VM: net/lib/xdp_helper (queues.py
# check_xsk) is built on the host before the VM boots (ci/selftests_run.py).
# KTAP on stdout (the test's), the steps before it on stderr.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TREE TEST NUMTXQUEUES [NUMRXQUEUES]" >&2; exit 2; }
if [ -z "${DRV_NET_DUMMY_NETNS:-}" ]; then
	DRV_NET_DUMMY_NETNS=1 exec unshare --net --mount -- "$0" "$@"
fi
# sysfs shows the devices of the namespace that mounted it: mount it again
# here, in this mount namespace only (unshare --mount makes mounts private)
mount -t sysfs sysfs /sys
tree=$(realpath "$1") test=$2 txqs=$3 rxqs=${4:-}
dev=dqs0
dir=$tree/tools/testing/selftests/drivers/net
# NETIF from the environment only: a net.config would override it
if [ -e "$dir/net.config" ]; then
	echo "$0: $dir/net.config would override NETIF" >&2
	exit 1
fi
ip link add "$dev" numtxqueues "$txqs" ${rxqs:+numrxqueues "$rxqs"} type dummy
echo "$0: $dev: $txqs TX queue(s)${rxqs:+, $rxqs RX queue(s)}, running $test" >&2
cd "$dir"
# Debian's interpreter, as tc-testing.sh: python3-yaml
NETIF=$dev exec /usr/bin/python3 "./$test"
