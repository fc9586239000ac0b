"""The stages that boot the kernels: KUnit in UML (kunit/run.py) on the
patched tree, and the selftests with the tc-testing peer suite on the base
and the patched kernel under virtme-ng (ci/selftests_run.py)."""

import dataclasses

from pipeline_common import ROOT, TEST_FRAGMENTS, X86_BUILD, BuildProgress, StageFailed, log
from pipeline_tree import TreeStages
import report
import run as kunit_run


def kunit_cases(prefix, res):
    """report.Cases of a kunit_run result, each suite under prefix."""
    return [report.Case(f"{prefix}.{suite}", case,
                        {"PASS": "pass", "SKIP": "skip"}.get(status, "fail"), status)
            for suite, case, status in res.cases]


class BootStages(TreeStages):
    def stage_kunit(self, st):
        self.checkout(self.series_tree, self.tip)
        res = kunit_run.run(self.series_tree, self.ws / "series/build-kunit",
                            log_path=self.logfile("kunit"),
                            json_path=self.results / "kunit.json",
                            echo=BuildProgress("kunit"))
        st.cases.extend(kunit_cases("kunit", res))
        # The same suites on a UML kernel with KASAN and lockdep.
        dbg = kunit_run.run(self.series_tree, self.ws / "series/build-kunit-debug",
                            log_path=self.logfile("kunit-debug"),
                            json_path=self.results / "kunit-debug.json",
                            echo=BuildProgress("kunit (KASAN, lockdep)"),
                            kconfig_add=kunit_run.DEBUG_KCONFIG)
        st.cases.extend(kunit_cases("kunit-debug", dbg))
        st.cases.append(report.Case("kunit-debug", "kernel reports",
                                    "fail" if dbg.splats else "pass",
                                    f"{len(dbg.splats)} KASAN/lockdep/WARNING line(s)",
                                    "\n".join(dbg.splats[:50])))
        st.summary = f"KUnit (UML): {res.summary()}; with KASAN and lockdep: {dbg.summary()}"
        bad = [f"{name} (kunit.py exit {r.exit_code}; see {r.log_path})"
               for name, r in (("normal", res), ("debug", dbg)) if not r.ok]
        if bad:
            raise StageFailed(st.summary + "; failed: " + ", ".join(bad))

    def stage_vm(self, st):
        import selftests_run  # noqa: PLC0415
        outcome = selftests_run.run_matrix(
            {"base": self.ws / "base" / X86_BUILD, "patched": self.ws / "series" / X86_BUILD},
            self.results / "vm", tree=self.series_tree, log=log)
        st.cases.extend(outcome.cases)
        st.summary = outcome.summary
        st.details = outcome.matrix
        log(outcome.matrix)
        if not outcome.ok:
            raise StageFailed(outcome.summary)

    def stage_vm_debug(self, st):
        """The patched kernel built with kernel/configs/debug.config (KASAN,
        lockdep, PROVE_RCU, UBSAN, kmemleak with a scan at the end) and with
        kcsan.config, each booted with the judged programs, churn included
        (the tc-testing peer suite needs a base kernel beside it). A splat,
        a KCSAN report or a kmemleak object fails the kernel's run."""
        import selftests_run  # noqa: PLC0415
        progs = [(p, k) for p, k in selftests_run.programs() if k != "peer"]
        self.checkout(self.series_tree, self.tip)
        summaries, ok = [], True
        for cfg in ("debug", "kcsan"):
            out = self.ws / "series" / f"build-x86-{cfg}"
            self.build(self.series_tree, out, f"build-{cfg}",
                       fragments=[*TEST_FRAGMENTS, ROOT / f"kernel/configs/{cfg}.config"])
            res = selftests_run.run_matrix({"patched": out}, self.results / f"vm-{cfg}",
                                           tree=self.series_tree, log=log, progs=progs,
                                           timeout=3600, churn_seconds=60)
            st.cases.extend(dataclasses.replace(c, suite=f"{cfg}.{c.suite}") for c in res.cases)
            summaries.append(f"{cfg}: {res.summary}")
            log(res.matrix)
            ok = ok and res.ok
        st.summary = "; ".join(summaries)
        if not ok:
            raise StageFailed(st.summary)
