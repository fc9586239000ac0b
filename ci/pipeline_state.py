"""The run state: everything one pipeline stage hands on to the next, in
one place. Each field is set by one stage (`by` below) and is unset until
that stage sets it; Pipeline.NEEDS lists the fields each stage reads, and
the driver checks that they are set before the stage runs. Reading a field
that is not set raises MissingInput, a stage failure naming the stage that
sets it.

What a stage leaves on disk at a fixed place is not state: kernel/configs
fragments the apply stage extracts into the workspace, icount's
results/icount/icount.json that bench reads when present. StageSet, the
base of the stage classes, lives here with the state it reads."""

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ci.pipeline_common import WS, StageFailed

if TYPE_CHECKING:
    from tools.series.checks.patchwork import PatchReport, Result
    from tools.series.series import Series


class MissingInput(StageFailed):
    """A stage needs a field of the run state that is not set in this run."""


def by(stage: str, **kw: Any) -> Any:
    """A field of the run state that `stage` sets (unset until then, unless
    it has a default)."""
    return field(init=False, metadata={"by": stage}, **kw)


@dataclass(eq=False, repr=False)
class RunState:
    # base: BASE_* of the base tree (kernel/fetch-base.sh, import-base.sh),
    # or of KERNEL_SRC's commit
    base: dict[str, str] = by("base")
    # base: the workspace (worktrees, kernel builds): WS, or with KERNEL_SRC
    # one of that repository's own
    ws: Path = by("base", default_factory=lambda: WS)
    # apply: the series' worktree of the base repository (ws/series/src)
    series_tree: Path = by("apply")
    # apply: (series, patch file, commit) of every patch, in order
    applied: "list[tuple[Series, Path, str]]" = by("apply")
    # apply: the commit with every series merged (ci/all): the patched tree
    tip: str = by("apply")
    # userspace: the C++ build directory: selftest programs, mqbench,
    # ctest's tests, compile_commands.json
    programs: Path = by("userspace")
    # build-base: the base kernel's build directory (ws/base/build-x86)
    base_kernel: Path = by("build_base")
    # checks: the patched kernel's build directory (ws/series/build-x86),
    # where checks leaves the tip built
    patched_kernel: Path = by("checks")
    # checks: every patch's check results, for the report and the list bot
    patch_reports: "list[PatchReport]" = by("checks")
    # checks: the series checks' results, for the report
    series_results: "dict[str, Result]" = by("checks")

    def is_set(self, name: str) -> bool:
        return name in vars(self)

    def get(self, name: str, default: Any = None) -> Any:
        """The field if set, else default: for what a stage reads only when
        its producer ran (Pipeline.MAY_READ) and for the report."""
        return vars(self).get(name, default)

    def __repr__(self) -> str:
        return f"RunState({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    if not TYPE_CHECKING:  # mypy keeps checking the fields' names and types
        def __getattr__(self, name):
            # Called only for an attribute not found: a field not set yet.
            if name not in PRODUCER:
                raise AttributeError(name)
            raise MissingInput(missing(name))


# Each field's producer, the stage that sets it.
PRODUCER: dict[str, str] = {f.name: f.metadata["by"] for f in fields(RunState)}


def missing(name: str) -> str:
    """What a stage is told when it needs field `name` and it is not set."""
    return (f"missing input {name}: the {PRODUCER[name].replace('_', '-')} stage sets it "
            "and has not in this run")


class StageSet:
    """Base of the per-job stage classes. A stage is a method stage_<name>(stage)
    filling in stage (summary, cases) and raising StageFailed on failure. It
    reads the run's settings (mode, results, kernel_src: set up by
    pipeline.Pipeline) and, of self.state, the fields Pipeline.NEEDS
    declares for it; it sets the fields RunState names it the producer of."""

    mode: str
    results: Path
    kernel_src: str | None
    state: RunState
    plan: list[str]  # the stages this run runs
    NEEDS: ClassVar[dict[str, dict[str, tuple[str, ...]]]]

    def made_by(self, name: str) -> list[str]:
        """The stages of this run that make stage name's record, as its
        source stamp names them (common/record_inputs.py): name, the stages
        it needs at any depth and setup (the tools every stage runs)."""
        made, todo = {"setup", name}, [name]
        while todo:
            for need in self.NEEDS.get(todo.pop(), {}):
                if need not in made:
                    made.add(need)
                    todo.append(need)
        return [n for n in self.plan if n in made]

    def logfile(self, name: str) -> Path:
        return self.results / "logs" / f"{name}.log"
