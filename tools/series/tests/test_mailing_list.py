"""The mailing-list stage: the list's servers (real ones where cheap), the
loopback-only SMTP rule, the bot on bad input, the stage's cases."""

import contextlib
import email.utils
import io
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from email.message import EmailMessage
from pathlib import Path
from unittest import mock

from tools.series import b4flow
from tools.series.checks import patchwork, source
from tools.series import listbot
from tools.series import mailflow
from tools.series import mlist
from ci import pipeline
from ci import pipeline_mail
from ci.tests.test_pipeline_state import handed_on

HAVE_LIST = bool(shutil.which("public-inbox-init")) and Path("/usr/bin/python3").exists()


def tmpdir(test):
    d = Path(tempfile.mkdtemp())
    test.addCleanup(shutil.rmtree, d, True)
    return d


def git(tree, *args, stdin=None):
    env = {**os.environ, "GIT_AUTHOR_NAME": "Sam", "GIT_AUTHOR_EMAIL": "sam@x.invalid",
           "GIT_COMMITTER_NAME": "Sam", "GIT_COMMITTER_EMAIL": "sam@x.invalid"}
    return subprocess.run(["git", "-C", str(tree), *args], env=env, text=True, input=stdin,
                          capture_output=True, check=True).stdout.strip()


class ServerTest(unittest.TestCase):
    def test_port_in_use_is_a_named_failure(self):
        with socket.socket() as s:
            s.bind((mlist.LOOPBACK, 0))
            s.listen()
            port = s.getsockname()[1]
            with self.assertRaisesRegex(mlist.ListError, rf"smtp: port 127.0.0.1:{port} in use"):
                mlist.ensure_free(port, "smtp")

    def test_server_not_answering_is_a_named_failure_not_a_hang(self):
        port = mlist.free_port()  # nothing listens there
        proc = subprocess.Popen(["sleep", "30"])
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        t0 = time.monotonic()
        with self.assertRaisesRegex(mlist.ListError,
                                    rf"httpd did not answer on 127.0.0.1:{port} within 1s"):
            mlist.wait_port(port, "httpd", proc, timeout=1)
        self.assertLess(time.monotonic() - t0, 10)

    def test_server_exiting_is_a_named_failure(self):
        proc = subprocess.Popen(["sh", "-c", "exit 3"])
        proc.wait()
        with self.assertRaisesRegex(mlist.ListError, r"smtp exited with code 3"):
            mlist.wait_port(mlist.free_port(), "smtp", proc, timeout=5)

    @unittest.skipUnless(HAVE_LIST, "public-inbox and aiosmtpd not installed")
    def test_list_in_use_port_fails_and_leaves_nothing_running(self):
        root = tmpdir(self)
        with socket.socket() as s:
            s.bind((mlist.LOOPBACK, 0))
            s.listen()
            lst = mlist.List(root / "l", "list@x.invalid", smtp_port=s.getsockname()[1])
            with self.assertRaisesRegex(mlist.ListError, "smtp: port .* in use"):
                lst.__enter__()
        self.assertEqual(lst.procs, {})

    @unittest.skipUnless(HAVE_LIST, "public-inbox and aiosmtpd not installed")
    def test_real_list_archives_what_it_accepts_and_stops_on_failure(self):
        root = tmpdir(self)
        procs = []
        with self.assertRaises(RuntimeError):
            with mlist.List(root / "l", "list@x.invalid") as lst:
                procs = list(lst.procs.values())
                msg = EmailMessage()
                msg["From"], msg["To"], msg["Subject"] = "a <a@x.invalid>", lst.address, "hi"
                msg["Message-ID"] = "<one@x.invalid>"
                msg.set_content("hello\n")
                lst.send(msg, "a@x.invalid")
                lst.send(b"no colon here\nSubject: x\n\nbody\n", "a@x.invalid")
                # a reply to a long Message-ID keeps it as it is: archives thread by it
                long_id = "<" + "b" * 70 + "@users.noreply.a-seed-28ac61b8.example>"
                reply = EmailMessage()
                reply["From"], reply["To"], reply["Subject"] = "b <b@x.invalid>", lst.address, "Re"
                reply["In-Reply-To"] = long_id
                reply.set_content("reply\n")
                lst.send(reply, "b@x.invalid")
                ep, last = lst.archive().commits()[-1]
                self.assertIn(f"In-Reply-To: {long_id}".encode(), lst.archive().raw(ep, last))
                # a recipient other than the list is refused: nothing is relayed
                with self.assertRaises(Exception):
                    mlist.send(lst.smtp_port, msg, "a@x.invalid", "someone@example.com")
                self.assertEqual(len(lst.spooled()), 3)
                self.assertEqual(lst.archive().count(), 3)
                self.assertIn("<one@x.invalid>", lst.archive().message_ids())
                port = lst.http_port
                raise RuntimeError("a failing step")
        self.assertEqual(len(procs), 2)
        self.assertTrue(all(p.poll() is not None for p in procs))
        with self.assertRaises(OSError):
            socket.create_connection((mlist.LOOPBACK, port), timeout=1).close()


class LoopbackTest(unittest.TestCase):
    def config(self, *pairs):
        path = tmpdir(self) / "gitconfig"
        for k, v in pairs:
            subprocess.run(["git", "config", "-f", str(path), "--add", k, v], check=True)
        return path

    def test_loopback_smtp_accepted(self):
        mlist.check_loopback(self.config(("sendemail.smtpserver", "127.0.0.1")))

    def test_other_smtp_server_refused(self):
        for pairs in ([("sendemail.smtpserver", "smtp.example.com")],
                      [("sendemail.smtpserver", "127.0.0.1"),
                       ("sendemail.work.smtpserver", "mail.example.com")],
                      [("sendemail.smtpserver", "/usr/sbin/sendmail")],
                      [("sendemail.smtpserver", "localhost")],
                      [("user.name", "x")]):
            with self.subTest(pairs=pairs), self.assertRaisesRegex(mlist.ListError, "refused"):
                mlist.check_loopback(self.config(*pairs))

    def test_send_refuses_another_host(self):
        with self.assertRaisesRegex(mlist.ListError, "refused: SMTP server 10.0.0.1"):
            mlist.send(25, b"x", "a@x", "b@x", host="10.0.0.1")

    def test_the_flow_refuses_its_config_with_another_server(self):
        flow = mailflow.MailFlow.__new__(mailflow.MailFlow)
        flow.work, flow.identity = tmpdir(self), ("Sam", "sam@x.invalid")
        flow.scratch, flow.gitconfig = flow.work / "s", flow.work / "s/gitconfig"
        flow.list = mock.Mock(url="http://127.0.0.1:1/all", smtp_port=1)
        flow.write_config()  # its own: accepted
        with self.assertRaisesRegex(mlist.ListError, "sendemail.x.smtpserver=smtp.example.com"):
            flow.write_config([("sendemail.x.smtpserver", "smtp.example.com")])


class WorkDirTest(unittest.TestCase):
    def test_cli_works_in_the_cache_by_default(self):
        """Without --work: $PROJECT_CACHE/ws/mail (the list stopped at once)."""
        tmp = tmpdir(self)
        err = io.StringIO()
        with mock.patch.dict(os.environ, {"PROJECT_CACHE": str(tmp / "cache")}), \
                mock.patch.object(mailflow.mlist, "List",
                                  side_effect=mlist.ListError("not started")) as lst, \
                contextlib.redirect_stderr(err):
            code = mailflow.main([str(tmp / "tree"), "base", "--out", str(tmp / "out"),
                                  "--identity", "Sam <sam@x.invalid>"])
        self.assertEqual((code, err.getvalue()), (1, "error: not started\n"))
        self.assertEqual(lst.call_args.args[0], tmp / "cache/ws/mail/list")


class FakeArchive:
    def __init__(self):
        self.msgs = []

    def add(self, raw):
        self.msgs.append(raw if isinstance(raw, bytes) else raw.as_bytes())

    def commits(self):
        return [("ep", f"{i:040x}") for i in range(len(self.msgs))]

    def raw(self, epoch, commit):
        return self.msgs[int(commit, 16)]


class BotTest(unittest.TestCase):
    def setUp(self):
        self.tree = tmpdir(self) / "t"
        self.tree.mkdir()
        git(self.tree, "init", "-q")
        (self.tree / "a.txt").write_text("one\ntwo\nthree\n")
        git(self.tree, "add", ".")
        git(self.tree, "commit", "-qm", "base")
        self.base = git(self.tree, "rev-parse", "HEAD")
        (self.tree / "a.txt").write_text("one\ntwo\nthree\nfour\n")
        git(self.tree, "commit", "-qam", "net: add four\n\nSigned-off-by: Sam <sam@x.invalid>")
        (self.tree / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
        git(self.tree, "commit", "-qam", "net: add five\n\nSigned-off-by: Sam <sam@x.invalid>")
        self.patches = [git(self.tree, "format-patch", "--stdout", "-1", c)
                        for c in git(self.tree, "rev-list", "--reverse",
                                     f"{self.base}..HEAD").split()]
        git(self.tree, "checkout", "-q", "--detach", self.base)
        self.archive, self.posted = FakeArchive(), []
        self.bot = listbot.Bot(self.archive, self.tree, {"net-next": self.base},
                               self.posted.append, grace=0.2)

    def mail(self, subject, msgid, body, parent=None):
        m = EmailMessage()
        m["From"] = "Sam <sam@x.invalid>"
        m["Subject"], m["Message-ID"] = subject, f"<{msgid}>"
        if parent:
            m["In-Reply-To"] = f"<{parent}>"
        m.set_content(body)
        return m

    def patch_mail(self, i, k, n, msgid, parent, text=None):
        raw = (text or self.patches[i]).encode()
        m = email.message_from_bytes(raw)
        del m["Subject"]
        m["Subject"] = f"[PATCH net-next {k}/{n}] net: add"
        m["Message-ID"] = f"<{msgid}>"
        m["In-Reply-To"] = f"<{parent}>"
        return m

    def test_complete_series_checked_and_answered_on_the_cover(self):
        self.archive.add(self.mail("[PATCH net-next 0/2] two", "c@x", "cover"))
        self.archive.add(self.patch_mail(0, 1, 2, "p1@x", "c@x"))
        self.archive.add(self.patch_mail(1, 2, 2, "p2@x", "c@x"))
        with mock.patch.object(source, "checkpatch", return_value=patchwork.Result("pass", "ok")), \
                mock.patch.object(source, "kdoc", return_value=patchwork.Result("skip", "no C")):
            reps = self.bot.settle(timeout=5)
        self.assertEqual([(r.kind, r.root, r.ok) for r in reps], [("checked", "c@x", True)])
        self.assertEqual(self.posted[0]["In-Reply-To"], "<c@x>")
        self.assertIn("verify_signedoff pass", reps[0].text)
        self.assertIn("build            skip", reps[0].text)
        # its own reply is read, never answered
        self.archive.add(self.posted[0])
        self.assertEqual(self.bot.settle(timeout=1), [])

    def test_checks_stage_build_result_quoted_not_rerun(self):
        self.bot.build = {"net: add": patchwork.Result("fail", "new warning: x.c: unused")}
        self.archive.add(self.mail("[PATCH net-next 0/1] one", "c@x", "cover"))
        self.archive.add(self.patch_mail(0, 1, 1, "p1@x", "c@x"))
        with mock.patch.object(source, "checkpatch", return_value=patchwork.Result("pass", "ok")), \
                mock.patch.object(source, "kdoc", return_value=patchwork.Result("skip", "no C")):
            reps = self.bot.settle(timeout=5)
        self.assertFalse(reps[0].ok)
        self.assertIn("build            fail checks stage: new warning: x.c: unused", reps[0].text)
        self.assertIn("1 check(s) failed", reps[0].text)

    def test_malformed_mail_reported(self):
        self.archive.add(b"From: Sam <sam@x.invalid>\nSubject: [PATCH 1/1] x\n"
                         b"this line has no colon\n\nbody\n")
        reps = self.bot.settle(timeout=5)
        self.assertEqual([(r.kind, r.root) for r in reps], [("malformed", "0" * 40)])
        self.assertIn("MissingHeaderBodySeparatorDefect", reps[0].text)
        self.assertNotIn("In-Reply-To", self.posted[0])

    def test_patch_mail_without_a_diff_is_malformed(self):
        self.archive.add(self.mail("[PATCH net-next 1/1] no diff", "n@x", "just words"))
        reps = self.bot.settle(timeout=5)
        self.assertEqual([r.kind for r in reps], ["malformed"])
        self.assertIn("without a diff", reps[0].text)

    def test_missing_patch_reported_after_grace(self):
        self.archive.add(self.mail("[PATCH net-next 0/2] two", "c@x", "cover"))
        self.archive.add(self.patch_mail(0, 1, 2, "p1@x", "c@x"))
        self.assertEqual(self.bot.poll(), [])  # still waiting for 2/2
        reps = self.bot.settle(timeout=5)
        self.assertEqual([(r.kind, r.root) for r in reps], [("missing", "c@x")])
        self.assertIn("missing 2/2", reps[0].text)

    def test_patch_that_does_not_apply_reported(self):
        bad = self.patches[1].replace(" four\n", " FOUR\n", 1)
        self.archive.add(self.mail("[PATCH net-next 0/1] one", "c@x", "cover"))
        self.archive.add(self.patch_mail(1, 1, 1, "p1@x", "c@x", text=bad))
        reps = self.bot.settle(timeout=5)
        self.assertEqual([(r.kind, r.root) for r in reps], [("no-apply", "c@x")])
        self.assertIn("does not apply", reps[0].text)
        self.assertIn("error:", reps[0].text)


class ReplyTest(unittest.TestCase):
    def test_reply_to_a_folded_message_id_is_one_line(self):
        # An archive refolds a long Message-Id; the reply's headers must not break.
        path = tmpdir(self) / "p.eml"
        long_id = "<20261201-b4-net-next-qdisc-bypass-v1-1-" + "a" * 60 + "@mqbypass.invalid>"
        path.write_bytes(b"From: Sam <sam@x.invalid>\nSubject: [PATCH 1/1] x\n"
                         b"Message-ID:\n " + long_id.encode() + b"\n\nbody\n")
        reply = b4flow.reply_with_trailer(path, b4flow.REVIEWER)
        self.assertEqual(reply["In-Reply-To"], long_id)
        self.assertEqual(reply["References"], long_id)
        reply.as_bytes()


class StageTest(unittest.TestCase):
    def run_stage(self, outcome=None, error=None, reports=None):
        tmp = tmpdir(self)
        (tmp / "logs").mkdir()
        p = pipeline.Pipeline("test", tmp)
        handed_on(p, "mailing_list", tmp, series_tree=tmp / "tree", base={"BASE_TAG": "base/x"},
                  **({"patch_reports": reports} if reports is not None else {}))
        stage = pipeline.Stage("mailing-list")
        with mock.patch.object(pipeline_mail.mailflow, "run_all", autospec=True,
                               return_value=outcome,
                               side_effect=error), \
                mock.patch.object(pipeline_mail.series, "submitter_identity",
                                  return_value=("Sam", "sam@x.invalid")), \
                contextlib.redirect_stdout(io.StringIO()):
            p.stage_mailing_list(stage)
            self.run_all = pipeline_mail.mailflow.run_all
        return stage

    def test_stage_in_the_main_job_after_submission_needing_apply(self):
        plan = pipeline.Pipeline.PLAN["main"]
        self.assertEqual(plan.index("mailing_list"), plan.index("submission") + 1)
        self.assertNotIn("mailing_list", pipeline.Pipeline.PLAN["test"])
        self.assertEqual(pipeline.Pipeline.needs("mailing_list"), ["base", "apply"])
        # The checks stage's reports are read when it ran, not needed.
        self.assertEqual(pipeline.Pipeline.MAY_READ["mailing_list"],
                         {"checks": ("patch_reports",)})
        self.assertEqual(pipeline.Pipeline.select("main", ["base", "apply", "mailing_list"]),
                         ["base", "apply", "mailing_list"])

    def test_the_bot_quotes_the_checks_stages_builds_when_it_ran(self):
        out = mailflow.MailflowResult([], [], {"accepted": 0, "archived": 0, "failed": 0,
                                               "lost": []})
        self.run_stage(out)
        self.assertEqual(self.run_all.call_args.kwargs["build"], {})
        built = patchwork.PatchReport(1, "net/x", "abc", "net: x")
        built.results["build"] = patchwork.Result("pass", "built")
        self.run_stage(out, reports=[built])
        self.assertEqual(self.run_all.call_args.kwargs["build"],
                         {"net: x": built.results["build"]})

    def test_list_failure_is_a_named_stage_failure(self):
        with self.assertRaisesRegex(pipeline.StageFailed, "mailing list: httpd did not answer"):
            self.run_stage(error=mlist.ListError("httpd did not answer on 127.0.0.1:1"))

    def test_cases_per_step_and_a_lost_message_fails(self):
        job = mock.Mock(name="job", steps=[["sent", "pass", 1.0, "v1: 3 messages"]])
        job.name = "net/x"
        bad = [mailflow.BadCase("missing", "c@x", "missing", "pass", "missing 2/2")]
        out = mailflow.MailflowResult([job], bad, {"accepted": 5, "archived": 4, "failed": 0,
                                                   "lost": ["<m@x>"]},
                                      failed=["archive: 5 accepted, 4 archived"])
        with self.assertRaisesRegex(pipeline.StageFailed, "5 accepted, 4 archived"):
            self.run_stage(out)
        out.failed, out.counts = [], {"accepted": 5, "archived": 5, "failed": 0, "lost": []}
        stage = self.run_stage(out)
        got = {(c.suite, c.name): c.status for c in stage.cases}
        self.assertEqual(got, {("mail.net/x", "sent"): "pass",
                               ("mail.bad-input", "missing"): "pass",
                               ("mail.archive", "messages in = messages archived"): "pass"})


if __name__ == "__main__":
    unittest.main()
