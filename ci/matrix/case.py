"""One program and one case judged: a program's exit code, KTAP plan and
duplicate cases (program_problems()), and a case's result against its
entry in expectations.json, with what an expected failure must show
(judge_case(), not_shown()). An errno a C++ program failed with is read
from its "# errno: NAME" key line, one of the tree's programs' from its prose.
"""

import errno
import os
import re

from ci.matrix.expectations import EXPECTED, SHOW_KINDS


def expected_rc(statuses):
    """Exit codes the kselftest results imply: 1 (KSFT_FAIL) if any failed,
    else 0, or 4 (KSFT_SKIP) when all were skipped (lib/py exits 0 then)."""
    if "fail" in statuses:
        return {1}
    if statuses and "pass" not in statuses:
        return {0, 4}
    return {0}


def rc_problem(rc, kind, statuses):
    """Why exit code rc is wrong for a program of this kind with these
    results; empty if it is right."""
    if rc is None:
        return "no exit code recorded: the program never finished"
    what = f"exit {rc}"
    if rc == 124:
        what += " (killed by the 900 s timeout)"
    elif rc > 128:
        what += f" (killed by signal {rc - 128})"
    elif rc == 127:
        what += " (command not found)"
    # tdc exits 1 when a case failed, else 0, and 4 when it found no case.
    want = (({1} if "fail" in statuses else {0}) if statuses else {4}) if kind == "tdc" \
        else expected_rc(statuses)
    if rc in want:
        return ""
    if rc > 128 or rc in (124, 127) or rc not in (0, 1, 4):
        return f"crashed: {what}"
    implied = " or ".join(map(str, sorted(want)))
    return f"unexpected {what}: its results imply exit {implied}"


def program_problems(kind, ktap, rc, runner=None):
    """Problems with a program as a whole: exit code, plan, duplicates.
    runner: the kselftest runner's problems with the test (a kselftest
    program's, see read_kselftest()), None for the other kinds. A test the
    runner gave no result for has those only; one it ended without an exit
    code of the test's own (a timeout) has no exit code to judge."""
    statuses = [r.status for _, r in ktap.results]
    probs = list(runner or [])
    if runner is not None and rc is None:
        if not ktap.plan and not ktap.results:
            return probs
    elif err := rc_problem(rc, kind, statuses):
        probs.append(err)
    if ktap.plan is None:
        probs.append("no KTAP plan")
    elif ktap.plan != len(ktap.results):
        probs.append(f"plan 1..{ktap.plan} but {len(ktap.results)} result(s)"
                     + (" (missing cases)" if ktap.plan > len(ktap.results) else ""))
    names = [n for n, _ in ktap.results]
    probs += [f"case {n!r} reported {names.count(n)} times"
              for n in sorted(set(names)) if names.count(n) > 1]
    if kind == "tdc" and statuses and set(statuses) == {"skip"}:
        probs.append(f"all {len(statuses)} case(s) skipped")
    probs += ktap.problems
    return probs


# The key line a C++ program (selftests/lib, KtapWriter::result()) writes
# after a failure's message for each errno it failed with: "# errno: EOPNOTSUPP",
# "#" off in a CaseResult's diag.
ERRNO_KEY_RE = re.compile(r"^errno: (\S+)$")


def errno_keys(diag):
    """The errno names of a case's "# errno: NAME" lines."""
    return {m[1] for line in diag if (m := ERRNO_KEY_RE.match(line.strip()))}


def _norm(text):
    return " ".join(text.split())


def token_re(value):
    """A regex finding value as whole tokens: not inside a longer number or
    word ("tx_packets +100" is not in "tx_packets +1000", "0 != 5" not in
    "0 != 50", "EINVAL" not in "EINVALX"), whitespace aside."""
    body = r"\s+".join(re.escape(word) for word in value.split())
    return re.compile(rf"(?<![\w.+-]){body}(?![\w]|[.+-]\w)")


# The prose fallback, for the programs that write no "errno:" key: the
# kselftests (lib/py's exceptions, "Netlink error: Operation not supported")
# and tc-testing are the kernel tree's code, which the matrix runs as the
# tree has them. In "expected EINVAL, got EOPNOTSUPP (...)" and "got tx 1/1, expected tx
# 4/4", the clause from "expected" up to a following "got" or the line's
# end states what was wanted, not what happened.
EXPECTED_CLAUSE_RE = re.compile(r"\bexpected\b.*?(?=[,;]?\s*\bgot\b|$)")


def got_part(line):
    """A diagnostic line without the clauses that state what was expected."""
    return EXPECTED_CLAUSE_RE.sub(" ", line)


def not_shown(shows, diag, skip_reason=None, errno_key=False):
    """What of shows ({kind: text or [texts]}) the diagnostics lack.

    errno_key: the program writes its errnos as keys (the C++ programs,
    kind ktap): an errno is seen only in a "# errno: NAME" line
    (errno_keys()), whatever the prose says. Else (the kernel tree's
    programs) it is read from the prose: every text is matched as whole
    tokens (token_re()), an errno seen as its name or its strerror() text,
    which the programs print (Python's exceptions: "Netlink error:
    Operation not supported"; the C++ programs' prose: "EOPNOTSUPP
    (Operation not supported)", bad_input's "got EOPNOTSUPP"), and only in
    what was got: not in the clauses that say what was expected
    (got_part()), so "expected EOPNOTSUPP, got EINVAL (...)" shows EINVAL and
    not EOPNOTSUPP. Extack and counter texts are seen anywhere in the
    diagnostics; an operation (the request an errno comes from, e.g.
    "ethnl.channels_get" in a traceback, "QSTATS_GET" in a C++ program's
    message) too, as a name: not inside a longer one, a "." before it
    allowed. A "skip" text is seen only in the reason of a skipped case
    (skip_reason, None for a case that did not skip).
    """
    text = _norm(" ".join(diag))
    got = _norm(" ".join(got_part(line) for line in diag))
    keys = errno_keys(diag)
    missing = []
    for kind, values in sorted(shows.items()):
        for value in [values] if isinstance(values, str) else values:
            if kind == "errno" and errno_key:
                seen = value in keys
            elif kind == "errno":
                num = getattr(errno, value, None) if value.isupper() else None
                seen = num is not None and any(
                    token_re(t).search(got) for t in (value, os.strerror(num)))
            elif kind == "operation":
                body = r"\s+".join(re.escape(word) for word in value.split())
                seen = bool(re.search(rf"(?<!\w){body}(?!\w)", text))
            elif kind == "skip":
                seen = skip_reason is not None and bool(token_re(value).search(skip_reason))
            else:
                seen = kind in SHOW_KINDS and bool(token_re(value).search(text))
            if not seen:
                missing.append(f"{kind} {value!r}")
    return missing


def _shown(shows):
    return "; ".join(f"{kind} " + ", ".join(
        repr(v) for v in ([values] if isinstance(values, str) else values))
        for kind, values in sorted(shows.items()))


def _brief(diag, limit=240):
    """The diagnostics on one line; their end if too long (where a Python
    traceback names its exception)."""
    text = " | ".join(diag)
    return text if len(text) <= limit else "..." + text[3 - limit:]


def judge_case(entry, label, got, control=False, errno_key=False):
    """(ok, verdict, message) of one case on one kernel. entry: its
    expectations, None if expectations.json has none; got: its CaseResult,
    None if it never ran; errno_key: its program names errnos by key
    (not_shown()).

    got.status pass, fail, skip or xfail (lib/py's "# XFAIL"); the entry's
    pass, fail or xfail. An expected fail or xfail must show what the entry
    names; a skip is taken only where a fail is expected whose shows name
    the skip's reason ("skip"), a fail only where they name none.
    """
    if entry is None:
        return False, "NO ENTRY", ("no entry in expectations.json"
                                   + (f" (got {got.status})" if got else ""))
    want = entry.get(label, "pass")
    if want not in EXPECTED:
        return False, "BAD ENTRY", (f"expectations.json expects {want!r}, which is not one of "
                                    f"{', '.join(EXPECTED)}")
    why = entry.get("why", "")
    if control:
        why = why.removeprefix("control: ")
    why = f": {why}" if why else ""
    label_ = "control, " if control else ""
    if got is None:
        return False, "NEVER RAN", f"{label_}never ran, expected {want}{why}"
    head = f"{label_}got {got.status}, expected {want}"
    skip = f" [{got.reason}]" if got.reason else ""
    shows = entry.get("shows", {}).get(label) or {}
    skip_shown = "skip" in shows
    if got.status != want and not (got.status == "skip" and want == "fail"):
        detail = f" [{_brief(got.diag)}]" if got.status == "fail" and got.diag else skip
        return False, "MISMATCH", head + why + detail
    if want == "pass":
        return True, "ok", head + why + skip
    if not shows:
        return False, "MISMATCH", f"{head}, but expectations.json names nothing it must show"
    if (got.status == "skip") != skip_shown:
        return False, "MISMATCH", (
            f"{label_}got {got.status}, expected a skip showing {_shown(shows)}{why}"
            if skip_shown else f"{head} showing {_shown(shows)}, not a skip{why}{skip}")
    diag = got.diag + ([got.reason] if got.status == "xfail" and got.reason else [])
    if missing := not_shown(shows, diag, got.reason if got.status == "skip" else None,
                            errno_key):
        what = {"skip": "skipped", "xfail": "xfailed"}.get(got.status, "failed")
        seen = got.reason if got.status == "skip" else _brief(diag)
        return False, "OTHER REASON", (
            f"{what} for another reason: {seen or 'no diagnostics'}"
            f" (expected to show {', '.join(missing)})")
    return True, "ok", f"{head}, showing {_shown(shows)}{why}"
