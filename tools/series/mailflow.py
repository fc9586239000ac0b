"""The mailing-list loop on loopback: b4 send, the archive, b4 shazam, trailers, v2, a bot.

With the list of mlist.py up (SMTP on 127.0.0.1 into a public-inbox archive,
public-inbox-httpd serving it), every workspace series goes, in posting order
(each prerequisite taken as merged, as the submission stage does), through:

  prep      b4flow's prep: the b4 branch with the sender's identity
  sent      `b4 send --to <list>` (not -o) over SMTP to 127.0.0.1
  archived  the archive holds the cover letter and every patch threaded under
            it, read back over HTTP (t.mbox.gz)
  bot       the bot's reply to the cover letter, in the archive
  applied   `b4 shazam <cover message-id>` from the archive (b4.midmask) on the
            work clone's tree checked out afresh (detached, cleaned) at the
            series' base: its tree is the workspace's
  review    a reply with Reviewed-by: to patch 1, posted to the list
  trailer   `b4 trailers -u -F <cover>`: the Reviewed-by: taken from the archive
  v2        the cover letter with its changelog (Link: to v1 in the archive),
            `b4 send` again (b4 rerolled the branch after v1), archived, and
            the bot's reply to it
  compared  `b4 am` of v1 and v2 from the archive, `b4 diff -m` of the two

then the bad input (bad_input()): a malformed mail, a series missing a patch,
a patch that does not apply; the bot must answer each as such, and every
message the SMTP server accepted must be in the archive (counted in and out).

The work clone (work/repo) has one checkout, used in turn: the steps on the
b4 branch check it out (b4flow.Flow.on_branch), applied and the bot check
out and clean what they need. They run one after the other (the bot answers
when a step calls settle()), and each starts from a forced checkout, so none
sees what another left.

b4 and git read a git configuration written in the work directory
(GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM): the user's is never read or changed.
check_loopback refuses it unless its SMTP server is 127.0.0.1.
"""

import argparse
import email
import email.policy
import email.utils
import gzip
import json
import logging
import os
import re
import shutil
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from common import logs
from common.cache import cache_dir
from common.git import git_run
from common.paths import ROOT
from tools.series import b4flow
from tools.series.checks import source
from tools.series import listbot
from tools.series import mlist
from tools.series import series

logger = logging.getLogger(__name__)

LIST_ADDRESS = "netdev@mqbypass.invalid"
TESTER = ("List Tester", "tester@mqbypass.invalid")
HTTP_TIMEOUT = 30
B4_TIMEOUT = 300
STEPS = ("prep", "sent", "archived", "bot", "applied", "review", "trailer", "v2", "compared")


@dataclass
class BadCase:
    name: str  # malformed | missing | no-apply
    msgid: str
    want: str
    status: str = "fail"
    detail: str = ""


@dataclass
class MailflowResult:
    jobs: list
    bad: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)


class MailFlow(b4flow.Flow):
    def __init__(self, src, base, out, work, identity, conf, prefix, merged, lst,
                 build=None, known=None):
        super().__init__(src, base, out, work, identity, conf, prefix, merged=merged)
        self.list, self.build, self.known = lst, build or {}, known or {}
        self.scratch = self.work / "scratch"
        self.gitconfig = self.scratch / "gitconfig"
        self.bot = None
        self.covers = {}  # job name -> {revision: cover message-id}

    # -- configuration ---------------------------------------------------
    def write_config(self, extra=()):
        shutil.rmtree(self.scratch, ignore_errors=True)
        (self.scratch / "config").mkdir(parents=True)
        settings = [("user.name", self.identity[0]), ("user.email", self.identity[1]),
                    ("b4.prep-cover-strategy", "commit"),
                    ("b4.midmask", f"{self.list.url}/%s"),
                    ("b4.linkmask", f"{self.list.url}/%s/"),
                    # The inbox is indexed without Xapian: no search endpoint.
                    ("b4.searchmask", ""),
                    # The submission stage runs b4 prep --check and --auto-to-cc.
                    ("b4.prep-pre-flight-checks", "disable-all"),
                    ("sendemail.smtpserver", mlist.LOOPBACK),
                    ("sendemail.smtpserverport", str(self.list.smtp_port)), *extra]
        for key, value in settings:
            git_run(None, "config", "-f", str(self.gitconfig), "--add", key, value,
                    capture="none", timeout=30).check_returncode()
        mlist.check_loopback(self.gitconfig)

    def env(self, config=()):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_", "GIT_CONFIG"))
               and k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
        env.update(GIT_CONFIG_GLOBAL=str(self.gitconfig), GIT_CONFIG_NOSYSTEM="1",
                   XDG_CONFIG_HOME=str(self.scratch / "config"),
                   XDG_CACHE_HOME=str(self.scratch / "cache"),
                   PATH="/usr/bin:/bin:" + env.get("PATH", ""))
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for i, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
        return env

    def b4net(self, job, step, *args, cwd=None, stdin=None):
        """b4 with the network on (the local httpd), a fresh cache each time."""
        shutil.rmtree(self.scratch / "cache", ignore_errors=True)
        res = self.run(job, step, ["timeout", str(B4_TIMEOUT), "b4", "-n", "--no-stdin", *args],
                       cwd=cwd, stdin=stdin)
        return res.stdout + res.stderr

    # -- the archive, over HTTP ------------------------------------------
    def thread(self, msgid):
        url = f"{self.list.url}/{msgid}/t.mbox.gz"
        try:
            with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as resp:
                data = gzip.decompress(resp.read())
        except OSError as err:
            raise mlist.ListError(f"httpd: {url}: {err}") from None
        msgs = []
        for chunk in re.split(rb"^From mboxrd@z .*\n", data, flags=re.M):
            if chunk.strip():
                raw = re.sub(rb"^>(>*From )", rb"\1", chunk, flags=re.M)  # mboxrd
                msg = email.message_from_bytes(raw, policy=email.policy.default)
                msg.raw = raw  # as archived, not refolded
                msgs.append(msg)
        return msgs

    # -- steps -------------------------------------------------------------
    def sent(self, job):
        mlist.check_loopback(self.gitconfig)
        self.on_branch(job, "sent")
        before = self.list.archive().count()
        rev = self.tracking(job, "sent")[2]["revision"]
        out = self.b4net(job, "sent", "send", "--to", LIST_ADDRESS, "--not-me-too",
                         "--no-sign", stdin="\n")
        m = re.search(r"^Sent (\d+) messages", out, re.M)
        if not m:
            raise b4flow.FlowError(job.name, "sent", f"b4 send said no 'Sent N messages':\n"
                                   f"{b4flow.tail(out)}")
        new = self.list.archive().commits()[before:]
        covers = [listbot.parse(c, self.list.archive().raw(ep, c)) for ep, c in new]
        cover = next((c for c in covers if c.k == 0 and c.prefix), None)
        if cover is None:
            raise b4flow.FlowError(job.name, "sent", f"no cover letter among the {len(new)} "
                                   "new messages in the archive")
        self.covers.setdefault(job.name, {})[rev] = cover.msgid
        job.mails[rev] = cover.msgid
        return f"v{rev}: {m[1]} messages to {LIST_ADDRESS} via {mlist.LOOPBACK}:" \
               f"{self.list.smtp_port}; cover <{cover.msgid}>"

    def archived(self, job, rev):
        cover = self.covers[job.name][rev]
        msgs = self.thread(cover)
        patches = [m for m in msgs if listbot.PATCH_RE.match(str(m["Subject"]))
                   and not str(m["Subject"]).lower().startswith("re:")]
        top = [m for m in patches if listbot.clean_id(m["Message-ID"]) == cover]
        n = listbot.parse("", top[0].as_bytes()).n if top else 0
        under = [m for m in patches if listbot.clean_id(m["In-Reply-To"]) == cover]
        if not top or len(under) != n or n == 0:
            raise b4flow.FlowError(job.name, "archived", f"thread of <{cover}>: cover "
                                   f"{'found' if top else 'missing'}, {len(under)} of {n} "
                                   "patches threaded under it")
        return f"v{rev}: cover + {n} patches threaded under it at {self.list.url}/{cover}/"

    def bot_reply(self, job, rev):
        cover = self.covers[job.name][rev]
        self.bot.settle()
        rep = next((r for r in self.bot.reports if r.root == cover), None)
        if rep is None:
            raise b4flow.FlowError(job.name, "bot", f"no bot reply to <{cover}>")
        ids = {listbot.clean_id(m["Message-ID"]) for m in self.thread(cover)}
        if rep.reply_id not in ids:
            raise b4flow.FlowError(job.name, "bot", f"the bot's reply <{rep.reply_id}> is not in "
                                   "the archived thread")
        job.bot = getattr(job, "bot", {})
        job.bot[rev] = rep.text
        if rep.kind != "checked" or not rep.ok:
            raise b4flow.FlowError(job.name, "bot", f"v{rev}: {rep.kind}: "
                                   f"{rep.text.splitlines()[-1]}")
        return f"v{rev}: reply <{rep.reply_id}> in the thread: {rep.text.splitlines()[-1]}"

    def applied(self, job, done):
        # A shazam that failed before leaves its git am half done: given up first.
        _, got, want = self.apply_chain(
            job, done, "applied", "needs {} on the list first",
            lambda j: self.b4net(job, "applied", "shazam", j.mails[min(j.mails)], cwd=self.repo),
            reset=lambda: git_run(self.repo, "am", "--abort", capture="apart", timeout=60))
        job.trees = {"workspace": want, "archive": got}
        if got != want:
            raise b4flow.FlowError(job.name, "applied", f"tree {got} after b4 shazam from the "
                                   f"archive is not {want} of {job.workspace}")
        return f"b4 shazam <{job.mails[min(job.mails)]}>: tree {got[:12]} = {job.workspace}"

    def review(self, job):
        cover = self.covers[job.name][min(self.covers[job.name])]
        patch = next(m for m in self.thread(cover)
                     if listbot.clean_id(m["In-Reply-To"]) == cover
                     and re.search(r"\b1/\d+\]", str(m["Subject"])))
        path = self.scratch / "patch1.eml"
        path.write_bytes(patch.raw)
        reply = b4flow.reply_with_trailer(path, b4flow.REVIEWER)
        before = self.list.archive().count()
        self.list.send(reply, b4flow.REVIEWER[1])
        if self.list.archive().count() != before + 1:
            raise b4flow.FlowError(job.name, "review", "the reply did not reach the archive")
        subject = " ".join(str(patch["Subject"]).split())
        job.review_subject = re.sub(r"^\[[^\]]*\]\s*", "", subject)
        return f"{reply['Message-ID']} Reviewed-by: to \"{patch['Subject']}\""

    def trailer(self, job):
        cover_id = self.covers[job.name][min(self.covers[job.name])]
        self.on_branch(job, "trailer")
        self.b4net(job, "trailer", "trailers", "-u", "-F", cover_id)
        want = f"Reviewed-by: {email.utils.formataddr(b4flow.REVIEWER)}"
        cover = self.tracking(job, "trailer")[0]
        for sha in self.git(job, "trailer", "rev-list", f"{cover}..{job.branch}").split():
            body = self.git(job, "trailer", "log", "-1", "--format=%B", sha)
            if body.splitlines()[0] == job.review_subject:
                if want not in body.splitlines():
                    raise b4flow.FlowError(job.name, "trailer", f"{want} not collected into "
                                           f"{sha[:12]}")
                return f"{want} from the archive into {sha[:12]} {job.review_subject}"
        raise b4flow.FlowError(job.name, "trailer", f"no commit {job.review_subject!r}")

    def v2(self, job):
        self.on_branch(job, "v2")
        _, cover, data = self.tracking(job, "v2")
        new = data["revision"]
        old_id = self.covers[job.name][min(self.covers[job.name])]
        log = "\n".join([f"Changes in v{new}:",
                         f"- Collected {email.utils.formataddr(b4flow.REVIEWER)}'s Reviewed-by: "
                         "(from the list archive)",
                         f"- Link to v{new - 1}: {self.list.url}/{old_id}/"])
        m = re.search(r"^Changes in v\d+:", cover, re.M)
        cover = (cover[:m.start()] + log + "\n\n" + cover[m.start():] if m
                 else cover + "\n\n---\n" + log)
        self.b4(job, "v2", "prep", "--edit-cover",
                config=[self.editor(cover + "\n", "cover.txt")])
        sent = self.sent(job)
        archived = self.archived(job, new)
        bot = self.bot_reply(job, new)
        return f"{sent}; {archived}; bot {bot}"

    def compared(self, job):
        revs = sorted(self.covers[job.name])
        old, new = revs[0], revs[-1]
        d = self.scratch / "am"
        shutil.rmtree(d, ignore_errors=True)
        boxes = []
        for rev in (old, new):
            out_dir = d / f"v{rev}"
            self.b4net(job, "compared", "am", "-o", out_dir, self.covers[job.name][rev])
            mbx = sorted(out_dir.glob("*.mbx"))
            if not mbx:
                raise b4flow.FlowError(job.name, "compared", f"b4 am of v{rev} wrote no .mbx")
            boxes.append(mbx[0])
        path = self.out / job.tree / job.topic / f"range-diff-v{old}-v{new}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.b4net(job, "compared", "diff", "-m", *boxes, "-o", path)
        text = path.read_text() if path.is_file() else ""
        marks = re.findall(r"^\s*\d+:\s+[0-9a-f]+ ([=!<>]) ", b4flow.ANSI_RE.sub("", text), re.M)
        if not marks:
            raise b4flow.FlowError(job.name, "compared", f"no range-diff from b4 diff -m:\n"
                                   f"{b4flow.tail(text)}")
        return (f"b4 diff of v{old} and v{new} from the archive: {marks.count('=')} same, "
                f"{marks.count('!')} changed, {marks.count('<') + marks.count('>')} "
                f"added/dropped (b4 am gives v1 the trailers the list collected too); "
                f"{path.name}")

    # -- the driver ----------------------------------------------------------
    def start_bot(self, jobs):
        tips = {"net": self.base, "net-next": self.base}
        for j in jobs:  # net merged into net-next, as netdev merges them
            if j.on_merged and j.tree == "net-next":
                tips["net-next"] = j.start
        # The bot works in the work clone's checkout (the module doc says why
        # it may): it checks out and cleans it before each series it applies.
        self.bot = listbot.Bot(self.list.archive(), self.repo, tips,
                               lambda msg: self.list.send(msg, listbot.BOT[1]),
                               known=self.known, build=self.build,
                               address=LIST_ADDRESS)
        self.bot.tips_text = ", ".join(f"{k} at {v[:12]}" for k, v in tips.items())

    def run_series(self, job, done, exercise=True):
        self.step(job, "sent", self.sent)
        self.step(job, "archived", self.archived, min(self.covers[job.name]))
        self.step(job, "bot", self.bot_reply, min(self.covers[job.name]))
        self.step(job, "applied", self.applied, done)
        self.step(job, "review", self.review)
        self.step(job, "trailer", self.trailer)
        self.step(job, "v2", self.v2)
        self.step(job, "compared", self.compared)

    # -- bad input -------------------------------------------------------------
    def bad_input(self, jobs):
        """The three bad cases, built from a patch the archive holds."""
        src = next(j for j in jobs if j.mails)
        cover_id = self.covers[src.name][min(self.covers[src.name])]
        patch = next(m for m in self.thread(cover_id)
                     if listbot.clean_id(m["In-Reply-To"]) == cover_id
                     and re.search(r"\b1/\d+\]", str(m["Subject"])))
        raw = patch.raw
        cases = []

        def msgid(tag):
            return email.utils.make_msgid(tag, "mqbypass.invalid")

        # 1. malformed: a header line without a colon, a multipart without
        #    its boundary, no Message-ID.
        bad = (f"From: {email.utils.formataddr(TESTER)}\r\nTo: {LIST_ADDRESS}\r\n"
               "Subject: [PATCH net-next 1/1] net: malformed\r\n"
               f"Date: {email.utils.formatdate()}\r\n"
               "this header line has no colon\r\nMIME-Version: 1.0\r\n"
               "Content-Type: multipart/mixed\r\n\r\nbody with no boundary\r\n").encode()
        before = self.list.archive().count()
        self.list.send(bad, TESTER[1])
        commit = self.list.archive().commits()[before][1]
        cases.append(BadCase("malformed", commit, "malformed"))

        # 2. a series missing its patch 2/2.
        cover = EmailMessage()
        cid = msgid("missing")
        for k, v in (("From", email.utils.formataddr(TESTER)), ("To", LIST_ADDRESS),
                     ("Subject", "[PATCH net-next 0/2] a series missing a patch"),
                     ("Date", email.utils.formatdate()), ("Message-ID", cid)):
            cover[k] = v
        cover.set_content("Patch 2/2 never comes.\n")
        p1 = email.message_from_bytes(raw, policy=email.policy.compat32)
        for k, v in (("Message-ID", msgid("missing1")), ("In-Reply-To", cid),
                     ("References", cid), ("Subject", "[PATCH net-next 1/2] "
                                           + re.sub(r"^\[[^\]]*\]\s*", "",
                                                    str(patch["Subject"])))):
            del p1[k]
            p1[k] = v
        for m in (cover, p1):
            self.list.send(m, TESTER[1])
        cases.append(BadCase("missing", listbot.clean_id(cid), "missing"))

        # 3. a patch whose context is not in the tree.
        body = raw.decode("utf-8", "surrogateescape")
        hunk = re.search(r"^@@ [^\n]*\n( [^\n]*\n)", body, re.M)
        text = (body[:hunk.start(1)] + " this context line is not in the tree\n"
                + body[hunk.end(1):]) if hunk else body
        p = email.message_from_bytes(text.encode("utf-8", "surrogateescape"),
                                     policy=email.policy.compat32)
        nid = msgid("noapply")
        title = re.sub(r"^\[[^\]]*\]\s*", "", str(patch["Subject"]))
        for k, v in (("Message-ID", nid), ("In-Reply-To", None), ("References", None),
                     ("Subject", "[PATCH net-next] " + title)):
            del p[k]
            if v:
                p[k] = v
        self.list.send(p, TESTER[1])
        cases.append(BadCase("no-apply", listbot.clean_id(nid), "no-apply"))

        self.bot.settle()
        for c in cases:
            rep = next((r for r in self.bot.reports if r.root == c.msgid), None)
            if rep is None:
                c.detail = "no bot reply"
            elif rep.kind != c.want:
                c.detail = f"the bot answered {rep.kind}, not {c.want}: {rep.text.splitlines()}"
            else:
                c.status = "pass"
                c.detail = " ".join(ln.strip() for ln in rep.text.splitlines()[2:5] if ln)
        return cases

    def counts(self):
        spooled = self.list.spooled()
        failed = sorted(self.list.spool.glob("*.failed"))
        archived = self.list.archive().message_ids()
        ids_in = [listbot.clean_id(email.message_from_bytes(p.read_bytes())["Message-ID"])
                  for p in spooled]
        lost = [i for i in ids_in if i and f"<{i}>" not in archived]
        return {"accepted": len(spooled), "archived": len(archived), "failed": len(failed),
                "lost": lost}


def run_all(tree, base_rev, out_dir, *, prefix="ci/", conf=None, identity=None,
            work=None, merged=(), build=None, smtp_port=None, http_port=None):
    """The loop (module doc) for every workspace series of `tree`; writes
    out_dir/mail.md, mail.json, the bot's replies and the range-diffs. Returns
    an MailflowResult; raises mlist.ListError when the list cannot run."""
    conf = conf or series.load_conf()
    out_dir = Path(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    work = Path(work or cache_dir() / "ws/mail")
    if identity is None:
        identity = series.submitter_identity(tree)
    t0 = time.monotonic()
    known = source.load_known_commits(ROOT / "kernel/known-commits.txt")
    with mlist.List(work / "list", LIST_ADDRESS, smtp_port, http_port) as lst:
        flow = MailFlow(tree, base_rev, out_dir, work, identity, conf, prefix, merged, lst,
                        build=build, known=known)
        flow.write_config()
        shutil.copy(flow.gitconfig, out_dir / "gitconfig")
        flow.setup()
        jobs, done = flow.jobs(), {}
        for job in jobs:
            try:
                flow.step(job, "prep", flow.prep)
            except b4flow.FlowError as err:
                job.failed = str(err)
        flow.start_bot(jobs)
        logger.info(f"==> mail: list {LIST_ADDRESS} at smtp {mlist.LOOPBACK}:{lst.smtp_port}, "
                    f"archive {lst.url}/; bot on {flow.bot.tips_text}")
        for job in jobs:
            if job.failed:
                continue
            logger.info(f"==> mail: {job.name}")
            try:
                flow.run_series(job, done)
            except (b4flow.FlowError, mlist.ListError) as err:
                job.failed = job.failed or str(err)
            except Exception as err:  # a bug here fails the series, the list still stops
                job.failed = f"[{job.name}] {type(err).__name__}: {err}"
                logger.info(f"  {job.failed}")
            done[job.name] = job
        outcome = MailflowResult(jobs)
        try:
            outcome.bad = flow.bad_input(jobs)
        except (mlist.ListError, StopIteration, IndexError) as err:
            outcome.failed.append(f"bad input: {err}")
        outcome.counts = flow.counts()
        for r in flow.bot.reports:
            name = f"bot-{len(list(out_dir.glob('bot-*.txt'))) + 1:02d}-{r.kind}.txt"
            (out_dir / name).write_text(f"In-Reply-To: <{r.root}>\nSubject: Re: {r.subject}\n\n"
                                        f"{r.text}\n")
    c = outcome.counts
    if c["accepted"] != c["archived"] or c["failed"] or c["lost"]:
        outcome.failed.append(f"archive: {c['accepted']} messages accepted, {c['archived']} "
                              f"archived, {c['failed']} failed delivery, lost: {c['lost']}")
    outcome.failed += [j.failed.splitlines()[0] for j in jobs if j.failed]
    outcome.failed += [f"bad input {b.name}: {b.detail}" for b in outcome.bad
                       if b.status != "pass"]
    write_report(outcome, out_dir, time.monotonic() - t0)
    return outcome


def write_report(outcome, out_dir, seconds):
    jobs = outcome.jobs
    data = {"seconds": round(seconds, 1), "counts": outcome.counts, "failed": outcome.failed,
            "series": [{"name": j.name, "steps": j.steps, "covers": {str(k): v for k, v
                                                                     in j.mails.items()},
                        "trees": j.trees, "failed": j.failed} for j in jobs],
            "bad_input": [b.__dict__ for b in outcome.bad]}
    (out_dir / "mail.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [f"# The mailing list on loopback ({seconds:.0f} s)", "",
             "| series | step | status | s | detail |", "|---|---|---|---|---|"]
    for j in jobs:
        for name, status, secs, detail in j.steps:
            lines.append(f"| {j.name} | {name} | {status} | {secs} | "
                         f"{detail.splitlines()[0] if detail else ''} |")
    lines += ["", "## Bad input", "", "| case | status | bot |", "|---|---|---|"]
    lines += [f"| {b.name} | {b.status} | {b.detail} |" for b in outcome.bad]
    c = outcome.counts
    lines += ["", "## Archive", "",
              f"{c.get('accepted')} messages accepted by the SMTP server, {c.get('archived')} in "
              f"the archive, {c.get('failed')} failed delivery, {len(c.get('lost', []))} lost"]
    if outcome.failed:
        lines += ["", "## Failures", "", *[f"- {f}" for f in outcome.failed]]
    (out_dir / "mail.md").write_text("\n".join(lines) + "\n")


@logs.printed
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", help="kernel tree with the workspace series branches")
    ap.add_argument("base", help="base commit or tag the series were applied to")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prefix", default=series.DEFAULT_PREFIX)
    ap.add_argument("--work", help="work directory (default $PROJECT_CACHE/ws/mail)")
    ap.add_argument("--identity", type=b4flow.parse_identity)
    ap.add_argument("--merged", action="append", default=[], metavar="TREE/TOPIC")
    args = ap.parse_args(argv)
    try:
        out = run_all(args.tree, args.base, args.out, prefix=args.prefix, work=args.work,
                      identity=args.identity, merged=args.merged)
    except (mlist.ListError, series.SeriesError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for f in out.failed:
        print(f"failed: {f}", file=sys.stderr)
    return 1 if out.failed else 0


if __name__ == "__main__":
    sys.exit(main())
