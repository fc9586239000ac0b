"""selftests/programs.txt, the programs the VM runs on each kernel: read
here and nowhere else (the VM's side, selftests/run-in-vm.sh, runs them).

One program a line, `name kind command`; blank lines and lines starting
with "#" aside. Kinds: ktap (the program prints KTAP, each case judged on
its own) and tdc (the tree's tc-testing, its TAP read case by case)."""

from dataclasses import dataclass
from pathlib import Path

PROGRAMS_TXT = Path(__file__).resolve().parents[1] / "selftests/programs.txt"
KINDS = ("ktap", "tdc")


@dataclass(frozen=True)
class Program:
    name: str
    kind: str  # one of KINDS
    command: str


def read_programs(path: str | Path = PROGRAMS_TXT) -> list[Program]:
    """The programs of path in file order; a line without a command or with
    a kind not in KINDS is a ValueError naming it."""
    progs = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(None, 2)
        if len(fields) < 3 or fields[1] not in KINDS:
            raise ValueError(f"{path}:{n}: not 'name kind command' with a kind of "
                             f"{', '.join(KINDS)}: {line.strip()}")
        progs.append(Program(*fields))
    return progs
