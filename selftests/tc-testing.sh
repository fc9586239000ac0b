#!/usr/bin/env bash
# Peer suite: the kernel tree's own tc-testing (tdc) for the given
# categories, TAP on stdout. Runs inside the VM, as root, on each kernel.
# Usage: [TDC_IDS='ID ...'] tc-testing.sh KERNEL_TREE CATEGORY...
# TDC_IDS: run just those cases (tdc -e), not the categories: the base
# kernel runs only the cases expectations.json lists (ci/selftests_run.py
# tdc_subset()).
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
select=(-c "$@")
if [ -n "${TDC_IDS:-}" ]; then
	read -r -a ids <<< "$TDC_IDS"
	select=(-e "${ids[@]}")
fi
exec /usr/bin/python3 tdc.py "${jobs[@]}" --format tap --outfile "$results" "${select[@]}"
