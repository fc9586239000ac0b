"""What every pipeline stage uses: paths, the Stage record and its errors,
and the process helpers (log, sh, BuildProgress).

The stages themselves live in one module per job (pipeline_host, pipeline_tree,
pipeline_checks, pipeline_submit, pipeline_mail, pipeline_boot,
pipeline_bench), each a StageSet; what they hand on is the run state
(pipeline_state, which imports this module, not the other way round);
ci/pipeline.py puts them together and runs them.
"""

import contextlib
import json
import os
import re
import subprocess
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
# The results directory's list of what the run wrote there (results_files()).
MANIFEST = ".pipeline-files.json"


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
    builds: list["KernelBuild"] = field(default_factory=list)  # the kernel builds it ran


def results_files(results: Path) -> dict[str, list[int]]:
    """{path relative to results: [size, mtime_ns]} of every file and
    symlink under results, the manifest left out."""
    out = {}
    for dirpath, dirs, files in os.walk(results):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            path = Path(dirpath, name)
            rel = path.relative_to(results).as_posix()
            if rel != MANIFEST:
                st = path.lstat()
                out[rel] = [st.st_size, st.st_mtime_ns]
    return out


def clear_results(results: Path) -> None:
    """Make results an empty directory whose manifest says a run is under
    way. Only what an earlier run listed in its manifest is removed, and
    only if it is as that run left it; anything else there is refused
    (UsageError naming it) before anything is removed."""
    if results.exists() and not results.is_dir():
        raise UsageError(f"--results {results}: not a directory")
    found = results_files(results) if results.is_dir() else {}
    manifest = results / MANIFEST
    listed = json.loads(manifest.read_text())["files"] if manifest.is_file() else {}
    if found and listed is None:
        raise UsageError(f"{results} holds the files of a run that ended before listing its "
                         f"files ({len(found)}, e.g. {', '.join(sorted(found)[:3])}): keep what "
                         "you need, then remove the directory yourself, or choose another "
                         "--results (RESULTS_DIR)")
    foreign = [rel + ("" if rel not in (listed or {}) else " (changed since the run)")
               for rel in sorted(found) if (listed or {}).get(rel) != found[rel]]
    if foreign:
        more = f", ... ({len(foreign) - 8} more)" if len(foreign) > 8 else ""
        raise UsageError(f"{results} holds files no earlier run wrote there: "
                         f"{', '.join(foreign[:8])}{more}; move them elsewhere or choose "
                         "another --results (RESULTS_DIR); nothing was removed")
    for rel in found:
        (results / rel).unlink()
    for dirpath, dirs, _ in sorted(os.walk(results), reverse=True):
        for d in dirs:
            path = Path(dirpath, d)
            if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()
    results.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"files": None}) + "\n")


def list_results(results: Path) -> None:
    """Write the manifest: every file the run wrote under results."""
    if results.is_dir():
        (results / MANIFEST).write_text(json.dumps({"files": results_files(results)},
                                                   indent=0, sort_keys=True) + "\n")


def log(msg: object = "") -> None:
    print(msg, flush=True)


def sh(cmd: Sequence[str | os.PathLike[str]], log_path: str | Path | None = None,
       cwd: str | Path | None = None, env: dict[str, str] | None = None, check: bool = True,
       progress: Callable[[str], object] | None = None) -> tuple[int | None, str]:
    """Run a command, output to log_path; optional progress(line) callback.
    A BuildProgress as progress records the build (BUILDS)."""
    env = {**os.environ, "PROJECT_CACHE": str(CACHE), **(env or {})}
    recording: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if isinstance(progress, BuildProgress):
        progress.ccache = progress.ccache or ccache_dir(env)
        recording = progress
    with recording:
        done = run_tee(cmd, cwd=cwd, env=env, log_path=log_path, append=True, echo=progress)
    code, text = done.code, done.text
    if check and code:
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise StageFailed(f"{' '.join(map(str, cmd))} exited {code}\n{tail}")
    return code, text


@dataclass
class KernelBuild:
    """One kernel build: objects are make's CC lines (with from_ccache,
    ccache's calls, hits + misses: kunit.py prints no make output); hits
    and misses are ccache's counters' change over the build (None: no
    ccache counters)."""
    label: str
    objects: int | None
    seconds: float
    hits: int | None = None
    misses: int | None = None
    from_ccache: bool = False


# Every build a BuildProgress watched, in order; Pipeline.run gives each
# stage the ones run during it (Stage.builds).
BUILDS: list[KernelBuild] = []


def ccache_dir(env: dict[str, str] | None = None) -> Path:
    """The ccache directory kernel/build.sh and kunit/uml.py use under env."""
    return Path((os.environ if env is None else env).get("CCACHE_DIR") or CACHE / "ccache")


def parse_ccache_stats(text: str) -> dict[str, int]:
    """ccache --print-stats: one "name<TAB>number" a line."""
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition("\t")
        if value.strip().isdigit():
            out[name.strip()] = int(value)
    return out


def ccache_counters(directory: str | Path) -> dict[str, int] | None:
    """The counters of the ccache in directory, or None without ccache."""
    try:
        p = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                           env={**os.environ, "CCACHE_DIR": str(directory)})
    except OSError:
        return None
    return parse_ccache_stats(p.stdout) if p.returncode == 0 else None


def ccache_delta(before: dict[str, int] | None,
                 after: dict[str, int] | None) -> tuple[int | None, int | None]:
    """(hits, misses) between two ccache_counters(); (None, None) if either is missing."""
    if before is None or after is None:
        return None, None

    def hits(c: dict[str, int]) -> int:
        return c.get("direct_cache_hit", 0) + c.get("preprocessed_cache_hit", 0)
    return hits(after) - hits(before), after.get("cache_miss", 0) - before.get("cache_miss", 0)


class BuildProgress:
    """Print a line every N compiled objects instead of make's full output.
    Used as a context manager (sh() does) it records the build in BUILDS:
    label, CC lines, seconds, ccache hits and misses. cc_lines=False: the
    command shows no compiler lines (kunit.py), objects come from ccache."""

    def __init__(self, label: str, every: int = 250, ccache: str | Path | None = None,
                 cc_lines: bool = True) -> None:
        self.label, self.every, self.n, self.t0 = label, every, 0, time.monotonic()
        self.ccache, self.cc_lines, self.cc = ccache, cc_lines, 0
        self.before: dict[str, int] | None = None

    def __call__(self, line: str) -> None:
        if re.match(r"^\s+(CC|LD|AR|AS)\b", line):
            self.n += 1
            self.cc += line.split()[0] == "CC"
            if self.n % self.every == 0:
                log(f"    {self.label}: {self.n} objects, {time.monotonic() - self.t0:.0f}s")
        elif re.search(r"\berror\b|^warning: config", line):
            log(f"    {line}")

    def __enter__(self) -> "BuildProgress":
        if self.ccache is None:
            self.ccache = ccache_dir()
        self.before = ccache_counters(self.ccache)
        self.t0, self.n, self.cc = time.monotonic(), 0, 0
        return self

    def __exit__(self, *exc: object) -> None:
        seconds = time.monotonic() - self.t0
        hits, misses = ccache_delta(self.before, ccache_counters(self.ccache or ccache_dir()))
        objects = self.cc if self.cc_lines else (
            None if hits is None or misses is None else hits + misses)
        BUILDS.append(KernelBuild(self.label, objects, seconds, hits, misses,
                                  from_ccache=not self.cc_lines))
