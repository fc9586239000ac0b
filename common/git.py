"""git in a tree: the one way the project runs git (b4flow's runs aside,
which carry b4's identity and settings and go to the job's log).

git() is for the usual case: a command that must succeed, its output as
text. git_run() gives the whole CompletedProcess of a command whose exit
code is an answer (a patch that does not apply, a commit that is not
there), with input on stdin and the output captured as the caller needs;
git_bytes() the same for mails, byte for byte; git_ok() just says whether
the command succeeded."""

import subprocess
from pathlib import Path
from typing import Literal

# How git_run captures the output: stdout and stderr together ("merged"),
# each on its own ("apart"), stdout only with stderr left on the terminal
# ("stdout"), or nothing ("none": both on the terminal).
Capture = Literal["merged", "apart", "stdout", "none"]


class GitError(RuntimeError):
    """A git command that exited non-zero; the message names the command,
    the tree and what git printed."""


def command(tree: str | Path | None, args: tuple[str | Path, ...]) -> list[str]:
    """git -C tree ARGS; without a tree (git config -f, --git-dir), git ARGS."""
    return ["git", *(["-C", str(tree)] if tree is not None else []), *map(str, args)]


def git(tree: str | Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        capture: bool = True, timeout: float | None = None,
        error: type[Exception] = GitError) -> str:
    """Run `git -C tree ARGS`; its output (stdout and stderr together)
    stripped, or "" with capture=False (the output goes to the terminal).
    check: a non-zero exit raises error (GitError unless the caller names
    its own, e.g. series.SeriesError) with the output in the message."""
    res = git_run(tree, *args, env=env, timeout=timeout, capture="merged" if capture else "none")
    if check and res.returncode:
        raise error(f"git {' '.join(args)} failed in {tree}:\n{res.stdout or ''}")
    return res.stdout.strip() if capture else ""


def git_run(tree: str | Path | None, *args: str | Path, env: dict[str, str] | None = None,
            input: str | None = None, timeout: float | None = None,
            capture: Capture = "merged") -> "subprocess.CompletedProcess[str]":
    """Run `git -C tree ARGS` (tree None: `git ARGS`), input on its stdin,
    and return how it ended, whatever its exit code: stdout (and stderr)
    as text, unstripped, as `capture` says."""
    out = None if capture == "none" else subprocess.PIPE
    err = {"merged": subprocess.STDOUT, "apart": subprocess.PIPE}.get(capture)
    return subprocess.run(command(tree, args), env=env, input=input, text=True,
                          errors="replace", stdout=out, stderr=err, timeout=timeout)


def git_bytes(tree: str | Path | None, *args: str | Path, env: dict[str, str] | None = None,
              input: bytes | None = None,
              timeout: float | None = None) -> "subprocess.CompletedProcess[bytes]":
    """git_run for bytes (a mail in, a blob out): stdout and stderr apart."""
    return subprocess.run(command(tree, args), env=env, input=input, capture_output=True,
                          timeout=timeout)


def git_ok(tree: str | Path | None, *args: str | Path, env: dict[str, str] | None = None,
           timeout: float | None = None) -> bool:
    """Whether `git -C tree ARGS` exits 0 (cat-file -e, rev-parse --verify);
    its output is dropped."""
    return git_run(tree, *args, env=env, timeout=timeout, capture="apart").returncode == 0
