"""Tools ci/setup-host.sh puts into the cache, beside the host's own."""

from pathlib import Path

from common.cache import cache_dir
from common.paths import ROOT

IPROUTE2_VERSION_FILE = ROOT / "ci/lib/iproute2.version"


def iproute2_bin() -> Path:
    """The directory of the ip and tc of the kernel's iproute2 version (Debian
    sid's, ci/setup-host.sh install_iproute2()); a FileNotFoundError naming
    the setup when it is missing."""
    version = IPROUTE2_VERSION_FILE.read_text().strip()
    path = cache_dir() / "tools" / f"iproute2-{version}" / "bin"
    if not all((path / tool).is_file() for tool in ("ip", "tc")):
        raise FileNotFoundError(f"no iproute2 {version} in {path}: run ci/setup-host.sh")
    return path
