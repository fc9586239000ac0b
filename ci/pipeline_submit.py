"""The submission stage: every series through b4 as a contributor sends it
(tools/series/b4flow.py): prep, check, auto-to-cc, send -o (mails written,
not sent), the mbox applied back onto the base with the same tree ids,
trailers collected from a crafted reply, and a v2 with its range-diff.

Posting follows netdev's order (series.post_order): a series building on
another is blocked until that one is merged into its tree. The other stages
keep testing the merged stack (every series on the base); this one takes
each prerequisite as merged, so a blocked series goes through b4 as it will
be posted (on the base with its prerequisite merged, no prerequisite ids),
and reports the real order: what can be posted now, what waits for what."""

from ci.pipeline_common import BRANCH_PREFIX, StageFailed, log
from ci.pipeline_tree import TreeStages
from tools.series import b4flow
from ci import report
from tools.series import series
from common.stamp import write_source_stamp

# The dry run needs a sender other than the role identity; a machine without
# a git identity sends (to nowhere) as this one.
FALLBACK_SENDER = ("mqbypass CI", "ci@mqbypass.invalid")


def sender(tree):
    """(name, email) the series are sent as: the tree's git identity
    (series.submitter_identity), else FALLBACK_SENDER, said in the log."""
    try:
        return series.submitter_identity(tree)
    except series.SeriesError:
        log(f"  no git user.name/user.email: the dry run sends as {FALLBACK_SENDER[0]} "
            f"<{FALLBACK_SENDER[1]}>")
        return FALLBACK_SENDER


def posting_order(all_series):
    """(details, one-line summary, cases) of the posting order as it stands:
    nothing merged yet."""
    order = series.post_order(all_series)
    now = [p.series.name for p in order if not p.blocked]
    later = [f"{p.series.name} after {p.series.depends} is merged into {p.series.tree}"
             for p in order if p.blocked]
    line = f"post now: {', '.join(now)}" + (f"; {'; '.join(later)}" if later else "")
    cases = [report.Case("posting", p.series.name, "skip" if p.blocked else "pass", p.status)
             for p in order]
    return "\n".join(["posting order:", *series.order_lines(order)]), line, cases


class SubmitStages(TreeStages):
    def stage_submission(self, stage):
        tree = self.state.series_tree
        identity = sender(tree)
        all_series = series.load_series()
        stage.details, order, cases = posting_order(all_series)
        stage.cases += cases
        log(stage.details)
        prerequisites = sorted({s.depends for s in all_series if s.depends})
        try:
            jobs = b4flow.run_all(tree, self.state.base["BASE_TAG"],
                                  self.results / "b4", prefix=BRANCH_PREFIX,
                                  identity=identity, merged=prerequisites, stands=())
            failed = None
        except b4flow.FlowError as err:
            jobs, failed = getattr(err, "jobs", []), err
        for j in jobs:
            for step, status, secs, detail in j.steps:
                stage.cases.append(report.Case(f"b4.{j.name}", step, status,
                                               f"{secs:.0f}s {detail}".strip()))
        if failed:
            raise StageFailed(f"b4: {failed}")
        # The project commit the report comes from (ci/tests/test_results_fresh.py).
        write_source_stamp(self.results / "b4", stages=self.made_by("submission"))
        taken = (f" ({', '.join(prerequisites)} taken as merged: the series building on it "
                 "go through b4 as they will be posted)" if prerequisites else "")
        stage.summary = (f"{len(jobs)} series through b4 prep/check/send -o; mbox round trip "
                         f"gives the workspace trees{taken}; {order}; report "
                         f"{self.results / 'b4/b4.md'}")
