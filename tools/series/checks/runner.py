"""The per-patch checks in one registry, and the runner every caller uses
(the checks stage, the list bot, `python3 -m tools.series.check`).

Each check is called as fn(tree, commit, ctx) and returns a Result. The
registry's order is patchwork's (NIPA's checks, then the project's own);
`after` names the checks whose work a check reads, and the runner runs
them first. A check skips, with the reason as its message, when the run
names it in ctx.unavailable or when it needs a build the run has none of."""

import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tools.series.checks import kbuild, linters, per_series, selftest, source
from tools.series.checks.findings import Tree
from tools.series.checks.patchwork import PatchReport, Result

MODES = ("main", "test", "local")  # the pipeline's two modes, the local command
BOT = "bot"  # the list bot's subset: the checks that read the commit alone


@dataclass
class Context:
    """What the checks of one run share; `report` is the patch being checked."""
    tree_name: str = "net-next"  # net or net-next: verify_fixes
    known: dict[str, str] = field(default_factory=dict)  # known-commits.txt
    committer_signs: bool = True  # False for commits applied from a mail
    # commit -> recipients' addresses; absent: as b4 prep --auto-to-cc sends
    recipients: dict[str, Collection[str] | None] = field(default_factory=dict)
    # The run's builds, by the check they serve: commit -> Result ("build":
    # (build, sparse)). A check needing a build the run lacks skips.
    builds: dict[str, Callable[[str], Any]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # check -> why it skips
    seconds: dict[str, float] = field(default_factory=dict)  # check -> seconds, all patches
    crash_fails: bool = False  # an exception in a check fails it instead of the run
    report: PatchReport | None = None
    sparse: Result | None = None  # left by "build" for "sparse"


Fn = Callable[[Tree, str, Context], Result]


@dataclass(frozen=True)
class Check:
    name: str
    run: Fn
    modes: tuple[str, ...] = MODES
    needs_build: bool = False
    after: tuple[str, ...] = ()
    broken_skip: str = ""  # skip message when the "build" check found no objects
    moves_head: bool = False  # checks out other commits in the tree (not run in parallel)
    prepare: Callable[[Tree, Sequence[str]], None] | None = None  # once, all commits


def plain(fn_name: str, module: Any = source) -> Fn:
    """fn(tree, commit) of `module`, looked up at call time."""
    return lambda tree, commit, ctx: getattr(module, fn_name)(tree, commit)


def built(name: str) -> Fn:
    return lambda tree, commit, ctx: ctx.builds[name](commit)


def verify_signedoff(tree: Tree, commit: str, ctx: Context) -> Result:
    return source.verify_signedoff(tree, commit, committer=ctx.committer_signs)


def verify_fixes(tree: Tree, commit: str, ctx: Context) -> Result:
    return source.verify_fixes(tree, commit, ctx.tree_name, ctx.known)


def cc_maintainers(tree: Tree, commit: str, ctx: Context) -> Result:
    res, to, cc = source.cc_maintainers(tree, commit, ctx.recipients.get(commit))
    if ctx.report is not None:
        ctx.report.to, ctx.report.cc = to, cc
    return res


def build(tree: Tree, commit: str, ctx: Context) -> Result:
    res, ctx.sparse = ctx.builds["build"](commit)
    return res


def sparse(tree: Tree, commit: str, ctx: Context) -> Result:
    return ctx.sparse or Result("skip", "no build")


def ruff_prefetch(tree: Tree, commits: Sequence[str]) -> None:
    if linters.ruff.available():
        linters.ruff.prefetch(tree, commits)


MAIN = ("main",)
# cocci compiles at the parent in the build's directory: xmit_disasm reads
# the objects first.
REGISTRY = (
    # the bot's builds cost a configuration and a prepare of their own, the
    # selftests' build and cocci (about 90 s a file state, cached by blob)
    # many minutes: main mode only
    Check("build_32bit", built("build_32bit"), MAIN, needs_build=True),
    Check("build_allmodconfig_warn", built("build_allmodconfig_warn"), MAIN, needs_build=True),
    Check("build_clang", built("build_clang"), MAIN, needs_build=True),
    Check("build_tools", built("build_tools"), MAIN, needs_build=True),
    Check("checkpatch", plain("checkpatch"), MODES + (BOT,)),
    Check("kdoc", plain("kdoc"), MODES + (BOT,)),
    Check("header_inline", plain("header_inline")),
    Check("source_inline", plain("source_inline")),
    Check("deprecated_api", plain("deprecated_api")),
    Check("module_param", plain("module_param")),
    Check("verify_signedoff", verify_signedoff, MODES + (BOT,)),
    Check("verify_fixes", verify_fixes, MODES + (BOT,)),
    Check("cc_maintainers", cc_maintainers),
    Check("maintainers", plain("maintainers")),
    Check("check_selftest", plain("check_selftest", selftest)),
    Check("pylint", plain("pylint", linters), moves_head=True),
    Check("ruff", plain("ruff", linters), prepare=ruff_prefetch, moves_head=True),
    Check("shellcheck", plain("shellcheck", linters), moves_head=True),
    Check("yamllint", plain("yamllint", linters), moves_head=True),
    # the project's own: the test kernel's W=1 build with sparse, Coccinelle,
    # the transmit function's disassembly
    Check("build", build, needs_build=True),
    Check("sparse", sparse, needs_build=True, after=("build",)),
    Check("cocci", built("cocci"), MAIN, needs_build=True, after=("build", "xmit_disasm"),
          broken_skip="build failed"),
    Check("xmit_disasm", built("xmit_disasm"), needs_build=True, after=("build",),
          broken_skip="no build"),
)
BY_NAME = {c.name: c for c in REGISTRY}
CHECKS = tuple(BY_NAME)
SERIES_CHECKS = per_series.SERIES_CHECKS


def names(mode: str, build: bool = True) -> tuple[str, ...]:
    """The checks a run in `mode` reports (the bot: its subset; build=False:
    none that needs a build)."""
    return tuple(c.name for c in REGISTRY
                 if (mode != BOT or BOT in c.modes) and (build or not c.needs_build))


def mode_gates(mode: str) -> dict[str, str]:
    """check -> why it skips in `mode` (it runs in other modes only)."""
    return {c.name: f"{c.name}: {' and '.join(c.modes)} mode only"
            for c in REGISTRY if mode not in c.modes}


def run_order(wanted: Iterable[str]) -> list[Check]:
    """The checks in registry order, each after those it names in `after`."""
    todo = [BY_NAME[n] for n in CHECKS if n in set(wanted)]
    done: list[Check] = []
    while todo:
        ready = next(c for c in todo
                     if all(a not in {t.name for t in todo} or a == c.name for a in c.after))
        todo.remove(ready)
        done.append(ready)
    return done


def prepare(tree: Tree, commits: Sequence[str], ctx: Context,
            wanted: Iterable[str] = CHECKS) -> None:
    """Each check's work shared by all commits, timed under its name."""
    for check in run_order(wanted):
        if check.prepare and check.name not in ctx.unavailable:
            t0 = time.monotonic()
            check.prepare(tree, commits)
            ctx.seconds[check.name] = ctx.seconds.get(check.name, 0.0) + time.monotonic() - t0


def skip_reason(check: Check, ctx: Context, results: dict[str, Result]) -> str | None:
    if check.broken_skip and "build" in results and kbuild.build_broken(results["build"]):
        return check.broken_skip
    if check.name in ctx.unavailable:
        return ctx.unavailable[check.name]
    if check.needs_build and check.run is not sparse and check.name not in ctx.builds:
        return "no build"
    return None


def check_patches(tree: Tree, reports: Sequence[PatchReport], ctx: Context,
                  wanted: Sequence[str] = CHECKS, jobs: int = 1,
                  tree_names: Sequence[str] | None = None) -> list[PatchReport]:
    """check_patch on each report; the checks that leave the tree's HEAD
    alone on `jobs` patches at once, then the others patch by patch."""
    still = [n for n in wanted if not BY_NAME[n].moves_head and not BY_NAME[n].needs_build]
    moving = [n for n in wanted if n not in still]
    names_of = list(tree_names or [ctx.tree_name] * len(reports))

    def one(i: int) -> tuple[dict[str, Result], Context]:
        own = replace(ctx, tree_name=names_of[i], seconds={})
        return dict(check_patch(tree, replace(reports[i]), own, still).results), own

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        done = list(pool.map(one, range(len(reports))))
    for i, (results, own) in enumerate(done):
        for name, secs in own.seconds.items():
            ctx.seconds[name] = ctx.seconds.get(name, 0.0) + secs
        ctx.tree_name = names_of[i]
        check_patch(tree, reports[i], ctx, moving)
        reports[i].to, reports[i].cc = own.report.to, own.report.cc  # type: ignore[union-attr]
        reports[i].results = {n: {**results, **reports[i].results}[n] for n in wanted}
    return list(reports)


def check_patch(tree: Tree, report: PatchReport, ctx: Context,
                wanted: Sequence[str] = CHECKS) -> PatchReport:
    """Run the checks `wanted` on report.commit; report.results in `wanted`'s order."""
    ctx.report, ctx.sparse = report, None
    results: dict[str, Result] = {}
    for check in run_order(wanted):
        why = skip_reason(check, ctx, results)
        if why is not None:
            results[check.name] = Result("skip", why)
            continue
        t0 = time.monotonic()
        try:
            results[check.name] = check.run(tree, report.commit, ctx)
        except Exception as err:  # noqa: BLE001 - named, when the run says so
            if not ctx.crash_fails:
                raise
            results[check.name] = Result("fail", f"{check.name} crashed: {err}")
        ctx.seconds[check.name] = ctx.seconds.get(check.name, 0.0) + time.monotonic() - t0
    report.results = {n: results[n] for n in wanted}
    return report
