"""The checks stage: every patch of the applied series checked the way netdev
CI (NIPA) does, under its check names (tools/series/checks/), the series
checks, and the negative controls (both modes): crafted patches under
ci/negative-controls/ that each named check must fail, for its own fault.
A patch whose content, checks and tools are those of a patch checked in a
stage that passed gets that patch's results (ci/check_memo.py)."""

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from common.git import git, git_run
from common.paths import ROOT
from ci.pipeline_common import CACHE, CONFIGS, Stage, StageFailed, log, sh
from ci.pipeline_tree import TreeStages
from tools.series.checks import kbuild, patchwork, per_series, runner, source, xmit
from ci import check_memo, kconfig_tree, report
from tools.series import series

CONTROLS = ROOT / "ci/negative-controls"
NO_WERROR = CONFIGS / "no-werror.config"
I386 = CONFIGS / "i386.config"
# Each negative control, and for each check that must fail it, a text its
# message or details must contain: the fault that check is there to see.
NEGATIVE_CONTROLS = {
    "checks-kernel.patch": {
        "checkpatch": "trailing whitespace",
        "kdoc": "Excess function parameter 'wrong'",
        "header_inline": "static int dummy_negative_header",
        "source_inline": "inline",
        "deprecated_api": "'module_param' was: 0 now: 1",
        "module_param": "Was 0 now: 1",
        "verify_signedoff": "author Signed-off-by missing",
        "verify_fixes": "Subject does not match target commit subject",
        "cc_maintainers": "maintainers not CCed",
        "maintainers": "no file matches F:",
        "build_32bit": "__udivdi3",
        "build_clang": "variable 'negative_count' set but not used",
        "build_allmodconfig_warn": "unused variable 'unused_variable'",
        "build": "unused variable 'unused_variable'",
        "sparse": "dummy_negative_counter' was not declared",
        "cocci": "NULL check before some freeing functions is not needed",
        "xmit_disasm": "dummy_xmit differs from the base",
    },
    "checks-selftests.patch": {
        "check_selftest": "negative_control.sh' should come after",
        "build_tools": "unused variable 'negative'",
        "pylint": "E0602",
        "ruff": "F821",
        "shellcheck": "Errors before: 0",
        "yamllint": "duplication of key",
    },
}
QUOTES = str.maketrans("\u2018\u2019", "''")
# The control's recipients: the list alone, not the maintainers.
CONTROL_RECIPIENTS = ("netdev@vger.kernel.org",)
# A series the series checks must fail, each check for its own fault.
BAD_SERIES = per_series.SeriesInfo(
    "net/negative-control", "net", [f"[PATCH {i}/16] net: thing {i}" for i in range(1, 16)]
    + ["[PATCH net-next 16/16] net: thing 16"], False,
    ["--- a/net/core/dev.c\n+++ b/net/core/dev.c\n"])
BAD_SERIES_FAILS = {"cover_letter": "warn", "fixes_present": "fail", "patch_count": "fail",
                    "subject_prefix": "fail", "tree_selection": "fail"}
CLANG_MIN = (17, 0, 1)


def find_clang() -> tuple[str | None, str]:
    """(LLVM make variable, version) of the newest clang >= CLANG_MIN, or
    (None, what was found)."""
    seen = []
    for name in ["clang-21", "clang-20", "clang-19", "clang-18", "clang-17", "clang"]:
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], text=True, capture_output=True).stdout
        m = re.search(r"clang version (\d+)\.(\d+)\.(\d+)", out)
        if not m:
            continue
        version = tuple(map(int, m.groups()))
        seen.append(f"{name} {'.'.join(map(str, version))}")
        if version >= CLANG_MIN and shutil.which(name.replace("clang", "ld.lld")):
            return ("1" if name == "clang" else name[len("clang"):]), seen[-1]
    return None, ", ".join(seen) or "no clang"


def build_row(patch: patchwork.PatchReport | None, args: Sequence[str]) -> str | None:
    """A checks build's row in the kernel builds table: the patch checked
    and, for a C=2 run (sparse, coccicheck), the checker."""
    if patch is None:
        return None
    checker = next((Path(a.split("=", 1)[1]).name for a in args if a.startswith("CHECK=")), "")
    return f"W=1 {patch.tree} patch {patch.index}" + (f" {checker}" if checker else "")


def no_base_yet(commit: str) -> patchwork.Result:
    """xmit_disasm before CheckStages.base_first() read the base's baselines."""
    raise RuntimeError(f"xmit_disasm of {commit[:12]} before the base was built")


class CheckStages(TreeStages):
    def stage_checks(self, stage: Stage) -> None:
        tree = self.state.series_tree
        out = self.series_build

        def make(args: list[str]) -> tuple[int | None, str]:
            return self.build(tree, out, "build-series", ["W=1", *args], check=False,
                              row=build_row(ctx.report, args))

        commits = [sha for _, _, sha in self.state.applied]
        sources = sorted({p for sha in commits for p in kbuild.kernel_sources(tree, sha)})
        builder = kbuild.BuildChecker(tree, make, sources)
        objects = self.object_builds(tree, sources)
        ctx = runner.Context(
            known=source.load_known_commits(ROOT / "kernel/known-commits.txt"),
            builds={"build": builder, **objects,
                    "build_tools": kbuild.SelftestsBuild(tree, self.tools_make(tree)),
                    "cocci": kbuild.Cocci(tree, make, CACHE / "cocci-cache-v2.json"),
                    # base_first() sets it before a patch is checked afresh.
                    "xmit_disasm": no_base_yet},
            unavailable={**runner.mode_gates(self.mode),
                         **{n: b.unavailable for n, b in objects.items() if b.unavailable}})
        memo = self.results_memo(sources)
        reports = self.state.patch_reports = self.check_commits(tree, self.state.applied, ctx,
                                                                memo)
        # Series-level checks.
        infos = [per_series.series_info(ser) for ser in series.load_series()]
        results = self.state.series_results = per_series.series_checks(infos)
        for name, res in results.items():
            stage.cases.append(report.Case("series", name, res.status, res.message))
        for r in reports:
            for c, res in r.results.items():
                stage.cases.append(report.Case(f"checks.{r.tree}", f"{r.index:02d} {c} {r.subject}",
                                               res.status, res.message, res.details))
        log(patchwork.table(reports))
        log("  time per check, all patches: " + (", ".join(
            f"{c} {s:.0f}s" for c, s in sorted(ctx.seconds.items(), key=lambda x: -x[1]))
            or "none checked"))
        bad = [r for r in reports if not r.ok]
        warned = [f"{r.index}:{c}" for r in reports for c in r.warnings]
        bad_series = [n for n, r in results.items() if r.status in ("fail", "warn")]
        # In both modes: the main mode's builds (build_32bit, ...) have controls too.
        self.negative_controls(stage, tree, ctx, memo)
        # Leave the tree and its build at the tip: that is the patched kernel.
        self.checkout(tree, self.state.tip)
        self.build(tree, out, "build-series", ["W=1"], row="patched")
        self.state.patched_kernel = out
        config_ok, config_msg = self.test_config(tree)
        stage.cases.append(report.Case("series", "test_config", "pass" if config_ok else "fail",
                                       config_msg))
        log(f"  test_config: {config_msg}")
        stage.summary = (f"{len(reports)} patches x {len(runner.CHECKS)} checks: "
                         f"{len(bad)} patch(es) failing; warnings (patch:check) "
                         f"{', '.join(warned) or 'none'}; series checks "
                         f"{'ok' if not bad_series else 'NOT GREEN: ' + ', '.join(bad_series)}")
        stage.summary += f"; {memo.summary()}"
        if not config_ok:
            stage.summary += f"; {config_msg}"
        if bad or bad_series or not config_ok:
            raise StageFailed(stage.summary)
        # Only a stage that passed as a whole keeps its results.
        memo.save()

    def results_memo(self, sources: Sequence[str]) -> check_memo.Memo:
        """The stage's memory of checked patches, its fingerprint taken now:
        the project's files, the fragments the builds use, the tools."""
        frags = {*self.test_fragments(), *self.test_fragments([NO_WERROR])}
        tools = check_memo.tool_versions(clang=find_clang()[1])
        fresh = os.environ.get(check_memo.FRESH) == "1"
        return check_memo.Memo(check_memo.Store(check_memo.STORE),
                               check_memo.fingerprint(tools, sorted(frags)), sources,
                               runner.CHECKS, fresh=fresh)

    def test_config(self, tree: Path) -> tuple[bool, str]:
        """The project's config fragments against the tree's x86_64 defconfig
        and the config of each selftest collection the VM runs, at the tip:
        no copy of a tree fragment's line, defconfig-net.config as defconfig
        (ci/kconfig_tree.py)."""
        out = self.state.ws / "series" / "defconfig"
        out.mkdir(parents=True, exist_ok=True)
        sh(["make", "-C", str(tree), f"O={out}", "ARCH=x86_64", "-s", "defconfig"],
           self.logfile("test_config"))
        colls = kconfig_tree.collections()
        frags = kconfig_tree.extract(tree, self.state.tip, self.state.ws, colls,
                                     error=StageFailed)
        problems = kconfig_tree.check(kconfig_tree.OWN.read_text(),
                                      kconfig_tree.FIRST[1].read_text(), frags,
                                      (out / ".config").read_text())
        return not problems, kconfig_tree.report(problems, colls)

    def mode_gate(self, name: str) -> str | None:
        """Why check `name` does not run in this mode (the registry's modes), or None."""
        return runner.mode_gates(self.mode).get(name)

    # -- the bot's builds -------------------------------------------------
    def object_builds(self, tree: Path, sources: Sequence[str]) -> dict[str, kbuild.ObjectBuild]:
        """build_32bit, build_clang, build_allmodconfig_warn: each its own
        build directory and config, only the touched objects compiled."""
        builds: dict[str, kbuild.ObjectBuild] = {}
        base = self.state.ws / "series"

        def maker(name: str, out: Path, arch: str, frags: Sequence[str | Path],
                  env: dict[str, str], extra: Sequence[str] = ()) -> kbuild.Make:
            def make(objs: list[str]) -> tuple[int | None, str]:
                return self.build(tree, out, name, [*extra, *objs], check=False,
                                  fragments=frags, arch=arch, env=env)
            return make

        def gated(name: str, why: str | None = None) -> str | None:
            return why or self.mode_gate(name)

        frags = self.test_fragments([NO_WERROR])
        out = base / "build-i386"
        builds["build_32bit"] = kbuild.ObjectBuild(
            "build_32bit", tree, maker("build_32bit", out, "i386", [*frags, I386], {}, ["W=1"]),
            out, sources, div64=True, unavailable=gated("build_32bit"))
        llvm, found = find_clang()
        out = base / "build-clang"
        builds["build_clang"] = kbuild.ObjectBuild(
            "build_clang", tree, maker("build_clang", out, "x86_64", frags, {"LLVM": llvm or ""},
                                       ["W=1"]), out, sources,
            unavailable=gated("build_clang",
                              None if llvm else f"no clang >= 17.0.1 (found: {found})"))
        out = base / "build-allmodconfig"
        builds["build_allmodconfig_warn"] = kbuild.ObjectBuild(
            "build_allmodconfig_warn", tree,
            maker("build_allmodconfig_warn", out, "x86_64", [NO_WERROR],
                  {"KCONFIG_BASE": "allmodconfig"},
                  ["W=1", "C=1", f"CHECK={kbuild.sparse_command()}"]), out, sources,
            unavailable=gated("build_allmodconfig_warn"))
        return builds

    def tools_make(self, tree: Path) -> kbuild.Make:
        out = self.state.ws / "series" / "build-tools"
        out.mkdir(parents=True, exist_ok=True)

        def make(args: list[str]) -> tuple[int | None, str]:
            return sh(["make", "-C", str(tree), f"O={out}", "-j3", "CC=ccache gcc", *args],
                      self.logfile("build_tools"), check=False)
        return make

    # -- per patch --------------------------------------------------------
    def check_commits(self, tree: Path, commits: Sequence[tuple[series.Series, Path, str]],
                      ctx: runner.Context,
                      memo: check_memo.Memo | None = None) -> list[patchwork.PatchReport]:
        """Each commit's report: the stored one when memo holds its key, else
        checked (runner.prepare's work for those only)."""
        looked = [memo.look(tree, sha, ser.tree, ctx.recipients.get(sha), ctx.committer_signs,
                            ctx.unavailable) if memo else None for ser, _, sha in commits]
        todo = [sha for (_, _, sha), m in zip(commits, looked) if m is None or m.stored is None]
        if todo:
            self.base_first(tree, ctx)
            runner.prepare(tree, todo, ctx)
        reports = []
        for i, ((ser, patch, sha), m) in enumerate(zip(commits, looked), 1):
            subject = git(tree, "log", "-1", "--format=%s", sha)
            if m is not None and m.stored is not None:
                log(f"  [{i}/{len(commits)}] {ser.name}: {subject}: results reused "
                    f"(key {m.key[:12]})")
                r = patchwork.PatchReport(i, ser.name, sha, subject, m.stored["results"],
                                          m.stored["to"], m.stored["cc"])
            else:
                log(f"  [{i}/{len(commits)}] {ser.name}: {subject}")
                ctx.tree_name = ser.tree
                r = runner.check_patch(tree, patchwork.PatchReport(i, ser.name, sha, subject),
                                       ctx)
                if memo is not None and m is not None:
                    memo.remember(m, r)
            for c, one in r.results.items():
                if one.status in ("fail", "warn"):
                    log(f"      {c}: {one.status.upper()} {one.message}")
            reports.append(r)
        return reports

    def base_first(self, tree: Path, ctx: runner.Context) -> None:
        """Before the stage's first check of a patch (not reused): the base
        built in the series' build directory (build_base's build: nothing
        to compile, unless build_base booted an earlier copy), where the
        walk starts, and xmit_disasm's baselines read from it. A stage
        that checks no patch leaves the tree at the tip and builds nothing
        but the patched kernel."""
        if isinstance(ctx.builds.get("xmit_disasm"), xmit.TransmitPath):
            return
        # The checks check out each commit they build: HEAD may stay at the base.
        self.checkout(tree, self.state.base["BASE_TAG"])
        self.build(tree, self.series_build, "build-series", ["W=1"], row="base")
        ctx.builds["xmit_disasm"] = xmit.TransmitPath(self.series_build)

    # -- negative controls ---------------------------------------------------
    def negative_controls(self, stage: Stage, tree: Path, ctx: runner.Context,
                          memo: check_memo.Memo | None = None) -> None:
        """Each crafted patch applied on the tip; every check named for it
        must fail it, naming its fault; a series made to break the series
        rules must fail each of them."""
        env = series.role_env(series.load_conf())
        problems = []
        for name, want in NEGATIVE_CONTROLS.items():
            self.checkout(tree, self.state.tip)
            am = git_run(tree, "am", "-q", "--whitespace=nowarn", str(CONTROLS / name), env=env,
                         capture="apart")
            if am.returncode:
                git(tree, "am", "--abort", check=False)
                raise StageFailed(f"negative control {name} does not apply: {am.stderr[:500]}")
            sha = git(tree, "rev-parse", "HEAD")
            log(f"  negative control {name}")
            ctx.recipients[sha] = CONTROL_RECIPIENTS
            ser = series.Series("net-next", f"negative-control/{name}", Path("."), 1)
            r = self.check_commits(tree, [(ser, Path(name), sha)], ctx, memo)[0]
            log(patchwork.table([r]))
            for check, text in want.items():
                res = r.results[check]
                gate = ctx.unavailable.get(check)
                if res.status == "skip" and gate and res.message == gate:
                    verdict, msg = "skip", res.message
                elif res.status != "fail":
                    verdict, msg = "fail", f"{check} gave {res.status}: {res.message}"
                # gcc quotes with ‘’ under a UTF-8 locale, with '' under C.
                elif text not in (res.message + "\n" + res.details).translate(QUOTES):
                    verdict, msg = "fail", f"{check} failed, but not for '{text}': {res.message}"
                else:
                    verdict, msg = "pass", f"fails: {res.message}"
                stage.cases.append(report.Case("checks.self-test", f"{name} {check}", verdict,
                                               msg[:500]))
                if verdict == "fail":
                    problems.append(f"{name}: {msg[:200]}")
        for check, status in BAD_SERIES_FAILS.items():
            res = per_series.SERIES_FUNCS[check](BAD_SERIES)
            ok = res.status == status
            stage.cases.append(report.Case("checks.self-test", f"bad series {check}",
                                           "pass" if ok else "fail",
                                           f"{res.status}: {res.message}"))
            if not ok:
                problems.append(f"bad series: {check} gave {res.status}, want {status}")
        self.checkout(tree, self.state.tip)
        if problems:
            raise StageFailed("negative controls not caught:\n" + "\n".join(problems))
