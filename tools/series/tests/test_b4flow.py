"""b4flow on a small synthetic repository: two series (one building on the
other) through b4 prep, check, auto-to-cc, send -o, the b4 shazam round trip,
trailers and v2; the role identity replaced, and refused when it remains; the
dependent series refused until the one it builds on is merged, then posted
on the base with it merged, without prerequisite ids."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from tools.series import b4flow

ROLE = ("Multiqueue Bypass Series", "series@mqbypass.invalid")
SENDER = ("Jane Sender", "jane@example.org")
PREFIX = "wsp/"
CONF = {"SERIES_AUTHOR_NAME": ROLE[0], "SERIES_AUTHOR_EMAIL": ROLE[1],
        "SERIES_VERSION_NET_FIX": "1", "SERIES_VERSION_NET_NEXT_FEAT": "2",
        "SERIES_BASE_NET_NEXT_FEAT": "net/fix"}
VERSIONS = {"net/fix": 1, "net-next/feat": 2}
COVERS = {"net/fix": "net: fix the frobnicator\n\nThe frobnicator counts twice; count once.\n",
          "net-next/feat": "net: frobnicate per queue\n\nOne frobnicator per queue.\n"}


def git(repo, *args, env=None, stdin=None):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True, input=stdin,
                          env={**os.environ, **(env or {})}).stdout.strip()


def role_env():
    return {"GIT_AUTHOR_NAME": ROLE[0], "GIT_AUTHOR_EMAIL": ROLE[1],
            "GIT_COMMITTER_NAME": ROLE[0], "GIT_COMMITTER_EMAIL": ROLE[1]}


def commit(repo, path, line, subject):
    f = Path(repo) / path
    f.write_text((f.read_text() if f.exists() else "") + line + "\n")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", subject, "-m", f"Add {line!r} to {path}.",
        "-m", f"Signed-off-by: {ROLE[0]} <{ROLE[1]}>", env=role_env())


def make_workspace(root):
    """A tiny tree with the branches series.py apply makes: wsp/net/fix on
    the base, wsp/net-next/feat on top of it, cover letters as descriptions."""
    src = Path(root) / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    (src / "README").write_text("tiny tree\n")
    commit(src, "net.c", "int frob;", "base")
    git(src, "tag", "base")
    git(src, "checkout", "-q", "-b", PREFIX + "net/fix")
    for i in range(1, 4):
        commit(src, "net.c", f"int fix{i};", f"net: fix the frobnicator, part {i}")
    git(src, "checkout", "-q", "-b", PREFIX + "net-next/feat")
    for i in range(1, 3):
        commit(src, "feat.c", f"int queue{i};", f"net: frobnicate queue {i}")
    for name, cover in COVERS.items():
        git(src, "config", f"branch.{PREFIX}{name}.description", cover)
    git(src, "checkout", "-q", "--detach", "base")
    return src


def b4_version():
    try:
        out = subprocess.run(["b4", "--version"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", out)[:2])


def script(root, name, text):
    path = Path(root) / name
    path.write_text("#!/bin/sh\ncat >/dev/null\n" + text)
    path.chmod(0o755)
    return str(path)


@unittest.skipUnless(b4_version() >= (0, 14) and shutil.which("git-filter-repo"),
                     "needs b4 0.14 or newer and git-filter-repo (ci/setup-host.sh)")
class B4FlowTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="b4flow-test-"))
        cls.addClassCleanup(shutil.rmtree, cls.tmp)  # also when setUpClass fails
        cls.src = make_workspace(cls.tmp)
        cls.stubs = {"check_cmd": script(cls.tmp, "check", ""),
                     "to_cmd": script(cls.tmp, "to", "echo 'Maint One <m1@example.org>'\n"),
                     "cc_cmd": script(cls.tmp, "cc", "echo netdev@vger.kernel.org\n")}
        cls.out = cls.tmp / "out"
        cls.applied = {}  # series -> the commit its round trip gave
        apply_chain = b4flow.Flow.apply_chain

        def recorded(flow, job, *args, **kw):
            out = apply_chain(flow, job, *args, **kw)
            cls.applied[job.name] = git(flow.repo, "rev-parse", "HEAD")
            return out

        # As after net/fix is merged into net-next: both series can be posted.
        with mock.patch.object(b4flow.Flow, "apply_chain", recorded):
            cls.jobs = {j.name: j for j in b4flow.run_all(
                cls.src, "base", cls.out, prefix=PREFIX, conf=CONF,
                identity=SENDER, work=cls.tmp / "work", merged=["net/fix"], **cls.stubs)}
        cls.repo = cls.tmp / "work/repo"

    def mails(self, name, rev=None):
        return sorted((self.out / name / f"v{rev or VERSIONS[name]}").glob("*.eml"))

    def flow(self, identity=SENDER, **kw):
        work = Path(tempfile.mkdtemp(dir=self.tmp))
        return b4flow.Flow(self.src, "base", work / "out", work / "work", identity, CONF,
                           PREFIX, **{**self.stubs, **kw})

    def merge_commit(self):
        """The base with net/fix merged, which net-next/feat was posted on."""
        return self.jobs["net-next/feat"].start

    def test_every_step_passed(self):
        for name, job in self.jobs.items():
            self.assertEqual([(s[0], s[1]) for s in job.steps],
                             [(s, "pass") for s in ("prep", "check", "to-cc", "send", "roundtrip",
                                                    "trailers", "v2")], name)

    def test_roundtrip_gives_the_workspace_tree(self):
        for name, job in self.jobs.items():
            want = git(self.src, "rev-parse", f"{PREFIX}{name}^{{tree}}")
            self.assertEqual(job.trees, {"workspace": want, "roundtrip": want}, name)
        # The dependent series was applied on the base with net/fix merged:
        # 3 fixes, the merge, 2 patches.
        got = self.applied["net-next/feat"]
        self.assertEqual(git(self.repo, "rev-list", "--count", f"base..{got}"), "6")
        self.assertEqual(git(self.repo, "rev-parse", f"{got}~2"), self.merge_commit())

    def test_one_checkout_the_round_trip_in_the_clone(self):
        """The round trip works in the clone's own checkout: no worktree
        beside it, and the last series' b4 branch checked out again after,
        clean, for posting by hand."""
        self.assertEqual(sorted(p.name for p in (self.tmp / "work").iterdir()),
                         ["cover.txt", "repo", "xdg-cache"])
        self.assertEqual(git(self.repo, "worktree", "list", "--porcelain").count("worktree "), 1)
        self.assertEqual(git(self.repo, "branch", "--show-current"), "b4/net-next-feat")
        self.assertEqual(git(self.repo, "status", "--porcelain", "--untracked-files=no"), "")

    def test_setup_removes_the_worktrees_earlier_versions_made(self):
        """work/roundtrip and work/bot, worktrees of the clone that earlier
        versions kept (a kernel checkout each), go at setup, also one
        removed by hand; another worktree of the clone stays."""
        flow = self.flow()
        flow.setup()
        for name in (*b4flow.LEGACY_TREES, "mine"):
            git(flow.repo, "worktree", "add", "-q", "--detach", str(flow.work / name), "base")
        shutil.rmtree(flow.work / "bot")  # removed by hand: its registration pruned
        flow.setup()
        self.assertEqual(sorted(p.name for p in flow.work.iterdir()), ["mine", "repo"])
        listed = git(flow.repo, "worktree", "list", "--porcelain")
        self.assertEqual(re.findall(r"(?m)^worktree .*/(\w+)$", listed), ["repo", "mine"])

    def test_a_failed_shazam_leaves_no_am_in_progress(self):
        """The round trip's git am, failing, is given up: the checkout the
        steps after use holds no am in progress."""
        flow = self.flow()
        flow.setup()
        job = flow.jobs()[0]
        flow.prep(job)
        mails = []
        for f in self.mails("net/fix"):  # patch 2's context not in the tree
            bad = flow.work / f.name
            bad.write_text(f.read_text().replace(" int fix1;", " int not_in_the_tree;"))
            mails.append(bad)
        job.mails = {1: b4flow.write_mbox(mails, flow.work / "bad.mbox")}
        with self.assertRaises(b4flow.FlowError) as err:
            flow.roundtrip(job, {})
        self.assertIn("Patch failed at 0002", str(err.exception))
        rebase = git(flow.repo, "rev-parse", "--git-path", "rebase-apply")
        self.assertFalse((flow.repo / rebase).exists())
        self.assertEqual(git(flow.repo, "branch", "--show-current"), job.branch)

    def test_mails_carry_the_sender_not_the_role(self):
        files = self.mails("net/fix")
        self.assertEqual([f.name[:4] for f in files], ["0000", "0001", "0002", "0003"])
        self.assertEqual(b4flow.role_leaks(files, CONF), [])
        patch = files[1].read_text()
        self.assertIn("From: Jane Sender <jane@example.org>", patch)
        self.assertIn("Signed-off-by: Jane Sender <jane@example.org>", patch)
        self.assertIn("Subject: [PATCH net 1/3] net: fix the frobnicator, part 1", patch)
        self.assertIn("To: Maint One <m1@example.org>", patch)

    def test_cover_letter_is_the_series_cover(self):
        cover = self.mails("net/fix")[0].read_text()
        self.assertIn("Subject: [PATCH net 0/3] net: fix the frobnicator", cover)
        self.assertIn("The frobnicator counts twice; count once.", cover)
        self.assertIn(f"base-commit: {git(self.src, 'rev-parse', 'base')}", cover)
        # A series building on a merged one: its base is the base with that
        # one merged (the merge of the two), no prerequisite ids.
        dep = self.mails("net-next/feat")[0].read_text()
        self.assertIn("Subject: [PATCH net-next v2 0/2] net: frobnicate per queue", dep)
        self.assertIn(f"base-commit: {self.merge_commit()}", dep)
        self.assertNotIn("prerequisite-patch-id:", "".join(
            f.read_text() for f in self.mails("net-next/feat")))
        self.assertEqual(git(self.repo, "log", "-1", "--format=%P%n%s", self.merge_commit()),
                         f"{git(self.src, 'rev-parse', 'base')} "
                         f"{git(self.src, 'rev-parse', PREFIX + 'net/fix')}\n"
                         "Merge net/fix into net-next")

    def test_check_output_recorded(self):
        self.assertIn("Success: 3, Warning: 0, Error: 0", self.jobs["net/fix"].check)
        self.assertIn("Success: 2, Warning: 0, Error: 0", self.jobs["net-next/feat"].check)

    def test_trailers_collected(self):
        job = self.jobs["net/fix"]
        msg = git(self.repo, "log", "--format=%B", f"{job.branch}~3..{job.branch}~2")
        self.assertTrue(msg.startswith("net: fix the frobnicator, part 1"), msg)
        self.assertIn("Reviewed-by: Trailer Test <trailer-test@mqbypass.invalid>", msg)
        other = git(self.repo, "log", "--format=%B", f"{job.branch}~2..{job.branch}")
        self.assertNotIn("Reviewed-by:", other)

    def test_next_version_with_changelog_and_range_diff(self):
        for name, old in VERSIONS.items():
            new = self.mails(name, old + 1)
            self.assertTrue(new, name)
            cover = new[0].read_text()
            self.assertRegex(cover, rf"Subject: \[PATCH net(-next)? v{old + 1} 0/\d\]")
            self.assertIn(f"Changes in v{old + 1}:", cover)
            old_id = re.search(r"^Message-Id: <(.*)>$", self.mails(name)[0].read_text(), re.M)[1]
            self.assertIn(f"- Link to v{old}: https://lore.kernel.org/r/{old_id}", cover)
            rd = (self.out / name / f"range-diff-v{old}-v{old + 1}.txt").read_text()
            self.assertRegex(rd, r"(?m)^1: +[0-9a-f]+ ! +1: +[0-9a-f]+ ")
            self.assertIn("+    Reviewed-by: Trailer Test", rd)
            self.assertRegex(rd, r"(?m)^2: +[0-9a-f]+ = +2: +[0-9a-f]+ ")

    def test_default_check_leaves_unknown_referenced_ids_out(self):
        """b4's per-patch checkpatch, like the checks stage's: a `commit
        <id> ("...")` reference the tree's history lacks (the Debian import
        has none) would be an UNKNOWN_COMMIT_ID warning, and a warning fails
        the submission: it is left out, as for a Fixes: tag's id."""
        repo = Path(tempfile.mkdtemp(dir=self.tmp))
        git(repo, "init", "-q")
        (repo / "scripts").mkdir()
        (repo / "scripts/checkpatch.pl").write_text("")
        text = 'x: y\n\nSince commit 0123456789ab ("net: listed\nthing") it does.\n'
        fake = types.SimpleNamespace(repo=repo, git=lambda *a, **kw: text)
        job = types.SimpleNamespace(start="s", branch="b")
        self.assertIn("UNKNOWN_COMMIT_ID", b4flow.Flow.default_check_cmd(fake, job))
        text = "x: y\n\nNo reference.\n"
        self.assertNotIn("UNKNOWN_COMMIT_ID", b4flow.Flow.default_check_cmd(fake, job))

    def test_work_clone_carries_b4_settings_for_use_by_hand(self):
        flow = self.flow()
        flow.setup()
        self.assertFalse((flow.repo / ".b4-config").exists())  # not while the flow runs
        flow.install_b4_config()

        def conf(key):
            return subprocess.run(["git", "-C", str(flow.repo), "config", "-f", ".b4-config",
                                   key], capture_output=True, text=True).stdout.strip()
        self.assertEqual(conf("b4.send-no-patatt-sign"), "yes")
        cmd = conf("b4.prep-perpatch-check-cmd")
        self.assertTrue(cmd.startswith("/usr/bin/env PATH=/usr/bin:/bin scripts/checkpatch.pl"))
        self.assertIn("UNKNOWN_COMMIT_ID", cmd)
        self.assertEqual(subprocess.run(["git", "-C", str(flow.repo), "config",
                                         "b4.prep-cover-strategy"], capture_output=True,
                                        text=True).stdout.strip(), "commit")
        status = subprocess.run(["git", "-C", str(flow.repo), "status", "--porcelain"],
                                capture_output=True, text=True).stdout
        self.assertNotIn(".b4-config", status)

    def test_b4_by_hand_in_the_work_clone(self):
        """As the README posts by hand: b4 prep --check and b4 send --dry-run
        in the work clone, with none of the flow's settings in the
        environment, only a git identity of one's own (a scratch HOME);
        checkpatch.pl a stub recording how it is run."""
        flow = self.flow()
        flow.setup()
        job = flow.jobs()[0]
        flow.prep(job)
        flow.to_cc(job)
        flow.install_b4_config()
        home = Path(tempfile.mkdtemp(dir=self.tmp))
        (home / ".gitconfig").write_text(f"[user]\n\tname = {SENDER[0]}\n"
                                         f"\temail = {SENDER[1]}\n")
        calls = home / "checkpatch-calls"
        stub = flow.repo / "scripts/checkpatch.pl"
        stub.parent.mkdir()
        stub.write_text(f'#!/bin/sh\ncat >/dev/null\necho "$*" >> {calls}\n')
        stub.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local"))

        def b4(*args):
            res = subprocess.run(["b4", *args], cwd=flow.repo, env=env, text=True,
                                 capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            return b4flow.ANSI_RE.sub("", res.stdout + res.stderr)

        out = b4("prep", "--check")
        self.assertIn("Success: 3, Warning: 0, Error: 0", out)
        runs = calls.read_text().splitlines()
        self.assertEqual(len(runs), 3)  # once a patch, with the netdev arguments
        self.assertTrue(runs[0].startswith("-q --terse --no-summary --mailback --showfile "
                                           "--strict --max-line-length=80 --ignore "), runs[0])
        out = b4("send", "--dry-run")
        self.assertIn("DRYRUN: Would have sent 4 messages", out)
        self.assertIn(f"From: {SENDER[0]} <{SENDER[1]}>", out)
        self.assertIn("Subject: [PATCH net 1/3] net: fix the frobnicator, part 1", out)

    def test_summary_written(self):
        md = (self.out / "b4.md").read_text()
        self.assertIn("| net/fix | roundtrip | pass |", md)
        self.assertIn("2. net-next/feat: post now, rebased onto net-next with net/fix merged", md)
        self.assertIn('"failed": ""', (self.out / "b4.json").read_text())

    def test_summary_order_as_it_stands_when_merged_is_only_taken(self):
        """The pipeline takes net/fix as merged to put net-next/feat through
        b4 as posted: b4.md gives the order as it stands, as the stage does."""
        out = Path(tempfile.mkdtemp(dir=self.tmp))
        b4flow.write_summary(list(self.jobs.values()), out, 1.0, ["net/fix"], ())
        md = (out / "b4.md").read_text()
        self.assertIn("1. net/fix: post now\n", md)
        self.assertIn("2. net-next/feat: blocked until net/fix is merged into net-next", md)
        self.assertIn("b4 ran with net/fix taken as merged", md)

    def test_order_is_net_first_and_blocked_series_is_refused(self):
        flow = self.flow()
        flow.setup()
        jobs = flow.jobs()
        self.assertEqual([(j.name, j.blocked) for j in jobs],
                         [("net/fix", False), ("net-next/feat", True)])
        feat = jobs[1]
        self.assertEqual(feat.posting, "blocked until net/fix is merged into net-next")
        flow.prep(feat)
        with self.assertRaises(b4flow.FlowError) as ctx:
            flow.send(feat)
        self.assertEqual((ctx.exception.name, ctx.exception.step), ("net-next/feat", "send"))
        self.assertIn("refused: blocked until net/fix is merged into net-next", str(ctx.exception))
        self.assertIn("post net/fix first, then run again with --merged net/fix",
                      str(ctx.exception))
        self.assertFalse((flow.out / "net-next/feat").exists())

    def test_role_identity_as_sender_is_refused(self):
        flow = self.flow(identity=ROLE)
        flow.setup()
        job = flow.jobs()[0]
        flow.prep(job)
        with self.assertRaises(b4flow.FlowError) as ctx:
            flow.send(job)
        self.assertEqual((ctx.exception.name, ctx.exception.step), ("net/fix", "send"))
        self.assertIn("is the role identity", str(ctx.exception))
        self.assertFalse((flow.out / "net/fix/v1").exists())

    def test_mails_naming_the_role_are_refused(self):
        flow = self.flow()
        flow.setup()
        job = flow.jobs()[0]
        flow.prep(job)
        # A commit added after prep that still carries the role identity.
        commit(flow.repo, "net.c", "int late;", "net: late fix")
        with self.assertRaises(b4flow.FlowError) as ctx:
            flow.send(job)
        self.assertTrue(str(ctx.exception).startswith("[net/fix] send: refused"), ctx.exception)
        self.assertIn("Signed-off-by: Multiqueue Bypass Series", str(ctx.exception))
        self.assertEqual(list((flow.out / "net/fix").iterdir()), [])

    def test_cli_failing_check_names_series_and_step(self):
        work = Path(tempfile.mkdtemp(dir=self.tmp))
        conf = work / "series.conf"
        conf.write_text("".join(f'{k}="{v}"\n' for k, v in CONF.items()))
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = b4flow.main(["run", str(self.src), "base", "--out", str(work / "out"),
                                "--prefix", PREFIX, "--work", str(work / "work"),
                                "--conf", str(conf), "--identity", "Jane Sender <jane@example.org>",
                                "--check-cmd", script(work, "bad", "echo '-:1: ERROR: broken'\n"),
                                "--to-cmd", self.stubs["to_cmd"], "--cc-cmd", self.stubs["cc_cmd"],
                                "--no-exercise"])
        self.assertEqual(code, 1)
        self.assertIn("[net/fix] check: Success: 0, Warning: 0, Error: 3", err.getvalue())
        self.assertIn("[net-next/feat] check: Success: 0, Warning: 0, Error: 2", err.getvalue())
        self.assertIn("ERROR: broken", out.getvalue())

    def test_cli_blocked_series_is_not_a_failure(self):
        """--no-exercise without --merged: net-next/feat waits for net/fix, and
        that alone exits 0, saying so; a real failure beside it still exits 1."""
        work = Path(tempfile.mkdtemp(dir=self.tmp))
        conf = work / "series.conf"
        conf.write_text("".join(f'{k}="{v}"\n' for k, v in CONF.items()))

        def run(check):
            out = io.StringIO()
            with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
                code = b4flow.main([
                    "run", str(self.src), "base", "--out", str(work / "out"), "--prefix",
                    PREFIX, "--work", str(work / "work"), "--conf", str(conf), "--identity",
                    "Jane Sender <jane@example.org>", "--check-cmd", check, "--to-cmd",
                    self.stubs["to_cmd"], "--cc-cmd", self.stubs["cc_cmd"], "--no-exercise"])
            return code, out.getvalue()

        code, out = run(self.stubs["check_cmd"])
        self.assertEqual(code, 0, out)
        self.assertIn("blocked, not failed: net-next/feat: blocked until net/fix", out)
        code, out = run(script(work, "bad", "echo '-:1: ERROR: broken'\n"))
        self.assertEqual(code, 1, out)

    def test_cli_blocked_series_failing_before_send_is_a_failure(self):
        """Blocked is no failure only as the refusal at send: net-next/feat,
        blocked, failing its check alone (net/fix passes) exits 1."""
        work = Path(tempfile.mkdtemp(dir=self.tmp))
        conf = work / "series.conf"
        conf.write_text("".join(f'{k}="{v}"\n' for k, v in CONF.items()))
        check = work / "bad-queue"  # the whole mail read, an error for feat's patches
        check.write_text("#!/bin/sh\nif grep 'frobnicate queue' >/dev/null; then\n"
                         "  echo '-:1: ERROR: queue'\nfi\n")
        check.chmod(0o755)
        out = io.StringIO()
        with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
            code = b4flow.main([
                "run", str(self.src), "base", "--out", str(work / "out"), "--prefix", PREFIX,
                "--work", str(work / "work"), "--conf", str(conf), "--identity",
                "Jane Sender <jane@example.org>", "--check-cmd", str(check), "--to-cmd",
                self.stubs["to_cmd"], "--cc-cmd", self.stubs["cc_cmd"], "--no-exercise"])
        self.assertEqual(code, 1, out.getvalue())
        self.assertIn("[net-next/feat] check: Success: 0, Warning: 0, Error: 2", out.getvalue())
        self.assertNotIn("[net/fix]", out.getvalue().partition("error:")[2])
        self.assertNotIn("blocked, not failed", out.getvalue())


if __name__ == "__main__":
    unittest.main()
