"""The run state and NEEDS: each stage reads of self.state exactly the
fields Pipeline.NEEDS (or MAY_READ) declares for it, from the stage
RunState names as their producer, and sets exactly the fields it produces
(read from the stages' code, the methods they call included); a stage whose
input is not set fails naming the field and its producer."""

import ast
import contextlib
import inspect
import io
import shutil
import tempfile
import textwrap
import unittest
from pathlib import Path

from ci import pipeline, pipeline_state
from ci.pipeline_state import PRODUCER, MissingInput, RunState
from common.programs import CXX_BUILD

STAGES = sorted({n for plan in pipeline.Pipeline.PLAN.values() for n in plan})


def sample(tmp):
    """A value of each field of the run state, as its producer might set it."""
    ws = Path(tmp) / "ws"
    return {"base": {"BASE_TAG": "v0", "BASE_REPO": str(Path(tmp) / "linux"),
                     "BASE_PINNED": "no"},
            "ws": ws, "series_tree": Path(tmp) / "src", "applied": [], "tip": "abc",
            "programs": CXX_BUILD, "base_kernel": ws / "base/build-x86",
            "patched_kernel": ws / "series/build-x86", "patch_reports": [],
            "series_results": {}}


def handed_on(p, stage, tmp, **fields):
    """Set on p.state what the stages before `stage` hand it (its NEEDS),
    sample values unless given in fields, which must be inputs of it."""
    values = sample(tmp)
    inputs = {f for fs in pipeline.Pipeline.NEEDS.get(stage, {}).values() for f in fs}
    inputs |= {f for fs in pipeline.Pipeline.MAY_READ.get(stage, {}).values() for f in fs}
    unknown = set(fields) - inputs
    if unknown:
        raise AssertionError(f"{stage} does not read {', '.join(sorted(unknown))}")
    for name in sorted(inputs - {f for fs in pipeline.Pipeline.MAY_READ.get(stage, {}).values()
                                 for f in fs}):
        setattr(p.state, name, values[name])
    for name, value in fields.items():
        setattr(p.state, name, value)


def function(cls, name):
    """The function behind cls.name (method, property, staticmethod), or None."""
    try:
        obj = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return obj if inspect.isfunction(obj) else None


def state_use(cls, method):
    """(fields read, fields set, problems) of self.state in `method` and
    every method or property of cls it uses on self, stages aside."""
    reads, writes, problems = set(), set(), []
    seen, todo = set(), [method]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse(textwrap.dedent(inspect.getsource(function(cls, name))))
        parent = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self"):
                continue
            up = parent.get(node)
            call = parent.get(up)
            if node.attr == "state" and isinstance(up, ast.Attribute) and up.attr in PRODUCER:
                (writes if isinstance(up.ctx, ast.Store) else reads).add(up.attr)
            elif (node.attr == "state" and isinstance(up, ast.Attribute)
                  and up.attr in ("get", "is_set") and isinstance(call, ast.Call)
                  and call.args and isinstance(call.args[0], ast.Constant)):
                reads.add(call.args[0].value)
            elif node.attr == "state":
                problems.append(f"{name}:{node.lineno}: self.state used but field by field")
            elif isinstance(node.ctx, ast.Store):
                problems.append(f"{name}:{node.lineno}: sets self.{node.attr}, "
                                "which is no field of the run state")
            elif function(cls, node.attr) and not node.attr.startswith("stage_"):
                todo.append(node.attr)
    return reads - writes, writes, problems


class DeclarationsTest(unittest.TestCase):
    P = pipeline.Pipeline

    def test_each_stage_reads_what_it_declares(self):
        for stage in STAGES:
            with self.subTest(stage=stage):
                reads, _, problems = state_use(self.P, f"stage_{stage}")
                self.assertEqual(problems, [])
                declared = {f for d in (self.P.NEEDS, self.P.MAY_READ)
                            for fs in d.get(stage, {}).values() for f in fs}
                self.assertEqual(sorted(reads), sorted(declared))

    def test_each_stage_sets_what_it_produces(self):
        for stage in STAGES:
            with self.subTest(stage=stage):
                _, writes, _ = state_use(self.P, f"stage_{stage}")
                self.assertEqual(sorted(writes),
                                 sorted(f for f, by in PRODUCER.items() if by == stage))

    def test_fields_come_from_their_producer(self):
        for decl in (self.P.NEEDS, self.P.MAY_READ):
            for stage, needs in decl.items():
                self.assertIn(stage, STAGES)
                for producer, fields in needs.items():
                    for f in fields:
                        self.assertEqual((stage, f, PRODUCER[f]), (stage, f, producer))
        for stage, needs in self.P.MAY_READ.items():
            self.assertFalse(set(needs) & set(self.P.needs(stage)), stage)

    def test_no_dead_state(self):
        # Every field has a producer in a plan and is read: by a stage or the report.
        read = {f for s in STAGES for f in state_use(self.P, f"stage_{s}")[0]}
        read |= state_use(self.P, "finish")[0]
        self.assertEqual(sorted(set(PRODUCER) - read), [])
        self.assertFalse(set(PRODUCER.values()) - set(STAGES))

    def test_stage_dependencies_as_before_the_run_state(self):
        # NEEDS gained the fields and the stages they come from directly;
        # what a stage needs, with what those need, is unchanged.
        def closure(name):
            out = set()
            for d in self.P.needs(name):
                out |= {d} | closure(d)
            return out
        self.assertEqual({s: sorted(closure(s)) for s in STAGES}, {
            "setup": [], "base": [], "apply": ["base"],
            "userspace": ["apply", "base"], "host_tests": ["apply", "base", "userspace"],
            "build_base": ["apply", "base"], "checks": ["apply", "base"],
            "submission": ["apply", "base"], "mailing_list": ["apply", "base"],
            "kunit": ["apply", "base"],
            "vm": ["apply", "base", "build_base", "checks", "userspace"],
            "vm_debug": ["apply", "base", "checks", "userspace"],
            "icount": ["apply", "base", "build_base", "checks"],
            "bench": ["apply", "base", "checks", "userspace"]})

    def test_the_reader_sees_an_undeclared_attribute(self):
        class Sloppy(pipeline.Pipeline):
            def stage_kunit(self, stage):
                self.kernel = self.state.series_tree / self.helper()

            def helper(self):
                return self.state.patched_kernel
        reads, writes, problems = state_use(Sloppy, "stage_kunit")
        self.assertEqual((reads, writes), ({"series_tree", "patched_kernel"}, set()))
        self.assertEqual(len(problems), 1)
        self.assertIn("sets self.kernel", problems[0])


class Faked(pipeline.Pipeline):
    """Every stage faked: it sets the fields it produces, but those in forgets."""

    def __init__(self, results, mode="test", forgets=()):
        super().__init__(mode, results)
        self.forgets, self.ran = forgets, []

    def fake(self, name, stage):
        self.ran.append(name)
        for f, by in PRODUCER.items():
            if by == name and f not in self.forgets:
                setattr(self.state, f, sample(self.results)[f])


for _name in STAGES:
    setattr(Faked, f"stage_{_name}", lambda self, stage, _n=_name: self.fake(_n, stage))


class MissingInputTest(unittest.TestCase):
    def tmpdir(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        return tmp

    def run_pipeline(self, p, only):
        (p.results / "logs").mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = p.run(only)
        return code, {s.name: s for s in p.stages}, out.getvalue()

    def test_only_with_an_unset_input_fails_naming_field_and_producer(self):
        tmp = self.tmpdir()
        p = Faked(tmp, forgets=("series_tree",))
        code, stages, out = self.run_pipeline(p, ["base", "apply", "kunit"])
        self.assertEqual(code, 1)
        self.assertEqual(p.ran, ["base", "apply"])
        self.assertEqual(stages["kunit"].status, "fail")
        self.assertEqual(stages["kunit"].summary,
                         "missing input series_tree: the apply stage sets it and has not "
                         "in this run")
        self.assertNotIn("Error", out)

    def test_producer_not_run_in_this_process(self):
        class NoApply(Faked):  # a mode whose plan has no apply stage
            PLAN = {"test": ["base", "kunit"]}
        tmp = self.tmpdir()
        p = NoApply(tmp)
        self.assertEqual(NoApply.select("test", ["base", "kunit"]), ["base", "kunit"])
        code, stages, _ = self.run_pipeline(p, ["base", "kunit"])
        self.assertEqual(code, 1)
        self.assertEqual(p.ran, ["base"])
        for field in ("series_tree", "tip"):
            self.assertIn(f"missing input {field}: the apply stage sets it",
                          stages["kunit"].summary)
        self.assertNotIn("ws", stages["kunit"].summary)  # set by base

    def test_a_stage_reading_an_unset_field_fails_by_name(self):
        # No AttributeError even past the driver's check: the field's producer is named.
        with tempfile.TemporaryDirectory() as tmp:
            p = pipeline.Pipeline("test", tmp)
            with self.assertRaises(MissingInput) as ctx:
                p.stage_kunit(pipeline.Stage("kunit"))
        self.assertIsInstance(ctx.exception, pipeline.StageFailed)
        self.assertIn("missing input series_tree: the apply stage sets it", str(ctx.exception))

    def test_full_plans_pass_with_every_input_set(self):
        for mode in pipeline.Pipeline.PLAN:
            with self.subTest(mode=mode):
                p = Faked(self.tmpdir(), mode)
                code, stages, _ = self.run_pipeline(p, None)
                self.assertEqual(code, 0, {n: s.summary for n, s in stages.items()})
                self.assertEqual(p.ran, pipeline.Pipeline.PLAN[mode])

    def test_unset_fields_and_defaults(self):
        state = RunState()
        self.assertEqual(state.ws, pipeline_state.WS)
        self.assertTrue(state.is_set("ws"))
        self.assertFalse(state.is_set("tip"))
        self.assertEqual(state.get("patch_reports", []), [])
        with self.assertRaises(AttributeError):
            state.no_such_field  # noqa: B018
        state.tip = "abc"
        self.assertEqual(repr(state), f"RunState(ws={state.ws!r}, tip='abc')")


if __name__ == "__main__":
    unittest.main()
