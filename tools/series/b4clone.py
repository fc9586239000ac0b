"""b4flow's work clone and how b4 and git run there: the clone of the
kernel tree (objects shared, refs and config its own, one checkout), the
b4 settings and the sender's identity passed through the environment
(GIT_CONFIG_COUNT), and each failure named by series and step (FlowError).
The steps themselves are b4flow.py's (Flow) and b4review.py's."""

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tools.series import series
from tools.series.checks import source


# Worktrees of the work clone that earlier versions made beside it, a
# kernel checkout each: the round trip's, mailflow's bot's. Removed by setup.
LEGACY_TREES = ("roundtrip", "bot")
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
NETDEV_CHECKPATCH = ("scripts/checkpatch.pl -q --terse --no-summary --mailback --showfile "
                     "--strict --max-line-length=80 --ignore {ignore}")


# A tree without upstream history cannot resolve Fixes: ids: by hand, as the
# flow does for such a tree (checks/source.py says why).
B4_CONFIG = """# b4 settings for posting this tree's series by hand (tools/series/b4flow.py)
[b4]
\tprep-perpatch-check-cmd = /usr/bin/env PATH=/usr/bin:/bin {check}
\tsend-no-patatt-sign = yes
"""


class FlowError(series.SeriesError):
    """A failed step, named by series and step."""

    def __init__(self, name, step, detail):
        super().__init__(f"[{name}] {step}: {detail}")
        self.name, self.step, self.detail = name, step, detail


@dataclass
class Job:
    name: str  # <tree>/<topic>
    tree: str
    topic: str
    workspace: str  # branch in the source tree
    depends: str | None
    version: int
    cover: str  # subject, blank line, body
    branch: str = ""  # the b4 branch in the work clone
    start: str = ""  # the commit it starts from (base, the series it builds on, or
    # the base with that series merged)
    posting: str = ""  # its place in the posting order (series.Posting.status)
    blocked: bool = False  # it waits for the series it builds on to be merged
    on_merged: bool = False  # the series it builds on is merged: it starts from that
    steps: list = field(default_factory=list)  # [step, status, seconds, detail]
    check: str = ""  # b4 prep --check output
    to: list = field(default_factory=list)
    cc: list = field(default_factory=list)
    mails: dict = field(default_factory=dict)  # version -> mbox path
    trees: dict = field(default_factory=dict)  # workspace / roundtrip tree ids
    failed: str = ""


def tail(text, n=15):
    return "\n".join(text.strip().splitlines()[-n:])


class Clone:
    """The work clone of a source tree, and b4 and git run in it as a step of a job."""

    def __init__(self, src, base, out, work, identity, conf, prefix,
                 check_cmd=None, to_cmd=None, cc_cmd=None, merged=()):
        self.src, self.out, self.work = Path(src), Path(out), Path(work)
        self.merged = list(merged)  # series merged into the tree of those building on them
        self.identity, self.conf, self.prefix = identity, conf, prefix
        self.role = (conf["SERIES_AUTHOR_NAME"], conf["SERIES_AUTHOR_EMAIL"])
        self.check_cmd, self.to_cmd, self.cc_cmd = check_cmd, to_cmd, cc_cmd
        # One checkout: the round trip (and mailflow's bot) check out and
        # clean the clone's work tree in turn (LEGACY_TREES: what they had).
        self.repo = self.work / "repo"
        self.base = series.git(self.src, "rev-parse", f"{base}^{{commit}}")

    def env(self, config=()):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_", "GIT_CONFIG_"))
               and k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
        settings = [("user.name", self.identity[0]), ("user.email", self.identity[1]),
                    ("b4.prep-cover-strategy", "commit"),
                    # No lore searches: shazam would look up prerequisites there.
                    ("b4.searchmask", ""),
                    # Not the web endpoint: it would sign, even for -o.
                    ("sendemail.smtpserver", "/bin/false"), *config]
        env["GIT_CONFIG_COUNT"] = str(len(settings))
        for i, (key, value) in enumerate(settings):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
        env["XDG_CACHE_HOME"] = str(self.work / "xdg-cache")
        # Debian's python3 first: checkpatch.pl runs scripts/spdxcheck.py,
        # which needs python3-ply (as in pipeline.py).
        env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")
        return env

    def run(self, job, step, cmd, cwd=None, config=(), env=None, stdin=None):
        res = subprocess.run([str(c) for c in cmd], cwd=cwd or self.repo, text=True,
                             env={**self.env(config), **(env or {})}, input=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=None if stdin is not None else subprocess.DEVNULL)
        res.stdout, res.stderr = ANSI_RE.sub("", res.stdout), ANSI_RE.sub("", res.stderr)
        if res.returncode:
            raise FlowError(job.name, step, f"{' '.join(map(str, cmd))} exited "
                            f"{res.returncode}:\n{tail(res.stdout + res.stderr)}")
        return res

    def b4(self, job, step, *args, cwd=None, config=()):
        res = self.run(job, step, ["b4", "-n", "--offline-mode", "--no-stdin", *args],
                       cwd=cwd, config=config)
        return res.stdout + res.stderr

    def git(self, job, step, *args, cwd=None, env=None, stdin=None):
        # Not common.git: a step's git runs as b4's do, with the flow's
        # identity and settings (env()), and its failure names the job's step.
        return self.run(job, step, ["git", *args], cwd=cwd, env=env,
                        stdin=stdin).stdout.strip()

    def editor(self, text, name):
        """core.editor that writes `text` into the file b4 opens."""
        path = self.work / name
        path.write_text(text)
        return ("core.editor", f"cp {shlex.quote(str(path))}")

    def install_b4_config(self):
        """.b4-config and the cover strategy for b4 run by hand in the work clone."""
        job = Job("*", "", "", "", None, 1, "")
        check = NETDEV_CHECKPATCH.format(ignore=source.CHECKPATCH_IGNORE + ",UNKNOWN_COMMIT_ID")
        (self.repo / ".b4-config").write_text(B4_CONFIG.format(check=check))
        self.git(job, "setup", "config", "b4.prep-cover-strategy", "commit")
        exclude = self.repo / ".git/info/exclude"
        exclude.parent.mkdir(exist_ok=True)
        if ".b4-config" not in (exclude.read_text() if exclude.exists() else ""):
            with exclude.open("a") as f:
                f.write(".b4-config\n")

    def setup(self):
        """The work clone, fresh refs from the source, no b4 branches or tags left."""
        job = Job("*", "", "", "", None, 1, "")
        self.work.mkdir(parents=True, exist_ok=True)
        if not (self.repo / ".git").is_dir():
            shutil.rmtree(self.repo, ignore_errors=True)
            self.git(job, "setup", "clone", "-q", "--shared", "--no-checkout", self.src,
                     self.repo, cwd=self.work)
        self.git(job, "setup", "fetch", "-q", "--force", "--prune", str(self.src),
                 "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
        self.git(job, "setup", "checkout", "-q", "-f", "--detach", self.base)
        # b4 adds its check command to the flow's own: in place only after the run.
        (self.repo / ".b4-config").unlink(missing_ok=True)
        old = self.git(job, "setup", "for-each-ref", "--format=%(refname:short)",
                       "refs/heads/b4/").split()
        if old:  # with their b4 tracking configuration
            self.git(job, "setup", "branch", "-q", "-D", *old)
        self.remove_legacy_trees(job)
        self.git(job, "setup", "worktree", "prune")

    def remove_legacy_trees(self, job):
        """The worktrees of the clone at work/roundtrip and work/bot that an
        earlier version made (LEGACY_TREES), and only those; one whose
        directory is gone is left to `git worktree prune`."""
        legacy = {(self.work / name).resolve() for name in LEGACY_TREES}
        listed = self.git(job, "setup", "worktree", "list", "--porcelain")
        for line in listed.splitlines():
            path = Path(line.removeprefix("worktree "))
            if line.startswith("worktree ") and path.resolve() in legacy \
                    and (path / ".git").is_file():
                self.git(job, "setup", "worktree", "remove", "--force", "--force", path)
