"""The mailing-list stage: every series through a list on loopback
(tools/series/mailflow.py): `b4 send` over SMTP on 127.0.0.1 into a
public-inbox archive served by public-inbox-httpd, `b4 shazam` back from the
archive with the workspace's tree, a Reviewed-by: reply collected with
`b4 trailers -u`, v2 sent and compared with `b4 diff`, a bot answering each
series with its per-patch checks, and the bad input the bot must name
(results/mailing-list/mail.md)."""

from ci.pipeline_common import BRANCH_PREFIX, WS, StageFailed
from ci.pipeline_submit import sender
from ci.pipeline_tree import TreeStages
from tools.series import mailflow
from tools.series import mlist
from ci import report
from tools.series import series


class MailStages(TreeStages):
    def stage_mailing_list(self, stage):
        tree = self.state.series_tree
        identity = sender(tree)
        all_series = series.load_series()
        prerequisites = sorted({s.depends for s in all_series if s.depends})
        # The checks stage's build results, when it ran, quoted by the bot
        # (Pipeline.MAY_READ: the stage runs without it too).
        build = {r.subject: r.results["build"] for r in self.state.get("patch_reports", [])
                 if "build" in r.results}
        try:
            out = mailflow.run_all(tree, self.state.base["BASE_TAG"],
                                   self.results / "mailing-list", prefix=BRANCH_PREFIX,
                                   identity=identity, work=WS / "mail", merged=prerequisites,
                                   build=build)
        except (mlist.ListError, series.SeriesError) as err:
            raise StageFailed(f"mailing list: {err}") from None
        cases_of(out, stage)
        if out.failed:
            raise StageFailed(f"mailing list: {len(out.failed)} failure(s):\n"
                              + "\n".join(out.failed))
        c = out.counts
        stage.summary = (f"{len(out.jobs)} series sent with b4 over SMTP on 127.0.0.1, archived, "
                         f"applied back from the archive with the workspace trees, trailer "
                         f"collected, v2 compared, bot replies; bad input named by the bot "
                         f"({', '.join(b.name for b in out.bad)}); {c['accepted']} messages in, "
                         f"{c['archived']} archived; report "
                         f"{self.results / 'mailing-list/mail.md'}")


def cases_of(out, stage):
    """The report's cases: each step of each series, each bad input, the count."""
    for j in out.jobs:
        for step, status, secs, detail in j.steps:
            stage.cases.append(report.Case(f"mail.{j.name}", step, status,
                                           f"{secs:.0f}s {detail}".strip()))
    for b in out.bad:
        stage.cases.append(report.Case("mail.bad-input", b.name, b.status, b.detail))
    c = out.counts
    if c:
        lost = c["accepted"] != c["archived"] or c["failed"] or c["lost"]
        stage.cases.append(report.Case("mail.archive", "messages in = messages archived",
                                       "fail" if lost else "pass",
                                       f"{c['accepted']} accepted, {c['archived']} archived, "
                                       f"{c['failed']} failed, lost {c['lost']}"))
