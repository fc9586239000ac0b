"""Submit the series with b4: prep branches, checks, mails, trailers, new versions.

For every workspace series (<prefix><tree>/<topic>, made by series.py apply)
this works in a clone of the kernel tree (objects shared, refs and config its
own; one checkout, which the round trip uses too) and runs these steps, each
named in errors as "[<tree>/<topic>] <step>":

  prep       branch b4/<tree>-<topic> enrolled with `b4 prep -e`: b4's cover
             commit holds the series' cover letter (the branch description),
             the patches carry the sender's git identity instead of the role
             identity; prefix <tree>, revision from series.conf. A series
             building on another starts from it, with its patch ids as
             prerequisites; once that one is merged (merged=, --merged) it
             starts from the base with it merged (series.merged_base) and
             has no prerequisites, as it is posted
  check      `b4 prep --check`, with checkpatch run as netdev runs it
  to-cc      `b4 prep --auto-to-cc` (get_maintainer.pl)
  send       `b4 send -o`: the mails, refused while they name the role
             identity, while the series is blocked in the posting order
             (series.post_order: the series it builds on is not merged yet),
             or when they carry prerequisite-patch-id lines
  roundtrip  `b4 shazam` of the mails (after those of the series it builds on,
             unless that is merged) on the clone's work tree checked out
             afresh (detached, cleaned) at the series' base: the tree must be
             the workspace's; the b4 branch is checked out again after it

and, to exercise the review cycle on the b4 branch (exercise=True, the default):

  trailers   a crafted reply with a Reviewed-by: to patch 1, collected with
             `b4 trailers -u`
  v2         v1 marked as sent, the revision bumped with a changelog in the
             cover letter, the v2 mails written, `b4 prep --compare-to v1`
             (git range-diff v1..v2) saved next to them

b4 settings and the sender identity reach b4 and git through the environment
(GIT_CONFIG_COUNT), so no git configuration file of yours is changed. For
posting by hand, the work clone gets the same settings as b4 users keep
them: a .b4-config (netdev's checkpatch under the system python, which has
ply for spdxcheck.py; no patatt signature) and b4.prep-cover-strategy in its
own git config. There `b4 prep --check` and `b4 send --dry-run` work as is.
"""

import argparse
import email
import email.utils
import json
import logging
import re
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

from common import logs
from common.cache import cache_dir
from common.git import git_run
from tools.series.checks import source
from tools.series import series
# The work clone and the review cycle; their names are this module's too.
from tools.series.b4clone import (ANSI_RE, B4_CONFIG, LEGACY_TREES, NETDEV_CHECKPATCH, Clone,
                                  FlowError, Job, tail)
from tools.series.b4review import LINKMASK, REVIEWER, Review, reply_with_trailer, write_mbox

__all__ = ["ANSI_RE", "B4_CONFIG", "LEGACY_TREES", "NETDEV_CHECKPATCH", "Clone", "FlowError",
           "Job", "tail", "LINKMASK", "REVIEWER", "Review", "reply_with_trailer", "write_mbox",
           "MAGIC", "role_leaks", "Flow", "run_all", "write_summary", "refused_as_blocked",
           "parse_identity", "main"]

logger = logging.getLogger(__name__)

MAGIC = "--- b4-submit-tracking ---"  # b4's marker in its cover commit


def role_leaks(files, conf):
    """Lines of the mails that still name the role identity."""
    names = (conf["SERIES_AUTHOR_NAME"].lower(), conf["SERIES_AUTHOR_EMAIL"].lower())
    return [f"{Path(f).name}: {line.strip()}" for f in files
            for line in Path(f).read_text(errors="replace").splitlines()
            if any(n in line.lower() for n in names)]


class Flow(Clone, Review):
    """The steps of every series in the work clone (Clone: the clone and how
    b4 and git run there; Review: the trailers and v2 steps)."""

    # -- the series ------------------------------------------------------
    def jobs(self):
        out = []
        for tree, topic, branch in series.workspace_series(self.src, self.prefix):
            desc = series.git(self.src, "config", f"branch.{branch}.description", check=False)
            if not desc:  # no cover letter in patches/: the first subject names it
                first = series.git(self.src, "rev-list", "--reverse",
                                   f"{self.start_rev(tree, topic)}..{branch}").split()[0]
                desc = series.git(self.src, "log", "-1", "--format=%s", first)
            out.append(Job(f"{tree}/{topic}", tree, topic, branch,
                           self.conf.get(series.base_key(tree, topic)) or None,
                           int(self.conf.get(series.version_key(tree, topic), "1")),
                           desc.strip() + "\n"))
        if not out:
            raise FlowError("*", "setup", f"no {self.prefix}<tree>/<topic> branches in "
                            f"{self.src}: run series.py apply first")
        try:
            order = series.post_order(out, self.merged)
        except series.SeriesError as err:
            raise FlowError("*", "setup", str(err)) from None
        for p in order:
            p.series.posting, p.series.blocked = p.status, p.blocked
            p.series.on_merged = bool(p.series.depends) and p.prerequisite_merged
        return [p.series for p in order]

    def start_rev(self, tree, topic):
        dep = self.conf.get(series.base_key(tree, topic))
        return self.prefix + dep if dep else self.base

    # -- steps -------------------------------------------------------------
    def sender_chain(self, job, start):
        """The workspace commits again on `start`, the role identity replaced by
        the sender's as author and in Signed-off-by:. Returns the new tip."""
        parent = start
        tip = "origin/" + job.workspace
        for sha in self.git(job, "prep", "rev-list", "--reverse", f"{start}..{tip}").split():
            name, mail, date = self.git(job, "prep", "log", "-1", "--date=raw",
                                        "--format=%an%x00%ae%x00%ad", sha).split("\0")
            if (name, mail) == self.role:
                name, mail = self.identity
            msg = self.git(job, "prep", "cat-file", "commit", sha).partition("\n\n")[2]
            msg = series.substitute_identity(msg, self.conf, self.identity)
            parent = self.git(job, "prep", "commit-tree", f"{sha}^{{tree}}", "-p", parent,
                              stdin=msg, env={"GIT_AUTHOR_NAME": name,
                                              "GIT_AUTHOR_EMAIL": mail,
                                              "GIT_AUTHOR_DATE": date})
        return parent

    def prep(self, job):
        job.start = self.git(job, "prep", "rev-parse", self.src_start(job))
        if job.on_merged:  # as posted: on its tree with the prerequisite merged
            job.start = series.merged_base(self.repo, self.base, job.start, job.depends,
                                           job.tree, self.conf)
        job.branch = f"b4/{job.tree}-{job.topic}"
        self.git(job, "prep", "checkout", "-q", "-f", "-B", job.branch,
                 self.sender_chain(job, job.start))
        revision = ["--force-revision", str(job.version)] if job.version != 1 else []
        rfc = ["RFC"] if series.is_rfc(self.conf, job.tree, job.topic) else []
        self.b4(job, "prep", "prep", "-e", job.start, *revision, "--set-prefixes", *rfc, job.tree,
                "--edit-cover", config=[self.editor(job.cover, "cover.txt")])
        if job.depends and not job.on_merged:
            # What git format-patch --base writes: the base and the patch ids
            # of the series this one builds on.
            deps = [f"patch-id: {pid}" for pid in self.patch_ids(job, self.base, job.start)]
            deps.append(f"base-commit: {self.base}")
            self.b4(job, "prep", "prep", "--edit-deps",
                    config=[self.editor("\n".join(deps) + "\n", "deps.txt")])
        cover, _, data = self.tracking(job, "prep")
        return (f"{job.branch}: cover {cover[:12]} v{data['revision']} + "
                f"{self.git(job, 'prep', 'rev-list', '--count', f'{cover}..{job.branch}')} "
                f"patches on {job.start[:12]}")

    def src_start(self, job):
        rev = self.start_rev(job.tree, job.topic)
        return "origin/" + rev if rev != self.base else rev

    def patch_ids(self, job, base, tip):
        ids = []
        for sha in self.git(job, "prep", "rev-list", "--reverse", f"{base}..{tip}").split():
            diff = self.git(job, "prep", "show", "--format=", sha)
            ids.append(self.git(job, "prep", "patch-id", "--stable", stdin=diff + "\n").split()[0])
        return ids

    def tracking(self, job, step):
        """b4's cover commit: (its id, the cover letter, b4's series data)."""
        sha = self.git(job, step, "rev-list", "--reverse", f"{job.start}..{job.branch}").split()[0]
        cover, _, data = self.git(job, step, "log", "-1", "--format=%B", sha).partition(MAGIC)
        if not data:
            raise FlowError(job.name, step, f"{sha[:12]} is not b4's cover commit")
        return sha, cover.strip(), json.loads(data[data.index("{"):])["series"]

    def default_check_cmd(self, job):
        if not (self.repo / "scripts/checkpatch.pl").is_file():
            return None  # b4 then says it found no checkpatch
        ignore = source.CHECKPATCH_IGNORE
        text = self.git(job, "check", "log", "--format=%B", f"{job.start}..{job.branch}")
        if source.unresolved_ids(self.repo, text):
            # A tree without history cannot resolve the ids of Fixes: tags and
            # commit references (checks/source.py says why).
            ignore += ",UNKNOWN_COMMIT_ID"
        return NETDEV_CHECKPATCH.format(ignore=ignore)

    def check(self, job):
        cmd = self.check_cmd or self.default_check_cmd(job)
        config = [("b4.prep-perpatch-check-cmd", cmd)] if cmd else []
        out = self.b4(job, "check", "prep", "-C", "--check", config=config)
        job.check = "\n".join(ln for ln in out.splitlines() if ln != "Running in OFFLINE mode")
        m = re.search(r"^Success: (\d+), Warning: (\d+), Error: (\d+)$", out, re.M)
        if not m:
            raise FlowError(job.name, "check", f"no b4 check summary:\n{tail(out)}")
        if int(m[2]) or int(m[3]):
            raise FlowError(job.name, "check", f"{m[0]}\n{tail(job.check, 30)}")
        return m[0]

    def to_cc(self, job):
        config = [(k, v) for k, v in (("b4.send-auto-to-cmd", self.to_cmd),
                                      ("b4.send-auto-cc-cmd", self.cc_cmd)) if v]
        self.b4(job, "to-cc", "prep", "--auto-to-cc", config=config)
        cover = self.tracking(job, "to-cc")[1]
        job.to = re.findall(r"^To: (.*)$", cover, re.M)
        job.cc = re.findall(r"^Cc: (.*)$", cover, re.M)
        if not job.to and not job.cc:
            raise FlowError(job.name, "to-cc", "no To: or Cc: found for the series")
        return f"To: {', '.join(job.to) or '-'}; Cc: {', '.join(job.cc) or '-'}"

    def send(self, job, step="send"):
        """b4 send -o: the mails of the current revision in out/<tree>/<topic>/v<N>/."""
        if job.blocked:
            raise FlowError(job.name, step, f"refused: {job.posting} (netdev CI applies a "
                            f"series to the tip of its tree); post {job.depends} first, then "
                            f"run again with --merged {job.depends}")
        if set(self.identity) & set(self.role):
            raise FlowError(job.name, step, f"the sender identity {self.identity[0]} "
                            f"<{self.identity[1]}> is the role identity: set your own git "
                            "user.name and user.email")
        rev = self.tracking(job, step)[2]["revision"]
        dest = self.out / job.tree / job.topic / f"v{rev}"
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        self.b4(job, step, "send", "-o", tmp, "--no-sign")
        files = sorted(tmp.glob("*.eml"))
        leaks = role_leaks(files, self.conf)
        prereqs = [f.name for f in files if "\nprerequisite-patch-id:" in f.read_text()]
        if not files or leaks or prereqs:
            shutil.rmtree(tmp, ignore_errors=True)
            if not files:
                detail = "no mails written"
            elif leaks:
                detail = ("refused: the mails still carry the role identity:\n  "
                          + "\n  ".join(leaks[:10]))
            else:
                detail = (f"refused: prerequisite-patch-id in {', '.join(prereqs)}: netdev CI "
                          "applies a series to the tip of its tree")
            raise FlowError(job.name, step, detail)
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
        job.mails[rev] = write_mbox(sorted(dest.glob("*.eml")), dest.with_suffix(".mbox"))
        return f"{len(files)} mails in {dest}"

    def apply_chain(self, job, done, step, missing, shazam, reset=None):
        """shazam(j) of the mails of the series `job` builds on (from `done`),
        then of its own, in the clone's work tree (self.repo) checked out
        afresh (detached) at the base; of its own only, on the base with it
        merged, once that series is merged. reset(), if given, runs in the
        work tree before the checkout; a shazam that fails has its git am
        given up, so that the work tree holds no am in progress for the
        steps after. Returns the chain applied, the tree it gave and that of
        job's workspace. A series of the chain without mails is a FlowError
        of `step`: `missing`, its name for {}."""
        chain = [job]
        while chain[0].depends and not chain[0].on_merged:
            dep = done.get(chain[0].depends)
            if not dep or not dep.mails:
                raise FlowError(job.name, step, missing.format(chain[0].depends))
            chain.insert(0, dep)
        start = chain[0].start if chain[0].on_merged else self.base
        if reset:
            reset()
        self.git(job, step, "checkout", "-q", "-f", "--detach", start, cwd=self.repo)
        self.git(job, step, "clean", "-qfdx", cwd=self.repo)
        try:
            for j in chain:
                shazam(j)
        except FlowError:
            git_run(self.repo, "am", "--abort", capture="apart", timeout=60)
            raise
        got = self.git(job, step, "rev-parse", "HEAD^{tree}", cwd=self.repo)
        want = series.git(self.src, "rev-parse", f"{job.workspace}^{{tree}}")
        return chain, got, want

    def on_branch(self, job, step):
        """b4 prep, send and trailers work on the checked-out b4 branch."""
        self.git(job, step, "checkout", "-q", "-f", job.branch)

    def roundtrip(self, job, done):
        """b4 shazam of the mails of the series `job` builds on (from `done`),
        then of its own, on the work tree checked out afresh at the base; of
        its own only, on the base with it merged, once that series is merged.
        The b4 branch is checked out again after, for the steps after and for
        posting by hand."""
        try:
            chain, got, want = self.apply_chain(
                job, done, "roundtrip", "needs the mails of {}, which has none",
                lambda j: self.b4(job, "roundtrip", "shazam", "-m", j.mails[min(j.mails)],
                                  cwd=self.repo))
        finally:
            self.on_branch(job, "roundtrip")
        job.trees = {"workspace": want, "roundtrip": got}
        if got != want:
            raise FlowError(job.name, "roundtrip", f"tree {got} after b4 shazam of "
                            f"{', '.join(j.name for j in chain)} is not {want} of {job.workspace}")
        return f"tree {got} = {job.workspace}"

    # -- driver ------------------------------------------------------------
    def step(self, job, name, fn, *args):
        t0 = time.monotonic()
        try:
            detail = fn(job, *args)
        except FlowError as err:
            job.steps.append([name, "fail", round(time.monotonic() - t0, 1), err.detail])
            job.failed = str(err)
            logger.info(f"  {err}")
            raise
        secs = time.monotonic() - t0
        job.steps.append([name, "pass", round(secs, 1), detail])
        logger.info(f"  [{job.name}] {name}: ok in {secs:.1f}s: {detail}")

    def run_series(self, job, done, exercise=True):
        self.step(job, "prep", self.prep)
        self.step(job, "check", self.check)
        self.step(job, "to-cc", self.to_cc)
        self.step(job, "send", self.send)
        self.step(job, "roundtrip", self.roundtrip, done)
        if exercise:
            self.step(job, "trailers", self.trailers)
            self.step(job, "v2", self.bump, [f"Collected {email.utils.formataddr(REVIEWER)}'s "
                                             "Reviewed-by: (trailer exercise, not a review)"])


def run_all(tree, base_rev, out_dir, *, prefix="ci/", conf=None, identity=None,
            work=None, exercise=True, check_cmd=None, to_cmd=None, cc_cmd=None, merged=(),
            stands=None):
    """Every workspace series of `tree` through b4 (see the module doc), in
    posting order; `merged` names the series merged already (series.post_order).
    `stands`: those merged as the posting order in b4.md stands, when
    `merged` only takes them as merged to put the series building on them
    through b4 as posted (the pipeline's; default: `merged`).

    `prefix` is the workspace branch prefix (the pipeline's ci/), `identity`
    the sender (default: git user.name/user.email of `tree`), `work` the clone
    b4 works in (default $PROJECT_CACHE/ws/b4). Writes out_dir/<tree>/<topic>/
    (v<N>/ and v<N>.mbox: the mails to send, N from series.conf; review.mbox,
    v<N+1>/, range-diff-v<N>-v<N+1>.txt: the exercise) and out_dir/b4.json,
    b4.md. Returns the jobs; raises
    FlowError naming every failed series and step after trying them all.
    """
    conf = conf or series.load_conf()
    out_dir = Path(out_dir)
    t0 = time.monotonic()
    if identity is None:
        try:
            identity = series.submitter_identity(tree)
        except series.SeriesError as err:
            raise FlowError("*", "identity", str(err)) from None
    flow = Flow(tree, base_rev, out_dir, work or cache_dir() / "ws/b4", identity, conf, prefix,
                check_cmd, to_cmd, cc_cmd, merged)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    flow.setup()
    logger.info(f"==> b4: {identity[0]} <{identity[1]}> sending; work clone {flow.repo} ready in "
                f"{time.monotonic() - t0:.0f}s")
    jobs, done = flow.jobs(), {}
    logger.info("==> b4: posting order: " + "; ".join(f"{j.name}: {j.posting}" for j in jobs))
    for job in jobs:
        logger.info(f"==> b4: {job.name} (v{job.version}, {job.workspace})")
        try:
            flow.run_series(job, done, exercise)
        except FlowError as err:
            job.failed = job.failed or str(err)
        done[job.name] = job
    write_summary(jobs, out_dir, time.monotonic() - t0, merged,
                  merged if stands is None else stands)
    flow.install_b4_config()
    failed = [j for j in jobs if j.failed]
    if failed:  # the details are in the log and b4.md
        failure = FlowError("*", "b4", f"{len(failed)} of {len(jobs)} series failed:\n"
                            + "\n".join(j.failed.splitlines()[0] for j in failed))
        failure.jobs = jobs
        raise failure
    return jobs


def write_summary(jobs, out_dir, seconds, merged=(), stands=()):
    data = {"seconds": round(seconds, 1), "series": [
        {**{k: v for k, v in asdict(j).items() if k != "cover"},
         "mails": {str(k): str(v) for k, v in j.mails.items()}} for j in jobs]}
    (out_dir / "b4.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [f"# b4 ({seconds:.0f} s)", "", "| series | step | status | s | detail |",
             "|---|---|---|---|---|"]
    for j in jobs:
        for name, status, secs, detail in j.steps:
            lines.append(f"| {j.name} | {name} | {status} | {secs} | "
                         f"{detail.splitlines()[0] if detail else ''} |")
    lines += ["", "## Posting order", ""]
    lines += series.order_lines(series.post_order(jobs, stands))
    taken = sorted(set(merged) - set(stands))
    if taken:
        lines += ["", f"b4 ran with {', '.join(taken)} taken as merged: the series building "
                  "on it went through b4 as they will be posted."]
    for j in jobs:
        lines += ["", f"## {j.name}: b4 prep --check", "", "```", j.check or "(not run)", "```"]
    (out_dir / "b4.md").write_text("\n".join(lines) + "\n")


def refused_as_blocked(job):
    """Whether the job's only failure is the refusal at send of a series
    blocked in the posting order (Flow.send): every step before passed. Not
    a failure; a blocked series failing an earlier step (check, ...) is one."""
    if not (job.blocked and job.steps):
        return False
    *before, (step, status, _, detail) = job.steps
    return ((step, status) == ("send", "fail") and detail.startswith(f"refused: {job.posting}")
            and all(s[1] == "pass" for s in before))


def parse_identity(text):
    name, addr = email.utils.parseaddr(text)
    if not name or "@" not in addr:
        raise argparse.ArgumentTypeError(f"not 'Name <email>': {text}")
    return name, addr


@logs.printed
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="every series through b4 prep, check, auto-to-cc, send -o, "
                       "round trip (and the trailers/v2 exercise)")
    r.add_argument("tree", help="kernel tree with the workspace series branches")
    r.add_argument("base", help="base commit or tag the series were applied to")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--prefix", default=series.DEFAULT_PREFIX, help="workspace branch prefix")
    r.add_argument("--work", help="where b4 works (default $PROJECT_CACHE/ws/b4)")
    r.add_argument("--conf", help="series.conf (default patches/series.conf)")
    r.add_argument("--identity", type=parse_identity,
                   help="sender 'Name <email>' (default: git user.name/user.email of TREE)")
    r.add_argument("--no-exercise", action="store_true", help="skip the trailers and v2 steps")
    r.add_argument("--check-cmd", help="b4 prep --check command (default: netdev checkpatch)")
    r.add_argument("--to-cmd", help="auto-to command (default: b4's get_maintainer.pl)")
    r.add_argument("--cc-cmd", help="auto-cc command (default: b4's get_maintainer.pl)")
    r.add_argument("--merged", action="append", default=[], metavar="TREE/TOPIC",
                   help="this series is merged into the tree of the series building on it: "
                   "they are posted on the base with it merged (repeatable)")
    args = ap.parse_args(argv)
    conf = series.load_conf(args.conf) if args.conf else series.load_conf()
    try:
        run_all(args.tree, args.base, args.out, prefix=args.prefix, conf=conf,
                identity=args.identity, work=args.work, exercise=not args.no_exercise,
                check_cmd=args.check_cmd, to_cmd=args.to_cmd, cc_cmd=args.cc_cmd,
                merged=args.merged)
    except series.SeriesError as err:  # FlowError too
        jobs = getattr(err, "jobs", [])
        if jobs and all(refused_as_blocked(j) for j in jobs if j.failed):
            # Refused to send while it waits for another series: not a failure.
            print("blocked, not failed: " + "; ".join(f"{j.name}: {j.posting}"
                                                      for j in jobs if j.failed))
            return 0
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
