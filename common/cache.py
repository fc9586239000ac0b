"""The project's cache directory: $PROJECT_CACHE, else mqbypass under
$XDG_CACHE_HOME, else ~/.cache/mqbypass. The base tree, the worktrees
(ws/), ccache, the npm tools and the VM builds live there.

PROJECT_CACHE may name a directory of the user's that holds other things:
the first run that uses it (claim()) marks it, noting the entries already
there (foreign()), which tools/series/cleanup.py never removes."""

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

MARK = ".mqbypass-cache"
# What the tooling makes at the cache's top level, as globs.
ENTRIES = ("ws", "ws-*", "kselftest", "import.tmp.*", "base.git", "downloads", "tarballs",
           "ccache", "apt", "npm", "npm-tools", "tools", "clang-tidy-clean",
           "cocci-cache-*.json", "pipeline.lock", MARK)


def cache_dir() -> Path:
    """The cache directory as the environment names it now."""
    if os.environ.get("PROJECT_CACHE"):
        return Path(os.environ["PROJECT_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "mqbypass"


def tooling_name(name: str) -> bool:
    return any(Path(name).match(g) for g in ENTRIES)


@dataclass
class Mark:
    foreign: list[str]  # the entries that were there before the tooling used it
    made: bool  # the tooling made the directory (cleanup --all may remove it once empty)


def first_look(cache: Path) -> Mark:
    """What claim() notes of the cache as it is now: an absent or empty
    directory, or one holding only entries the tooling makes (a cache of
    earlier versions, which had no mark), is the tooling's; otherwise
    every entry there is foreign, whatever its name."""
    names = sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []
    if all(tooling_name(n) for n in names):
        return Mark([], not cache.exists() or bool(names))
    return Mark(names, False)


def mark(cache: Path) -> Mark:
    """The cache's mark, or the one claim() would write now."""
    try:
        data = json.loads((cache / MARK).read_text())
        return Mark([str(n) for n in data["foreign"]], bool(data["made"]))
    except (OSError, ValueError, KeyError, TypeError):
        return first_look(cache)


def claim(cache: Path) -> None:
    """Make the cache directory and mark it, once (see first_look())."""
    if (cache / MARK).is_file():
        return
    data = first_look(cache)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f"{MARK}.{os.getpid()}"
    tmp.write_text(json.dumps(asdict(data)) + "\n")
    tmp.replace(cache / MARK)
