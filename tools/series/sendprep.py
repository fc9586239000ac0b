"""series send-prep: the series that can be posted now, as posted (the
submitter's identity, To/Cc from get_maintainer.pl, no prerequisite ids),
checked to apply to their base; each also as one mbox."""

import os
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path

from common.git import git_run
from tools.series.checks import source
from tools.series.exporting import MBOX, canonical_chain, canonical_tip, staged, write_series
from tools.series.model import (COVER_RE, DEFAULT_PREFIX, Series, SeriesError, base_commit,
                                base_key, git, load_conf, role_env, version_key,
                                workspace_series)
from tools.series.order import Posting, post_order


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
