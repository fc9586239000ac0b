"""The per-patch checks that read the commit: checkpatch, kdoc,
header_inline, source_inline, deprecated_api, module_param,
verify_signedoff, verify_fixes, cc_maintainers and maintainers."""

import os
import re
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Collection
from pathlib import Path

from common.git import git, git_ok, git_run
from tools.series.checks.findings import (SELFTESTS, Finding, Tree, count_change,
                                          counts_line, diff_lines, new_warnings, run,
                                          touched_files, warnings_of)
from tools.series.checks.patchwork import Result

CHECKPATCH_IGNORE = ("COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,"
                     "NO_AUTHOR_SIGN_OFF,GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,"
                     "BAD_REPORTED_BY_LINK")
CODESPELL_DICTS = ("/usr/share/codespell/dictionary.txt",
                   "/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt")
FIXES_RE = re.compile(r'^Fixes: (?P<id>[0-9a-f]{12,40}) \("(?P<subject>.+)"\)$')
# A commit named in the message text (submitting-patches.rst's form),
# matched in the message with its lines joined: a title may wrap.
COMMIT_REF_RE = re.compile(r'\bcommit (?P<id>[0-9a-f]{12,40}) \("(?P<subject>[^"]+)"\)')
# NIPA's deprecated_api lists: a new use of an error is a failure, of a
# warning a warning (the tracked-reference variants are preferred).
DEPRECATED_ERRORS = ("module_param",)
DEPRECATED_WARNINGS = ("dev_hold(", "dev_put(", "put_net(", "get_net(", "init_dummy_netdev(")
# get_maintainer.pl names it on everything; netdev does not expect it.
CC_IGNORE = {"linux-kernel@vger.kernel.org"}
# Where a python3 for scripts/spdxcheck.py is looked for besides PATH.
OTHER_PYTHONS = ("/usr/bin/python3",)
SPDX_PROBE = "SPDX-License-Identifier: {}\n"
SPDX_NEEDS = "apt-get install python3-ply python3-git"


def python_dirs() -> list[str]:
    """The directories of the python3 candidates: PATH's, in order, then OTHER_PYTHONS'."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and os.access(os.path.join(d, "python3"), os.X_OK)]
    dirs += [os.path.dirname(p) for p in OTHER_PYTHONS if os.access(p, os.X_OK)]
    return list(dict.fromkeys(dirs))


def spdx_verdicts(tree: Tree, env: dict[str, str]) -> tuple[bool, bool, str]:
    """Whether scripts/spdxcheck.py, as checkpatch runs it (`env`), accepts
    GPL-2.0 and refuses a made-up identifier; and what it printed."""
    said = []
    for ident in ("GPL-2.0", "NOT-A-LICENSE-mqbypass"):
        try:
            res = subprocess.run(["scripts/spdxcheck.py", "-"], cwd=tree, env=env, text=True,
                                 input=SPDX_PROBE.format(ident), capture_output=True,
                                 errors="replace", timeout=120)
        except (OSError, subprocess.TimeoutExpired) as err:
            return False, False, str(err)
        said.append((res.stdout.strip(), (res.stdout + res.stderr).strip()))
    return not said[0][0], bool(said[1][0]), said[0][1] or said[1][1]


SpdxEnv = tuple[dict[str, str] | None, str]
_spdx_lock = threading.Lock()
_spdx_env: dict[tuple[str, str], SpdxEnv] = {}


def find_spdx_env(tree: Tree) -> SpdxEnv:
    if not (Path(tree) / "scripts/spdxcheck.py").is_file():
        return None, "SPDX identifiers not checked: the tree has no scripts/spdxcheck.py"
    tried = []
    for d in python_dirs():
        env = {**os.environ, "PATH": os.pathsep.join([d, os.environ.get("PATH", "")])}
        good, bad, said = spdx_verdicts(tree, env)
        if good and bad:
            return env, ""
        tried.append(f"{d}/python3: {said.splitlines()[-1] if said else 'no verdict'}")
    return None, (f"SPDX identifiers not checked: no python3 runs scripts/spdxcheck.py "
                  f"({'; '.join(tried) or 'no python3 found'}); it needs ply and GitPython: "
                  f"{SPDX_NEEDS}")


def spdx_env(tree: Tree) -> SpdxEnv:
    """The environment under which checkpatch's SPDX check works in `tree`
    (a python3 first on PATH whose spdxcheck.py tells a made-up identifier
    from GPL-2.0), or None and why there is none; once a tree. checkpatch
    takes an identifier as valid when spdxcheck.py cannot run: without
    this, a python3 lacking ply first on PATH passes any identifier."""
    key = (str(Path(tree).resolve()), os.environ.get("PATH", ""))
    with _spdx_lock:
        if key not in _spdx_env:
            _spdx_env[key] = find_spdx_env(tree)
        return _spdx_env[key]


def commit_refs(text: str) -> list[tuple[str, str]]:
    """(id, subject) of each `commit <id> ("<subject>")` the text names (a
    title may wrap)."""
    return [(m["id"], m["subject"]) for m in COMMIT_REF_RE.finditer(" ".join(text.split()))]


def referenced_ids(text: str) -> list[str]:
    """The commit ids a message names: its Fixes: tags' and its commit_refs()'."""
    ids = [m["id"] for m in map(FIXES_RE.match, text.splitlines()) if m]
    return ids + [sha for sha, _ in commit_refs(text)]


def unresolved_ids(tree: Tree, text: str) -> list[str]:
    """The ids text names (referenced_ids()) that tree's history lacks:
    checkpatch's UNKNOWN_COMMIT_ID would flag each."""
    return [i for i in referenced_ids(text)
            if not git_ok(tree, "cat-file", "-e", f"{i}^{{commit}}")]


def checkpatch(tree: Tree, commit: str) -> Result:
    ignore = CHECKPATCH_IGNORE
    if unresolved_ids(tree, git(tree, "log", "-1", "--format=%B", commit)):
        # A tree without upstream history (the Debian import) cannot resolve
        # them; verify_fixes checks them against known-commits.txt.
        ignore += ",UNKNOWN_COMMIT_ID"
    spell: list[str] = next((["--codespell", f"--codespellfile={d}"] for d in CODESPELL_DICTS
                             if Path(d).is_file()), [])
    env, no_spdx = spdx_env(tree)
    missing = [no_spdx] if no_spdx else []
    if not spell:
        missing.append("spelling not checked: no codespell dictionary "
                       f"({' or '.join(CODESPELL_DICTS)}; apt-get install codespell)")
    code, out = run(["perl", "scripts/checkpatch.pl", "--strict", *spell,
                     "--max-line-length=80", "--ignore", ignore, "--showfile", "-g", commit],
                    cwd=tree, env=env)
    m = re.search(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", out)
    if not m:
        return Result("fail", "checkpatch did not run: " + out.strip()[:200], out)
    errors, warns, cks = map(int, m.groups())
    if errors or warns or cks:
        found = sorted({re.sub(r"^\S+:\d+: ", "", ln) for ln in out.splitlines()
                        if re.match(r"^(\S+:\d+: )?(ERROR|WARNING|CHECK):", ln)})
        return Result("fail" if errors else "warn", "; ".join(found) or m.group(0), out,
                      "; ".join(missing))
    return Result("pass", m.group(0), out, "; ".join(missing))


def verify_signedoff(tree: Tree, commit: str, committer: bool = True) -> Result:
    """A Signed-off-by from the author and from the committer (name or
    address, case-insensitive). committer=False: only the author's, for a
    commit applied from a mail, whose committer is whoever applied it."""
    fields = git(tree, "log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%B", commit)
    an, ae, cn, ce, body = fields.split("\0", 4)
    sobs = [s.strip().lower() for s in
            re.findall(r"^\s*signed-off-by:(.*)$", body, re.M | re.I)]

    def signed(name: str, mail: str) -> bool:
        return any(f"<{mail.lower()}>" in s or s.startswith(name.lower() + " <") for s in sobs)

    people = [("author", an, ae)] + ([("committer", cn, ce)] if committer else [])
    missing = [who for who, n, m in people if not signed(n, m)]
    if missing:
        return Result("fail", "; ".join(f"{w} Signed-off-by missing" for w in missing))
    return Result("pass", "Signed-off-by tag matches author"
                  + (" and committer" if committer else ""))


def load_known_commits(path: str | Path) -> dict[str, str]:
    known = {}
    if Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                sha, _, subject = line.partition(" ")
                known[sha.lower()] = subject.strip()
    return known


def subject_of(tree: Tree, sha: str, known: dict[str, str]) -> str | None:
    """The subject of commit sha (12+ digits): kernel/known-commits.txt's
    line, else the tree's history; None if neither has it."""
    hit = next((s for k, s in known.items() if k.startswith(sha) or sha.startswith(k)), None)
    if hit is None:
        res = git_run(tree, "log", "-1", "--format=%s", sha)
        hit = res.stdout.strip() if res.returncode == 0 else None
    return hit


def unknown_refs(tree: Tree, body: str, known: dict[str, str]) -> list[str]:
    """What is wrong with the commits the message text names (`commit
    <id> ("<subject>")`): an id neither known nor in the history, or a
    subject that is not the commit's. checkpatch's UNKNOWN_COMMIT_ID is
    left out where the tree lacks the history; this checks them instead."""
    problems = []
    for sha, subject in commit_refs(body):
        hit = subject_of(tree, sha, known)
        if hit is None:
            problems.append(f"commit {sha} is neither in the tree's history nor in "
                            "kernel/known-commits.txt")
        elif hit != subject:
            problems.append(f"commit {sha} is \"{hit}\", the message says \"{subject}\"")
    return problems


def verify_fixes(tree: Tree, commit: str, tree_name: str, known: dict[str, str]) -> Result:
    """Every Fixes: tag, and every commit the text names (`commit <id>
    ("<subject>")`), names a commit (in the history or known-commits.txt)
    by at least 12 digits and its exact subject; and, stricter than the bot's
    series-level fixes_present, every net patch that changes more than
    selftests carries one."""
    body = git(tree, "log", "-1", "--format=%B", commit)
    lines = [ln for ln in body.splitlines() if re.match(r"^\s*fixes:", ln, re.I)]
    problems = unknown_refs(tree, body, known)
    if not lines:
        if problems:
            return Result("fail", "; ".join(problems))
        if tree_name != "net":
            return Result("pass", "No Fixes tag")
        # A test of the fixes next to them fixes nothing itself.
        if all(path.startswith(SELFTESTS) for _, path in touched_files(tree, commit)):
            return Result("pass", "No Fixes tag: the patch only adds or changes selftests")
        return Result("fail", "Fixes tag missing: a net fix needs one")
    flat = "#".join(body.splitlines())
    for ln in lines:
        if f"##{ln}##" in flat:
            problems.append(f"{ln}: empty lines surround the Fixes tag")
        m = FIXES_RE.match(ln)
        if not m:
            problems.append(f"malformed, want 'Fixes: <12+ hex> (\"subject\")': {ln}")
            continue
        sha, subject = m["id"], m["subject"]
        hit = subject_of(tree, sha, known)
        if hit is None:
            problems.append(f"Target SHA1 does not exist: {sha} (not in the tree's history "
                            "nor in kernel/known-commits.txt)")
        elif hit != subject:
            problems.append(f"Subject does not match target commit subject: {sha} is "
                            f"\"{hit}\", the tag says \"{subject}\"")
    if problems:
        return Result("fail", "; ".join(problems))
    return Result("pass", f"Fixes tag looks correct ({len(lines)})")


def kdoc(tree: Tree, commit: str) -> Result:
    files = [p for s, p in touched_files(tree, commit)
             if s != "D" and p.endswith((".c", ".h")) and not p.startswith("tools/")]
    if not files:
        return Result("pass", "No C files touched: " + counts_line(0, 0))
    before: Counter[Finding] = Counter()
    after: Counter[Finding] = Counter()
    # Both sides read from git: the checkout may be elsewhere.
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:
            for rev, side in ((f"{commit}^", before), (commit, after)):
                shown = git_run(tree, "show", f"{rev}:{p}")
                if shown.returncode:
                    continue
                dst = Path(tmp) / rev.replace("^", "-parent") / p
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(shown.stdout)
                _, out = run(["scripts/kernel-doc", "-Wall", "-none", str(dst)], cwd=tree)
                side.update(warnings_of(out.replace(str(dst), p)))
    new = new_warnings(before, after)
    line = counts_line(sum(before.values()), sum(after.values()))
    if new:
        return Result("fail", f"{line}; new: {new[0]}", "\n".join(new))
    return Result("pass", line)


# -- what the diff adds and removes --------------------------------------
HEADER_STATIC_RE = re.compile(r"^static (?!(__always_)?inline\b).*\(")
INLINE_RE = re.compile(r"(^|\W)inline\W", re.I)


def header_inline(tree: Tree, commit: str) -> Result:
    added, _ = diff_lines(tree, commit, [".h"])
    bad = [ln for ln in added if HEADER_STATIC_RE.match(ln)]
    if bad:
        return Result("fail", "Detected static functions without inline keyword in header "
                      f"files: {len(bad)}", "\n".join(bad))
    return Result("pass", "No static functions without inline keyword in header files")


def source_inline(tree: Tree, commit: str) -> Result:
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


def module_param(tree: Tree, commit: str) -> Result:
    """New module parameters are not accepted in netdev."""
    added, removed = diff_lines(tree, commit)
    old, new = count_change(added, removed, MODULE_PARAM_RE)
    line = f"Was {old} now: {new}"
    if not new:
        return Result("pass", line)
    return Result("warn" if new == old else "fail", line,
                  "\n".join(ln for ln in added if MODULE_PARAM_RE.search(ln)))


def deprecated_api(tree: Tree, commit: str) -> Result:
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


def get_maintainers(tree: Tree, commit: str) -> tuple[int, str, list[str], list[str]]:
    """(code, output, to, cc) of get_maintainer.pl on the patch: To are the
    maintainers, Cc everyone else it names."""
    patch = git_run(tree, "format-patch", "-1", "--stdout", commit).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".patch") as f:
        f.write(patch)
        f.flush()
        code, out = run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                         "--no-tree", f.name], cwd=tree)
    to: list[str] = []
    cc: list[str] = []
    for line in out.splitlines():
        m = re.match(r"^(.*?<[^>]+>|\S+@\S+) ?\((.*)\)$", line.strip())
        if m:
            (to if "maintainer" in m[2] else cc).append(m[1].strip())
    return code, out, to, cc


def address(entry: str) -> str:
    m = MAIL_RE.search(entry)
    return m[1].lower() if m else entry.lower()


def cc_maintainers(tree: Tree, commit: str, recipients: Collection[str] | None = None
                   ) -> tuple[Result, list[str], list[str]]:
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


def maintainers(tree: Tree, commit: str) -> Result:
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


def pattern_matches(pattern: str, path: str) -> bool:
    """A MAINTAINERS file pattern: a directory ends with /, globs as in
    fnmatch without crossing a /, a bare directory name matches below it."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    if Path(path).match(pattern) and path.count("/") == pattern.count("/"):
        return True
    return path.startswith(pattern.rstrip("/") + "/")
