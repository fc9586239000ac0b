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
set -euo pipefail
tree=$1
shift
cd "$tree/tools/testing/selftests/tc-testing"
# netdevsim's sysfs bus (mq cases) exists only once the module is loaded;
# the qdisc modules would autoload, loading them here names a missing one.
modprobe -a netdevsim sch_codel sch_fq_codel sch_sfq sch_tbf
# Debian's interpreter: it has python3-pyroute2 and python3-scapy. tdc's
# scripts (4d6f: scripts/sfq_rejects_limit_1.py) run "env python3": /usr/bin
# first, not a python3 of the host's PATH without pyroute2. The tree
# is read-only in the VM: tdc's own copy of the results goes to a tmpfs.
results=$(mktemp -d)/tc-testing.tap
# 6.1's tdc.py has no -J (parallel runs): it runs the cases one by one.
jobs=()
grep -q -- "--multiprocess" tdc.py && jobs=(-J "$(nproc)")
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
if [ -n "${TDC_IPROUTE2:-}" ]; then
	for tool in ip tc; do
		[ -x "$TDC_IPROUTE2/$tool" ] || { echo "$0: no $TDC_IPROUTE2/$tool" >&2; exit 2; }
	done
	# tdc_config.py takes EXTRA_NAMES from a tdc_config_local module.
	local_dir=$(dirname "$results")
	printf 'EXTRA_NAMES = {"TC": "%s/tc", "IP": "%s/ip"}\n' "$TDC_IPROUTE2" "$TDC_IPROUTE2" \
		> "$local_dir/tdc_config_local.py"
	export PYTHONPATH=$local_dir${PYTHONPATH:+:$PYTHONPATH}
	export PATH=$TDC_IPROUTE2:$PATH
	"$TDC_IPROUTE2/tc" -V >&2
fi
# One tdc run per test file, "### tdc run: FILE" before it and "### tdc
# run: FILE exit RC" after (ci/matrix/runner_parse.py parse_tdc() reads
# them as one): when a case's teardown fails, tdc stops its run (and with
# -J loses every result of it), which then costs that file's cases, not the
# suite's. The cases: those of the categories ("all": every case, as tdc.sh
# runs them), or TDC_IDS. TDC_FILE_TIMEOUT (seconds, default 900) ends a
# file's run that hangs: exit 124, its cases missing, the later files still
# run.
# shellcheck disable=SC2016 # the Python's own strings
plan='import json, pathlib, sys
args = sys.argv[1:]
ids = set(args[1].split()) if args[:1] == ["-e"] else set()
cats = set() if ids else set(args)
for f in sorted(pathlib.Path("tc-tests").rglob("*.json")):
    mine = [c["id"] for c in json.loads(f.read_text()) if c["id"] in ids
            or "all" in cats or cats & set(c.get("category", []))]
    if mine:
        print(f, *mine)'
if [ -n "${TDC_IDS:-}" ]; then
	runs=$(/usr/bin/python3 -c "$plan" -e "$TDC_IDS")
else
	runs=$(/usr/bin/python3 -c "$plan" "$@")
fi
# tdc exits 4 when it finds no case.
[ -n "$runs" ] || exit 4
rc=0
while read -r file ids; do
	echo "### tdc run: $file"
	run_rc=0
	# shellcheck disable=SC2086 # the ids, one word each
	timeout "${TDC_FILE_TIMEOUT:-900}" \
		/usr/bin/python3 tdc.py "${jobs[@]}" --format tap --outfile "$results" -f "$file" -e $ids ||
		run_rc=$?
	echo "### tdc run: $file exit $run_rc"
	[ "$run_rc" -eq 0 ] || [ "$rc" -ne 0 ] || rc=$run_rc
done <<< "$runs"
exit "$rc"
