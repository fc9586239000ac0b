"""The submission stage: every series through b4 as a contributor sends it
(tools/series/b4flow.py): prep, check, auto-to-cc, send -o (mails written,
not sent), the mbox applied back onto the base with the same tree ids,
trailers collected from a crafted reply, and a v2 with its range-diff."""

from pipeline_common import BRANCH_PREFIX, StageFailed, log
from pipeline_tree import TreeStages
import b4flow
import report
import series

# The dry run needs a sender other than the role identity; a machine without
# a git identity sends (to nowhere) as this one.
FALLBACK_SENDER = ("mqbypass CI", "ci@mqbypass.invalid")


class SubmitStages(TreeStages):
    def stage_submission(self, st):
        try:
            identity = series.submitter_identity(self.series_tree)
        except series.SeriesError:
            identity = FALLBACK_SENDER
            log(f"  no git user.name/user.email: the dry run sends as {identity[0]} "
                f"<{identity[1]}>")
        try:
            jobs = b4flow.run_all(self.series_tree, self.base["BASE_TAG"],
                                  self.results / "b4", log, prefix=BRANCH_PREFIX,
                                  identity=identity)
            failed = None
        except b4flow.FlowError as err:
            jobs, failed = getattr(err, "jobs", []), err
        for j in jobs:
            for step, status, secs, detail in j.steps:
                st.cases.append(report.Case(f"b4.{j.name}", step, status,
                                            f"{secs:.0f}s {detail}".strip()))
        if failed:
            raise StageFailed(f"b4: {failed}")
        st.summary = (f"{len(jobs)} series through b4 prep/check/send -o; mbox round trip "
                      f"gives the workspace trees; report {self.results / 'b4/b4.md'}")
