#!/usr/bin/env bash
# Runs one drivers/net selftest of the kernel tree (NetDrvEnv: only NETIF,
# no addresses, no remote end) through the kselftest runner, against a dummy
# device created for it:
#   drv-net-dummy.sh KSFT COLLECTION:TEST NUMTXQUEUES [NUMRXQUEUES]
# e.g. drv-net-dummy.sh /tmp/kselftest drivers/net:stats.py 4
# KSFT: the tree's selftests as installed on the host (ci/matrix/kselftests.py
# install_kselftests(): run_kselftest.sh, drivers/net, net/lib with its
# xdp_helper for queues.py check_xsk), read-only in the VM.
# run-in-vm.sh runs it, as every program, in a fresh network namespace with
# sysfs mounted again there: stats.py qstat_by_ifindex checks every device of
# its namespace, which then holds lo and the test's dummy only, and the device
# goes with the namespace whatever the test leaves.
# The runner's KTAP on stdout (the test's nested in it), the steps before it
# on stderr; the runner's exit code.
set -euo pipefail
[ $# -ge 3 ] || {
	echo "usage: $0 KSFT COLLECTION:TEST NUMTXQUEUES [NUMRXQUEUES]" >&2
	exit 2
}
# A namespace of its own: lo only, in the link dump and in sysfs.
links=$(ip -o link show | awk -F': ' '{ print $2 }' | tr '\n' ' ')
sysfs=$(cd /sys/class/net && printf '%s ' *)
if [ "$links" != "lo " ] || [ "$sysfs" != "lo " ]; then
	echo "$0: not in a fresh network namespace with its sysfs (links: $links;" \
		"/sys/class/net: $sysfs)" >&2
	exit 1
fi
ksft=$1 test=$2 txqs=$3 rxqs=${4:-}
dev=dqs0
dir=$ksft/${test%%:*}
# NETIF from the environment only: a net.config would override it
if [ -e "$dir/net.config" ]; then
	echo "$0: $dir/net.config would override NETIF" >&2
	exit 1
fi
ip link add "$dev" numtxqueues "$txqs" ${rxqs:+numrxqueues "$rxqs"} type dummy
echo "$0: $dev: $txqs TX queue(s)${rxqs:+, $rxqs RX queue(s)}, running $test" >&2
NETIF=$dev exec "$ksft/run_kselftest.sh" -t "$test"
