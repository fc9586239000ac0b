"""Build a pinned stable tree's base and patched kernels and boot both with
selftests/stable.json's plan.

  python3 -m ci.stable_vm VERSION... [--results DIR]

For each version: fetch and import the tree (tools/series/stable.py, cached),
git am the net fixes on stable/<version>, build the tree's base and patched
kernels (x86, the test kernel configs: ci/kconfig_tree.py, the tree's
selftest fragments as the series' tip has them, which the pipeline's apply
stage extracts) and run the plan's programs on both
(ci/matrix/run.py's matrix). The run fails when a kernel does not build or
a matrix fails, naming the tree.
"""

import argparse
import logging
import os
import subprocess
import sys
from pathlib import Path

from ci import kconfig_tree
from ci.matrix import judge, run
from common import logs
from common.cache import cache_dir
from common.programs import CXX_BUILD, read_programs
from common.paths import ROOT
from tools.series import series, stable
from tools.series.stable import StableError

logger = logging.getLogger(__name__)


def unbuilt(progs: list[tuple[str, str]], bindir: Path = CXX_BUILD) -> list[str]:
    """The @BIN@ executables of progs that bindir lacks."""
    commands = {p.name: p.command.split()[0] for p in read_programs()}
    paths = [bindir / commands[name].removeprefix("@BIN@/") for name, _ in progs
             if commands.get(name, "").startswith("@BIN@/")]
    return [str(p) for p in paths if not os.access(p, os.X_OK)]


def build_and_boot(t: stable.Tree, info: dict[str, str], ws: Path, results: str | Path,
                   net: Path = stable.NET_PATCHES,
                   bindir: Path = CXX_BUILD) -> judge.MatrixVerdict:
    """Build the stable tree's base and patched (branch stable/<version>)
    kernels and run stable.vm_plan()'s programs on both (run.run_matrix).
    Returns its MatrixVerdict; raises StableError naming the tree and kernel whose
    build failed."""
    progs, expect = stable.vm_plan(t.version, net=net)  # a bad plan fails before the builds
    if missing := unbuilt(progs, bindir):
        raise StableError(f"stable {t.version}: no {', '.join(missing)}: build the C++ programs "
                          "first (./ci/test.sh --only setup base apply userspace)")
    src = stable.worktree_for(info["BASE_REPO"], ws / f"stable-{t.version}" / "src",
                              info["BASE_TAG"])
    absent = stable.drop_absent_tdc(expect, progs, stable.tdc_ids(src, t.branch))
    if absent:
        logger.info(f"  tc-testing cases expectations.json lists that stable {t.version} does "
                    f"not have (no entry there): {', '.join(absent)}")
    try:
        frags = kconfig_tree.test_fragments(ws)
    except kconfig_tree.MissingFragments as e:
        raise StableError(f"stable {t.version}: {e}") from e
    builds = {}
    for label, rev in (("base", info["BASE_TAG"]), ("patched", t.branch)):
        series.git(src, "checkout", "-q", "-f", "--detach", rev)
        out = ws / f"stable-{t.version}" / f"build-x86-{label}"
        logger.info(f"  building stable {t.version} {label} ({rev}) in {out}")
        res = subprocess.run(["bash", str(ROOT / "kernel/build.sh"), str(src), str(out),
                              "x86_64", *map(str, frags)], text=True, capture_output=True,
                             env={**os.environ, "KCONFIG_UNMET": str(kconfig_tree.UNMET)})
        (Path(results) / f"build-{label}.log").parent.mkdir(parents=True, exist_ok=True)
        (Path(results) / f"build-{label}.log").write_text(res.stdout + res.stderr)
        if res.returncode:
            tail = "\n  ".join((res.stdout + res.stderr).strip().splitlines()[-8:])
            raise StableError(f"stable {t.version}: the {label} kernel does not build "
                              f"(kernel/build.sh exit {res.returncode}):\n  {tail}")
        builds[label] = out
    # The tree's own selftests (run as @TREE@) are those of the stable tree.
    return run.run_matrix(builds, Path(results) / "vm", bindir=bindir, tree=src,
                          expect=expect, progs=progs, stages=["ci.stable_vm"])


@series.reports_errors
@logs.printed
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pins", type=Path, default=stable.PINS,
                    help="pin files (default %(default)s)")
    ap.add_argument("--net", type=Path, default=stable.NET_PATCHES,
                    help="the net series, one directory per topic (default %(default)s)")
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "stable",
                    help="per tree: build logs, KTAP and consoles (default %(default)s)")
    args = ap.parse_args(argv)
    ws, failed = cache_dir() / "ws", []
    for t in [stable.tree(v, args.pins) for v in args.versions]:
        print(f"stable {t.version}: {t.env['BASE_PACKAGE']} {t.env['BASE_VERSION']}")
        info = stable.fetch_import(t)
        wt = stable.worktree_for(info["BASE_REPO"], ws / f"stable-{t.version}" / "src",
                                 info["BASE_TAG"])
        stable.apply_stable(t.version, wt, base=info["BASE_TAG"], pins=args.pins,
                            net=args.net, force=True)  # the tooling's own import
        out = build_and_boot(t, info, ws, args.results / t.version, net=args.net)
        print(out.matrix)
        print(f"stable {t.version}: {out.summary}")
        if not out.ok:
            failed.append(t.version)
    if failed:
        raise StableError(f"stable VM matrix failed on: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
