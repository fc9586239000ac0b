"""selftests/programs.txt, the programs the VM runs on each kernel: read
here and nowhere else (the VM's side, selftests/run-in-vm.sh, runs them).

One program a line, `name kind command`; blank lines and lines starting
with "#" aside. Kinds: ktap (the program prints KTAP, each case judged on
its own), kselftest (one test of the tree's installed selftests, run by the
kselftest runner, run_kselftest.sh: its command names the test as
COLLECTION:TEST, and its cases are read from the runner's KTAP) and tdc (the
tree's tc-testing, its TAP read case by case)."""

import re
from dataclasses import dataclass
from pathlib import Path

from common.paths import ROOT

PROGRAMS_TXT = ROOT / "selftests/programs.txt"
# where the userspace stage builds the C++ programs (CMake's build tree)
CXX_BUILD = ROOT / "build/cxx"
KINDS = ("ktap", "kselftest", "tdc")
# run_kselftest.sh's name of a test: COLLECTION:TEST, e.g. drivers/net:stats.py
KSFT_TEST_RE = re.compile(r"(?<!\S)(\w[\w/.-]*):([\w.-]+)(?!\S)")


@dataclass(frozen=True)
class Program:
    name: str
    kind: str  # one of KINDS
    command: str

    @property
    def kselftest(self) -> str:
        """COLLECTION:TEST of a kselftest program (the first word of its
        command that has that form), "" for the other kinds."""
        m = KSFT_TEST_RE.search(self.command) if self.kind == "kselftest" else None
        return f"{m[1]}:{m[2]}" if m else ""


def read_programs(path: str | Path = PROGRAMS_TXT) -> list[Program]:
    """The programs of path in file order; a line without a command, with a
    kind not in KINDS, or of kind kselftest without a COLLECTION:TEST in its
    command is a ValueError naming it."""
    progs = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(None, 2)
        if len(fields) < 3 or fields[1] not in KINDS:
            raise ValueError(f"{path}:{n}: not 'name kind command' with a kind of "
                             f"{', '.join(KINDS)}: {line.strip()}")
        prog = Program(*fields)
        if prog.kind == "kselftest" and not prog.kselftest:
            raise ValueError(f"{path}:{n}: a kselftest program names no COLLECTION:TEST "
                             f"in its command: {line.strip()}")
        progs.append(prog)
    return progs
