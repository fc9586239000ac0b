"""The kernel reports that fail a run wherever they appear in a kernel's
log: WARNING, BUG, KASAN, UBSAN, lockdep and RCU reports, oopses, panics,
kmemleak's unreferenced objects. The VM runs (common/vm.py) and the
KUnit runs in UML (kunit/) read their logs with the same patterns."""

import re

SPLAT_RE = re.compile(
    r"(WARNING: CPU: \d+|WARNING: .* at |BUG: |KASAN: |UBSAN: |"
    r"WARNING: possible (circular|recursive) locking|"
    r"WARNING: suspicious RCU usage|INFO: possible irq lock inversion|"
    r"inconsistent lock state|Kernel panic|Oops: |unreferenced object 0x|"
    r"general protection fault|Call Trace:)")


def find_splats(text: str) -> list[str]:
    """The stripped lines of text that show a kernel report."""
    return [ln.strip() for ln in text.splitlines() if SPLAT_RE.search(ln)]
