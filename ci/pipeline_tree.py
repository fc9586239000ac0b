"""The kernel trees: the base (fetched or the user's), the series applied on
it, the base kernel built; and the worktree and build helpers the later
stages use."""

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from common.git import git, git_run
from common.paths import ROOT
from common.stamp import build_source
from ci.pipeline_common import (BRANCH_PREFIX, CACHE, EXTRA_FRAGMENTS, X86_BUILD, BuildProgress,
                                Stage, StageFailed, log, sh)
from ci.check_memo import tool_output
from ci.pipeline_state import StageSet
from ci import kconfig_tree, report
from tools.series import series

# In the base kernel's build directory: the key (base_build_key()) it was built with.
BASE_BUILD_KEY = "pipeline-build-key"
# What kernel/build.sh and kbuild read from the environment.
BUILD_ENV = ("KCONFIG_BASE", "LLVM", "KCFLAGS", "KCPPFLAGS", "KAFLAGS", "KBUILD_BUILD_USER",
             "KBUILD_BUILD_HOST")


def uncommitted(src: str | Path) -> list[str]:
    """The files of a work tree with changes not committed (staged,
    unstaged or untracked and not ignored), as `git status` names them."""
    res = git_run(src, "status", "--porcelain", capture="apart")
    if res.returncode:
        raise StageFailed(f"git status failed in {src}: {res.stderr.strip()}")
    return [line[3:] for line in res.stdout.splitlines()]


def user_tree(path: str | Path) -> Path:
    """KERNEL_SRC at its top level: a subdirectory names the same repository
    (and the same worktrees, ws-<digest>)."""
    return Path(git(Path(path).resolve(), "rev-parse", "--show-toplevel",
                    error=StageFailed)).resolve()


def apply_summary(patches: int, names: Sequence[str], round_trip: bool) -> str:
    """The apply stage's line: the export round trip named only when it ran
    (on the pinned base: patches/ are exported against it)."""
    return (f"{patches} patches of {len(names)} series ({', '.join(names)}) applied as "
            "git am --3way would, "
            + ("export round trip exact" if round_trip
               else "export round trip not run (not the pinned base)"))


def control_patches() -> list[Path]:
    """The patches every negative control and design variant applies to the
    series' tip (ci/negative-controls/, tools/bench/variants/)."""
    return sorted([*(ROOT / "ci/negative-controls").glob("*.patch"),
                   *(ROOT / "tools/bench/variants").glob("*.patch")])


def not_applying(tree: str | Path, patches: Sequence[Path]) -> list[Path]:
    """The patches that do not apply to tree's checkout (git apply --check)."""
    return [p for p in patches if git_run(tree, "apply", "--check", str(p)).returncode]


class TreeStages(StageSet):
    # -- helpers --------------------------------------------------------
    @property
    def series_build(self) -> Path:
        """The series' x86 build directory: build-base builds the base in
        it, checks walks the series there and leaves the patched kernel
        (RunState.patched_kernel)."""
        return self.state.ws / "series" / X86_BUILD

    @property
    def base_build(self) -> Path:
        """Where build-base copies the base kernel (RunState.base_kernel)."""
        return self.state.ws / "base" / X86_BUILD

    def build(self, src: str | Path, out: str | Path, label: str, args: Sequence[str] = (),
              check: bool = True, fragments: Sequence[str | Path] | None = None,
              arch: str = "x86_64", env: dict[str, str] | None = None,
              row: str | None = None) -> tuple[int | None, str]:
        """kernel/build.sh: by default the test kernel (self.test_fragments()).
        row: the build's name in the report's kernel builds (default label)."""
        frags = fragments if fragments is not None else self.test_fragments()
        cmd = ["bash", str(ROOT / "kernel/build.sh"), str(src), str(out), arch,
               *map(str, frags), "--", *args]
        env = {"KCONFIG_UNMET": str(kconfig_tree.UNMET), **(env or {})}
        return sh(cmd, self.logfile(label), check=check, progress=BuildProgress(row or label),
                  env=env)

    def test_fragments(self, extra: Sequence[Path] = tuple(EXTRA_FRAGMENTS)) -> list[Path]:
        """The test kernel's fragments (kconfig_tree), the tree's as the apply
        stage extracted them from the series' tip, then extra."""
        try:
            return kconfig_tree.test_fragments(self.state.ws, extra)
        except kconfig_tree.MissingFragments as e:
            raise StageFailed(str(e)) from e

    def worktree(self, name: str, rev: str) -> Path:
        """A worktree of the base repository at WS/name/src, recovered and reset."""
        path = self.state.ws / name / "src"
        repo = self.state.base["BASE_REPO"]
        git_run(repo, "worktree", "prune", capture="none")
        if not (path / ".git").exists():
            if path.exists():
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            git(repo, "worktree", "add", "-q", "--detach", str(path), rev, error=StageFailed)
        series.recover(path)
        git(path, "checkout", "-q", "-f", "--detach", rev, error=StageFailed)
        git(path, "clean", "-qfdx", error=StageFailed)
        return path

    @staticmethod
    def checkout(tree: str | Path, rev: str) -> None:
        git(tree, "checkout", "-q", "--detach", rev, error=StageFailed)

    def apply_to_tip(self, patch: Path) -> Path:
        """The series tree at the tip with patch applied, not committed
        (`git checkout -- .` takes it off): a negative control's kernel."""
        tree = self.state.series_tree
        self.checkout(tree, self.state.tip)
        applied = git_run(tree, "apply", str(patch))
        if applied.returncode:
            raise StageFailed(f"{patch.name} does not apply to the series: {applied.stdout}")
        return tree

    # -- stages ---------------------------------------------------------
    def stage_base(self, stage: Stage) -> None:
        """The base: the pinned one, or with KERNEL_SRC the user's commit
        KERNEL_BASE (default HEAD).

        Uncommitted changes in KERNEL_SRC are not tested, and the run says
        so (log and stage summary) rather than refusing: the pipeline tests
        a commit, in a worktree of its own, and never touches the user's
        checkout, so nothing is lost; a developer keeps editing while a long
        run goes on, and the warning names the files no result covers."""
        if self.kernel_src:
            src = user_tree(self.kernel_src)
            rev = os.environ.get("KERNEL_BASE", "HEAD")
            sha = git(src, "rev-parse", f"{rev}^{{commit}}", error=StageFailed)
            self.state.base = {"BASE_PACKAGE": "git", "BASE_VERSION": sha, "BASE_PINNED": "no",
                               "BASE_REPO": str(src), "BASE_TAG": sha, "BASE_SOURCE": str(src)}
            # Worktrees of the user's repository live apart from the pinned base's.
            digest = hashlib.sha256(str(src).encode()).hexdigest()[:12]
            self.state.ws = CACHE / f"ws-{digest}"
            stage.summary = f"user tree {src} at {sha.strip()[:12]}"
            untested = uncommitted(src)
            if untested:
                warning = (f"uncommitted changes in {src} NOT tested ({len(untested)} files: "
                           f"{series.listed(untested, 5)}): the run tests commit "
                           f"{sha.strip()[:12]} ({rev})")
                log(f"  WARNING: {warning}")
                stage.summary += f"; WARNING: {warning}"
            return
        _, out = sh(["bash", str(ROOT / "kernel/fetch-base.sh")], self.logfile("base"))
        # Set before the import: a failed run still reports what was fetched.
        base = self.state.base = dict(re.findall(r"^(BASE_\w+)=(.*)$", out, re.M))
        if base.get("BASE_PINNED") != "yes":
            log(f"  WARNING: pinned base unavailable, using {base['BASE_PACKAGE']} "
                f"{base['BASE_VERSION']}")
        _, out = sh(["bash", str(ROOT / "kernel/import-base.sh"), base["BASE_PACKAGE"],
                     base["BASE_VERSION"], base["BASE_TARBALL"],
                     base["BASE_TARBALL_SHA256"]], self.logfile("base"))
        base.update(re.findall(r"^(BASE_\w+)=(.*)$", out, re.M))
        stage.summary = (f"{base['BASE_PACKAGE']} {base['BASE_VERSION']} "
                         f"({'pinned' if base['BASE_PINNED'] == 'yes' else 'FALLBACK'}), "
                         f"sha256 {base['BASE_TARBALL_SHA256'][:16]}")

    def stage_apply(self, stage: Stage) -> None:
        base = self.state.base
        # Applied in a worktree of its own: the series' tree, where every
        # kernel is built, then moves to the tip alone, and a file the
        # series touches keeps its time when the tip is what it held, so
        # its builds have nothing to compile again.
        tree = self.worktree("apply", base["BASE_TAG"])
        # The worktree is the pipeline's own (reset just above) and so are the
        # ci/* branches of the pinned base's repository: forcing is safe there.
        # With KERNEL_SRC the branches live in the user's repository: commits
        # added to them are refused, not dropped.
        try:
            applied = series.apply(tree, base["BASE_TAG"], prefix=BRANCH_PREFIX,
                                   force=not self.kernel_src)
        except series.SeriesError as err:
            hint = (f"\nthe {BRANCH_PREFIX}* branches are the pipeline's: once what they hold "
                    f"is kept elsewhere, delete them (git -C {base['BASE_REPO']} branch -D "
                    "...) and run again" if self.kernel_src else "")
            raise StageFailed(f"{err}{hint}") from None
        if not applied:
            raise StageFailed("the series is empty: nothing to check")
        self.state.applied = applied
        tip = self.state.tip = series.git(tree, "rev-parse", f"{BRANCH_PREFIX}all")
        # Off the branch apply left checked out: with KERNEL_SRC it stays free
        # to check out in the user's own worktree.
        git(tree, "checkout", "-q", "--detach", error=StageFailed)
        # Every test kernel (base too) is configured from the tip's selftest fragments.
        kconfig_tree.extract(tree, tip, self.state.ws, error=StageFailed)
        for ser, patch, _ in applied:
            stage.cases.append(report.Case("apply", f"{ser.name}/{patch.name}", "pass", "applied"))
        # The negative controls and design variants are patches to the tip
        # of the pinned base: one the series no longer takes fails here, by
        # name, not in the stage that needs it.
        controls = control_patches() if base.get("BASE_PINNED") == "yes" else []
        stale = not_applying(tree, controls)
        for p in controls:
            stage.cases.append(report.Case("apply", f"applies: {p.relative_to(ROOT)}",
                                           "fail" if p in stale else "pass", ""))
        if stale:
            raise StageFailed("does not apply to the series' tip (regenerate it from the tip): "
                              + ", ".join(str(p.relative_to(ROOT)) for p in stale))
        # Round trip: exporting what was applied reproduces patches/ exactly.
        out = self.results / "roundtrip"
        shutil.rmtree(out, ignore_errors=True)
        if base.get("BASE_PINNED") == "yes":
            series.export(tree, base["BASE_TAG"], out, prefix=BRANCH_PREFIX)
            code, diff = subprocess.getstatusoutput(
                " && ".join(f"diff -r {ROOT / 'patches' / t} {out / t}" for t in series.TREES))
            stage.cases.append(report.Case("apply", "export-roundtrip",
                                           "pass" if code == 0 else "fail", diff[:2000]))
            if code:
                raise StageFailed(f"apply-then-export differs from patches/:\n{diff[:1500]}")
        names = sorted({ser.name for ser, _, _ in applied})
        stage.summary = apply_summary(len(applied), names, base.get("BASE_PINNED") == "yes")
        self.state.series_tree = self.worktree("series", tip)

    def stage_build_base(self, stage: Stage) -> None:
        """The base kernel, built in the series' tree and build directory,
        where the checks stage walks the series from it (so it is compiled
        once), then copied to ws/base for the vm and icount stages to boot.
        A copy made from the same base commit, configuration, build script
        and compiler (base_build_key()) is booted as it is."""
        tree, key = self.state.series_tree, self.base_build_key()
        stamp = self.base_build / BASE_BUILD_KEY
        built = build_source(self.base_build)
        if (stamp.is_file() and stamp.read_text().strip() == key
                and built.get("commit") == self.base_commit() and not built.get("dirty")
                and (self.base_build / "arch/x86/boot/bzImage").is_file()):
            self.state.base_kernel = self.base_build
            stage.summary = (f"base kernel in {self.base_build} as built before: the same base "
                             f"commit, configuration, build script and compiler (key {key[:12]})")
            return
        self.checkout(tree, self.state.base["BASE_TAG"])
        self.build(tree, self.series_build, "build-base", ["W=1"], row="base")
        shutil.rmtree(self.base_build, ignore_errors=True)
        self.base_build.parent.mkdir(parents=True, exist_ok=True)
        sh(["cp", "-a", "--reflink=auto", str(self.series_build), str(self.base_build)],
           self.logfile("build-base"))
        stamp.write_text(key + "\n")
        self.state.base_kernel = self.base_build
        stage.summary = f"base kernel built in {self.series_build}, copied to {self.base_build}"

    def base_commit(self) -> str:
        return git(self.state.series_tree, "rev-parse",
                   f"{self.state.base['BASE_TAG']}^{{commit}}", error=StageFailed)

    def base_build_key(self) -> str:
        """A sha256 over what decides the base kernel: the base commit, the
        test fragments in merge order and the unmet list (their contents),
        kernel/build.sh, the make arguments, the toolchain's versions (gcc,
        ld, pahole) and the environment kernel/build.sh and kbuild read."""
        files = [*self.test_fragments(), kconfig_tree.UNMET, ROOT / "kernel/build.sh"]
        parts = {"commit": self.base_commit(), "args": ["W=1"],
                 "tools": [tool_output(["gcc", "--version"]), tool_output(["ld", "--version"]),
                           tool_output(["pahole", "--version"])],
                 "env": {v: os.environ.get(v) for v in BUILD_ENV},
                 "files": [(str(f), hashlib.sha256(f.read_bytes()).hexdigest()
                            if f.is_file() else None) for f in map(Path, files)]}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
