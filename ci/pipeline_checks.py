"""The checks stage: every patch of the applied series checked the way netdev
CI does (tools/series/checks.py), the series-level checks, and in test mode
the negative control, a deliberately broken patch the checks must fail."""

import re
import subprocess
from pathlib import Path

from pipeline_common import CACHE, ROOT, X86_BUILD, StageFailed, log
from pipeline_tree import TreeStages
import checks
import report
import series

# Appended to drivers/net/dummy.c by the negative control: an unused function
# with an unused variable (a W=1 warning) and a line over 80 columns.
NEGATIVE_CONTROL = (
    "\nstatic int dummy_negative_control(void)\n{\n\tint unused_variable;\n\n"
    "\treturn 0;  /* a comment that makes this line far longer than eighty columns */\n}\n")
# ... and a change to the single-queue transmit path, as the first version of
# the per-queue statistics made: a load of the private area on every packet.
NEGATIVE_CONTROL_XMIT = ("\tdev_lstats_add(dev, skb->len);\n",
                         "\tdev_lstats_add(dev, skb->len);\n"
                         "\tif (READ_ONCE(dev->real_num_tx_queues) > 1)\n"
                         "\t\tskb_orphan(skb);\n")
# The checks that must fail the broken patch.
NEGATIVE_CONTROL_CAUGHT_BY = {"checkpatch", "build", "xmit_disasm"}


class CheckStages(TreeStages):
    def stage_checks(self, st):
        tree = self.series_tree
        out = self.ws / "series" / X86_BUILD
        self.series_build = out
        known = checks.load_known_commits(ROOT / "kernel/known-commits.txt")
        # Start from a build of the base, then walk the series.
        self.checkout(tree, self.base["BASE_TAG"])
        self.build(tree, out, "build-series", ["W=1"])
        disasm = checks.XmitDisasm(out, checks.disassemble(out, *checks.SINGLE_QUEUE_XMIT))

        def make(args):
            return self.build(tree, out, "build-series", ["W=1", *args], check=False)

        builder = checks.BuildChecker(tree, make, log=log)
        cocci = checks.Cocci(tree, make, CACHE / "cocci-cache.json", log=log)
        self.patch_reports = self.check_commits(tree, self.applied, builder, cocci, known,
                                                disasm)
        # Series-level checks.
        all_series = []
        for ser in series.load_series():
            subjects = [re.search(r"^Subject: (.*)$", p.read_text(), re.M)[1] for p in ser.patches]
            all_series.append((ser.name, ser.tree, subjects, ser.cover is not None))
        self.series_results = checks.series_checks(all_series)
        for name, res in self.series_results.items():
            st.cases.append(report.Case("series", name, res.status, res.message))
        for r in self.patch_reports:
            for c, res in r.results.items():
                st.cases.append(report.Case(f"checks.{r.tree}", f"{r.index:02d} {c} {r.subject}",
                                            res.status, res.message, res.details))
        log(checks.table(self.patch_reports))
        bad = [r for r in self.patch_reports if not r.ok]
        bad_series = [n for n, r in self.series_results.items() if r.status == "fail"]
        if self.mode == "test":
            self.negative_control(st, tree, builder, cocci, known, disasm)
        # Leave the tree and its build at the tip: that is the patched kernel.
        self.checkout(tree, self.tip)
        self.build(tree, out, "build-series", ["W=1"])
        st.summary = (f"{len(self.patch_reports)} patches x {len(checks.CHECKS)} checks: "
                      f"{len(bad)} patch(es) failing; series checks "
                      f"{'ok' if not bad_series else 'FAILED: ' + ', '.join(bad_series)}")
        if bad or bad_series:
            raise StageFailed(st.summary)

    def check_commits(self, tree, commits, builder, cocci, known, disasm):
        reports = []
        for i, (ser, patch, sha) in enumerate(commits, 1):
            tree_name = ser.tree
            subject = subprocess.check_output(["git", "-C", str(tree), "log", "-1", "--format=%s",
                                               sha], text=True).strip()
            log(f"  [{i}/{len(commits)}] {ser.name}: {subject}")
            r = checks.PatchReport(i, ser.name, sha, subject)
            r.results["checkpatch"] = checks.checkpatch(tree, sha)
            r.results["signoff"] = checks.signoff(tree, sha)
            r.results["fixes"] = checks.fixes(tree, sha, tree_name, known)
            r.results["kdoc"] = checks.kdoc(tree, sha)
            r.results["build"], r.results["sparse"] = builder(sha)
            # New warnings fail "build" but leave the objects to compare.
            r.results["xmit_disasm"] = (checks.Result("skip", "no build")
                                        if checks.build_broken(r.results["build"])
                                        else disasm(sha))
            r.results["cocci"] = (checks.Result("skip", "build failed")
                                  if r.results["build"].status == "fail" else cocci(sha))
            r.results["maintainers"], r.to, r.cc = checks.maintainers(tree, sha)
            for c in checks.CHECKS:
                res = r.results[c]
                if res.status == "fail":
                    log(f"      {c}: FAIL {res.message}")
            reports.append(r)
        return reports

    def negative_control(self, st, tree, builder, cocci, known, disasm):
        """A deliberately broken patch must fail the checks, named."""
        tip = self.tip
        self.checkout(tree, tip)
        target = tree / "drivers/net/dummy.c"
        text = target.read_text()
        old, new = NEGATIVE_CONTROL_XMIT
        if text.count(old) != 1:
            raise StageFailed(f"negative control: {old.strip()!r} not once in {target}")
        target.write_text(text.replace(old, new) + NEGATIVE_CONTROL)
        subject = "net: dummy: deliberately broken negative control"
        env = series.role_env(series.load_conf())
        subprocess.run(["git", "-C", str(tree), "commit", "-q", "-a", "-s", "-m", subject],
                       check=True, env={**env, "GIT_AUTHOR_NAME": env["GIT_COMMITTER_NAME"],
                                        "GIT_AUTHOR_EMAIL": env["GIT_COMMITTER_EMAIL"]})
        sha = subprocess.check_output(["git", "-C", str(tree), "rev-parse", "HEAD"],
                                      text=True).strip()
        log("  negative control: checks on a deliberately broken patch")
        ser = series.Series("net-next", "negative-control", Path("."), 1)
        r = self.check_commits(tree, [(ser, Path("negative-control.patch"), sha)],
                               builder, cocci, known, disasm)[0]
        failed = sorted(c for c, res in r.results.items() if res.status == "fail")
        want = NEGATIVE_CONTROL_CAUGHT_BY
        ok = want <= set(failed)
        log(checks.table([r]))
        st.cases.append(report.Case("checks.self-test", "broken patch is caught and named",
                                    "pass" if ok else "fail",
                                    f"failing checks: {', '.join(failed) or 'none'}"))
        self.checkout(tree, tip)
        if not ok:
            raise StageFailed(f"negative control not caught: failing checks {failed}, want {want}")
