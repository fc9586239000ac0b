"""The series model and what every series command shares: series.conf,
the series in patches/ (Series, load_series), the workspace branches of a
kernel tree (workspace_series), git run with errors as SeriesError, and
the submitter's identity in place of the role identity.

The commands, one module each over this one: applying.py (apply, and
what it refuses to lose), exporting.py (export), order.py (the posting
order), sendprep.py (send-prep); series.py is their command line.
"""

import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec

from common.git import git as common_git, git_ok, git_run
from common.paths import ROOT
from tools.series.checks.per_series import mail_subject


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
    """A command's main() (series.py's, stable.py's, ci/stable_vm.py's): a
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


def rfc_key(tree: str, topic: str) -> str:
    return "SERIES_RFC_" + re.sub(r"[^A-Z0-9]", "_", f"{tree}_{topic}".upper())


def is_rfc(conf: dict[str, str], tree: str, topic: str) -> bool:
    """Whether series.conf posts the series as an RFC (SERIES_RFC_<TREE>_<TOPIC>=1)."""
    return conf.get(rfc_key(tree, topic), "0") == "1"


def subject_prefix(conf: dict[str, str], tree: str, topic: str) -> str:
    """The [...] prefix of the series' subjects, without the counter:
    "PATCH net-next", or "RFC PATCH net-next" for an RFC."""
    return ("RFC " if is_rfc(conf, tree, topic) else "") + f"PATCH {tree}"


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


def tip_of(tree: str | Path, branch: str) -> str:
    res = git_run(tree, "rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}",
                  capture="apart")
    return res.stdout.strip() if res.returncode == 0 else ""


def recorded(tree: str | Path, branch: str) -> str:
    """The tip the last apply gave the branch (branch.<name>.seriesApplied)."""
    sha = git(tree, "config", f"branch.{branch}.seriesApplied", check=False)
    return sha if sha and git_ok(tree, "cat-file", "-e", f"{sha}^{{commit}}") else ""


def listed(items: Sequence[str], most: int = 8) -> str:
    more = f", ... ({len(items) - most} more)" if len(items) > most else ""
    return ", ".join(items[:most]) + more


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
