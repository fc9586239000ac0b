"""The test kernel's configuration, from the tree's own selftest configs.

netdev CI configures its VM kernels with `vng --kconfig` (x86_64 defconfig
plus what virtme-ng needs) and the config fragment of the selftest
collection under test. The test kernels here merge, on tinyconfig:
kernel/configs/vng.config (booting under virtme-ng), defconfig-net.config
(x86_64 defconfig's values the fragments take for granted), the fragment of
each collection the VM runs as the series' tip has it (the same for every
kernel that runs the series' tests: base, each patch, patched, debug,
stable), and net-tests.config (what only the project's own programs need).
kernel/build.sh fails on an option a fragment asks for and the kernel does
not get, but those tree-unmet.txt lists with their reason.

check() keeps the project's files from copying the tree: a line of
net-tests.config that a tree fragment already sets, or a line of
defconfig-net.config that is not defconfig's, is an error naming it.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ci.matrix import kselftests
from ci.pipeline_common import CONFIGS
from common.git import GitError, git
from common.programs import PROGRAMS_TXT, read_programs

OPTION = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(\S+)", re.M)
# A program of kind tdc runs the tree's tc-testing.
TDC_COLLECTION = "tc-testing"
SELFTESTS = Path("tools/testing/selftests")
# Merged before the tree's fragments, and after them.
FIRST = (CONFIGS / "vng.config", CONFIGS / "defconfig-net.config")
OWN = CONFIGS / "net-tests.config"
# What the tree's fragments ask for and no test kernel gets, with why.
UNMET = CONFIGS / "tree-unmet.txt"


class MissingFragments(Exception):
    """The tree's fragments were not extracted (the pipeline's apply stage does)."""


def options(text: str) -> dict[str, str]:
    """The CONFIG_X=value lines of a fragment or .config (the last one wins)."""
    return dict(OPTION.findall(text))


def collections(programs_txt: str | Path = PROGRAMS_TXT) -> list[str]:
    """The tree's selftest collections the VM programs run: those of the
    kselftest programs, in order, then tc-testing if a tdc program runs."""
    progs = read_programs(programs_txt)
    tests = {p.name: p.kselftest for p in progs if p.kind == "kselftest"}
    out = kselftests.kselftest_collections([(p.name, p.kind) for p in progs], tests)
    if any(p.kind == "tdc" for p in progs):
        out.append(TDC_COLLECTION)
    return out


def fragment_path(ws: Path, collection: str) -> Path:
    """Where extract() keeps a collection's fragment: WS/series/kconfig/."""
    return ws / "series" / "kconfig" / (collection.replace("/", "-") + ".config")


def extract(tree: Path, rev: str, ws: Path, colls: Sequence[str] | None = None,
            error: type[Exception] = GitError) -> dict[str, str]:
    """Write each collection's config as tree has it at rev to
    fragment_path() (a file is rewritten only when it changes); returns
    {collection: text}. A collection without a config raises error."""
    out = {}
    for coll in colls if colls is not None else collections():
        text = git(tree, "show", f"{rev}:{SELFTESTS / coll / 'config'}", error=error)
        path = fragment_path(ws, coll)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text + "\n":
            path.write_text(text + "\n")
        out[coll] = text
    return out


def test_fragments(ws: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The fragments of a test kernel, in merge order, then extra (debug,
    kcsan, ...). Raises MissingFragments before extract() ran for ws."""
    tree = [fragment_path(ws, c) for c in collections()]
    missing = [str(p) for p in tree if not p.is_file()]
    if missing:
        raise MissingFragments(f"no {', '.join(missing)}: the pipeline's apply stage writes the "
                               "tree's selftest fragments (e.g. ./ci/test.sh --only setup base "
                               "apply)")
    return [*FIRST, *tree, OWN, *extra]


def copies(own: str, tree_fragments: Mapping[str, str]) -> list[str]:
    """The options of own that a tree fragment sets to the same value, each
    with the fragments that do."""
    named: dict[str, list[str]] = {}
    for name, text in tree_fragments.items():
        for opt, value in options(text).items():
            named.setdefault(f"{opt}={value}", []).append(name)
    return [f"{opt}={value} (copies {', '.join(named[f'{opt}={value}'])})"
            for opt, value in options(own).items() if f"{opt}={value}" in named]


def not_defconfig(fragment: str, defconfig: str) -> list[str]:
    """The options of fragment that defconfig does not set to the same value."""
    known = options(defconfig)
    return [f"{opt}={value} (defconfig: {known.get(opt, 'not set')})"
            for opt, value in options(fragment).items() if known.get(opt) != value]


def check(own: str, defaults: str, tree_fragments: Mapping[str, str],
          defconfig: str) -> list[str]:
    """What the project's fragments must not do: copy a tree fragment's line
    (net-tests.config) or differ from defconfig (defconfig-net.config)."""
    return ([f"{OWN.name}: {p}" for p in copies(own, tree_fragments)]
            + [f"{FIRST[1].name}: {p}" for p in not_defconfig(defaults, defconfig)])


def report(problems: Iterable[str], colls: Iterable[str]) -> str:
    """One line for the stage: what was compared and what failed."""
    problems = list(problems)
    frags = ", ".join(f"{SELFTESTS}/{c}/config" for c in colls)
    if not problems:
        return (f"test kernel config: {frags}, no line of them copied into {OWN.name}, "
                f"{FIRST[1].name} as x86_64 defconfig")
    return f"test kernel config: {len(problems)} problem(s): {'; '.join(problems)}"


def main(argv: Sequence[str] | None = None) -> int:
    """python3 -m ci.kconfig_tree [NAME...]: the test kernel's fragments, one
    per line, then kernel/configs/NAME.config for each NAME (debug, kcsan)."""
    import argparse  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from common.cache import cache_dir  # noqa: PLC0415

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0] if main.__doc__ else "")
    ap.add_argument("names", nargs="*", help="kernel/configs/NAME.config to add")
    args = ap.parse_args(argv)
    extra = [CONFIGS / f"{n}.config" for n in args.names]
    try:
        missing = [str(p) for p in extra if not p.is_file()]
        if missing:
            raise MissingFragments(f"no {', '.join(missing)}")
        frags = test_fragments(cache_dir() / "ws", extra)
    except MissingFragments as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print("\n".join(map(str, frags)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
