"""The host job: packages (setup), the C++ build (userspace), and the host
tests: ctest from its JUnit output, the Python tests (each package's
tests/: ci/, common/, kunit/, tools/series/, tools/bench/), and the lint (shellcheck,
clang-format, flake8, clang-tidy)."""

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import unittest
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common.git import git_run
from common.paths import ROOT
from common.programs import CXX_BUILD
from ci.pipeline_common import CACHE, StageFailed, sh
from ci.pipeline_state import StageSet
from ci import report

BUILD = CXX_BUILD
# The Python tests' shards per CPU (python_tests()).
SHARDS_PER_CPU = 4


def ctest_cases(path):
    """The cases of ctest's JUnit file (ctest --output-junit), or None when
    there is no readable file. ctest's status attribute: run, fail, notrun
    (skipped), disabled."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    cases = []
    for tc in root.iter("testcase"):
        out = (tc.findtext("system-out") or "").strip()
        failure, skipped = tc.find("failure"), tc.find("skipped")
        if failure is not None or tc.get("status") == "fail":
            status = "fail"
            message = (failure.get("message") if failure is not None else "") or out[-500:]
        elif skipped is not None or tc.get("status") in ("notrun", "disabled"):
            status = "skip"
            message = (skipped.get("message") if skipped is not None else "") or tc.get("status")
        else:
            status, message = "pass", ""
        cases.append(report.Case("host.ctest", tc.get("name", "?"), status, message,
                                 out[-2000:] if status == "fail" else ""))
    return cases


def discover_tests():
    return unittest.defaultTestLoader.discover(str(ROOT), "test_*.py", str(ROOT))


def test_shards(suite, n):
    """The tests of a unittest suite as n lists of names for `python -m
    unittest`, dealt in turn by class (a class's tests run in order, as
    written), a module with module fixtures whole; a module that failed to
    import by its name (loading it again fails the shard, naming it)."""
    units = {}

    def walk(tests):
        for t in tests:
            if isinstance(t, unittest.TestSuite):
                walk(t)
                continue
            cls = type(t)
            module = sys.modules.get(cls.__module__)
            if cls.__name__ in ("_FailedTest", "ModuleImportFailure"):
                units[t.id().removeprefix("unittest.loader._FailedTest.")] = None
            elif any(hasattr(module, f) for f in ("setUpModule", "tearDownModule")):
                units[cls.__module__] = None
            else:
                units[f"{cls.__module__}.{cls.__qualname__}"] = None
    walk(suite)
    names = list(units)
    return [names[i::n] for i in range(n) if names[i::n]]


def shard_names(n):
    """test_shards() of the project's tests, discovered in a child process:
    importing them here would run their modules' import-time work in the
    pipeline itself."""
    done = subprocess.run([sys.executable, "-c", "import json, sys; from ci import pipeline_host "
                           "as h; print(json.dumps(h.test_shards(h.discover_tests(), "
                           "int(sys.argv[1]))))", str(n)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode:
        raise StageFailed(f"discovering the Python tests failed: {done.stderr[-1000:]}")
    return json.loads(done.stdout)


def python_files(files):
    """The repository's Python files flake8 checks: all but the series' patches."""
    return [f for f in files if f.endswith(".py") and not f.startswith("patches/")]


TIDY_FINDING = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                          r"(?P<kind>warning|error): (?P<msg>.*?)(?: \[(?P<check>[\w.,-]+)\])?$")


def tidy_findings(text, root=ROOT):
    """clang-tidy's diagnostics in its output, once each (a header's finding
    comes once per file that includes it), paths relative to root."""
    found = set()
    for line in text.splitlines():
        m = TIDY_FINDING.match(line.strip())
        if m:
            path = m["file"]
            if path.startswith(f"{root}/"):
                path = path[len(str(root)) + 1:]
            found.add(f"{path}:{m['line']}:{m['col']}: {m['kind']}: {m['msg']}"
                      + (f" [{m['check']}]" if m["check"] else ""))
    return sorted(found, key=lambda f: (f.split(":")[0], int(f.split(":")[1]), f))


def run_clang_tidy(files, build, jobs, log_path=None):
    """clang-tidy (the repository's .clang-tidy, flags from build's
    compile_commands.json) on each file, jobs at a time. Returns (findings,
    seconds, files whose run failed: clang-tidy exits non-zero when a file
    does not compile)."""
    t0 = time.monotonic()

    def one(f):
        p = subprocess.run(["clang-tidy", "-p", str(build), "--quiet", str(f)], cwd=ROOT,
                           text=True, errors="replace", capture_output=True)
        return f, p.returncode, p.stdout + p.stderr

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, files))
    text = "".join(out for _, _, out in results)
    if log_path:
        with open(log_path, "a") as f:
            f.write(f"clang-tidy -p {build} on {len(files)} files\n{text}")
    failed = [f for f, code, _ in results if code]
    return tidy_findings(text), time.monotonic() - t0, failed


def tidy_key(files, build, version):
    """What a clang-tidy result depends on, hashed: its version, .clang-tidy,
    the compile commands and every C++ file (by path and content). Paths
    count relative to the checkout and the build directory, so that a fresh
    clone of the same sources has the same key."""
    h = hashlib.sha256(version.encode())
    places = ((str(Path(build).resolve()), "@BUILD@"), (str(ROOT.resolve()), "@ROOT@"))

    def relative(text):
        for where, name in places:
            text = text.replace(where, name)
        return text

    for path in [ROOT / ".clang-tidy", Path(build) / "compile_commands.json", *sorted(files)]:
        h.update(f"\0{relative(str(Path(path).resolve()))}\0".encode())
        try:
            h.update(relative(Path(path).read_bytes().decode(errors="surrogateescape"))
                     .encode(errors="surrogateescape"))
        except OSError:
            h.update(b"missing")
    return h.hexdigest()


class HostStages(StageSet):
    def stage_setup(self, stage):
        sh(["bash", str(ROOT / "ci/setup-host.sh")], self.logfile("setup"))
        stage.summary = "host packages present"

    def khdr(self):
        """The patched tree's uapi headers (make headers_install), as
        kselftests build against them: the netlink constants cannot drift."""
        tree = self.state.series_tree
        out = self.state.ws / "series/khdr"
        self.checkout(tree, self.state.tip)
        sh(["make", "-C", str(tree), f"O={out / 'build'}", "-s", "headers_install",
            f"INSTALL_HDR_PATH={out / 'usr'}"], self.logfile("userspace"))
        return out / "usr/include"

    def stage_userspace(self, stage):
        # base_dir: ccache hashes the compile commands with paths under the
        # checkout made relative, so a fresh clone hits the objects of another.
        env = {"CCACHE_DIR": str(CACHE / "ccache"), "CCACHE_BASEDIR": str(ROOT)}
        khdr = self.khdr()
        # compile_commands.json is what clang-tidy in host-tests reads.
        sh(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            f"-DKHDR_INCLUDES={khdr}"],
           self.logfile("userspace"), env=env)
        sh(["cmake", "--build", str(BUILD), f"-j{os.cpu_count()}"], self.logfile("userspace"),
           env=env)
        self.state.programs = BUILD
        stage.summary = f"C++ selftests and tools built in {BUILD} against {khdr}"

    def stage_host_tests(self, stage):
        junit = self.results / "ctest.xml"
        junit.unlink(missing_ok=True)
        code, out = sh(["ctest", "--test-dir", str(self.state.programs), "--output-on-failure",
                        "--output-junit", str(junit)], self.logfile("host-tests"), check=False)
        ctest = ctest_cases(junit)
        if ctest:
            stage.cases.extend(ctest)
            n = {k: sum(c.status == k for c in ctest) for k in ("pass", "fail", "skip")}
            ctest_text = (f"ctest: {n['pass']}/{n['pass'] + n['fail']} passed"
                          + (f" ({n['skip']} skipped)" if n["skip"] else ""))
        else:
            stage.cases.append(report.Case("host", "ctest", "fail",
                                           f"no test results in {junit}: {out[-500:]}"))
            ctest_text = "ctest: no results"
        pcode, ran = self.python_tests(stage)
        lint = self.lint(stage)
        stage.summary = (f"{ctest_text}; pipeline self-tests: "
                         f"{ran} run, {'ok' if pcode == 0 else 'FAILED'}; "
                         f"lint: {'ok' if not lint else 'FAILED ' + ', '.join(lint)}")
        if code or not ctest or pcode or not ran or lint:
            raise StageFailed(stage.summary)

    def python_tests(self, stage):
        """The Python tests in SHARDS_PER_CPU shards per CPU (test_shards()),
        as many side by side as there are CPUs: (0, or the first failing
        shard's exit code, -1 for a shard that ran no test; the tests run).
        From the top: the tests import ci, common, kunit and tools as packages,
        and sit beside their package (ci/tests/, common/tests/, kunit/tests/,
        tools/series/tests/, tools/bench/tests/). Discovery enters only
        packages (directories with __init__.py), so not patches/, results or
        the kernel trees."""
        cpus = os.cpu_count() or 1
        # More shards than CPUs, each CPU taking the next: a slow class does
        # not leave the other CPUs idle.
        shards = shard_names(SHARDS_PER_CPU * cpus)

        def run(i_names):
            i, names = i_names
            return sh([sys.executable, "-m", "unittest", "-v", *names],
                      self.logfile(f"host-tests-python{i + 1}"), cwd=ROOT, check=False)
        with ThreadPoolExecutor(cpus) as pool:
            done = list(pool.map(run, enumerate(shards)))
        ran, codes = 0, []
        for code, out in done:
            pm = re.search(r"^Ran (\d+) tests?", out, re.M)
            ran += int(pm[1]) if pm else 0
            codes += [code if code or pm else -1]
            for line in out.splitlines():
                # "name (id) ... ok"; before Python 3.11 the id was the class's.
                mm = re.match(r"^(test\w+) \(([\w.]+)\).*\.\.\. (ok|FAIL|ERROR|skipped.*)$",
                              line)
                if mm:
                    status = {"ok": "pass", "FAIL": "fail", "ERROR": "fail"}.get(mm[3], "skip")
                    name = mm[2] if mm[2].endswith(f".{mm[1]}") else f"{mm[2]}.{mm[1]}"
                    stage.cases.append(report.Case("host.pipeline", name, status, ""))
        return next((c for c in codes if c), 0), ran

    def lint(self, stage):
        """shellcheck on the shell glue, clang-format and clang-tidy on the C++
        sources, flake8 on the Python; the names of the failing ones."""
        failed = []
        listed = git_run(ROOT, "ls-files", "-co", "--exclude-standard", capture="stdout")
        listed.check_returncode()
        files = listed.stdout.split()
        shell = [str(ROOT / f) for f in files if f.endswith(".sh") or f == ".ci/run"]
        cxx = [str(ROOT / f) for f in files if f.endswith((".cpp", ".hpp"))]
        # flake8 reads its settings (.flake8) from the working directory.
        for name, cmd in (("shellcheck", ["shellcheck", "-x", *shell]),
                          ("clang-format", ["clang-format", "--dry-run", "--Werror", *cxx]),
                          ("flake8", ["flake8", *python_files(files)]),
                          ("workflow", ["bash", str(ROOT / "ci/lint-workflow.sh")])):
            code, out = sh(cmd, self.logfile("host-tests"), cwd=ROOT, check=False)
            stage.cases.append(report.Case("host.lint", name, "pass" if code == 0 else "fail",
                                           out[-1000:]))
            if code:
                failed.append(name)
        if not self.clang_tidy(stage, cxx):
            failed.append("clang-tidy")
        return failed

    def clang_tidy(self, stage, cxx):
        """clang-tidy on the .cpp files; headers are checked through the files
        that include them (.clang-tidy's HeaderFilterRegex). It takes minutes
        (about 9 s of CPU per file), so a run whose inputs are those of the
        last clean run is skipped."""
        sources = [f for f in cxx if f.endswith(".cpp")]
        _, version = sh(["clang-tidy", "--version"], check=False)
        build = self.state.programs
        key = tidy_key(cxx, build, version)
        stamp = CACHE / "clang-tidy-clean"
        if stamp.is_file() and stamp.read_text().strip() == key:
            stage.cases.append(report.Case("host.lint", "clang-tidy", "pass",
                                           "no C++ change since the last clean run"))
            return True
        findings, seconds, broken = run_clang_tidy(sources, build, os.cpu_count() or 1,
                                                   self.logfile("host-tests"))
        ok = not findings and not broken
        broken = [os.path.relpath(f, ROOT) for f in broken]
        message = (f"{len(findings)} finding(s) in {len(sources)} files, {seconds:.0f}s"
                   + (f"; failed on {', '.join(broken)}" if broken else ""))
        stage.cases.append(report.Case("host.lint", "clang-tidy", "pass" if ok else "fail",
                                       message, "\n".join(findings)[-4000:]))
        if ok:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(key + "\n")
        return ok
