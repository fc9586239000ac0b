"""The icount stage's memory: what its boots measured, kept under a key of
everything that decides instructions per packet, and reused while the key
stays the same.

Under `-icount shift=0` a guest's instruction counts repeat to 0.1% and do
not depend on the host (tools/bench/icount.py), so a kernel built again from
the same tree with the same configuration and compiler counts the same. The
key (key()) is a sha256 over:
- each kernel booted: the tree commit its build directory was built from,
  with its local changes (common.stamp build_source), its .config, and the
  out-of-tree dummy module's source (tree commit, patch digest);
- the negative control's patch and the tree it goes on;
- what runs and counts: tools/bench/icount.py, its guest script, the VM
  runner (common/vm.py), the compiler's and QEMU's versions;
- the scenarios, runs per boot, boots per kernel and packets per run.

The guards are judged again on every use from the runs kept: only the
boots are saved. Results are kept only from an icount stage that passed,
and a stage that fails drops what its key held; a kernel whose build has
no stamp is never reused. ICOUNT_FRESH=1 boots every kernel again (and
keeps the new results)."""

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from common.paths import ROOT
from common.stamp import build_source
from ci.check_memo import tool_output
from ci.pipeline_common import CACHE

# Where the runs are kept, one directory per key.
STORE = CACHE / "icount-results"
# What boots the kernels, counts and bounds the guards: a change boots them again.
CODE = ("tools/bench/icount.py", "tools/bench/icount-guest.sh", "common/vm.py",
        "tools/bench/bench_config.py")


def fresh_wanted() -> bool:
    """ICOUNT_FRESH=1: look nothing up."""
    return os.environ.get("ICOUNT_FRESH") == "1"


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def kernel_part(build: str | Path, module_source: dict | None) -> dict[str, Any]:
    """One kernel of the key: its build's source stamp (not the paths), its
    .config's digest, and the dummy module's source (not the paths)."""
    stamp = {k: v for k, v in build_source(build).items() if k not in ("dir", "tree")}
    module = {k: v for k, v in (module_source or {}).items() if k not in ("tree", "patch")}
    return {"build": stamp, "config": _digest(Path(build) / ".config"), "module": module}


def key_parts(kernels: dict[str, dict], negative: dict, scenarios, reps: int, boots: int,
              count: int, root: Path = ROOT,
              tools: dict[str, str] | None = None) -> dict[str, Any]:
    """kernels: {label: kernel_part()}; negative: {"patch": digest, "on":
    kernel_part() of the kernel it is applied to}. tools: the compiler's and
    QEMU's versions (default: asked of the host)."""
    if tools is None:
        tools = {"gcc": tool_output(["gcc", "--version"]),
                 "qemu": tool_output(["qemu-system-x86_64", "--version"]),
                 "vng": tool_output(["vng", "--version"])}
    return {"kernels": kernels, "negative": negative, "scenarios": list(scenarios),
            "reps": reps, "boots": boots, "count": count,
            "code": {f: _digest(root / f) for f in CODE}, "tools": tools}


def key(parts: dict[str, Any]) -> str | None:
    """The key of parts, or None when a kernel's build has no stamp (a
    directory kernel/build.sh did not finish): no run is kept or reused
    for a kernel nothing names."""
    kernels = [*parts["kernels"].values(), parts["negative"]["on"]]
    if any(not k["build"].get("commit") for k in kernels):
        return None
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def drop(k: str | None, store: Path | None = None) -> None:
    """Forget the runs kept under k: a stage that failed with them (judged
    again, or measured afresh under ICOUNT_FRESH) must not pass by them."""
    if k:
        shutil.rmtree((store or STORE) / k, ignore_errors=True)


def get(k: str | None, store: Path | None = None) -> Path | None:
    """The kept results of key k (a directory holding icount/ and
    icount-negative/ as the stage wrote them), or None."""
    if k is None:
        return None
    entry = (store or STORE) / k
    if fresh_wanted() or not (entry / "parts.json").is_file():
        return None
    return entry


def put(k: str | None, parts: dict[str, Any], results: Path,
        store: Path | None = None) -> None:
    """Keep results/icount and results/icount-negative under k, whole or not
    at all (nothing for no key)."""
    if k is None:
        return
    store = store or STORE
    entry, tmp = store / k, store / f".{k}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in ("icount", "icount-negative"):
        shutil.copytree(results / name, tmp / name, ignore=shutil.ignore_patterns("*.log"))
    (tmp / "parts.json").write_text(json.dumps(parts, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(entry, ignore_errors=True)
    tmp.rename(entry)
