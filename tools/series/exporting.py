"""series export: the workspace branches written back as git format-patch
files, canonical (the files depend only on the content), into a scratch
directory first (staged()): only the exported topics are replaced, and a
file with uncommitted changes is refused by name."""

import contextlib
import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from common.git import git_run
from tools.series.model import (DEFAULT_PREFIX, PATCHES, TREES, SeriesError, base_commit,
                                base_key, git, load_conf, role_env, substitute_identity,
                                subject_prefix, version_key, workspace_series)


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


PATCH_FILES = ("*.patch",)  # export's files
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
            f"--subject-prefix={subject_prefix(conf, tree_name, topic)}", f"--base={base}",
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
