"""xmit_disasm: the transmit code the series must leave alone after each
patch, instruction for instruction against the base's: the single-queue
dummy's transmit function and the qdisc bypass path pfifo_fast takes."""

import difflib
import re
from pathlib import Path

from tools.series.checks.findings import run
from tools.series.checks.patchwork import Result

# The transmit function of a dummy with one TX queue (the default, and the
# module's dummy0): object in the build directory, symbol.
SINGLE_QUEUE_XMIT = ("drivers/net/dummy.o", "dummy_xmit")
# Every function the check compares: the default dummy's transmit (the
# benchmark's S3 guard) and the bypass of an idle pfifo_fast, __dev_xmit_skb()
# inlined into __dev_queue_xmit() (S2-bypass).
SAME_AS_BASE = (SINGLE_QUEUE_XMIT,
                ("net/core/dev.o", "__dev_queue_xmit"),
                ("net/sched/sch_generic.o", "sch_direct_xmit"),
                ("net/sched/sch_generic.o", "pfifo_fast_enqueue"),
                ("net/sched/sch_generic.o", "pfifo_fast_dequeue"))
# Alignment padding objdump shows after a function's last instruction.
PADDING_RE = re.compile(r"^(nop[wl]?\b.*|int3|xchg\s+%ax,%ax|data16.*|cs nopw.*)$")


def normalise_disassembly(text: str, func: str) -> list[str]:
    """The instructions and relocations of func in `objdump -d -r
    --no-show-raw-insn --disassemble=func` output, without what moves when
    other code changes: addresses, raw jump targets, offsets into sections,
    trailing padding. objdump lists, under the function's first instruction,
    the relocations of the code before it too: only those at the function's
    own addresses are kept."""
    start: int | None = None
    items: list[tuple[int, str]] = []  # (address, text)
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
    assert start is not None  # items come after the function's head
    insns = [a for a, t in items if not t.startswith("R_")]
    end = max(insns) + 16 if insns else start
    body = [t for a, t in items if not t.startswith("R_") or start <= a < end]
    while body and PADDING_RE.match(body[-1]):
        body.pop()
    return body


def disassemble(build: str | Path, obj: str, func: str) -> list[str] | None:
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

    def __init__(self, build: str | Path, baseline: list[str] | None,
                 target: tuple[str, str] = SINGLE_QUEUE_XMIT) -> None:
        self.build, self.baseline, self.target = build, baseline, target

    def __call__(self, commit: str) -> Result:
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


class TransmitPath:
    """xmit_disasm: each function of `targets` after a patch against the
    base's, the baselines read from `build` as the base build left it."""

    def __init__(self, build: str | Path,
                 targets: tuple[tuple[str, str], ...] = SAME_AS_BASE) -> None:
        self.checks = [XmitDisasm(build, disassemble(build, obj, func), (obj, func))
                       for obj, func in targets]

    def __call__(self, commit: str) -> Result:
        results = [check(commit) for check in self.checks]
        bad = [r for r in results if r.status != "pass"]
        if bad:
            return Result("fail", "; ".join(r.message for r in bad),
                          "\n".join(r.details for r in bad if r.details))
        sizes = ", ".join(f"{c.target[1]} {len(c.baseline or [])}" for c in self.checks)
        return Result("pass", f"{len(self.checks)} functions as on the base "
                      f"(instructions: {sizes})")
