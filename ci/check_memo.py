"""The checks stage's memory: a patch's check results kept under a key of
everything that decides them, and reused while the key stays the same.

The key (key_parts(), key()) is a sha256 over:
- the commit's tree and its parent's tree (the code before and after),
- its author, committer (name and address, not dates) and raw message:
  not the commit id, which changes with every rebase or `git am`,
- the tree it is checked for (net or net-next), the recipients the run
  holds for it, whether the committer must sign off,
- the checks wanted and the run's unavailable checks with their messages
  (mode gates, builds the host lacks),
- the series' C files BuildChecker compiles for a header change,
- the fingerprint(): the project's files the checks read (PROJECT_FILES),
  the config fragments the builds use, the tools' versions (TOOLS).

Results are kept (Memo.save()) only from a checks stage that passed as a
whole, so a failing patch is always checked again. CHECKS_FRESH=1 checks
every patch again (and keeps the new results)."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from common.git import git, git_run
from common.paths import ROOT
from ci.pipeline_common import CACHE
from tools.series.checks import kbuild, linters
from tools.series.checks.patchwork import PatchReport, Result

# Where the results are kept, one file per key.
STORE = CACHE / "check-results"
# CHECKS_FRESH=1: look nothing up, check every patch (what passes is kept).
FRESH = "CHECKS_FRESH"
# Bump when the stored format changes: older files are then never read.
VERSION = 1
# The project's files whose content decides a check's result (globs under
# ROOT): the checks, the stage that runs them, the kernel build script and
# config fragments, the known commits verify_fixes reads, ruff's rule set.
# The linters take no configuration from the project.
PROJECT_FILES = ("tools/series/checks/**/*", "tools/series/ruff-check.js",
                 "ci/pipeline_checks.py", "ci/check_memo.py", "kernel/build.sh",
                 "kernel/configs/*.config", "kernel/known-commits.txt")


def tool_output(cmd: Sequence[str], first_line: bool = True) -> str:
    """cmd's output (its first line, or all of it on one line), or why
    there is none."""
    if not shutil.which(cmd[0]):
        return "absent"
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"unusable: {err}"
    out = (res.stdout + res.stderr).strip()
    return (out.splitlines() or [""])[0] if first_line else " ".join(out.split())


def _ruff_version() -> str:
    cmd = linters.ruff_command()
    if cmd is None:
        return "absent"
    if cmd[0] == "ruff":
        return tool_output(["ruff", "--version"])
    package = Path(cmd[2]) / "package.json"
    version = json.loads(package.read_text()).get("version") if package.is_file() else None
    return f"node {tool_output(['node', '--version'])}, ruff-wasm {version}"


# Each tool the checks run but clang (the stage's find_clang() names the
# one it picks), and how to read its version.
TOOLS: dict[str, Callable[[], str]] = {
    "gcc": lambda: tool_output(["gcc", "--version"]),
    "sparse": lambda: tool_output([kbuild.sparse_command(), "--version"]),
    "spatch": lambda: tool_output(["spatch", "--version"]),
    "objdump": lambda: tool_output(["objdump", "--version"]),
    "perl": lambda: tool_output(["perl", "-e", "print $^V"]),
    "pylint": lambda: tool_output(["pylint", "--version"], first_line=False),
    "ruff": _ruff_version,
    "shellcheck": lambda: tool_output(["shellcheck", "--version"], first_line=False),
    "yamllint": lambda: tool_output(["yamllint", "--version"]),
    "python": lambda: sys.version,
}


def tool_versions(clang: str) -> dict[str, str]:
    """{tool: version}; clang: the one the stage picks, as find_clang() names it."""
    return {**{name: read() for name, read in TOOLS.items()}, "clang": clang}


def fingerprint(tools: dict[str, str], fragments: Iterable[Path] = (),
                root: Path = ROOT, patterns: Sequence[str] = PROJECT_FILES) -> str:
    """sha256 of the project files (path and content), the fragments'
    contents and the tools' versions."""
    h = hashlib.sha256()
    files = sorted({p for pat in patterns for p in root.glob(pat)
                    if p.is_file() and "__pycache__" not in p.parts})
    for p in files:
        h.update(f"{p.relative_to(root)}\0".encode() + hashlib.sha256(p.read_bytes()).digest())
    for p in fragments:
        h.update(f"fragment {Path(p).name}\0".encode()
                 + hashlib.sha256(Path(p).read_bytes()).digest())
    h.update(json.dumps(tools, sort_keys=True).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class KeyParts:
    """Everything that decides one patch's check results."""
    tree: str  # git rev-parse C^{tree}
    parent_tree: str  # git rev-parse C^^{tree}
    identity_and_message: str  # author, committer (no dates), raw message
    tree_name: str  # net or net-next
    recipients: list[str] | None  # None: as b4 prep --auto-to-cc sends
    committer_signs: bool
    checks: list[str]
    unavailable: dict[str, str]  # check -> why it skips
    series_sources: list[str]
    fingerprint: str


def key_parts(tree: str | Path, commit: str, *, tree_name: str,
              recipients: Collection[str] | None, committer_signs: bool,
              checks: Sequence[str], unavailable: dict[str, str],
              series_sources: Sequence[str], fingerprint: str) -> KeyParts:
    ident = git_run(tree, "log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%B", commit,
                    capture="apart")
    if ident.returncode:
        raise ValueError(f"git log {commit} failed in {tree}: {ident.stderr.strip()}")
    return KeyParts(
        tree=git(tree, "rev-parse", f"{commit}^{{tree}}"),
        parent_tree=git(tree, "rev-parse", f"{commit}^^{{tree}}"),
        identity_and_message=ident.stdout,
        tree_name=tree_name,
        recipients=None if recipients is None else sorted(recipients),
        committer_signs=committer_signs,
        checks=list(checks),
        unavailable=dict(sorted(unavailable.items())),
        series_sources=sorted(series_sources),
        fingerprint=fingerprint)


def key(parts: KeyParts) -> str:
    return hashlib.sha256(json.dumps([VERSION, asdict(parts)], sort_keys=True)
                          .encode()).hexdigest()


class Store:
    """One JSON file per key in `directory`: a patch's results and recipients."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, k: str) -> Path:
        return self.directory / f"{k}.json"

    def get(self, k: str) -> dict[str, Any] | None:
        """{"results": {check: Result}, "to": [...], "cc": [...]}, or None."""
        try:
            data = json.loads(self.path(k).read_text())
        except (OSError, ValueError):
            return None
        if data.get("version") != VERSION or data.get("key") != k:
            return None
        return {"results": {n: Result(**r) for n, r in data["results"].items()},
                "to": data["to"], "cc": data["cc"]}

    def put(self, k: str, report: PatchReport, parts: KeyParts) -> None:
        """Written to a temporary file and renamed: a reader sees all or nothing."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {"version": VERSION, "key": k, "subject": report.subject,
                "results": {n: asdict(r) for n, r in report.results.items()},
                "to": list(report.to), "cc": list(report.cc), "parts": asdict(parts)}
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{k[:12]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1)  # results in the checks' order
            os.replace(tmp, self.path(k))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class Lookup(NamedTuple):
    key: str
    parts: KeyParts
    stored: dict[str, Any] | None  # Store.get()'s


class Memo:
    """The stage's use of the Store: look up each patch, remember what was
    checked, save it all once the stage has passed."""

    def __init__(self, store: Store, fingerprint: str, series_sources: Sequence[str],
                 checks: Sequence[str], fresh: bool = False) -> None:
        self.store, self.fingerprint, self.fresh = store, fingerprint, fresh
        self.series_sources, self.checks = list(series_sources), list(checks)
        self.looked = 0  # patches looked up
        self.reused = 0  # of them, reused
        self.pending: list[tuple[str, PatchReport, KeyParts]] = []

    def look(self, tree: str | Path, commit: str, tree_name: str,
             recipients: Collection[str] | None, committer_signs: bool,
             unavailable: dict[str, str]) -> Lookup:
        """The commit's key and what is stored under it; counted."""
        parts = key_parts(tree, commit, tree_name=tree_name, recipients=recipients,
                          committer_signs=committer_signs, checks=self.checks,
                          unavailable=unavailable, series_sources=self.series_sources,
                          fingerprint=self.fingerprint)
        k = key(parts)
        stored = None if self.fresh else self.store.get(k)
        self.looked += 1
        self.reused += stored is not None
        return Lookup(k, parts, stored)

    def remember(self, look: Lookup, report: PatchReport) -> None:
        """Keep report under look's key once the stage has passed (save())."""
        self.pending.append((look.key, report, look.parts))

    def save(self) -> None:
        """Keep what this run checked: call only when the whole stage passed."""
        for k, report, parts in self.pending:
            self.store.put(k, report, parts)
        self.pending = []

    def summary(self) -> str:
        return (f"results of {self.reused} of {self.looked} patches reused: same content, "
                "checks and tools" + (" (CHECKS_FRESH=1: none read)" if self.fresh else ""))
