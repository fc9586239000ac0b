#!/bin/bash
# init (PID 1) of a benchmark UML kernel booted with the host root over
# hostfs. Runs the scenarios named in BENCH_SCENARIOS (kernel command line),
# one JSON file per scenario into BENCH_OUT, then powers off.
# Each scenario sets up a device (a dummy; for the sink_* ones also a veth pair
# or a netdevsim device) and its qdisc, then runs mqbench; a scenario that
# cannot run as specified leaves <scenario>.err instead.
set -uo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

mount -t proc proc /proc
mount -t sysfs sys /sys
# Scratch space goes on /run only: a tmpfs over /tmp would hide the host's
# /tmp, where the project (BENCH_BIN, this script) may live.
mount -t tmpfs run /run
export TMPDIR=/run/tmp
out=/run/out
mkdir -p "$out" "$TMPDIR"
mount -t hostfs -o "$BENCH_OUT" none "$out" || {
	echo "bench: cannot mount $BENCH_OUT"
	/bin/busybox poweroff -f
}
exec > "$out/guest.log" 2>&1
if [ ! -x "$BENCH_BIN" ]; then
	echo "bench: mqbench not executable in the guest: $BENCH_BIN"
	/bin/busybox poweroff -f
fi

secs=${BENCH_SECONDS:-3}
bin=$BENCH_BIN
ncpu=$(nproc)
tracing=/sys/kernel/tracing
# TX queues of the S1 devices: one per CPU; mq needs at least two.
nq=$((ncpu > 1 ? ncpu : 2))

# Which qdisc tracepoints this kernel has, one "name yes|no" a line.
tracepoints() {
	local ev=qdisc/qdisc_enqueue
	if mount -t tracefs nodev "$tracing" 2>/dev/null; then
		echo "tracefs yes"
	else
		echo "tracefs no"
	fi
	if [ -d "$tracing/events/$ev" ]; then
		echo "$ev yes"
	else
		echo "$ev no"
	fi
}

dev_add() { # name [numtxqueues]
	if [ -n "${2:-}" ]; then
		ip link add "$1" numtxqueues "$2" type dummy
	else
		ip link add "$1" type dummy
	fi
	ip link set "$1" up
}

fail() { # scenario message: the scenario's error instead of a result
	echo "$2" > "$out/$1.err"
	echo "bench: $1 failed: $2"
}

# Deletes a device the way its driver allows: a netdevsim one through its bus
# (its netdev refuses ip link del), any other (a veth takes its peer along)
# with ip link del.
dev_del() { # device
	local parent
	parent=$(readlink "/sys/class/net/$1/device" 2> /dev/null)
	case ${parent##*/} in
	netdevsim[0-9]*)
		echo "${parent##*/netdevsim}" > /sys/bus/netdevsim/del_device
		;;
	*)
		ip link del "$1"
		;;
	esac
}

mqbench_run() { # scenario device subcommand [mqbench args]
	local name=$1 dev=$2 sub=$3
	shift 3
	echo "== $name"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-before"
	"$bin" "$sub" --dev "$dev" --duration "$secs" --json "$@" \
		> "$out/$name.json" 2> "$out/$name.err" || echo "bench: $name failed: $(cat "$out/$name.err")"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-after"
}

run_mqbench() { # scenario device subcommand [mqbench args]; deletes the device
	mqbench_run "$@"
	dev_del "$2"
}

measure() { # scenario device threads [extra mqbench pktgen args]
	local name=$1 dev=$2 threads=$3
	shift 3
	run_mqbench "$name" "$dev" pktgen --threads "$threads" "$@"
}

# Maps tx-i to CPU i (i < ncpu, ncpu <= 32) like pktgen's --xps, so each
# pinned user-space sender keeps to its own queue instead of the flow hash
# picking one; a one-queue device has no XPS maps.
xps_per_cpu() { # device
	local q i
	[ -e "/sys/class/net/$1/queues/tx-1" ] || return 0
	for q in /sys/class/net/"$1"/queues/tx-*; do
		i=${q##*tx-}
		if [ "$i" -lt "$ncpu" ]; then
			printf '%x' $((1 << i)) > "$q/xps_cpus"
		else
			echo 0 > "$q/xps_cpus"
		fi
	done
}

# "As the device comes": no XPS map on any TX queue, so the stack hashes each
# flow onto a queue. Otherwise the scenario's error.
xps_unset() { # scenario device
	local q
	for q in /sys/class/net/"$2"/queues/tx-*; do
		case $(cat "$q/xps_cpus" 2> /dev/null) in
		*[1-9a-fA-F]*)
			fail "$1" "XPS already set on $2 ${q##*/}: $(cat "$q/xps_cpus")"
			dev_del "$2"
			return 1
			;;
		esac
	done
}

# One user-space sender per CPU: mode tx_ring (AF_PACKET PACKET_TX_RING, as
# the 2014 seed's trafgen) or udp (UDP sockets through the IP stack); xps yes
# maps tx-i to CPU i, no leaves the device without XPS maps.
measure_gen() { # scenario device mode xps
	if [ "$3" = udp ]; then
		# 198.18.0.1 is on-link through the device; dummy is NOARP, so no
		# neighbour entry is needed.
		ip addr add 198.18.0.2/15 dev "$2"
	fi
	if [ "$4" = yes ]; then
		xps_per_cpu "$2"
	else
		xps_unset "$1" "$2" || return
	fi
	run_mqbench "$1" "$2" gen --mode "$3" --threads "$ncpu"
}

root_mq() { # scenario device: mq as root qdisc, else the scenario's error
	local nq
	tc qdisc replace dev "$2" root handle 1: mq && return 0
	nq=$(find /sys/class/net/"$2"/queues/ -maxdepth 1 -name 'tx-*' | wc -l)
	fail "$1" "mq not attachable to $2 ($nq TX queue(s))"
	dev_del "$2"
	return 1
}

# S1: one sender per CPU on numtxqueues N (one TX queue per CPU) with an mq
# root, what users get on either kernel; *_xps with XPS CPU i -> tx-i.
s1_nq_mq() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	xps_unset "${FUNCNAME[0]}" d0 || return
	measure "${FUNCNAME[0]}" d0 "$ncpu"
}
s1_nq_mq_xps() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}
s1_1q_pfifo_fast() {
	dev_add d0 1
	tc qdisc replace dev d0 root pfifo_fast
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}
# S1 with many flows per pktgen thread (random UDP source port), no XPS: the
# flow hash spreads packets over the queues, as for routed or forwarded traffic.
s1_flows_1q_pfifo_fast() {
	dev_add d0 1
	tc qdisc replace dev d0 root pfifo_fast
	measure "${FUNCNAME[0]}" d0 "$ncpu" --flows 1024
}
s1_flows_nq_mq() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	xps_unset "${FUNCNAME[0]}" d0 || return
	measure "${FUNCNAME[0]}" d0 "$ncpu" --flows 1024
}
# Every sender on one queue: pktgen's start_xmit mode hands each packet to
# the driver on queue_map's queue itself (no qdisc, no queue selection), and
# --one-queue leaves every thread's queue_map at 0, pktgen's default.
s1_onequeue_start_xmit() {
	dev_add d0 "$nq"
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xmit-mode start_xmit --one-queue
}
# S1 with user-space senders, one per CPU (seed 1 used trafgen's TX_RING).
s1_ring_nq_mq() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	measure_gen "${FUNCNAME[0]}" d0 tx_ring no
}
s1_ring_nq_mq_xps() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	measure_gen "${FUNCNAME[0]}" d0 tx_ring yes
}
s1_udp_nq_mq() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	measure_gen "${FUNCNAME[0]}" d0 udp no
}
s1_udp_nq_mq_xps() {
	dev_add d0 "$nq"
	root_mq "${FUNCNAME[0]}" d0 || return
	measure_gen "${FUNCNAME[0]}" d0 udp yes
}
# S2: bypass, one sender.
s2_fq_codel_fresh() {
	dev_add d0 1
	tc qdisc replace dev d0 root handle 1: fq_codel
	measure "${FUNCNAME[0]}" d0 1
}
s2_fq_codel_after_filter() {
	dev_add d0 1
	tc qdisc replace dev d0 root handle 1: fq_codel
	tc filter add dev d0 parent 1: protocol all prio 1 matchall action ok
	tc filter del dev d0 parent 1: prio 1
	measure "${FUNCNAME[0]}" d0 1
}
s2_pfifo_fast() {
	dev_add d0 1
	tc qdisc replace dev d0 root pfifo_fast
	measure "${FUNCNAME[0]}" d0 1
}
s2_noqueue() {
	dev_add d0 1
	measure "${FUNCNAME[0]}" d0 1
}
# S3: the default dummy as created, noqueue, one sender per CPU.
s3_default() {
	dev_add d0
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}

# Multi-queue sinks, on the patched kernel: the S1 load (one pktgen thread per
# CPU, queue_xmit) on nq TX queues under an mq root, on a dummy, a veth pair
# and a netdevsim device; *_xps with XPS CPU i -> tx-i (pktgen --xps), without
# the suffix no XPS map (the flow hash picks the queue). Each also records what
# the device reports per queue: <scenario>.qstats-before and <scenario>.qstats
# (mqbench qstats --json just before and after the run: netdev QSTATS_GET with
# scope queue, or the kernel's error, and the link's TX counters), and
# <scenario>.classes (tc -s class show, the mq classes, after the run).
sink_ns=sinkpeer
nsim_id=7

sink_measure() { # scenario device xps(yes|no): the device set up and up; deletes it
	local name=$1 dev=$2 xps=()
	root_mq "$name" "$dev" || return
	if [ "$(cat "/sys/class/net/$dev/carrier" 2> /dev/null)" != 1 ]; then
		fail "$name" "$dev has no carrier"
		dev_del "$dev"
		return
	fi
	if [ "$3" = yes ]; then
		xps=(--xps)
	else
		xps_unset "$name" "$dev" || return
	fi
	"$bin" qstats --dev "$dev" --json > "$out/$name.qstats-before" ||
		echo "bench: $name: mqbench qstats before the run failed"
	mqbench_run "$name" "$dev" pktgen --threads "$ncpu" "${xps[@]}"
	"$bin" qstats --dev "$dev" --json > "$out/$name.qstats" ||
		echo "bench: $name: mqbench qstats after the run failed"
	tc -s class show dev "$dev" > "$out/$name.classes"
	dev_del "$dev"
}

# dummy: numtxqueues nq, as s1_nq_mq[_xps] (the patched dummy: not lltx, the
# TX queue's xmit lock and per-queue counters).
sink_dummy() { # scenario xps
	dev_add d0 "$nq"
	sink_measure "$1" d0 "$2"
}
sink_dummy_mq() { sink_dummy "${FUNCNAME[0]}" no; }
sink_dummy_mq_xps() { sink_dummy "${FUNCNAME[0]}" yes; }

# veth: v0 with nq TX and RX queues; its peer v1 (as many) up in its own netns,
# so v0 has carrier and each packet crosses to v1 (netif_rx onto the sending
# CPU's backlog), where the stack drops it (the destination MAC is not v1's:
# PACKET_OTHERHOST). veth is lltx: no TX queue lock.
sink_veth() { # scenario xps
	if ! ip netns add "$sink_ns"; then
		fail "$1" "ip netns add $sink_ns failed (CONFIG_NET_NS?)"
		return
	fi
	if ! ip link add v0 numtxqueues "$nq" numrxqueues "$nq" type veth peer name v1 \
		numtxqueues "$nq" numrxqueues "$nq" netns "$sink_ns"; then
		fail "$1" "cannot create the veth pair v0/v1 (CONFIG_VETH?)"
		ip netns del "$sink_ns"
		return
	fi
	if ! ip -n "$sink_ns" link set v1 up || ! ip link set v0 up; then
		fail "$1" "cannot bring the veth pair up"
		dev_del v0
		ip netns del "$sink_ns"
		return
	fi
	sink_measure "$1" v0 "$2"
	ip netns del "$sink_ns"
}
sink_veth_mq() { sink_veth "${FUNCNAME[0]}" no; }
sink_veth_mq_xps() { sink_veth "${FUNCNAME[0]}" yes; }

# netdevsim: bus device nsim_id with one port and nq queues (TX and RX, the
# third field of new_device), its netdev renamed n0 before the first up (a
# fresh netdevsim has carrier until its first down). Not linked to a peer: its
# xmit drops every packet (tx_dropped), after the TX queue lock (not lltx).
sink_nsim() { # scenario xps
	local bus=/sys/bus/netdevsim ifs
	if [ ! -e "$bus/new_device" ]; then
		fail "$1" "no $bus/new_device (CONFIG_NETDEVSIM)"
		return
	fi
	if ! echo "$nsim_id 1 $nq" > "$bus/new_device"; then
		fail "$1" "netdevsim new_device \"$nsim_id 1 $nq\" rejected"
		return
	fi
	ifs=("$bus/devices/netdevsim$nsim_id/net/"*)
	if [ "${#ifs[@]}" -ne 1 ] || [ ! -e "${ifs[0]}" ]; then
		fail "$1" "netdevsim$nsim_id: not one netdev: ${ifs[*]##*/}"
		echo "$nsim_id" > "$bus/del_device"
		return
	fi
	if ! ip link set "${ifs[0]##*/}" name n0 || ! ip link set n0 up; then
		fail "$1" "netdevsim$nsim_id: cannot rename ${ifs[0]##*/} to n0 or bring it up"
		echo "$nsim_id" > "$bus/del_device"
		return
	fi
	sink_measure "$1" n0 "$2"
}
sink_nsim_mq() { sink_nsim "${FUNCNAME[0]}" no; }
sink_nsim_mq_xps() { sink_nsim "${FUNCNAME[0]}" yes; }

# Sweep for pps against senders and queues: sweep_q<Q>_t<T>, Q TX queues
# (1: pfifo_fast root, more: mq root), T pktgen threads.
sweep() { # scenario queues threads
	dev_add d0 "$2"
	if [ "$2" -eq 1 ]; then
		tc qdisc replace dev d0 root pfifo_fast
	else
		root_mq "$1" d0 || return
	fi
	measure "$1" d0 "$3" --xps
}
sweep_q1_t1() { sweep "${FUNCNAME[0]}" 1 1; }
sweep_q1_t2() { sweep "${FUNCNAME[0]}" 1 2; }
sweep_q2_t1() { sweep "${FUNCNAME[0]}" 2 1; }
sweep_q2_t2() { sweep "${FUNCNAME[0]}" 2 2; }

uname -r > "$out/uname"
tracepoints > "$out/tracepoints"
for s in ${BENCH_SCENARIOS//,/ }; do
	"$s"
done
# What a device costs by TX queue count (memory, dev_get_stats, ip link show).
if [ -n "${BENCH_DEVCOST:-}" ]; then
	/usr/bin/python3 "$BENCH_DEVCOST" > "$out/devcost.json" 2> "$out/devcost.err" ||
		echo "devcost failed: $(tail -n 3 "$out/devcost.err")" >> "$out/devcost.err"
fi
echo complete > "$out/complete"
sync
/bin/busybox poweroff -f
