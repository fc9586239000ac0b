"""What every pipeline stage uses: paths, the Stage record and its errors,
and the process helpers (log, sh, BuildProgress).

The stages themselves live in one module per job (pipeline_host, pipeline_tree,
pipeline_checks, pipeline_submit, pipeline_mail, pipeline_boot,
pipeline_bench), each a StageSet; what they hand on is the run state
(pipeline_state, which imports this module, not the other way round);
ci/pipeline.py puts them together and runs them.
"""

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.cache import cache_dir
from common.paths import ROOT
from common.proc import run_tee

CACHE = cache_dir()
# The project's own kernel config fragments.
CONFIGS = ROOT / "kernel/configs"
WS = CACHE / "ws"
# KERNEL_CONFIG=debug|kcsan adds kernel/configs/<name>.config to the x86
# test kernels (ci/kconfig_tree.py), built in their own directories
# (build-x86-<name>).
KERNEL_CONFIG = os.environ.get("KERNEL_CONFIG", "normal")
X86_BUILD = "build-x86"
EXTRA_FRAGMENTS: list[Path] = []
if KERNEL_CONFIG != "normal":
    EXTRA_FRAGMENTS.append(CONFIGS / f"{KERNEL_CONFIG}.config")
    X86_BUILD = f"build-x86-{KERNEL_CONFIG}"
BRANCH_PREFIX = "ci/"


class StageFailed(Exception):
    pass


class UsageError(Exception):
    """A request the pipeline cannot run as given (e.g. an unknown stage)."""


@dataclass
class Stage:
    name: str
    status: str = "skip"  # pass | fail | skip
    seconds: float = 0.0
    summary: str = ""
    cases: list[Any] = field(default_factory=list)  # report.Case
    details: str = ""  # preformatted text for the summary, e.g. the VM matrix


def log(msg: object = "") -> None:
    print(msg, flush=True)


def sh(cmd: Sequence[str | os.PathLike[str]], log_path: str | Path | None = None,
       cwd: str | Path | None = None, env: dict[str, str] | None = None, check: bool = True,
       progress: Callable[[str], object] | None = None) -> tuple[int | None, str]:
    """Run a command, output to log_path; optional progress(line) callback."""
    env = {**os.environ, "PROJECT_CACHE": str(CACHE), **(env or {})}
    done = run_tee(cmd, cwd=cwd, env=env, log_path=log_path, append=True, echo=progress)
    code, text = done.code, done.text
    if check and code:
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise StageFailed(f"{' '.join(map(str, cmd))} exited {code}\n{tail}")
    return code, text


class BuildProgress:
    """Print a line every N compiled objects instead of make's full output."""

    def __init__(self, label: str, every: int = 250) -> None:
        self.label, self.every, self.n, self.t0 = label, every, 0, time.monotonic()

    def __call__(self, line: str) -> None:
        if re.match(r"^\s+(CC|LD|AR|AS)\b", line):
            self.n += 1
            if self.n % self.every == 0:
                log(f"    {self.label}: {self.n} objects, {time.monotonic() - self.t0:.0f}s")
        elif re.search(r"\berror\b|^warning: config", line):
            log(f"    {line}")
