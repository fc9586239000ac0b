"""The source stamp of a results directory: which project commit made the
results, whether the work tree differed from it, a digest of patches/
(what the patched kernels were built from) and the stages that made them
(common/record_inputs.py: what each reads). ci/tests/test_results_fresh.py
flags kept results older than the code they describe.

A kernel build directory is stamped too (build_source, written by
kernel/build.sh after a build): the tree commit it was built from, so a
record names each kernel it ran by what was built, not by a path.

  python3 -m common.stamp build-source SRC OUT   stamp the build directory OUT
"""

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from common.git import GitError, git, git_bytes
from common.paths import ROOT

BUILD_SOURCE = "build-source.json"


def source_stamp(root: Path = ROOT, stages: Sequence[str] | None = None) -> dict[str, object]:
    """The stamp of the project checkout at root, as a dict; with the
    stages (names of common/record_inputs.STAGES) that made the record."""
    def git_or_empty(*args: str) -> str:
        try:
            return git(root, *args)
        except GitError:
            return ""
    digest = hashlib.sha256()
    for f in sorted((root / "patches").rglob("*.patch")):
        digest.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    stamp: dict[str, object] = {
        "commit": git_or_empty("rev-parse", "HEAD") or "unknown",
        # Any local change but to the documentation (where results are kept)
        "dirty": bool(git_or_empty("status", "--porcelain", "--", ".", ":(exclude)Documentation")),
        "patches_sha256": digest.hexdigest()}
    if stages is not None:
        stamp["stages"] = list(stages)
    return stamp


def write_source_stamp(directory: str | Path, root: Path = ROOT,
                       stages: Sequence[str] | None = None) -> None:
    """Write the stamp as directory/source.json (the directory is made)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "source.json").write_text(
        json.dumps(source_stamp(root, stages), indent=1) + "\n")


def tree_source(src: str | Path) -> dict[str, object]:
    """What a kernel tree holds: its HEAD commit and whether it has local
    changes, with their digest (tracked changes and untracked files), which
    a build of it compiles too. commit None: not a git tree."""
    def out(*args: str) -> bytes:
        res = git_bytes(src, *args)
        if res.returncode:
            raise GitError(f"git {' '.join(args)} failed in {src}: {res.stderr.decode().strip()}")
        return res.stdout
    try:
        commit = out("rev-parse", "HEAD").decode().strip()
        status = out("status", "--porcelain")
    except (GitError, FileNotFoundError):
        return {"tree": str(src), "commit": None, "dirty": None}
    source: dict[str, object] = {"tree": str(src), "commit": commit, "dirty": bool(status)}
    if status:
        digest = hashlib.sha256(out("diff", "--binary", "HEAD"))
        for name in sorted(out("ls-files", "-z", "--others", "--exclude-standard").split(b"\0")):
            if name:
                digest.update(name + b"\0" + (Path(src) / name.decode()).read_bytes())
        source["changes_sha256"] = digest.hexdigest()
    return source


def write_build_source(src: str | Path, out: str | Path) -> None:
    """Stamp the build directory out as built from the tree src."""
    (Path(out) / BUILD_SOURCE).write_text(json.dumps(tree_source(src), indent=1) + "\n")


def build_source(build: str | Path) -> dict[str, object]:
    """A kernel build directory as a record names it: its path, and the
    tree commit it was built from (commit None when the directory has no
    stamp: built before kernel/build.sh wrote one)."""
    try:
        source = json.loads((Path(build) / BUILD_SOURCE).read_text())
    except (OSError, ValueError):
        source = {"commit": None}
    return {"dir": str(build), **source}


def main(argv: Sequence[str]) -> int:
    if len(argv) != 3 or argv[0] != "build-source":
        print("usage: python3 -m common.stamp build-source SRC OUT", file=sys.stderr)
        return 2
    write_build_source(argv[1], argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
