"""check_selftest: the net selftests a patch adds or changes, in netdev's
format (Makefile lists, config fragments and .gitignore in order) and
listed where the build finds them."""

import os
import re
from pathlib import Path

from common.git import git_run
from tools.series.checks.findings import SELFTESTS, Tree, touched_files
from tools.series.checks.patchwork import Result

# Files selftests Makefiles take with $(wildcard ...): never listed by name.
SELFTEST_WILDCARDS = ("drivers/net/hw/lib/py/*.py", "drivers/net/lib/py/*.py",
                      "drivers/net/lib/sh/*.sh", "net/lib/py/*.py", "net/lib/sh/*.sh",
                      "net/packetdrill/*.pkt")


def config_order_errors(text: str) -> list[str]:
    """Config fragments (and .gitignore): entries sorted by name, `_` not
    counted, comments and lines without `=` ignored."""
    errors: list[str] = []
    prev: tuple[str, str] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("#") or "=" not in line:
            continue
        key = line.split("=")[0].strip().replace("_", "")
        if prev is not None and key < prev[0]:
            errors.append(f"line {n}: {line.strip()} should come before {prev[1]}")
        prev = (key, line.strip())
    return errors


def gitignore_order_errors(text: str) -> list[str]:
    errors: list[str] = []
    prev: tuple[str, str] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        key = entry.replace("_", "")
        if prev is not None and key < prev[0]:
            errors.append(f"line {n}: {entry} should come before {prev[1]}")
        prev = (key, entry)
    return errors


MAKE_ASSIGN_RE = re.compile(r"^([A-Z_][A-Z0-9_]*)\s*(?::?=|\+=)(.*)$")


def makefile_blocks(text: str) -> dict[str, list[tuple[int, str]]]:
    """{variable: [(line number, raw line)]} of the list assignments netdev
    keeps one item a line: `VAR = \\` or `VAR += item \\` and the
    continuation lines. Flags, libraries and computed lists are left out."""
    blocks: dict[str, list[tuple[int, str]]] = {}
    var: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = MAKE_ASSIGN_RE.match(line)
        if m:
            var, rest = m[1], m[2].strip()
            if (rest.startswith("$") or len(var) < 3 or "FLAGS" in var or "LIBS" in var):
                var = None
            elif rest != "\\":
                blocks.setdefault(var, []).append((n, "\t" + rest))
        elif var:
            blocks.setdefault(var, []).append((n, line))
        if var and not line.endswith("\\"):
            var = None
    return blocks


def makefile_order_errors(text: str) -> list[str]:
    errors = []
    for var, lines in makefile_blocks(text).items():
        nums = [n for n, _ in lines]
        for n_prev, n_next in zip(nums, nums[1:]):
            if n_next != n_prev + 1:
                errors.append(f"{var}: a second block at line {n_next} (first at {nums[0]})")
        items = lines
        if len(lines) > 1:
            last = lines[-1][1].strip()
            if not last.startswith("#"):
                errors.append(f"{var}: line {lines[-1][0]}: the list should end with a "
                              f"comment line, got '{last}'")
            elif len(last) > 5 and var not in last:
                errors.append(f"{var}: line {lines[-1][0]}: the closing comment should name "
                              f"{var}")
            else:
                items = lines[:-1]
        names: list[tuple[int, str]] = []
        for n, raw in items:
            if not raw.startswith("\t"):
                errors.append(f"{var}: line {n}: items are indented with a tab")
            item = raw.strip().removesuffix("\\").strip()
            if " " in item and "$" not in item:
                errors.append(f"{var}: line {n}: one item a line, got '{item}'")
            if not item.startswith("$"):
                names.append((n, item))
        for (n1, a), (n2, b) in zip(names, names[1:]):
            if a < b or (a.count("/"), a.lower()) <= (b.count("/"), b.lower()):
                continue
            errors.append(f"{var}: lines {n1}-{n2}: '{a}' should come after '{b}'")
    return errors


def selftest_wildcard(path: str) -> bool:
    rel = path.removeprefix(SELFTESTS)
    return any(os.path.dirname(rel) == os.path.dirname(w)
               and Path(os.path.basename(rel)).match(os.path.basename(w))
               for w in SELFTEST_WILDCARDS)


def check_selftest(tree: Tree, commit: str) -> Result:
    """Net selftests the patch adds or changes: Makefile lists, config
    fragments and .gitignore in order; new scripts and programs listed in
    their Makefile, new programs in .gitignore."""
    files = [(s, p) for s, p in touched_files(tree, commit)
             if s != "D" and p.startswith(SELFTESTS) and "/net/" in p]
    if not files:
        return Result("pass", "No changes to selftests")
    problems, formats, listed = [], 0, 0

    def show(path: str) -> str | None:
        shown = git_run(tree, "show", f"{commit}:{path}")
        return shown.stdout if shown.returncode == 0 else None

    for _, path in files:
        checker = (config_order_errors if path.endswith("/config")
                   else gitignore_order_errors if path.endswith("/.gitignore")
                   else makefile_order_errors if path.endswith("/Makefile") else None)
        if checker:
            formats += 1
            errs = checker(show(path) or "")
            problems += [f"Bad format: {path}: {e}" for e in errs]
    for status, path in files:
        if status != "A" or selftest_wildcard(path):
            continue
        name = os.path.basename(path)
        if path.endswith((".sh", ".py")):
            needle, where = name, ["Makefile"]
        elif path.endswith(".c") and not path.endswith(".bpf.c"):
            needle, where = name[:-2], ["Makefile", ".gitignore"]
        else:
            continue
        listed += 1
        for w in where:
            text = show(f"{os.path.dirname(path)}/{w}") or ""
            if needle not in text:
                problems.append(f"{path} not found in {w}")
    if problems:
        return Result("fail", problems[0] if len(problems) == 1
                      else f"{problems[0]} (+{len(problems) - 1} more)", "\n".join(problems))
    parts = [f"Good format ({formats})"] if formats else []
    if listed:
        parts.append(f"New files in Makefile checked ({listed})")
    return Result("pass", "; ".join(parts) or
                  f"New files {sum(s == 'A' for s, _ in files)}, modified "
                  f"{sum(s != 'A' for s, _ in files)}, no checks")
