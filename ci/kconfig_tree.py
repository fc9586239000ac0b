"""The test kernel's options against the tree's own selftest configs.

netdev CI configures its VM kernels with `vng --kconfig` (x86_64 defconfig
plus what virtme-ng needs) and the config fragment of the selftest
collection under test. The kernels here come from tinyconfig and
kernel/configs/{vng,net-tests}.config (Documentation/design.md, "The test
kernel's configuration"). An option net-tests.config sets that neither
defconfig nor the fragment of a collection the VM runs names could make a
test pass here and fail there: each such option is an error naming it.
"""

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ci import selftests_run
from common.programs import PROGRAMS_TXT, read_programs

OPTION = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(\S+)", re.M)
# A program of kind tdc runs the tree's tc-testing.
TDC_COLLECTION = "tc-testing"
SELFTESTS = Path("tools/testing/selftests")


def options(text: str) -> dict[str, str]:
    """The CONFIG_X=value lines of a fragment or .config (the last one wins)."""
    return dict(OPTION.findall(text))


def collections(programs_txt: str | Path = PROGRAMS_TXT) -> list[str]:
    """The tree's selftest collections the VM programs run: those of the
    kselftest programs, in order, then tc-testing if a tdc program runs."""
    progs = read_programs(programs_txt)
    tests = {p.name: p.kselftest for p in progs if p.kind == "kselftest"}
    out = selftests_run.kselftest_collections([(p.name, p.kind) for p in progs], tests)
    if any(p.kind == "tdc" for p in progs):
        out.append(TDC_COLLECTION)
    return out


def untracked(fragment: str, tree_fragments: Mapping[str, str], defconfig: str) -> list[str]:
    """The options of fragment that defconfig does not set to the same value
    and no tree fragment names with it ("m" where the tree asks "y" counts:
    the test loads the module), each with what the tree has instead."""
    known = options(defconfig)
    named: dict[str, set[str]] = {}
    for name, text in tree_fragments.items():
        for opt, value in options(text).items():
            named.setdefault(opt, set()).add(f"{name}={value}")
    problems = []
    for opt, value in options(fragment).items():
        if known.get(opt) == value:
            continue
        values = {n.rpartition("=")[2] for n in named.get(opt, ())}
        if value in values or (value == "m" and "y" in values):
            continue
        have = sorted(named.get(opt, ())) + ([f"defconfig={known[opt]}"] if opt in known else [])
        where = ", ".join(have) or "no fragment, not in defconfig"
        problems.append(f"{opt}={value} ({where})")
    return problems


def report(problems: Iterable[str], fragment: str, colls: Iterable[str]) -> str:
    """One line for the stage: what was compared and what failed."""
    problems = list(problems)
    frags = ", ".join(f"{SELFTESTS}/{c}/config" for c in colls)
    if not problems:
        return f"{fragment}: every option in x86_64 defconfig or in {frags}"
    return (f"{fragment}: {len(problems)} option(s) neither x86_64 defconfig nor "
            f"{frags} sets: {'; '.join(problems)}")
