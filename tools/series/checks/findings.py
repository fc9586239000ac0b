"""What the checks read: the files a patch touches, the lines it adds and
removes, and the warnings compilers, sparse and kernel-doc print."""

import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from common.git import git

# A tree's path, as the checks take it.
Tree = str | Path
# A warning without its line number: (file, kind, message).
Finding = tuple[str, str, str]

WARN_RE = re.compile(r"^(?P<file>[^\s:]+):\d+(?::\d+)?: (?P<kind>warning|error): (?P<msg>.*)$")
# kernel-doc (7.x, the Python one): "Warning: drivers/net/dummy.c:385 Excess ...".
KDOC_RE = re.compile(r"^(?P<kind>Warning|Error): (?P<file>[^\s:]+):\d+ (?P<msg>.*)$")
SELFTESTS = "tools/testing/selftests/"


def run(cmd: Sequence[str], cwd: Tree, env: dict[str, str] | None = None,
        timeout: float | None = None) -> tuple[int, str]:
    """A tool's exit code and its output (stdout and stderr together)."""
    res = subprocess.run(cmd, cwd=cwd, env=env, text=True, errors="replace",
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return res.returncode, res.stdout


def warnings_of(text: str) -> Counter[Finding]:
    """Multiset of compiler/sparse/kernel-doc warnings without line numbers."""
    found: Counter[Finding] = Counter()
    for line in text.splitlines():
        m = WARN_RE.match(line.strip()) or KDOC_RE.match(line.strip())
        if m:
            found[(m["file"].removeprefix("./"), m["kind"].lower(), m["msg"])] += 1
        elif line.startswith("WARNING: modpost:"):
            found[("modpost", "warning", line)] += 1
    return found


def new_warnings(before: Counter[Finding], after: Counter[Finding]) -> list[str]:
    diff = after - before
    return [f"{f}: {k}: {m}" for (f, k, m), n in sorted(diff.items()) for _ in range(n)]


def counts_line(before: int, after: int) -> str:
    """NIPA's description of a before/after count."""
    return f"Errors and warnings before: {before} this patch: {after}"


def first_error(text: str) -> str:
    for line in text.splitlines():
        if re.search(r"\berror\b|Error \d", line):
            return line.strip()
    return text.strip().splitlines()[-1] if text.strip() else "(no output)"


def touched_files(tree: Tree, commit: str) -> list[tuple[str, str]]:
    """(status letter, path) of each file the commit adds, modifies or deletes."""
    out = git(tree, "diff-tree", "--no-commit-id", "--name-status", "-r", commit)
    files = []
    for line in out.splitlines():
        status, *paths = line.split("\t")
        files.append((status[0], paths[-1]))
    return files


def diff_lines(tree: Tree, commit: str,
               suffixes: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
    """(added, removed) lines of the patch, in the files ending with one of
    suffixes (all files when None), without their +/- marks."""
    out = git(tree, "show", "--format=", "-p", "--no-color", commit)
    added, removed, keep = [], [], False
    for line in out.splitlines():
        if line.startswith("diff --git "):
            path = line.rsplit(" b/", 1)[-1]
            keep = suffixes is None or path.endswith(tuple(suffixes))
        elif not keep or line.startswith(("+++ ", "--- ")):
            continue
        elif line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    return added, removed


def count_change(added: list[str], removed: list[str], pattern: re.Pattern[str]) -> tuple[int, int]:
    """How many removed and added lines match pattern."""
    return (sum(1 for ln in removed if pattern.search(ln)),
            sum(1 for ln in added if pattern.search(ln)))
