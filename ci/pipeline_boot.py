"""The stages that boot the kernels: KUnit in UML (kunit/run.py) on the
patched tree, and the selftests with the tc-testing peer suite on the base
and the patched kernel under virtme-ng (ci/selftests_run.py)."""

from pipeline_common import X86_BUILD, BuildProgress, StageFailed, log
from pipeline_tree import TreeStages
import report
import run as kunit_run


class BootStages(TreeStages):
    def stage_kunit(self, st):
        self.checkout(self.series_tree, self.tip)
        res = kunit_run.run(self.series_tree, self.ws / "series/build-kunit",
                            log_path=self.logfile("kunit"),
                            json_path=self.results / "kunit.json",
                            echo=BuildProgress("kunit"))
        for suite, case, status in res.cases:
            s = {"PASS": "pass", "SKIP": "skip"}.get(status, "fail")
            st.cases.append(report.Case(f"kunit.{suite}", case, s, status))
        st.summary = f"KUnit (UML): {res.summary()}"
        if not res.ok:
            raise StageFailed(st.summary + f" (kunit.py exit {res.exit_code}; see {res.log_path})")

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
