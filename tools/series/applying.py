"""series apply: the patches of patches/ made into the workspace branches
of a kernel tree, as git am --3way makes them, checked before anything is
written; what it would lose (uncommitted changes, an unfinished git
command, commits neither patches/ nor the last apply made) is refused by
name (apply())."""

import logging
import os
import re
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common.git import git_run
from tools.series.model import (DEFAULT_PREFIX, PATCHES, TREES, Series, SeriesError, git,
                                in_progress, leaves, listed, load_conf, load_series, recorded,
                                role_env, tip_of, work_tree, base_commit)

logger = logging.getLogger(__name__)


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
