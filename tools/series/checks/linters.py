"""The linters NIPA runs per patch (pylint, ruff, shellcheck, yamllint), on
the files of their kind the patch touches, at its parent and at the patch:
what they find new counts."""

import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from common.cache import cache_dir
from common.git import git, git_run
from tools.series.checks.findings import Tree, run, touched_files
from tools.series.checks.patchwork import Result

# Findings of a side (parent or patch), by kind: "error", "warning", "other".
Kinds = Counter[str]
# Each file's findings: at the parent (when it was there), then at the patch.
PerFile = dict[str, list[list[str]]]

# shellcheck codes netdev CI leaves out (test case definitions confuse them).
SHELLCHECK_EXCLUDE = ("SC2317", "SC2329")


class Linter:
    """A linter run on the files of one kind the patch touches, at the parent
    (files it modifies) and at the patch (files it adds or modifies).
    Subclasses say how to run it and how to sort its lines into errors,
    warnings and the rest."""
    name = "?"
    suffix = ".?"
    kind = "files"

    def lint(self, tree: Tree, path: str) -> list[str]:
        """Output lines for path (relative to the tree)."""
        raise NotImplementedError

    def classify(self, line: str) -> str | None:
        """'error', 'warning', 'other' or None (not a finding)."""
        raise NotImplementedError

    def lint_files(self, tree: Tree, paths: list[str]) -> dict[str, list[str]]:
        """{path: output lines}; one run per file unless a linter does better."""
        return {path: self.lint(tree, path) for path in paths}

    def verdict(self, before: Kinds, after: Kinds, per_file: PerFile) -> tuple[str, str]:
        errs = (before["error"], after["error"])
        warns = (before["warning"], after["warning"])
        line = f"Errors before: {errs[0]} (+warn: {warns[0]}) this patch: {errs[1]} " \
               f"(+warn: {warns[1]})"
        if errs[1] > errs[0]:
            return "fail", line
        if warns[1] > warns[0]:
            return "warn", line
        return "pass", line

    def __call__(self, tree: Tree, commit: str) -> Result:
        files = [(s, p) for s, p in touched_files(tree, commit)
                 if s in "AM" and p.endswith(self.suffix)]
        if not files:
            return Result("pass", f"No {self.kind} touched, skip")
        if not self.available():
            why = self.unavailable()
            return Result("skip", why, missing=why)
        before: Kinds = Counter()
        after: Kinds = Counter()
        per_file: PerFile = {}
        details: list[str] = []
        try:
            for rev, side, wanted in ((f"{commit}^", before, "M"), (commit, after, "AM")):
                git(tree, "checkout", "-q", "--detach", rev)
                paths = [path for status, path in files if status in wanted]
                for path, lines in self.lint_files(tree, paths).items():
                    found = [ln for ln in lines if self.classify(ln) is not None]
                    per_file.setdefault(path, []).append(found)
                    side.update(kind for ln in found
                                if (kind := self.classify(ln)) is not None)
                    if side is after:
                        details += found
        finally:
            git(tree, "checkout", "-q", "--detach", commit)
        status, line = self.verdict(before, after, per_file)
        return Result(status, line, "\n".join(details))

    def available(self) -> bool:
        return True

    def unavailable(self) -> str:
        """Why the linter cannot run, in words a user can act on."""
        return f"{self.name} is not installed (apt-get install {self.name})"


class Pylint(Linter):
    name, suffix, kind = "pylint", ".py", "python scripts"

    def available(self) -> bool:
        return shutil.which("pylint") is not None

    def lint(self, tree: Tree, path: str) -> list[str]:
        _, out = run(["pylint", "--score=n", path], cwd=tree)
        return out.splitlines()

    def classify(self, line: str) -> str | None:
        m = re.search(r": ([EFWCR])\d{4}: ", line)
        if not m:
            return None
        return {"E": "error", "F": "error", "W": "warning", "C": "warning"}.get(m[1], "other")


RUFF_JS = Path(__file__).parent.with_name("ruff-check.js")


def ruff_command() -> list[str] | None:
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

    def available(self) -> bool:
        return ruff_command() is not None

    def unavailable(self) -> str:
        module = Path(os.environ.get("RUFF_WASM_DIR", cache_dir() / "npm-tools"))
        return (f"ruff is not installed: no ruff on PATH, nor node with "
                f"@astral-sh/ruff-wasm-nodejs in {module} (ci/setup-host.sh installs it "
                f"there with npm)")

    def __init__(self) -> None:
        self.cache: dict[str, list[str]] = {}  # blob id -> output lines (path replaced by "PATH")

    def lint(self, tree: Tree, path: str) -> list[str]:
        return self.lint_files(tree, [path])[path]

    def lint_blobs(self, tree: Tree, blobs: Iterable[str]) -> None:
        """Lint the blobs not yet cached, in one run: node loads ruff's
        WebAssembly (seconds of CPU) once."""
        todo = sorted(set(blobs) - set(self.cache))
        if not todo:
            return
        with tempfile.TemporaryDirectory() as tmp:
            names = []
            for blob in todo:
                text = git_run(tree, "cat-file", "blob", blob).stdout
                (Path(tmp) / f"{blob}.py").write_text(text)
                names.append(f"{blob}.py")
                self.cache[blob] = []
            cmd = ruff_command()
            assert cmd is not None, "lint_blobs without ruff: available() says it is missing"
            _, out = run([*cmd, *names], cwd=tmp)
        for line in out.splitlines():
            name, _, rest = line.partition(":")
            if name.removesuffix(".py") in self.cache:
                self.cache[name.removesuffix(".py")].append("PATH:" + rest)

    def prefetch(self, tree: Tree, commits: Iterable[str]) -> None:
        """Every .py blob the commits' checks will read, linted at once."""
        blobs = []
        for commit in commits:
            for status, path in touched_files(tree, commit):
                if not path.endswith(".py") or status not in "AM":
                    continue
                for rev in ([commit] if status == "A" else [f"{commit}^", commit]):
                    parsed = git_run(tree, "rev-parse", f"{rev}:{path}")
                    if parsed.returncode == 0:
                        blobs.append(parsed.stdout.strip())
        self.lint_blobs(tree, blobs)

    def lint_files(self, tree: Tree, paths: list[str]) -> dict[str, list[str]]:
        blobs = {path: git(tree, "rev-parse", f"HEAD:{path}") for path in paths}
        self.lint_blobs(tree, blobs.values())
        return {path: [ln.replace("PATH:", f"{path}:", 1) for ln in self.cache[blob]]
                for path, blob in blobs.items()}

    def classify(self, line: str) -> str | None:
        return "error" if re.match(r"^\S+:\d+: \[[^\]]+\] ", line) else None

    def verdict(self, before: Kinds, after: Kinds, per_file: PerFile) -> tuple[str, str]:
        line = f"Errors before: {before['error']} ; this patch: {after['error']}"
        return ("fail" if after["error"] > before["error"] else "pass"), line


class Shellcheck(Linter):
    """Errors and warnings counted; a script that was clean, or is new,
    must stay clean: all its findings count as errors."""
    name, suffix, kind = "shellcheck", ".sh", "shell scripts"

    def available(self) -> bool:
        return shutil.which("shellcheck") is not None

    def lint(self, tree: Tree, path: str) -> list[str]:
        d = Path(tree) / os.path.dirname(path)
        args = ["shellcheck", "-x", "-f", "gcc"]
        for code in SHELLCHECK_EXCLUDE:
            args += ["-e", code]
        _, out = run([*args, os.path.basename(path)], cwd=d)
        return out.splitlines()

    def classify(self, line: str) -> str | None:
        m = re.match(r"^\S+:\d+:\d+: (error|warning|note|style): ", line)
        return None if not m else m[1] if m[1] in ("error", "warning") else "other"

    def verdict(self, before: Kinds, after: Kinds, per_file: PerFile) -> tuple[str, str]:
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

    def available(self) -> bool:
        return shutil.which("yamllint") is not None

    def lint(self, tree: Tree, path: str) -> list[str]:
        _, out = run(["yamllint", "-f", "parsable", path], cwd=tree)
        return out.splitlines()

    def classify(self, line: str) -> str | None:
        m = re.search(r":\d+:\d+: \[(error|warning)\] ", line)
        return m[1] if m else None


pylint = Pylint()
ruff = Ruff()
shellcheck = Shellcheck()
yamllint = Yamllint()
