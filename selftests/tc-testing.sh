#!/usr/bin/env bash
# Peer suite: the kernel tree's own tc-testing (tdc) for the given
# categories, TAP on stdout. Runs inside the VM, as root, on each kernel.
# Usage: [TDC_IDS='ID ...'] [TDC_IPROUTE2=DIR] tc-testing.sh KERNEL_TREE all|CATEGORY...
# TDC_IDS: run just those cases (tdc -e), not the categories: the base
# kernel runs only the cases the host names (ci/matrix/run.py
# tdc_subset()).
# TDC_IPROUTE2: a directory holding the ip and tc tdc runs (tdc's
# NAMES['IP'], NAMES['TC'] and first in PATH): the iproute2 of the kernel's
# version (ci/setup-host.sh); without it, the host's.
# MODPROBE, SYSCTL: the commands that load modules and set sysctls (the
# host's tests give stand-ins: the script changes the kernel it runs on).
set -euo pipefail
modprobe=${MODPROBE:-modprobe}
sysctl=${SYSCTL:-sysctl}
tree=$1
shift
cd "$tree/tools/testing/selftests/tc-testing"
# netdevsim's sysfs bus (mq cases) exists only once the module is loaded;
# the qdisc modules would autoload, loading them here names a missing one.
"$modprobe" -a netdevsim sch_codel sch_fq_codel sch_sfq sch_tbf
# Then every module the tree's tdc.sh loads before its run, as netdev CI
# runs it: sch_teql registers its qdiscs as "teql0", which nothing
# autoloads (84a0 "Create TEQL with default setting" fails without it, and
# its teardown failure skips the file's other cases). One the kernel lacks
# is skipped, as tdc.sh skips it.
if [ -f tdc.sh ]; then
	sed -nE 's/^(try_)?modprobe +([[:alnum:]_]+)$/\2/p' tdc.sh | while read -r module; do
		"$modprobe" -q "$module" 2> /dev/null || echo "$0: no module $module" >&2
	done
fi
# No IPv6 traffic of their own from the cases' devices: once up, a device
# makes its link-local address and sends router solicitations (70 bytes,
# about a second after it comes up and every 4 s after) and, unless NOARP
# (dummy), MLD reports (90 bytes) for that address's group. A case slower
# than that under TCG counts them among its own packets: an unclassified
# solicitation dropped by qfq (82d9, c797, d3da: "drops: 1 != 2"), 70 bytes
# more on red under qfq (7a5f), 3 x 70 on netem with duplicate (8c17), a
# drop more on pfifo_head_drop limit 0 (d774) and on qfq (5993), a report
# on netdevsim under taprio (476f, 0235). No case uses an IPv6 address it
# did not add. tdc makes a namespace per case: it takes the initial
# namespace's settings (devconf_inherit_init_net=1), not the defaults.
"$sysctl" -qw net.core.devconf_inherit_init_net=1 net.ipv6.conf.default.addr_gen_mode=1 \
	net.ipv6.conf.default.router_solicitations=0
# Debian's interpreter: it has python3-pyroute2 and python3-scapy. tdc's
# scripts (4d6f: scripts/sfq_rejects_limit_1.py) run "env python3": /usr/bin
# first, not a python3 of the host's PATH without pyroute2. The tree
# is read-only in the VM: tdc's own copies of the results, each run's
# output and tdc_config_local.py go to a tmpfs.
work=$(mktemp -d)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
# iproute2 DIR: ip and tc of setup-host.sh's layout (DIR/../root: sid's
# binaries and glibc) copied into the tmpfs with every library they load,
# each made to run with that loader and those libraries (patchelf); sets
# TDC_IPROUTE2 to their directory and tc_lib_dir to tc's plugins and
# distribution tables. tdc runs ip and tc some 10,000 times for qdisc and
# filter, each through "sh -c": from the host's file system (virtiofs)
# through the loader each took 420 ms under TCG, from the tmpfs 66 ms (the
# host's own tc 125 ms; Documentation/pipeline.md).
tc_lib_dir=
iproute2() {
	local root=$1/../root tool
	local lib=$root/usr/lib/x86_64-linux-gnu out=$work/iproute2
	mkdir -p "$out/lib"
	for tool in ip tc; do
		"$lib/ld-linux-x86-64.so.2" --list --library-path \
			"$lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu" "$root/usr/sbin/$tool"
	done | awk '$2 == "=>" { print $3 }' | sort -u | xargs -r cp -L -t "$out/lib"
	cp "$lib/ld-linux-x86-64.so.2" "$out/lib/"
	cp -r "$lib/tc" "$out/lib/tc"
	for tool in ip tc; do
		cp "$root/usr/sbin/$tool" "$out/$tool"
		patchelf --set-interpreter "$out/lib/ld-linux-x86-64.so.2" --set-rpath "$out/lib" \
			"$out/$tool"
	done
	TDC_IPROUTE2=$out tc_lib_dir=$out/lib/tc
}
if [ -n "${TDC_IPROUTE2:-}" ]; then
	for tool in ip tc; do
		[ -x "$TDC_IPROUTE2/$tool" ] || { echo "$0: no $TDC_IPROUTE2/$tool" >&2; exit 2; }
	done
	[ ! -x "$TDC_IPROUTE2/../root/usr/sbin/tc" ] || iproute2 "$TDC_IPROUTE2"
	# tdc_config.py takes EXTRA_NAMES and ENVIR (the environment of every
	# command it runs; empty by default) from a tdc_config_local module.
	printf 'EXTRA_NAMES = {"TC": "%s/tc", "IP": "%s/ip"}\n' "$TDC_IPROUTE2" "$TDC_IPROUTE2" \
		> "$work/tdc_config_local.py"
	if [ -n "$tc_lib_dir" ]; then
		printf 'ENVIR = {"TC_LIB_DIR": "%s"}\n' "$tc_lib_dir" >> "$work/tdc_config_local.py"
		export TC_LIB_DIR=$tc_lib_dir
	fi
	export PYTHONPATH=$work${PYTHONPATH:+:$PYTHONPATH}
	export PATH=$TDC_IPROUTE2:$PATH
	"$TDC_IPROUTE2/tc" -V >&2
fi
# The cases: those of the categories ("all": every case, as tdc.sh runs
# them), or TDC_IDS; the host requires the same ones of a run
# (expectations.tdc_tree_ids(); ci/tests/test_tdc.py checks they agree).
# Each tdc run prints "### tdc run: FILE..." before its output and
# "### tdc run: FILE... exit RC" after (parse_tdc() in
# ci/matrix/runner_parse.py reads the runs as one): when a case's setup or
# teardown fails, tdc skips the rest of its run (and with -J loses every
# result of it), which then costs that run's cases, not the suite's.
# TDC_FILE_TIMEOUT (seconds, default 900) ends a run that hangs: exit 124,
# its cases missing, the other runs go on.
#
# The runs go in TDC_LANES lanes at once (default: nproc + 1), each run
# serial (tdc without -J) in a mount namespace of its own with a private
# /run/netns, so tdc's "ip -a netns del" at its end removes only its own
# namespaces. tdc -J parallelises only within a run, in batches of 32
# cases: most files are one batch, and a run per file kept one CPU busy
# and started tdc (10 to 20 s under TCG) 50 times for qdisc and filter.
# Lane 0 takes every case tdc itself runs serially (tdc.py mp_bins(): no
# nsPlugin, or a netdevsim device, whose id is fixed), so no two of them
# run at once; the rest of each file goes to the lane with the least work
# queued. Each lane starts its longest files first and runs its smaller
# ones together, up to TDC_BATCH cases a run (default 32, tdc -J's batch).
# Measured: Documentation/pipeline.md, tc-testing. A tree whose tdc.py has
# no -J names its devices and namespace once for every case (6.1): one
# lane.
# shellcheck disable=SC2016 # the Python's own strings
plan='import json, pathlib, re, sys
lanes, batch, args = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
ids = set(args[1].split()) if args[:1] == ["-e"] else set()
cats = set() if ids else set(args)
def exclusive(c):
    req = c.get("plugins", {}).get("requires", [])
    return ("nsPlugin" not in (req if isinstance(req, list) else [req])
            or "netdevsim/new_device" in str(c.get("setup", "")))
def cost(cases):
    # Seconds under TCG, roughly as measured: 10 to start tdc, 2.5 a case,
    # up to 10 more a ping (most wait for an answer that never comes).
    steps = lambda c: json.dumps([c.get(k) for k in ("setup", "cmdUnderTest", "teardown")])
    return 10 + sum(2.5 + 10 * len(re.findall(r"\bping\b", steps(c))) for c in cases)
runs = []  # [file order, lane (None: any), file, cases, cost]
for f in sorted(pathlib.Path("tc-tests").rglob("*.json")):
    mine = [c for c in json.loads(f.read_text()) if c["id"] in ids
            or "all" in cats or cats & set(c.get("category", []))]
    for lane, part in ((0, [c for c in mine if lanes == 1 or exclusive(c)]),
                       (None, [c for c in mine if lanes > 1 and not exclusive(c)])):
        if part:
            runs.append([len(runs), lane, f, part, cost(part)])
runs.sort(key=lambda run: -run[4])
load = [0.0] * lanes
load[0] = sum(run[4] for run in runs if run[1] == 0)
for run in runs:
    if run[1] is None:
        run[1] = min(range(lanes), key=load.__getitem__)
        load[run[1]] += run[4]
# Each lane starts its longest runs first; its smaller ones go together, up
# to batch cases a run, as tdc -J batches them.
batches = []
for n, lane, f, part, _ in sorted(runs, key=lambda run: (run[1], -run[4])):
    last = batches[-1] if batches else None
    if last and last[1] == lane and len(last[3]) + len(part) <= batch:
        last[0], last[3] = min(last[0], n), last[3] + part
        last[2] += [] if f in last[2] else [f]
    else:
        batches.append([n, lane, [f], part])
for n, lane, files, part in batches:
    print(n, lane, ",".join(map(str, files)), *(c["id"] for c in part))'
lanes=${TDC_LANES:-$(($(nproc) + 1))}
grep -q -- "--multiprocess" tdc.py || lanes=1
batch=${TDC_BATCH:-32}
if [ -n "${TDC_IDS:-}" ]; then
	runs=$(/usr/bin/python3 -c "$plan" "$lanes" "$batch" -e "$TDC_IDS")
else
	runs=$(/usr/bin/python3 -c "$plan" "$lanes" "$batch" "$@")
fi
# tdc exits 4 when it finds no case.
[ -n "$runs" ] || exit 4
mkdir -p /run/netns
# run LANE N FILE[,FILE...] ID...: one tdc run; its output goes out whole,
# after it ends, with a line saying its lane and time (parse_tdc() reads no
# line outside a run but the plan).
run() {
	local lane=$1 n=$2 files rc=0 start=$SECONDS
	IFS=, read -ra files <<< "$3"
	shift 3
	timeout "${TDC_FILE_TIMEOUT:-900}" unshare --mount -- \
		sh -c 'mount -t tmpfs tdc-netns /run/netns && exec "$@"' tdc-run \
		/usr/bin/python3 tdc.py --format tap --outfile "$work/$n.tap" -f "${files[@]}" \
		-e "$@" > "$work/$n.out" 2> "$work/$n.err" || rc=$?
	echo "$rc" > "$work/$n.rc"
	{
		flock 9
		echo "### tdc run: ${files[*]}"
		cat "$work/$n.out"
		echo "### tdc run: ${files[*]} exit $rc"
		echo "# lane $lane: $# case(s) in $((SECONDS - start)) s"
		cat "$work/$n.err" >&2
	} 9> "$work/lock"
}
for ((lane = 0; lane < lanes; lane++)); do
	while read -r n run_lane files ids; do
		# shellcheck disable=SC2086 # the ids, one word each
		[ "$run_lane" != "$lane" ] || run "$lane" "$n" "$files" $ids
	done <<< "$runs" &
done
wait
# The first run that failed, in the files' order, gives the exit code
# (N is the place of a run's first file).
rc=0
while read -r n _; do
	run_rc=$(cat "$work/$n.rc" 2> /dev/null || echo 2)
	[ "$run_rc" -eq 0 ] || [ "$rc" -ne 0 ] || rc=$run_rc
done < <(sort -n <<< "$runs")
rm -rf "$work"
exit "$rc"
