"""Apply the patch series to a kernel tree and export it back to patches/.

Each series (one topic for one tree) lives in patches/<tree>/<topic>/ as
git format-patch output: fixes under patches/net, features under
patches/net-next. `apply` turns them into branches of a kernel worktree,
<prefix><tree>/<topic>, net topics first, then net-next topics, each in name
order. A series starts from the kernel base unless series.conf names the
series it builds on (SERIES_BASE_<TREE>_<TOPIC>="<tree>/<topic>"), and
<prefix>all merges them all: the patched kernel. Developers edit commits on
the series branches; `export` writes them back. Applying then exporting
reproduces the committed files byte for byte. `apply` checks everything
before writing anything and refuses to lose work (apply()); a failed
`export` or `send-prep` leaves its output as it was (staged()).

Posting follows netdev's order: netdev CI applies a series to the tip of
its tree, so a series building on another cannot be posted until that one
is merged into its tree. `post-order` prints the order and what can be
posted now; `send-prep --merged <tree>/<topic>` writes a dependent series
as it is posted once its prerequisite is merged: rebased onto the base with
the prerequisite merged, without prerequisite-patch-id lines.
"""

import argparse
import contextlib
import functools
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec

from common import logs
from common.git import git as common_git, git_ok, git_run
from common.paths import ROOT
from tools.series.checks import source
from tools.series.checks.per_series import mail_subject

logger = logging.getLogger(__name__)

PATCHES = ROOT / "patches"
# Trees in apply order.
TREES = ("net", "net-next")
COVER_RE = re.compile(r"^(v\d+-)?0000-cover-letter\.patch$")
SHORTLOG_RE = re.compile(r"^\S.* \(\d+\):$")
# Workspace branches are <prefix>net and <prefix>net-next.
DEFAULT_PREFIX = "series/"


class SeriesError(Exception):
    """A problem with the series that names the patch or file at fault."""


P = ParamSpec("P")


def reports_errors(main: Callable[P, int]) -> Callable[P, int]:
    """A command's main() (this one, stable.py's, ci/stable_vm.py's): a
    SeriesError it raises, which names the tree, pin or patch at fault, is
    printed as "error: ..." on stderr and gives exit status 1."""
    @functools.wraps(main)
    def run(*args: P.args, **kwargs: P.kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except SeriesError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    return run


def load_conf(path: str | Path = PATCHES / "series.conf") -> dict[str, str]:
    conf = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r'^([A-Z_]+)="?(.*?)"?$', line.strip())
        if m and not line.lstrip().startswith("#"):
            conf[m.group(1)] = m.group(2)
    return conf


def role_env(conf: dict[str, str], date: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_COMMITTER_NAME=conf["SERIES_AUTHOR_NAME"],
               GIT_COMMITTER_EMAIL=conf["SERIES_AUTHOR_EMAIL"])
    if date:
        env["GIT_COMMITTER_DATE"] = date
    return env


def git(tree: str | Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        capture: bool = True) -> str:
    """common.git.git, a failure raised as a SeriesError."""
    return common_git(tree, *args, env=env, check=check, capture=capture, error=SeriesError)


@dataclass
class Cover:
    subject: str  # the title, without the [PATCH ...] prefix
    body: str
    mailed: str = ""  # the Subject header as mailed, prefix included


@dataclass
class Series:
    tree: str
    topic: str
    directory: Path | None  # None: a series known by its workspace branch only
    version: int
    patches: list[Path] = field(default_factory=list)
    cover: Cover | None = None
    depends: str | None = None  # name of the series this one builds on

    @property
    def name(self) -> str:
        return f"{self.tree}/{self.topic}"


def version_key(tree: str, topic: str) -> str:
    return "SERIES_VERSION_" + re.sub(r"[^A-Z0-9]", "_", f"{tree}_{topic}".upper())


def base_key(tree: str, topic: str) -> str:
    return "SERIES_BASE_" + re.sub(r"[^A-Z0-9]", "_", f"{tree}_{topic}".upper())


def parse_cover(path: str | Path) -> Cover:
    text = Path(path).read_text()
    rest = text.partition("\n\n")[2]
    mailed = mail_subject(text)
    subj = re.match(r"\[[^\]]*\] (.*)", mailed)
    if not subj:
        raise SeriesError(f"{path}: no Subject line")
    lines = rest.splitlines()
    end = next((i for i, ln in enumerate(lines) if SHORTLOG_RE.match(ln)), None)
    if end is None:
        raise SeriesError(f"{path}: no shortlog after the cover letter text")
    body = "\n".join(lines[:end]).strip("\n")
    return Cover(subject=subj.group(1).strip(), body=body, mailed=mailed)


def load_series(conf: dict[str, str] | None = None, patches: Path = PATCHES) -> list[Series]:
    """Every series under patches/, in apply order."""
    conf = conf or load_conf(patches / "series.conf")
    out = []
    for tree in TREES:
        tdir = patches / tree
        topics = sorted(d for d in tdir.iterdir() if d.is_dir()) if tdir.is_dir() else []
        stray = sorted(tdir.glob("*.patch")) if tdir.is_dir() else []
        if stray:
            raise SeriesError(f"{stray[0]}: patches belong in {tdir}/<topic>/")
        for d in topics:
            files = sorted(d.glob("*.patch"))
            cover = [f for f in files if COVER_RE.match(f.name)]
            ser = Series(tree, d.name, d, int(conf.get(version_key(tree, d.name), "1")),
                         [f for f in files if not COVER_RE.match(f.name)],
                         depends=conf.get(base_key(tree, d.name)) or None)
            if cover:
                ser.cover = parse_cover(cover[0])
            out.append(ser)
    names = [ser.name for ser in out]
    for i, ser in enumerate(out):
        if ser.depends and ser.depends not in names[:i]:
            raise SeriesError(f"{base_key(ser.tree, ser.topic)}={ser.depends}: no such series "
                              f"before {ser.name} in apply order ({', '.join(names)})")
    return out


def leaves(all_series: Sequence[Series]) -> list[Series]:
    """Series no other series builds on: their tips together hold every patch."""
    deps = {ser.depends for ser in all_series}
    return [ser for ser in all_series if ser.name not in deps]


@dataclass
class Posting:
    """A series' place in the posting order."""
    series: Any  # a Series, or anything with .name, .tree and .depends (a b4flow.Job)
    merged: bool = False  # the series itself is marked merged (posted before)
    prerequisite_merged: bool = False  # the series it builds on is merged into its tree
    # To and Cc of its mails, as send_prep() wrote them (get_maintainer.pl).
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.series.depends) and not self.prerequisite_merged

    @property
    def status(self) -> str:
        ser = self.series
        if self.merged:
            return "merged: posted before, not posted again"
        if self.blocked:
            return f"blocked until {ser.depends} is merged into {ser.tree}"
        if ser.depends:
            return (f"post now, rebased onto {ser.tree} with {ser.depends} merged "
                    "(no prerequisite ids)")
        return "post now"


def post_order(all_series: Sequence[Any], merged: Collection[str] = ()) -> list[Posting]:
    """[Posting] in the order to post the series: net before net-next, each
    after the series it builds on. A series building on another is blocked
    until that one is merged into its tree (netdev CI applies a series to the
    tip of its tree): `merged` names the series known to be merged."""
    names = [ser.name for ser in all_series]
    for m in merged:
        if m not in names:
            raise SeriesError(f"--merged {m}: no such series (series: {', '.join(names)})")
    pending = sorted(all_series, key=lambda ser: (TREES.index(ser.tree), ser.name))
    order: list[Any] = []
    seen: set[str] = set()
    while pending:
        ser = next((x for x in pending if not x.depends or x.depends in seen), None)
        if ser is None:
            raise SeriesError(f"{pending[0].name} builds on {pending[0].depends}, which is "
                              f"not a series to post before it ({', '.join(names)})")
        if ser.name in merged and ser.depends and ser.depends not in merged:
            raise SeriesError(f"--merged {ser.name}: it builds on {ser.depends}, which is "
                              f"then merged too: add --merged {ser.depends}")
        order.append(ser)
        seen.add(ser.name)
        pending.remove(ser)
    return [Posting(ser, ser.name in merged, bool(ser.depends) and ser.depends in merged)
            for ser in order]


def order_lines(postings: Sequence[Posting]) -> list[str]:
    """The posting order as numbered lines, with what to do about a blocked series."""
    lines = []
    for i, p in enumerate(postings, 1):
        lines.append(f"{i}. {p.series.name}: {p.status}")
        if p.blocked:
            lines.append(f"   post {p.series.depends} first; once it is in {p.series.tree}, "
                         f"run again with --merged {p.series.depends}")
    return lines


def git_dir(tree: str | Path) -> Path:
    gitdir = Path(git(tree, "rev-parse", "--git-dir"))
    return gitdir if gitdir.is_absolute() else Path(tree) / gitdir


# What an unfinished git command leaves in the git directory.
IN_PROGRESS = {"rebase-apply": "git am (or rebase)", "rebase-merge": "git rebase",
               "MERGE_HEAD": "git merge", "CHERRY_PICK_HEAD": "git cherry-pick",
               "REVERT_HEAD": "git revert"}


def in_progress(tree: str | Path) -> list[str]:
    gitdir = git_dir(tree)
    return [what for name, what in IN_PROGRESS.items() if (gitdir / name).exists()]


def recover(tree: str | Path) -> None:
    """Undo what an interrupted earlier run left behind in a worktree the
    tooling owns (the pipeline's and stable.py's; never a user's tree)."""
    gitdir = git_dir(tree)
    if (gitdir / "rebase-apply").exists():
        git(tree, "am", "--abort", check=False)
    if (gitdir / "rebase-merge").exists():
        git(tree, "rebase", "--abort", check=False)
    git(tree, "reset", "-q", "--hard")


HUNK_RE = re.compile(r"^(@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@) ?(.*)$")


def failed_hunks(diff: str, errors: str) -> list[str]:
    """Each hunk `git apply` names as failed ("patch failed: PATH:LINE"):
    its file, number, the function its header names, the header."""
    out = []
    for path, line in re.findall(r"^error: patch failed: (.+):(\d+)$", errors, re.M):
        hunks, cur = [], None
        for ln in diff.splitlines():
            if ln.startswith("diff --git "):
                cur = ln
            elif cur and f" a/{path} " in cur + " " or cur and cur.endswith(f" b/{path}"):
                m = HUNK_RE.match(ln)
                if m:
                    hunks.append(m)
        n = next((i for i, m in enumerate(hunks, 1) if m[2] == line), None)
        if n is None:
            out.append(f"{path}: the hunk at line {line}")
            continue
        m = hunks[n - 1]
        where = f", in {m[3]}" if m[3] else ""
        out.append(f"{path}: hunk #{n} of {len(hunks)} (line {line}{where}): {m[1]}")
    return out


def am_commit(tree: str | Path, parent: str, patch: Path, name: str, conf: dict[str, str],
              env: dict[str, str]) -> str:
    """The commit `git am --3way --keep-cr --committer-date-is-author-date`
    makes of `patch` on `parent`, made with plumbing in the scratch index
    of env (GIT_INDEX_FILE, holding parent's tree): no worktree, HEAD or
    ref is touched. Raises SeriesError naming the patch, hunk and function."""
    with tempfile.TemporaryDirectory() as tmp:
        msg, diff = Path(tmp) / "msg", Path(tmp) / "patch"
        info = git_run(tree, "mailinfo", str(msg), str(diff), input=patch.read_text(),
                       capture="apart")
        fields = dict(re.findall(r"^(Author|Email|Subject|Date): (.*)$", info.stdout, re.M))
        if info.returncode or not diff.stat().st_size or "Date" not in fields:
            raise SeriesError(f"{name}: not a patch mail (git mailinfo: "
                              f"{(info.stdout + info.stderr).strip()[:200]})")
        message = git_run(tree, "stripspace", input=f"{fields.get('Subject', '')}\n\n"
                          f"{msg.read_text()}", capture="apart").stdout
        strict = git_run(tree, "apply", "--cached", str(diff), env=env, capture="apart")
        if strict.returncode:
            merged = git_run(tree, "apply", "--cached", "--3way", str(diff), env=env,
                             capture="apart")
            if merged.returncode:
                text = diff.read_text()
                lines = failed_hunks(text, strict.stderr) + [
                    ln for ln in (strict.stderr + merged.stderr + merged.stdout).splitlines()
                    if ln.startswith(("error:", "U ")) and "patch failed:" not in ln]
                detail = "\n  ".join(lines)
                raise SeriesError(f"patch does not apply: {name}\n  {detail}\n"
                                  "  (3-way merge tried too, as git am --3way does)")
    tree_id = git(tree, "write-tree", env=env)
    cenv = role_env(conf, fields["Date"])
    cenv.update(GIT_AUTHOR_NAME=fields.get("Author", ""),
                GIT_AUTHOR_EMAIL=fields.get("Email", ""), GIT_AUTHOR_DATE=fields["Date"])
    res = git_run(tree, "commit-tree", tree_id, "-p", parent, input=message, env=cenv,
                  capture="apart")
    if res.returncode:
        raise SeriesError(f"{name}: git commit-tree failed: {res.stderr.strip()}")
    return res.stdout.strip()


def build_series(tree: str | Path, base: str, all_series: Sequence[Series],
                 conf: dict[str, str], patches: Path
                 ) -> tuple[list[tuple[Series, Path, str]], dict[str, str]]:
    """Every series' commits, made in scratch indexes: ([(series, patch,
    commit)], {series name: tip})."""
    applied: list[tuple[Series, Path, str]] = []
    tips: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        for ser in all_series:
            head = tips[ser.depends] if ser.depends else base
            git(tree, "read-tree", head, env=env)
            for i, p in enumerate(ser.patches, 1):
                logger.info(f"  applying [{ser.name}] {p.name}")
                name = f"{p.relative_to(patches.parent)} (patch {i} of {len(ser.patches)} " \
                       f"of {ser.name})"
                head = am_commit(tree, head, p, name, conf, env)
                applied.append((ser, p, head))
            tips[ser.name] = head
    return applied, tips


def merge_all(tree: str | Path, base: str, all_series: Sequence[Series], tips: dict[str, str],
              conf: dict[str, str], prefix: str = DEFAULT_PREFIX) -> str:
    """The commit of <prefix>all: every series merged, the patched kernel.

    With one leaf series it is that series' tip; otherwise one merge commit
    (made with git merge-tree, no worktree), committed by the role identity
    at the newest tip's date, so that the same patches always give the
    same commit.
    """
    leaf = leaves(all_series)
    heads = [tips[ser.name] for ser in leaf] or [base]
    if len(heads) == 1:
        return heads[0]
    names = [ser.name for ser in leaf]
    date = max(git(tree, "log", "-1", "--format=%ad", "--date=raw", h) for h in heads)
    env = role_env(conf, date)
    env.update(GIT_AUTHOR_NAME=conf["SERIES_AUTHOR_NAME"],
               GIT_AUTHOR_EMAIL=conf["SERIES_AUTHOR_EMAIL"], GIT_AUTHOR_DATE=date)
    ours, tree_id = heads[0], ""
    for i, theirs in enumerate(heads[1:], 2):
        res = git_run(tree, "merge-tree", "--write-tree", ours, theirs, capture="apart")
        if res.returncode:
            raise SeriesError(f"the series do not merge ({', '.join(prefix + n for n in names)}):"
                              " they touch the same lines; make one build on the other "
                              f"(SERIES_BASE_*)\n{res.stdout}{res.stderr}")
        tree_id = res.stdout.split()[0]
        if i < len(heads):  # an octopus: merge the next series into this step
            ours = git(tree, "commit-tree", tree_id, "-p", ours, "-p", theirs, "-m", "step",
                       env=env)
    parents = [a for h in heads for a in ("-p", h)]
    return git(tree, "commit-tree", tree_id, *parents,
               "-m", "Merge series " + ", ".join(names), env=env)


@dataclass
class Move:
    """A branch apply moves: from `old` ("" if new) to `new` ("" to delete)."""
    branch: str
    old: str
    new: str
    lost: list[str] = field(default_factory=list)  # "<sha> <subject>" it would drop


def tip_of(tree: str | Path, branch: str) -> str:
    res = git_run(tree, "rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}",
                  capture="apart")
    return res.stdout.strip() if res.returncode == 0 else ""


def recorded(tree: str | Path, branch: str) -> str:
    """The tip the last apply gave the branch (branch.<name>.seriesApplied)."""
    sha = git(tree, "config", f"branch.{branch}.seriesApplied", check=False)
    return sha if sha and git_ok(tree, "cat-file", "-e", f"{sha}^{{commit}}") else ""


def patch_ids(tree: str | Path, commits: Sequence[str]) -> dict[str, str]:
    """{commit: git patch-id --stable} (merges and empty commits have none)."""
    if not commits:
        return {}
    log_p = git_run(tree, "log", "-p", "--no-walk=unsorted", "--format=commit %H", *commits,
                    capture="stdout").stdout
    out = git_run(tree, "patch-id", "--stable", input=log_p, capture="stdout").stdout
    return {c: p for p, c in (ln.split() for ln in out.splitlines())}


def stripped(message: str) -> str:
    """A commit message as `git stripspace` leaves it (how am_commit stores it)."""
    lines = [ln.rstrip() for ln in message.splitlines()]
    out: list[str] = []
    for ln in lines:
        if ln or (out and out[-1]):
            out.append(ln)
    return "\n".join(out).strip("\n")


def contents(tree: str | Path, commits: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """{commit: (patch-id, author, author date, message)}: what a patch file
    holds of it. Two commits with the same content give the same patch file."""
    ids = patch_ids(tree, commits)
    out: dict[str, tuple[str, ...]] = {}
    for c in commits:
        meta = git(tree, "log", "-1", "--format=%an <%ae>%x00%ad%x00%B", "--date=raw", c)
        author, date, msg = meta.split("\0", 2)
        out[c] = (ids.get(c, ""), author, date, stripped(msg))
    return out


def lost_commits(tree: str | Path, moves: Sequence[Move], base: str,
                 applied: Collection[tuple[str, ...]]) -> None:
    """Fill each move's `lost`: the commits its branch holds now that no new
    tip holds, that the last apply did not make (not reachable from the tip
    it recorded, recorded()) and whose content (contents(): diff, author and
    message) no applied commit has, so patches/ does not hold them."""
    keep = [base] + [m.new for m in moves if m.new]
    keep += [r for r in (recorded(tree, m.branch) for m in moves) if r]
    for m in moves:
        if not m.old or m.old == m.new:
            continue
        limit = 100
        shas = git(tree, "rev-list", f"--max-count={limit}", m.old, "--not", *keep).split()
        for sha, content in contents(tree, shas).items():
            if content not in applied:
                m.lost.append(git(tree, "log", "-1", "--format=%h %s", sha))
        if len(shas) == limit:
            m.lost.append(f"(and maybe more: only {limit} looked at)")


def checked_out(tree: str | Path) -> dict[str, str]:
    """{branch: worktree path} of every worktree of the repository."""
    out, path = {}, ""
    for line in git(tree, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree "):]
        elif line.startswith("branch refs/heads/"):
            out[line[len("branch refs/heads/"):]] = path
    return out


def in_the_way(tree: str | Path, head: str, target: str) -> list[str]:
    """Untracked files checking out `target` from `head` would overwrite."""
    added = git(tree, "diff", "--name-only", "--diff-filter=A", "--no-renames", head, target)
    if not added:
        return []
    untracked = set(git(tree, "ls-files", "--others", "--exclude-standard").splitlines())
    return sorted(untracked & set(added.splitlines()))


def listed(items: Sequence[str], most: int = 8) -> str:
    more = f", ... ({len(items) - most} more)" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def apply(tree: str | Path, base: str, conf: dict[str, str] | None = None, patches: Path = PATCHES,
          prefix: str = DEFAULT_PREFIX, force: bool = False) -> list[tuple[Series, Path, str]]:
    """Set branch <prefix><tree>/<topic> of every series, from `base` or
    from the series it builds on, and <prefix>all merging them all; then
    check out <prefix>all in `tree` (saying so).

    Everything is checked before anything is written: the base, the
    identity in series.conf, every patch (applied as `git am --3way` would,
    in a scratch index, am_commit()), and what would be lost. It refuses,
    naming them, when the tree has uncommitted changes, an unfinished git
    am/rebase/merge, or untracked files checking out <prefix>all would
    overwrite, and when a branch it moves holds commits that neither
    patches/ nor the last apply made (recorded per branch in
    branch.<name>.seriesApplied). force=True moves the branches anyway
    (dropped commits stay in the reflog), but never touches uncommitted
    work: with any of the above the files and HEAD's commit stay as they
    are (HEAD is detached first if its branch moves). A branch checked out
    in another worktree is always refused. The branches move together
    at the end, in one ref transaction.

    Returns [(series, patch file, commit)] in apply order.
    """
    conf = conf or load_conf(patches / "series.conf")
    for key in ("SERIES_AUTHOR_NAME", "SERIES_AUTHOR_EMAIL"):
        if not conf.get(key):
            raise SeriesError(f"{patches / 'series.conf'}: {key} is not set (the committer "
                              "of the applied patches)")
    all_series = load_series(conf, patches)
    work_tree(tree)
    base_sha = base_commit(tree, base, "nothing was changed")
    applied, tips = build_series(tree, base_sha, all_series, conf, patches)
    all_tip = merge_all(tree, base_sha, all_series, tips, conf, prefix)

    wanted = {prefix + ser.name: tips[ser.name] for ser in all_series}
    wanted[prefix + "all"] = all_tip
    # A branch named like a tree (an older layout) blocks <prefix><tree>/<topic>.
    moves = [Move(prefix + t, tip_of(tree, prefix + t), "") for t in TREES
             if tip_of(tree, prefix + t)]
    moves += [Move(b, tip_of(tree, b), new) for b, new in wanted.items()]
    moves = [m for m in moves if m.old != m.new]
    lost_commits(tree, moves, base_sha,
                 set(contents(tree, [c for _, _, c in applied]).values()))

    top = Path(git(tree, "rev-parse", "--show-toplevel")).resolve()
    busy = {b: p for b, p in checked_out(tree).items()
            if Path(p).resolve() != top and any(m.branch == b for m in moves)}
    if busy:
        raise SeriesError("; ".join(f"{b} is checked out in {p}" for b, p in busy.items())
                          + ": apply would move it under that tree's files; check out "
                          "another branch there first. Nothing was changed")
    head = git(tree, "rev-parse", "-q", "--verify", "HEAD", check=False)
    head_ref = git(tree, "symbolic-ref", "-q", "HEAD", check=False)
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no").splitlines()
    unfinished = in_progress(tree)
    blocking = in_the_way(tree, head, all_tip) if head else []
    problems = []
    if dirty:
        problems.append(f"uncommitted changes ({len(dirty)} files): "
                        + listed([" ".join(d.split(None, 1)) for d in dirty]))
    problems += [f"an unfinished {what}" for what in unfinished]
    if blocking:
        problems.append(f"untracked files checking out {prefix}all would overwrite: "
                        + listed(blocking))
    lost = [m for m in moves if m.lost]
    problems += [f"{m.branch}: {len(m.lost)} commit(s) in neither patches/ nor the last apply"
                 f"{' (the branch would be deleted)' if not m.new else ''}: "
                 + listed(m.lost, 5) for m in lost]
    if problems and not force:
        raise SeriesError(
            f"apply would lose work in {tree}; nothing was changed:\n  "
            + "\n  ".join(problems) + "\ncommit or stash the changes, finish the unfinished "
            "command, export the commits to patches/ (series export) or keep them on another "
            "branch; or run again with --force (the branches are reset to patches/, the "
            "dropped commits stay in the reflog; uncommitted changes and HEAD's commit are "
            "kept)")
    for m in lost:
        logger.info(f"  --force: {m.branch} drops {listed(m.lost, 5)}")
    keep_tree = bool(dirty or unfinished or blocking)

    # Write: detach HEAD from a branch that moves (same commit, files untouched), then
    # move every branch in one transaction.
    detach = bool(head_ref) and any(f"refs/heads/{m.branch}" == head_ref for m in moves)
    if detach:
        git(tree, "update-ref", "--no-deref", "-m", "series apply: detach", "HEAD", head)
    for m in moves:
        if not m.new:
            logger.info(f"  deleting branch {m.branch}: it blocks the {m.branch}/<topic> "
                        "branches")
            git(tree, "update-ref", "-d", f"refs/heads/{m.branch}", m.old)
            git(tree, "config", "--remove-section", f"branch.{m.branch}", check=False)
    zero = "0" * len(base_sha)
    txn = "".join(f"update refs/heads/{m.branch} {m.new} {m.old or zero}\n"
                  for m in moves if m.new)
    if txn:
        res = git_run(tree, "update-ref", "-m", "series apply", "--stdin", input=txn,
                      capture="apart")
        if res.returncode:
            raise SeriesError(f"moving the branches failed, none moved: {res.stderr.strip()}")
    for ser in all_series:
        branch = prefix + ser.name
        desc = f"{ser.cover.subject}\n\n{ser.cover.body}\n" if ser.cover else ""
        git(tree, "config", f"branch.{branch}.description", desc)
    for branch, new in wanted.items():
        git(tree, "config", f"branch.{branch}.seriesApplied", new)

    if keep_tree:
        how = f", detached from {head_ref[len('refs/heads/'):]}, which moved" if detach else ""
        logger.info(f"  {tree}: HEAD ({head[:12]}{how}) and the files left as they were; "
                    f"check out {prefix}all once the tree is clean")
    elif head_ref != f"refs/heads/{prefix}all" or head != all_tip:
        was = head_ref.removeprefix("refs/heads/") if head_ref else head[:12] or "unborn"
        git(tree, "checkout", "-q", prefix + "all")
        logger.info(f"  checked out {prefix}all in {tree} (HEAD was {was})")
    return applied


def work_tree(tree: str | Path) -> None:
    """Raise a SeriesError unless tree is a git work tree."""
    if not Path(tree).is_dir():
        raise SeriesError(f"{tree}: no such directory (the kernel work tree holding the "
                          "series branches)")
    if not git_ok(tree, "rev-parse", "--show-toplevel"):
        raise SeriesError(f"{tree}: not a git work tree")


def base_commit(tree: str | Path, base: str, done: str = "nothing was written") -> str:
    """The commit `base` names in tree; a SeriesError naming it if none."""
    sha = git(tree, "rev-parse", "-q", "--verify", f"{base}^{{commit}}", check=False)
    if not re.fullmatch(r"[0-9a-f]{40,64}", sha):
        raise SeriesError(f"base {base}: no such commit in {tree}; {done}")
    return sha


def workspace_series(tree: str | Path, prefix: str = DEFAULT_PREFIX) -> list[tuple[str, str, str]]:
    """[(tree, topic, branch)] of the workspace, in apply order."""
    work_tree(tree)
    out: list[tuple[str, str, str]] = []
    for t in TREES:
        refs = git(tree, "for-each-ref", "--format=%(refname:strip=2)",
                   f"refs/heads/{prefix}{t}/").split()
        out += [(t, r[len(prefix) + len(t) + 1:], r) for r in sorted(refs)]
    return out


def canonical_chain(tree: str | Path, parent: str, rev_range: str, conf: dict[str, str]) -> str:
    """Recreate rev_range on `parent` as `apply` would have committed it.

    Committer = role identity, committer date = author date: the commit ids
    (and so the exported files) depend only on content, not on when or by
    whom a commit was last amended.
    """
    for sha in git(tree, "rev-list", "--reverse", rev_range).split():
        raw = git(tree, "cat-file", "commit", sha, capture=True)
        msg = raw.partition("\n\n")[2]
        fmt = git(tree, "log", "-1", "--format=%an%x00%ae%x00%ad", "--date=raw", sha)
        name, email, date = fmt.split("\0")
        env = role_env(conf, date)
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email, GIT_AUTHOR_DATE=date)
        res = git_run(tree, "commit-tree", f"{sha}^{{tree}}", "-p", parent,
                      input=msg + ("\n" if not msg.endswith("\n") else ""), env=env,
                      capture="apart")
        res.check_returncode()
        parent = res.stdout.strip()
    return parent


def export(tree: str | Path, base: str, outdir: str | Path = PATCHES,
           conf: dict[str, str] | None = None, identity: tuple[str, str] | None = None,
           prefix: str = DEFAULT_PREFIX) -> list[Path]:
    """Write every <prefix><tree>/<topic> branch of `tree` as format-patch files.

    This is the stored form of the stack, every series against `base`: a
    series building on another names that one's patches as prerequisites
    (prerequisite-patch-id). What is posted is written by send_prep().
    identity=None keeps the role identity from series.conf; otherwise
    (name, email) replaces it in From:, Signed-off-by: and the shortlog.
    """
    conf = conf or load_conf()
    chain = workspace_series(tree, prefix)
    canon_base = base_commit(tree, base)
    if not chain:
        raise SeriesError(f"no {prefix}<tree>/<topic> branches in {tree}: run apply first")
    canon_of: dict[str, str] = {}  # branch -> its canonical tip
    outdir = Path(outdir)
    written: list[Path] = []
    with staged(outdir, [(t, topic) for t, topic, _ in chain]) as tmp:
        for tree_name, topic, branch in chain:
            dep = conf.get(base_key(tree_name, topic))
            if dep and prefix + dep not in canon_of:
                raise SeriesError(f"{branch} builds on {dep} ({base_key(tree_name, topic)}), "
                                  f"which is not a workspace series before it")
            prev = prefix + dep if dep else base
            canon_prev = canon_of[prev] if dep else canon_base
            canon = canonical_tip(tree, prev, canon_prev, branch, conf)
            written += write_series(tree, tree_name, topic, branch, canon_prev, canon, base,
                                    tmp / tree_name / topic, conf, identity)
            canon_of[branch] = canon
    return [outdir / f.relative_to(tmp) for f in written]


def uncommitted(outdir: Path) -> dict[Path, str]:
    """{file: "untracked" or "uncommitted changes"} under outdir when it is
    in a git work tree ({} otherwise)."""
    top = git_run(outdir, "rev-parse", "--show-toplevel", capture="apart")
    if top.returncode:
        return {}
    res = git_run(outdir, "status", "--porcelain", "-z", "--untracked-files=all",
                  "--no-renames", "--", ".", capture="apart")
    out = {}
    for entry in res.stdout.split("\0"):
        if len(entry) > 3:
            path = (Path(top.stdout.strip()) / entry[3:]).resolve()
            out[path] = "untracked" if entry[:2] == "??" else "uncommitted changes"
    return out


def unexported(outdir: Path, topics: Collection[tuple[str, str]]) -> list[str]:
    """The <tree>/<topic> directories of outdir that an export of `topics` leaves alone."""
    return [f"{t}/{d.name}" for t in TREES if (outdir / t).is_dir()
            for d in sorted((outdir / t).iterdir()) if d.is_dir() and (t, d.name) not in topics]


PATCH_FILES = ("*.patch",)
MBOX = ("*.patch", "v*.mbox")  # send-prep's files


@contextlib.contextmanager
def staged(outdir: Path, topics: Collection[tuple[str, str]],
           globs: Sequence[str] = PATCH_FILES) -> Iterator[Path]:
    """A scratch directory beside outdir to write <tree>/<topic>/*.patch
    into. When the block ends well, each of `topics` in outdir gets the
    scratch directory's files for it instead of its files matching globs (outdir
    is the scratch directory renamed if it did not exist); other topics and
    files stay. A file of outdir this would delete or change that has
    uncommitted changes (outdir in a git work tree) is refused, naming it.
    When the block raises or refuses, the scratch directory is removed and
    outdir is as it was."""
    outdir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", dir=outdir.parent))
    try:
        yield tmp
        if not outdir.exists():
            umask = os.umask(0)
            os.umask(umask)
            tmp.chmod(0o777 & ~umask)
            tmp.rename(outdir)
            return
        old = [f for t, topic in topics for g in globs
               for f in sorted((outdir / t / topic).glob(g))]
        new = {f.relative_to(tmp): f for g in globs for f in tmp.rglob(g)}
        changed = [f for f in old if f.relative_to(outdir) not in new
                   or new[f.relative_to(outdir)].read_bytes() != f.read_bytes()]
        dirty = uncommitted(outdir) if changed else {}
        at_risk = [f"{f.relative_to(outdir)} ({dirty[f.resolve()]})" for f in changed
                   if f.resolve() in dirty]
        if at_risk:
            raise SeriesError(f"writing {outdir} would overwrite or delete work not committed "
                              f"there; nothing was written:\n  " + "\n  ".join(at_risk)
                              + "\ncommit them, or move them out of the way, and run again")
        for f in old:
            f.unlink()
        for rel, f in sorted(new.items()):
            dest = outdir / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            f.replace(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def canonical_tip(tree: str | Path, prev: str, canon_prev: str, branch: str,
                  conf: dict[str, str]) -> str:
    """The canonical chain of prev..branch on canon_prev (canonical_chain)."""
    res = git_run(tree, "merge-base", "--is-ancestor", prev, branch, capture="none")
    if res.returncode:
        raise SeriesError(f"{prev} is not an ancestor of {branch}: rebase {branch} onto it")
    return canonical_chain(tree, canon_prev, f"{prev}..{branch}", conf)


def write_series(tree: str | Path, tree_name: str, topic: str, branch: str, start: str, tip: str,
                 base: str, d: Path, conf: dict[str, str],
                 identity: tuple[str, str] | None = None,
                 to: Sequence[str] = (), cc: Sequence[str] = ()) -> list[Path]:
    """git format-patch of start..tip into directory d as series <tree>/<topic>
    (workspace branch `branch`, whose description is the cover letter): prefix
    [PATCH <tree>], -v<N> from series.conf, a cover letter for more than two
    patches or when the branch has a description (b4 mails one with any
    series of two or more), --base=base (base-commit, and prerequisite-patch-id for the
    commits between base and start). Committed by the role identity at the
    tip's date, so the files depend only on the content; `to` and `cc`
    become every mail's To: and Cc:. Returns the files."""
    count = int(git(tree, "rev-list", "--count", f"{start}..{tip}"))
    if not count:
        return []
    d.mkdir(parents=True, exist_ok=True)
    tmp = "series-export-tmp"
    git(tree, "branch", "-f", tmp, tip)
    desc = git(tree, "config", f"branch.{branch}.description", check=False)
    if desc:
        git(tree, "config", f"branch.{tmp}.description", desc + "\n")
    version = int(conf.get(version_key(tree_name, topic), "1"))
    tip_date = git(tree, "log", "-1", "--format=%aD", tip)
    args = ["format-patch", "-q", "--full-index", "--no-signature",
            f"--subject-prefix=PATCH {tree_name}", f"--base={base}",
            "--cover-from-description=subject", "-o", str(d),
            *(f"--to={a}" for a in to), *(f"--cc={a}" for a in cc)]
    if count > 2 or desc:
        args.append("--cover-letter")
    if version > 1:
        args.append(f"-v{version}")
    args.append(f"{start}..{tmp}")
    try:
        git(tree, *args, env=role_env(conf, tip_date))
    finally:
        git(tree, "branch", "-D", tmp, check=False)
        git(tree, "config", "--remove-section", f"branch.{tmp}", check=False)
    files = sorted(d.glob("*.patch"))
    if identity:
        for f in files:
            f.write_text(substitute_identity(f.read_text(), conf, identity))
    return files


def merged_base(tree: str | Path, base: str, prerequisite: str, name: str, into: str,
                conf: dict[str, str]) -> str:
    """A commit standing for tree `into` once series `name` (whose tip is
    `prerequisite`, built on `base`) is merged into it: the merge of the two,
    with the prerequisite's tree, committed by the role identity at the
    prerequisite's date (the same inputs give the same commit)."""
    date = git(tree, "log", "-1", "--format=%ad", "--date=raw", prerequisite)
    env = role_env(conf, date)
    env.update(GIT_AUTHOR_NAME=conf["SERIES_AUTHOR_NAME"],
               GIT_AUTHOR_EMAIL=conf["SERIES_AUTHOR_EMAIL"], GIT_AUTHOR_DATE=date)
    return git(tree, "commit-tree", f"{prerequisite}^{{tree}}", "-p", base, "-p", prerequisite,
               "-m", f"Merge {name} into {into}", env=env)


def applied_tree(tree: str | Path, start: str, files: Sequence[Path]) -> str:
    """The tree the patch files give, applied in order (git apply --cached)
    on commit `start` in a scratch index: no checkout, the worktree and its
    index untouched. Raises SeriesError naming a patch that does not apply."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(tree, "read-tree", start, env=env)
        for f in files:
            if COVER_RE.match(Path(f).name):
                continue
            res = git_run(tree, "apply", "--cached", str(f), env=env, capture="apart")
            if res.returncode:
                raise SeriesError(f"{f} does not apply to {start}:\n{res.stderr.strip()}")
        return git(tree, "write-tree", env=env)


def check_posting(tree: str | Path, start: str, files: Sequence[Path], branch: str) -> None:
    """What is posted has no prerequisite ids and applies on `start`,
    giving the tree of the workspace branch."""
    with_ids = [f.name for f in files if "\nprerequisite-patch-id:" in f.read_text()]
    if with_ids:
        raise SeriesError(f"{', '.join(with_ids)}: prerequisite-patch-id lines in a series to "
                          "post: netdev CI cannot apply it to the tip of its tree")
    got, want = applied_tree(tree, start, files), git(tree, "rev-parse", f"{branch}^{{tree}}")
    if got != want:
        raise SeriesError(f"the files of {branch} applied on {start[:12]} give tree {got}, "
                          f"not {want} of {branch}")


def send_prep(tree: str | Path, base: str, outdir: str | Path, merged: Collection[str] = (),
              conf: dict[str, str] | None = None, identity: tuple[str, str] | None = None,
              prefix: str = DEFAULT_PREFIX) -> list[tuple[Posting, list[Path]]]:
    """Write each workspace series that can be posted now, in posting order
    (post_order()), to outdir/<tree>/<topic>/ as it is posted. Returns
    [(Posting, files)]; a blocked series, or one merged already, has no files.

    A series building on another that is merged (`merged`) is rebased onto
    merged_base(), its tree with the prerequisite merged, and names that as
    its base-commit: no prerequisite-patch-id. Every series written is
    checked (check_posting): no prerequisite ids, and its patches apply to
    its base giving the workspace branch's tree, so the checks of the stack
    hold for what is posted. identity: as for export().
    """
    conf = conf or load_conf()
    chain = workspace_series(tree, prefix)
    canon_base = base_commit(tree, base)
    if not chain:
        raise SeriesError(f"no {prefix}<tree>/<topic> branches in {tree}: run apply first")
    all_series = [Series(t, topic, None, int(conf.get(version_key(t, topic), "1")),
                         depends=conf.get(base_key(t, topic)) or None) for t, topic, _ in chain]
    postings = post_order(all_series, merged)
    canon_of: dict[str, str] = {}  # series name -> its canonical tip on the stack
    outdir = Path(outdir)
    out: list[tuple[Posting, list[Path]]] = []
    with staged(outdir, [(ser.tree, ser.topic) for ser in all_series], MBOX) as tmp:
        for p in postings:
            ser = p.series
            branch = prefix + ser.name
            prev = prefix + ser.depends if ser.depends else base
            canon_prev = canon_of[ser.depends] if ser.depends else canon_base
            canon_of[ser.name] = canon = canonical_tip(tree, prev, canon_prev, branch, conf)
            if p.blocked or p.merged:
                out.append((p, []))
                continue
            start, tip = canon_base, canon
            if ser.depends:
                start = merged_base(tree, canon_base, canon_prev, ser.depends, ser.tree, conf)
                tip = canonical_chain(tree, start, f"{canon_prev}..{canon}", conf)
            found = recipients(tree, start, tip)
            if found:
                p.to, p.cc = found
            files = write_series(tree, ser.tree, ser.topic, branch, start, tip, start,
                                 tmp / ser.tree / ser.topic, conf, identity, p.to, p.cc)
            check_posting(tree, start, files, branch)
            d = tmp / ser.tree / ser.topic
            mbox_path(d, ser.tree, ser.topic, conf).write_text("".join(
                f.read_text() for f in files))
            out.append((p, files))
    return [(p, [outdir / f.relative_to(tmp) for f in files]) for p, files in out]


def mbox_path(d: Path, tree: str, topic: str, conf: dict[str, str] | None = None) -> Path:
    """d/v<N>.mbox: the series' mails in one mbox, N its version in series.conf."""
    conf = conf or load_conf()
    return d / f"v{conf.get(version_key(tree, topic), '1')}.mbox"


def recipients(tree: str | Path, start: str, tip: str) -> tuple[list[str], list[str]] | None:
    """(To, Cc) of the series start..tip as get_maintainer.pl names them
    for its patches (checks.source.get_maintainers, as the cc_maintainers
    check runs it): the maintainers To, everyone else Cc, without the
    addresses netdev does not expect (source.CC_IGNORE). None when the
    tree has no scripts/get_maintainer.pl."""
    if not (Path(tree) / "scripts/get_maintainer.pl").is_file():
        return None
    to: list[str] = []
    cc: list[str] = []
    for commit in git(tree, "rev-list", "--reverse", f"{start}..{tip}").split():
        code, out, t, c = source.get_maintainers(tree, commit)
        if code:
            raise SeriesError(f"get_maintainer.pl failed on {commit[:12]}: {out.strip()[:300]}")
        to += [a for a in t if a not in to]
        cc += [a for a in c if a not in cc]
    taken = {source.address(a) for a in to} | source.CC_IGNORE
    to = [a for a in to if source.address(a) not in source.CC_IGNORE]
    return to, [a for a in cc if source.address(a) not in taken]


def substitute_identity(text: str, conf: dict[str, str], identity: tuple[str, str]) -> str:
    role = f"{conf['SERIES_AUTHOR_NAME']} <{conf['SERIES_AUTHOR_EMAIL']}>"
    me = f"{identity[0]} <{identity[1]}>"
    text = re.sub(rf"^From: {re.escape(role)}$", f"From: {me}", text, flags=re.M)
    text = re.sub(rf"^{re.escape(conf['SERIES_AUTHOR_NAME'])} (\(\d+\):)$",
                  rf"{identity[0]} \1", text, flags=re.M)
    return re.sub(rf"^Signed-off-by: {re.escape(role)}$", f"Signed-off-by: {me}",
                  text, flags=re.M)


def submitter_identity(tree: str | Path) -> tuple[str, str]:
    name = git(tree, "config", "user.name", check=False)
    email = git(tree, "config", "user.email", check=False)
    if not name or not email:
        raise SeriesError("git user.name/user.email unset: the submitter identity is needed")
    return name, email


def kept_topics(outdir: Path, tree: str, prefix: str) -> None:
    kept = unexported(outdir, {(t, topic) for t, topic, _ in workspace_series(tree, prefix)})
    if kept:
        print(f"kept {', '.join(kept)}: no {prefix}<tree>/<topic> branch in {tree}, left as "
              "they are (remove a directory yourself to drop its series)")


@reports_errors
@logs.printed
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ap.add_argument("--prefix", default=DEFAULT_PREFIX, help="workspace branch prefix")
    a = sub.add_parser("apply", help="apply patches/ to TREE as branches <prefix><tree>/<topic>")
    a.add_argument("tree")
    a.add_argument("base", help="base commit or tag")
    a.add_argument("--patches", type=Path, default=PATCHES, help="default %(default)s")
    a.add_argument("--force", action="store_true",
                   help="move the branches even if they hold commits neither patches/ nor the "
                   "last apply made, or the tree is not clean (uncommitted changes are kept, "
                   "HEAD's commit too)")
    tree_help = "a kernel work tree holding the series/<tree>/<topic> branches (apply made them)"
    base_help = ("the commit or tag the series apply to, as given to apply (the files' "
                 "base-commit:)")
    e = sub.add_parser("export", help="write the workspace branches back to patches/",
                       description="Write every <prefix><tree>/<topic> branch of TREE back as "
                       "OUT/<tree>/<topic>/*.patch (git format-patch against BASE). Only those "
                       "topics are replaced; a file with uncommitted changes there is refused.")
    e.add_argument("tree", help=tree_help)
    e.add_argument("base", help=base_help)
    e.add_argument("--out", default=str(PATCHES),
                   help="where the series go (default: patches/ of this repository)")
    o = sub.add_parser("post-order", help="the order to post the series in, and which can be "
                       "posted now")
    o.add_argument("--patches", type=Path, default=PATCHES, help="default %(default)s")
    s = sub.add_parser("send-prep", help="write the series that can be posted now, as posted, "
                       "with the submitter's identity",
                       description="Write each series that can be posted now (post-order) as "
                       "it is posted: your git identity, To/Cc from get_maintainer.pl, no "
                       "prerequisite ids; checked to apply to its base.")
    s.add_argument("tree", help=tree_help)
    s.add_argument("base", help=base_help)
    s.add_argument("--out", required=True,
                   help="the output directory: one directory per series, <tree>/<topic>/, and "
                   "its mbox, <tree>/<topic>/v<N>.mbox (what tools.series.check and git am "
                   "read)")
    for parser in (o, s):
        parser.add_argument("--merged", action="append", default=[], metavar="TREE/TOPIC",
                            help="this series is merged into the tree of the series building "
                            "on it (repeatable)")
    args = ap.parse_args(argv)
    if args.cmd == "apply":
        applied = apply(args.tree, args.base, patches=args.patches, prefix=args.prefix,
                        force=args.force)
        names = sorted({ser.name for ser, _, _ in applied}, key=lambda n: n)
        print(f"applied {len(applied)} patches to {args.tree}; branches: "
              + ", ".join(args.prefix + n for n in names))
    elif args.cmd == "export":
        files = export(args.tree, args.base, Path(args.out), prefix=args.prefix)
        print(f"exported {len(files)} files to {args.out}")
        kept_topics(Path(args.out), args.tree, args.prefix)
    elif args.cmd == "post-order":
        conf = load_conf(args.patches / "series.conf")
        postings = post_order(load_series(conf, args.patches), args.merged)
        print("posting order (netdev CI applies a series to the tip of its tree):")
        print("\n".join("  " + line for line in order_lines(postings)))
    else:
        done = send_prep(args.tree, args.base, Path(args.out), args.merged,
                         identity=submitter_identity(args.tree), prefix=args.prefix)
        for line in order_lines([p for p, _ in done]):
            print(line)
        for p, files in done:
            if files:
                d = Path(args.out) / p.series.tree / p.series.topic
                print(f"wrote {len(files)} files of {p.series.name} to {d}")
                for box in sorted(d.glob("v*.mbox")):
                    print(f"wrote {box} (the same mails in one mbox)")
                if p.to or p.cc:
                    print(f"  To: {', '.join(p.to)}\n  Cc: {', '.join(p.cc)}")
                else:
                    print(f"  no To/Cc: no scripts/get_maintainer.pl in {args.tree}")
        kept_topics(Path(args.out), args.tree, args.prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
