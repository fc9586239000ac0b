"""Pipeline results: results.json, summary.md and junit.xml in one folder."""

import json
import platform
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from pathlib import Path

# The series checks in patchwork's order: the registry's.
from tools.series.checks.runner import SERIES_CHECKS as SERIES_ORDER


@dataclass
class Case:
    suite: str
    name: str
    status: str  # pass | fail | warn | skip (warn: a check's warning, no failure)
    message: str = ""
    details: str = ""


STATUSES = ("pass", "fail", "warn", "skip")


def counts(cases, stages=()):
    """{status: number of cases} over STATUSES; a failed stage of stages
    without a failing case counts as one failure."""
    n = {k: sum(1 for c in cases if c.status == k) for k in STATUSES}
    n["fail"] += sum(1 for s in stages
                     if s.status == "fail" and not any(c.status == "fail" for c in s.cases))
    return n


def count_line(n):
    """"3 passed, 0 failed, 1 warned, 2 skipped" of counts()."""
    return f"{n['pass']} passed, {n['fail']} failed, {n['warn']} warned, {n['skip']} skipped"


def stage_table(stages):
    rows = [("stage", "status", "time", "summary")]
    for s in stages:
        first = s.summary.splitlines()[0] if s.summary else ""
        rows.append((s.name, s.status.upper(), f"{s.seconds / 60:.1f} min", first[:90]))
    total = sum(s.seconds for s in stages)
    rows.append(("total", "", f"{total / 60:.1f} min", ""))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:>{w[2]}}  {r[3]}" for r in rows)


def build_rows(stages):
    """The kernel builds of stages (Stage.builds), one row per stage and
    label in the order first run, then the total: {stage, label, builds,
    objects, seconds, s_per_object, hits, misses, from_ccache}. A sum over
    builds without ccache counters (None) stays None."""
    rows = {}

    def add(row, b):
        row["builds"] += 1
        row["seconds"] += b.seconds
        for k in ("objects", "hits", "misses"):
            v = getattr(b, k)
            row[k] = None if v is None or row[k] is None else row[k] + v
        row["from_ccache"] = row["from_ccache"] or b.from_ccache

    def new(stage, label):
        return {"stage": stage, "label": label, "builds": 0, "objects": 0, "seconds": 0.0,
                "hits": 0, "misses": 0, "from_ccache": False}

    total = new("total", "")
    for s in stages:
        for b in getattr(s, "builds", ()):
            add(rows.setdefault((s.name, b.label), new(s.name, b.label)), b)
            add(total, b)
    out = list(rows.values()) + ([total] if rows else [])
    for r in out:
        r["seconds"] = round(r["seconds"], 1)
        r["s_per_object"] = round(r["seconds"] / r["objects"], 2) if r["objects"] else None
    return out


def _cell(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def build_cells(r):
    """A build_rows() row as table cells (a * marks objects counted by ccache)."""
    return (r["stage"], r["label"], str(r["builds"]),
            _cell(r["objects"]) + ("*" if r["from_ccache"] else ""),
            f"{r['seconds'] / 60:.1f} min", _cell(r["s_per_object"], "{:.2f}"),
            _cell(r["hits"]), _cell(r["misses"]))


BUILD_HEADER = ("stage", "build", "runs", "objects", "time", "s/object", "ccache hits",
                "misses")
BUILD_NOTE = ("objects: make's CC lines; * ccache's calls (hits + misses), as kunit.py shows "
              "no make output. ccache: its counters' change over each build.")


def build_table(stages):
    """The kernel builds as a text table, for the end of the run's output."""
    rows = [BUILD_HEADER] + [build_cells(r) for r in build_rows(stages)]
    w = [max(len(r[i]) for r in rows) for i in range(len(BUILD_HEADER))]
    lines = ["  ".join(f"{c:<{w[i]}}" if i < 2 else f"{c:>{w[i]}}" for i, c in enumerate(r))
             .rstrip() for r in rows]
    return "\n".join(lines + [BUILD_NOTE])


def environment():
    def out(cmd):
        try:
            return subprocess.check_output(cmd, text=True, stderr=subprocess.DEVNULL).strip()
        except (OSError, subprocess.CalledProcessError):
            return ""
    return {"host": platform.node(), "cpus": out(["nproc"]), "kernel": platform.release(),
            "gcc": out(["gcc", "-dumpfullversion"]), "vng": out(["vng", "--version"]),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def source(folder):
    """The run's source stamp (folder/source.json), or {} if it has none."""
    try:
        return json.loads((Path(folder) / "source.json").read_text())
    except (OSError, ValueError):
        return {}


def write(folder, mode, base, stages, patches, series_results, left_out=()):
    """left_out: the stages of mode a partial run (--only) did not run."""
    folder = Path(folder)
    cases = [c for s in stages for c in s.cases]
    data = {
        "mode": mode,
        "ok": all(s.status != "fail" for s in stages),
        "partial": bool(left_out),
        "stages_not_run": list(left_out),
        "base": {k.lower(): v for k, v in base.items()},
        "environment": environment(),
        # The project's commit the run is of (ci/pipeline.py stamps it first).
        "source": source(folder),
        "stages": [{"name": s.name, "status": s.status, "seconds": round(s.seconds, 1),
                    "summary": s.summary} for s in stages],
        "kernel_builds": build_rows(stages),
        "patches": [p.as_dict() for p in patches],
        "series_checks": {k: asdict(v) for k, v in series_results.items()},
        "cases": [asdict(c) for c in cases],
    }
    (folder / "results.json").write_text(json.dumps(data, indent=2) + "\n")
    (folder / "summary.md").write_text(markdown(data, stages, patches))
    junit(folder / "junit.xml", stages)


def markdown(data, stages, patches):
    base = data["base"]
    left_out = data.get("stages_not_run") or []
    verdict = "FAIL" if not data["ok"] else "PARTIAL" if left_out else "PASS"
    lines = [f"# Pipeline {data['mode']}: {verdict}", ""]
    if left_out:
        lines += [f"A partial run (--only): the stages that ran are "
                  f"{', '.join(s.name for s in stages) or 'none'}; not run: "
                  f"{', '.join(left_out)}. This is no pass of the {data['mode']} command.", ""]
    if base:
        pinned = base.get("base_pinned") == "yes"
        lines += [f"Base: {base.get('base_package')} {base.get('base_version')}"
                  f"{'' if pinned else ' (NOT the pinned base)'}, tarball sha256 "
                  f"`{base.get('base_tarball_sha256', 'n/a')}`, git `{base.get('base_tag')}`.", ""]
    src = data.get("source") or {}
    if src:
        lines += [f"Project: `{str(src.get('commit'))[:12]}`"
                  f"{' with local changes' if src.get('dirty', True) else ''}, patches/ sha256 "
                  f"`{str(src.get('patches_sha256'))[:16]}`.", ""]
    env = data["environment"]
    lines += [f"Host: {env['cpus']} CPUs, gcc {env['gcc']}, {env['vng']}; {env['date']}.", ""]
    lines += ["## Stages", "", "| stage | status | minutes | summary |", "|---|---|---|---|"]
    for s in stages:
        first = s.summary.splitlines()[0] if s.summary else ""
        lines.append(f"| {s.name} | {s.status} | {s.seconds / 60:.1f} | {first} |")
    if data.get("kernel_builds"):
        lines += ["", "## Kernel builds", "", "| " + " | ".join(BUILD_HEADER) + " |",
                  "|---" * len(BUILD_HEADER) + "|"]
        lines += ["| " + " | ".join(build_cells(r)) + " |" for r in data["kernel_builds"]]
        lines += ["", BUILD_NOTE]
    if patches:
        cols = list(patches[0].results)
        lines += ["", "## Per-patch checks", "",
                  "| # | tree | patch | " + " | ".join(cols) + " |",
                  "|---" * (3 + len(cols)) + "|"]
        for p in patches:
            cells = [p.results[c].status for c in cols]
            lines.append(f"| {p.index} | {p.tree} | {p.subject} | " + " | ".join(cells) + " |")
        fails = [(p, c, p.results[c]) for p in patches for c in cols
                 if p.results[c].status in ("fail", "warn")]
        if fails:
            lines += ["", "Failures and warnings:", ""]
            lines += [f"- patch {p.index} `{c}` {r.status}: {r.message}" for p, c, r in fails]
        lines += ["", "Descriptions, as patchwork shows them:", ""]
        for p in patches:
            lines.append(f"- {p.index} {p.subject}")
            lines += [f"  - {c}: {p.results[c].status}: {p.results[c].message}" for c in cols]
    if data["series_checks"]:
        names = sorted({k.rsplit(":", 1)[1] for k in data["series_checks"]},
                       key=lambda n: list(SERIES_ORDER).index(n) if n in SERIES_ORDER else 99)
        serieses = sorted({k.rsplit(":", 1)[0] for k in data["series_checks"]})
        lines += ["", "## Series checks", "", "| series | " + " | ".join(names) + " |",
                  "|---" * (1 + len(names)) + "|"]
        for ser in serieses:
            cells = [data["series_checks"].get(f"{ser}:{n}", {}).get("status", "-") for n in names]
            lines.append(f"| {ser} | " + " | ".join(cells) + " |")
        odd = [(k, v) for k, v in data["series_checks"].items() if v["status"] in ("fail", "warn")]
        if odd:
            lines += [""] + [f"- {k} {v['status']}: {v['message']}" for k, v in odd]
    if patches:
        lines += ["", "## Recipients (get_maintainer.pl)", ""]
        for p in patches:
            lines.append(f"- {p.index} {p.subject}: To: {', '.join(p.to) or '-'}; "
                         f"Cc: {', '.join(p.cc) or '-'}")
    for s in stages:
        if s.details:
            lines += ["", f"## {s.name}: details", "", "```", s.details, "```"]
    odd = [c for c in data["cases"] if c["status"] in ("fail", "warn")]
    n = counts([Case(**c) for c in data["cases"]])
    lines += ["", "## Test cases", "", f"{count_line(n)}.", ""]
    lines += [f"- {c['status'].upper()} {c['suite']} / {c['name']}: {c['message']}" for c in odd]
    return "\n".join(lines) + "\n"


def junit(path, stages):
    root = ET.Element("testsuites")
    for s in stages:
        suite = ET.SubElement(root, "testsuite", name=s.name, time=f"{s.seconds:.1f}",
                              tests=str(len(s.cases)),
                              failures=str(sum(c.status == "fail" for c in s.cases)),
                              skipped=str(sum(c.status == "skip" for c in s.cases)),
                              warnings=str(sum(c.status == "warn" for c in s.cases)))
        if s.status == "fail":
            tc = ET.SubElement(suite, "testcase", classname=s.name, name="stage")
            ET.SubElement(tc, "failure", message=s.summary.splitlines()[0][:500]).text = s.summary
        for c in s.cases:
            tc = ET.SubElement(suite, "testcase", classname=c.suite, name=c.name)
            if c.status == "fail":
                ET.SubElement(tc, "failure", message=c.message[:500]).text = c.details or c.message
            elif c.status == "skip":
                ET.SubElement(tc, "skipped", message=c.message[:500])
            elif c.status == "warn":
                # JUnit has no warning: a passing case that says it warned.
                props = ET.SubElement(tc, "properties")
                ET.SubElement(props, "property", name="status", value="warn")
                ET.SubElement(tc, "system-out").text = f"WARN: {c.message}"
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)
