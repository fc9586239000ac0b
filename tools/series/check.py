"""Check a branch, or patch files, the way netdev CI will: the per-patch and
per-series checks (tools/series/checks/runner.py), without a build unless
asked, and the patchwork-style table.

    python3 -m tools.series.check TREE BASE..TIP...        # commits of a kernel tree
    python3 -m tools.series.check TREE --base REV PATCH... # files, a directory, an mbox

Each range (or the set of patches) is one series for the series checks; a
single revision is refused (it would take all its history: name BASE..TIP,
or REV^..REV for one commit). Its tree (net or net-next) comes from --tree,
else from a series/<tree>/... branch name or the subjects' [PATCH net ...]
prefix, else net-next. The checks run in a temporary worktree of TREE
(sparse: scripts/, LICENSES/, the top-level files and the directories the
patches touch), removed afterwards; TREE's checkout, branches and work are
not touched (patch files are applied there with `git am` on REV, on a
detached HEAD).

--build OUT adds the build checks the project runs in both modes (build,
sparse: W=1 before and after each patch; xmit_disasm against the range's
base) in a kept full worktree (cache/ws-check/, the cleanup command removes
it) and the build directory OUT: both incremental across runs. The bot's
other builds (build_32bit, ...) are left to the pipeline's main mode.

A check that cannot run in full (a linter not installed, no python3 that
runs scripts/spdxcheck.py for checkpatch's SPDX check) says why in the
table ("!" after its mark) and in the summary.

Exit status:
  0  every check passed (or skipped by design: no build, not this mode)
  1  warnings only: a check's warning (a checkpatch warning too), or a check
     that could not run in full
  2  a failure; under CI=true also a check that could not run in full
  3  a usage or setup error: nothing was checked
The pipeline's checks stage is stricter: a checkpatch warning fails it."""

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from common import logs
from common.cache import cache_dir
from common.git import GitError, git, git_ok, git_run
from common.paths import ROOT
from tools.series.checks import kbuild, patchwork, per_series, runner, source, xmit

KNOWN = ROOT / "kernel/known-commits.txt"
BRANCH_TREE_RE = re.compile(r"(?:^|/)series/(net|net-next)/")
# What checkpatch (spdxcheck.py reads LICENSES/), kernel-doc (a link into
# tools/docs) and get_maintainer.pl read besides the patch.
ALWAYS = ("LICENSES", "scripts", "tools/docs", "tools/lib/python")
# checkpatch.pl's test that it runs at the top of a tree wants these; a
# sparse checkout leaves them out (the top-level files it keeps).
TOP_DIRS = ("Documentation", "arch", "include", "drivers", "fs", "init", "ipc", "kernel",
            "lib")
# The tree's scripts a check runs: a tree without them is no kernel tree.
SCRIPTS = {"checkpatch": "scripts/checkpatch.pl", "kdoc": "scripts/kernel-doc",
           "cc_maintainers": "scripts/get_maintainer.pl"}
APPLIER = {"GIT_COMMITTER_NAME": "mqbypass check", "GIT_COMMITTER_EMAIL": "check@mqbypass.invalid"}
PASS, WARNINGS, FAILURE, USAGE = 0, 1, 2, 3  # the exit status


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse, a usage error exiting with USAGE (argparse's own is 2: a failure here)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


@dataclass
class Group:
    """One series: its commits (in the check worktree) and what the series
    checks read."""
    name: str
    tree: str
    commits: list[str]
    subjects: list[str] = field(default_factory=list)  # as mailed, cover first
    has_cover: bool = False
    texts: list[str] = field(default_factory=list)


def toplevel(path: str | Path) -> Path:
    res = git_run(path, "rev-parse", "--show-toplevel")
    if res.returncode:
        raise UsageError(f"{path}: not a git work tree")
    return Path(res.stdout.strip())


def guess_tree(spec: str, subjects: Sequence[str]) -> str:
    m = BRANCH_TREE_RE.search(spec.rpartition("..")[2])
    if m:
        return m[1]
    named = {t for t in map(per_series.subject_tree, subjects) if t is not None}
    return named.pop() if len(named) == 1 else "net-next"


def commit_of(src: Path, rev: str, what: str) -> str:
    res = git_run(src, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", capture="apart")
    if res.returncode:
        raise UsageError(f"{what}: no commit {rev} in {src}")
    return res.stdout.strip()


def range_group(src: Path, spec: str, tree: str | None) -> Group:
    if ".." not in spec:
        raise UsageError(f"{spec}: one revision, not a range (it would check all its "
                         f"history): name BASE..{spec}, or {spec}^..{spec} for its last "
                         "commit alone")
    for side in re.split(r"\.\.\.?", spec):
        if side:
            commit_of(src, side, spec)
    res = git_run(src, "rev-list", "--reverse", "--no-merges", spec)
    if res.returncode or not res.stdout.split():
        raise UsageError(f"{spec}: no commits in {src}")
    commits = res.stdout.split()
    name = tree or guess_tree(spec, [])
    total = len(commits)
    texts = [git(src, "format-patch", "-1", "--stdout", c) for c in commits]
    subjects = [f"[PATCH {name}{f' {k}/{total}' if total > 1 else ''}] "
                + git(src, "log", "-1", "--format=%s", c) for k, c in enumerate(commits, 1)]
    # A branch's description is its cover letter (series apply, b4 and
    # format-patch --cover-from-description keep it there).
    tip = spec.rpartition("..")[2]
    cover = git_run(src, "config", f"branch.{tip}.description").stdout.strip()
    if cover:
        subjects.insert(0, f"[PATCH {name} 0/{total}] {cover.splitlines()[0]}")
    return Group(spec, name, commits, subjects, bool(cover), texts)


def patch_files(paths: Sequence[str]) -> list[bytes]:
    """The mails of the files, directories (*.patch, *.eml sorted) and
    mboxes named, in order."""
    mails: list[bytes] = []
    for p in map(Path, paths):
        if not p.exists():
            raise UsageError(f"{p}: no such file or directory")
        files = sorted(q for q in p.iterdir() if q.suffix in (".patch", ".eml")) \
            if p.is_dir() else [p]
        if not files:
            raise UsageError(f"{p}: no *.patch or *.eml file in it")
        for f in files:
            data = f.read_bytes()
            parts = [data]
            if data.startswith(b"From ") and data.count(b"\nFrom ") > 0:
                parts = [m if m.endswith(b"\n") else m + b"\n"
                         for m in re.split(rb"\n(?=From \S+ )", data)]
            for m in parts:
                if not per_series.mail_subject(m.decode(errors="replace")):
                    raise UsageError(f"{f}: not a mail (no Subject: header): give patches "
                                     "as git format-patch writes them, or an mbox")
            mails += parts
    if not any(not is_cover(m.decode(errors="replace")) for m in mails):
        raise UsageError(f"no patch in {' '.join(paths)}: no mail carries a diff")
    return mails


def is_cover(text: str) -> bool:
    subject = per_series.mail_subject(text)
    return bool(re.search(r"\b0+/\d+\]", subject)) or "diff --git " not in text


def top_of_tree(path: Path) -> None:
    """The directories checkpatch.pl looks for at the top of a tree; every
    change of the sparse checkout removes those outside it, empty."""
    for d in TOP_DIRS:
        (path / d).mkdir(exist_ok=True)


def sparse_worktree(src: Path, rev: str, dirs: Sequence[str], path: Path) -> None:
    git(src, "worktree", "add", "-q", "--no-checkout", "--detach", str(path), rev)
    git(path, "sparse-checkout", "set", "--cone", *sorted(set(ALWAYS) | set(dirs)))
    git(path, "checkout", "-q", "--detach", rev)
    top_of_tree(path)


def widen(path: Path, dirs: Sequence[str]) -> None:
    """The sparse checkout of `path` widened to `dirs`."""
    if dirs:
        git(path, "sparse-checkout", "add", *sorted(dirs))
    top_of_tree(path)


def kernel_scripts(src: Path, rev: str, wanted: Sequence[str]) -> None:
    """The tree's scripts the wanted checks run are there at rev."""
    need = {c: f for c, f in SCRIPTS.items() if c in wanted}
    absent = sorted({f for f in need.values() if not git_ok(src, "cat-file", "-e", f"{rev}:{f}")})
    if absent:
        users = ", ".join(c for c, f in need.items() if f in absent)
        at = rev[:12] if re.fullmatch(r"[0-9a-f]{40}", rev) else rev
        raise UsageError(f"{src} is not a kernel tree: no {', '.join(absent)} at {at} "
                         f"(what {users} run; --checks to choose others)")


def touched_dirs(src: Path, commits: Sequence[str]) -> set[str]:
    out = set()
    for c in commits:
        for line in git(src, "show", "--format=", "--name-only", c).splitlines():
            if "/" in line:
                out.add(line.rsplit("/", 1)[0])
    return out


def apply_mails(wt: Path, base: str, mails: list[bytes], tree: str | None) -> Group:
    git(wt, "checkout", "-q", "--detach", base)
    texts = [m.decode(errors="replace") for m in mails]
    cover = [t for t in texts if is_cover(t)]
    patches = [t for t in texts if not is_cover(t)]
    for i, text in enumerate(patches, 1):
        res = subprocess.run(["git", "am", "-q", "--whitespace=nowarn"], cwd=wt, text=True,
                             input=text, capture_output=True, env={**os.environ, **APPLIER})
        if res.returncode:
            git_run(wt, "am", "--abort")
            raise UsageError(f"patch {i} \"{per_series.mail_subject(text)}\" does not apply "
                             f"on {base}: {(res.stdout + res.stderr).strip()[:300]}")
    commits = git(wt, "rev-list", "--reverse", f"{base}..HEAD").split()
    subjects = [per_series.mail_subject(t) for t in cover[:1] + patches]
    return Group("patches", tree or guess_tree("", subjects), commits, subjects,
                 bool(cover), patches)


def build_context(wt: Path, out: Path, base: str) -> dict:
    """The builds --build adds: W=1 with sparse, and xmit_disasm against `base`."""
    out.mkdir(parents=True, exist_ok=True)
    jobs = str((os.cpu_count() or 1) + 1)

    def make(args: list[str]) -> tuple[int | None, str]:
        cmd = ["make", "-C", str(wt), f"O={out}", f"-j{jobs}", *args]
        res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return res.returncode, res.stdout

    if not (out / ".config").is_file():
        code, text = make(["x86_64_defconfig"])
        if code:
            raise UsageError(f"make defconfig in {out}: {kbuild.first_error(text)}")
    git(wt, "checkout", "-q", "--detach", base)
    code, text = make(["W=1"])
    if code:
        raise UsageError(f"the base {base} does not build in {out}: {kbuild.first_error(text)}")
    return {"build": kbuild.BuildChecker(wt, make),
            "xmit_disasm": xmit.TransmitPath(out)}


def kept_worktree(src: Path, rev: str) -> Path:
    """A full worktree of src for the builds, kept between runs."""
    path = cache_dir() / "ws-check" / hashlib.sha256(str(src).encode()).hexdigest()[:12] / "src"
    git_run(src, "worktree", "prune")
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        git(src, "worktree", "add", "-q", "--detach", str(path), rev)
    return path


def ci() -> bool:
    return os.environ.get("CI") == "true"


def named(reports: Sequence[patchwork.PatchReport], series: dict[str, patchwork.Result],
          keep: Callable[[patchwork.Result], bool]) -> str:
    """'check (patches 1, 2), series cover_letter' of the results `keep` picks."""
    by: dict[str, list[int]] = {}
    for p in reports:
        for c, r in p.results.items():
            if keep(r):
                by.setdefault(c, []).append(p.index)
    out = [f"{c} (patch{'es' if len(ix) > 1 else ''} {', '.join(map(str, ix))})"
           for c, ix in by.items()]
    return ", ".join(out + [f"series {c}" for c, r in series.items() if keep(r)])


def verdict(reports: Sequence[patchwork.PatchReport],
            series: dict[str, patchwork.Result]) -> tuple[int, str]:
    """The exit status and the summary's words: the worst result, a check
    that could not run in full a warning (a failure under CI=true)."""
    failed = named(reports, series, lambda r: r.status == "fail")
    warned = named(reports, series, lambda r: r.status == "warn")
    unrun = named(reports, series, lambda r: bool(r.missing))
    parts = ([f"failed: {failed}"] if failed else []) + (
        [f"warned: {warned}"] if warned else []) + (
        [f"could not run in full{' (a failure under CI=true)' if ci() else ''}: {unrun}"]
        if unrun else [])
    code = FAILURE if failed or (unrun and ci()) else WARNINGS if warned or unrun else PASS
    return code, ["pass", "warnings", "FAIL"][code] + (f" - {'; '.join(parts)}" if parts else "")


def as_json(reports: Sequence[patchwork.PatchReport], series: dict[str, patchwork.Result],
            code: int, words: str) -> str:
    """What the table shows, each check's details and what could not run."""
    return json.dumps({
        "exit": code, "verdict": words,
        "patches": [{"index": p.index, "series": p.tree, "commit": p.commit,
                     "subject": p.subject,
                     "results": {c: dataclasses.asdict(r) for c, r in p.results.items()}}
                    for p in reports],
        "series": {c: dataclasses.asdict(r) for c, r in series.items()}}, indent=1)


Outcome = tuple[list[patchwork.PatchReport], dict[str, patchwork.Result]]


def run_checks(wt: Path, groups: list[Group], ctx: runner.Context,
               wanted: Sequence[str]) -> Outcome:
    runner.prepare(wt, [c for g in groups for c in g.commits], ctx, wanted)
    reports: list[patchwork.PatchReport] = []
    names: list[str] = []
    for g in groups:
        for c in g.commits:
            subject = git(wt, "log", "-1", "--format=%s", c)
            reports.append(patchwork.PatchReport(len(reports) + 1, g.tree, c, subject))
            names.append(g.tree)
    runner.check_patches(wt, reports, ctx, wanted, jobs=os.cpu_count() or 1, tree_names=names)
    infos = [per_series.SeriesInfo(g.name, g.tree, g.subjects, g.has_cover, g.texts)
             for g in groups]
    return reports, per_series.series_checks(infos)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    head, _, rest = __doc__.partition("\n\n")
    ap = Parser(prog="python3 -m tools.series.check", description=head,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                epilog=rest)
    ap.add_argument("tree", help="a kernel git tree (any directory in it)")
    ap.add_argument("ranges", nargs="*", metavar="RANGE|PATCH",
                    help="commit ranges (base..tip), or with --base patch files, "
                    "directories of them, mboxes")
    ap.add_argument("--base", help="apply the patches named on this commit")
    ap.add_argument("--tree", dest="target", choices=per_series.TREE_NAMES[:2],
                    help="the tree the series is for (default: guessed)")
    ap.add_argument("--build", metavar="OUT", type=Path,
                    help="also the build checks, building in OUT (incremental)")
    ap.add_argument("--checks", help="only these checks (comma-separated)")
    ap.add_argument("-v", "--detail", action="store_true",
                    help="every check's message (why it skipped too) and details "
                    "(checkpatch's and the linters' lines)")
    ap.add_argument("--json", metavar="FILE",
                    help="the results as JSON in FILE (-: on stdout, the table on stderr)")
    args = ap.parse_intermixed_args(argv)
    if not args.ranges:
        ap.error("name a commit range, or --base and patch files")
    if args.checks:
        unknown = set(args.checks.split(",")) - set(runner.CHECKS)
        if unknown:
            ap.error(f"unknown check(s): {', '.join(sorted(unknown))}; "
                     f"known: {', '.join(runner.CHECKS)}")
    return args


def check(args: argparse.Namespace, wanted: Sequence[str], ctx: runner.Context) -> Outcome:
    src = toplevel(args.tree)
    mails = patch_files(args.ranges) if args.base else []
    if args.base:
        first = commit_of(src, args.base, "--base")
        groups = []
    else:
        groups = [range_group(src, r, args.target) for r in args.ranges]
        first = git(src, "rev-parse", f"{groups[0].commits[0]}^")
    kernel_scripts(src, first, wanted)
    with tempfile.TemporaryDirectory(prefix="mqbypass-check-") as tmp:
        wt = Path(tmp) / "src"
        if args.build is not None:
            wt = kept_worktree(src, first)
        elif mails:
            sparse_worktree(src, first, [], wt)
        else:
            commits = [c for g in groups for c in g.commits]
            sparse_worktree(src, commits[-1], sorted(touched_dirs(src, commits)), wt)
        try:
            if mails:
                groups = [apply_mails(wt, first, mails, args.target)]
                if args.build is None:  # widen the checkout to what they touch
                    widen(wt, sorted(touched_dirs(wt, groups[0].commits)))
            if args.build is not None:
                ctx.builds.update(build_context(wt, args.build.resolve(), first))
            return run_checks(wt, groups, ctx, wanted)
        finally:
            if args.build is None:
                git_run(src, "worktree", "remove", "--force", str(wt))


@logs.printed
def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.monotonic()
    wanted = (args.checks.split(",") if args.checks
              else runner.names("local", build=args.build is not None))
    ctx = runner.Context(known=source.load_known_commits(KNOWN),
                         unavailable=runner.mode_gates("local"),
                         committer_signs=not args.base)
    stdout = sys.stdout
    # With --json -, stdout is the JSON's alone.
    with contextlib.redirect_stdout(sys.stderr if args.json == "-" else stdout):
        try:
            reports, series = check(args, wanted, ctx)
        except (UsageError, GitError, OSError) as err:
            print(f"error: {err}", file=sys.stderr)
            return USAGE
        print(patchwork.table(reports, wanted, detail=args.detail))
        for name, res in series.items():
            print(f"  series {name}: {res.status}: {res.message}")
        code, words = verdict(reports, series)
        print("time per check, all patches: " + ", ".join(
            f"{c} {t:.1f}s" for c, t in sorted(ctx.seconds.items(), key=lambda x: -x[1])))
        print(f"{len(reports)} patch(es) x {len(wanted)} checks, {len(series)} series checks "
              f"in {time.monotonic() - t0:.0f}s: {words}")
    if args.json:
        text = as_json(reports, series, code, words)
        if args.json == "-":
            print(text, file=stdout)
        else:
            Path(args.json).write_text(text + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
