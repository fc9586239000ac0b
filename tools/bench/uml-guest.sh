#!/bin/bash
# init (PID 1) of a benchmark UML kernel booted with the host root over
# hostfs. Runs the scenarios named in BENCH_SCENARIOS (kernel command line),
# one JSON file per scenario into BENCH_OUT, then powers off.
# Each scenario sets up a dummy device and its qdisc, then runs mqbench.
set -uo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
out=/tmp/out
mkdir -p "$out"
mount -t hostfs -o "$BENCH_OUT" none "$out" || {
	echo "bench: cannot mount $BENCH_OUT"
	/bin/busybox poweroff -f
}
exec > "$out/guest.log" 2>&1

secs=${BENCH_SECONDS:-3}
bin=$BENCH_BIN
ncpu=$(nproc)

dev_add() { # name [numtxqueues]
	if [ -n "${2:-}" ]; then
		ip link add "$1" numtxqueues "$2" type dummy
	else
		ip link add "$1" type dummy
	fi
	ip link set "$1" up
}

measure() { # scenario device threads [extra mqbench args]
	local name=$1 dev=$2 threads=$3
	shift 3
	echo "== $name"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-before"
	"$bin" pktgen --dev "$dev" --threads "$threads" --duration "$secs" --json "$@" \
		> "$out/$name.json" 2> "$out/$name.err" || echo "bench: $name failed: $(cat "$out/$name.err")"
	tc -s qdisc show dev "$dev" > "$out/$name.qdisc-after"
	ip link del "$dev"
}

# S1: one sender per CPU.
s1_default_pfifo_fast() {
	dev_add d0
	tc qdisc replace dev d0 root pfifo_fast
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}
s1_default_mq() {
	dev_add d0
	tc qdisc replace dev d0 root handle 1: mq || { echo "mq not attachable"; ip link del d0; return; }
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}
s1_1q_pfifo_fast() {
	dev_add d0 1
	tc qdisc replace dev d0 root pfifo_fast
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
}
s1_nq_mq() {
	dev_add d0 "$ncpu"
	tc qdisc replace dev d0 root handle 1: mq
	measure "${FUNCNAME[0]}" d0 "$ncpu" --xps
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

uname -r > "$out/uname"
for s in ${BENCH_SCENARIOS//,/ }; do
	"$s"
done
echo complete > "$out/complete"
sync
/bin/busybox poweroff -f
