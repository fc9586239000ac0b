"""The build checks: the bot's kernel builds reduced to the objects a patch
touches (build_32bit, build_clang, build_allmodconfig_warn), the selftests'
build (build_tools), the project's own W=1 build with sparse (build,
sparse) and Coccinelle (cocci), each at the patch's parent and at the
patch, new warnings counted."""

import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from common.cache import cache_dir
from common.git import git, git_run
from tools.series.checks.findings import (SELFTESTS, Tree, counts_line, first_error,
                                          new_warnings, run, touched_files, warnings_of)
from tools.series.checks.patchwork import Result

# How a check builds: make with these arguments; its exit code (None: it
# was killed) and output.
Make = Callable[[list[str]], tuple[int | None, str]]

logger = logging.getLogger(__name__)

# libgcc's 64-bit division helpers: on a 32-bit kernel they do not exist, a
# u64 division must go through div_u64() and friends (linux/math64.h).
DIV64_HELPERS = ("__udivdi3", "__divdi3", "__umoddi3", "__moddi3", "__udivmoddi4",
                 "__divmoddi4", "__aeabi_uldivmod", "__aeabi_ldivmod")


def kernel_sources(tree: Tree, commit: str, suffix: str = ".c") -> list[str]:
    return [p for s, p in touched_files(tree, commit)
            if s != "D" and p.endswith(suffix)
            and not p.startswith(("tools/", "scripts/", "Documentation/", "samples/"))]


def included_sources(tree: Tree, commit: str, paths: Sequence[str]) -> set[str]:
    """The C files among paths that another C file #includes at commit (a
    KUnit test built into its driver): compiled only as part of that file,
    never as objects of their own."""
    out = set()
    for p in paths:
        pattern = f'^#include "([^"]*/)?{re.escape(Path(p).name)}"'
        res = git_run(tree, "grep", "-q", "-E", pattern, commit, "--", "*.c", capture="none")
        if res.returncode == 0:
            out.add(p)
    return out


def touched_objects(tree: Tree, commit: str, series_sources: Sequence[str] = ()) -> list[str]:
    """The objects a patch touches: its kernel C files but those another C
    file includes; a patch that changes a header compiles the series' C
    files too (the code that header serves here: those the tree has at
    commit, as another series may add one), as the bot's full build would."""
    sources = kernel_sources(tree, commit)
    if kernel_sources(tree, commit, ".h"):
        sources += [p for p in series_sources if p not in sources
                    and git_run(tree, "cat-file", "-e", f"{commit}:{p}").returncode == 0]
    included = included_sources(tree, commit, sources)
    return [p[:-2] + ".o" for p in sources if p not in included]


def undefined_symbols(obj: str | Path) -> set[str]:
    code, out = run(["nm", "-u", str(obj)], cwd=Path(obj).parent)
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()} if code == 0 else set()


class ObjectBuild:
    """One of the bot's kernel builds, reduced to the objects a patch
    touches: they are compiled in a prepared build directory (its own
    config) at the parent, sources made newer, and at the patch; warnings
    new at the patch, or a compile that breaks, fail. `make(args)` returns
    (code, output). With `div64`, objects that call a libgcc 64-bit division
    helper fail too: a 32-bit kernel does not link them (there is no link
    here, `nm -u` finds them)."""

    def __init__(self, name: str, tree: Tree, make: Make, build_dir: str | Path,
                 series_sources: Sequence[str] = (), div64: bool = False,
                 unavailable: str | None = None) -> None:
        self.name, self.tree, self.make, self.build_dir = name, tree, make, Path(build_dir)
        self.series_sources, self.div64, self.unavailable = series_sources, div64, unavailable
        self.seconds = 0.0

    def __call__(self, commit: str) -> Result:
        if self.unavailable:
            return Result("skip", self.unavailable)
        objs = touched_objects(self.tree, commit, self.series_sources)
        if not objs:
            return Result("pass", "No C files touched: " + counts_line(0, 0))
        parent = git(self.tree, "rev-parse", f"{commit}^")
        try:
            git(self.tree, "checkout", "-q", "--detach", parent)
            for obj in objs:
                src = Path(self.tree) / (obj[:-2] + ".c")
                if src.exists():
                    os.utime(src)
            present = [o for o in objs if (Path(self.tree) / (o[:-2] + ".c")).exists()]
            logger.info(f"    {self.name}: {' '.join(present) or '(new files only)'} (parent)")
            code, before = self.make(present) if present else (0, "")
            if code:
                return Result("fail", "parent does not build: " + first_error(before), before)
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        logger.info(f"    {self.name}: {' '.join(objs)} (patch)")
        code, after = self.make(objs)
        wb, wa = warnings_of(before), warnings_of(after)
        line = counts_line(sum(wb.values()), sum(wa.values()))
        if code:
            return Result("fail", f"{line}; build broken: {first_error(after)}", after)
        new = new_warnings(wb, wa)
        # A division the 32-bit link would refuse is named first, whatever
        # new warnings come with it.
        calls = sorted(f"{obj}: {sym}" for obj in objs
                       for sym in undefined_symbols(self.build_dir / obj)
                       if sym in DIV64_HELPERS) if self.div64 else []
        found = ([f"64-bit division without div_u64(): {calls[0]}"] if calls else []) + (
            [f"new: {new[0]}"] if new else [])
        if found:
            return Result("fail", f"{line}; " + "; ".join(found), "\n".join(calls + new))
        return Result("pass", line)


def selftest_targets(tree: Tree, commit: str) -> list[str]:
    """The selftests TARGETS the patch touches (longest listed prefix)."""
    shown = git_run(tree, "show", f"{commit}:{SELFTESTS}Makefile")
    listed = (set(re.findall(r"^TARGETS \+= (\S+)$", shown.stdout, re.M))
              if shown.returncode == 0 else set())
    found = []
    for _, path in touched_files(tree, commit):
        if not path.startswith(SELFTESTS):
            continue
        parts = path.removeprefix(SELFTESTS).split("/")[:-1]
        for n in range(len(parts), 0, -1):
            t = "/".join(parts[:n])
            if t in listed:
                if t not in found:
                    found.append(t)
                break
    return found


class SelftestsBuild:
    """build_tools, for the selftests the patch touches: their TARGETS built
    against the tree's headers at the parent and at the patch; new warnings
    or errors, a build that fails at the patch (whatever the parent did), or
    new untracked files left in the source tree, fail.
    `make(args)` runs make in the tree and returns (code, output)."""

    def __init__(self, tree: Tree, make: Make) -> None:
        self.tree, self.make = tree, make

    def untracked(self) -> set[str]:
        out = git(self.tree, "status", "--porcelain", "--untracked-files=all")
        return {ln[3:] for ln in out.splitlines() if ln.startswith("??")}

    def build(self, targets: list[str]) -> tuple[int | None, str]:
        code, out = self.make(["headers"])
        if code:
            return code, out
        code2, out2 = self.make(["-C", SELFTESTS, f"TARGETS={' '.join(targets)}"])
        return code2, out + out2

    def __call__(self, commit: str) -> Result:
        targets = selftest_targets(self.tree, commit)
        if not targets:
            return Result("pass", "No tools touched, skip")
        parent = git(self.tree, "rev-parse", f"{commit}^")
        try:
            git(self.tree, "checkout", "-q", "--detach", parent)
            logger.info(f"    build_tools: TARGETS={' '.join(targets)} (parent)")
            code_before, before = self.build(targets)
            dirt_before = self.untracked()
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        logger.info(f"    build_tools: TARGETS={' '.join(targets)} (patch)")
        code, after = self.build(targets)
        dirt = self.untracked() - dirt_before
        wb, wa = warnings_of(before), warnings_of(after)
        line = (f"Errors and warnings before: {sum(wb.values())} (+{len(dirt_before)}) "
                f"this patch: {sum(wa.values())} (+{len(dirt_before) + len(dirt)})")
        new = new_warnings(wb, wa)
        if new:
            return Result("fail", f"{line}; new: {new[0]}", "\n".join(new))
        # A build that fails at the patch fails, whether or not the parent's
        # did: both failing (a missing compiler, a broken tree) is no pass.
        if code:
            return Result("fail", f"{line}; build broken: {first_error(after)}"
                          + ("; the parent does not build either" if code_before else ""), after)
        if dirt:
            return Result("fail", f"{line}; new untracked files: {sorted(dirt)[0]}",
                          "\n".join(sorted(dirt)))
        return Result("pass", line)


class BuildChecker:
    """Incremental W=1 builds before and after each patch, and sparse on the
    objects the patch touches.

    Before a patch, its touched files are made newer and rebuilt at the
    parent, so the same objects are compiled on both sides; then sparse
    (C=2) checks the touched objects (touched_objects(): for a header, the
    series' C files) on each side. New warnings are the difference of the
    two multisets. sparse on every object a header rebuilds would cost
    minutes per patch; the objects the series changes are the ones it
    answers for, as the bot's builds reduced to touched objects do.
    """

    # The kernel build reads nothing under these: a patch touching only them
    # leaves the build's output as it was.
    OUTSIDE_BUILD = ("tools/testing/",)

    def __init__(self, tree: Tree, build: Make, series_sources: Sequence[str] = ()) -> None:
        self.tree, self.build = tree, build
        self.series_sources = series_sources
        self.built: str | None = None  # commit of the last make that succeeded
        self.refused = ""  # checker_refused() of that commit's sparse run

    def make(self, label: str) -> tuple[int | None, str]:
        logger.info(f"    make W=1 ({label})")
        return self.build(["W=1"])

    def sparse(self, label: str, objs: Sequence[str]) -> tuple[int | None, str]:
        """sparse (C=2: checks the objects whether or not they are rebuilt)."""
        if not objs:
            return 0, ""
        logger.info(f"    sparse {' '.join(objs)} ({label})")
        return self.build(["W=1", "C=2", f"CHECK={sparse_command()}", *objs])

    def unchanged_build(self, commit: str) -> str | None:
        """The commit the build in place stands for, when commit touches
        nothing the kernel build reads and differs from it only there."""
        if self.built is None:
            return None
        if not all(p.startswith(self.OUTSIDE_BUILD) for _, p in touched_files(self.tree, commit)):
            return None
        diff = git_run(self.tree, "diff", "--quiet", self.built, commit, "--", ".",
                       *(f":(exclude){d}" for d in self.OUTSIDE_BUILD), capture="none")
        return self.built if diff.returncode == 0 else None

    def side(self, label: str,
             objs: Sequence[str]) -> tuple[tuple[Result, Result] | None, str, str]:
        """Build and sparse-check one side: ((build, sparse) results when one
        of them could not run, make's output, sparse's output)."""
        code, made = self.make(label)
        if code:
            what = "parent does not build: " if label == "parent" else "build broken: "
            return (Result("fail", what + first_error(made), made),
                    Result("skip", "no build")), made, ""
        present = [o for o in objs if (Path(self.tree) / (o[:-2] + ".c")).exists()]
        code, checked = self.sparse(label, present)
        if code:
            return (Result("pass", "built"),
                    Result("fail", f"sparse could not check the {label}: "
                           + first_error(checked), checked)), made, checked
        return None, made, checked

    def __call__(self, commit: str) -> tuple[Result, ...]:
        same = self.unchanged_build(commit)
        if same:
            git(self.tree, "checkout", "-q", "--detach", commit)
            msg = (f"no file the kernel build reads: the objects and warnings of "
                   f"{same[:12]} stand")
            logger.info(f"    make skipped: {msg}")
            return (Result("pass", msg),
                    Result("fail", self.refused) if self.refused else Result("pass", msg))
        self.built = None
        objs = touched_objects(self.tree, commit, self.series_sources)
        parent = git(self.tree, "rev-parse", f"{commit}^")
        git(self.tree, "checkout", "-q", "--detach", parent)
        for status, path in touched_files(self.tree, commit):
            p = Path(self.tree) / path
            if status != "A" and p.exists():
                os.utime(p)
        bad, before, sparse_before = self.side("parent", objs)
        if bad:
            return bad
        git(self.tree, "checkout", "-q", "--detach", commit)
        bad, after, sparse_after = self.side("patch", objs)
        if bad:
            return bad
        self.built, self.refused = git(self.tree, "rev-parse", commit), checker_refused(
            sparse_after)
        results = []
        wb, wa = warnings_of(before), warnings_of(after)
        for name, (b, a) in (("build", (wb, wa)),
                             # sparse's own findings: what C=2 printed beyond the build's
                             ("sparse", (warnings_of(sparse_before) - wb,
                                         warnings_of(sparse_after) - wa))):
            new = new_warnings(b, a)
            if name == "sparse" and self.refused:
                results.append(Result("fail", self.refused))
            elif new:
                results.append(Result("fail", f"{len(new)} new warning(s): {new[0]}",
                                      "\n".join(new)))
            else:
                results.append(Result("pass", "no new warnings" + (
                    f" ({len(objs)} object(s) checked)" if name == "sparse" else "")))
        return tuple(results)


# The kernel tests its checker before it uses it (scripts/checker-valid.sh) and
# drops C=1/C=2 with this warning when the checker fails the test (Debian 12's
# sparse 0.6.4 has no __typeof_unqual__; a CHECK path relative to the source
# tree is not found from the build directory).
CHECKER_REFUSED = re.compile(r"C=\d specified, but (\S+) is not available or not up to date")


def sparse_command() -> str:
    """The sparse the checks run: the one ci/setup-host.sh builds into the cache
    (the kernel refuses Debian 12's), else whatever `sparse` is on PATH."""
    built = sorted((cache_dir() / "tools").glob("sparse-*/bin/sparse"))
    return str(built[-1]) if built else "sparse"


def checker_refused(make_output: str | None) -> str:
    """Why nothing was checked, when the kernel refused the checker; else ""."""
    m = CHECKER_REFUSED.search(make_output or "")
    return (f"not run: the kernel refused {m[1]} (scripts/checker-valid.sh), so it "
            "checked nothing (ci/setup-host.sh builds a sparse it accepts)") if m else ""


def build_broken(result: Result) -> bool:
    """Whether a "build" Result means no objects (the tree did not build), as
    opposed to new warnings."""
    return result.status == "fail" and result.message.startswith(
        ("build broken", "parent does not build"))


class CocciError(Exception):
    pass


class CocciRefused(Exception):
    """The kernel refused coccicheck as its checker: nothing was checked."""


# scripts/coccicheck run by hand on one file, as make C=2 runs it (in the tree).
COCCI_ONE_FILE = {"C": "2", "MODE": "report", "V": "0", "srctree": ".", "srcroot": ".",
                  "LINUXINCLUDE": "-I./arch/x86/include -I./include", "SPATCH": "spatch"}


class Cocci:
    """Coccinelle reports (make C=2 CHECK=scripts/coccicheck MODE=report).

    Reports are cached by blob id, persistently: a file state is checked
    once, so each patch costs one coccicheck run per touched C file.
    """

    def __init__(self, tree: Tree, build: Make, cache_file: str | Path | None = None) -> None:
        self.tree, self.build = tree, build
        self.cache_file = Path(cache_file) if cache_file else None
        self.cache: dict[str, list[str]] = {}
        if self.cache_file and self.cache_file.is_file():
            self.cache = json.loads(self.cache_file.read_text())

    def reports(self, rev: str, path: str) -> Counter[str]:
        parsed = git_run(self.tree, "rev-parse", f"{rev}:{path}")
        if parsed.returncode:
            return Counter()
        blob = parsed.stdout.strip()
        if blob not in self.cache:
            git(self.tree, "checkout", "-q", "--detach", rev)
            logger.info(f"    coccicheck {path} @ {rev}")
            # An absolute CHECK: make runs in the build directory (O=), where
            # a relative scripts/coccicheck fails checker-valid.sh.
            code: int | None
            if included_sources(self.tree, rev, [path]):
                # A C file another one #includes (a KUnit test built into its
                # driver) is no object: coccicheck on it as kbuild's CHECK
                # would run it, without a compile.
                code, out = run(["bash", "scripts/coccicheck", path], self.tree,
                                env={**os.environ, **COCCI_ONE_FILE})
            else:
                code, out = self.build(["C=2",
                                        f"CHECK={Path(self.tree).resolve()}/scripts/coccicheck",
                                        "MODE=report", path[:-2] + ".o"])
            if code:
                raise CocciError(f"coccicheck could not check {path}: {first_error(out)}")
            if refused := checker_refused(out):
                raise CocciRefused(refused)
            self.cache[blob] = [re.sub(r":\d+(:\d+)?", "", ln.strip())
                                for ln in out.splitlines()
                                if re.match(r"^\S+\.[ch]:\d+", ln.strip())]
            if self.cache_file:
                self.cache_file.write_text(json.dumps(self.cache))
        return Counter(self.cache[blob])

    def __call__(self, commit: str) -> Result:
        cfiles = [p for s, p in touched_files(self.tree, commit)
                  if s != "D" and p.endswith(".c") and not p.startswith(("tools/", "scripts/"))]
        if not cfiles:
            return Result("skip", "no C files touched")
        before: Counter[str] = Counter()
        after: Counter[str] = Counter()
        try:
            for p in cfiles:
                before += self.reports(f"{commit[:12]}^", p)
                after += self.reports(commit[:12], p)
        except CocciError as err:
            return Result("fail", str(err))
        except CocciRefused as err:
            return Result("fail", str(err))
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        new = sorted((after - before).elements())
        if new:
            return Result("fail", f"{len(new)} new report(s): {new[0]}", "\n".join(new))
        return Result("pass", f"{len(cfiles)} file(s), no new reports")
