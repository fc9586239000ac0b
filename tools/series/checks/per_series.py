"""The per-series checks (cover_letter, fixes_present, patch_count,
subject_prefix, tree_selection) on a series as it is mailed."""

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tools.series.checks.patchwork import Result

MAX_PATCHES = 15
TREE_NAMES = ("net", "net-next", "bpf", "bpf-next")


@dataclass
class SeriesInfo:
    """A series as it is sent: its directory's tree (net or net-next), the
    subjects of its mails, whether a cover letter leads them, and the
    patches' text."""
    name: str
    tree: str
    subjects: list[str]
    has_cover: bool
    patches: list[str] = field(default_factory=list)  # raw patch texts


def mail_subject(text: str) -> str:
    """The Subject header of a mail, unfolded, prefix included ("" if none)."""
    m = re.search(r"^Subject: (.*(?:\n[ \t][^\n]*)*)", text.partition("\n\n")[0], re.M)
    return re.sub(r"\n[ \t]", " ", m[1]).strip() if m else ""


class Cover(Protocol):
    @property
    def mailed(self) -> str:  # its subject as mailed
        ...


class Series(Protocol):
    """What series_info reads of a series (tools/series/series.py Series)."""
    @property
    def name(self) -> str:
        ...

    @property
    def tree(self) -> str:
        ...

    @property
    def patches(self) -> Sequence[Path]:
        ...

    @property
    def cover(self) -> Cover | None:
        ...


def series_info(ser: Series) -> SeriesInfo:
    """SeriesInfo of a series: the subjects as mailed, prefix included, the
    cover letter's first."""
    texts = [p.read_text() for p in ser.patches]
    covers = [ser.cover.mailed] if ser.cover is not None else []
    return SeriesInfo(ser.name, ser.tree, covers + [mail_subject(t) for t in texts],
                      ser.cover is not None, texts)


def subject_tree(subject: str) -> str | None:
    """The tree a subject's [...] prefix names, or None."""
    m = re.match(r"^\[([^\]]*)\]", subject)
    words = m[1].split() if m else []
    return next((w for w in words if w in TREE_NAMES), None)


def cover_letter(ser: SeriesInfo) -> Result:
    if ser.has_cover:
        return Result("pass", "Series has a cover letter")
    if len(ser.subjects) < 3:
        return Result("pass", "Single patches do not need cover letters")
    return Result("warn", "Series does not have a cover letter")


def fixes_present(ser: SeriesInfo) -> Result:
    if "next" in ser.tree:
        return Result("pass", "Fixes tag not required for -next series")
    if any(re.search(r"^Fixes: ", text, re.M) for text in ser.patches):
        return Result("pass", "Fixes tag present in non-next series")
    paths = [m for text in ser.patches for m in re.findall(r"^\+\+\+ b/(\S+)$", text, re.M)]
    if paths and all(p.startswith("Documentation/") or p == "MAINTAINERS" for p in paths):
        return Result("pass", "No Fixes tags, but series doesn't touch code")
    return Result("fail", "Series targets non-next tree, but doesn't contain any Fixes tags")


def patch_count(ser: SeriesInfo) -> Result:
    n = len(ser.subjects)
    if 0 < n <= MAX_PATCHES:
        return Result("pass", f"{n} patches, at most {MAX_PATCHES}")
    if n == 0:
        return Result("fail", "Series has no patches")
    return Result("fail", f"Series longer than {MAX_PATCHES} patches"
                  + ("" if ser.has_cover else " (and no cover letter)"))


def subject_prefix(ser: SeriesInfo) -> Result:
    bad = [s for s in ser.subjects if subject_tree(s) is None]
    if bad:
        return Result("fail", f"Target tree name not specified in the subject: {bad[0]}")
    return Result("pass", f"Tree named in all {len(ser.subjects)} subjects")


def tree_selection(ser: SeriesInfo) -> Result:
    """The tree the subjects name is the one the series is for; all agree."""
    named = {t for t in map(subject_tree, ser.subjects) if t is not None}
    if not named:
        return Result("warn", f"Guessed tree name to be {ser.tree}")
    if named != {ser.tree}:
        return Result("fail", f"Marked for {', '.join(sorted(named))}, but the series is for "
                      f"{ser.tree}")
    return Result("pass", f"Clearly marked for {ser.tree}")


SERIES_FUNCS: dict[str, Callable[[SeriesInfo], Result]] = {
    "cover_letter": cover_letter, "fixes_present": fixes_present, "patch_count": patch_count,
    "subject_prefix": subject_prefix, "tree_selection": tree_selection}
SERIES_CHECKS = tuple(SERIES_FUNCS)  # in patchwork's order


def series_checks(all_series: Iterable[SeriesInfo]) -> dict[str, Result]:
    """all_series: [SeriesInfo]. Returns {"<series>:<check>": Result}."""
    return {f"{ser.name}:{name}": SERIES_FUNCS[name](ser)
            for ser in all_series for name in SERIES_CHECKS}
