"""The checks as patchwork shows them: a check's Result, a patch's report,
and the plain-text table of a run."""

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

# A warning in patchwork (yellow) fails the stage for checkpatch: it must be
# clean, as the project always had it (so must every series check: the
# stage counts their warnings). Other warnings are reported by name, patch
# by patch. The check names and their order: runner.py.
WARN_FAILS = frozenset(("checkpatch",))
STATUSES = ("pass", "warn", "fail", "skip")


@dataclass
class Result:
    status: str  # pass | warn | fail | skip
    message: str = ""
    details: str = ""
    # What of the check could not run, and why (a tool missing): "" when
    # all of it ran. A deliberate skip (a mode gate, no build) leaves it "".
    missing: str = ""


@dataclass
class PatchReport:
    index: int
    tree: str
    commit: str
    subject: str
    results: dict[str, Result] = field(default_factory=dict)
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing patchwork would mark fail, and no warning from a check
        the project keeps clean (WARN_FAILS)."""
        return not self.failing

    @property
    def failing(self) -> list[str]:
        return [c for c, r in self.results.items()
                if r.status == "fail" or (r.status == "warn" and c in WARN_FAILS)]

    @property
    def warnings(self) -> list[str]:
        return [c for c, r in self.results.items()
                if r.status == "warn" and c not in WARN_FAILS]

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


MARKS = {"pass": "pass", "warn": "warn", "fail": "FAIL", "skip": "-"}
MISSING_MARK = "!"  # after the mark of a check that could not run in full


def mark(res: Result) -> str:
    return MARKS[res.status] + (MISSING_MARK if res.missing else "")


def table(reports: Iterable[PatchReport], columns: Sequence[str] | None = None,
          detail: bool = False) -> str:
    """Plain-text patch x check table, then each failure, warning and what
    could not run (detail: every check's message and details too); the
    columns by default those of the first report, in its order."""
    reports = list(reports)
    if columns is None:
        columns = list(reports[0].results) if reports else []
    head = ["#", "series", "patch"] + list(columns)
    rows = []
    for r in reports:
        cells = [str(r.index), r.tree, r.subject[:40]]
        for c in columns:
            cells.append(mark(r.results.get(c, Result("skip"))))
        rows.append(cells)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    for r in reports:
        for c in columns:
            res = r.results.get(c)
            if res is None:
                continue
            if detail or res.status in ("fail", "warn"):
                lines.append(f"  patch {r.index} {c}: {res.status}: {res.message}")
            if res.missing:
                lines.append(f"  patch {r.index} {c}: could not run: {res.missing}")
            if detail and res.details.strip():
                lines += ["      " + ln for ln in res.details.strip().splitlines()]
    return "\n".join(lines)
