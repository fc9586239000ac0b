"""Stable backports on a small git repository: apply, export, a conflicting
patch named with its tree and hunk, stale upstream references, pin files."""

import io
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import series
import stable

ROOT = Path(__file__).resolve().parents[2]
CONF = {"SERIES_AUTHOR_NAME": "Role Identity", "SERIES_AUTHOR_EMAIL": "role@example.invalid"}
ROLE = {"GIT_AUTHOR_NAME": "Role Identity", "GIT_AUTHOR_EMAIL": "role@example.invalid",
        "GIT_COMMITTER_NAME": "Role Identity", "GIT_COMMITTER_EMAIL": "role@example.invalid",
        "GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}
PIN = ("BASE_PACKAGE=linux-source-1.0\nBASE_VERSION=1.0.5-1~deb1u1\nBASE_APT=host\n"
       "BASE_TARBALL_SHA256=" + "0" * 64 + "\n")
TAG = "base/linux-source-1.0_1.0.5-1_deb1u1"


def git(repo, *args, env=None):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True, env={**os.environ, **ROLE, **(env or {})}).stdout


def edit(repo, line, text, name="sched.c"):
    f = repo / name
    lines = f.read_text().splitlines(keepends=True)
    lines[line] = text + "\n"
    f.write_text("".join(lines))


def commit(repo, subject, body, date):
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git(repo, "commit", "-q", "-a", "-s", "-m", subject, "-m", body, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


class StableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.pins = self.tmp / "pins"
        self.pins.mkdir()
        (self.pins / "1.0.env").write_text(PIN)
        self.patches = self.tmp / "patches" / "stable"
        self.net = self.tmp / "patches" / "net"
        # The "stable" tree, as kernel/import-base.sh tags it.
        repo = self.tmp / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "base")
        (repo / "sched.c").write_text("".join(f"line {i}\n" for i in range(40)))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "Import linux-source-1.0")
        git(repo, "tag", TAG)
        self.repo = repo
        # The net fix, on a newer tree: its id is what the backport names.
        git(repo, "checkout", "-q", "-b", "net", TAG)
        edit(repo, 0, "line 0 (newer tree)")
        commit(repo, "newer tree", "Upstream moved on.", "@1700000050 +0000")
        edit(repo, 10, "fixed 10")
        self.fix = commit(repo, "sched: fix line ten", "Why: ten was wrong.",
                          "@1700000100 +0000")
        (self.net / "fixes").mkdir(parents=True)
        git(repo, "format-patch", "-q", "-o", str(self.net / "fixes"), "net~1..net")
        # Its backport: same change, "commit <id> upstream." first in the body.
        git(repo, "checkout", "-q", "-b", "stable/1.0", TAG)
        edit(repo, 10, "fixed 10")
        commit(repo, "sched: fix line ten", f"commit {self.fix} upstream.\n\nWhy: ten was wrong.",
               "@1700000100 +0000")
        stable.export("1.0", repo, pins=self.pins, patches=self.patches, conf=CONF)
        git(repo, "checkout", "-q", "--detach", TAG)
        git(repo, "branch", "-D", "stable/1.0")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def apply(self, **kw):
        return stable.apply_stable("1.0", self.repo, log=lambda m: None, pins=self.pins,
                                   patches=self.patches, net=self.net, conf=CONF, **kw)

    def add_backport(self, name, line, old, new, subject):
        """A backport made on a tree where `line` reads `old`: it does not
        apply where the line differs."""
        other = self.tmp / "other"
        shutil.rmtree(other, ignore_errors=True)
        git(self.tmp, "clone", "-q", str(self.repo), str(other))
        git(other, "checkout", "-q", "--detach", TAG)
        edit(other, line, old)
        commit(other, "other tree", "elsewhere", "@1700000150 +0000")
        edit(other, line, new)
        commit(other, subject, f"commit {self.fix} upstream.\n\nWhy.", "@1700000200 +0000")
        out = git(other, "format-patch", "-1", "-o", str(self.tmp / "fp")).strip()
        shutil.move(out, self.patches / "1.0" / name)

    def test_export_layout(self):
        files = sorted((self.patches / "1.0").glob("*.patch"))
        self.assertEqual([f.name for f in files], ["0001-sched-fix-line-ten.patch"])
        text = files[0].read_text()
        self.assertIn("Subject: [PATCH 1.0.y] sched: fix line ten", text)
        self.assertIn(f"\ncommit {self.fix} upstream.\n", text)
        self.assertIn("base-commit: " + git(self.repo, "rev-parse", TAG).strip(), text)

    def test_apply_clean_and_deterministic(self):
        done = self.apply()
        self.assertEqual(done.branch, "stable/1.0")
        self.assertEqual(len(done.commits), 1)
        self.assertIn("fixed 10\n", (self.repo / "sched.c").read_text())
        again = self.apply()
        self.assertEqual(done.commits[0][1], again.commits[0][1])

    def test_export_round_trip(self):
        before = {p.name: p.read_text() for p in (self.patches / "1.0").glob("*.patch")}
        (self.patches / "1.0" / "README.md").write_text("kept\n")
        self.apply()
        stable.export("1.0", self.repo, pins=self.pins, patches=self.patches, conf=CONF)
        after = {p.name: p.read_text() for p in (self.patches / "1.0").glob("*.patch")}
        self.assertEqual(before, after)
        self.assertTrue((self.patches / "1.0" / "README.md").is_file())

    def test_conflict_names_tree_patch_and_hunk(self):
        self.add_backport("0002-sched-fix-line-twenty.patch", 20, "line twenty (elsewhere)",
                          "fixed 20", "sched: fix line twenty")
        with self.assertRaises(stable.StableError) as cm:
            self.apply()
        msg = str(cm.exception)
        self.assertIn("stable 1.0: ", msg)
        self.assertIn("0002-sched-fix-line-twenty.patch does not apply to " + TAG, msg)
        self.assertIn("sched.c: hunk @@ -18,7 +18,7 @@", msg)
        # The tree is left clean on the last good commit, no am in progress.
        self.assertEqual(git(self.repo, "status", "--porcelain"), "")
        self.assertFalse((self.repo / git(self.repo, "rev-parse", "--git-path",
                                          "rebase-apply").strip()).exists())
        self.assertEqual(git(self.repo, "log", "-1", "--format=%s").strip(),
                         "sched: fix line ten")

    def test_missing_file_named(self):
        other = self.tmp / "other"
        git(self.tmp, "clone", "-q", str(self.repo), str(other))
        git(other, "checkout", "-q", "--detach", TAG)
        (other / "cls.c").write_text("a\nb\nc\n")
        git(other, "add", "cls.c")
        commit(other, "add cls", "elsewhere", "@1700000150 +0000")
        (other / "cls.c").write_text("a\nB\nc\n")
        commit(other, "cls: fix b", f"commit {self.fix} upstream.\n\nWhy.", "@1700000200 +0000")
        out = git(other, "format-patch", "-1", "-o", str(self.tmp / "fp")).strip()
        shutil.move(out, self.patches / "1.0" / "0002-cls-fix-b.patch")
        shutil.rmtree(other)  # its blobs are unknown to the tree: no 3-way fallback
        with self.assertRaises(stable.StableError) as cm:
            self.apply()
        self.assertIn("cls.c: file not in this tree (1 hunk(s))", str(cm.exception))

    def test_cli_exits_non_zero_with_the_message(self):
        self.add_backport("0002-sched-fix-line-twenty.patch", 20, "line twenty (elsewhere)",
                          "fixed 20", "sched: fix line twenty")
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            code = stable.main(["--pins", str(self.pins), "--patches", str(self.patches),
                                "--net", str(self.net), "apply", "1.0", "--repo",
                                str(self.repo), "--base", TAG, "--ws", str(self.tmp / "ws")])
        self.assertEqual(code, 1)
        self.assertIn("stable 1.0: ", err.getvalue())
        self.assertIn("sched.c: hunk @@ -18,7 +18,7 @@", err.getvalue())

    def test_stale_upstream_reference(self):
        p = next((self.patches / "1.0").glob("*.patch"))
        p.write_text(p.read_text().replace(self.fix, "f" * 40))
        t = stable.tree("1.0", self.pins, self.patches)
        problems = stable.check_refs(t, self.net)
        self.assertEqual(len(problems), 1)
        self.assertIn("names commit ffffffffffff", problems[0])
        with self.assertRaises(stable.StableError):
            self.apply()

    def test_pending_reference(self):
        p = next((self.patches / "1.0").glob("*.patch"))
        p.write_text(p.read_text().replace(
            f"commit {self.fix} upstream.",
            "[ Upstream commit sched: fix line ten pending in net ]"))
        self.assertEqual(stable.check_refs(stable.tree("1.0", self.pins, self.patches),
                                           self.net), [])
        p.write_text(p.read_text().replace("line ten pending", "line nine pending"))
        self.assertEqual(len(stable.check_refs(stable.tree("1.0", self.pins, self.patches),
                                               self.net)), 1)

    def test_unknown_tree(self):
        with self.assertRaises(stable.StableError) as cm:
            stable.tree("9.9", self.pins, self.patches)
        self.assertIn("pinned: 1.0", str(cm.exception))


class ImportTest(unittest.TestCase):
    """kernel/import-base.sh gives a tree the same commit whether it is the
    first import (a new repository) or joins one holding other trees."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def tarball(self, name, text):
        src = self.tmp / "src" / name / "linux-source-x"
        src.mkdir(parents=True)
        (src / "Makefile").write_text(text)
        os.utime(src / "Makefile", (1700000000, 1700000000))
        (src / ".gitignore").write_text(
            "*.o\n#\n# Debian packaging: ignore everything at the top level\n/*\n"
            "!/debian/\n")
        (src / "debian").mkdir()
        (src / "debian" / "rules").write_text("rules\n")
        out = self.tmp / f"{name}.tar.xz"
        subprocess.run(["tar", "-cJf", str(out), "-C", str(src.parent), src.name], check=True)
        return out

    def import_(self, cache, pkg, tarball):
        res = subprocess.run(["bash", str(ROOT / "kernel/import-base.sh"), pkg, "1.0-1~x",
                              str(tarball), "0" * 64], text=True, capture_output=True,
                             env={**os.environ, "PROJECT_CACHE": str(cache)}, timeout=120)
        self.assertEqual(res.returncode, 0, res.stderr)
        tag = f"base/{pkg}_1.0-1_x"
        self.assertIn(f"BASE_TAG={tag}", res.stdout)
        return git(cache / "base.git", "rev-parse", f"{tag}^{{commit}}").strip()

    def test_same_commit_alone_or_joining(self):
        a, b = self.tarball("a", "VERSION = 6\n"), self.tarball("b", "VERSION = 7\n")
        alone = self.import_(self.tmp / "c1", "linux-source-6", a)
        self.import_(self.tmp / "c2", "linux-source-7", b)
        joined = self.import_(self.tmp / "c2", "linux-source-6", a)
        self.assertEqual(alone, joined)
        repo = self.tmp / "c2" / "base.git"
        files = git(repo, "ls-tree", "-r", "--name-only", joined).split()
        self.assertEqual(sorted(files), [".gitignore", "Makefile", "debian/rules"])
        self.assertNotIn("/*", git(repo, "show", f"{joined}:.gitignore"))
        # The repository's own checkout and index are left alone.
        self.assertEqual(git(repo, "status", "--porcelain"), "")
        self.assertEqual(git(repo, "log", "-1", "--format=%s").strip(),
                         "Import linux-source-7 1.0-1~x")
        self.assertFalse(list((self.tmp / "c2").glob("import.tmp*")))


class PinTest(unittest.TestCase):
    def test_project_pins(self):
        trees = stable.trees()
        self.assertEqual([t.version for t in trees], ["6.1", "6.12"])
        for t in trees:
            self.assertEqual(t.env["BASE_PACKAGE"], f"linux-source-{t.version}")
            self.assertRegex(t.env["BASE_TARBALL_SHA256"], r"^[0-9a-f]{64}$")
            self.assertEqual(t.env.get("BASE_APT"), "host")
            self.assertTrue(t.patches, f"no backports for {t.version}")

    def test_tag_matches_import_script(self):
        # kernel/import-base.sh: tag="base/${pkg}_${ver//\~/_}"
        script = (ROOT / "kernel/import-base.sh").read_text()
        self.assertIn('tag="base/${pkg}_${ver//\\~/_}"', script)
        self.assertEqual(stable.base_tag("linux-source-6.12", "6.12.117-1~deb12u1"),
                         "base/linux-source-6.12_6.12.117-1_deb12u1")

    def test_fetch_checks_the_stable_pin(self):
        cache = Path(tempfile.mkdtemp())
        try:
            t = stable.tree("6.1")
            name = f"{t.env['BASE_PACKAGE']}_{t.env['BASE_VERSION'].replace('~', '_')}.tar.xz"
            (cache / "tarballs").mkdir()
            (cache / "tarballs" / name).write_text("not the kernel\n")
            res = subprocess.run(["bash", str(ROOT / "kernel/fetch-base.sh"), str(t.pin)],
                                 env={**os.environ, "PROJECT_CACHE": str(cache)}, text=True,
                                 capture_output=True, timeout=120)
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("checksum mismatch", res.stderr)
            self.assertIn(t.env["BASE_TARBALL_SHA256"], res.stderr)
        finally:
            shutil.rmtree(cache)

    def test_vm_plan(self):
        progs, expect = stable.vm_plan("6.12")
        self.assertEqual([n for n, _ in progs],
                         ["qdisc_bypass", "net.qdisc_limit_zero.py", "tc-testing"])
        e = expect["qdisc_bypass"]["fq_codel_filter_removed_restores_bypass"]
        self.assertEqual((e["base"], e["patched"]), ("fail", "fail"))
        self.assertEqual(e["shows"]["patched"], e["shows"]["base"])
        self.assertEqual(expect["qdisc_bypass"]["codel_limit0_drops"]["patched"], "pass")
        progs, expect = stable.vm_plan("6.1")
        self.assertNotIn("net.qdisc_limit_zero.py", [n for n, _ in progs])
        with self.assertRaises(stable.StableError):
            stable.vm_plan("9.9")

    def test_vm_build_failure_names_tree_and_kernel(self):
        # A stable kernel that does not build: the error names the tree, the
        # kernel (base or patched) and shows the end of the build output.
        from unittest import mock
        t = stable.tree("6.12")
        failed = subprocess.CompletedProcess([], 2, "", "dummy.c:1: error: boom\n")
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(stable, "worktree_for", return_value=Path(tmp)), \
                mock.patch.object(stable.series, "git"), \
                mock.patch.object(stable.subprocess, "run", return_value=failed):
            with self.assertRaises(stable.StableError) as cm:
                stable.build_and_boot(t, {"BASE_REPO": tmp, "BASE_TAG": "t"}, Path(tmp),
                                      Path(tmp) / "results", log=lambda *_: None)
        msg = str(cm.exception)
        self.assertIn("stable 6.12: the base kernel does not build", msg)
        self.assertIn("dummy.c:1: error: boom", msg)

    def test_series_module_shared(self):
        self.assertTrue(issubclass(stable.StableError, series.SeriesError))


if __name__ == "__main__":
    unittest.main()
