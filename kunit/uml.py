"""Run the project's KUnit suites in UML through the tree's kunit.py.

Results are read from kunit.py's JSON and counted per case; the run fails
on any failed case, on a crash or timeout, when no case passed (none ran,
or all skipped), or when a suite of the configs (NET_SUITES, SERIES_SUITES)
did not run, has no passing case or skipped one. It also fails on a
kernel report (KASAN, lockdep, WARNING, BUG, UBSAN: common/splats.py)
anywhere in the kernel's whole log, the build directory's test.log:
kunit.py's own output shows a case's log only when the case fails, so a
passing case that warns would go unseen there
(ci/negative-controls/kunit-warn-in-passing-case.patch is such a case). The networking suites
of the base tree (net.kunitconfig) always run, as a peer check; the series'
own (series.kunitconfig) when it has any. negative_control() runs the
series' suites on the tree with a crafted bug applied, which they must
catch.
"""

import argparse
import fnmatch
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.cache import cache_dir
from common.git import git, git_run
from common.proc import run_tee
from common.splats import find_splats

HERE = Path(__file__).resolve().parent
NET_CONFIG = HERE / "net.kunitconfig"
SERIES_CONFIG = HERE / "series.kunitconfig"
# Suites series.kunitconfig enables, by their kunit_suite name: a run of the
# default configs that lacks one of them fails. Empty while the series adds
# no suite (series.kunitconfig then sets no option); the two must agree
# (kunit/tests/test_uml.py).
SERIES_SUITES = ("dummy",)
# The suites net.kunitconfig enables in the base tree (NET_TEST,
# NETDEV_ADDR_LIST_TEST), by their kunit_suite name: a run of it that lacks
# one of them fails.
NET_SUITES = ("net_core", "dev-addr-list-test")
# The kernel command line of a run with series.kunitconfig: its CONFIG_SMP
# needs seccomp=on under UML, and the dummy suite's senders race on one
# queue only with more than one CPU.
SERIES_KERNEL_ARGS = ("seccomp=on", "ncpus=2")
# The crafted bug the series' suites must catch, and the case that catches it:
# a queue's counters written by every CPU (CPU 0's, not each CPU's own) on an
# lltx dummy lose increments.
NEGATIVE_CONTROL = (HERE.parent / "ci/negative-controls/dummy-counters-shared.patch",
                    "dummy", "dummy_test_senders")
# The lost increments need the two vCPU threads running at once; on a
# loaded host they may take turns for a whole run. Runs of the case (no
# rebuild after the first) until one catches the bug.
NEGATIVE_ATTEMPTS = 3
# The same suites again on a debug UML kernel: KASAN (with vmalloc) and lockdep.
DEBUG_KCONFIG = ("CONFIG_DEBUG_KERNEL=y", "CONFIG_KASAN=y", "CONFIG_KASAN_VMALLOC=y",
                 "CONFIG_PROVE_LOCKING=y", "CONFIG_DEBUG_ATOMIC_SLEEP=y")


# Where kunit.py writes the kernel's whole output in the build directory.
TEST_LOG = "test.log"

KCONFIG_LINE = re.compile(r"^(CONFIG_\w+=.*|# CONFIG_\w+ is not set)$")


def kconfig_options(path: str | Path) -> list[str]:
    """The options a kunitconfig sets, as kunit.py reads them: CONFIG_X=v
    and "# CONFIG_X is not set" lines; other comments and blanks left out."""
    return [ln.strip() for ln in Path(path).read_text().splitlines()
            if KCONFIG_LINE.match(ln.strip())]


def default_configs() -> list[Path]:
    """net.kunitconfig, and series.kunitconfig when it sets an option: a
    file with none would add nothing to the run."""
    return [NET_CONFIG] + ([SERIES_CONFIG] if kconfig_options(SERIES_CONFIG) else [])


@dataclass
class KunitResult:
    cases: list[tuple[str, str, str]] = field(default_factory=list)  # (suite, case, status)
    exit_code: int | None = 0
    log_path: str = ""
    required: tuple[str, ...] = ()  # suites that must have run
    splats: list[str] = field(default_factory=list)  # kernel reports in the log (KASAN, lockdep)
    kernel_log: str = ""  # the kernel's whole log (test.log), "" if there was none
    # every named group with a case beneath it: a suite of parameterized
    # cases only (net_core) has its cases under their own groups
    suites: tuple[str, ...] = ()
    # every named group's case statuses, however deep beneath it
    beneath: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for c in self.cases if c[2] == status)

    def missing(self) -> list[str]:
        """Required suites without a single case in the results."""
        ran = {c[0] for c in self.cases} | set(self.suites)
        return [s for s in self.required if s not in ran]

    def unproven(self) -> list[str]:
        """Required suites that ran with no passing case or a skipped one: a
        suite whose cases all skip proves nothing."""
        out = []
        for s in self.required:
            got = self.beneath.get(s) or tuple(c[2] for c in self.cases if c[0] == s)
            if got and ("PASS" not in got or "SKIP" in got):
                out.append(f"{s} ({got.count('PASS')} passed, {got.count('SKIP')} skipped)")
        return out

    @property
    def ok(self) -> bool:
        return (self.exit_code == 0 and self.count("PASS") > 0 and not self.missing()
                and not self.unproven()
                and bool(self.kernel_log) and not self.splats
                and not self.count("FAIL") and not self.count("ERROR"))

    def summary(self) -> str:
        missing = self.missing()
        return (f"{self.count('PASS')} passed, {self.count('FAIL') + self.count('ERROR')} "
                f"failed, {self.count('SKIP')} skipped"
                + ("; no case passed" if not self.count("PASS") else "")
                + (f"; suite(s) not run: {', '.join(missing)}" if missing else "")
                + (f"; required suite(s) without a pass or with a skip: "
                   f"{', '.join(self.unproven())}" if self.unproven() else "")
                + ("" if self.kernel_log or not self.cases else
                   "; no kernel log (test.log) to check for kernel reports")
                + (f"; {len(self.splats)} kernel report line(s): {self.splats[0]}"
                   if self.splats else ""))


def default_required(configs: Sequence[str | Path], filter_glob: str = "") -> tuple[str, ...]:
    """The suites a run of configs must have run: those the project's
    kunitconfigs among them enable, as far as filter_glob selects them."""
    paths = [Path(c) for c in configs]
    suites = ((NET_SUITES if NET_CONFIG in paths else ())
              + (SERIES_SUITES if SERIES_CONFIG in paths else ()))
    glob = filter_glob.split(".", 1)[0]
    return tuple(s for s in suites if not glob or fnmatch.fnmatchcase(s, glob))


def suites_with_cases(group: dict[str, Any]) -> set[str]:
    """The names of the groups of kunit.py's JSON with at least one case
    beneath them, however deep."""
    names: set[str] = set()
    for sub in group.get("sub_groups", []):
        below = suites_with_cases(sub)
        if below or sub.get("test_cases"):
            names |= below | {sub.get("name", "")}
    return names - {""}


def statuses_beneath(group: dict[str, Any],
                     out: dict[str, tuple[str, ...]] | None = None) -> dict[str, tuple[str, ...]]:
    """{name: statuses of every case beneath it, however deep} of every named
    group of kunit.py's JSON."""
    out = {} if out is None else out
    own = tuple(c["status"] for c in group.get("test_cases", []))
    for sub in group.get("sub_groups", []):
        statuses_beneath(sub, out)
        own += out.get(sub.get("name", ""), ()) if sub.get("name") else ()
    if group.get("name"):
        out[group["name"]] = out.get(group["name"], ()) + own
    return out


def kunit_cases(group: dict[str, Any], suite: str | None = None,
                out: list[tuple[str, str, str]] | None = None) -> list[tuple[str, str, str]]:
    """(suite, case, status) of every case in kunit.py's JSON, the groups
    nested in it included, each case under its innermost named group."""
    out = [] if out is None else out
    name = group.get("name", "")
    for case in group.get("test_cases", []):
        out.append((name or suite or "", case["name"], case["status"]))
    for sub in group.get("sub_groups", []):
        kunit_cases(sub, name, out)
    return out


def run(tree: str | Path, build_dir: str | Path, configs: Sequence[str | Path] | None = None,
        log_path: str | Path | None = None, json_path: str | Path | None = None,
        timeout: int = 600, echo: Callable[[str], object] | None = None,
        required: Sequence[str] | None = None, kconfig_add: Sequence[str] = (),
        filter_glob: str = "") -> KunitResult:
    """required: suites that must run; by default NET_SUITES when the
    configs (the default ones if none) have net.kunitconfig, SERIES_SUITES
    when they have series.kunitconfig, those filter_glob selects. kconfig_add: options on top of the
    configs (kunit.py --kconfig_add), e.g. DEBUG_KCONFIG. filter_glob: the
    suites to run (kunit.py's filter, all by default). A kernel report in
    the kernel's whole log (test.log; common/splats.py: KASAN,
    lockdep, WARNING, BUG, UBSAN) fails the run whatever the cases say."""
    configs = configs or default_configs()
    if required is None:
        required = default_required(configs, filter_glob)
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    json_path = Path(json_path or build_dir / "kunit.json")
    json_path.unlink(missing_ok=True)
    # kunit.py rewrites test.log when it runs the kernel: an old one must not
    # stand in for a run that never got there.
    (build_dir / TEST_LOG).unlink(missing_ok=True)
    cmd = [sys.executable, "tools/testing/kunit/kunit.py", "run", f"--build_dir={build_dir}",
           f"--jobs={(os.cpu_count() or 1) + 1}", f"--timeout={timeout}", f"--json={json_path}",
           "--make_options=CC=ccache gcc"]
    cmd += [f"--kunitconfig={c}" for c in configs]
    cmd += [f"--kconfig_add={o}" for o in kconfig_add]
    if SERIES_CONFIG in [Path(c) for c in configs]:
        cmd += [f"--kernel_args={a}" for a in SERIES_KERNEL_ARGS]
    if filter_glob:
        cmd.append(filter_glob)
    env = dict(os.environ)
    env.setdefault("CCACHE_DIR", str(cache_dir() / "ccache"))
    done = run_tee(cmd, cwd=tree, env=env, log_path=log_path, echo=echo)
    return result(done.lines, done.code, json_path, build_dir / TEST_LOG, log_path, required)


def negative_control(tree: str | Path, build_dir: str | Path, log_path: str | Path | None = None,
                     echo: Callable[[str], object] | None = None) -> tuple[bool, str]:
    """The series' suite on the tree with NEGATIVE_CONTROL's bug applied
    (built incrementally in build_dir, reverted after), run up to
    NEGATIVE_ATTEMPTS times: (True, what it showed) when the named case
    failed (FAIL: an ERROR, a crash or timeout, is not caught), (False, why
    not) when it never did."""
    patch, suite, case = NEGATIVE_CONTROL
    tree = Path(tree)
    applied = git_run(tree, "apply", str(patch), capture="apart")
    if applied.returncode:
        return False, f"{patch.name} does not apply: {applied.stderr.strip()}"
    statuses = []
    try:
        for _ in range(NEGATIVE_ATTEMPTS):
            res = run(tree, build_dir, log_path=log_path, echo=echo,
                      json_path=Path(build_dir) / "kunit-negative.json", filter_glob=f"{suite}*")
            status = {(s, c): st for s, c, st in res.cases}.get((suite, case), "not run")
            statuses.append(status)
            if status == "FAIL":
                return True, (f"{suite}.{case} failed on {patch.name}, as it must "
                              f"(run {len(statuses)} of up to {NEGATIVE_ATTEMPTS})")
            # ERROR: a crash or timeout, no proof that the case sees the bug.
            if status in ("not run", "ERROR"):
                break
    finally:
        git(tree, "apply", "-R", str(patch))
    return False, (f"{suite}.{case} {', '.join(statuses)} in {len(statuses)} run(s) on "
                   f"{patch.name}: the suite misses the bug ({res.summary()})")


def result(lines: list[str], exit_code: int | None, json_path: str | Path,
           test_log: str | Path, log_path: str | Path | None = "",
           required: Sequence[str] = ()) -> KunitResult:
    """The KunitResult of a kunit.py run: its output lines and exit code,
    its JSON and the kernel's whole log (test.log; missing: none)."""
    test_log = Path(test_log)
    kernel_log = test_log.read_text(errors="replace") if test_log.is_file() else ""
    # The whole kernel log, and kunit.py's output for what it adds (a crash).
    splats = list(dict.fromkeys(find_splats(kernel_log) + find_splats("\n".join(lines))))
    res = KunitResult(exit_code=exit_code, log_path=str(log_path or ""), required=tuple(required),
                      splats=splats, kernel_log=str(test_log) if kernel_log else "")
    if Path(json_path).is_file():
        data = json.loads(Path(json_path).read_text())
        res.cases, res.suites = kunit_cases(data), tuple(sorted(suites_with_cases(data)))
        res.beneath = statuses_beneath(data)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("build_dir")
    ap.add_argument("--kunitconfig", action="append")
    ap.add_argument("--debug", action="store_true", help="add DEBUG_KCONFIG (KASAN, lockdep)")
    args = ap.parse_args(argv)
    res = run(args.tree, args.build_dir, args.kunitconfig, echo=print,
              kconfig_add=DEBUG_KCONFIG if args.debug else ())
    print(f"kunit: {res.summary()}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
