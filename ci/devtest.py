"""The series' tests on a developer's own build, through the tools
themselves; each command is printed before it runs (--dry-run: printed
only).

    python3 -m ci.devtest kernel TREE BUILD [-t COLLECTION:TEST]...
    python3 -m ci.devtest kselftest TREE BUILD [-t COLLECTION:TEST]...
    python3 -m ci.devtest kunit TREE [--build-dir DIR]
    python3 -m ci.devtest progs [NAME]... [--kernel base|patched]

kernel: the kernel the kselftests boot, configured as netdev CI configures
it: vng --build in TREE with the config fragment of each selftest
collection the tests are in (tools/testing/selftests/net/config, ...),
built in BUILD (O=). This one builds a kernel: minutes to an hour.
kselftest: the tree's selftests installed on the host as netdev CI installs
them (make -C tools/testing/selftests TARGETS=... install, objects and
install in --out, default $PROJECT_CACHE/kselftest/dev, which the cleanup
command removes), then the kernel built in BUILD booted by vng (--tcg:
without KVM), running run_kselftest.sh -t for each test (default: the
series' kselftests of selftests/programs.txt). The drivers/net ones run as
programs.txt runs them: on a dummy (selftests/drv-net-dummy.sh, in a
network namespace of their own), on netdevsim (no NETIF), or both.
kunit: the tree's kunit.py with the kunitconfigs the pipeline's kunit stage
composes (kunit/net.kunitconfig, what the series' suites depend on and the
tree's networking suites, then kunit/series.kunitconfig) and the kernel
arguments its SMP config needs (kunit/uml.py SERIES_KERNEL_ARGS).
progs: the project's C++ programs (build/cxx: cmake, as README says) on the
running kernel, as root, each in a network namespace of its own."""

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
from kunit.uml import SERIES_CONFIG, SERIES_KERNEL_ARGS, default_configs

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
    targets = collections(tests)
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


def kunit_commands(tree: Path, build_dir: Path | None) -> list[list[str]]:
    """kunit.py run as the pipeline's kunit stage composes it: series.kunitconfig
    sets only what the series adds, net.kunitconfig what that depends on."""
    configs = default_configs()
    return [["python3", "tools/testing/kunit/kunit.py", "run",
             *(f"--kunitconfig={c}" for c in configs),
             *(f"--kernel_args={a}" for a in SERIES_KERNEL_ARGS if SERIES_CONFIG in configs),
             *([f"--build_dir={build_dir.resolve()}"] if build_dir else [])]]


def collections(tests: Sequence[str]) -> list[str]:
    """The make TARGETS of tests, as the kselftest install takes them."""
    return list(dict.fromkeys(t.partition(":")[0] for t in tests))


def kernel_commands(tree: Path, build: Path, tests: Sequence[str]) -> list[list[str]]:
    """vng --build with the config fragment of each collection of tests
    the tree has (all of them when the tree is not there to look), in BUILD."""
    frags = [f"tools/testing/selftests/{c}/config" for c in collections(tests)]
    if tree.is_dir():
        frags = [f for f in frags if (tree / f).is_file()]
    build = build.resolve()
    return [["mkdir", "-p", str(build)],
            ["vng", "--build", *(a for f in frags for a in ("--config", f)), f"O={build}"]]


def progs_commands(names: Sequence[str], kernel: str, bindir: Path) -> list[list[str]]:
    progs = [p for p in read_programs() if p.kind == "ktap"]
    known = [p.name for p in progs]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"no C++ program {', '.join(unknown)} (known: {', '.join(known)})")
    return [["env", f"SELFTEST_KERNEL={kernel}", *IN_NETNS,
             *p.command.replace("@BIN@", str(bindir)).replace("@CHURN_SECONDS@", "20").split()]
            for p in progs if not names or p.name in names]


# How to get what a command needs when it is missing.
HOW = {"bzImage": "build it: python3 -m ci.devtest kernel TREE BUILD (vng --build with the "
                  "selftests' config fragments)",
       "selftests": "build them: README \"Working on the series\" (make headers_install, "
                    "then cmake -S . -B build/cxx -DKHDR_INCLUDES=... && cmake --build build/cxx)"}


def main(argv: list[str] | None = None) -> int:
    head, _, rest = __doc__.partition("\n\n")
    ap = argparse.ArgumentParser(prog="python3 -m ci.devtest", description=head,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=rest)
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    # --dry-run after the subcommand too, as users type it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dry-run", action="store_true", default=argparse.SUPPRESS,
                        help="print the commands only")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("kernel", parents=[common],
                       help="build the kernel the kselftests boot, as netdev CI configures it")
    k = sub.add_parser("kselftest", parents=[common],
                       help="the series' kselftests in vng on BUILD")
    for one in (b, k):
        one.add_argument("tree", type=Path, help="the kernel tree BUILD is built from")
        one.add_argument("build", type=Path,
                         help="the kernel build directory (O=), bzImage in it")
        one.add_argument("-t", dest="tests", action="append", metavar="COLLECTION:TEST",
                         help="default: " + " ".join(kselftest_tests()))
    k.add_argument("--out", type=Path, default=cache_dir() / "kselftest/dev",
                   help="selftests build and install (default %(default)s: the cleanup "
                   "command removes it)")
    k.add_argument("--tcg", action="store_true",
                   help="QEMU without KVM (vng --disable-kvm), as the pipeline's VMs run")
    u = sub.add_parser("kunit", parents=[common],
                       help="the series' KUnit suites with the tree's kunit.py")
    u.add_argument("tree", type=Path)
    u.add_argument("--build-dir", type=Path, help="kunit.py --build_dir (default: its own)")
    p = sub.add_parser("progs", parents=[common],
                       help="the C++ programs on the running kernel (root)")
    p.add_argument("names", nargs="*", metavar="NAME", help="default: every one")
    p.add_argument("--kernel", choices=("base", "patched"), default="patched",
                   help="what the kernel is: the programs expect by it (default %(default)s)")
    p.add_argument("--bin", type=Path, default=CXX_BUILD, help="default %(default)s")
    args = ap.parse_args(argv)
    cwd: Path | None = None
    try:
        if args.cmd in ("kernel", "kselftest"):
            tests = args.tests or kselftest_tests()
            bad = [t for t in tests if ":" not in t]
            if bad:
                ap.error(f"-t {bad[0]}: not COLLECTION:TEST (e.g. net:qdisc_bypass.py)")
        if args.cmd == "kernel":
            cmds = kernel_commands(args.tree, args.build, tests)
            need, cwd = [args.tree / "tools/testing/selftests"], args.tree
        elif args.cmd == "kselftest":
            cmds = kselftest_commands(args.tree, args.build, args.out, tests, args.tcg)
            need = [args.tree / "tools/testing/selftests", args.build / "arch/x86/boot/bzImage"]
        elif args.cmd == "kunit":
            cmds = kunit_commands(args.tree, args.build_dir)
            need, cwd = [args.tree / "tools/testing/kunit/kunit.py"], args.tree
        else:
            cmds = progs_commands(args.names, args.kernel, args.bin.resolve())
            need = [args.bin / "selftests"]
    except ValueError as err:
        ap.error(str(err))
    for cmd in cmds:
        print(("" if cwd is None else f"cd {shlex.quote(str(cwd))} && ") + shlex.join(cmd))
    if args.dry_run:
        return 0
    missing = [n for n in need if not n.exists()]
    for n in missing:
        print(f"error: missing {n}" + (f"; {HOW[n.name]}" if n.name in HOW else ""),
              file=sys.stderr)
    if missing:
        return 2
    for cmd in cmds:
        code = subprocess.run(cmd, cwd=cwd).returncode
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
