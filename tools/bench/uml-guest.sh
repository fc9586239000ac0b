#!/bin/bash
# init (PID 1) of a benchmark UML kernel booted with the host root over
# hostfs. Runs the scenarios named in BENCH_SCENARIOS (kernel command line),
# one JSON file per scenario into BENCH_OUT, then powers off.
# Each scenario sets up a dummy device and its qdisc, then runs mqbench; a
# scenario that cannot run as specified leaves <scenario>.err instead.
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

run_mqbench() { # scenario device subcommand [mqbench args]; deletes the device
	local name=$1 dev=$2 sub=$3
	shift 3
	echo "== $name"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-before"
	"$bin" "$sub" --dev "$dev" --duration "$secs" --json "$@" \
		> "$out/$name.json" 2> "$out/$name.err" || echo "bench: $name failed: $(cat "$out/$name.err")"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-after"
	ip link del "$dev"
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
			ip link del "$2"
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
	ip link del "$2"
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
