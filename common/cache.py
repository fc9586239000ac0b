"""The project's cache directory: $PROJECT_CACHE, else mqbypass under
$XDG_CACHE_HOME, else ~/.cache/mqbypass. The base tree, the worktrees
(ws/), ccache, the npm tools and the VM builds live there."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache directory as the environment names it now."""
    if os.environ.get("PROJECT_CACHE"):
        return Path(os.environ["PROJECT_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "mqbypass"
