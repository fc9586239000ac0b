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
# The test runs from a copy of the parts of TREE it uses, with
# net/lib/xdp_helper built (queues.py check_xsk runs it; the tree's selftests
# are not built and the tree is read-only in the VM).
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

stage=$(mktemp -d /tmp/drv-net-dummy.XXXXXX)
trap 'rm -rf "$stage"' EXIT
for d in tools/testing/selftests/drivers/net tools/testing/selftests/net/lib \
	 tools/net/ynl/pyynl Documentation/netlink/specs; do
	mkdir -p "$stage/$d"
	cp -a "$tree/$d/." "$stage/$d/"
done
# NETIF from the environment only: a net.config would override it
rm -f "$stage/tools/testing/selftests/drivers/net/net.config"
lib=$stage/tools/testing/selftests/net/lib
gcc -O2 -Wall -o "$lib/xdp_helper" "$lib/xdp_helper.c" >&2 ||
	echo "$0: xdp_helper not built, queues.py check_xsk will fail" >&2

ip link add "$dev" numtxqueues "$txqs" ${rxqs:+numrxqueues "$rxqs"} type dummy
echo "$0: $dev: $txqs TX queue(s)${rxqs:+, $rxqs RX queue(s)}, running $test" >&2
cd "$stage/tools/testing/selftests/drivers/net"
rc=0
# Debian's interpreter, as tc-testing.sh: python3-yaml
NETIF=$dev /usr/bin/python3 "./$test" || rc=$?
exit $rc
