"""git in a tree, its output as text: the one way the project runs git
(b4flow's runs aside, which carry b4's identity and settings)."""

import subprocess
from pathlib import Path


class GitError(RuntimeError):
    """A git command that exited non-zero; the message names the command,
    the tree and what git printed."""


def git(tree: str | Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        capture: bool = True, timeout: float | None = None,
        error: type[Exception] = GitError) -> str:
    """Run `git -C tree ARGS`; its output (stdout and stderr together)
    stripped, or "" with capture=False (the output goes to the terminal).
    check: a non-zero exit raises error (GitError unless the caller names
    its own, e.g. series.SeriesError) with the output in the message."""
    res = subprocess.run(["git", "-C", str(tree), *args], env=env, text=True, errors="replace",
                         stdout=subprocess.PIPE if capture else None,
                         stderr=subprocess.STDOUT if capture else None, timeout=timeout)
    if check and res.returncode:
        raise error(f"git {' '.join(args)} failed in {tree}:\n{res.stdout or ''}")
    return res.stdout.strip() if capture else ""
