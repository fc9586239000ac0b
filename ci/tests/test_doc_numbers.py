"""Every measured number README.md, Documentation/*.md,
Documentation/results/README.md and the cover letters quote is either a
claim bound to its record by key (ci/tests/doc_claims.py CLAIMS) or listed
there as no measurement of a record, with the reason (LISTED).

A claim is a snippet of its document with "{}" for each number and, for
each, a key into a record under Documentation/results/: the number must be
the record's value at that key, rounded as the document rounds it. Only
the "{}" spans are bound: another number in the snippet is not. A
measured-looking number (MEASURED) neither bound nor listed fails, named
by file, line and number; so does a claim or a listing that no longer
matches its document."""

import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from ci.tests.doc_claims import CLAIMS, LISTED, MEASURED, documents
from common.paths import ROOT

NUMBER = r"([-+]?\d+(?:\.\d+)?)"


def words(text):
    """Literal text as a regex in which any run of whitespace matches any
    other (a reflowed paragraph still matches)."""
    return r"\s+".join(re.escape(w) for w in text.split())


def snippet_regex(snippet):
    """A claim's snippet as a regex, each "{}" a number."""
    pieces = snippet.split("{}")
    out = []
    for i, piece in enumerate(pieces):
        core = words(piece)
        lead = r"\s+" if i and piece[:1].isspace() else ""
        tail = r"\s+" if i < len(pieces) - 1 and piece[-1:].isspace() and core else ""
        out.append(lead + core + tail if core else (r"\s+" if piece else ""))
    return NUMBER.join(out)


def find_once(text, regex, what):
    """The one match of regex in text, or a reason why there is none."""
    found = list(re.finditer(regex, text))
    if len(found) != 1:
        return None, f"{len(found)} matches of {what!r}"
    return found[0], None


def md_tables(text):
    """Each markdown table of text as a list of dicts, header -> cell."""
    tables, rows = [], None
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is None:
                rows, header = [], cells
            elif not set("".join(cells)) <= set("-: "):
                rows.append(dict(zip(header, cells)))
        elif rows is not None:
            tables.append(rows)
            rows = None
    return tables


def json_value(data, path):
    """data at a path such as rows[scenario=q2_mq,kernel=base].median or
    comparisons[0].ratio_median."""
    for part in re.findall(r"[^.\[]+(?:\[[^\]]*\])?", path):
        name, _, sel = part.partition("[")
        data = data[name]
        if not sel:
            continue
        sel = sel.rstrip("]")
        if sel.isdigit():
            data = data[int(sel)]
            continue
        want = dict(kv.split("=", 1) for kv in sel.split(","))
        hits = [d for d in data if all(str(d.get(k)) == v for k, v in want.items())]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} elements of {name} with {sel}")
        data = hits[0]
    return data


def term_value(path, key):
    """One key of one record file: /REGEX/ (the last match's group 1, in any
    file), count/REGEX/ (how many lines match), [COL=VALUE].COLUMN (the cell
    of a markdown table's row) or a JSON path."""
    if re.fullmatch(r"\d+(?:\.\d+)?", key):
        return float(key)
    text = path.read_text(errors="replace")
    if key.startswith("count/"):
        return float(len(re.findall(key[6:-1], text, re.M)))
    if key.startswith("/"):
        found = re.findall(key[1:-1], text, re.M)
        if not found:
            raise KeyError(f"no match of {key}")
        return float(found[-1])
    if key.startswith("["):
        sel = re.fullmatch(r"\[([^=\]]+)=([^\]]+)\]\.(.+)", key).groups()
        column = sel[2]
        hits = [row[column] for table in md_tables(text) for row in table
                if row.get(sel[0]) == sel[1] and column in row]
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} table rows with {sel[0]}={sel[1]} and a {column} column")
        return float(hits[0])
    return float(json_value(json.loads(text), key))


def record_value(results, record, key):
    """The value a key names in a record (a file under results): one term,
    or terms joined by " + ", " - " or " / ", taken left to right."""
    ops = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "/": lambda a, b: a / b}
    parts = re.split(r" ([-+/]) ", key)
    value = term_value(results / record, parts[0])
    for op, term in zip(parts[1::2], parts[2::2]):
        value = ops[op](value, term_value(results / record, term))
    return value


def agrees(quoted, value):
    """quoted (a number as printed) is value rounded to quoted's digits."""
    decimals = len(quoted.partition(".")[2])
    return abs(float(quoted) - value) <= 0.5 * 10 ** -decimals + 1e-9


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def region(text, anchor, scope):
    """The span of the line, paragraph or section (heading to the next of its
    level or above) holding anchor, which must occur once."""
    found, why = find_once(text, words(anchor), anchor)
    if not found:
        return None, why
    start, end = found.start(), found.end()
    if scope == "line":
        lo = text.rfind("\n", 0, start) + 1
        hi = text.find("\n", end)
    elif scope == "paragraph":
        lo = text.rfind("\n\n", 0, start) + 1
        hi = text.find("\n\n", end)
    else:
        lo = text.rfind("\n#", 0, start + 1) + 1
        level = len(re.match(r"#+", text[lo:]).group(0))
        nxt = re.compile(r"^#{1,%d} " % level, re.M).search(text, end)
        hi = nxt.start() if nxt else len(text)
    return (lo, len(text) if hi < 0 else hi), None


def claim_problems(root=ROOT, claims=CLAIMS, listed=LISTED, docs=None):
    """Every claim whose document or record disagrees, every listing that
    matches nothing, and every measured number neither bound nor listed."""
    results = root / "Documentation/results"
    problems, bound, exempt = [], {}, {}
    for claim in claims:
        text = (root / claim.doc).read_text()
        m, why = find_once(text, snippet_regex(claim.snippet), claim.snippet)
        if not m:
            problems.append(f"{claim.doc}: claim on {claim.record}: {why}")
            continue
        if len(claim.keys) != len(m.groups()):
            problems.append(f"{claim.doc}: {claim.snippet!r}: {len(m.groups())} numbers, "
                            f"{len(claim.keys)} keys")
            continue
        for i, key in enumerate(claim.keys, 1):
            bound.setdefault(claim.doc, []).append(m.span(i))
            try:
                value = record_value(results, claim.record, key)
            except (OSError, KeyError, ValueError, IndexError, TypeError, AttributeError,
                    re.error) as e:
                problems.append(f"{claim.doc}:{line_of(text, m.start(i))}: {m[i]}: "
                                f"{claim.record} {key}: {e}")
                continue
            if not agrees(m[i], value):
                problems.append(f"{claim.doc}:{line_of(text, m.start(i))}: {m[i]}, "
                                f"{claim.record} {key} is {value:g}")
    for item in listed:
        text = (root / item.doc).read_text()
        span, why = region(text, item.anchor, item.scope)
        if not span:
            problems.append(f"{item.doc}: listed {item.scope} ({item.reason}): {why}")
            continue
        exempt.setdefault(item.doc, []).append(span)
    for doc in docs if docs is not None else documents(root):
        text = (root / doc).read_text()
        text = body(text)
        spans = sorted({m.span("n") for pat in MEASURED for m in pat.finditer(text)})
        for span in spans:
            if any(lo <= span[0] and span[1] <= hi for lo, hi in bound.get(doc, [])):
                continue
            if any(lo <= span[0] < hi for lo, hi in exempt.get(doc, [])):
                continue
            problems.append(f"{doc}:{line_of(text, span[0])}: {text[slice(*span)]!r} is "
                            "neither a claim of a record nor listed (ci/tests/doc_claims.py)")
    return problems


def body(text):
    """A cover letter's own text (headers and shortlog blanked), or text."""
    if not text.startswith("From "):
        return text
    start = text.index("\n\n")
    m = re.search(r"^\S.* \(\d+\):$", text, re.M)
    end = m.start() if m else len(text)
    return re.sub(r"[^\n]", " ", text[:start]) + text[start:end]


class DocNumbersTest(unittest.TestCase):
    def test_quotes_are_the_records(self):
        self.assertEqual(claim_problems(), [])

    def test_every_key_names_a_record_file(self):
        for claim in CLAIMS:
            self.assertTrue((ROOT / "Documentation/results" / claim.record).is_file(), claim)


def copy_tree(tmp):
    """The documents, cover letters, other files claims quote and the
    records, copied into tmp."""
    for rel in sorted({*documents(ROOT), *(claim.doc for claim in CLAIMS)}):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp / rel)
    shutil.copytree(ROOT / "Documentation/results", tmp / "Documentation/results",
                    dirs_exist_ok=True)


class CraftedTest(unittest.TestCase):
    """The audit's crafted inputs: each must fail the check."""

    def problems_after(self, rel, old, new, count=1):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            copy_tree(tmp)
            text = (tmp / rel).read_text()
            self.assertEqual(text.count(old), count, old)
            (tmp / rel).write_text(text.replace(old, new))
            return claim_problems(tmp)

    def bumped(self, rel, pattern):
        """problems_after() with the number pattern's group captures in rel
        (as the document has it now) one more, its decimals kept."""
        text = (ROOT / rel).read_text()
        m = re.search(pattern, text, re.M)
        self.assertIsNotNone(m, f"{rel}: {pattern}")
        number = m[1]
        decimals = len(number.partition(".")[2])
        new = f"{float(number) + 1:.{decimals}f}"
        old = m[0]
        return self.problems_after(rel, old, old[:m.start(1) - m.start()] + new
                                   + old[m.end(1) - m.start():])

    def test_readme_minutes_changed(self):
        # The audit's "2.1 min" -> 9.9: a number in a claim's snippet that
        # is not itself bound used to pass.
        self.assertTrue(self.bumped("README.md", r"the vm stage ([\d.]+) and icount"))

    def test_readme_case_count_changed(self):
        self.assertTrue(self.problems_after("README.md", "(1342 cases)", "(1999 cases)"))

    def test_results_readme_stage_minutes_and_counts_changed(self):
        rel = "Documentation/results/README.md"
        self.assertTrue(self.bumped(rel, r"checks ([\d.]+), vm [\d.]+"))
        self.assertTrue(self.problems_after(rel, "1342 cases each", "1343 cases each"))
        self.assertTrue(self.problems_after(rel, "KUnit 30 passed", "KUnit 32 passed"))

    def test_cover_rows_swapped(self):
        rel = "patches/net-next/dummy-mq/0000-cover-letter.patch"
        text = (ROOT / rel).read_text()
        a = re.search(r"^  this series +(.*)$", text, re.M)[1]
        b = re.search(r"^  this series, an atomic64 pair added +(.*)$", text, re.M)[1]
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            copy_tree(tmp)
            swapped = text.replace(a, "@A@").replace(b, a).replace("@A@", b)
            self.assertNotEqual(swapped, text)
            (tmp / rel).write_text(swapped)
            self.assertEqual(len(claim_problems(tmp)), 6)

    def test_cover_and_design_base_changed(self):
        # The base's start_xmit count as both documents quote it, 100 less.
        rows = json.loads((ROOT / "Documentation/results/icount-designs/icount.json").read_text())
        base = next(r["median"] for r in rows["rows"]
                    if (r["scenario"], r["kernel"]) == ("q2_start_xmit", "base"))
        old, new = f"{base:.1f}", f"{base - 100:.1f}"
        self.assertTrue(self.problems_after(
            "patches/net-next/dummy-mq/0000-cover-letter.patch", old, new))
        self.assertTrue(self.problems_after("Documentation/design.md", old, new, count=2))

    def test_a_bench_ratio_added_to_a_cover_is_no_claim(self):
        # The old check accepted a ratio matching any row of the record.
        problems = self.problems_after(
            "patches/net-next/dummy-mq/0000-cover-letter.patch", "(medians;",
            "S2-restore 1.67x (1.61-2.48)\n(medians;")
        self.assertTrue(any("'1.67'" in p for p in problems), problems)

    def test_a_record_value_changed(self):
        # A quoted row of each record, one more than it was.
        self.assertTrue(self.bumped(
            "Documentation/results/icount-designs/icount.json",
            r'"scenario": "q2_start_xmit",\s*"kernel": "patched",\s*"median": ([\d.]+)'))
        self.assertTrue(self.bumped("Documentation/results/test-run/summary.md",
                                    r"^\| vm \| pass \| ([\d.]+) \|"))

    def test_once_unrecorded_numbers_now_bound(self):
        # Each was listed as measured once with no record: changing it passed.
        self.assertTrue(self.problems_after("Documentation/pipeline.md", "checkpatch 35 s",
                                            "checkpatch 38 s"))
        self.assertTrue(self.problems_after("Documentation/pipeline.md", "build_32bit 60 s",
                                            "build_32bit 66 s"))
        self.assertTrue(self.problems_after("Documentation/pipeline.md", "blob; 422 s over",
                                            "blob; 90 s over"))
        self.assertTrue(self.problems_after("Documentation/bad-input.md", "86 cases: 86 pass",
                                            "84 cases: 84 pass"))
        self.assertTrue(self.bumped("Documentation/design.md", r"in (\d+) s in the test"))

    def test_a_listing_that_matches_nothing_fails(self):
        problems = self.problems_after("Documentation/pipeline.md", "### Where a cold run goes",
                                       "### Where it goes")
        self.assertTrue(any("listed" in p for p in problems), problems)


class KeyTest(unittest.TestCase):
    def test_keys(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "r.json").write_text(json.dumps(
                {"rows": [{"s": "a", "k": "x", "m": 10.0}, {"s": "a", "k": "y", "m": 12.5}]}))
            (tmp / "r.md").write_text("| stage | minutes |\n|---|---|\n| vm | 18.7 |\n")
            (tmp / "r.log").write_text("total 3 min\ntotal 4.5 min\nok 1\nok 2\n")
            self.assertEqual(record_value(tmp, "r.json", "rows[s=a,k=y].m"), 12.5)
            self.assertEqual(record_value(tmp, "r.json", "rows[s=a,k=y].m - rows[s=a,k=x].m"),
                             2.5)
            self.assertEqual(record_value(tmp, "r.md", "[stage=vm].minutes"), 18.7)
            self.assertEqual(record_value(tmp, "r.log", r"/^total (\S+) min/"), 4.5)
            self.assertEqual(record_value(tmp, "r.log", "count/^ok /"), 2)
            with self.assertRaises(KeyError):
                record_value(tmp, "r.json", "rows[s=a].m")

    def test_measured_forms(self):
        # What the audit found unchecked must read as measured.
        from ci.tests.doc_claims import MEASURED
        text = ("in 55 s of wall time, 83 s of CPU; 2.1 min; (1342 cases); 2294 passed; "
                "1.45x; B/A 1.0038; +7.9; 1829.8; build-base 16.5, checks 12.2;\n"
                "  and deleted                              3607         2496\n")
        found = sorted({text[slice(*m.span("n"))] for pat in MEASURED for m in pat.finditer(text)})
        self.assertEqual(found, sorted(["55", "83", "2.1", "1342", "2294", "1.45", "1.0038",
                                        "+7.9", "1829.8", "16.5", "12.2", "3607", "2496"]))
        # Versions and commands are not.
        self.assertFalse([m for pat in MEASURED for m in pat.finditer(
            "stable apply 6.1 6.12; linux-source-7.3 7.3.4-1; 198.18.0.1")])

    def test_rounding(self):
        self.assertTrue(agrees("1829.8", 1829.85))
        self.assertTrue(agrees("+7.9", 7.9))
        self.assertFalse(agrees("7.9", 8.0))
        self.assertFalse(agrees("1342", 1343))
        self.assertTrue(agrees("1111", 1111.2))


if __name__ == "__main__":
    unittest.main()
