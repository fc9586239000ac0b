"""Remove what the tooling made, and nothing else.

    python3 -m tools.series.cleanup [--dry-run] [--force] [--all] [REPO...]

In the project cache ($PROJECT_CACHE, else ~/.cache/mqbypass): the
worktrees and build directories, ws/ (the pinned base's, b4's, the mailing
list's), ws-<digest>/ (a KERNEL_SRC repository's), ws-check/ (check
--build), kselftest/ (the installed selftests, ci.devtest's in
kselftest/dev/) and import.tmp.* (an interrupted import). The downloads,
tarballs, base.git, ccache and the tools setup installed stay unless
--all; base.git holding branches or worktrees of yours (series/*, a
worktree outside the cache) stays even then, unless --force. When
PROJECT_CACHE names a directory that held other things before the
tooling first used it, what was there then stays (its names are kept in
.mqbypass-cache there), named as refused, even with --force.

In each kernel repository, REPO, $KERNEL_SRC and those a worktree in the
cache belongs to: the worktrees registered there under the cache's ws*/
(removed first: a branch checked out in one cannot be deleted), and the
ci/* branches the pipeline's apply stage made. A ci/* branch holding
commits the last apply did not make (branch.<name>.seriesApplied), or with
no such record, is refused unless --force; one checked out in a worktree
outside the cache always is. A deleted branch's tip is printed, to restore
it with `git branch NAME TIP`. The repositories inside ws*/ (b4's and the
mailing list's work clones, ws/b4/repo and ws/mail/repo, one checkout
each) are the tooling's, not kernel repositories of yours: they go with
ws*/, branches and all, and so do the worktrees earlier versions
registered beside them (ws/b4/roundtrip, ws/mail/roundtrip, ws/mail/bot).
It refuses while a pipeline run holds the cache's lock; a dry
run, which only reads, does not take it.

Exit status: 0 done, 1 something refused (the rest done), 2 an error."""

import argparse
import fcntl
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from common.cache import MARK, cache_dir, claim, mark
from common.git import GitError, git, git_ok, git_run
from tools.series import series

# ci.pipeline_common.BRANCH_PREFIX, not imported: ci sits above tools.
PREFIX = "ci/"
# Cache entries, as globs: the worktrees and builds; and with --all the rest.
WORK = ("ws", "ws-*", "kselftest", "import.tmp.*")
KEPT = ("base.git", "downloads", "tarballs", "ccache", "apt", "npm", "npm-tools", "tools",
        "clang-tidy-clean", "cocci-cache-*.json", "check-results")
LOCK = "pipeline.lock"
# Branches of base.git that are not a developer's: import-base.sh's.
BASE_BRANCHES = ("base",)


class CleanupError(Exception):
    pass


@dataclass
class Repo:
    path: Path
    worktrees: list[Path] = field(default_factory=list)  # to remove
    branches: list[tuple[str, str]] = field(default_factory=list)  # (name, tip) to delete
    refused: list[str] = field(default_factory=list)


@dataclass
class Plan:
    cache: Path
    remove: list[Path] = field(default_factory=list)  # cache entries
    kept: list[Path] = field(default_factory=list)  # cache entries --all would remove
    repos: list[Repo] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # cache entries kept for a reason

    @property
    def refusals(self) -> list[str]:
        return self.refused + [r for repo in self.repos for r in repo.refused]


def entries(cache: Path, globs: tuple[str, ...], theirs: bool = False) -> list[Path]:
    """The cache's entries matching globs that the tooling made (theirs:
    those that were there before it first used the cache, common.cache)."""
    if not cache.is_dir():
        return []
    foreign = set(mark(cache).foreign)
    return sorted({p for g in globs for p in cache.glob(g) if (p.name in foreign) == theirs})


def repo_of(path: str | Path) -> Path:
    """The repository a work tree (main or linked) belongs to: its main
    work tree's top level, or the git directory of a bare one."""
    common = git_run(path, "rev-parse", "--path-format=absolute", "--git-common-dir",
                     capture="apart")
    if common.returncode:
        raise CleanupError(f"{path}: not in a git repository")
    gitdir = Path(common.stdout.strip()).resolve()
    return gitdir.parent if gitdir.name == ".git" else gitdir


def cache_worktrees(cache: Path) -> Iterator[Path]:
    """The linked worktrees under the cache's ws*/ (a .git file at depth 3)."""
    for ws in entries(cache, ("ws", "ws-*")):
        for dotgit in ws.glob("*/*/.git"):
            if dotgit.is_file():
                yield dotgit.parent


def owner(worktree: Path) -> Path | None:
    """The repository a linked worktree belongs to, read from its .git file
    (git itself may not run there: the repository may be gone)."""
    text = (worktree / ".git").read_text(errors="replace").strip()
    if not text.startswith("gitdir: "):
        return None
    admin = Path(text[len("gitdir: "):])
    admin = admin if admin.is_absolute() else worktree / admin
    try:
        common = (admin / (admin / "commondir").read_text().strip()).resolve()
    except OSError:
        return None
    if not common.is_dir():
        return None
    return common.parent if common.name == ".git" else common


def in_ws(path: Path, cache: Path) -> bool:
    """A path inside one of the cache's ws*/ directories."""
    try:
        rel = path.resolve().relative_to(cache.resolve())
    except ValueError:
        return False
    return (len(rel.parts) > 1 and (rel.parts[0] == "ws" or rel.parts[0].startswith("ws-"))
            and rel.parts[0] not in mark(cache).foreign)


def ours(path: str, cache: Path) -> bool:
    """A worktree path the tooling makes: under the cache's ws*/, or check's
    temporary one (mqbypass-check-*/src)."""
    p = Path(path).resolve()
    if in_ws(p, cache):
        return True
    tmp = Path(tempfile.gettempdir()).resolve()
    return p.parent.parent == tmp and p.parent.name.startswith("mqbypass-check-") \
        and p.name == "src"


def registered(repo: Path) -> list[tuple[Path, str, bool]]:
    """[(path, branch or "", prunable)] of the repository's worktrees, the
    main one first."""
    out: list[tuple[Path, str, bool]] = []
    for block in git(repo, "worktree", "list", "--porcelain").split("\n\n"):
        fields = dict((ln.split(" ", 1) + [""])[:2] for ln in block.splitlines())
        out.append((Path(fields["worktree"]),
                    fields.get("branch", "").removeprefix("refs/heads/"), "prunable" in fields))
    return out


def branch_refusal(repo: Path, branch: str, tip: str) -> str:
    """Why the ci/* branch must stay ("" if it may go): commits the last
    apply did not make, or no record of that apply."""
    made = series.recorded(repo, branch)
    if not made:
        return (f"no record that the tooling made it (branch.{branch}.seriesApplied "
                "unset or its commit gone)")
    extra = git(repo, "rev-list", "--max-count=6", tip, "--not", made).split()
    if not extra:
        return ""
    lines = [git(repo, "log", "-1", "--format=%h %s", c) for c in extra[:5]]
    more = " ..." if len(extra) > 5 else ""
    return f"commit(s) the tooling did not make: {'; '.join(lines)}{more}"


def plan_repo(repo: Path, cache: Path, force: bool) -> Repo:
    r = Repo(repo)
    outside: dict[str, Path] = {}
    for path, branch, prunable in registered(repo):
        if ours(str(path), cache) and (prunable or cache.resolve() in path.resolve().parents):
            r.worktrees.append(path)
        elif branch:
            outside[branch] = path
    refs = git(repo, "for-each-ref", "--format=%(refname:strip=2) %(objectname)",
               f"refs/heads/{PREFIX}")
    for line in refs.splitlines():
        branch, tip = line.split()
        if branch in outside:
            r.refused.append(f"{repo}: {branch}: checked out in {outside[branch]}, outside "
                             "the cache: check out another branch there first")
            continue
        why = branch_refusal(repo, branch, tip)
        if why and not force:
            r.refused.append(f"{repo}: {branch}: {why}; cleanup --force {repo} deletes it")
        else:
            r.branches.append((branch, tip))
    return r


def base_refusal(base: Path, cache: Path) -> str:
    """Why base.git must stay under --all: your branches or worktrees in it."""
    if not git_ok(base, "rev-parse", "--git-dir"):
        return ""
    mine = [b for b in git(base, "for-each-ref", "--format=%(refname:strip=2)",
                           "refs/heads/").split()
            if not b.startswith(PREFIX) and b not in BASE_BRANCHES]
    trees = [str(p) for p, _, _ in registered(base)[1:] if not ours(str(p), cache)]
    what = ([f"branches {series.listed(mine, 4)}"] if mine else []) + (
        [f"worktrees {series.listed(trees, 4)}"] if trees else [])
    return f"{base}: holds {' and '.join(what)}; --force removes it" if what else ""


def make_plan(cache: Path, repos: list[str | Path], everything: bool, force: bool) -> Plan:
    plan = Plan(cache)
    found = [repo_of(r) for r in repos]
    found += [o for o in map(owner, cache_worktrees(cache)) if o]
    base = cache / "base.git"
    if (base / ".git").is_dir() or (base / "HEAD").is_file():
        found.append(repo_of(base))
    for repo in dict.fromkeys(found):
        # b4's and the mailing list's work clones (ws/b4/repo, ws/mail/repo)
        # go with ws/, their worktrees and branches with them: they are no
        # repository of yours (their main working tree is no worktree to
        # remove, their ci/all came with the clone).
        if not in_ws(repo, cache):
            plan.repos.append(plan_repo(repo, cache, force))
    plan.remove = entries(cache, WORK)
    if everything:
        for p in entries(cache, KEPT):
            why = base_refusal(p, cache) if p.name == "base.git" else ""
            if why and not force:
                plan.refused.append(why)
            else:
                plan.remove.append(p)
    plan.kept = [p for p in entries(cache, KEPT) if p not in plan.remove]
    plan.refused += [f"{p}: it was there before the tooling first used the cache ({cache / MARK}"
                     "): remove it yourself if it is the tooling's"
                     for p in entries(cache, WORK + (KEPT if everything else ()), theirs=True)]
    return plan


def size(path: Path) -> str:
    res = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True)
    return res.stdout.split()[0] if res.returncode == 0 and res.stdout else "?"


def describe(plan: Plan, dry_run: bool) -> list[str]:
    verb = "would remove" if dry_run else "removing"
    lines = []
    for r in plan.repos:
        if not (r.worktrees or r.branches or r.refused):
            continue
        lines.append(f"repository {r.path}:")
        lines += [f"  {verb} worktree {w}" for w in r.worktrees]
        lines += [f"  {'would delete' if dry_run else 'deleting'} branch {b} (tip {t[:12]})"
                  for b, t in r.branches]
    lines.append(f"cache {plan.cache}:")
    lines += [f"  {verb} {p.name} ({size(p)})" for p in plan.remove]
    if plan.kept:
        lines.append(f"  kept: {', '.join(p.name for p in plan.kept)} (--all removes them)")
    if not (plan.remove or any(r.worktrees or r.branches for r in plan.repos)):
        lines.append("  nothing the tooling made is left")
    lines += [f"refused: {why}" for why in plan.refusals]
    return lines


def rmtree(path: Path) -> None:
    def writable(func: Callable[..., object], p: str, _exc: object) -> None:
        os.chmod(os.path.dirname(p), stat.S_IRWXU)
        func(p)

    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path, onerror=writable)


def execute(plan: Plan) -> None:
    for r in plan.repos:
        for w in r.worktrees:
            git(r.path, "worktree", "remove", "--force", "--force", str(w))
        for branch, tip in r.branches:
            git(r.path, "branch", "-D", branch)
            print(f"deleted {branch} in {r.path}: git -C {r.path} branch {branch} {tip} "
                  "restores it")
    for p in plan.remove:
        rmtree(p)


def locked(cache: Path) -> IO[str] | None:
    """The pipeline's lock, held; None when there is no cache."""
    if not cache.is_dir():
        return None
    lock = open(cache / LOCK, "a")  # noqa: SIM115  held until the end
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise CleanupError(f"a pipeline run holds {cache / LOCK}: run again when it ends")
    return lock


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("repos", nargs="*", metavar="REPO",
                    help="a kernel repository the pipeline ran on (KERNEL_SRC is taken too)")
    ap.add_argument("--dry-run", action="store_true", help="list, remove nothing")
    ap.add_argument("--force", action="store_true",
                    help="delete refused ci/* branches too, and base.git under --all")
    ap.add_argument("--all", dest="everything", action="store_true",
                    help="the downloads, tarballs, base.git, ccache and tools too")
    args = ap.parse_args(argv)
    cache = cache_dir()
    repos = args.repos + ([os.environ["KERNEL_SRC"]] if os.environ.get("KERNEL_SRC") else [])
    lock = None
    try:
        # A dry run only reads: it leaves the lock to a pipeline starting now.
        lock = None if args.dry_run else locked(cache)
        if lock:
            claim(cache)  # a directory of yours: what is there now stays
        plan = make_plan(cache, repos, args.everything, args.force)
        print("\n".join(describe(plan, args.dry_run)))
        if not args.dry_run:
            execute(plan)
            if args.everything and not plan.refused and cache.is_dir():
                (cache / LOCK).unlink(missing_ok=True)
                # The cache goes too if the tooling made it and it is empty now.
                if mark(cache).made and [p.name for p in cache.iterdir()] == [MARK]:
                    (cache / MARK).unlink()
                    cache.rmdir()
    except (CleanupError, GitError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        if lock:
            lock.close()
    return 1 if plan.refusals else 0


if __name__ == "__main__":
    sys.exit(main())
