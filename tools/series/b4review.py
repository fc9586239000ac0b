"""b4flow's review cycle on a b4 branch: a crafted reply with a
Reviewed-by: collected with `b4 trailers -u`, then revision N+1 with its
changelog, mails and range-diff to N (Review, a part of b4flow.Flow)."""

import email
import email.utils
import mailbox
import re
from email.message import EmailMessage
from pathlib import Path

from tools.series.b4clone import FlowError, tail


REVIEWER = ("Trailer Test", "trailer-test@mqbypass.invalid")
LINKMASK = "https://lore.kernel.org/r/{}"


def write_mbox(files, path, extra=()):
    """An mbox of the mail files (and extra messages), as b4 am reads it."""
    path.unlink(missing_ok=True)
    box = mailbox.mbox(path)
    for msg in [email.message_from_bytes(Path(f).read_bytes()) for f in files] + list(extra):
        box.add(msg)
    box.close()
    return path


def reply_with_trailer(patch_file, who):
    """A reviewer's reply to a patch mail, ending in a Reviewed-by: trailer."""
    orig = email.message_from_bytes(Path(patch_file).read_bytes())
    quoted = "\n".join("> " + ln for ln in orig.get_payload().splitlines()[:6])
    msg = EmailMessage()
    msg["From"] = email.utils.formataddr(who)
    msg["Subject"] = "Re: " + " ".join(orig["Subject"].split())
    msg["Date"] = email.utils.formatdate()
    msg["Message-Id"] = email.utils.make_msgid("review", who[1].split("@")[1])
    # A long Message-Id comes folded from an archive: one line here.
    msgid = " ".join(orig["Message-Id"].split())
    msg["In-Reply-To"] = msgid
    msg["References"] = " ".join(" ".join(filter(None, [orig["References"], msgid])).split())
    msg.set_content(f"{quoted}\n\nLooks right to me.\n\n"
                    f"Reviewed-by: {email.utils.formataddr(who)}\n")
    return msg


class Review:
    """The trailers and v2 steps (b4flow.Flow's; they use its tracking() and send())."""

    def mark_sent(self, job):
        """What b4 send does after sending (not with -o): a sent/ tag of the
        revision, whose base-commit is the cover commit (empty, so range-diff
        from it sees exactly the patches)."""
        cover, text, data = self.tracking(job, "trailers")
        rev, cid = data["revision"], data["change-id"]
        msg = f"{text}\n\n---\nbase-commit: {cover}\nchange-id: {cid}\n"
        self.git(job, "trailers", "tag", "-f", "-a", "-F", "-", f"sent/{cid}-v{rev}", "HEAD",
                 stdin=msg)

    def trailers(self, job):
        rev = min(job.mails)
        files = sorted((self.out / job.tree / job.topic / f"v{rev}").glob("*.eml"))
        patch = next(f for f in files if not f.name.startswith("0000-"))
        self.mark_sent(job)
        reply = reply_with_trailer(patch, REVIEWER)
        box = write_mbox(files, self.out / job.tree / job.topic / "review.mbox", [reply])
        root = email.message_from_bytes(files[0].read_bytes())["Message-Id"].strip("<>")
        self.b4(job, "trailers", "trailers", "-u", "-m", box, "-F", root)
        subject = re.sub(r"^\[[^\]]*\]\s*", "", " ".join(
            email.message_from_bytes(patch.read_bytes())["Subject"].split()))
        want = f"Reviewed-by: {email.utils.formataddr(REVIEWER)}"
        cover = self.tracking(job, "trailers")[0]
        for sha in self.git(job, "trailers", "rev-list", f"{cover}..{job.branch}").split():
            body = self.git(job, "trailers", "log", "-1", "--format=%B", sha)
            if body.splitlines()[0] == subject:
                if want not in body.splitlines():
                    raise FlowError(job.name, "trailers", f"{want} not collected into {sha[:12]} "
                                    f"{subject}")
                return f"{want} collected into {sha[:12]} {subject}"
        raise FlowError(job.name, "trailers", f"no commit with subject {subject!r}")

    def bump(self, job, changes):
        """Revision N+1 with a changelog, its mails and the range-diff to N."""
        _, cover, data = self.tracking(job, "v2")
        old, new = data["revision"], data["revision"] + 1
        first = sorted((self.out / job.tree / job.topic / f"v{old}").glob("*.eml"))[0]
        msgid = email.message_from_bytes(first.read_bytes())["Message-Id"].strip("<>")
        log = "\n".join([f"Changes in v{new}:", *[f"- {c}" for c in changes],
                         f"- Link to v{old}: {LINKMASK.format(msgid)}"])
        m = re.search(r"^Changes in v\d+:", cover, re.M)
        cover = (cover[:m.start()] + log + "\n\n" + cover[m.start():] if m
                 else cover + "\n\n---\n" + log)
        self.b4(job, "v2", "prep", "--force-revision", str(new), "--edit-cover",
                config=[self.editor(cover + "\n", "cover.txt")])
        sent = self.send(job, "v2")
        res = self.run(job, "v2", ["b4", "-n", "--offline-mode", "--no-stdin", "prep",
                                   "--compare-to", f"v{old}"])
        if not re.search(r"^\s*\d+:\s+[0-9a-f]+ [=!<>] ", res.stdout, re.M):
            raise FlowError(job.name, "v2", f"no range-diff from b4 prep --compare-to "
                            f"v{old}:\n{tail(res.stdout + res.stderr)}")
        path = self.out / job.tree / job.topic / f"range-diff-v{old}-v{new}.txt"
        path.write_text(res.stdout)
        mail0 = sorted((self.out / job.tree / job.topic / f"v{new}").glob("*.eml"))[0]
        if f"Changes in v{new}:" not in mail0.read_text():
            raise FlowError(job.name, "v2", f"no changelog in {mail0.name}")
        return f"{sent}; {path.name}"
