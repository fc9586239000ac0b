"""The series' tests on a developer's own build, through the tools
themselves; each command is printed before it runs (--dry-run: printed
only).

    python3 -m ci.devtest kselftest TREE BUILD [-t COLLECTION:TEST]...
    python3 -m ci.devtest kunit TREE [--build-dir DIR] [--net]
    python3 -m ci.devtest progs [NAME]... [--kernel base|patched]

kselftest: the tree's selftests installed on the host as netdev CI installs
them (make -C tools/testing/selftests TARGETS=... install, objects and
install in --out, default $PROJECT_CACHE/kselftest/dev, which the cleanup
command removes), then the kernel built in BUILD booted by vng (--tcg:
without KVM), running run_kselftest.sh -t for each test (default: the
series' kselftests of selftests/programs.txt). The drivers/net ones run as
programs.txt runs them: on a dummy (selftests/drv-net-dummy.sh, in a
network namespace of their own), on netdevsim (no NETIF), or both.
kunit: the tree's kunit.py with the project's kunitconfig (the series'
suites; --net adds the tree's networking ones) and the kernel arguments
its SMP config needs (kunit/uml.py SERIES_KERNEL_ARGS).
progs: the project's C++ programs (build/cxx) on the running kernel, as
root, each in a network namespace of its own."""

import argparse
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ci.matrix.kselftests import kselftest_install_commands
from common.paths import ROOT
from common.programs import CXX_BUILD, read_programs
from common.cache import cache_dir
from kunit.uml import NET_CONFIG, SERIES_CONFIG, SERIES_KERNEL_ARGS

DRV_NET_DUMMY = ROOT / "selftests/drv-net-dummy.sh"
# A network namespace with lo up, sysfs showing its devices only, tracefs
# and debugfs (as selftests/run-in-vm.sh runs a program), then "$@".
IN_NETNS = ("unshare", "--net", "--mount", "--", "sh", "-c",
            "mount -t sysfs sysfs /sys && mount -t tracefs nodev /sys/kernel/tracing && "
            'mount -t debugfs nodev /sys/kernel/debug && ip link set lo up && exec "$@"',
            "netns")


def kselftest_tests() -> list[str]:
    """COLLECTION:TEST of the series' kselftest programs, each once."""
    return list(dict.fromkeys(p.kselftest for p in read_programs() if p.kind == "kselftest"))


def kselftest_runs() -> dict[str, list[list[str] | None]]:
    """{COLLECTION:TEST: how programs.txt runs it, once per program}: on a
    dummy (the queue counts drv-net-dummy.sh takes) or None, through the
    runner alone (a drivers/net test then runs on the netdevsim NetDrvEnv
    makes)."""
    out: dict[str, list[list[str] | None]] = {}
    for p in read_programs():
        if p.kind == "kselftest":
            words = p.command.split()
            out.setdefault(p.kselftest, []).append(
                words[3:] if words[0].endswith("/drv-net-dummy.sh") else None)
    return out


def kselftest_commands(tree: Path, build: Path, out: Path, tests: Sequence[str],
                       tcg: bool = False) -> list[list[str]]:
    install = out / "install"
    targets = list(dict.fromkeys(t.partition(":")[0] for t in tests))
    cmds = kselftest_install_commands(tree.resolve(), out / "build", install, targets)
    runs = kselftest_runs()
    plain = [a for t in tests if None in runs.get(t, [None]) for a in ("-t", t)]
    vng = ["vng", "--run", str(build.resolve()), *(["--disable-kvm"] if tcg else []),
           "--user", "root", "--"]
    if plain:
        cmds.append([*vng, str(install / "run_kselftest.sh"), *plain])
    for t in tests:
        for queues in runs.get(t, []):
            if queues is not None:
                cmds.append([*vng, *IN_NETNS, str(DRV_NET_DUMMY), str(install), t, *queues])
    return cmds


def kunit_commands(tree: Path, build_dir: Path | None, net: bool) -> list[list[str]]:
    configs = [SERIES_CONFIG] + ([NET_CONFIG] if net else [])
    return [["python3", "tools/testing/kunit/kunit.py", "run",
             *(f"--kunitconfig={c}" for c in configs),
             *(f"--kernel_args={a}" for a in SERIES_KERNEL_ARGS),
             *([f"--build_dir={build_dir.resolve()}"] if build_dir else [])]]


def progs_commands(names: Sequence[str], kernel: str, bindir: Path) -> list[list[str]]:
    progs = [p for p in read_programs() if p.kind == "ktap"]
    known = [p.name for p in progs]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"no C++ program {', '.join(unknown)} (known: {', '.join(known)})")
    return [["env", f"SELFTEST_KERNEL={kernel}", *IN_NETNS,
             *p.command.replace("@BIN@", str(bindir)).replace("@CHURN_SECONDS@", "20").split()]
            for p in progs if not names or p.name in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    sub = ap.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kselftest", help="the series' kselftests in vng on BUILD")
    k.add_argument("tree", type=Path, help="the kernel tree BUILD was built from")
    k.add_argument("build", type=Path, help="the kernel build directory (O=), bzImage in it")
    k.add_argument("-t", dest="tests", action="append", metavar="COLLECTION:TEST",
                   help="default: " + " ".join(kselftest_tests()))
    k.add_argument("--out", type=Path, default=cache_dir() / "kselftest/dev",
                   help="selftests build and install (default %(default)s: the cleanup "
                   "command removes it)")
    k.add_argument("--tcg", action="store_true",
                   help="QEMU without KVM (vng --disable-kvm), as the pipeline's VMs run")
    u = sub.add_parser("kunit", help="the series' KUnit suites with the tree's kunit.py")
    u.add_argument("tree", type=Path)
    u.add_argument("--build-dir", type=Path, help="kunit.py --build_dir (default: its own)")
    u.add_argument("--net", action="store_true", help="the tree's networking suites too")
    p = sub.add_parser("progs", help="the C++ programs on the running kernel (root)")
    p.add_argument("names", nargs="*", metavar="NAME", help="default: every one")
    p.add_argument("--kernel", choices=("base", "patched"), default="patched",
                   help="what the kernel is: the programs expect by it (default %(default)s)")
    p.add_argument("--bin", type=Path, default=CXX_BUILD, help="default %(default)s")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "kselftest":
            tests = args.tests or kselftest_tests()
            bad = [t for t in tests if ":" not in t]
            if bad:
                ap.error(f"-t {bad[0]}: not COLLECTION:TEST (e.g. net:qdisc_bypass.py)")
            cmds = kselftest_commands(args.tree, args.build, args.out, tests, args.tcg)
            need = [args.tree / "tools/testing/selftests", args.build / "arch/x86/boot/bzImage"]
            cwd = None
        elif args.cmd == "kunit":
            cmds = kunit_commands(args.tree, args.build_dir, args.net)
            need, cwd = [args.tree / "tools/testing/kunit/kunit.py"], args.tree
        else:
            cmds = progs_commands(args.names, args.kernel, args.bin.resolve())
            need, cwd = [args.bin / "selftests"], None
    except ValueError as err:
        ap.error(str(err))
    for cmd in cmds:
        print(("" if cwd is None else f"cd {shlex.quote(str(cwd))} && ") + shlex.join(cmd))
    if args.dry_run:
        return 0
    missing = [str(n) for n in need if not n.exists()]
    if missing:
        print(f"error: missing {', '.join(missing)}", file=sys.stderr)
        return 2
    for cmd in cmds:
        code = subprocess.run(cmd, cwd=cwd).returncode
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
