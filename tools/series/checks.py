#!/usr/bin/env python3
"""Per-patch checks mirroring netdev CI (NIPA).

For every commit of the series: checkpatch --strict with netdev's ignore
list, Signed-off-by matching the author, Fixes: tags, kernel-doc -Wall on
touched files, an incremental W=1 build with sparse (C=1) counting new
warnings, Coccinelle on touched C files, get_maintainer.pl's To/Cc, and the
project's own: the default dummy's transmit function must disassemble as on
the base (xmit_disasm). Per series: cover letter, size, subject prefixes.
Each check yields pass, fail or skip with its first message.
"""

import difflib
import json
import os
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

CHECKPATCH_IGNORE = ("COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,"
                     "NO_AUTHOR_SIGN_OFF,GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,"
                     "BAD_REPORTED_BY_LINK")
CHECKS = ("checkpatch", "signoff", "fixes", "kdoc", "build", "sparse", "cocci", "maintainers",
          "xmit_disasm")
# The transmit function of a dummy with one TX queue (the default, and the
# module's dummy0): object in the build directory, symbol.
SINGLE_QUEUE_XMIT = ("drivers/net/dummy.o", "dummy_xmit")
# Alignment padding objdump shows after a function's last instruction.
PADDING_RE = re.compile(r"^(nop[wl]?\b.*|int3|xchg\s+%ax,%ax|data16.*|cs nopw.*)$")
WARN_RE = re.compile(r"^(?P<file>[^\s:]+):\d+(?::\d+)?: (?P<kind>warning|error): (?P<msg>.*)$")
FIXES_RE = re.compile(r'^Fixes: (?P<id>[0-9a-f]{12,40}) \("(?P<subject>.+)"\)$')
MAX_PATCHES = 15


@dataclass
class Result:
    status: str  # pass | fail | skip
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
        return all(r.status != "fail" for r in self.results.values())

    def as_dict(self):
        d = asdict(self)
        d["ok"] = self.ok
        return d


def run(cmd, cwd, env=None, timeout=None):
    res = subprocess.run(cmd, cwd=cwd, env=env, text=True, errors="replace",
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return res.returncode, res.stdout


def git(tree, *args):
    code, out = run(["git", *args], cwd=tree)
    if code:
        raise RuntimeError(f"git {' '.join(args)}: {out.strip()}")
    return out.strip()


def warnings_of(text):
    """Multiset of compiler/sparse/kernel-doc warnings without line numbers."""
    found = Counter()
    for line in text.splitlines():
        m = WARN_RE.match(line.strip())
        if m:
            found[(m["file"].removeprefix("./"), m["kind"], m["msg"])] += 1
        elif line.startswith("WARNING: modpost:"):
            found[("modpost", "warning", line)] += 1
    return found


def new_warnings(before, after):
    diff = after - before
    return [f"{f}: {k}: {m}" for (f, k, m), n in sorted(diff.items()) for _ in range(n)]


def checkpatch(tree, commit):
    ignore = CHECKPATCH_IGNORE
    body = git(tree, "log", "-1", "--format=%B", commit)
    ids = [m["id"] for m in map(FIXES_RE.match, body.splitlines()) if m]
    absent = [i for i in ids if run(["git", "cat-file", "-e", f"{i}^{{commit}}"], cwd=tree)[0]]
    if absent:
        # A tree without upstream history (the Debian import) cannot resolve
        # Fixes: ids; the fixes check verifies them against known-commits.txt.
        ignore += ",UNKNOWN_COMMIT_ID"
    code, out = run(["perl", "scripts/checkpatch.pl", "--strict", "--max-line-length=80",
                     "--ignore", ignore, "--showfile", "-g", commit], cwd=tree)
    m = re.search(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", out)
    if not m:
        return Result("fail", "checkpatch did not run: " + out.strip()[:200], out)
    if any(int(x) for x in m.groups()):
        first = next((ln for ln in out.splitlines()
                      if re.match(r"^(\S+:\d+: )?(ERROR|WARNING|CHECK):", ln)), m.group(0))
        return Result("fail", first, out)
    return Result("pass", m.group(0), out)


def signoff(tree, commit):
    author = git(tree, "log", "-1", "--format=%an <%ae>", commit)
    body = git(tree, "log", "-1", "--format=%B", commit)
    sobs = re.findall(r"^Signed-off-by: (.+)$", body, re.M)
    if not sobs:
        return Result("fail", "no Signed-off-by")
    if author not in sobs:
        return Result("fail", f"no Signed-off-by from the author {author}")
    return Result("pass", f"{len(sobs)} Signed-off-by")


def load_known_commits(path):
    known = {}
    if Path(path).is_file():
        for line in Path(path).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                sha, _, subject = line.partition(" ")
                known[sha.lower()] = subject.strip()
    return known


def fixes(tree, commit, tree_name, known):
    body = git(tree, "log", "-1", "--format=%B", commit)
    lines = [ln for ln in body.splitlines() if ln.lower().startswith("fixes:")]
    if not lines:
        if tree_name != "net":
            return Result("pass", "no Fixes: tag (net-next)")
        # A test of the fixes next to them fixes nothing itself.
        if all(path.startswith("tools/testing/selftests/")
               for _, path in touched_files(tree, commit)):
            return Result("pass", "no Fixes: tag: the patch only adds or changes selftests")
        return Result("fail", "a net fix needs a Fixes: tag")
    for ln in lines:
        m = FIXES_RE.match(ln)
        if not m:
            return Result("fail", f"malformed tag, want 'Fixes: <12+ hex> (\"subject\")': {ln}")
        sha, subject = m["id"], m["subject"]
        hit = next((s for k, s in known.items() if k.startswith(sha) or sha.startswith(k)), None)
        if hit is None:
            code, out = run(["git", "log", "-1", "--format=%s", sha], cwd=tree)
            hit = out.strip() if code == 0 else None
        if hit is None:
            return Result("fail", f"unknown commit {sha}: not in the tree's history "
                          "nor in kernel/known-commits.txt")
        if hit != subject:
            return Result("fail", f"subject mismatch for {sha}: tag says \"{subject}\", "
                          f"commit is \"{hit}\"")
    return Result("pass", f"{len(lines)} Fixes: tag(s) verified")


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
        return Result("skip", "no C files touched")
    before, after = Counter(), Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for p in files:
            code, old = run(["git", "show", f"{commit}^:{p}"], cwd=tree)
            if code == 0:
                dst = Path(tmp) / p
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(old)
                _, out = run(["scripts/kernel-doc", "-Wall", "-none", str(dst)], cwd=tree)
                before += warnings_of(out.replace(str(dst), p))
            _, out = run(["scripts/kernel-doc", "-Wall", "-none", p], cwd=tree)
            after += warnings_of(out)
    new = new_warnings(before, after)
    if new:
        return Result("fail", new[0], "\n".join(new))
    return Result("pass", f"{len(files)} file(s), no new kernel-doc warnings")


def maintainers(tree, commit):
    code, patch = run(["git", "format-patch", "-1", "--stdout", commit], cwd=tree)
    with tempfile.NamedTemporaryFile("w", suffix=".patch") as f:
        f.write(patch)
        f.flush()
        code, out = run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                         "--no-tree", f.name], cwd=tree)
    to, cc = [], []
    for line in out.splitlines():
        m = re.match(r"^(.*?<[^>]+>|\S+@\S+) ?\((.*)\)$", line.strip())
        if not m:
            continue
        (to if "maintainer" in m[2] else cc).append(m[1].strip())
    if code or not (to or cc):
        return Result("fail", "get_maintainer.pl found nobody: " + out.strip()[:200], out), [], []
    return Result("pass", f"To: {len(to)}, Cc: {len(cc)}", out), to, cc


class BuildChecker:
    """Incremental W=1 + sparse builds before and after each patch.

    Before a patch, its touched files are made newer and rebuilt at the
    parent, so the same objects are compiled (and sparse-checked) on both
    sides; new warnings are the difference of the two multisets.
    """

    def __init__(self, tree, build, log=print):
        self.tree, self.build, self.log = tree, build, log

    def make(self, label):
        self.log(f"    make W=1 C=1 ({label})")
        return self.build(["W=1", "C=1"])

    def __call__(self, commit):
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
        wb, wa = warnings_of(before), warnings_of(after)
        split = {"build": ([], []), "sparse": ([], [])}
        for w in new_warnings(wb, wa):
            split["sparse" if is_sparse(w) else "build"][0].append(w)
        results = []
        for name in ("build", "sparse"):
            new = split[name][0]
            if new:
                results.append(Result("fail", f"{len(new)} new warning(s): {new[0]}",
                                      "\n".join(new)))
            else:
                results.append(Result("pass", "no new warnings"))
        return tuple(results)


SPARSE_HINTS = ("sparse:", "incorrect type", "different address spaces", "context imbalance",
                "was not declared. Should it be static?", "cast to restricted",
                "restricted __", "dubious:", "symbol '", "lock context")


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
        finally:
            git(self.tree, "checkout", "-q", "--detach", commit)
        new = sorted((after - before).elements())
        if new:
            return Result("fail", f"{len(new)} new report(s): {new[0]}", "\n".join(new))
        return Result("pass", f"{len(cfiles)} file(s), no new reports")


def series_checks(all_series):
    """all_series: [(name, tree, [subjects], has_cover)]. Returns {check: Result}."""
    out = {}
    for name, tree, subjects, has_cover in all_series:
        n = len(subjects)
        out[f"{name}:size"] = (Result("pass", f"{n} patches") if 0 < n <= MAX_PATCHES
                               else Result("fail", f"{n} patches: want 1-{MAX_PATCHES}"))
        if n > 2 and not has_cover:
            out[f"{name}:cover"] = Result("fail", f"{n} patches without a cover letter")
        else:
            out[f"{name}:cover"] = Result("pass", "cover letter present" if has_cover
                                          else "no cover letter needed")
        bad = [s for s in subjects if not re.match(rf"^\[PATCH {re.escape(tree)}[ \]]", s)]
        out[f"{name}:prefix"] = (Result("fail", f"subject lacks [PATCH {tree}]: {bad[0]}")
                                 if bad else Result("pass", f"all [PATCH {tree}]"))
    return out


def table(reports, columns=CHECKS):
    """Plain-text patch x check table."""
    head = ["#", "series", "patch"] + list(columns)
    rows = []
    for r in reports:
        cells = [str(r.index), r.tree, r.subject[:48]]
        for c in columns:
            st = r.results.get(c, Result("skip")).status
            cells.append({"pass": "pass", "fail": "FAIL", "skip": "-"}[st])
        rows.append(cells)
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    for r in reports:
        for c in columns:
            res = r.results.get(c)
            if res and res.status == "fail":
                lines.append(f"  patch {r.index} {c}: {res.message}")
    return "\n".join(lines)
