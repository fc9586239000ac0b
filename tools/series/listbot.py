"""A bot on the list archive: each new series checked per patch, the results
posted as a reply to its cover letter, the way netdev's CI reports.

The bot polls the inbox's git (mlist.Archive: one commit per message) and
keeps what it has seen. A mail whose subject carries [PATCH ...] starts or
joins a series: k/N threaded under its 0/N cover letter, or a lone 1/1. A
complete series is applied with `git am` onto the tip of its tree (the
prefix's net or net-next; tips=) in the work tree it is given and every patch
checked by the checks' runner (tools/series/checks/runner.py), its bot
subset: checkpatch, kdoc, verify_signedoff, verify_fixes. The build checks
are not run again: the checks stage's result for a patch of the same subject
is quoted when the bot has it (build=), else said to be absent. A patch the
bot checked before, with the same patch-id and message (a v2 changing only
other patches), keeps its results.

Bad input gets a reply too, saying what is wrong:
  malformed   a mail the parser finds defects in, without From:, Subject: or
              Message-ID:, or a [PATCH k/N] (k > 0) without a diff
  missing     a series still lacking patches `grace` seconds after its cover
  no-apply    a patch `git am` refuses: which one and git's first error
Replies (Re:) and the bot's own mails are read, never answered.
"""

import email
import email.policy
import email.utils
import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Protocol, cast

from common.git import git, git_bytes
from tools.series.checks import patchwork, runner

logger = logging.getLogger(__name__)

BOT = ("mqbypass bot", "bot@mqbypass.invalid")
PATCH_RE = re.compile(r"^\s*\[(?P<prefix>[^\]]*\bPATCH\b[^\]]*)\]\s*(?P<title>.*)$", re.I)
COUNTER_RE = re.compile(r"\b(?P<k>\d+)/(?P<n>\d+)\b")
VERSION_RE = re.compile(r"\bv(?P<v>\d+)\b", re.I)
# The registry's subset that reads the commit alone (runner.BOT).
CHECKS = runner.names(runner.BOT)
DIFF_RE = re.compile(r"^diff --git |^--- \S.*\n\+\+\+ \S", re.M)
# A patch's row in a report: its subject, {check: (status, message)}.
Row = tuple[str, dict[str, tuple[str, str]]]


class Archive(Protocol):
    """What the bot reads (mlist.Archive): the archive's commits in order,
    each as (epoch, commit), and a commit's mail as it came."""

    def commits(self) -> list[tuple[Path, str]]: ...

    def raw(self, epoch: Path, commit: str) -> bytes: ...


@dataclass
class Mail:
    commit: str  # the archive's commit
    raw: bytes
    msgid: str = ""
    subject: str = ""
    sender: str = ""
    parent: str = ""  # In-Reply-To
    prefix: str = ""
    k: int = 0
    n: int = 0
    version: int = 1
    problems: list[str] = field(default_factory=list)  # why it is malformed


@dataclass
class Report:
    kind: str  # checked | malformed | missing | no-apply
    root: str  # the message-id replied to (a malformed mail without one: its commit)
    subject: str
    text: str
    ok: bool
    patches: list[Row] = field(default_factory=list)
    reply_id: str = ""


def clean_id(value: object) -> str:
    m = re.search(r"<([^>]+)>", str(value or ""))
    return m[1] if m else str(value or "").strip()


def parse(commit: str, raw: bytes) -> Mail:
    mail = Mail(commit, raw)
    try:
        # With the default policy the parser gives an EmailMessage.
        msg = cast(EmailMessage, email.message_from_bytes(raw, policy=email.policy.default))
        mail.subject = " ".join(str(msg.get("Subject", "")).split())
        mail.msgid = clean_id(msg.get("Message-ID"))
        mail.sender = email.utils.parseaddr(str(msg.get("From", "")))[1]
        mail.parent = clean_id(msg.get("In-Reply-To"))
        defects = list(msg.defects)
        for part in msg.walk():
            defects += [d for d in part.defects if d not in defects]
        for key in msg.keys():
            defects += list(getattr(msg[key], "defects", []))
        body = msg.get_body(("plain",))
        text = cast(EmailMessage, body).get_content() if body is not None else ""
    except Exception as err:  # the parser itself gave up
        mail.problems.append(f"unparsable: {err}")
        return mail
    mail.problems += [f"{type(d).__name__}: {d}".rstrip(": ") for d in defects]
    for name, value in (("From", mail.sender), ("Subject", mail.subject),
                        ("Message-ID", mail.msgid)):
        if not value:
            mail.problems.append(f"no {name}:")
    m = PATCH_RE.match(mail.subject)
    if m:
        mail.prefix = m["prefix"]
        c = COUNTER_RE.search(m["prefix"])
        mail.k, mail.n = (int(c["k"]), int(c["n"])) if c else (1, 1)
        v = VERSION_RE.search(m["prefix"])
        mail.version = int(v["v"]) if v else 1
        if mail.k > 0 and not DIFF_RE.search(text):
            mail.problems.append(f"[PATCH {mail.k}/{mail.n}] without a diff")
    return mail


def tree_of(prefix: str) -> str:
    words = prefix.lower().split()
    return next((w for w in words if w in ("net", "net-next")), "net-next")


class Bot:
    """Polls `archive`, applies in `worktree` onto `tips` ({tree: commit}),
    posts with `post(message)`. `worktree` is a work tree it may check out
    and clean: it does so before each series, and needs nothing kept there
    between two polls (mailflow gives it the work clone's checkout)."""

    def __init__(self, archive: Archive, worktree: str | Path, tips: dict[str, str],
                 post: Callable[[EmailMessage], object], *, known: dict[str, str] | None = None,
                 build: dict[str, patchwork.Result] | None = None, grace: float = 5.0,
                 address: str = "netdev@mqbypass.invalid") -> None:
        self.archive, self.worktree, self.tips, self.post = archive, Path(worktree), tips, post
        self.known = known or {}
        self.build = build or {}  # patch subject -> patchwork.Result of the checks stage
        self.grace, self.address = grace, address
        self.seen: set[str] = set()  # archive commits read
        self.mails: dict[str, Mail] = {}  # msgid -> Mail
        self.pending: dict[str, float] = {}  # cover msgid -> first seen (monotonic)
        self.done: set[str] = set()  # msgids answered
        # (patch-id, message digest) -> {check: Result}
        self.cache: dict[tuple[str, str], dict[str, patchwork.Result]] = {}
        self.reports: list[Report] = []

    # -- reading the archive --------------------------------------------
    def read(self) -> list[Mail]:
        new = []
        for epoch, commit in self.archive.commits():
            if commit in self.seen:
                continue
            self.seen.add(commit)
            mail = parse(commit, self.archive.raw(epoch, commit))
            if mail.msgid:
                self.mails.setdefault(mail.msgid, mail)
            new.append(mail)
        return new

    def poll(self, final: bool = False) -> list[Report]:
        """Read new mail, answer what can be answered; `final`: no more
        patches are coming (a series still incomplete is reported)."""
        out = []
        for mail in self.read():
            if mail.sender == BOT[1] or mail.subject.lower().startswith("re:"):
                continue
            if mail.problems:
                out.append(self.malformed(mail))
            elif mail.prefix:
                root = mail.msgid if mail.k == 0 or (mail.n == 1 and not mail.parent) \
                    else mail.parent
                self.pending.setdefault(root, time.monotonic())
        for root, since in list(self.pending.items()):
            members = self.series(root)
            if members is None:
                continue
            cover, patches = members
            total = cover.n if cover else 1
            have = sorted({p.k for p in patches})
            if have == list(range(1, total + 1)):
                del self.pending[root]
                out.append(self.check(root, cover, sorted(patches, key=lambda p: p.k)))
            elif final or time.monotonic() - since >= self.grace:
                del self.pending[root]
                missing = [k for k in range(1, total + 1) if k not in have]
                out.append(self.missing(root, cover, patches, missing))
        return out

    def settle(self, timeout: float = 60, interval: float = 0.5) -> list[Report]:
        """Poll until nothing is pending (incomplete series wait `grace`)."""
        out = self.poll()
        deadline = time.monotonic() + timeout
        while self.pending and time.monotonic() < deadline:
            time.sleep(interval)
            out += self.poll()
        if self.pending:
            out += self.poll(final=True)
        return out

    def series(self, root: str) -> tuple[Mail | None, list[Mail]] | None:
        """(cover or None, [patches]) of the series rooted at `root`."""
        head = self.mails.get(root)
        if head is None:
            return None
        if head.k == 0:
            patches = [m for m in self.mails.values()
                       if m.parent == root and m.prefix and m.k > 0 and not m.problems
                       and not m.subject.lower().startswith("re:")]
            return head, patches
        return None, [head]

    # -- answers ------------------------------------------------------------
    def reply(self, kind: str, to: str, subject: str, text: str, ok: bool,
              patches: Sequence[Row] = (), root: str | None = None) -> Report:
        msg = EmailMessage()
        msg["From"] = email.utils.formataddr(BOT)
        msg["To"] = self.address
        msg["Subject"] = "Re: " + (subject or "(no subject)")
        msg["Date"] = email.utils.formatdate()
        msg["Message-ID"] = email.utils.make_msgid("bot", BOT[1].split("@")[1])
        if to:
            msg["In-Reply-To"] = f"<{to}>"
            msg["References"] = f"<{to}>"
        msg.set_content(text)
        self.post(msg)
        rep = Report(kind, root or to, subject, text, ok, list(patches),
                     clean_id(msg["Message-ID"]))
        self.reports.append(rep)
        logger.info(f"  bot: {kind} reply to <{to or '-'}>: {text.splitlines()[2]}")
        return rep

    def malformed(self, mail: Mail) -> Report:
        text = "\n".join(["Hello,", "", "this mail is malformed; the bot did not test it:", "",
                          *[f"  - {p}" for p in mail.problems], "",
                          f"archive commit {mail.commit[:12]} (kept in the archive)"])
        # Without a Message-ID it is named by its archive commit.
        return self.reply("malformed", mail.msgid, mail.subject, text, False,
                          root=mail.msgid or mail.commit)

    def missing(self, root: str, cover: Mail | None, patches: list[Mail],
                missing: list[int]) -> Report:
        total = cover.n if cover else 1
        text = "\n".join([
            "Hello,", "",
            f"this series is incomplete: {len(patches)} of {total} patches arrived, "
            f"missing {', '.join(f'{k}/{total}' for k in missing)}; the bot did not "
            "test it. Please resend the whole series."])
        return self.reply("missing", root, (cover or patches[0]).subject, text, False)

    def env(self) -> dict[str, str]:
        return {**os.environ, "GIT_COMMITTER_NAME": BOT[0], "GIT_COMMITTER_EMAIL": BOT[1]}

    def git(self, *args: str, check: bool = True) -> str:
        """git in the bot's worktree, as the bot."""
        return git(self.worktree, *args, env=self.env(), check=check, timeout=300)

    def check(self, root: str, cover: Mail | None, patches: list[Mail]) -> Report:
        head = cover or patches[0]
        tree = tree_of(head.prefix)
        tip = self.tips.get(tree) or next(iter(self.tips.values()))
        self.git("checkout", "-q", "-f", "--detach", tip)
        self.git("clean", "-qfdx")
        self.git("am", "--abort", check=False)
        total = len(patches)
        applied: list[tuple[Mail, str, str]] = []
        for p in patches:
            before = self.git("rev-parse", "HEAD")
            res = git_bytes(self.worktree, "am", "-q", input=p.raw, timeout=300, env=self.env())
            if res.returncode:
                self.git("am", "--abort", check=False)
                err = (res.stdout + res.stderr).decode(errors="replace").strip().splitlines()
                first = next((ln for ln in err if ln.startswith("error:")),
                             next((ln for ln in err if re.search(r"fail|corrupt", ln, re.I)),
                                  err[0] if err else "git am failed"))
                text = "\n".join([
                    "Hello,", "",
                    f"patch {p.k}/{total} \"{p.subject}\" does not apply to {tree} at "
                    f"{tip[:12]}:", "", f"  {first}", "",
                    f"{len(applied)} patch(es) before it applied; the bot did not test the "
                    "series. Please rebase it onto the tree and resend."])
                return self.reply("no-apply", root, head.subject, text, False)
            applied.append((p, self.git("rev-parse", "HEAD"), before))
        rows, failed = [], 0
        for p, commit, _ in applied:
            results = self.run_checks(tree, commit)
            subject = self.git("log", "-1", "--format=%s", commit)
            build = self.build.get(subject)
            results["build"] = (patchwork.Result(build.status, f"checks stage: {build.message}")
                                if build else patchwork.Result("skip", "not run by the bot; no "
                                                               "checks stage result"))
            failed += sum(1 for r in results.values() if r.status == "fail")
            rows.append((subject, {k: (r.status, r.message) for k, r in results.items()}))
        lines = ["Hello,", "",
                 f"the bot applied this series ({total} patch(es)) to {tree} at {tip[:12]} "
                 "and checked each patch:", ""]
        for (subject, found), (p, _, _) in zip(rows, applied):
            lines.append(f"[{p.k}/{total}] {subject}")
            lines += [f"    {k:<16} {status:<4} {msg}" for k, (status, msg) in found.items()]
        lines += ["", "Result: " + ("all checks passed" if not failed else
                                    f"{failed} check(s) failed")]
        return self.reply("checked", root, head.subject, "\n".join(lines), not failed, rows)

    def run_checks(self, tree: str, commit: str) -> dict[str, patchwork.Result]:
        shown = git_bytes(self.worktree, "show", commit, timeout=120).stdout
        pid = git_bytes(self.worktree, "patch-id", "--stable", input=shown,
                        timeout=120).stdout.decode(errors="replace").split()[:1]
        body = self.git("log", "-1", "--format=%an <%ae>%n%B", commit)
        key = (pid[0] if pid else commit, hashlib.sha256(body.encode()).hexdigest())
        if key in self.cache:
            return {k: patchwork.Result(r.status, r.message + " (same patch checked before)")
                    for k, r in self.cache[key].items()}
        self.git("checkout", "-q", "-f", "--detach", commit)
        # Applied from a mail: the committer is the bot, only the author signs.
        ctx = runner.Context(tree_name=tree, known=self.known, committer_signs=False,
                             crash_fails=True)
        report = patchwork.PatchReport(0, tree, commit, "")
        results = runner.check_patch(self.worktree, report, ctx, CHECKS).results
        self.cache[key] = results
        return dict(results)
