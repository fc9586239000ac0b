#!/usr/bin/env bash
# Runs one drivers/net selftest of the kernel tree (NetDrvEnv: only NETIF,
# no addresses, no remote end) against a dummy device created for it:
#   drv-net-dummy.sh TREE TEST NUMTXQUEUES [NUMRXQUEUES]
# e.g. drv-net-dummy.sh /src/linux stats.py 4
# run-in-vm.sh runs it, as every program, in a fresh network namespace with
# sysfs mounted again there: stats.py qstat_by_ifindex checks every device of
# its namespace, which then holds lo and the test's dummy only, and the device
# goes with the namespace whatever the test leaves.
# It runs in the tree, read-only in the VM: net/lib/xdp_helper (queues.py
# check_xsk) is built on the host before the VM boots (ci/selftests_run.py).
# KTAP on stdout (the test's), the steps before it on stderr.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TREE TEST NUMTXQUEUES [NUMRXQUEUES]" >&2; exit 2; }
# A namespace of its own: lo only, in the link dump and in sysfs.
links=$(ip -o link show | awk -F': ' '{ print $2 }' | tr '\n' ' ')
sysfs=$(cd /sys/class/net && printf '%s ' *)
if [ "$links" != "lo " ] || [ "$sysfs" != "lo " ]; then
	echo "$0: not in a fresh network namespace with its sysfs (links: $links;" \
		"/sys/class/net: $sysfs)" >&2
	exit 1
fi
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
