"""Stable on a small git repository: the net fixes (the patches with a
Fixes: tag) applied as posted, a fix that does not apply named with its tree,
patch and hunks, a net series without fixes, the VM plan, pin files."""

import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from common.paths import ROOT
from tools.series import series
from tools.series import stable
from ci import kconfig_tree, stable_vm

CONF = {"SERIES_AUTHOR_NAME": "Role Identity", "SERIES_AUTHOR_EMAIL": "role@example.invalid"}
ROLE = {"GIT_AUTHOR_NAME": "Role Identity", "GIT_AUTHOR_EMAIL": "role@example.invalid",
        "GIT_COMMITTER_NAME": "Role Identity", "GIT_COMMITTER_EMAIL": "role@example.invalid",
        "GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"}
PIN = ("BASE_PACKAGE=linux-source-1.0\nBASE_VERSION=1.0.5-1~deb1u1\nBASE_APT=host\n"
       "BASE_TARBALL_SHA256=" + "0" * 64 + "\n")
TAG = "base/linux-source-1.0_1.0.5-1_deb1u1"
FIXES = 'Fixes: 0123456789ab ("sched: add line ten")'
SELFTEST = "tools/testing/selftests/net/sched_ten.py"


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
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-s", "-m", subject, "-m", body, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


class StableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.pins = self.tmp / "pins"
        self.pins.mkdir()
        (self.pins / "1.0.env").write_text(PIN)
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
        # The net series, made on a newer tree: a fix with a Fixes: tag, then
        # its selftest (a new file, no Fixes: tag), as posted.
        git(repo, "checkout", "-q", "-b", "net", TAG)
        edit(repo, 0, "line 0 (newer tree)")
        commit(repo, "newer tree", "Upstream moved on.", "@1700000050 +0000")
        edit(repo, 10, "fixed 10")
        commit(repo, "sched: fix line ten", f"Why: ten was wrong.\n\n{FIXES}",
               "@1700000100 +0000")
        (repo / SELFTEST).parent.mkdir(parents=True)
        (repo / SELFTEST).write_text("print('ok 1 ten')\n")
        commit(repo, "selftests: net: test line ten", "Checks the fix.", "@1700000110 +0000")
        self.topic = self.net / "sched-fix"
        git(repo, "format-patch", "-q", "--cover-letter", "-o", str(self.topic), "net~2..net")
        git(repo, "checkout", "-q", "--detach", TAG)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def apply(self, **kw):
        return stable.apply_stable("1.0", self.repo, pins=self.pins,
                                   net=self.net, conf=CONF, **kw)

    def add_fix(self, name, edits, subject, new=()):
        """A net fix (Fixes: tag) made on a tree where each (file, line, old,
        new) of `edits` read `old` first: it does not apply where they differ.
        `new`: files the tree it was made on has and the stable tree lacks."""
        other = self.tmp / "other"
        shutil.rmtree(other, ignore_errors=True)
        git(self.tmp, "clone", "-q", str(self.repo), str(other))
        git(other, "checkout", "-q", "--detach", TAG)
        for f in new:
            (other / f).write_text("a\nb\nc\n")
        for f, line, old, _ in edits:
            edit(other, line, old, f)
        commit(other, "other tree", "elsewhere", "@1700000150 +0000")
        for f, line, _, text in edits:
            edit(other, line, text, f)
        commit(other, subject, f"Why.\n\n{FIXES}", "@1700000200 +0000")
        out = git(other, "format-patch", "-1", "-o", str(self.tmp / "fp")).strip()
        shutil.move(out, self.topic / name)
        shutil.rmtree(other)  # its blobs stay unknown to the tree: no 3-way fallback

    def test_takes_the_fixes_as_posted(self):
        self.assertEqual([p.name for p in stable.net_fixes(self.net)],
                         ["0001-sched-fix-line-ten.patch"])
        self.assertEqual([p.name for p in stable.net_patches(self.net)],
                         ["0001-sched-fix-line-ten.patch",
                          "0002-selftests-net-test-line-ten.patch"])
        self.assertEqual(stable.added_without_fix(self.net),
                         {SELFTEST: self.topic / "0002-selftests-net-test-line-ten.patch"})

    def test_apply_clean_and_deterministic(self):
        done = self.apply()
        self.assertEqual(done.branch, "stable/1.0")
        self.assertEqual([p.name for p, _ in done.commits], ["0001-sched-fix-line-ten.patch"])
        self.assertIn("fixed 10\n", (self.repo / "sched.c").read_text())
        self.assertIn("line 0\n", (self.repo / "sched.c").read_text())
        self.assertFalse((self.repo / SELFTEST).exists())
        self.assertIn(FIXES, git(self.repo, "log", "-1", "--format=%B"))
        again = self.apply()
        self.assertEqual(done.commits[0][1], again.commits[0][1])

    def test_fix_that_does_not_apply_names_tree_patch_and_hunks(self):
        self.add_fix("0003-sched-fix-twenty.patch",
                     [("sched.c", 20, "line twenty (elsewhere)", "fixed 20")], "sched: fix twenty")
        with self.assertRaises(stable.StableError) as cm:
            self.apply()
        msg = str(cm.exception)
        self.assertIn("stable 1.0: ", msg)
        self.assertIn("sched-fix/0003-sched-fix-twenty.patch does not apply to " + TAG, msg)
        self.assertIn("sched.c: hunk @@ -18,7 +18,7 @@", msg)
        # The tree is left clean on the last good commit, no am in progress.
        self.assertEqual(git(self.repo, "status", "--porcelain"), "")
        self.assertFalse((self.repo / git(self.repo, "rev-parse", "--git-path",
                                          "rebase-apply").strip()).exists())
        self.assertEqual(git(self.repo, "log", "-1", "--format=%s").strip(),
                         "sched: fix line ten")

    def test_each_failing_file_named(self):
        self.add_fix("0003-sched-cls-fix.patch",
                     [("sched.c", 20, "line twenty (elsewhere)", "fixed 20"),
                      ("cls.c", 1, "b", "B")], "sched: cls: fix", new=["cls.c"])
        with self.assertRaises(stable.StableError) as cm:
            self.apply()
        msg = str(cm.exception)
        self.assertIn("sched.c: hunk @@ -18,7 +18,7 @@", msg)
        self.assertIn("cls.c: file not in this tree (1 hunk(s))", msg)

    def test_cli_exits_non_zero_with_the_message(self):
        self.add_fix("0003-sched-fix-twenty.patch",
                     [("sched.c", 20, "line twenty (elsewhere)", "fixed 20")], "sched: fix twenty")
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            code = stable.main(["--pins", str(self.pins), "--net", str(self.net), "apply",
                                "1.0", "--repo", str(self.repo), "--base", TAG,
                                "--ws", str(self.tmp / "ws")])
        self.assertEqual(code, 1)
        self.assertIn("stable 1.0: ", err.getvalue())
        self.assertIn("sched.c: hunk @@ -18,7 +18,7 @@", err.getvalue())

    def cli_apply(self, *extra):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stderr(err), redirect_stdout(out):
            code = stable.main(["--pins", str(self.pins), "--net", str(self.net), "apply",
                                "1.0", "--repo", str(self.repo), "--base", TAG,
                                "--ws", str(self.tmp / "ws"), *extra])
        return code, out.getvalue(), err.getvalue()

    def branches(self):
        return git(self.repo, "for-each-ref", "--format=%(refname) %(objectname)",
                   "refs/heads")

    def test_backport_work_on_the_stable_branch_is_refused(self):
        # My unpushed backport on stable/1.0 of my own repository: apply
        # --repo must not reset it (it did, with checkout -f -B).
        git(self.repo, "checkout", "-q", "-b", "stable/1.0", TAG)
        edit(self.repo, 30, "my backport")
        mine = commit(self.repo, "sched: my backport", "Mine.", "@1700000300 +0000")
        git(self.repo, "checkout", "-q", "--detach", TAG)
        before = self.branches()
        code, _, err = self.cli_apply()
        self.assertEqual(code, 1, err)
        self.assertIn(f"stable/1.0 holds commit(s) the tooling did not make: {mine[:12]} "
                      "sched: my backport", err)
        self.assertIn("nothing was changed", err)
        self.assertEqual(self.branches(), before)
        code, _, err = self.cli_apply("--force")
        self.assertEqual(code, 0, err)
        self.assertNotEqual(self.branches(), before)

    def test_branch_the_tooling_made_moves_and_a_failure_restores_it(self):
        code, _, err = self.cli_apply()
        self.assertEqual(code, 0, err)
        made = self.branches()
        self.assertEqual(self.cli_apply()[0], 0)  # its own branch: no refusal
        self.add_fix("0003-sched-fix-twenty.patch",
                     [("sched.c", 20, "line twenty (elsewhere)", "fixed 20")], "sched: fix twenty")
        code, _, err = self.cli_apply()
        self.assertEqual(code, 1)
        self.assertIn("does not apply", err)
        self.assertEqual(self.branches(), made)

    def test_failure_on_a_new_branch_leaves_no_branch(self):
        self.add_fix("0003-sched-fix-twenty.patch",
                     [("sched.c", 20, "line twenty (elsewhere)", "fixed 20")], "sched: fix twenty")
        before = self.branches()
        self.assertEqual(self.cli_apply()[0], 1)
        self.assertEqual(self.branches(), before)

    def test_net_series_without_fixes_is_an_error(self):
        fix = self.topic / "0001-sched-fix-line-ten.patch"
        fix.write_text(fix.read_text().replace(FIXES + "\n", ""))
        with self.assertRaises(stable.StableError) as cm:
            stable.net_fixes(self.net)
        self.assertIn("carries a Fixes: tag", str(cm.exception))
        with self.assertRaises(stable.StableError):
            self.apply()
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            code = stable.main(["--pins", str(self.pins), "--net", str(self.net), "check"])
        self.assertEqual(code, 1)
        self.assertIn("stable has nothing to take", err.getvalue())
        # No net series at all is the same error.
        self.assertRaises(stable.StableError, stable.net_fixes, self.tmp / "nothing")

    def test_check_names_what_stable_takes(self):
        out = io.StringIO()
        with redirect_stdout(out):
            code = stable.main(["--pins", str(self.pins), "--net", str(self.net), "check"])
        self.assertEqual(code, 0)
        self.assertIn("ok: stable takes 1 net fix(es)", out.getvalue())
        self.assertIn(f"sched-fix/0001-sched-fix-line-ten.patch: {FIXES}", out.getvalue())
        self.assertIn("not for stable (no Fixes: tag): sched-fix/0002-selftests-net-test-line-ten",
                      out.getvalue())

    def test_vm_plan_refuses_a_selftest_stable_does_not_take(self):
        programs = self.tmp / "programs.txt"
        programs.write_text("sched_ten.py  kselftest  @KSFT@/run_kselftest.sh -t net:sched_ten.py"
                            "\nown  ktap  @BIN@/selftests/own\n")
        expectations = self.tmp / "expectations.json"
        expectations.write_text(json.dumps({"own": {"a": {"base": "fail", "patched": "pass"}}}))
        plan = self.tmp / "stable.json"
        plan.write_text(json.dumps({"programs": {"1.0": ["own", "sched_ten.py"]}}))
        with self.assertRaises(stable.StableError) as cm:
            stable.vm_plan("1.0", plan, programs, expectations, self.net)
        msg = str(cm.exception)
        self.assertIn(f"stable 1.0 runs sched_ten.py, but {SELFTEST} comes with", msg)
        self.assertIn("0002-selftests-net-test-line-ten.patch, which has no Fixes: tag", msg)
        plan.write_text(json.dumps({"programs": {"1.0": ["own"]}}))
        progs, expect = stable.vm_plan("1.0", plan, programs, expectations, self.net)
        self.assertEqual(progs, [("own", "ktap")])
        self.assertEqual(expect["own"]["a"]["patched"], "pass")

    def test_unknown_tree(self):
        with self.assertRaises(stable.StableError) as cm:
            stable.tree("9.9", self.pins)
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

    def test_project_net_fixes(self):
        # Stable takes the two kernel fixes of the net series, not its selftests.
        fixes = stable.net_fixes()
        self.assertEqual([p.name[:4] for p in fixes], ["0001", "0002"])
        for p in fixes:
            self.assertEqual(p.parent, ROOT / "patches/net/qdisc-bypass")
            self.assertNotIn("tools/testing/selftests", p.read_text())
        left = [p for p in stable.net_patches() if p not in fixes]
        self.assertTrue(left and all(p.name.split("-", 2)[1] == "selftests" for p in left))
        self.assertFalse((ROOT / "patches/stable").exists())

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
        self.assertEqual([n for n, _ in progs], ["qdisc_bypass", "tc-testing"])
        e = expect["qdisc_bypass"]["fq_codel_filter_removed_restores_bypass"]
        self.assertEqual((e["base"], e["patched"]), ("fail", "fail"))
        self.assertEqual(e["shows"]["patched"], e["shows"]["base"])
        self.assertEqual(expect["qdisc_bypass"]["codel_limit0_drops"]["patched"], "pass")
        self.assertEqual(expect["qdisc_bypass"]["fq_codel_limit0_drops"]["patched"], "pass")
        self.assertEqual(expect["qdisc_bypass"]["codel_limit0_drops"]["base"], "fail")
        progs, expect = stable.vm_plan("6.1")
        self.assertEqual([n for n, _ in progs], ["qdisc_bypass", "tc-testing"])
        with self.assertRaises(stable.StableError):
            stable.vm_plan("9.9")

    def test_tc_testing_cases_the_stable_tree_lacks(self):
        # 6.1's and 6.12's tc-testing lack 82d9 and c797 (upstream added them
        # later): run with their entries, the base kernel, which runs only the
        # listed cases, found none and tdc exited 4 ("No tests found").
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            tests = tree / stable.TDC_TESTS / "qdiscs"
            tests.mkdir(parents=True)
            (tests / "codel.json").write_text('[{"id": "a001", "name": "x"},\n'
                                              ' {\n  "id":   "82d9", "name": "y"}]\n')
            subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
            subprocess.run(["git", "add", "."], cwd=tree, check=True)
            commit = ["git", "commit", "-qam", "t"]
            subprocess.run(commit, cwd=tree, check=True, env={**os.environ, **ROLE})
            (tests / "codel.json").write_text('[{"name": "no id"}]\n')
            subprocess.run(commit, cwd=tree, check=True, env={**os.environ, **ROLE})
            (tests / "codel.json").write_text('[{"id": "ffff"}]\n')  # not committed
            self.assertEqual(stable.tdc_ids(tree, "HEAD~1"), {"a001", "82d9"})
            with self.assertRaises(stable.StableError):
                stable.tdc_ids(tree, "HEAD")
        # Two listed cases (as the real entries were), the tree having one.
        progs = [("qdisc_bypass", "ktap"), ("tc-testing", "tdc")]
        fail = {"base": "fail", "patched": "fail"}
        expect = {"tc-testing": {"82d9": dict(fail), "c797": dict(fail)},
                  "qdisc_bypass": {"codel_limit0_drops": {"base": "fail", "patched": "pass"}}}
        kept = dict(expect["qdisc_bypass"])
        dropped = stable.drop_absent_tdc(expect, progs, {"82d9", "a001"})
        self.assertIn("c797", dropped)
        self.assertNotIn("82d9", dropped)
        self.assertEqual(set(expect["tc-testing"]), {"82d9"})
        self.assertEqual(expect["qdisc_bypass"], kept)  # other programs untouched

    def test_vm_build_failure_names_tree_and_kernel(self):
        # A stable kernel that does not build: the error names the tree, the
        # kernel (base or patched) and shows the end of the build output.
        from unittest import mock
        t = stable.tree("6.12")
        failed = subprocess.CompletedProcess([], 2, "", "dummy.c:1: error: boom\n")
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(stable, "worktree_for", return_value=Path(tmp)), \
                mock.patch.object(stable, "tdc_ids", return_value={"82d9"}), \
                mock.patch.object(stable.series, "git"), \
                mock.patch.object(stable_vm.subprocess, "run", return_value=failed):
            # The C++ programs not built: named before any kernel build.
            bindir = Path(tmp) / "cxx"
            with self.assertRaises(stable.StableError) as cm:
                stable_vm.build_and_boot(t, {"BASE_REPO": tmp, "BASE_TAG": "t"}, Path(tmp),
                                         Path(tmp) / "results",
                                         bindir=bindir)
            self.assertIn(f"stable 6.12: no {bindir}/selftests/qdisc_bypass: build the C++ "
                          "programs first", str(cm.exception))
            stable_vm.subprocess.run.assert_not_called()
            (bindir / "selftests").mkdir(parents=True)
            (bindir / "selftests" / "qdisc_bypass").write_text("#!/bin/sh\n")
            self.assertEqual(stable_vm.unbuilt([("qdisc_bypass", "ktap")], bindir),
                             [f"{bindir}/selftests/qdisc_bypass"])  # not executable
            (bindir / "selftests" / "qdisc_bypass").chmod(0o755)
            # Without the tree's selftest fragments (the apply stage's) nothing builds.
            with self.assertRaises(stable.StableError) as cm:
                stable_vm.build_and_boot(t, {"BASE_REPO": tmp, "BASE_TAG": "t"}, Path(tmp),
                                         Path(tmp) / "results",
                                         bindir=bindir)
            self.assertIn("stable 6.12: no ", str(cm.exception))
            self.assertIn("the pipeline's apply stage writes", str(cm.exception))
            stable_vm.subprocess.run.assert_not_called()
            for coll in kconfig_tree.collections():
                kconfig_tree.fragment_path(Path(tmp), coll).parent.mkdir(parents=True,
                                                                         exist_ok=True)
                kconfig_tree.fragment_path(Path(tmp), coll).write_text("CONFIG_NET=y\n")
            with self.assertRaises(stable.StableError) as cm:
                stable_vm.build_and_boot(t, {"BASE_REPO": tmp, "BASE_TAG": "t"}, Path(tmp),
                                         Path(tmp) / "results",
                                         bindir=bindir)
            cmd = stable_vm.subprocess.run.call_args.args[0]
            self.assertEqual([Path(c).name for c in cmd[5:]],
                             ["vng.config", "defconfig-net.config", "net.config",
                              "drivers-net.config", "drivers-net-netdevsim.config",
                              "tc-testing.config", "net-tests.config"])
        msg = str(cm.exception)
        self.assertIn("stable 6.12: the base kernel does not build", msg)
        self.assertIn("dummy.c:1: error: boom", msg)

    def test_series_module_shared(self):
        self.assertTrue(issubclass(stable.StableError, series.SeriesError))


if __name__ == "__main__":
    unittest.main()
