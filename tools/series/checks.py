"""Per-patch and per-series checks, under the names netdev CI (NIPA) shows
in patchwork.

Every check gives pass, warn, fail or skip with a one-line description in
the words patchwork shows. Source checks read the commit (checkpatch, kdoc,
header_inline, source_inline, deprecated_api, module_param,
verify_signedoff, verify_fixes, cc_maintainers, maintainers, check_selftest,
pylint, ruff, shellcheck, yamllint); build checks compile the objects a
patch touches at its parent and at the patch and count new warnings
(build_32bit, build_clang, build_allmodconfig_warn, build_tools; and the
project's own W=1 build with sparse). Beyond the bot: cocci and the
disassembly of the single-queue transmit function (xmit_disasm). Per
series: cover_letter, fixes_present, patch_count, subject_prefix,
tree_selection.
"""

import difflib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from common.cache import cache_dir
from common.git import git
from tools.series import series

CHECKPATCH_IGNORE = ("COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,"
                     "NO_AUTHOR_SIGN_OFF,GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,"
                     "BAD_REPORTED_BY_LINK")
CODESPELL_DICTS = ("/usr/share/codespell/dictionary.txt",
                   "/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt")
# NIPA's per-patch checks that apply to this tree, in patchwork's order, then
# the project's own (the W=1 build of the test kernel with sparse, Coccinelle,
# the transmit function's disassembly).
NIPA_CHECKS = ("build_32bit", "build_allmodconfig_warn", "build_clang", "build_tools",
               "checkpatch", "kdoc", "header_inline", "source_inline", "deprecated_api",
               "module_param", "verify_signedoff", "verify_fixes", "cc_maintainers",
               "maintainers", "check_selftest", "pylint", "ruff", "shellcheck", "yamllint")
OWN_CHECKS = ("build", "sparse", "cocci", "xmit_disasm")
CHECKS = NIPA_CHECKS + OWN_CHECKS
SERIES_CHECKS = ("cover_letter", "fixes_present", "patch_count", "subject_prefix",
                 "tree_selection")
# A warning in patchwork (yellow) fails the stage for these: checkpatch
# must be clean, as the project always had it, and so must every series
# check. Other warnings are reported by name, patch by patch.
WARN_FAILS = frozenset(("checkpatch",) + SERIES_CHECKS)
STATUSES = ("pass", "warn", "fail", "skip")
# The transmit function of a dummy with one TX queue (the default, and the
# module's dummy0): object in the build directory, symbol.
SINGLE_QUEUE_XMIT = ("drivers/net/dummy.o", "dummy_xmit")
# Alignment padding objdump shows after a function's last instruction.
PADDING_RE = re.compile(r"^(nop[wl]?\b.*|int3|xchg\s+%ax,%ax|data16.*|cs nopw.*)$")
WARN_RE = re.compile(r"^(?P<file>[^\s:]+):\d+(?::\d+)?: (?P<kind>warning|error): (?P<msg>.*)$")
# kernel-doc (7.x, the Python one): "Warning: drivers/net/dummy.c:385 Excess ...".
KDOC_RE = re.compile(r"^(?P<kind>Warning|Error): (?P<file>[^\s:]+):\d+ (?P<msg>.*)$")
FIXES_RE = re.compile(r'^Fixes: (?P<id>[0-9a-f]{12,40}) \("(?P<subject>.+)"\)$')
MAX_PATCHES = 15
# libgcc's 64-bit division helpers: on a 32-bit kernel they do not exist, a
# u64 division must go through div_u64() and friends (linux/math64.h).
DIV64_HELPERS = ("__udivdi3", "__divdi3", "__umoddi3", "__moddi3", "__udivmoddi4",
                 "__divmoddi4", "__aeabi_uldivmod", "__aeabi_ldivmod")
# NIPA's deprecated_api lists: a new use of an error is a failure, of a
# warning a warning (the tracked-reference variants are preferred).
DEPRECATED_ERRORS = ("module_param",)
DEPRECATED_WARNINGS = ("dev_hold(", "dev_put(", "put_net(", "get_net(", "init_dummy_netdev(")
# get_maintainer.pl names it on everything; netdev does not expect it.
CC_IGNORE = {"linux-kernel@vger.kernel.org"}
# shellcheck codes netdev CI leaves out (test case definitions confuse them).
SHELLCHECK_EXCLUDE = ("SC2317", "SC2329")
# Files selftests Makefiles take with $(wildcard ...): never listed by name.
SELFTEST_WILDCARDS = ("drivers/net/hw/lib/py/*.py", "drivers/net/lib/py/*.py",
                      "drivers/net/lib/sh/*.sh", "net/lib/py/*.py", "net/lib/sh/*.sh",
                      "net/packetdrill/*.pkt")
SELFTESTS = "tools/testing/selftests/"


@dataclass
class Result:
    status: str  # pass | warn | fail | skip
    message: str = ""
    details: str = ""


@dataclass
class PatchReport:
    index: int
    tree: str
    commit: str
    subject: str
    results: dict = field(default_factory=dict)
    to: list = field(default_factory=list)
    cc: list = field(default_factory=list)

    @property
    def ok(self):
        """Nothing patchwork would mark fail, and no warning from a check
        the project keeps clean (WARN_FAILS)."""
        return not self.failing

    @property
    def failing(self):
        return [c for c, r in self.results.items()
                if r.status == "fail" or (r.status == "warn" and c in WARN_FAILS)]

    @property
    def warnings(self):
        return [c for c, r in self.results.items()
                if r.status == "warn" and c not in WARN_FAILS]

    def as_dict(self):
        d = asdict(self)
        d["ok"] = self.ok
        return d


def run(cmd, cwd, env=None, timeout=None):
    res = subprocess.run(cmd, cwd=cwd, env=env, text=True, errors="replace",
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return res.returncode, res.stdout


def warnings_of(text):
    """Multiset of compiler/sparse/kernel-doc warnings without line numbers."""
    found = Counter()
    for line in text.splitlines():
        m = WARN_RE.match(line.strip()) or KDOC_RE.match(line.strip())
        if m:
            found[(m["file"].removeprefix("./"), m["kind"].lower(), m["msg"])] += 1
        elif line.startswith("WARNING: modpost:"):
            found[("modpost", "warning", line)] += 1
    return found


def new_warnings(before, after):
    diff = after - before
    return [f"{f}: {k}: {m}" for (f, k, m), n in sorted(diff.items()) for _ in range(n)]


def counts_line(before, after):
    """NIPA's description of a before/after count."""
    return f"Errors and warnings before: {before} this patch: {after}"


def checkpatch(tree, commit):
    ignore = CHECKPATCH_IGNORE
    body = git(tree, "log", "-1", "--format=%B", commit)
    ids = [m["id"] for m in map(FIXES_RE.match, body.splitlines()) if m]
    absent = [i for i in ids if run(["git", "cat-file", "-e", f"{i}^{{commit}}"], cwd=tree)[0]]
    if absent:
        # A tree without upstream history (the Debian import) cannot resolve
        # Fixes: ids; verify_fixes checks them against known-commits.txt.
        ignore += ",UNKNOWN_COMMIT_ID"
    spell = next((["--codespell", f"--codespellfile={d}"] for d in CODESPELL_DICTS
                  if Path(d).is_file()), [])
    code, out = run(["perl", "scripts/checkpatch.pl", "--strict", *spell,
                     "--max-line-length=80", "--ignore", ignore, "--showfile", "-g", commit],
                    cwd=tree)
    m = re.search(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", out)
    if not m:
        return Result("fail", "checkpatch did not run: " + out.strip()[:200], out)
    errors, warns, cks = map(int, m.groups())
    if errors or warns or cks:
        found = sorted({re.sub(r"^\S+:\d+: ", "", ln) for ln in out.splitlines()
                        if re.match(r"^(\S+:\d+: )?(ERROR|WARNING|CHECK):", ln)})
        return Result("fail" if errors else "warn", "; ".join(found) or m.group(0), out)
    return Result("pass", m.group(0), out)


def verify_signedoff(tree, commit, committer=True):
    """A Signed-off-by from the author and from the committer (name or
    address, case-insensitive). committer=False: only the author's, for a
    commit applied from a mail, whose committer is whoever applied it."""
    fields = git(tree, "log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%B", commit)
    an, ae, cn, ce, body = fields.split("\0", 4)
    sobs = [s.strip().lower() for s in
            re.findall(r"^\s*signed-off-by:(.*)$", body, re.M | re.I)]

    def signed(name, mail):
        return any(f"<{mail.lower()}>" in s or s.startswith(name.lower() + " <") for s in sobs)

    people = [("author", an, ae)] + ([("committer", cn, ce)] if committer else [])
    missing = [who for who, n, m in people if not signed(n, m)]
    if missing:
        return Result("fail", "; ".join(f"{w} Signed-off-by missing" for w in missing))
    return Result("pass", "Signed-off-by tag matches author"
                  + (" and committer" if committer else ""))


def load_known_commits(path):
    known = {}
    if Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                sha, _, subject = line.partition(" ")
                known[sha.lower()] = subject.strip()
    return known


def verify_fixes(tree, commit, tree_name, known):
    """Every Fixes: tag names a commit (in the history or known-commits.txt)
    by at least 12 digits and its exact subject; and, stricter than the bot's
    series-level fixes_present, every net patch that changes more than
    selftests carries one."""
    body = git(tree, "log", "-1", "--format=%B", commit)
    lines = [ln for ln in body.splitlines() if re.match(r"^\s*fixes:", ln, re.I)]
    if not lines:
        if tree_name != "net":
            return Result("pass", "No Fixes tag")
        # A test of the fixes next to them fixes nothing itself.
        if all(path.startswith(SELFTESTS) for _, path in touched_files(tree, commit)):
            return Result("pass", "No Fixes tag: the patch only adds or changes selftests")
        return Result("fail", "Fixes tag missing: a net fix needs one")
    problems = []
    flat = "#".join(body.splitlines())
    for ln in lines:
        if f"##{ln}##" in flat:
            problems.append(f"{ln}: empty lines surround the Fixes tag")
        m = FIXES_RE.match(ln)
        if not m:
            problems.append(f"malformed, want 'Fixes: <12+ hex> (\"subject\")': {ln}")
            continue
        sha, subject = m["id"], m["subject"]
        hit = next((s for k, s in known.items() if k.startswith(sha) or sha.startswith(k)), None)
        if hit is None:
            code, out = run(["git", "log", "-1", "--format=%s", sha], cwd=tree)
            hit = out.strip() if code == 0 else None
        if hit is None:
            problems.append(f"Target SHA1 does not exist: {sha} (not in the tree's history "
                            "nor in kernel/known-commits.txt)")
        elif hit != subject:
            problems.append(f"Subject does not match target commit subject: {sha} is "
                            f"\"{hit}\", the tag says \"{subject}\"")
    if problems:
        return Result("fail", "; ".join(problems))
    return Result("pass", f"Fixes tag looks correct ({len(lines)})")


def touched_files(tree, commit):
    out = git(tree, "diff-tree", "--no-commit-id", "--name-status", "-r", commit)
    files = []
    for line in out.splitlines():
        status, *paths = line.split("\t")
        files.append((status[0], paths[-1]))
    return files


def kdoc(tree, commit):
    files = [p for s, p in touched_files(tree, commit)
             if s != "D" and p.endswith((".c", ".h")) and not p.startswith("tools/")]
    if not files:
        return Result("pass", "No C files touched: " + counts_line(0, 0))
    before, after = Counter(), Counter()
    # Both sides read from git: the checkout may be elsewhere.
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:
            for rev, side in ((f"{commit}^", before), (commit, after)):
                code, text = run(["git", "show", f"{rev}:{p}"], cwd=tree)
                if code:
                    continue
                dst = Path(tmp) / rev.replace("^", "-parent") / p
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(text)
                _, out = run(["scripts/kernel-doc", "-Wall", "-none", str(dst)], cwd=tree)
                side.update(warnings_of(out.replace(str(dst), p)))
    new = new_warnings(before, after)
    line = counts_line(sum(before.values()), sum(after.values()))
    if new:
        return Result("fail", f"{line}; new: {new[0]}", "\n".join(new))
    return Result("pass", line)


# -- what the diff adds and removes --------------------------------------
def diff_lines(tree, commit, suffixes=None):
    """(added, removed) lines of the patch, in the files ending with one of
    suffixes (all files when None), without their +/- marks."""
    out = git(tree, "show", "--format=", "-p", "--no-color", commit)
    added, removed, keep = [], [], False
    for line in out.splitlines():
        if line.startswith("diff --git "):
            path = line.rsplit(" b/", 1)[-1]
            keep = suffixes is None or path.endswith(tuple(suffixes))
        elif not keep or line.startswith(("+++ ", "--- ")):
            continue
        elif line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    return added, removed


HEADER_STATIC_RE = re.compile(r"^static (?!(__always_)?inline\b).*\(")
INLINE_RE = re.compile(r"(^|\W)inline\W", re.I)


def header_inline(tree, commit):
    added, _ = diff_lines(tree, commit, [".h"])
    bad = [ln for ln in added if HEADER_STATIC_RE.match(ln)]
    if bad:
        return Result("fail", "Detected static functions without inline keyword in header "
                      f"files: {len(bad)}", "\n".join(bad))
    return Result("pass", "No static functions without inline keyword in header files")


def count_change(added, removed, pattern):
    return (sum(1 for ln in removed if pattern.search(ln)),
            sum(1 for ln in added if pattern.search(ln)))


def source_inline(tree, commit):
    """`inline` in .c files: the compiler decides. New ones fail, a line
    that keeps one (changed but not added) warns."""
    added, removed = diff_lines(tree, commit, [".c"])
    old, new = count_change(added, removed, INLINE_RE)
    line = f"Was {old} now: {new}"
    if not new:
        return Result("pass", line)
    lines = "\n".join(ln for ln in added if INLINE_RE.search(ln))
    return Result("warn" if new == old else "fail", line, lines)


MODULE_PARAM_RE = re.compile(r"module_param", re.I)


def module_param(tree, commit):
    """New module parameters are not accepted in netdev."""
    added, removed = diff_lines(tree, commit)
    old, new = count_change(added, removed, MODULE_PARAM_RE)
    line = f"Was {old} now: {new}"
    if not new:
        return Result("pass", line)
    return Result("warn" if new == old else "fail", line,
                  "\n".join(ln for ln in added if MODULE_PARAM_RE.search(ln)))


def deprecated_api(tree, commit):
    added, removed = diff_lines(tree, commit)
    found, status = [], "pass"
    for names, worst in ((DEPRECATED_WARNINGS, "warn"), (DEPRECATED_ERRORS, "fail")):
        for name in names:
            pat = re.compile(r"\W" + re.escape(name) if name.endswith("(") else re.escape(name),
                             re.I)
            old, new = count_change(added, removed, pat)
            if not old and not new:
                continue
            found.append(f"'{name}' was: {old} now: {new}")
            if new > old:
                status = worst if status != "fail" else status
            elif new and worst == "fail" and status == "pass":
                status = "warn"
    return Result(status, "Found: " + "; ".join(found) if found else "None detected")


# -- maintainers ------------------------------------------------------------
MAIL_RE = re.compile(r"([^ <\"]*@[^ >\"]*)")


def get_maintainers(tree, commit):
    """(code, output, to, cc) of get_maintainer.pl on the patch: To are the
    maintainers, Cc everyone else it names."""
    code, patch = run(["git", "format-patch", "-1", "--stdout", commit], cwd=tree)
    with tempfile.NamedTemporaryFile("w", suffix=".patch") as f:
        f.write(patch)
        f.flush()
        code, out = run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                         "--no-tree", f.name], cwd=tree)
    to, cc = [], []
    for line in out.splitlines():
        m = re.match(r"^(.*?<[^>]+>|\S+@\S+) ?\((.*)\)$", line.strip())
        if m:
            (to if "maintainer" in m[2] else cc).append(m[1].strip())
    return code, out, to, cc


def address(entry):
    m = MAIL_RE.search(entry)
    return m[1].lower() if m else entry.lower()


def cc_maintainers(tree, commit, recipients=None):
    """Everyone get_maintainer.pl names is among the patch's recipients
    (`recipients`: addresses; None: the list itself, as `b4 prep
    --auto-to-cc` sends it). Returns (Result, to, cc)."""
    code, out, to, cc = get_maintainers(tree, commit)
    expected = {address(e) for e in to + cc} - CC_IGNORE
    if code or not expected:
        return Result("fail", "get_maintainer.pl found nobody: " + out.strip()[:200], out), [], []
    sent = expected if recipients is None else {address(r) for r in recipients}
    missing = sorted(expected - sent)
    found = expected & sent
    if missing:
        status = "warn" if len(found) > 1 else "fail"
        return (Result(status, f"{len(missing)} maintainers not CCed: {' '.join(missing)}", out),
                to, cc)
    return Result("pass", f"CCed {len(found)} of {len(expected)} maintainers", out), to, cc


def maintainers(tree, commit):
    """MAINTAINERS changes: each file pattern (F:, X:) a line adds matches a
    file of the tree, as get_maintainer.pl --self-test=patterns checks (the
    whole self-test takes many minutes on this tree: only the added lines
    are new, so only they are checked)."""
    if "MAINTAINERS" not in [p for _, p in touched_files(tree, commit)]:
        return Result("pass", "MAINTAINERS not touched")
    out = git(tree, "show", "--format=", "-U0", "--no-color", commit, "--", "MAINTAINERS")
    files = git(tree, "ls-tree", "-r", "--name-only", commit).splitlines()
    problems, line_no = [], 0
    for line in out.splitlines():
        m = re.match(r"^@@ -\S+ \+(\d+)", line)
        if m:
            line_no = int(m[1])
            continue
        if not line.startswith("+") or line.startswith("+++"):
            continue
        m = re.match(r"^\+([FX]):\s*(\S+)", line)
        if m and not any(pattern_matches(m[2], f) for f in files):
            problems.append(f"MAINTAINERS:{line_no}: warning: no file matches {m[1]}:\t{m[2]}")
        line_no += 1
    line = counts_line(0, len(problems))
    if problems:
        return Result("fail", f"{line}; {problems[0]}", "\n".join(problems))
    return Result("pass", line)


def pattern_matches(pattern, path):
    """A MAINTAINERS file pattern: a directory ends with /, globs as in
    fnmatch without crossing a /, a bare directory name matches below it."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    if Path(path).match(pattern) and path.count("/") == pattern.count("/"):
        return True
    return path.startswith(pattern.rstrip("/") + "/")


# -- selftests ---------------------------------------------------------------
def config_order_errors(text):
    """Config fragments (and .gitignore): entries sorted by name, `_` not
    counted, comments and lines without `=` ignored."""
    errors, prev = [], None
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("#") or "=" not in line:
            continue
        key = line.split("=")[0].strip().replace("_", "")
        if prev is not None and key < prev[0]:
            errors.append(f"line {n}: {line.strip()} should come before {prev[1]}")
        prev = (key, line.strip())
    return errors


def gitignore_order_errors(text):
    errors, prev = [], None
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


def makefile_blocks(text):
    """{variable: [(line number, raw line)]} of the list assignments netdev
    keeps one item a line: `VAR = \\` or `VAR += item \\` and the
    continuation lines. Flags, libraries and computed lists are left out."""
    blocks, var = {}, None
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


def makefile_order_errors(text):
    errors = []
    for var, lines in makefile_blocks(text).items():
        nums = [n for n, _ in lines]
        for a, b in zip(nums, nums[1:]):
            if b != a + 1:
                errors.append(f"{var}: a second block at line {b} (first at {nums[0]})")
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
        names = []
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


def selftest_wildcard(path):
    rel = path.removeprefix(SELFTESTS)
    return any(os.path.dirname(rel) == os.path.dirname(w)
               and Path(os.path.basename(rel)).match(os.path.basename(w))
               for w in SELFTEST_WILDCARDS)


def check_selftest(tree, commit):
    """Net selftests the patch adds or changes: Makefile lists, config
    fragments and .gitignore in order; new scripts and programs listed in
    their Makefile, new programs in .gitignore."""
    files = [(s, p) for s, p in touched_files(tree, commit)
             if s != "D" and p.startswith(SELFTESTS) and "/net/" in p]
    if not files:
        return Result("pass", "No changes to selftests")
    problems, formats, listed = [], 0, 0

    def show(path):
        code, text = run(["git", "show", f"{commit}:{path}"], cwd=tree)
        return text if code == 0 else None

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


# -- linters, before and after ---------------------------------------------------
class Linter:
    """A linter run on the files of one kind the patch touches, at the parent
    (files it modifies) and at the patch (files it adds or modifies).
    Subclasses say how to run it and how to sort its lines into errors,
    warnings and the rest."""
    name = "?"
    suffix = ".?"
    kind = "files"

    def lint(self, tree, path):
        """Output lines for path (relative to the tree)."""
        raise NotImplementedError

    def classify(self, line):
        """'error', 'warning', 'other' or None (not a finding)."""
        raise NotImplementedError

    def lint_files(self, tree, paths):
        """{path: output lines}; one run per file unless a linter does better."""
        return {path: self.lint(tree, path) for path in paths}

    def verdict(self, before, after, per_file):
        errs = (before["error"], after["error"])
        warns = (before["warning"], after["warning"])
        line = f"Errors before: {errs[0]} (+warn: {warns[0]}) this patch: {errs[1]} " \
               f"(+warn: {warns[1]})"
        if errs[1] > errs[0]:
            return "fail", line
        if warns[1] > warns[0]:
            return "warn", line
        return "pass", line

    def __call__(self, tree, commit):
        files = [(s, p) for s, p in touched_files(tree, commit)
                 if s in "AM" and p.endswith(self.suffix)]
        if not files:
            return Result("pass", f"No {self.kind} touched, skip")
        if not self.available():
            return Result("skip", f"{self.name} is not installed")
        before, after = Counter(), Counter()
        per_file, details = {}, []
        try:
            for rev, side, wanted in ((f"{commit}^", before, "M"), (commit, after, "AM")):
                git(tree, "checkout", "-q", "--detach", rev)
                paths = [path for status, path in files if status in wanted]
                for path, lines in self.lint_files(tree, paths).items():
                    found = [ln for ln in lines if self.classify(ln) is not None]
                    per_file.setdefault(path, []).append(found)
                    side.update(self.classify(ln) for ln in found)
                    if side is after:
                        details += found
        finally:
            git(tree, "checkout", "-q", "--detach", commit)
        status, line = self.verdict(before, after, per_file)
        return Result(status, line, "\n".join(details))

    def available(self):
        return True


class Pylint(Linter):
    name, suffix, kind = "pylint", ".py", "python scripts"

    def available(self):
        return shutil.which("pylint") is not None

    def lint(self, tree, path):
        _, out = run(["pylint", "--score=n", path], cwd=tree)
        return out.splitlines()

    def classify(self, line):
        m = re.search(r": ([EFWCR])\d{4}: ", line)
        if not m:
            return None
        return {"E": "error", "F": "error", "W": "warning", "C": "warning"}.get(m[1], "other")


RUFF_JS = Path(__file__).with_name("ruff-check.js")


def ruff_command():
    """ruff, or its WebAssembly build from npm (Debian 12 has no ruff
    package; setup-host.sh installs @astral-sh/ruff-wasm-nodejs)."""
    if shutil.which("ruff"):
        return ["ruff", "check", "--output-format", "pylint"]
    module = Path(os.environ.get("RUFF_WASM_DIR", cache_dir() / "npm-tools")) \
        / "node_modules/@astral-sh/ruff-wasm-nodejs"
    if shutil.which("node") and module.is_dir():
        return ["node", str(RUFF_JS), str(module)]
    return None


class Ruff(Linter):
    """Every line is an error, as for the bot; no configuration in the
    tree, so ruff's default rules (E4, E7, E9, F)."""
    name, suffix, kind = "ruff", ".py", "python scripts"

    def available(self):
        return ruff_command() is not None

    def __init__(self):
        self.cache = {}  # blob id -> output lines (path replaced by "PATH")

    def lint(self, tree, path):
        return self.lint_files(tree, [path])[path]

    def lint_blobs(self, tree, blobs):
        """Lint the blobs not yet cached, in one run: node loads ruff's
        WebAssembly (seconds of CPU) once."""
        todo = sorted(set(blobs) - set(self.cache))
        if not todo:
            return
        with tempfile.TemporaryDirectory() as tmp:
            names = []
            for blob in todo:
                _, text = run(["git", "cat-file", "blob", blob], cwd=tree)
                (Path(tmp) / f"{blob}.py").write_text(text)
                names.append(f"{blob}.py")
                self.cache[blob] = []
            _, out = run([*ruff_command(), *names], cwd=tmp)
        for line in out.splitlines():
            name, _, rest = line.partition(":")
            if name.removesuffix(".py") in self.cache:
                self.cache[name.removesuffix(".py")].append("PATH:" + rest)

    def prefetch(self, tree, commits):
        """Every .py blob the commits' checks will read, linted at once."""
        blobs = []
        for commit in commits:
            for status, path in touched_files(tree, commit):
                if not path.endswith(".py") or status not in "AM":
                    continue
                for rev in ([commit] if status == "A" else [f"{commit}^", commit]):
                    code, blob = run(["git", "rev-parse", f"{rev}:{path}"], cwd=tree)
                    if code == 0:
                        blobs.append(blob.strip())
        self.lint_blobs(tree, blobs)

    def lint_files(self, tree, paths):
        blobs = {path: git(tree, "rev-parse", f"HEAD:{path}") for path in paths}
        self.lint_blobs(tree, blobs.values())
        return {path: [ln.replace("PATH:", f"{path}:", 1) for ln in self.cache[blob]]
                for path, blob in blobs.items()}

    def classify(self, line):
        return "error" if re.match(r"^\S+:\d+: \[[^\]]+\] ", line) else None

    def verdict(self, before, after, per_file):
        line = f"Errors before: {before['error']} ; this patch: {after['error']}"
        return ("fail" if after["error"] > before["error"] else "pass"), line


class Shellcheck(Linter):
    """Errors and warnings counted; a script that was clean, or is new,
    must stay clean: all its findings count as errors."""
    name, suffix, kind = "shellcheck", ".sh", "shell scripts"

    def available(self):
        return shutil.which("shellcheck") is not None

    def lint(self, tree, path):
        d = Path(tree) / os.path.dirname(path)
        args = ["shellcheck", "-x", "-f", "gcc"]
        for code in SHELLCHECK_EXCLUDE:
            args += ["-e", code]
        _, out = run([*args, os.path.basename(path)], cwd=d)
        return out.splitlines()

    def classify(self, line):
        m = re.match(r"^\S+:\d+:\d+: (error|warning|note|style): ", line)
        return None if not m else m[1] if m[1] in ("error", "warning") else "other"

    def verdict(self, before, after, per_file):
        errs, warns = after["error"], after["warning"]
        for path, sides in per_file.items():
            now = sides[-1]
            was_clean = len(sides) == 1 or not sides[0]
            if now and was_clean:
                errs += sum(1 for ln in now if self.classify(ln) != "error")
        line = f"Errors before: {before['error']} (+warn: {before['warning']}) this patch: " \
               f"{errs} (+warn: {warns})"
        if errs > before["error"]:
            return "fail", line
        if warns > before["warning"]:
            return "warn", line
        return "pass", line


class Yamllint(Linter):
    name, suffix, kind = "yamllint", ".yaml", "YAML files"

    def available(self):
        return shutil.which("yamllint") is not None

    def lint(self, tree, path):
        _, out = run(["yamllint", "-f", "parsable", path], cwd=tree)
        return out.splitlines()

    def classify(self, line):
        m = re.search(r":\d+:\d+: \[(error|warning)\] ", line)
        return m[1] if m else None


pylint = Pylint()
ruff = Ruff()
shellcheck = Shellcheck()
yamllint = Yamllint()


# -- builds of the touched objects -------------------------------------------
def kernel_sources(tree, commit, suffix=".c"):
    return [p for s, p in touched_files(tree, commit)
            if s != "D" and p.endswith(suffix)
            and not p.startswith(("tools/", "scripts/", "Documentation/", "samples/"))]


def touched_objects(tree, commit, series_sources=()):
    """The objects a patch touches: its kernel C files; a patch that changes
    a header compiles the series' C files too (the code that header serves
    here), as the bot's full build would."""
    objs = [p[:-2] + ".o" for p in kernel_sources(tree, commit)]
    if kernel_sources(tree, commit, ".h"):
        objs += [p[:-2] + ".o" for p in series_sources if p[:-2] + ".o" not in objs]
    return objs


def undefined_symbols(obj):
    code, out = run(["nm", "-u", str(obj)], cwd=Path(obj).parent)
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()} if code == 0 else set()


class ObjectBuild:
    """One of the bot's kernel builds, reduced to the objects a patch
    touches: they are compiled in a prepared build directory (its own
    config) at the parent, sources made newer, and at the patch; warnings
    new at the patch, or a compile that breaks, fail. `make(args)` returns
    (code, output). With `div64`, objects that call a libgcc 64-bit division
    helper fail too: a 32-bit kernel does not link them (there is no link
    here, `nm -u` finds them)."""

    def __init__(self, name, tree, make, build_dir, series_sources=(), div64=False,
                 unavailable=None, log=print):
        self.name, self.tree, self.make, self.build_dir = name, tree, make, Path(build_dir)
        self.series_sources, self.div64, self.unavailable = series_sources, div64, unavailable
        self.log = log
        self.seconds = 0.0

    def __call__(self, commit):
        if self.unavailable:
            return Result("skip", self.unavailable)
        objs = touched_objects(self.tree, commit, self.series_sources)
        if not objs:
            return Result("pass", "No C files touched: " + counts_line(0, 0))
        parent = git(self.tree, "rev-parse", f"{commit}^")
        try:
            git(self.tree, "checkout", "-q", "--detach", parent)
            for obj in objs:
                src = Path(self.tree) / (obj[:-2] + ".c")
                if src.exists():
                    os.utime(src)
            present = [o for o in objs if (Path(self.tree) / (o[:-2] + ".c")).exists()]
            self.log(f"    {self.name}: {' '.join(present) or '(new files only)'} (parent)")
            code, before = self.make(present) if present else (0, "")
            if code:
                return Result("fail", "parent does not build: " + first_error(before), before)
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        self.log(f"    {self.name}: {' '.join(objs)} (patch)")
        code, after = self.make(objs)
        wb, wa = warnings_of(before), warnings_of(after)
        line = counts_line(sum(wb.values()), sum(wa.values()))
        if code:
            return Result("fail", f"{line}; build broken: {first_error(after)}", after)
        new = new_warnings(wb, wa)
        if new:
            return Result("fail", f"{line}; new: {new[0]}", "\n".join(new))
        if self.div64:
            calls = sorted(f"{obj}: {sym}" for obj in objs
                           for sym in undefined_symbols(self.build_dir / obj)
                           if sym in DIV64_HELPERS)
            if calls:
                return Result("fail", f"{line}; 64-bit division without div_u64(): "
                              f"{calls[0]}", "\n".join(calls))
        return Result("pass", line)


def selftest_targets(tree, commit):
    """The selftests TARGETS the patch touches (longest listed prefix)."""
    code, text = run(["git", "show", f"{commit}:{SELFTESTS}Makefile"], cwd=tree)
    listed = set(re.findall(r"^TARGETS \+= (\S+)$", text, re.M)) if code == 0 else set()
    found = []
    for _, path in touched_files(tree, commit):
        if not path.startswith(SELFTESTS):
            continue
        parts = path.removeprefix(SELFTESTS).split("/")[:-1]
        for n in range(len(parts), 0, -1):
            t = "/".join(parts[:n])
            if t in listed:
                if t not in found:
                    found.append(t)
                break
    return found


class SelftestsBuild:
    """build_tools, for the selftests the patch touches: their TARGETS built
    against the tree's headers at the parent and at the patch; new warnings
    or errors, or new untracked files left in the source tree, fail.
    `make(args)` runs make in the tree and returns (code, output)."""

    def __init__(self, tree, make, log=print):
        self.tree, self.make, self.log = tree, make, log

    def untracked(self):
        out = git(self.tree, "status", "--porcelain", "--untracked-files=all")
        return {ln[3:] for ln in out.splitlines() if ln.startswith("??")}

    def build(self, targets):
        code, out = self.make(["headers"])
        if code:
            return code, out
        code2, out2 = self.make(["-C", SELFTESTS, f"TARGETS={' '.join(targets)}"])
        return code2, out + out2

    def __call__(self, commit):
        targets = selftest_targets(self.tree, commit)
        if not targets:
            return Result("pass", "No tools touched, skip")
        parent = git(self.tree, "rev-parse", f"{commit}^")
        try:
            git(self.tree, "checkout", "-q", "--detach", parent)
            self.log(f"    build_tools: TARGETS={' '.join(targets)} (parent)")
            code_before, before = self.build(targets)
            dirt_before = self.untracked()
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        self.log(f"    build_tools: TARGETS={' '.join(targets)} (patch)")
        code, after = self.build(targets)
        dirt = self.untracked() - dirt_before
        wb, wa = warnings_of(before), warnings_of(after)
        line = (f"Errors and warnings before: {sum(wb.values())} (+{len(dirt_before)}) "
                f"this patch: {sum(wa.values())} (+{len(dirt_before) + len(dirt)})")
        new = new_warnings(wb, wa)
        if new:
            return Result("fail", f"{line}; new: {new[0]}", "\n".join(new))
        if code and not code_before:
            return Result("fail", f"{line}; build broken: {first_error(after)}", after)
        if dirt:
            return Result("fail", f"{line}; new untracked files: {sorted(dirt)[0]}",
                          "\n".join(sorted(dirt)))
        return Result("pass", line)


class BuildChecker:
    """Incremental W=1 + sparse builds before and after each patch.

    Before a patch, its touched files are made newer and rebuilt at the
    parent, so the same objects are compiled (and sparse-checked) on both
    sides; new warnings are the difference of the two multisets.
    """

    # The kernel build reads nothing under these: a patch touching only them
    # leaves the build's output as it was.
    OUTSIDE_BUILD = ("tools/testing/",)

    def __init__(self, tree, build, log=print):
        self.tree, self.build, self.log = tree, build, log
        self.built = None  # commit of the last make that succeeded
        self.refused = ""  # checker_refused() of that make

    def make(self, label):
        self.log(f"    make W=1 C=1 ({label})")
        return self.build(["W=1", "C=1"])

    def unchanged_build(self, commit):
        """The commit the build in place stands for, when commit touches
        nothing the kernel build reads and differs from it only there."""
        if self.built is None:
            return None
        if not all(p.startswith(self.OUTSIDE_BUILD) for _, p in touched_files(self.tree, commit)):
            return None
        diff = subprocess.run(["git", "-C", str(self.tree), "diff", "--quiet", self.built, commit,
                               "--", ".", *(f":(exclude){d}" for d in self.OUTSIDE_BUILD)])
        return self.built if diff.returncode == 0 else None

    def __call__(self, commit):
        same = self.unchanged_build(commit)
        if same:
            git(self.tree, "checkout", "-q", "--detach", commit)
            msg = (f"no file the kernel build reads: the objects and warnings of "
                   f"{same[:12]} stand")
            self.log(f"    make skipped: {msg}")
            return (Result("pass", msg),
                    Result("skip", self.refused) if self.refused else Result("pass", msg))
        self.built = None
        parent = git(self.tree, "rev-parse", f"{commit}^")
        git(self.tree, "checkout", "-q", "--detach", parent)
        for status, path in touched_files(self.tree, commit):
            p = Path(self.tree) / path
            if status != "A" and p.exists():
                os.utime(p)
        code, before = self.make("parent")
        if code:
            msg = "parent does not build: " + first_error(before)
            return Result("fail", msg, before), Result("skip", "no build")
        git(self.tree, "checkout", "-q", "--detach", commit)
        code, after = self.make("patch")
        if code:
            return (Result("fail", "build broken: " + first_error(after), after),
                    Result("skip", "no build"))
        self.built, self.refused = git(self.tree, "rev-parse", commit), checker_refused(after)
        wb, wa = warnings_of(before), warnings_of(after)
        split = {"build": ([], []), "sparse": ([], [])}
        for w in new_warnings(wb, wa):
            split["sparse" if is_sparse(w) else "build"][0].append(w)
        results = []
        for name in ("build", "sparse"):
            new = split[name][0]
            refused = checker_refused(after) if name == "sparse" else ""
            if refused and not new:
                results.append(Result("skip", refused))
            elif new:
                results.append(Result("fail", f"{len(new)} new warning(s): {new[0]}",
                                      "\n".join(new)))
            else:
                results.append(Result("pass", "no new warnings"))
        return tuple(results)


SPARSE_HINTS = ("sparse:", "incorrect type", "different address spaces", "context imbalance",
                "was not declared. Should it be static?", "cast to restricted",
                "restricted __", "dubious:", "symbol '", "lock context")


# The kernel tests its checker before it uses it (scripts/checker-valid.sh) and
# drops C=1/C=2 with this warning when the checker fails the test: Debian 12's
# sparse 0.6.4 has no __typeof_unqual__, and coccicheck does not pass it either.
CHECKER_REFUSED = re.compile(r"C=\d specified, but (\S+) is not available or not up to date")


def checker_refused(make_output):
    """Why nothing was checked, when the kernel refused the checker; else ""."""
    m = CHECKER_REFUSED.search(make_output or "")
    return (f"not run: the kernel refused {m[1]} (scripts/checker-valid.sh), so it "
            "checked nothing") if m else ""


def build_broken(result):
    """Whether a "build" Result means no objects (the tree did not build), as
    opposed to new warnings."""
    return result.status == "fail" and result.message.startswith(
        ("build broken", "parent does not build"))


def is_sparse(warning):
    return any(h in warning for h in SPARSE_HINTS)


def first_error(text):
    for line in text.splitlines():
        if re.search(r"\berror\b|Error \d", line):
            return line.strip()
    return text.strip().splitlines()[-1] if text.strip() else "(no output)"


def normalise_disassembly(text, func):
    """The instructions and relocations of func in `objdump -d -r
    --no-show-raw-insn --disassemble=func` output, without what moves when
    other code changes: addresses, raw jump targets, offsets into sections,
    trailing padding. objdump lists, under the function's first instruction,
    the relocations of the code before it too: only those at the function's
    own addresses are kept."""
    start, items = None, []  # items: (address, text)
    for line in text.splitlines():
        head = re.match(rf"^([0-9a-f]+) <{re.escape(func)}>:$", line)
        if head:
            start = int(head[1], 16)
            continue
        if start is None:
            continue
        if not line.strip():
            if items:
                break
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s*(.*)$", line)
        if not m:
            continue
        insn = m[2].strip()
        insn = re.sub(r"\b[0-9a-f]+ <", "<", insn)  # jmp 1c <f+0x1c> -> jmp <f+0x1c>
        insn = re.sub(r"(\.[\w.]+)[+-]0x[0-9a-f]+", r"\1+OFF", insn)
        items.append((int(m[1], 16), re.sub(r"\s+", " ", insn)))
    if not items:
        return []
    insns = [a for a, t in items if not t.startswith("R_")]
    end = max(insns) + 16 if insns else start
    body = [t for a, t in items if not t.startswith("R_") or start <= a < end]
    while body and PADDING_RE.match(body[-1]):
        body.pop()
    return body


def disassemble(build, obj, func):
    """func of build/obj, normalised; None when it is not there."""
    path = Path(build) / obj
    if not path.is_file():
        return None
    code, out = run(["objdump", "-d", "-r", "--no-show-raw-insn", f"--disassemble={func}",
                     str(path)], cwd=build)
    body = normalise_disassembly(out, func) if not code else []
    return body or None


class XmitDisasm:
    """The single-queue transmit function after a patch against the base's.

    `baseline` is its normalised disassembly on the base build; each call
    reads the build directory as the last build left it (the patch's)."""

    def __init__(self, build, baseline, target=SINGLE_QUEUE_XMIT):
        self.build, self.baseline, self.target = build, baseline, target

    def __call__(self, commit):
        obj, func = self.target
        if not self.baseline:
            return Result("fail", f"no {func} in the base's {obj}")
        now = disassemble(self.build, obj, func)
        if now is None:
            return Result("fail", f"no {func} in {obj} after the patch")
        if now == self.baseline:
            return Result("pass", f"{func}: {len(now)} instructions as on the base")
        diff = "\n".join(difflib.unified_diff(self.baseline, now, "base", "patch", lineterm=""))
        first = next((ln for ln in diff.splitlines()[2:] if ln[:1] in "+-"), "")
        return Result("fail", f"{func} differs from the base: {first}", diff)


class CocciError(Exception):
    pass


class CocciRefused(Exception):
    """The kernel refused coccicheck as its checker: nothing was checked."""


class Cocci:
    """Coccinelle reports (make C=2 CHECK=scripts/coccicheck MODE=report).

    Reports are cached by blob id, persistently: a file state is checked
    once, so each patch costs one coccicheck run per touched C file.
    """

    def __init__(self, tree, build, cache_file=None, log=print):
        self.tree, self.build, self.log = tree, build, log
        self.cache_file = Path(cache_file) if cache_file else None
        self.cache = {}
        if self.cache_file and self.cache_file.is_file():
            self.cache = json.loads(self.cache_file.read_text())

    def reports(self, rev, path):
        code, blob = run(["git", "rev-parse", f"{rev}:{path}"], cwd=self.tree)
        if code:
            return Counter()
        blob = blob.strip()
        if blob not in self.cache:
            git(self.tree, "checkout", "-q", "--detach", rev)
            self.log(f"    coccicheck {path} @ {rev}")
            code, out = self.build(["C=2", "CHECK=scripts/coccicheck", "MODE=report",
                                    path[:-2] + ".o"])
            if code:
                raise CocciError(f"coccicheck could not check {path}: {first_error(out)}")
            if refused := checker_refused(out):
                raise CocciRefused(refused)
            self.cache[blob] = [re.sub(r":\d+(:\d+)?", "", ln.strip())
                                for ln in out.splitlines()
                                if re.match(r"^\S+\.[ch]:\d+", ln.strip())]
            if self.cache_file:
                self.cache_file.write_text(json.dumps(self.cache))
        return Counter(self.cache[blob])

    def __call__(self, commit):
        cfiles = [p for s, p in touched_files(self.tree, commit)
                  if s != "D" and p.endswith(".c") and not p.startswith(("tools/", "scripts/"))]
        if not cfiles:
            return Result("skip", "no C files touched")
        before, after = Counter(), Counter()
        try:
            for p in cfiles:
                before += self.reports(f"{commit[:12]}^", p)
                after += self.reports(commit[:12], p)
        except CocciError as err:
            return Result("fail", str(err))
        except CocciRefused as err:
            return Result("skip", str(err))
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        new = sorted((after - before).elements())
        if new:
            return Result("fail", f"{len(new)} new report(s): {new[0]}", "\n".join(new))
        return Result("pass", f"{len(cfiles)} file(s), no new reports")


# -- per series ----------------------------------------------------------------
TREE_NAMES = ("net", "net-next", "bpf", "bpf-next")


@dataclass
class SeriesInfo:
    """A series as it is sent: its directory's tree (net or net-next), the
    subjects of its mails, whether a cover letter leads them, and the
    patches' text."""
    name: str
    tree: str
    subjects: list
    has_cover: bool
    patches: list = field(default_factory=list)  # raw patch texts


def series_info(ser):
    """SeriesInfo of a series.Series: the subjects as mailed, prefix
    included, the cover letter's first."""
    texts = [p.read_text() for p in ser.patches]
    covers = [ser.cover.mailed] if ser.cover is not None else []
    return SeriesInfo(ser.name, ser.tree, covers + [series.mail_subject(t) for t in texts],
                      ser.cover is not None, texts)


def subject_tree(subject):
    """The tree a subject's [...] prefix names, or None."""
    m = re.match(r"^\[([^\]]*)\]", subject)
    words = m[1].split() if m else []
    return next((w for w in words if w in TREE_NAMES), None)


def cover_letter(ser):
    if ser.has_cover:
        return Result("pass", "Series has a cover letter")
    if len(ser.subjects) < 3:
        return Result("pass", "Single patches do not need cover letters")
    return Result("warn", "Series does not have a cover letter")


def fixes_present(ser):
    if "next" in ser.tree:
        return Result("pass", "Fixes tag not required for -next series")
    if any(re.search(r"^Fixes: ", text, re.M) for text in ser.patches):
        return Result("pass", "Fixes tag present in non-next series")
    paths = [m for text in ser.patches for m in re.findall(r"^\+\+\+ b/(\S+)$", text, re.M)]
    if paths and all(p.startswith("Documentation/") or p == "MAINTAINERS" for p in paths):
        return Result("pass", "No Fixes tags, but series doesn't touch code")
    return Result("fail", "Series targets non-next tree, but doesn't contain any Fixes tags")


def patch_count(ser):
    n = len(ser.subjects)
    if 0 < n <= MAX_PATCHES:
        return Result("pass", f"{n} patches, at most {MAX_PATCHES}")
    if n == 0:
        return Result("fail", "Series has no patches")
    return Result("fail", f"Series longer than {MAX_PATCHES} patches"
                  + ("" if ser.has_cover else " (and no cover letter)"))


def subject_prefix(ser):
    bad = [s for s in ser.subjects if subject_tree(s) is None]
    if bad:
        return Result("fail", f"Target tree name not specified in the subject: {bad[0]}")
    return Result("pass", f"Tree named in all {len(ser.subjects)} subjects")


def tree_selection(ser):
    """The tree the subjects name is the one the series is for; all agree."""
    named = {subject_tree(s) for s in ser.subjects} - {None}
    if not named:
        return Result("warn", f"Guessed tree name to be {ser.tree}")
    if named != {ser.tree}:
        return Result("fail", f"Marked for {', '.join(sorted(named))}, but the series is for "
                      f"{ser.tree}")
    return Result("pass", f"Clearly marked for {ser.tree}")


SERIES_FUNCS = {"cover_letter": cover_letter, "fixes_present": fixes_present,
                "patch_count": patch_count, "subject_prefix": subject_prefix,
                "tree_selection": tree_selection}


def series_checks(all_series):
    """all_series: [SeriesInfo]. Returns {"<series>:<check>": Result}."""
    return {f"{ser.name}:{name}": SERIES_FUNCS[name](ser)
            for ser in all_series for name in SERIES_CHECKS}


MARKS = {"pass": "pass", "warn": "warn", "fail": "FAIL", "skip": "-"}


def table(reports, columns=CHECKS):
    """Plain-text patch x check table, then each failure or warning."""
    head = ["#", "series", "patch"] + list(columns)
    rows = []
    for r in reports:
        cells = [str(r.index), r.tree, r.subject[:40]]
        for c in columns:
            cells.append(MARKS[r.results.get(c, Result("skip")).status])
        rows.append(cells)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    for r in reports:
        for c in columns:
            res = r.results.get(c)
            if res and res.status in ("fail", "warn"):
                lines.append(f"  patch {r.index} {c}: {res.status}: {res.message}")
    return "\n".join(lines)
