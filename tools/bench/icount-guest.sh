#!/usr/bin/env bash
# The guest side of tools/bench/icount.py: runs in a VM booted under QEMU TCG
# with -icount shift=0 (one nanosecond of guest time per guest instruction)
# and one vCPU, so pktgen's "Result: OK: N usec" is N thousand instructions.
#
#   icount-guest.sh OUT COUNT REPS SCENARIO... [-- DUMMY_KO]
#
# Each scenario runs REPS times, COUNT packets of 60 bytes each; the usec of
# run i goes to OUT/<scenario>.<i>, the clocksource after it to
# OUT/<scenario>.<i>.clocksource (the one at the start to OUT/clocksource). DUMMY_KO, if given, is loaded instead of
# the kernel's own dummy module (the benchmark's "lock" design).
set -euo pipefail

out=$1 count=$2 reps=$3
shift 3
scenarios=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	scenarios+=("$1")
	shift
done
ko=${2:-}

# Nothing but pktgen counted: virtme-ng starts udevd in the guest when the
# host has udev (the selftest VMs need udevadm), and its work on the
# devices created here would land in the runs' instruction counts.
if command -v udevadm > /dev/null; then
	udevadm control --exit 2> /dev/null || true
fi

pg=/proc/net/pktgen
modprobe pktgen
if [ -n "$ko" ]; then
	insmod "$ko"
else
	modprobe dummy
fi

# One pktgen run on device $1 in xmit_mode $2, every packet on queue 0
# (pktgen's default queue_map): prints the run's usec.
pktgen_usec() { # device mode
	echo rem_device_all > "$pg/kpktgend_0"
	echo "add_device $1" > "$pg/kpktgend_0"
	local f=$pg/$1 cmd
	for cmd in "count $count" "pkt_size 60" "xmit_mode $2" "queue_map_min 0" \
		"queue_map_max 0" "dst 198.18.0.1" "dst_mac 02:00:00:00:00:02"; do
		echo "$cmd" > "$f"
	done
	echo start > "$pg/pgctrl"
	sed -n 's/.*Result: OK: \([0-9][0-9]*\).*/\1/p' "$f"
	echo rem_device_all > "$pg/kpktgend_0"
}

# Scenarios: the device, then what sends.
setup() { # scenario
	case $1 in
	q2_start_xmit | q2_noqueue)
		ip link add d0 numtxqueues 2 type dummy
		;;
	q2_mq)
		ip link add d0 numtxqueues 2 type dummy
		tc qdisc add dev d0 root handle 1: mq
		;;
	q1_noqueue)
		ip link add d0 type dummy
		;;
	s2_fq_codel_fresh)
		ip link add d0 type dummy
		tc qdisc replace dev d0 root handle 1: fq_codel
		;;
	s2_fq_codel_after_filter)
		ip link add d0 type dummy
		tc qdisc replace dev d0 root handle 1: fq_codel
		tc filter add dev d0 parent 1: protocol all prio 1 matchall action ok
		tc filter del dev d0 parent 1: prio 1
		;;
	s2_pfifo_fast)
		ip link add d0 type dummy
		tc qdisc replace dev d0 root pfifo_fast
		;;
	sink_veth_mq)
		# As the UML benchmark's sink: the peer up in its own netns, so each
		# packet crosses to it and its stack drops it (not its MAC).
		ip netns add sinkpeer
		ip link add d0 numtxqueues 2 numrxqueues 2 type veth peer name v1 \
			numtxqueues 2 numrxqueues 2 netns sinkpeer
		ip -n sinkpeer link set v1 up
		tc qdisc add dev d0 root handle 1: mq
		;;
	sink_nsim_mq)
		# Unlinked: netdevsim drops what it is given (after its TX queue lock).
		modprobe netdevsim
		echo "7 1 2" > /sys/bus/netdevsim/new_device
		local ifs=(/sys/bus/netdevsim/devices/netdevsim7/net/*)
		ip link set "${ifs[0]##*/}" name d0
		tc qdisc add dev d0 root handle 1: mq
		;;
	*)
		echo "unknown scenario $1" >&2
		return 1
		;;
	esac
	ip link set d0 up
}

mode() { # scenario
	case $1 in
	*start_xmit) echo start_xmit ;;
	*) echo queue_xmit ;;
	esac
}

# pktgen reads the clock per packet: icount.py checks which one it was, at
# the start and after every run (a switch to hpet adds about 26
# instructions a packet; such a boot is booted again).
clocksource=/sys/devices/system/clocksource/clocksource0/current_clocksource
cat "$clocksource" > "$out/clocksource"

for s in "${scenarios[@]}"; do
	setup "$s"
	for i in $(seq "$reps"); do
		usec=$(pktgen_usec d0 "$(mode "$s")")
		[ -n "$usec" ] || { echo "$s: no pktgen result" >&2; exit 1; }
		echo "$usec" > "$out/$s.$i"
		cat "$clocksource" > "$out/$s.$i.clocksource"
	done
	case $s in
	sink_nsim_mq) echo 7 > /sys/bus/netdevsim/del_device ;;
	sink_veth_mq)
		ip link del d0
		ip netns del sinkpeer
		;;
	*) ip link del d0 ;;
	esac
done

