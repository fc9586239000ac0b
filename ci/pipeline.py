#!/usr/bin/env python3
"""The pipeline: base tree, series, per-patch checks, builds, KUnit, VMs, report.

  pipeline.py test   the test suite: host unit tests, pipeline self-tests,
                     the series checked and run on base and patched kernels
  pipeline.py main   the main job: the same on the pinned base, plus the
                     benchmark, written up as a report

Every stage prints what it does and its time; a failed stage fails the run
(non-zero exit) and skips the stages that need it. Results land in one
folder (RESULTS_DIR, default results/): results.json, summary.md, junit.xml
and the logs.
"""

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools/series"), str(ROOT / "ci"), str(ROOT / "kunit"),
                str(ROOT / "tools/bench")]

import checks  # noqa: E402
import report  # noqa: E402
import series  # noqa: E402
import vm  # noqa: E402
import run as kunit_run  # noqa: E402

CACHE = Path(os.environ.get("PROJECT_CACHE",
                            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                            / "mqbypass"))
WS = CACHE / "ws"
FRAGMENTS = [ROOT / "kernel/configs/vng.config", ROOT / "kernel/configs/net-tests.config"]
BRANCH_PREFIX = "ci/"


class StageFailed(Exception):
    pass


class UsageError(Exception):
    """A request the pipeline cannot run as given (e.g. an unknown stage)."""


@dataclass
class Stage:
    name: str
    status: str = "skip"  # pass | fail | skip
    seconds: float = 0.0
    summary: str = ""
    cases: list = field(default_factory=list)  # report.Case
    details: str = ""  # preformatted text for the summary, e.g. the VM matrix


def log(msg=""):
    print(msg, flush=True)


def sh(cmd, log_path=None, cwd=None, env=None, check=True, progress=None):
    """Run a command, output to log_path; optional progress(line) callback."""
    env = {**os.environ, "PROJECT_CACHE": str(CACHE), **(env or {})}
    out = open(log_path, "a") if log_path else None
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, text=True, errors="replace",
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if out:
            out.write(line)
        if progress:
            progress(line.rstrip("\n"))
    code = proc.wait()
    if out:
        out.close()
    text = "".join(lines)
    if check and code:
        tail = "\n".join(text.strip().splitlines()[-15:])
        raise StageFailed(f"{' '.join(map(str, cmd))} exited {code}\n{tail}")
    return code, text


class BuildProgress:
    """Print a line every N compiled objects instead of make's full output."""

    def __init__(self, label, every=250):
        self.label, self.every, self.n, self.t0 = label, every, 0, time.monotonic()

    def __call__(self, line):
        if re.match(r"^\s+(CC|LD|AR|AS)\b", line):
            self.n += 1
            if self.n % self.every == 0:
                log(f"    {self.label}: {self.n} objects, {time.monotonic() - self.t0:.0f}s")
        elif re.search(r"\berror\b|^warning: config", line):
            log(f"    {line}")


class Pipeline:
    def __init__(self, mode, results):
        self.mode = mode
        self.results = Path(results)
        self.stages = []
        self.base = {}
        self.patch_reports = []
        self.series_results = {}
        self.kernel_src = os.environ.get("KERNEL_SRC")
        self.ws = WS

    # -- helpers --------------------------------------------------------
    def logfile(self, name):
        return self.results / "logs" / f"{name}.log"

    def build(self, src, out, label, args=(), check=True):
        cmd = ["bash", str(ROOT / "kernel/build.sh"), str(src), str(out), "x86_64",
               *map(str, FRAGMENTS), "--", *args]
        return sh(cmd, self.logfile(label), check=check, progress=BuildProgress(label))

    def worktree(self, name, rev):
        """A worktree of the base repository at WS/name/src, recovered and reset."""
        path = self.ws / name / "src"
        repo = self.base["BASE_REPO"]
        subprocess.run(["git", "-C", repo, "worktree", "prune"], check=False)
        if not (path / ".git").exists():
            if path.exists():
                shutil.rmtree(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            sh(["git", "-C", repo, "worktree", "add", "-q", "--detach", str(path), rev])
        series.recover(path)
        sh(["git", "-C", str(path), "checkout", "-q", "-f", "--detach", rev])
        sh(["git", "-C", str(path), "clean", "-qfdx"])
        return path

    # -- stages ---------------------------------------------------------
    def stage_setup(self, st):
        sh(["bash", str(ROOT / "ci/setup-host.sh")], self.logfile("setup"))
        st.summary = "host packages present"

    @property
    def tip(self):
        """Every series applied (series.merge_all): the patched kernel."""
        return self.tip_commit

    @staticmethod
    def checkout(tree, rev):
        sh(["git", "-C", str(tree), "checkout", "-q", "--detach", rev])

    def stage_userspace(self, st):
        build = ROOT / "build/cxx"
        env = {"CCACHE_DIR": str(CACHE / "ccache")}
        sh(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"], self.logfile("userspace"), env=env)
        sh(["cmake", "--build", str(build), f"-j{os.cpu_count()}"], self.logfile("userspace"),
           env=env)
        st.summary = f"C++ selftests and tools built in {build}"

    def stage_host_tests(self, st):
        build = ROOT / "build/cxx"
        code, out = sh(["ctest", "--test-dir", str(build), "--output-on-failure"],
                       self.logfile("host-tests"), check=False)
        m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", out)
        total, failed = (int(m[3]), int(m[2])) if m else (0, 1)
        st.cases.append(report.Case("host", "ctest", "pass" if code == 0 and m else "fail",
                                    m[0] if m else out[-500:]))
        pcode, pout = sh([sys.executable, "-m", "unittest", "discover", "-s", str(ROOT / "ci/tests"),
                          "-t", str(ROOT / "ci/tests"), "-v"],
                         self.logfile("host-tests"), check=False,
                         env={"PYTHONPATH": os.pathsep.join(
                             [str(ROOT / "tools/series"), str(ROOT / "ci"),
                              str(ROOT / "kunit"), str(ROOT / "tools/bench")])})
        pm = re.search(r"Ran (\d+) tests?", pout)
        for line in pout.splitlines():
            mm = re.match(r"^(test\w+) \(([\w.]+)\).*\.\.\. (ok|FAIL|ERROR|skipped.*)$", line)
            if mm:
                status = {"ok": "pass", "FAIL": "fail", "ERROR": "fail"}.get(mm[3], "skip")
                st.cases.append(report.Case("host.pipeline", f"{mm[2]}.{mm[1]}", status, ""))
        lint = self.lint(st)
        st.summary = (f"ctest: {total - failed}/{total} passed; pipeline self-tests: "
                      f"{pm[1] if pm else 0} run, {'ok' if pcode == 0 else 'FAILED'}; "
                      f"lint: {'ok' if not lint else 'FAILED ' + ', '.join(lint)}")
        if code or not m or pcode or not pm or lint:
            raise StageFailed(st.summary)

    def lint(self, st):
        """shellcheck on the shell glue, clang-format on the C++ sources."""
        failed = []
        files = subprocess.check_output(["git", "-C", str(ROOT), "ls-files", "-co",
                                         "--exclude-standard"], text=True).split()
        shell = [str(ROOT / f) for f in files if f.endswith(".sh") or f == ".ci/run"]
        cxx = [str(ROOT / f) for f in files if f.endswith((".cpp", ".hpp"))]
        for name, cmd in (("shellcheck", ["shellcheck", "-x", *shell]),
                          ("clang-format", ["clang-format", "--dry-run", "--Werror", *cxx])):
            code, out = sh(cmd, self.logfile("host-tests"), cwd=ROOT, check=False)
            st.cases.append(report.Case("host.lint", name, "pass" if code == 0 else "fail",
                                        out[-1000:]))
            if code:
                failed.append(name)
        return failed

    def stage_base(self, st):
        if self.kernel_src:
            src = Path(self.kernel_src).resolve()
            rev = os.environ.get("KERNEL_BASE", "HEAD")
            _, sha = sh(["git", "-C", str(src), "rev-parse", f"{rev}^{{commit}}"])
            self.base = {"BASE_PACKAGE": "git", "BASE_VERSION": sha.strip(), "BASE_PINNED": "no",
                         "BASE_REPO": str(src), "BASE_TAG": sha.strip(), "BASE_SOURCE": str(src)}
            # Worktrees of the user's repository live apart from the pinned base's.
            digest = hashlib.sha256(str(src).encode()).hexdigest()[:12]
            self.ws = CACHE / f"ws-{digest}"
            st.summary = f"user tree {src} at {sha.strip()[:12]}"
            return
        _, out = sh(["bash", str(ROOT / "kernel/fetch-base.sh")], self.logfile("base"))
        self.base = dict(re.findall(r"^(BASE_\w+)=(.*)$", out, re.M))
        if self.base.get("BASE_PINNED") != "yes":
            log(f"  WARNING: pinned base unavailable, using {self.base['BASE_PACKAGE']} "
                f"{self.base['BASE_VERSION']}")
        _, out = sh(["bash", str(ROOT / "kernel/import-base.sh"), self.base["BASE_PACKAGE"],
                     self.base["BASE_VERSION"], self.base["BASE_TARBALL"],
                     self.base["BASE_TARBALL_SHA256"]], self.logfile("base"))
        self.base.update(re.findall(r"^(BASE_\w+)=(.*)$", out, re.M))
        st.summary = (f"{self.base['BASE_PACKAGE']} {self.base['BASE_VERSION']} "
                      f"({'pinned' if self.base['BASE_PINNED'] == 'yes' else 'FALLBACK'}), "
                      f"sha256 {self.base['BASE_TARBALL_SHA256'][:16]}")

    def stage_apply(self, st):
        tree = self.worktree("series", self.base["BASE_TAG"])
        applied = series.apply(tree, self.base["BASE_TAG"], prefix=BRANCH_PREFIX,
                               log=lambda m: log(m))
        if not applied:
            raise StageFailed("the series is empty: nothing to check")
        self.applied = applied
        self.tip_commit = series.git(tree, "rev-parse", f"{BRANCH_PREFIX}all")
        for ser, patch, _ in applied:
            st.cases.append(report.Case("apply", f"{ser.name}/{patch.name}", "pass", "applied"))
        # Round trip: exporting what was applied reproduces patches/ exactly.
        out = self.results / "roundtrip"
        shutil.rmtree(out, ignore_errors=True)
        if self.base.get("BASE_PINNED") == "yes":
            series.export(tree, self.base["BASE_TAG"], out, prefix=BRANCH_PREFIX)
            code, diff = subprocess.getstatusoutput(
                " && ".join(f"diff -r {ROOT / 'patches' / t} {out / t}" for t in series.TREES))
            st.cases.append(report.Case("apply", "export-roundtrip",
                                        "pass" if code == 0 else "fail", diff[:2000]))
            if code:
                raise StageFailed(f"apply-then-export differs from patches/:\n{diff[:1500]}")
        names = sorted({ser.name for ser, _, _ in applied})
        st.summary = (f"{len(applied)} patches of {len(names)} series ({', '.join(names)}) applied "
                      "with git am --3way, export round trip exact")
        self.series_tree = tree

    def stage_build_base(self, st):
        src = self.worktree("base", self.base["BASE_TAG"])
        self.base_build = self.ws / "base/build-x86"
        self.build(src, self.base_build, "build-base", ["W=1"])
        st.summary = f"base kernel built in {self.base_build}"

    def stage_checks(self, st):
        tree = self.series_tree
        out = self.ws / "series/build-x86"
        self.series_build = out
        known = checks.load_known_commits(ROOT / "kernel/known-commits.txt")
        # Start from a build of the base, then walk the series.
        self.checkout(tree, self.base["BASE_TAG"])
        self.build(tree, out, "build-series", ["W=1"])

        def make(args):
            return self.build(tree, out, "build-series", ["W=1", *args], check=False)

        builder = checks.BuildChecker(tree, make, log=log)
        cocci = checks.Cocci(tree, make, CACHE / "cocci-cache.json", log=log)
        self.patch_reports = self.check_commits(tree, self.applied, builder, cocci, known)
        # Series-level checks.
        all_series = []
        for ser in series.load_series():
            subjects = [re.search(r"^Subject: (.*)$", p.read_text(), re.M)[1] for p in ser.patches]
            all_series.append((ser.name, ser.tree, subjects, ser.cover is not None))
        self.series_results = checks.series_checks(all_series)
        for name, res in self.series_results.items():
            st.cases.append(report.Case("series", name, res.status, res.message))
        for r in self.patch_reports:
            for c, res in r.results.items():
                st.cases.append(report.Case(f"checks.{r.tree}", f"{r.index:02d} {c} {r.subject}",
                                            res.status, res.message, res.details))
        log(checks.table(self.patch_reports))
        bad = [r for r in self.patch_reports if not r.ok]
        bad_series = [n for n, r in self.series_results.items() if r.status == "fail"]
        if self.mode == "test":
            self.negative_control(st, tree, builder, cocci, known)
        # Leave the tree and its build at the tip: that is the patched kernel.
        self.checkout(tree, self.tip)
        self.build(tree, out, "build-series", ["W=1"])
        st.summary = (f"{len(self.patch_reports)} patches x {len(checks.CHECKS)} checks: "
                      f"{len(bad)} patch(es) failing; series checks "
                      f"{'ok' if not bad_series else 'FAILED: ' + ', '.join(bad_series)}")
        if bad or bad_series:
            raise StageFailed(st.summary)

    def check_commits(self, tree, commits, builder, cocci, known):
        reports = []
        for i, (ser, patch, sha) in enumerate(commits, 1):
            tree_name = ser.tree
            subject = subprocess.check_output(["git", "-C", str(tree), "log", "-1", "--format=%s",
                                               sha], text=True).strip()
            log(f"  [{i}/{len(commits)}] {ser.name}: {subject}")
            r = checks.PatchReport(i, ser.name, sha, subject)
            r.results["checkpatch"] = checks.checkpatch(tree, sha)
            r.results["signoff"] = checks.signoff(tree, sha)
            r.results["fixes"] = checks.fixes(tree, sha, tree_name, known)
            r.results["kdoc"] = checks.kdoc(tree, sha)
            r.results["build"], r.results["sparse"] = builder(sha)
            r.results["cocci"] = (checks.Result("skip", "build failed")
                                  if r.results["build"].status == "fail" else cocci(sha))
            r.results["maintainers"], r.to, r.cc = checks.maintainers(tree, sha)
            for c in checks.CHECKS:
                res = r.results[c]
                if res.status == "fail":
                    log(f"      {c}: FAIL {res.message}")
            reports.append(r)
        return reports

    def negative_control(self, st, tree, builder, cocci, known):
        """A deliberately broken patch must fail the checks, named."""
        tip = self.tip
        self.checkout(tree, tip)
        target = tree / "drivers/net/dummy.c"
        target.write_text(target.read_text() + (
            "\nstatic int dummy_negative_control(void)\n{\n\tint unused_variable;\n\n"
            "\treturn 0;  /* a comment that makes this line far longer than eighty columns */\n}\n"))
        subject = "net: dummy: deliberately broken negative control"
        env = series.role_env(series.load_conf())
        subprocess.run(["git", "-C", str(tree), "commit", "-q", "-a", "-s", "-m", subject],
                       check=True, env={**env, "GIT_AUTHOR_NAME": env["GIT_COMMITTER_NAME"],
                                        "GIT_AUTHOR_EMAIL": env["GIT_COMMITTER_EMAIL"]})
        sha = subprocess.check_output(["git", "-C", str(tree), "rev-parse", "HEAD"],
                                      text=True).strip()
        log("  negative control: checks on a deliberately broken patch")
        ser = series.Series("net-next", "negative-control", Path("."), 1)
        r = self.check_commits(tree, [(ser, Path("negative-control.patch"), sha)],
                               builder, cocci, known)[0]
        failed = sorted(c for c, res in r.results.items() if res.status == "fail")
        want = {"checkpatch", "build"}
        ok = want <= set(failed)
        log(checks.table([r]))
        st.cases.append(report.Case("checks.self-test", "broken patch is caught and named",
                                    "pass" if ok else "fail",
                                    f"failing checks: {', '.join(failed) or 'none'}"))
        self.checkout(tree, tip)
        if not ok:
            raise StageFailed(f"negative control not caught: failing checks {failed}, want {want}")

    def stage_kunit(self, st):
        self.checkout(self.series_tree, self.tip)
        res = kunit_run.run(self.series_tree, self.ws / "series/build-kunit",
                            log_path=self.logfile("kunit"),
                            json_path=self.results / "kunit.json",
                            echo=BuildProgress("kunit"))
        for suite, case, status in res.cases:
            s = {"PASS": "pass", "SKIP": "skip"}.get(status, "fail")
            st.cases.append(report.Case(f"kunit.{suite}", case, s, status))
        st.summary = f"KUnit (UML): {res.summary()}"
        if not res.ok:
            raise StageFailed(st.summary + f" (kunit.py exit {res.exit_code}; see {res.log_path})")

    def stage_vm(self, st):
        import selftests_run  # noqa: PLC0415
        outcome = selftests_run.run_matrix(
            {"base": self.ws / "base/build-x86", "patched": self.ws / "series/build-x86"},
            self.results / "vm", tree=self.series_tree, log=log)
        st.cases.extend(outcome.cases)
        st.summary = outcome.summary
        st.details = outcome.matrix
        log(outcome.matrix)
        if not outcome.ok:
            raise StageFailed(outcome.summary)

    def stage_bench(self, st):
        import bench  # noqa: PLC0415
        uml = ROOT / "kernel/configs/uml-bench.config"
        kernels = {}
        tip = self.tip
        for label, name, rev in (("base", "base", self.base["BASE_TAG"]),
                                 ("patched", "series", tip)):
            src = self.ws / name / "src"
            self.checkout(src, rev)
            out = self.ws / name / "build-um-bench"
            sh(["bash", str(ROOT / "kernel/build.sh"), str(src), str(out), "um", str(uml)],
               self.logfile(f"build-um-{label}"), env={"KCONFIG_BASE": "defconfig"},
               progress=BuildProgress(f"UML {label}"))
            kernels[label] = out / "linux"
        args = argparse.Namespace(
            base_kernel=kernels["base"], patched_kernel=kernels["patched"],
            mqbench=ROOT / "build/cxx/tools/bench/mqbench", out=self.results / "bench",
            repetitions=int(os.environ.get("BENCH_REPETITIONS", "7")),
            seconds=float(os.environ.get("BENCH_SECONDS", "3")), cpus=2, timeout=900,
            scenarios=bench.SCENARIOS,
            base_desc=f"{self.base.get('BASE_PACKAGE')} {self.base.get('BASE_VERSION')}",
            devcost=True)
        log(f"  {args.repetitions} repetitions x {len(args.scenarios)} scenarios x 2 kernels")
        data, _, errors = bench.run(args, log=log)
        log((self.results / "bench/bench.md").read_text())
        for r in data["comparisons"]:
            st.cases.append(report.Case("bench", r["key"], "pass" if r["repetitions"] else "fail",
                                        f"{r.get('ratio_median', 0):.2f}x, target {r['target']}"))
        st.summary = (f"{args.repetitions} repetitions; report {self.results / 'bench/bench.md'}"
                      + (f"; {len(errors)} scenario error(s)" if errors else ""))
        if errors:
            raise StageFailed(st.summary + "\n" + "\n".join(errors[:10]))

    # -- driver ---------------------------------------------------------
    PLAN = {
        "test": ["setup", "userspace", "host_tests", "base", "apply", "build_base", "checks",
                 "kunit", "vm"],
        "main": ["setup", "userspace", "base", "apply", "build_base", "checks", "kunit", "vm",
                 "bench"],
    }
    NEEDS = {"host_tests": ["userspace"], "apply": ["base"], "build_base": ["base"],
             "checks": ["apply"], "kunit": ["apply"], "vm": ["build_base", "checks", "userspace"],
             "bench": ["checks", "userspace"]}

    @classmethod
    def select(cls, mode, only):
        """The stages of `mode` to run: all, or those named in `only`, which
        must exist and include every stage they need."""
        plan = cls.PLAN[mode]
        if not only:
            return plan
        names = [o.replace("-", "_") for o in only]
        unknown = [o for o, n in zip(only, names) if n not in plan]
        if unknown:
            raise UsageError(f"unknown stage(s) for {mode}: {', '.join(unknown)}; "
                             f"the stages are: {', '.join(n.replace('_', '-') for n in plan)}")
        lacking = sorted({d for n in names for d in cls.NEEDS.get(n, [])
                          if d in plan and d not in names})
        if lacking:
            raise UsageError(f"--only {' '.join(only)}: also name the stages they need: "
                             f"{', '.join(d.replace('_', '-') for d in lacking)}")
        return [n for n in plan if n in names]

    def run(self, only=None):
        plan = self.select(self.mode, only)
        status = {}
        for name in plan:
            st = Stage(name.replace("_", "-"))
            self.stages.append(st)
            missing = [n for n in self.NEEDS.get(name, [])
                       if n in self.PLAN[self.mode] and status.get(n) != "pass"]
            if missing:
                st.summary = f"skipped: needs {', '.join(missing)}"
                status[name] = "skip"
                log(f"==> {st.name}: {st.summary}")
                continue
            log(f"==> {st.name}")
            t0 = time.monotonic()
            try:
                getattr(self, f"stage_{name}")(st)
                st.status = "pass"
            except (StageFailed, series.SeriesError) as err:
                st.status, st.summary = "fail", str(err)
            except Exception:  # a bug in the pipeline itself is a failure too
                st.status, st.summary = "fail", traceback.format_exc()
            st.seconds = time.monotonic() - t0
            status[name] = st.status
            log(f"<== {st.name}: {st.status.upper()} in {st.seconds:.0f}s: "
                f"{st.summary.splitlines()[0] if st.summary else ''}")
            if st.status == "fail" and len(st.summary.splitlines()) > 1:
                log("    " + "\n    ".join(st.summary.splitlines()[1:20]))
        return self.finish()

    def finish(self):
        ok = all(s.status != "fail" for s in self.stages) and self.stages
        report.write(self.results, mode=self.mode, base=self.base, stages=self.stages,
                     patches=self.patch_reports, series_results=self.series_results)
        log("")
        log(report.stage_table(self.stages))
        cases = [c for s in self.stages for c in s.cases]
        n = {k: sum(1 for c in cases if c.status == k) for k in ("pass", "fail", "skip")}
        # A failed stage counts as a failure even when it recorded no case.
        n["fail"] += sum(1 for s in self.stages
                         if s.status == "fail" and not any(c.status == "fail" for c in s.cases))
        log(f"results: {self.results}/summary.md, results.json, junit.xml")
        log(f"pipeline: {n['pass']} passed, {n['fail']} failed, {n['skip']} skipped")
        if not ok:
            log(f"pipeline: FAILED ({', '.join(s.name for s in self.stages if s.status == 'fail')})")
        return 0 if ok else 1


def main(argv=None):
    # Debian's python3 first: kernel scripts (spdxcheck, ynl, tdc) need the
    # modules setup-host.sh installs from Debian, not another python3 in PATH.
    os.environ["PATH"] = "/usr/bin:/bin:" + os.environ.get("PATH", "")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["test", "main"])
    ap.add_argument("--only", nargs="*", help="run only these stages (debugging)")
    ap.add_argument("--results", default=os.environ.get("RESULTS_DIR", ROOT / "results"))
    args = ap.parse_args(argv)
    try:
        Pipeline.select(args.mode, args.only)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    # Lock first: a second run must not touch the results of the running one.
    CACHE.mkdir(parents=True, exist_ok=True)
    lock = open(CACHE / "pipeline.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"error: another pipeline run holds {CACHE / 'pipeline.lock'}", file=sys.stderr)
        return 1
    results = Path(args.results)
    shutil.rmtree(results, ignore_errors=True)
    (results / "logs").mkdir(parents=True)
    return Pipeline(args.mode, results).run(args.only)


if __name__ == "__main__":
    sys.exit(main())
