"""The posting order: netdev CI applies a series to the tip of its tree,
so a series building on another waits until that one is merged there."""

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.series.model import TREES, SeriesError


@dataclass
class Posting:
    """A series' place in the posting order."""
    series: Any  # a Series, or anything with .name, .tree and .depends (a b4flow.Job)
    merged: bool = False  # the series itself is marked merged (posted before)
    prerequisite_merged: bool = False  # the series it builds on is merged into its tree
    # To and Cc of its mails, as send_prep() wrote them (get_maintainer.pl).
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.series.depends) and not self.prerequisite_merged

    @property
    def status(self) -> str:
        ser = self.series
        if self.merged:
            return "merged: posted before, not posted again"
        if self.blocked:
            return f"blocked until {ser.depends} is merged into {ser.tree}"
        if ser.depends:
            return (f"post now, rebased onto {ser.tree} with {ser.depends} merged "
                    "(no prerequisite ids)")
        return "post now"


def post_order(all_series: Sequence[Any], merged: Collection[str] = ()) -> list[Posting]:
    """[Posting] in the order to post the series: net before net-next, each
    after the series it builds on. A series building on another is blocked
    until that one is merged into its tree (netdev CI applies a series to the
    tip of its tree): `merged` names the series known to be merged."""
    names = [ser.name for ser in all_series]
    for m in merged:
        if m not in names:
            raise SeriesError(f"--merged {m}: no such series (series: {', '.join(names)})")
    pending = sorted(all_series, key=lambda ser: (TREES.index(ser.tree), ser.name))
    order: list[Any] = []
    seen: set[str] = set()
    while pending:
        ser = next((x for x in pending if not x.depends or x.depends in seen), None)
        if ser is None:
            raise SeriesError(f"{pending[0].name} builds on {pending[0].depends}, which is "
                              f"not a series to post before it ({', '.join(names)})")
        if ser.name in merged and ser.depends and ser.depends not in merged:
            raise SeriesError(f"--merged {ser.name}: it builds on {ser.depends}, which is "
                              f"then merged too: add --merged {ser.depends}")
        order.append(ser)
        seen.add(ser.name)
        pending.remove(ser)
    return [Posting(ser, ser.name in merged, bool(ser.depends) and ser.depends in merged)
            for ser in order]


def order_lines(postings: Sequence[Posting]) -> list[str]:
    """The posting order as numbered lines, with what to do about a blocked series."""
    lines = []
    for i, p in enumerate(postings, 1):
        lines.append(f"{i}. {p.series.name}: {p.status}")
        if p.blocked:
            lines.append(f"   post {p.series.depends} first; once it is in {p.series.tree}, "
                         f"run again with --merged {p.series.depends}")
    return lines
