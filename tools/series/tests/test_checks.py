"""Per-patch check helpers that need no kernel tree."""

import os
import subprocess
import tempfile
import unittest
from collections import Counter
from pathlib import Path

from tools.series.checks import (findings, kbuild, linters, patchwork, per_series,
                                 runner, selftest, source, xmit)
from tools.series import series

ENV = {"GIT_AUTHOR_NAME": "A U", "GIT_AUTHOR_EMAIL": "a@example.invalid",
       "GIT_COMMITTER_NAME": "A U", "GIT_COMMITTER_EMAIL": "a@example.invalid"}


class WarningTest(unittest.TestCase):
    def test_new_warnings_ignore_line_moves(self):
        before = findings.warnings_of("drivers/net/dummy.c:10:5: warning: unused variable 'x'\n")
        after = findings.warnings_of("drivers/net/dummy.c:12:5: warning: unused variable 'x'\n"
                                     "drivers/net/dummy.c:40:1: warning: no previous prototype\n"
                                     "  CC [M]  drivers/net/dummy.o\n")
        self.assertEqual(findings.new_warnings(before, after),
                         ["drivers/net/dummy.c: warning: no previous prototype"])

    def test_kernel_doc_warnings_count(self):
        # kernel-doc in 7.3 writes "Warning: file:line message": such lines
        # were not counted, so kdoc passed any new kernel-doc warning.
        out = ("Warning: drivers/net/dummy.c:385 Excess function parameter 'wrong' "
               "description in 'dummy_negative_control'\n")
        self.assertEqual(findings.new_warnings(Counter(), findings.warnings_of(out)),
                         ["drivers/net/dummy.c: warning: Excess function parameter 'wrong' "
                          "description in 'dummy_negative_control'"])

    def test_duplicates_count(self):
        w = "a.c:1:1: warning: same\n"
        new = findings.new_warnings(findings.warnings_of(w), findings.warnings_of(w * 3))
        self.assertEqual(len(new), 2)

    def test_sparse_on_the_touched_objects(self):
        """sparse runs (C=2, the cache's sparse) on the objects the patch
        touches, at the parent and at the patch; a warning only sparse
        prints fails sparse, not build; a compiler warning C=2 prints again
        is the build's, counted once."""
        with tempfile.TemporaryDirectory() as d:
            env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
                   "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
            subprocess.run(["git", "init", "-q", d], check=True)
            for i, path in enumerate(["x.c", "y.c", "x.c"]):
                Path(d, path).write_text(f"int x{i};\n")
                subprocess.run(["git", "-C", d, "add", path], check=True)
                subprocess.run(["git", "-C", d, "commit", "-qm", f"c{i}"], check=True, env=env)
            head = subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"],
                                           text=True).strip()
            gcc = "x.c:1:5: warning: unused variable 'u' [-Wunused-variable]\n"
            calls = []

            def make(args):
                calls.append(args)
                patched = "x2" in Path(d, "x.c").read_text()
                if "C=2" not in args:
                    return 0, gcc
                found = "x.c:1:5: warning: symbol 'x2' was not declared. Should it be static?\n"
                return 0, "  CHECK   x.c\n" + gcc + (found if patched else "")
            build, sparse = kbuild.BuildChecker(d, make)(head)
        self.assertEqual((build.status, sparse.status), ("pass", "fail"), (build, sparse))
        self.assertIn("x2' was not declared", sparse.message)
        self.assertEqual(sparse.message.split(":")[0], "1 new warning(s)")
        checked = [a for a in calls if "C=2" in a]
        self.assertEqual([a[-1] for a in checked], ["x.o", "x.o"])
        self.assertTrue(checked[0][2].startswith("CHECK=") and "sparse" in checked[0][2])


def kunit_in_driver_repo(d, before=None, after=None):
    """A git repository in d whose second commit adds drv/tests/a_kunit.c,
    #included by drv/a.c; files in before and after (path: text) join the
    first and the second commit. Returns (git environment, the second commit)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
    subprocess.run(["git", "init", "-q", d], check=True)
    for path, text in {**(before or {}), "drv/a.c": "int a;\n"}.items():
        Path(d, path).parent.mkdir(parents=True, exist_ok=True)
        Path(d, path).write_text(text)
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    subprocess.run(["git", "-C", d, "commit", "-qm", "a"], check=True, env=env)
    for path, text in {**(after or {}), "drv/tests/a_kunit.c": "int t;\n",
                       "drv/a.c": 'int a;\n#include "tests/a_kunit.c"\n'}.items():
        Path(d, path).parent.mkdir(parents=True, exist_ok=True)
        Path(d, path).write_text(text)
    subprocess.run(["git", "-C", d, "add", "."], check=True)
    subprocess.run(["git", "-C", d, "commit", "-qm", "t"], check=True, env=env)
    head = subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"], text=True).strip()
    return env, head


class IncludedSourceTest(unittest.TestCase):
    def test_an_included_c_file_is_no_object(self):
        """A KUnit test that its driver #includes is compiled with the
        driver, not on its own: only the driver's object is checked."""
        with tempfile.TemporaryDirectory() as d:
            env, head = kunit_in_driver_repo(d, after={"drv/b.c": "int b;\n"})
            self.assertEqual(sorted(kbuild.touched_objects(d, head)), ["drv/a.o", "drv/b.o"])
            # A patch to a header builds the series' C files, but not the included one.
            Path(d, "drv/a.h").write_text("int h;\n")
            subprocess.run(["git", "-C", d, "add", "."], check=True)
            subprocess.run(["git", "-C", d, "commit", "-qm", "h"], check=True, env=env)
            head = subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"],
                                           text=True).strip()
            self.assertEqual(sorted(kbuild.touched_objects(
                d, head, ["drv/a.c", "drv/tests/a_kunit.c", "drv/b.c"])),
                ["drv/a.o", "drv/b.o"])
            # Another series' C file, absent from this tree, is no target here.
            self.assertEqual(sorted(kbuild.touched_objects(
                d, head, ["drv/a.c", "drv/other_series.c"])), ["drv/a.o"])


class CocciIncludedTest(unittest.TestCase):
    def test_an_included_c_file_is_checked_without_a_compile(self):
        """dummy_kunit.c, #included by dummy.c, compiles only inside it:
        coccicheck runs on the file itself, not through make."""
        with tempfile.TemporaryDirectory() as d:
            _, head = kunit_in_driver_repo(d, {
                "scripts/coccicheck": 'echo "$1:3:1-5: WARNING: mode $MODE C=$C"\n'})
            made = []

            def make(args):
                made.append(args[-1])
                return 0, ""
            res = kbuild.Cocci(d, make)(head)
        self.assertEqual(made, ["drv/a.o", "drv/a.o"])
        self.assertEqual(res.status, "fail", res)
        self.assertIn("drv/tests/a_kunit.c-5: WARNING: mode report C=2", res.message)


class CommitChecksTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = Path(self.tmp.name)
        self.git("init", "-q")
        (self.repo / "f.c").write_text("int a;\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "net: base thing")
        self.base = self.git("rev-parse", "HEAD").strip()

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        return subprocess.run(["git", "-C", str(self.repo), *args], check=True, text=True,
                              capture_output=True, env={**os.environ, **ENV}).stdout

    def commit(self, msg):
        (self.repo / "f.c").write_text((self.repo / "f.c").read_text() + "int b;\n")
        self.git("commit", "-q", "-a", "-m", msg)
        return self.git("rev-parse", "HEAD").strip()

    def test_verify_signedoff(self):
        sha = self.commit("x: y\n\nSigned-off-by: A U <a@example.invalid>")
        res = source.verify_signedoff(self.repo, sha)
        self.assertEqual(res.status, "pass")
        self.assertEqual(res.message, "Signed-off-by tag matches author and committer")
        sha = self.commit("x: y\n\nSigned-off-by: Other <o@example.invalid>")
        res = source.verify_signedoff(self.repo, sha)
        self.assertEqual(res.status, "fail")
        self.assertIn("author Signed-off-by missing", res.message)
        sha = self.commit("x: y")
        self.assertEqual(source.verify_signedoff(self.repo, sha).status, "fail")

    def test_verify_signedoff_wants_the_committer_too(self):
        (self.repo / "f.c").write_text("int z;\n")
        subprocess.run(["git", "-C", str(self.repo), "commit", "-q", "-a", "-m",
                        "x: y\n\nSigned-off-by: A U <a@example.invalid>"], check=True,
                       env={**os.environ, **ENV, "GIT_COMMITTER_NAME": "C M",
                            "GIT_COMMITTER_EMAIL": "c@example.invalid"})
        res = source.verify_signedoff(self.repo, self.git("rev-parse", "HEAD").strip())
        self.assertEqual(res.status, "fail")
        self.assertEqual(res.message, "committer Signed-off-by missing")

    def test_verify_fixes_against_history_and_list(self):
        good = f'Fixes: {self.base[:12]} ("net: base thing")'
        sha = self.commit(f"x: fix\n\n{good}\nSigned-off-by: A U <a@example.invalid>")
        self.assertEqual(source.verify_fixes(self.repo, sha, "net", {}).status, "pass")
        sha = self.commit(f'x: fix\n\nFixes: {self.base[:12]} ("net: other thing")')
        res = source.verify_fixes(self.repo, sha, "net", {})
        self.assertEqual(res.status, "fail")
        self.assertIn("Subject does not match target commit subject", res.message)
        sha = self.commit('x: fix\n\nFixes: 0123456789ab ("net: listed")')
        self.assertIn("Target SHA1 does not exist",
                      source.verify_fixes(self.repo, sha, "net", {}).message)
        self.assertEqual(source.verify_fixes(self.repo, sha, "net",
                                             {"0123456789abcdef": "net: listed"}).status, "pass")
        sha = self.commit("x: fix\n\nFixes: 0123456 net: short")
        self.assertIn("malformed", source.verify_fixes(self.repo, sha, "net", {}).message)
        sha = self.commit("x: no tag")
        self.assertEqual(source.verify_fixes(self.repo, sha, "net", {}).status, "fail")
        self.assertEqual(source.verify_fixes(self.repo, sha, "net-next", {}).status, "pass")

    def test_verify_fixes_checks_the_commits_the_text_names(self):
        """A `commit <id> ("subject")` reference, its title wrapped, is
        checked as a Fixes: tag is: checkpatch's UNKNOWN_COMMIT_ID is left
        out where the tree lacks the history, so this must catch it."""
        good = (f'x: y\n\nSince commit {self.base[:12]} ("net: base\nthing") it does.\n\n'
                "Signed-off-by: A U <a@example.invalid>")
        sha = self.commit(good)
        self.assertEqual(source.verify_fixes(self.repo, sha, "net-next", {}).status, "pass")
        sha = self.commit(f'x: y\n\nSince commit {self.base[:12]} ("net: other thing").')
        res = source.verify_fixes(self.repo, sha, "net-next", {})
        self.assertEqual(res.status, "fail")
        self.assertIn('the message says "net: other thing"', res.message)
        sha = self.commit('x: y\n\nSince commit 0123456789ab ("net: listed") it does.')
        res = source.verify_fixes(self.repo, sha, "net-next", {})
        self.assertEqual(res.status, "fail")
        self.assertIn("neither in the tree's history nor in kernel/known-commits.txt",
                      res.message)
        self.assertEqual(source.verify_fixes(self.repo, sha, "net-next",
                                             {"0123456789abcdef": "net: listed"}).status, "pass")

    def test_checkpatch_leaves_unknown_ids_to_verify_fixes(self):
        """A commit the text names that the history lacks (the Debian
        import has none): checkpatch runs without UNKNOWN_COMMIT_ID, which
        it would raise for an id it cannot resolve; one it has: with."""
        stub = self.repo / "scripts/checkpatch.pl"
        stub.parent.mkdir()
        stub.write_text('print "@ARGV\\ntotal: 0 errors, 0 warnings, 0 checks\\n";\n')
        sha = self.commit('x: y\n\nSince commit 0123456789ab ("net: listed") it does.')
        self.assertIn("UNKNOWN_COMMIT_ID", source.checkpatch(self.repo, sha).details)
        sha = self.commit(f'x: y\n\nSince commit {self.base[:12]} ("net: base thing").')
        self.assertNotIn("UNKNOWN_COMMIT_ID", source.checkpatch(self.repo, sha).details)

    def test_verify_fixes_tag_between_empty_lines(self):
        sha = self.commit(f'x: fix\n\nFixes: {self.base[:12]} ("net: base thing")\n\n'
                          "Signed-off-by: A U <a@example.invalid>")
        res = source.verify_fixes(self.repo, sha, "net", {})
        self.assertEqual(res.status, "fail")
        self.assertIn("empty lines surround the Fixes tag", res.message)

    def test_net_selftest_patch_needs_no_fixes_tag(self):
        d = self.repo / "tools/testing/selftests/net"
        d.mkdir(parents=True)
        (d / "t.py").write_text("pass\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "selftests: net: a test")
        sha = self.git("rev-parse", "HEAD").strip()
        res = source.verify_fixes(self.repo, sha, "net", {})
        self.assertEqual(res.status, "pass")
        self.assertIn("only adds or changes selftests", res.message)
        # A fix touching code and its test still needs the tag.
        (d / "t.py").write_text("pass  # more\n")
        (self.repo / "f.c").write_text("int c;\n")
        self.git("commit", "-q", "-a", "-m", "net: fix and test")
        sha = self.git("rev-parse", "HEAD").strip()
        self.assertEqual(source.verify_fixes(self.repo, sha, "net", {}).status, "fail")

    def change(self, files, msg="x: change"):
        """Commit files {path: text or None (delete)}; return the commit."""
        for path, text in files.items():
            f = self.repo / path
            if text is None:
                f.unlink()
                continue
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", msg)
        return self.git("rev-parse", "HEAD").strip()

    def test_header_inline(self):
        sha = self.change({"a.h": "static inline int f(void) { return 0; }\n"
                                  "static __always_inline int g(void) { return 0; }\n"})
        res = source.header_inline(self.repo, sha)
        self.assertEqual((res.status, res.message), (
            "pass", "No static functions without inline keyword in header files"))
        sha = self.change({"a.h": "static int h(void)\n{\n\treturn 0;\n}\n",
                           "b.c": "static int h(void) { return 0; }\n"})
        res = source.header_inline(self.repo, sha)
        self.assertEqual(res.status, "fail")
        self.assertEqual(res.message, "Detected static functions without inline keyword in "
                                      "header files: 1")

    def test_source_inline(self):
        sha = self.change({"a.c": "static inline int f(void) { return 0; }\n",
                           "a.h": "static inline int g(void) { return 0; }\n"})
        res = source.source_inline(self.repo, sha)
        self.assertEqual((res.status, res.message), ("fail", "Was 0 now: 1"))
        # A changed line that keeps its inline: a warning, as in patchwork.
        sha = self.change({"a.c": "static inline int f(void) { return 1; }\n"})
        self.assertEqual(source.source_inline(self.repo, sha).status, "warn")
        sha = self.change({"a.c": "static int f(void) { return 1; }\n"})
        self.assertEqual(source.source_inline(self.repo, sha).status, "pass")

    def test_module_param_and_deprecated_api(self):
        sha = self.change({"m.c": "static int p;\nmodule_param(p, int, 0444);\n"})
        res = source.module_param(self.repo, sha)
        self.assertEqual((res.status, res.message), ("fail", "Was 0 now: 1"))
        res = source.deprecated_api(self.repo, sha)
        self.assertEqual((res.status, res.message), ("fail", "Found: 'module_param' was: 0 now: 1"))
        sha = self.change({"n.c": "void f(struct net_device *d)\n{\n\tdev_hold(d);\n}\n"})
        res = source.deprecated_api(self.repo, sha)
        self.assertEqual((res.status, res.message), ("warn", "Found: 'dev_hold(' was: 0 now: 1"))
        self.assertEqual(source.module_param(self.repo, sha).status, "pass")
        # netdev_hold( is the replacement, not the deprecated call.
        sha = self.change({"n.c": "void f(struct net_device *d)\n{\n\tnetdev_hold(d);\n}\n"})
        res = source.deprecated_api(self.repo, sha)
        self.assertEqual((res.status, res.message), ("pass", "Found: 'dev_hold(' was: 1 now: 0"))
        sha = self.change({"o.c": "int x;\n"})
        self.assertEqual(source.deprecated_api(self.repo, sha).message, "None detected")

    def test_check_selftest_order_and_listing(self):
        net = "tools/testing/selftests/net/"
        base = {net + "Makefile": "TEST_PROGS := \\\n\ta.sh \\\n\tc.sh \\\n# end of TEST_PROGS\n",
                net + "config": "CONFIG_A=y\nCONFIG_C=y\n", net + ".gitignore": "a_prog\n"}
        self.change(base)
        sha = self.change({net + "Makefile": "TEST_PROGS := \\\n\ta.sh \\\n\tb.sh \\\n\tc.sh \\\n"
                                             "# end of TEST_PROGS\n",
                           net + "config": "CONFIG_A=y\nCONFIG_B=m\nCONFIG_C=y\n",
                           net + "b.sh": "#!/bin/sh\n", net + "lib/py/x.py": "pass\n"})
        res = selftest.check_selftest(self.repo, sha)
        self.assertEqual(res.status, "pass", res.details)
        self.assertEqual(res.message, "Good format (2); New files in Makefile checked (1)")
        sha = self.change({net + "Makefile": "TEST_PROGS := \\\n\td.sh \\\n\ta.sh \\\n\tb.sh \\\n"
                                             "\tc.sh \\\n# end of TEST_PROGS\n",
                           net + "d.sh": "#!/bin/sh\n"})
        res = selftest.check_selftest(self.repo, sha)
        self.assertEqual(res.status, "fail")
        self.assertIn("'d.sh' should come after 'a.sh'", res.message)
        sha = self.change({net + "config": "CONFIG_A=y\nCONFIG_C=y\nCONFIG_B=m\n",
                           net + "e.py": "pass\n", net + "e_prog.c": "int main(void) {}\n"})
        res = selftest.check_selftest(self.repo, sha)
        self.assertEqual(res.status, "fail")
        self.assertIn("CONFIG_B=m should come before CONFIG_C=y", res.details)
        self.assertIn(net + "e.py not found in Makefile", res.details)
        self.assertIn(net + "e_prog.c not found in .gitignore", res.details)
        sha = self.change({"f.c": "int q;\n"})
        self.assertEqual(selftest.check_selftest(self.repo, sha).message, "No changes to selftests")

    def test_makefile_format(self):
        good = ("TEST_PROGS := \\\n\ta.sh \\\n\tb/x.sh \\\n# end of TEST_PROGS\n"
                "CFLAGS += -Wall -O2\nTEST_FILES := $(wildcard *.py)\n")
        self.assertEqual(selftest.makefile_order_errors(good), [])
        two = good + "TEST_PROGS += \\\n\tz.sh \\\n# end of TEST_PROGS\n"
        self.assertTrue(any("a second block" in e for e in selftest.makefile_order_errors(two)))
        self.assertTrue(selftest.makefile_order_errors(
            "TEST_PROGS := \\\n    a.sh \\\n\tb.sh c.sh \\\n# end of TEST_PROGS\n"))

    def test_maintainers_untouched(self):
        sha = self.change({"g.c": "int g;\n"})
        self.assertEqual(source.maintainers(self.repo, sha).message, "MAINTAINERS not touched")

    def test_maintainers_patterns_must_match(self):
        entry = "THING\nM:\tA U <a@example.invalid>\nS:\tMaintained\nF:\t%s\n"
        sha = self.change({"MAINTAINERS": entry % "net/", "net/x.c": "int x;\n"})
        res = source.maintainers(self.repo, sha)
        self.assertEqual((res.status, res.message),
                         ("pass", "Errors and warnings before: 0 this patch: 0"))
        sha = self.change({"MAINTAINERS": entry % "net/*.c"})
        self.assertEqual(source.maintainers(self.repo, sha).status, "pass")
        sha = self.change({"MAINTAINERS": entry % "drivers/missing.c"})
        res = source.maintainers(self.repo, sha)
        self.assertEqual(res.status, "fail")
        self.assertIn("MAINTAINERS:4: warning: no file matches F:\tdrivers/missing.c",
                      res.message)

    def test_tool_lints_compare_parent_and_patch(self):
        # shellcheck: a new script that is not clean fails (everything counts).
        if not linters.shellcheck.available():
            self.skipTest("no shellcheck")
        sha = self.change({"s.sh": "#!/bin/bash\ncd $1\n"})
        res = linters.shellcheck(self.repo, sha)
        self.assertEqual(res.status, "fail", res.details)
        self.assertTrue(res.message.startswith("Errors before: 0 (+warn: 0) this patch: "))
        # An already unclean script that gets no worse passes.
        sha = self.change({"s.sh": "#!/bin/bash\ncd $1\necho ok\n"})
        self.assertEqual(linters.shellcheck(self.repo, sha).status, "pass")
        sha = self.change({"f.c": "int r;\n"})
        self.assertEqual(linters.shellcheck(self.repo, sha).message,
                         "No shell scripts touched, skip")

    def test_yamllint_and_python_lints(self):
        if linters.yamllint.available():
            sha = self.change({"a.yaml": "---\nk: 1\nk: 2\n"})
            res = linters.yamllint(self.repo, sha)
            self.assertEqual(res.status, "fail", res.details)
            self.assertIn("duplication of key", res.details)
        if linters.ruff.available():
            sha = self.change({"p.py": "print(undefined_name)\n"})
            res = linters.ruff(self.repo, sha)
            self.assertEqual((res.status, res.message),
                             ("fail", "Errors before: 0 ; this patch: 1"))
            self.assertIn("F821", res.details)
        if linters.pylint.available():
            sha = self.change({"q.py": '"""Doc."""\nprint(undefined_name)\n'})
            res = linters.pylint(self.repo, sha)
            self.assertEqual(res.status, "fail", res.details)
            self.assertIn("E0602", res.details)

    def test_series_checks(self):
        s = per_series.SeriesInfo
        res = per_series.series_checks([
            s("net/x", "net", ["[PATCH net] a: b"], False, ["Fixes: 0123456789ab (\"x\")\n"]),
            s("net-next/y", "net-next", ["[PATCH net-next 1/3] a", "[PATCH net-next 2/3] b",
                                         "[PATCH 3/3] c"], False),
            s("net-next/z", "net-next", ["[PATCH net 0/16] q"] + ["[PATCH net] q"] * 16, True),
            s("net/w", "net", ["[PATCH net 1/2] a", "[PATCH net 2/2] b"], False,
              ["+++ b/net/core/dev.c\n"])])
        self.assertEqual(res["net/x:cover_letter"].status, "pass")
        self.assertEqual(res["net/x:fixes_present"].status, "pass")
        self.assertEqual(res["net/x:tree_selection"].message, "Clearly marked for net")
        self.assertEqual(res["net-next/y:cover_letter"].status, "warn")
        self.assertEqual(res["net-next/y:subject_prefix"].status, "fail")
        self.assertIn("[PATCH 3/3] c", res["net-next/y:subject_prefix"].message)
        self.assertEqual(res["net-next/z:patch_count"].status, "fail")
        self.assertEqual(res["net-next/z:tree_selection"].status, "fail")
        self.assertEqual(res["net-next/z:fixes_present"].status, "pass")
        self.assertEqual(res["net/w:fixes_present"].message,
                         "Series targets non-next tree, but doesn't contain any Fixes tags")
        self.assertEqual(set(k.split(":")[1] for k in res), set(runner.SERIES_CHECKS))

    def test_series_checks_pass_the_committed_series(self):
        """The series as committed in patches/ are green, the cover letters'
        subjects read as mailed ([PATCH net 0/4] ...): every series of two
        or more patches has one (b4 mails one with them)."""
        infos = [per_series.series_info(ser) for ser in series.load_series()]
        self.assertTrue(infos)
        for info in infos:
            patches = len(info.subjects) - info.has_cover
            self.assertEqual(info.has_cover, patches > 1, info.name)
            self.assertEqual(per_series.subject_tree(info.subjects[0]), info.tree, info.subjects[0])
        res = per_series.series_checks(infos)
        self.assertEqual({k: r.status for k, r in res.items() if r.status != "pass"}, {})

    def test_table_names_failing_patch(self):
        r = patchwork.PatchReport(2, "net-next", "abc", "net: dummy: broken")
        r.results = {c: patchwork.Result("pass") for c in runner.CHECKS}
        self.assertTrue(r.ok)
        r.results["source_inline"] = patchwork.Result("warn", "Was 1 now: 1")
        self.assertTrue(r.ok)
        self.assertEqual(r.warnings, ["source_inline"])
        r.results["checkpatch"] = patchwork.Result("warn", "CHECK: Alignment")
        self.assertFalse(r.ok)
        self.assertEqual(r.failing, ["checkpatch"])
        r.results["build"] = patchwork.Result("fail", "build broken: dummy.c:3: error: x")
        text = patchwork.table([r])
        self.assertIn("FAIL", text)
        self.assertIn("patch 2 build: fail: build broken", text)
        self.assertIn("patch 2 source_inline: warn: Was 1 now: 1", text)

    def test_check_names_are_the_bots(self):
        for name in ("build_32bit", "build_allmodconfig_warn", "build_clang", "build_tools",
                     "checkpatch", "kdoc", "header_inline", "source_inline", "deprecated_api",
                     "module_param", "verify_signedoff", "verify_fixes", "cc_maintainers",
                     "maintainers", "check_selftest", "pylint", "ruff", "shellcheck",
                     "yamllint"):
            self.assertIn(name, runner.CHECKS)
        self.assertNotIn("signoff", runner.CHECKS)
        self.assertNotIn("fixes", runner.CHECKS)


class ObjectBuildTest(unittest.TestCase):
    """The per-object build check with a fake make: what it compiles and how
    it judges the two sides."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = Path(self.tmp.name) / "src"
        self.build = Path(self.tmp.name) / "build"
        self.repo.mkdir()
        self.build.mkdir()

        def git(*args):
            return subprocess.run(["git", "-C", str(self.repo), *args], check=True, text=True,
                                  capture_output=True, env={**os.environ, **ENV}).stdout
        self.git = git
        git("init", "-q")
        (self.repo / "net").mkdir()
        (self.repo / "net/a.c").write_text("int a;\n")
        git("add", "-A")
        git("commit", "-q", "-m", "base")

    def tearDown(self):
        self.tmp.cleanup()

    def commit(self, text):
        (self.repo / "net/a.c").write_text(text)
        self.git("commit", "-q", "-a", "-m", "change")
        return self.git("rev-parse", "HEAD").strip()

    def fake_make(self, warn_on="WARN"):
        calls = []

        def make(objs):
            calls.append(list(objs))
            out = ""
            for o in objs:
                if warn_on in (self.repo / (o[:-2] + ".c")).read_text():
                    out += f"{o[:-2]}.c:1:1: warning: something new\n"
            return 0, out
        return calls, make

    def test_new_warning_fails_and_old_one_passes(self):
        calls, make = self.fake_make()
        b = kbuild.ObjectBuild("build_32bit", self.repo, make, self.build)
        sha = self.commit("int a; /* WARN */\n")
        res = b(sha)
        self.assertEqual(calls, [["net/a.o"], ["net/a.o"]])
        self.assertEqual(res.status, "fail")
        self.assertTrue(res.message.startswith("Errors and warnings before: 0 this patch: 1"))
        sha = self.commit("int a; /* WARN again */\n")
        self.assertEqual(b(sha).message, "Errors and warnings before: 1 this patch: 1")

    def test_unavailable_is_a_named_skip(self):
        _, make = self.fake_make()
        b = kbuild.ObjectBuild("build_clang", self.repo, make, self.build,
                               unavailable="no clang >= 17.0.1 (found: clang 14.0.6)")
        res = b(self.commit("int b;\n"))
        self.assertEqual((res.status, res.message),
                         ("skip", "no clang >= 17.0.1 (found: clang 14.0.6)"))

    def compile_udivdi3_caller(self):
        """Compile net/a.o, an object that calls __udivdi3 (what a u64
        division becomes on a 32-bit kernel)."""
        src = self.build / "net/a.c"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text("unsigned long long __udivdi3(unsigned long long, unsigned long long);\n"
                       "unsigned long long r(unsigned long long a, unsigned long long b)\n"
                       "{ return __udivdi3(a, b); }\n")
        subprocess.run(["gcc", "-O2", "-c", str(src), "-o", str(self.build / "net/a.o")],
                       check=True)

    def test_div64_helpers_fail_32bit(self):
        def make(objs):
            self.compile_udivdi3_caller()
            return 0, ""
        b = kbuild.ObjectBuild("build_32bit", self.repo, make, self.build, div64=True)
        res = b(self.commit("int c;\n"))
        self.assertEqual(res.status, "fail")
        self.assertIn("64-bit division without div_u64(): net/a.o: __udivdi3", res.message)
        b.div64 = False
        self.assertEqual(b(self.commit("int d;\n")).status, "pass")

    def test_div64_is_named_beside_new_warnings(self):
        # The main command's control has both: the check stopped at the
        # warning and the division went unnamed.
        warned = {"n": 0}

        def make(objs):
            self.compile_udivdi3_caller()
            warned["n"] += 1
            return 0, ("" if warned["n"] == 1 else
                       "../src/net/a.c:3:5: warning: unused variable 'u' [-Wunused-variable]\n")
        b = kbuild.ObjectBuild("build_32bit", self.repo, make, self.build, div64=True)
        res = b(self.commit("int e;\n"))
        self.assertEqual(res.status, "fail")
        self.assertIn("64-bit division without div_u64(): net/a.o: __udivdi3; new: ", res.message)
        self.assertIn("unused variable", res.message)

    def test_header_change_compiles_the_series_sources(self):
        calls, make = self.fake_make()
        (self.repo / "include").mkdir()
        (self.repo / "include/x.h").write_text("int x;\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "h")
        sha = self.git("rev-parse", "HEAD").strip()
        b = kbuild.ObjectBuild("build_32bit", self.repo, make, self.build,
                               series_sources=["net/a.c"])
        self.assertEqual(b(sha).status, "pass")
        self.assertEqual(calls[-1], ["net/a.o"])


XMIT_C = """
struct sk_buff { int len; };
extern void lstats_add(void *dev, int len);
extern void free_skb(struct sk_buff *skb);
extern const char *names[];
%s
int dummy_xmit(struct sk_buff *skb, void *dev)
{
\tlstats_add(dev, skb->len);
%s\tfree_skb(skb);
\treturn names[skb->len & 3][0];
}
"""
# Code in front of dummy_xmit: everything after it moves, and objdump lists
# its relocation (the call) under dummy_xmit's first instruction.
OTHER_FN = ("extern void ext(int x);\n"
            "int other(int x) { ext(x); return x * 7 + (x > 3 ? 1 : 2); }\n")


class XmitDisasmTest(unittest.TestCase):
    """The disassembly check on objects gcc and objdump really make."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.build = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def compile(self, before="", extra=""):
        src = self.build / "drivers/net/dummy.c"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(XMIT_C % (before, extra))
        subprocess.run(["gcc", "-O2", "-fno-pic", "-c", str(src), "-o",
                        str(self.build / "drivers/net/dummy.o")], check=True)

    def baseline(self):
        self.compile()
        return xmit.disassemble(self.build, *xmit.SINGLE_QUEUE_XMIT)

    def test_same_function_moved_passes(self):
        check = xmit.XmitDisasm(self.build, self.baseline())
        self.compile(before=OTHER_FN)
        res = check("c")
        self.assertEqual(res.status, "pass", res.details)

    def test_changed_function_fails_with_the_difference(self):
        check = xmit.XmitDisasm(self.build, self.baseline())
        self.compile(extra="\tif (skb->len > 1)\n\t\tlstats_add(dev, 0);\n")
        res = check("c")
        self.assertEqual(res.status, "fail")
        self.assertIn("dummy_xmit differs from the base", res.message)
        self.assertIn("+", res.details)

    def test_missing_function_fails(self):
        check = xmit.XmitDisasm(self.build, self.baseline())
        (self.build / "drivers/net/dummy.o").unlink()
        self.assertEqual(check("c").status, "fail")
        self.assertEqual(xmit.XmitDisasm(self.build, None)("c").status, "fail")

    def test_relocations_of_code_before_are_not_the_functions(self):
        self.compile(before=OTHER_FN)
        body = xmit.disassemble(self.build, *xmit.SINGLE_QUEUE_XMIT)
        self.assertFalse(any("ext-0x4" in ln for ln in body), body)
        self.assertTrue(any("free_skb" in ln for ln in body), body)

    def test_new_warnings_still_leave_objects_to_compare(self):
        # The negative control's patch adds warnings and changes dummy_xmit:
        # the comparison must still run on its objects.
        self.assertFalse(kbuild.build_broken(patchwork.Result("fail", "2 new warning(s): x")))
        self.assertTrue(kbuild.build_broken(patchwork.Result("fail", "build broken: error")))
        self.assertTrue(kbuild.build_broken(patchwork.Result("fail", "parent does not build: e")))
        self.assertFalse(kbuild.build_broken(patchwork.Result("pass", "no new warnings")))

    def test_transmit_path_names_the_function_that_changed(self):
        # Two functions of the path in two objects; only the second changes.
        path = self.build / "net/sched/sch_generic.c"
        path.parent.mkdir(parents=True)

        def sched(extra):
            path.write_text(XMIT_C.replace("dummy_xmit", "pfifo_fast_enqueue") % ("", extra))
            subprocess.run(["gcc", "-O2", "-fno-pic", "-c", str(path), "-o",
                            str(path.with_suffix(".o"))], check=True)
        self.compile()
        sched("")
        targets = (xmit.SINGLE_QUEUE_XMIT, ("net/sched/sch_generic.o", "pfifo_fast_enqueue"))
        check = xmit.TransmitPath(self.build, targets)
        self.compile(before=OTHER_FN)
        res = check("c")
        self.assertEqual(res.status, "pass", res.details)
        self.assertIn("2 functions as on the base", res.message)
        sched("\tif (skb->len > 1)\n\t\tlstats_add(dev, 0);\n")
        res = check("c")
        self.assertEqual(res.status, "fail")
        self.assertEqual(res.message.count("differs from the base"), 1, res.message)
        self.assertIn("pfifo_fast_enqueue differs from the base", res.message)

    def test_the_bypass_path_is_compared(self):
        self.assertIn(("net/core/dev.o", "__dev_queue_xmit"), xmit.SAME_AS_BASE)
        self.assertIn(("net/sched/sch_generic.o", "pfifo_fast_enqueue"), xmit.SAME_AS_BASE)
        self.assertEqual(xmit.SAME_AS_BASE[0], xmit.SINGLE_QUEUE_XMIT)

    def test_normalise_drops_addresses_and_padding(self):
        text = ("0000000000000010 <dummy_xmit>:\n"
                "  10:\tcall   15 <dummy_xmit+0x5>\n"
                "\t\t\t4: R_X86_64_PLT32\tbefore-0x4\n"
                "\t\t\t11: R_X86_64_PLT32\t.text.unlikely+0x2c\n"
                "  15:\tjmp    1c <dummy_xmit+0xc>\n"
                "  1a:\tnopw   0x0(%rax,%rax,1)\n"
                "\n0000000000000020 <next>:\n  20:\tret\n")
        self.assertEqual(xmit.normalise_disassembly(text, "dummy_xmit"),
                         ["call <dummy_xmit+0x5>", "R_X86_64_PLT32 .text.unlikely+OFF",
                          "jmp <dummy_xmit+0xc>"])


class CheckerRefusedTest(unittest.TestCase):
    """A checker the kernel refuses (scripts/checker-valid.sh) checks
    nothing: sparse and cocci fail, naming the refusal (ci/setup-host.sh
    builds a sparse the kernel accepts), never a pass or a skip."""

    REFUSED = ("Makefile:1311: C=1 specified, but sparse is not available or not up to date\n"
               "  CC      drivers/net/dummy.o\n")

    def test_refusal_is_named(self):
        self.assertIn("refused sparse", kbuild.checker_refused(self.REFUSED))
        self.assertIn("refused scripts/coccicheck", kbuild.checker_refused(
            self.REFUSED.replace("C=1", "C=2").replace("sparse is", "scripts/coccicheck is")))
        self.assertEqual(kbuild.checker_refused("  CC      drivers/net/dummy.o\n"), "")

    def test_build_checker_fails_sparse_when_refused(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["git", "init", "-q", d], check=True)
            env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
                   "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
            for i in range(2):
                Path(d, "x.c").write_text(f"int x{i};\n")
                subprocess.run(["git", "-C", d, "add", "x.c"], check=True)
                subprocess.run(["git", "-C", d, "commit", "-qm", f"c{i}"], check=True, env=env)
            head = subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"],
                                           text=True).strip()
            builder = kbuild.BuildChecker(d, lambda args: (0, self.REFUSED))
            build, sparse = builder(head)
        self.assertEqual(build.status, "pass")
        self.assertEqual(sparse.status, "fail")
        self.assertIn("checked nothing", sparse.message)

    def test_build_checker_skips_the_make_for_a_selftests_only_patch(self):
        """A patch touching only tools/testing/ on top of the commit built
        last leaves the build as it was: no make. Anything else, or a parent
        the build is not of, is built on both sides."""
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["git", "init", "-q", d], check=True)
            env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
                   "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
            shas = []
            for i, path in enumerate(["x.c", "x.c", "tools/testing/t.py", "x.c",
                                      "tools/testing/t.py"]):
                Path(d, path).parent.mkdir(parents=True, exist_ok=True)
                Path(d, path).write_text(f"int x{i};\n")
                subprocess.run(["git", "-C", d, "add", path], check=True)
                subprocess.run(["git", "-C", d, "commit", "-qm", f"c{i}"], check=True, env=env)
                shas.append(subprocess.check_output(["git", "-C", d, "rev-parse", "HEAD"],
                                                    text=True).strip())
            makes = []
            # Count the builds (sparse's C=2 runs come with them).
            builder = kbuild.BuildChecker(
                d, lambda args: (makes.extend([] if "C=2" in args else [1]), (0, ""))[1])
            for sha, want in ((shas[1], 2), (shas[2], 0), (shas[3], 2), (shas[4], 0)):
                makes.clear()
                build, sparse = builder(sha)
                self.assertEqual((len(makes), build.status, sparse.status), (want, "pass", "pass"))
            self.assertIn(f"of {shas[3][:12]} stand", build.message)
            # Not on top of the build in place: made on both sides.
            builder.built = shas[1]
            makes.clear()
            builder(shas[4])
            self.assertEqual(len(makes), 2)
