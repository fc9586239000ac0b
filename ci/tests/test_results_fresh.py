"""Documentation/results/ holds no result older than the code it describes.

A results directory is stamped when it holds a bench.json with
environment.source, or a source.json, as common/stamp.py source_stamp()
writes them: the project commit, whether the tree had local
changes, the sha256 of patches/ and the stages that made the record. A
stamped directory is fresh when

- its stamp is clean and its commit is in the history;
- its patches sha256 is the digest of patches/ at that commit (else the run
  was not of that commit's patches);
- none of its inputs changed from that commit to the work tree: the inputs
  of every stage it names (common/record_inputs.py STAGES, each with the
  modules that run it and every module they import; for a stage of the
  kernels alone a patch that touches only tools/testing/selftests/, before
  and after, is no input);
- every record it embeds is fresh by its own stamp (bench.json's icount
  rows, from tools/bench/icount.py's icount.json).

Every other results file, and one whose stamp is not fresh, must be listed
under "## Stale" in Documentation/results/README.md; a listed path must
exist. The cover letters quote results: they are an input only of the
stages that send them (the b4 record's mbox files hold them).
"""

import ast
import hashlib
import json
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path, PurePosixPath

from common.paths import ROOT
from common.record_inputs import STAGES

RESULTS = "Documentation/results"
# The stages of a stamp that names none (written before stamps named their
# stages): those of the command Documentation/results/README.md gives for
# its directory.
DEFAULT_STAGES = {
    "bench": ["tools.bench.bench"],
    # The counter designs of the dummy series: the UML benchmark's design cases
    # alone (tools/bench/bench.py --scenarios), with the instruction counts of
    # icount/ embedded (judged by their own stamp).
    "bench-design": ["tools.bench.bench"],
    # The sink scenarios and the design cases in one run of the same command.
    "bench-sinks": ["tools.bench.bench"],
    "icount": ["tools.bench.icount"],
    # The dummy series' counter designs as modules of each design's dummy.c
    # on the base kernel (tools/bench/icount.py --dummy-module).
    "icount-designs": ["tools.bench.icount"],
    # ./ci/main.sh --only setup base apply userspace checks vm-debug
    "vm-debug": ["setup", "base", "apply", "userspace", "checks", "vm_debug"],
    "vm-kcsan": ["setup", "base", "apply", "userspace", "checks", "vm_debug"],
    # ./ci/main.sh --only setup base apply userspace build-base checks vm
    "main-vm": ["setup", "base", "apply", "userspace", "build_base", "checks", "vm"],
    "stable": ["ci.stable_vm"],
    # The test command's submission stage.
    "b4": ["setup", "base", "apply", "submission"],
    # The test command: every stage, host-tests of everything.
    "test-run": ["setup", "base", "apply", "userspace", "host_tests", "build_base", "checks",
                 "submission", "kunit", "vm", "icount"],
}
# Records embedded in a record's file: (file, keys to the embedded record's
# stamp, what it is, the stages of a stamp that names none).
EMBEDDED = [("bench.json", ("icount", "environment", "source"), "icount rows",
             ["tools.bench.icount"])]
SELFTESTS = "tools/testing/selftests/"


def git(root, *args, check=True):
    res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if check and res.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {res.stderr.strip()}")
    return res


def patches_digest_at(root, commit):
    """source_stamp()'s patches_sha256 of patches/ as committed at commit."""
    names = git(root, "ls-tree", "-r", "--name-only", commit, "--", "patches").stdout.split()
    digest = hashlib.sha256()
    # source_stamp() sorts Paths: by their components, not as strings.
    for name in sorted((n for n in names if n.endswith(".patch")),
                       key=lambda n: PurePosixPath(n).parts):
        data = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{name}"],
                              capture_output=True, check=True).stdout
        digest.update(name.encode() + b"\0" + data)
    return digest.hexdigest()


def stamp_of(directory):
    """The source stamp of a results directory, or None."""
    for name, keys in (("bench.json", ("environment", "source")), ("source.json", ())):
        f = directory / name
        if f.is_file():
            data = json.loads(f.read_text())
            for key in keys:
                data = data.get(key) if isinstance(data, dict) else None
            if isinstance(data, dict) and "commit" in data:
                return data
    return None


def stale_listed(root):
    """The paths (relative to Documentation/results, a directory ending in
    "/") listed under "## Stale" in its README.md."""
    text = (root / RESULTS / "README.md").read_text()
    m = re.search(r"^## Stale\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        return []
    return [p for line in m[1].splitlines() if line.startswith("- ")
            for p in re.findall(r"`([^`]+)`", line.split(":", 1)[0])]


def selftests_only(old, new):
    """Whether a patch file touches only tools/testing/selftests/ in both
    versions, old and new (None where it is missing)."""
    paths = set(re.findall(r"^diff --git a/(\S+) b/", (old or "") + (new or ""), re.M))
    return bool(paths) and all(p.startswith(SELFTESTS) for p in paths)


def patch_code(text):
    """A patch file's diffs: from its first "diff --git" line, without the
    "index" lines (blob ids, which an earlier patch's change moves) and the
    format-patch signature; None without a diff."""
    m = re.search(r"^diff --git ", text, re.M)
    if not m:
        return None
    body = re.split(r"^-- \n", text[m.start():], flags=re.M)[0]
    return [ln for ln in body.splitlines() if not ln.startswith("index ")]


def message_only(old, new):
    """Whether a patch file changed in its message alone: both versions
    there (None where missing), their diffs the same."""
    if old is None or new is None:
        return False
    code = patch_code(old)
    return code is not None and code == patch_code(new)


def no_kernel_change(root, commit, name):
    """Whether the patch file `name`, from commit to the work tree, changed
    nothing a kernel is built from: it touches only the selftests, or only
    its message changed."""
    shown = git(root, "show", f"{commit}:{name}", check=False)
    old = None if shown.returncode else shown.stdout
    new = (root / name).read_text() if (root / name).is_file() else None
    return selftests_only(old, new) or message_only(old, new)


def changed_inputs(root, commit, stage):
    """The inputs of stage (common/record_inputs.py) that changed from
    commit to the work tree, untracked ones included."""
    inputs = STAGES[stage]
    spec = [*inputs.paths, *module_closure(root, inputs.modules)]
    changed = git(root, "diff", "--name-only", commit, "--", *spec).stdout.split()
    changed += git(root, "ls-files", "--others", "--exclude-standard", "--",
                   *spec).stdout.split()
    if inputs.kernel_only:
        changed = [n for n in changed
                   if not (n.startswith("patches/") and no_kernel_change(root, commit, n))]
    return changed


def stamp_problem(root, stamp, stages):
    """Why a stamped record made by stages is not fresh; "" if it is."""
    commit = stamp.get("commit", "")
    if stamp.get("dirty", True):
        return f"stamped from a tree with local changes at {commit[:12]}"
    if git(root, "cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode:
        return f"stamp commit {commit[:12] or '(none)'} is not in the history"
    if stamp.get("patches_sha256") != patches_digest_at(root, commit):
        return f"patches sha256 of the stamp is not that of patches/ at {commit[:12]}"
    if unknown := [s for s in stages if s not in STAGES]:
        return f"its stamp names stages of no known inputs: {', '.join(unknown)}"
    changed = sorted({n for s in stages for n in changed_inputs(root, commit, s)})
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3
                                          else "")
        return f"its inputs changed since {commit[:12]}: {shown}"
    return ""


def module_closure(root, files):
    """The project's Python files among `files` and every project module
    they import, at any depth (as the work tree has them)."""
    todo, seen = list(files), set()
    while todo:
        rel = todo.pop()
        if rel in seen or not (root / rel).is_file():
            continue
        seen.add(rel)
        for node in ast.walk(ast.parse((root / rel).read_text(), rel)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                path = name.replace(".", "/")
                todo += [f"{path}.py", f"{path}/__init__.py"]
    return sorted(seen)


def stages_of(stamp, default):
    """The stages a stamp names; default for a stamp older than the field."""
    return stamp["stages"] if isinstance(stamp.get("stages"), list) else default


def embedded_problem(root, directory):
    """Why a record embedded in directory's files is not fresh by its own
    stamp; "" if none is stale."""
    for name, keys, what, default in EMBEDDED:
        f = directory / name
        if not f.is_file():
            continue
        stamp = json.loads(f.read_text())
        for key in keys:
            stamp = stamp.get(key) if isinstance(stamp, dict) else None
        if stamp is None:
            continue
        why = ("no source stamp" if not isinstance(stamp, dict) or "commit" not in stamp
               else stamp_problem(root, stamp, stages_of(stamp, default)))
        if why:
            return f"its embedded {what}' stamp: {why}"
    return ""


PROJECT_LINE = re.compile(r"^Project: `(\w+)`.*patches/ sha256 `(\w+)`", re.M)


def project_line_problem(f, stamp):
    """Why a report's own "Project:" line (ci/report.py) is not of its stamp."""
    if f.suffix != ".md":
        return ""
    m = PROJECT_LINE.search(f.read_text(errors="replace"))
    if m and not (stamp.get("commit", "").startswith(m[1])
                  and str(stamp.get("patches_sha256", "")).startswith(m[2])):
        return (f"its Project: line ({m[1]}, patches {m[2]}) is not of its stamp "
                f"({stamp.get('commit', '')[:12]})")
    return ""


def nearest_stamp(base, rel):
    """The stamp of the nearest directory holding `rel` (a file's path under
    base) that has one, and that directory; (None, "") if none has."""
    parts = PurePosixPath(rel).parts[:-1]
    for n in range(len(parts), 0, -1):
        stamp = stamp_of(base.joinpath(*parts[:n]))
        if stamp is not None:
            return stamp, "/".join(parts[:n])
    return None, ""


def results_problems(root=ROOT):
    """Every results file that is neither fresh by its nearest stamp nor
    listed as stale, and every listed path that does not exist."""
    base = root / RESULTS
    listed = stale_listed(root)
    problems = [f"{p}: listed as stale but not there" for p in listed
                if not (base / p).exists()]

    def is_listed(rel):
        return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in listed)

    verdicts = {}
    for f in sorted(base.rglob("*")):
        rel = f.relative_to(base).as_posix()
        if not f.is_file() or rel == "README.md" or is_listed(rel):
            continue
        top = rel.split("/", 1)[0] if "/" in rel else ""
        stamp, where = nearest_stamp(base, rel)
        if stamp is not None and "stages" not in stamp and top not in DEFAULT_STAGES:
            problems.append(f"{rel}: its stamp names no stages and results directory "
                            f"{top!r} has no default (DEFAULT_STAGES)")
            continue
        if where not in verdicts:
            verdicts[where] = ("no source stamp" if stamp is None else
                               stamp_problem(root, stamp, stages_of(stamp, DEFAULT_STAGES.get(
                                   top, []))) or embedded_problem(root, base / where))
        why = verdicts[where] or (stamp and project_line_problem(f, stamp))
        if why:
            problems.append(f"{rel}: {why}, and README.md does not list it as stale")
    return problems


def under_ci(env):
    """Whether this runs under CI: GitHub and most CI systems set CI, and
    .ci/run, the CI entry point, does too."""
    return env.get("CI", "").lower() not in ("", "0", "false")


def shallow_verdict(root, env):
    """None for a full clone; for a shallow one, which lacks the stamps'
    commits, ("fail", why) under CI (which must fetch the history) and
    ("skip", why) elsewhere."""
    if git(root, "rev-parse", "--is-shallow-repository", check=False).stdout.strip() != "true":
        return None
    why = "a shallow clone lacks the stamps' commits (git fetch --unshallow)"
    return ("fail", why) if under_ci(env) else ("skip", why)


class ResultsFreshTest(unittest.TestCase):
    def test_results_are_fresh_or_listed_stale(self):
        verdict = shallow_verdict(ROOT, os.environ)
        if verdict:
            if verdict[0] == "fail":
                self.fail(verdict[1])
            self.skipTest(verdict[1])
        self.assertEqual(results_problems(), [])

    def test_ci_entry_point_says_it_is_ci_and_fetches_the_history(self):
        run = (ROOT / ".ci/run").read_text()
        self.assertIn('export CI="${CI:-true}"', run)
        self.assertIn("--unshallow", run)
        workflow = (ROOT / ".github/workflows/pipeline.yml").read_text()
        job = workflow.split("\n  host-tests:", 1)[1].split("\n  checks:", 1)[0]
        self.assertIn("fetch-depth: 0", job)

    def test_inputs_cover_the_kernel_and_the_code_that_made_each_record(self):
        kernel = ["kernel/base.env", "kernel/build.sh", "kernel/fetch-base.sh",
                  "kernel/configs/vng.config", "ci/kconfig_tree.py"]
        # The VM matrix (ci/matrix/): reading, judging, installing, running.
        matrix = [f"ci/matrix/{m}.py" for m in
                  ("__init__", "ktap_parse", "runner_parse", "read", "expectations",
                   "case", "judge", "kselftests", "run")] + ["common/vm.py"]
        made_by = {"bench": ["ci/pipeline_bench.py", "tools/bench/bench_stats.py",
                             "kernel/configs/uml-bench.config"],
                   "icount": ["tools/bench/icount.py", "ci/pipeline_tree.py", "common/vm.py"],
                   "vm-debug": ["ci/pipeline_boot.py", "ci/matrix/debug_checks.py", *matrix,
                                "selftests/fault-inject.sh", "kernel/configs/debug.config"],
                   "main-vm": ["ci/pipeline_boot.py", *matrix, "common/tools.py",
                               "selftests/tc-testing.sh", "selftests/expectations.json",
                               "ci/setup-host.sh", "ci/lib/iproute2.version"],
                   "stable": ["ci/stable_vm.py", *matrix,
                              "tools/series/stable.py", "kernel/stable/6.1.env"]}
        made_by["main-vm"] += ["CMakeLists.txt", "ci/pipeline_host.py", "ci/pipeline_checks.py",
                               "ci/pipeline.py", "ci/lib/common.sh"]
        # The tool alone, on UML kernels built by kernel/build.sh (results README).
        made_by["bench-design"] = made_by["bench-sinks"] = [
            "tools/bench/bench.py", "tools/bench/bench_stats.py",
            "kernel/configs/uml-bench.config", "tools/bench/variants/dummy-queue-lock.patch"]
        made_by["vm-kcsan"] = made_by["vm-debug"]
        made_by["b4"] = ["patches/net-next/dummy-mq/0000-cover-letter.patch",
                         "tools/series/b4flow.py", "ci/pipeline_submit.py"]
        for top, paths in made_by.items():
            with self.subTest(top=top):
                needed = paths if top == "b4" else kernel + paths  # b4 builds no kernel
                if top in ("bench-design", "bench-sinks"):
                    # kernel/build.sh run alone: no test fragments, no unmet list.
                    needed.remove("ci/kconfig_tree.py")
                # bench/ is remade by the pipeline's bench stage (its stamp
                # predates stage names); the rest by their directory's stages.
                inputs = covered(ROOT, ["bench"] if top == "bench" else DEFAULT_STAGES[top])
                self.assertEqual([p for p in needed if p not in inputs], [])
        bench = covered(ROOT, DEFAULT_STAGES["bench"])
        self.assertNotIn("kernel/stable/6.1.env", bench)
        self.assertNotIn("patches/net-next/dummy-mq/0000-cover-letter.patch", bench)

    def test_every_stage_has_its_inputs(self):
        from ci.pipeline import Pipeline
        stages = {n for plan in Pipeline.PLAN.values() for n in plan}
        stages |= {n for names in DEFAULT_STAGES.values() for n in names}
        stages |= {d for _, _, _, names in EMBEDDED for d in names}
        self.assertEqual(stages - set(STAGES), set())

    def test_every_directory_has_its_stages(self):
        # Listed as stale or not: a stamp that names no stages is judged by
        # its directory's.
        dirs = {p.relative_to(ROOT / RESULTS).parts[0] for p in (ROOT / RESULTS).rglob("*")
                if (stamp := stamp_of(p)) is not None and "stages" not in stamp}
        self.assertEqual(dirs - set(DEFAULT_STAGES), set())
        self.assertIn("main-vm", dirs)


def covered(root, stages):
    """The files of root that are inputs of any of stages."""
    return {f for s in stages
            for f in git(root, "ls-files", "--", *STAGES[s].paths,
                         *module_closure(root, STAGES[s].modules)).stdout.split()}


class CraftedResultsTest(unittest.TestCase):
    """A repository of its own: patches/, tools/bench, results stamped by
    the first commit."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        git(self.root, "init", "-q")
        git(self.root, "config", "user.email", "t@example.org")
        git(self.root, "config", "user.name", "t")
        self.write("patches/net/qdisc/0001-fix.patch", "fix\n")
        self.write("patches/net-next/dummy/0000-cover-letter.patch", "cover\n")
        self.write("tools/bench/bench.py", "print(1)\n")
        self.write("selftests/programs.txt", "a ktap a\n")
        self.write(f"{RESULTS}/README.md", "# Results\n\n## Stale\n\n- `test-run.md`: old\n")
        self.write(f"{RESULTS}/test-run.md", "old run\n")
        self.commit("one")
        self.stamp = {"commit": git(self.root, "rev-parse", "HEAD").stdout.strip(),
                      "dirty": False,
                      "patches_sha256": patches_digest_at(self.root, "HEAD")}
        self.write(f"{RESULTS}/bench/bench.json",
                   json.dumps({"environment": {"source": self.stamp}}))
        self.write(f"{RESULTS}/bench/bench.md", "results\n")
        self.commit("results")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        f = self.root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    def commit(self, msg):
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", msg)

    def test_fresh(self):
        self.assertEqual(results_problems(self.root), [])

    def test_digest_is_source_stamps(self):
        from common.stamp import source_stamp
        self.assertEqual(source_stamp(self.root)["patches_sha256"],
                         self.stamp["patches_sha256"])

    def test_stamp_is_dirty_by_any_change_but_the_documentation(self):
        from common.stamp import source_stamp
        self.write(f"{RESULTS}/vm-debug/source.json", "{}\n")
        self.assertFalse(source_stamp(self.root)["dirty"])
        self.write("ci/matrix/run.py", "changed = True\n")
        self.assertTrue(source_stamp(self.root)["dirty"])

    def test_cover_letter_is_no_input(self):
        self.write("patches/net-next/dummy/0000-cover-letter.patch", "cover, with results\n")
        self.commit("cover")
        self.assertEqual(results_problems(self.root), [])

    def test_bench_code_changed_since(self):
        self.write("tools/bench/bench.py", "print(2)\n")
        self.assertEqual(results_problems(self.root), [
            "bench/bench.json: its inputs changed since "
            f"{self.stamp['commit'][:12]}: tools/bench/bench.py, and README.md does not list "
            "it as stale",
            "bench/bench.md: its inputs changed since "
            f"{self.stamp['commit'][:12]}: tools/bench/bench.py, and README.md does not list "
            "it as stale"])
        self.commit("bench")
        self.assertEqual(len(results_problems(self.root)), 2)

    def bench_and_b4_of(self, rel, text):
        """Commit patch file rel holding text, then a benchmark record and a
        b4 record stamped with that commit; the stamp."""
        self.write(rel, text)
        self.commit("patch")
        stamp = {"commit": git(self.root, "rev-parse", "HEAD").stdout.strip(), "dirty": False,
                 "patches_sha256": patches_digest_at(self.root, "HEAD")}
        self.write(f"{RESULTS}/bench/bench.json", json.dumps({"environment": {"source": stamp}}))
        self.write(f"{RESULTS}/b4/source.json", json.dumps(stamp))
        self.commit("results")
        return stamp

    def test_selftest_patch_is_no_input_of_the_benchmark(self):
        selftest = ("diff --git a/tools/testing/selftests/net/t.py "
                    "b/tools/testing/selftests/net/t.py\n")
        stamp = self.bench_and_b4_of("patches/net/qdisc/0002-test.patch", selftest)
        self.write("patches/net/qdisc/0002-test.patch", selftest + "+more\n")
        self.assertEqual(results_problems(self.root), [
            f"b4/source.json: its inputs changed since {stamp['commit'][:12]}: "
            "patches/net/qdisc/0002-test.patch, and README.md does not list it as stale"])
        # A patch that also touches the kernel, in either version, is an input.
        self.write("patches/net/qdisc/0002-test.patch",
                   selftest + "diff --git a/net/sched/x.c b/net/sched/x.c\n")
        self.assertIn("bench/bench.json: its inputs changed since", results_problems(self.root)[1])

    def test_patch_message_is_no_input_of_the_benchmark(self):
        def patch(message, code):
            return (f"From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n{message}\n---\n"
                    f" x.c | 1 +\n\ndiff --git a/net/sched/x.c b/net/sched/x.c\n"
                    f"index 1..2 100644\n{code}-- \n2.39.5\n")
        stamp = self.bench_and_b4_of("patches/net/qdisc/0002-x.patch",
                                     patch("costs 7.0", "+a\n"))
        # The message quotes the record anew; the index line moved.
        self.write("patches/net/qdisc/0002-x.patch",
                   patch("costs 7.2", "+a\n").replace("index 1..2", "index 3..2"))
        self.assertEqual(results_problems(self.root), [
            f"b4/source.json: its inputs changed since {stamp['commit'][:12]}: "
            "patches/net/qdisc/0002-x.patch, and README.md does not list it as stale"])
        # Its code changed: the benchmark's kernels did too.
        self.write("patches/net/qdisc/0002-x.patch", patch("costs 7.2", "+b\n"))
        self.assertIn("bench/bench.json: its inputs changed since", results_problems(self.root)[1])

    def test_new_patch_since(self):
        self.write("patches/net/qdisc/0002-more.patch", "more\n")
        self.assertIn("patches/net/qdisc/0002-more.patch", results_problems(self.root)[0])

    def test_stamp_of_other_patches(self):
        stamp = dict(self.stamp, patches_sha256="0" * 64)
        self.write(f"{RESULTS}/bench/bench.json", json.dumps({"environment": {"source": stamp}}))
        self.assertIn("patches sha256 of the stamp is not that of patches/ at",
                      results_problems(self.root)[0])

    def test_dirty_or_unknown_stamp(self):
        for stamp, why in ((dict(self.stamp, dirty=True), "with local changes"),
                           (dict(self.stamp, commit="f" * 40), "is not in the history")):
            self.write(f"{RESULTS}/bench/bench.json",
                       json.dumps({"environment": {"source": stamp}}))
            self.assertIn(why, results_problems(self.root)[0])

    def test_other_code_does_not_matter(self):
        self.write("selftests/programs.txt", "b ktap b\n")
        self.commit("selftests")
        self.assertEqual(results_problems(self.root), [])

    def test_unstamped_must_be_listed(self):
        self.write(f"{RESULTS}/vm-kcsan/bench.md", "old\n")
        self.assertEqual(results_problems(self.root), [
            "vm-kcsan/bench.md: no source stamp, and README.md does not list it as stale"])
        self.write(f"{RESULTS}/README.md",
                   "# Results\n\n## Stale\n\n- `test-run.md`, `vm-kcsan/`: old\n\n## Other\n")
        self.assertEqual(results_problems(self.root), [])

    def test_test_run_is_of_everything_but_the_documentation(self):
        self.write(f"{RESULTS}/test-run/source.json", json.dumps(self.stamp))
        self.write(f"{RESULTS}/test-run/summary.md", "# Pipeline test: PASS\n")
        self.commit("test run")
        self.write("Documentation/guide.md", "more words\n")
        self.assertEqual(results_problems(self.root), [])
        self.write("selftests/programs.txt", "b ktap b\n")
        self.assertEqual(results_problems(self.root), [
            f"test-run/{name}: its inputs changed since {self.stamp['commit'][:12]}: "
            "selftests/programs.txt, and README.md does not list it as stale"
            for name in ("source.json", "summary.md")])

    def producers(self):
        """The kernel pins and build, a stage that imports its judge, and
        results of each kind stamped by the commit that has them."""
        for rel, text in (("kernel/base.env", "BASE_VERSION=7.3.4\n"),
                          ("kernel/build.sh", "make\n"),
                          ("kernel/stable/6.1.env", "BASE_VERSION=6.1.192\n"),
                          ("kernel/configs/vng.config", "CONFIG_NET=y\n"),
                          ("ci/__init__.py", ""),
                          ("ci/matrix/__init__.py", ""),
                          ("ci/pipeline_boot.py", "from ci import pipeline_tree\n"
                           "def stage_vm_debug():\n    from ci.matrix import debug_checks\n"),
                          ("ci/pipeline_tree.py", "from ci.kconfig_tree import fragments\n"),
                          ("ci/kconfig_tree.py", "def fragments():\n    pass\n"),
                          ("ci/matrix/debug_checks.py",
                           "def judge_fault_injection():\n    pass\n"),
                          ("ci/stable_vm.py", "from ci.matrix import run\n"),
                          ("ci/matrix/run.py", "")):
            self.write(rel, text)
        self.commit("producers")
        stamp = {"commit": git(self.root, "rev-parse", "HEAD").stdout.strip(), "dirty": False,
                 "patches_sha256": patches_digest_at(self.root, "HEAD")}
        self.write(f"{RESULTS}/bench/bench.json", json.dumps({"environment": {"source": stamp}}))
        for top in ("vm-debug", "stable"):
            self.write(f"{RESULTS}/{top}/source.json", json.dumps(stamp))
        self.commit("results")
        self.assertEqual(results_problems(self.root), [])
        return stamp

    def stale_tops(self):
        return sorted({p.split("/", 1)[0] for p in results_problems(self.root)})

    def stale_after(self, rel, text):
        """stale_tops() with rel alone changed to text from the last commit."""
        git(self.root, "checkout", "-q", "--", ".")
        self.write(rel, text)
        return self.stale_tops()

    def test_icount_is_of_the_code_that_applies_and_builds_its_kernels(self):
        """The pipeline's tree stages build the icount record's kernels, with
        the series as applied and the fragments of the tip."""
        self.producers()
        self.write("tools/series/series.py", "def apply():\n    pass\n")
        self.write("tools/bench/icount.py", "def run():\n    pass\n")
        self.commit("icount")
        self.write(f"{RESULTS}/icount/source.json",
                   json.dumps(self.stamp_now(stages=["tools.bench.icount"])))
        self.commit("icount results")
        self.write("ci/pipeline_tree.py", "from ci.kconfig_tree import fragments\n"
                   "from tools.series import series\n")
        self.commit("the tree stages apply the series")
        for rel, stale in (("ci/pipeline_tree.py", ["icount", "vm-debug"]),
                           ("tools/series/series.py", ["icount", "vm-debug"]),
                           ("ci/kconfig_tree.py", ["icount", "vm-debug"])):
            with self.subTest(rel=rel):
                self.assertEqual(self.stale_after(rel, "def apply_elsewhere():\n    pass\n"), stale)

    def test_kernel_pins_and_build_are_inputs(self):
        self.producers()
        for rel, stale in (("kernel/base.env", ["bench", "stable", "vm-debug"]),
                           ("kernel/build.sh", ["bench", "stable", "vm-debug"]),
                           ("kernel/configs/vng.config", ["bench", "stable", "vm-debug"]),
                           ("kernel/stable/6.1.env", ["stable"])):
            with self.subTest(rel=rel):
                self.assertEqual(self.stale_after(rel, "changed\n"), stale)

    def test_stage_and_judge_code_are_inputs(self):
        self.producers()
        for rel, stale in (("ci/matrix/debug_checks.py", ["vm-debug"]),
                           ("ci/kconfig_tree.py", ["vm-debug"]),
                           ("ci/matrix/run.py", ["stable"]),
                           ("ci/matrix/__init__.py", ["stable", "vm-debug"])):
            with self.subTest(rel=rel):
                self.assertEqual(self.stale_after(
                    rel, "def judge_fault_injection():\n    return True\n"), stale)

    def test_a_directory_is_judged_by_its_own_stamp(self):
        self.write(f"{RESULTS}/test-run/source.json", json.dumps(self.stamp))
        self.write(f"{RESULTS}/test-run/summary.md", "# Pipeline test: PASS\n")
        self.write(f"{RESULTS}/test-run/cold/source.json",
                   json.dumps(dict(self.stamp, commit="f" * 40)))
        self.write(f"{RESULTS}/test-run/cold/summary.md", "# Pipeline test: PASS\n")
        self.assertEqual(results_problems(self.root), [
            f"test-run/cold/{name}: stamp commit ffffffffffff is not in the history, and "
            "README.md does not list it as stale" for name in ("source.json", "summary.md")])

    def test_a_report_of_another_commit_under_a_stamp(self):
        commit = self.stamp["commit"]
        line = "Project: `{}`, patches/ sha256 `{}`.\n"
        self.write(f"{RESULTS}/test-run/source.json", json.dumps(self.stamp))
        self.write(f"{RESULTS}/test-run/summary.md",
                   line.format(commit[:12], self.stamp["patches_sha256"][:16]))
        self.assertEqual(results_problems(self.root), [])
        self.write(f"{RESULTS}/test-run/summary.md",
                   line.format("a027c7661c3f", self.stamp["patches_sha256"][:16]))
        self.assertEqual(results_problems(self.root), [
            "test-run/summary.md: its Project: line (a027c7661c3f, patches "
            f"{self.stamp['patches_sha256'][:16]}) is not of its stamp ({commit[:12]}), "
            "and README.md does not list it as stale"])

    def test_shallow_clone_fails_under_ci(self):
        self.write("more.txt", "more\n")
        self.commit("more")
        clone = self.root / "clone"
        subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{self.root}",
                        str(clone)], check=True)
        self.assertIsNone(shallow_verdict(self.root, {"CI": "true"}))
        self.assertEqual(shallow_verdict(clone, {})[0], "skip")
        self.assertEqual(shallow_verdict(clone, {"CI": "false"})[0], "skip")
        self.assertEqual(shallow_verdict(clone, {"CI": "true"})[0], "fail")

    def test_listed_but_gone(self):
        self.write(f"{RESULTS}/README.md", "## Stale\n\n- `test-run.md`, `vm-debug/`: old\n")
        self.assertEqual(results_problems(self.root),
                         ["vm-debug/: listed as stale but not there"])

    def stamp_now(self, **more):
        """A stamp of HEAD, with more fields (stages)."""
        return {"commit": git(self.root, "rev-parse", "HEAD").stdout.strip(), "dirty": False,
                "patches_sha256": patches_digest_at(self.root, "HEAD"), **more}

    def test_cover_letter_is_an_input_of_the_b4_record(self):
        # The b4 record's mbox files hold the cover letters: an edited one is
        # not what was sent. The other records build nothing from them.
        # A stamp that names no stages (older than the field) is of its
        # directory's command: the test command's submission stage.
        for stamp in (self.stamp_now(stages=["setup", "base", "apply", "submission"]),
                      self.stamp_now()):
            with self.subTest(stamp=stamp):
                git(self.root, "checkout", "-q", "--", ".")
                self.write(f"{RESULTS}/b4/source.json", json.dumps(stamp))
                self.write(f"{RESULTS}/b4/net/v1.mbox", "Subject: [PATCH 0/1] cover\n")
                self.commit("b4 record")
                self.assertEqual(results_problems(self.root), [])
                self.write("patches/net-next/dummy/0000-cover-letter.patch", "cover, edited\n")
                self.assertEqual(self.stale_tops(), ["b4"])
                self.assertIn("patches/net-next/dummy/0000-cover-letter.patch",
                              results_problems(self.root)[0])

    def test_inputs_are_every_stage_the_record_ran(self):
        # main-vm: ./ci/main.sh --only setup base apply userspace build-base checks vm
        for rel in ("CMakeLists.txt", "ci/pipeline_host.py", "ci/pipeline_checks.py",
                    "ci/pipeline_boot.py", "ci/pipeline.py"):
            self.write(rel, "# one\n")
        self.commit("stages")
        ran = ["setup", "base", "apply", "userspace", "build_base", "checks", "vm"]
        self.write(f"{RESULTS}/main-vm/source.json", json.dumps(self.stamp_now(stages=ran)))
        # A stamp that names no stages: those of its directory's command.
        self.write(f"{RESULTS}/vm-kcsan/source.json", json.dumps(self.stamp_now()))
        self.write(f"{RESULTS}/b4/source.json",
                   json.dumps(self.stamp_now(stages=["setup", "base", "apply", "submission"])))
        self.commit("results")
        self.assertEqual(results_problems(self.root), [])
        for rel, stale in (("CMakeLists.txt", ["main-vm", "vm-kcsan"]),
                           ("ci/pipeline_host.py", ["b4", "main-vm", "vm-kcsan"]),
                           ("ci/pipeline_checks.py", ["main-vm", "vm-kcsan"]),
                           ("selftests/programs.txt", ["main-vm", "vm-kcsan"])):
            with self.subTest(rel=rel):
                self.assertEqual(self.stale_after(rel, "# two\n"), stale)

    def test_embedded_icount_rows_are_judged_by_their_own_stamp(self):
        # bench.py --icount shows icount.json's rows with its environment
        # (and stamp): rows of older code make the record stale.
        self.write("tools/bench/icount.py", "rows = 1\n")
        self.commit("icount")
        icount = {"environment": {"source": self.stamp_now(stages=["tools.bench.icount"])},
                  "rows": []}
        bench = {"environment": {"source": self.stamp_now(stages=["tools.bench.bench"])},
                 "icount": icount}
        self.write(f"{RESULTS}/bench-design/bench.json", json.dumps(bench))
        self.commit("bench")
        self.assertEqual(results_problems(self.root), [])
        self.write("tools/bench/icount.py", "rows = 2\n")
        self.assertEqual(results_problems(self.root), [
            "bench-design/bench.json: its embedded icount rows' stamp: its inputs changed since "
            f"{icount['environment']['source']['commit'][:12]}: tools/bench/icount.py, and "
            "README.md does not list it as stale"])
        git(self.root, "checkout", "-q", "--", ".")
        icount["environment"]["source"]["commit"] = "f" * 40
        self.write(f"{RESULTS}/bench-design/bench.json", json.dumps(bench))
        self.assertIn("its embedded icount rows' stamp: stamp commit ffffffffffff is not in "
                      "the history", results_problems(self.root)[0])

    def test_a_stamp_judged_by_no_known_stages(self):
        self.write(f"{RESULTS}/mail/source.json", json.dumps(self.stamp))
        self.write(f"{RESULTS}/other/source.json", json.dumps(dict(self.stamp, stages=["x"])))
        self.assertEqual(results_problems(self.root), [
            "mail/source.json: its stamp names no stages and results directory 'mail' has no "
            "default (DEFAULT_STAGES)",
            "other/source.json: its stamp names stages of no known inputs: x, and README.md "
            "does not list it as stale"])
        # A new record names its stages: no default needed.
        self.write(f"{RESULTS}/mail/source.json",
                   json.dumps(dict(self.stamp, stages=["setup", "base", "mailing_list"])))
        self.assertEqual(len(results_problems(self.root)), 1)

    def test_stale_stamp_listed_is_accepted(self):
        self.write("tools/bench/bench.py", "print(2)\n")
        self.write(f"{RESULTS}/README.md", "## Stale\n\n- `test-run.md`, `bench/`: old\n")
        self.assertEqual(results_problems(self.root), [])


if __name__ == "__main__":
    unittest.main()
