"""The source stamp of a results directory: which project commit made the
results, whether the work tree differed from it, and a digest of patches/
(what the patched kernels were built from). ci/tests/test_results_fresh.py
flags kept results older than the code they describe."""

import hashlib
import json
from pathlib import Path

from common.git import GitError, git
from common.paths import ROOT


def source_stamp(root: Path = ROOT) -> dict[str, object]:
    """The stamp of the project checkout at root, as a dict."""
    def git_or_empty(*args: str) -> str:
        try:
            return git(root, *args)
        except GitError:
            return ""
    digest = hashlib.sha256()
    for f in sorted((root / "patches").rglob("*.patch")):
        digest.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return {"commit": git_or_empty("rev-parse", "HEAD") or "unknown",
            # Any local change but to the documentation (where results are kept)
            "dirty": bool(git_or_empty("status", "--porcelain", "--", ".",
                                       ":(exclude)Documentation")),
            "patches_sha256": digest.hexdigest()}


def write_source_stamp(directory: str | Path, root: Path = ROOT) -> None:
    """Write the stamp as directory/source.json (the directory is made)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "source.json").write_text(json.dumps(source_stamp(root), indent=1) + "\n")
