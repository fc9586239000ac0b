"""Check that the net fixes, as posted, apply to the pinned stable trees and fix the bug there.

Stable takes the patches of a net series that carry a Fixes: tag and apply
(the kernel fixes; the selftest patches carry none). Each stable tree is
pinned in kernel/stable/<version>.env, with the keys of kernel/base.env.
This tool takes those patches from patches/net/<topic>/ exactly as posted
and applies them to each pinned tree with git am: there are no backports of
our own to keep.

  stable.py list                  the pinned trees and the net fixes stable takes
  stable.py check                 the net series has fix patches with Fixes: tags
  stable.py apply [VERSION...]    fetch and import each tree (cached), then
                                  git am the net fixes on stable/<version>

A fix that does not apply is an error naming the tree, the patch and each
failing hunk (file and hunk header).
"""

import argparse
import copy
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import logs
from common.cache import cache_dir
from common.git import git_ok, git_run
from common.paths import ROOT
from common.programs import PROGRAMS_TXT, read_programs
from tools.series import series
from tools.series.series import reports_errors

logger = logging.getLogger(__name__)

PINS = ROOT / "kernel" / "stable"
NET_PATCHES = ROOT / "patches" / "net"
SELFTESTS = ROOT / "selftests"
BRANCH_PREFIX = "stable/"
FIXES_RE = re.compile(r"^Fixes: \S.*$", re.M)
NEW_FILE_RE = re.compile(r"^diff --git a/\S+ b/(\S+)\nnew file mode", re.M)
HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@.*$")
DIFF_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$")


class StableError(series.SeriesError):
    """A stable tree, pin or net fix at fault, named in the message."""


@dataclass
class Tree:
    version: str
    pin: Path
    env: dict[str, str]

    @property
    def tag(self) -> str:
        """The tag kernel/import-base.sh gives the pinned tree."""
        return base_tag(self.env["BASE_PACKAGE"], self.env["BASE_VERSION"])

    @property
    def branch(self) -> str:
        return BRANCH_PREFIX + self.version


@dataclass
class Applied:
    version: str
    base: str
    branch: str
    commits: list[tuple[Path, str]] = field(default_factory=list)  # [(patch file, commit)]


def shown(path: str | Path) -> Path:
    """A path relative to the project when it is inside it."""
    path = Path(path).resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def base_tag(package: str, version: str) -> str:
    return f"base/{package}_{version.replace('~', '_')}"


def version_key(version: str) -> tuple[int | str, ...]:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.-]", version))


def load_pin(path: str | Path) -> dict[str, str]:
    env = {}
    for line in Path(path).read_text().splitlines():
        m = re.match(r"^([A-Z_0-9]+)=(.*)$", line.strip())
        if m:
            env[m[1]] = m[2].strip("'\"")
    missing = [k for k in ("BASE_PACKAGE", "BASE_VERSION", "BASE_TARBALL_SHA256") if k not in env]
    if missing:
        raise StableError(f"{path}: missing {', '.join(missing)}")
    return env


def trees(pins: str | Path = PINS) -> list[Tree]:
    """Every pinned stable tree, oldest first."""
    return [Tree(pin.stem, pin, load_pin(pin))
            for pin in sorted(Path(pins).glob("*.env"), key=lambda p: version_key(p.stem))]


def tree(version: str, pins: str | Path = PINS) -> Tree:
    for t in trees(pins):
        if t.version == version:
            return t
    have = ", ".join(t.version for t in trees(pins)) or "none"
    raise StableError(f"no pinned stable tree {version} in {pins} (pinned: {have})")


# ---- what stable takes -----------------------------------------------------

def message(patch: str | Path) -> str:
    """The commit message of a format-patch file (before the diffstat)."""
    return Path(patch).read_text().partition("\n---\n")[0]


def net_patches(net: str | Path = NET_PATCHES) -> list[Path]:
    """Every patch of the net series (patches/net/<topic>/), cover letters
    left out, in posting order."""
    return [p for p in sorted(Path(net).glob("*/*.patch")) if not series.COVER_RE.match(p.name)]


def net_fixes(net: str | Path = NET_PATCHES) -> list[Path]:
    """The patches stable takes: those of the net series carrying a Fixes:
    tag, as posted. Raises StableError when there is none."""
    fixes = [p for p in net_patches(net) if FIXES_RE.search(message(p))]
    if not fixes:
        raise StableError(f"no patch of the net series in {shown(net)}/*/ carries a Fixes: "
                          "tag: stable has nothing to take")
    return fixes


# ---- applying --------------------------------------------------------------

def hunks(patch: str | Path) -> list[tuple[str, int, str]]:
    """[(file, old start line, hunk header)] of a patch file."""
    out: list[tuple[str, int, str]] = []
    cur: str | None = None
    for line in Path(patch).read_text().splitlines():
        m = DIFF_RE.match(line)
        if m:
            cur = m[1]
            continue
        m = HUNK_RE.match(line)
        if m and cur:
            out.append((cur, int(m[1]), line))
    return out


def failing_hunks(worktree: str | Path, patch: str | Path) -> list[str]:
    """What `git apply` says about a patch on a clean worktree, as lines that
    name each failing file and hunk header."""
    res = git_run(worktree, "apply", "--check", "--verbose", str(patch), capture="apart")
    text = res.stderr + res.stdout
    known = hunks(patch)
    out = []
    for line in text.splitlines():
        m = re.match(r"^error: patch failed: (.+):(\d+)$", line)
        if m:
            f, start = m[1], int(m[2])
            hdr = [h for hf, s, h in known if hf == f and s == start]
            out.append(f"{f}: hunk {hdr[0] if hdr else f'at line {start}'} does not apply")
            continue
        m = re.match(r"^error: (.+?): (No such file or directory|does not exist in index)$",
                     line)
        if m:
            n = sum(1 for hf, _, _ in known if hf == m[1])
            out.append(f"{m[1]}: file not in this tree ({n} hunk(s))")
            continue
        m = re.match(r"^error: (.+?): already exists in (working directory|index)$", line)
        if m:
            out.append(f"{m[1]}: the new file already exists in this tree")
    return out


def am(worktree: str | Path, patch: str | Path,
       conf: dict[str, str]) -> "subprocess.CompletedProcess[str]":
    return git_run(worktree, "am", "--3way", "--keep-cr", "--committer-date-is-author-date",
                   str(patch), env=series.role_env(conf))


def foreign_commits(worktree: str | Path, branch: str, base: str) -> list[str]:
    """"<sha> <subject>" of the commits `branch` holds that neither `base`
    nor the last apply_stable() (branch.<name>.seriesApplied) holds."""
    tip = series.tip_of(worktree, branch)
    if not tip:
        return []
    made = series.recorded(worktree, branch)
    extra = series.git(worktree, "rev-list", "--max-count=6", tip, "--not", base,
                       *([made] if made else [])).split()
    lines = [series.git(worktree, "log", "-1", "--format=%h %s", "--abbrev=12", c)
             for c in extra[:5]]
    return lines + (["..."] if len(extra) > 5 else [])


def apply_stable(tree_version: str, worktree: str | Path, base: str | None = None,
                 pins: str | Path = PINS, net: str | Path = NET_PATCHES,
                 conf: dict[str, str] | None = None, force: bool = False) -> Applied:
    """Apply the net fixes (net_fixes(), as posted) to a pinned stable tree on
    branch stable/<version> of `worktree` (a worktree the tooling owns, of
    the repository holding the tree's import).

    base: the commit or tag to start from, by default the pinned tree's tag.
    Commits are made as series.py apply makes them (role identity committer,
    committer date = author date): the same files give the same commits.
    The branch's new tip is recorded (branch.<name>.seriesApplied). A branch
    holding commits that neither the base nor the last apply made is
    refused, naming them, unless force (the tooling's own repository).
    Returns Applied; raises StableError naming the tree, the patch and the
    failing hunks when a fix does not apply, or when the net series has no
    fix: the branch is then as it was, HEAD detached at the last good commit.
    """
    t = tree(tree_version, pins)
    conf = conf or series.load_conf()
    base = base or t.tag
    fixes = net_fixes(net)
    worktree = Path(worktree)
    if not git_ok(worktree, "rev-parse", "-q", "--verify", f"{base}^{{commit}}"):
        raise StableError(f"stable {t.version}: base {base} is not in {worktree}; "
                          f"import it (kernel/fetch-base.sh {t.pin}, kernel/import-base.sh)")
    old = series.tip_of(worktree, t.branch)
    foreign = [] if force else foreign_commits(worktree, t.branch, base)
    if foreign:
        raise StableError(f"stable {t.version}: {t.branch} holds commit(s) the tooling did not "
                          f"make: {'; '.join(foreign)}; nothing was changed. Keep them on "
                          f"another branch (git branch -m {t.branch} NAME), or run again with "
                          "--force (the branch is reset, its commits stay in the reflog)")
    series.recover(worktree)
    series.git(worktree, "checkout", "-q", "-f", "-B", t.branch, base)
    done = Applied(t.version, base, t.branch)
    for p in fixes:
        logger.info(f"  applying [stable {t.version}] {p.parent.name}/{p.name}")
        res = am(worktree, p, conf)
        if res.returncode:
            conflicts = [ln.strip() for ln in res.stdout.splitlines() if ln.startswith("CONFLICT")]
            if "sha1 information is lacking" in res.stdout:
                conflicts.append("no 3-way fallback: the patch's preimage blobs are not in "
                                 "this repository")
            series.git(worktree, "am", "--abort", check=False)
            series.git(worktree, "reset", "-q", "--hard", check=False)
            detail = failing_hunks(worktree, p) + conflicts
            if not detail:
                detail = [ln for ln in res.stdout.strip().splitlines() if ln][-5:]
            restore(worktree, t.branch, old)
            raise StableError(f"stable {t.version}: {shown(p)} does not apply to {base}\n  "
                              + "\n  ".join(detail))
        done.commits.append((p, series.git(worktree, "rev-parse", "HEAD")))
    series.git(worktree, "config", f"branch.{t.branch}.seriesApplied",
               series.git(worktree, "rev-parse", "HEAD"))
    return done


def restore(worktree: Path, branch: str, old: str) -> None:
    """Put `branch` back where it was (deleted if it was not there); HEAD
    stays, detached, on the same commit and files."""
    series.git(worktree, "checkout", "-q", "--detach")
    if old:
        series.git(worktree, "update-ref", "-m", "stable apply: failed, restored",
                   f"refs/heads/{branch}", old)
    else:
        series.git(worktree, "branch", "-q", "-D", branch)


def fetch_import(t: Tree, env: dict[str, str] | None = None) -> dict[str, str]:
    """Fetch and import a pinned tree (both cached). Returns the BASE_* keys
    of kernel/fetch-base.sh and kernel/import-base.sh."""
    env = {**os.environ, **(env or {})}
    info: dict[str, str] = {}

    def run(script: str, *args: str | Path) -> None:
        res = subprocess.run(["bash", str(ROOT / "kernel" / script), *map(str, args)],
                             env=env, text=True, capture_output=True)
        for line in res.stderr.splitlines():
            logger.info(f"    {line}")
        if res.returncode:
            raise StableError(f"stable {t.version}: kernel/{script} failed (exit "
                              f"{res.returncode})")
        info.update(re.findall(r"^(BASE_\w+)=(.*)$", res.stdout, re.M))

    run("fetch-base.sh", t.pin)
    run("import-base.sh", info["BASE_PACKAGE"], info["BASE_VERSION"], info["BASE_TARBALL"],
        info["BASE_TARBALL_SHA256"])
    if info.get("BASE_PINNED") != "yes":
        logger.warning(f"  WARNING: stable {t.version}: pinned {t.env['BASE_PACKAGE']} "
                       f"{t.env['BASE_VERSION']} unavailable, using {info['BASE_VERSION']}")
    return info


def worktree_for(repo: str | Path, path: str | Path, rev: str) -> Path:
    """A worktree of repo at path (created once), detached at rev."""
    path = Path(path)
    git_run(repo, "worktree", "prune", capture="none")
    if not (path / ".git").exists():
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        series.git(repo, "worktree", "add", "-q", "--detach", str(path), rev)
    return path


# ---- what the stable stage runs -------------------------------------------

def added_without_fix(net: str | Path = NET_PATCHES) -> dict[str, Path]:
    """{file: patch} of the files the net series adds in patches stable does
    not take (its selftests): a stable tree does not have them."""
    fixes = set(net_fixes(net))
    return {f: p for p in net_patches(net) if p not in fixes
            for f in NEW_FILE_RE.findall(p.read_text())}


def vm_plan(version: str, plan: str | Path = SELFTESTS / "stable.json",
            programs: str | Path = PROGRAMS_TXT,
            expectations: str | Path = SELFTESTS / "expectations.json",
            net: str | Path = NET_PATCHES) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """(progs, expect) for ci.matrix.run.run_matrix() on the base and the
    patched kernel of a stable tree ("base" and "patched" labels).

    progs: [(name, kind)] of programs.txt that selftests/stable.json names
    for the tree; expect: expectations.json for them, where a case of a
    feature stable does not get (the net-next series) expects on "patched"
    what it expects on "base" (and must show the same), and a tc-testing
    case it adds has no entry (the stable tree has no such case). A program
    the stable tree cannot have (one of the tree's selftests that the net series adds in
    a patch without a Fixes: tag) is an error.
    """
    spec = json.loads(Path(plan).read_text())
    if version not in spec["programs"]:
        raise StableError(f"{plan}: no programs for stable {version}")
    listed = read_programs(programs)
    kinds = {p.name: p.kind for p in listed}
    # The tree's selftest a kselftest program runs (COLLECTION:TEST):
    # tools/testing/selftests/COLLECTION/TEST in the tree.
    tests = {p.name: p.kselftest.replace(":", "/") for p in listed}
    names = spec["programs"][version]
    unknown = [n for n in names if n not in kinds]
    if unknown:
        raise StableError(f"{plan}: stable {version} names programs that {programs} lacks: "
                          f"{', '.join(unknown)}")
    added = added_without_fix(net)
    for n in names:
        path = f"tools/testing/selftests/{tests[n]}" if tests[n] else None
        if path in added:
            raise StableError(f"{plan}: stable {version} runs {n}, but {path} comes with "
                              f"{shown(added[path])}, which has no Fixes: tag: stable does "
                              "not take it")
    full = json.loads(Path(expectations).read_text())
    expect = {n: copy.deepcopy(full[n]) for n in names if n in full}
    for prog, cases in spec.get("not_in_stable", {}).items():
        if prog not in expect:
            continue
        for case, series_name in cases.items():
            entry = expect[prog].get(case)
            if entry is None:
                raise StableError(f"{plan}: {prog} has no case {case} in {expectations}")
            if kinds[prog] == "tdc":
                del expect[prog][case]  # a tdc case the series adds: not in the stable tree
                continue
            entry["patched"] = entry.get("base", "pass")
            shows = entry.get("shows", {})
            if "base" in shows:
                shows["patched"] = shows["base"]
            entry["why"] = f"{series_name} is not for stable: {entry.get('why', '')}"
    return [(n, kinds[n]) for n in kinds if n in names], expect


TDC_TESTS = "tools/testing/selftests/tc-testing/tc-tests"
TDC_ID = re.compile(r'"id":\s*"([0-9a-f]{4})"')


def tdc_ids(worktree: str | Path, rev: str) -> set[str]:
    """The ids of the tc-testing cases the tree has at rev."""
    res = git_run(worktree, "grep", "-h", "-E", '"id": *"[0-9a-f]{4}"', rev, "--", TDC_TESTS)
    ids = set(TDC_ID.findall(res.stdout or ""))
    if not ids:
        raise StableError(f"{worktree}: no tc-testing case in {TDC_TESTS} at {rev}")
    return ids


def drop_absent_tdc(expect: dict[str, Any], progs: list[tuple[str, str]],
                    ids: set[str]) -> list[str]:
    """Remove from expect the tc-testing cases the stable tree does not have
    (upstream added them after the stable branch; the series' own cases
    vm_plan() removed already): they cannot run there. With no entry, a case
    that does run must pass. Returns the removed ids."""
    dropped = []
    for prog, kind in progs:
        if kind != "tdc":
            continue
        for case in sorted(set(expect.get(prog, {})) - ids):
            del expect[prog][case]
            dropped.append(case)
    return dropped


# ---- command line ----------------------------------------------------------

def fixes_line(p: Path) -> str:
    fixes = FIXES_RE.findall(message(p))
    return f"  {p.parent.name}/{p.name}: {'; '.join(fixes)}"


@reports_errors
@logs.printed
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pins", type=Path, default=PINS, help="pin files (default %(default)s)")
    ap.add_argument("--net", type=Path, default=NET_PATCHES,
                    help="the net series, one directory per topic (default %(default)s)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the pinned stable trees and the net fixes stable takes")
    sub.add_parser("check", help="the net series has fix patches with Fixes: tags")
    a = sub.add_parser("apply", help="fetch, import and apply the net fixes to each tree")
    a.add_argument("versions", nargs="*", help="default: every pinned tree")
    a.add_argument("--ws", default=None,
                   help="worktrees go to WS/stable-<version>/src (default: $PROJECT_CACHE/ws)")
    a.add_argument("--repo", help="use this repository instead of fetching and importing "
                   "the pinned tree (with --base)")
    a.add_argument("--base", help="with --repo: the commit or tag to apply to")
    a.add_argument("--force", action="store_true",
                   help="with --repo: reset stable/<version> even when it holds commits the "
                   "tooling did not make (they stay in the reflog)")
    args = ap.parse_args(argv)
    if args.cmd == "list":
        fixes = net_fixes(args.net)
        for t in trees(args.pins):
            print(f"{t.version}: {t.env['BASE_PACKAGE']} {t.env['BASE_VERSION']} "
                  f"(tag {t.tag}), takes {len(fixes)} net fix(es)")
        for p in fixes:
            print(fixes_line(p))
    elif args.cmd == "check":
        fixes = net_fixes(args.net)
        left = [p for p in net_patches(args.net) if p not in fixes]
        print(f"ok: stable takes {len(fixes)} net fix(es) with Fixes: tags, as posted:")
        for p in fixes:
            print(fixes_line(p))
        if left:
            print("not for stable (no Fixes: tag): "
                  + ", ".join(f"{p.parent.name}/{p.name}" for p in left))
    else:
        if bool(args.repo) != bool(args.base):
            ap.error("--repo and --base go together")
        ws = Path(args.ws) if args.ws else cache_dir() / "ws"
        for t in [tree(v, args.pins) for v in args.versions] or trees(args.pins):
            print(f"stable {t.version}: {t.env['BASE_PACKAGE']} {t.env['BASE_VERSION']}")
            info = ({"BASE_REPO": args.repo, "BASE_TAG": args.base} if args.repo
                    else fetch_import(t))
            wt = worktree_for(info["BASE_REPO"], ws / f"stable-{t.version}" / "src",
                              info["BASE_TAG"])
            # Without --repo the repository is the tooling's own import.
            done = apply_stable(t.version, wt, base=info["BASE_TAG"], pins=args.pins,
                                net=args.net, force=args.force or not args.repo)
            print(f"stable {t.version}: {len(done.commits)} net fix(es) applied on "
                  f"{done.branch} in {wt}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
