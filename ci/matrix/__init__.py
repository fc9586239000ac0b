"""The VM matrix: the selftest programs run in VMs booted on the base and
patched kernels, and their results judged.

Every case of a judged program has an expected result per kernel
(selftests/expectations.json). The run fails when any result differs from
its expectation, so a test that cannot fail on the base kernel is caught as
well as a test failing on the patched one. Besides:

- an expected "fail" names what must be seen (``shows``: an errno name, an
  extack text or a counter value) in that case's diagnostics, the KTAP "#"
  lines before its result line; a
  failure that does not show them "failed for another reason";
- a program's KTAP plan and exit code count: a crash or an exit code its
  results do not imply, a missing plan or one that differs from the results,
  a case with no entry in expectations.json and an entry whose case never
  ran each fail the stage, named;
- cases expected to pass on every kernel are controls, labelled so in the
  matrix and in the report;
- the tree's Python kselftests (kind "kselftest") are installed on the host
  with the kselftest make (install_kselftests()) and run in the VM by the
  kselftest runner, as netdev CI runs them: their cases are read from the
  test's KTAP nested in the runner's, and the runner's result line counts
  too: a test the installed list lacks (not in its Makefile), one killed
  at its settings timeout, one the runner could not start, or an exit code
  its cases do not imply fail the stage, named;
- the tree's tc-testing (kind "tdc") is judged case by case too, its cases
  named by their tdc id: a listed case as expectations.json says, every
  other case must pass on every kernel; all cases skipped, no plan, or an
  exit code its results do not imply fail the stage.

KTAP is read by ktap_parse.py, with the kernel tree's
tools/testing/kunit/kunit_parser.py when the tree is given; tdc's TAP and
the kselftest runner's output by runner_parse.py.

The modules, each importing only those listed before it (and common/vm.py,
which boots a kernel under virtme-ng and runs one command in it):
  ktap_parse.py    KTAP: each case's result, the plan, the diagnostics
  runner_parse.py  tdc's TAP and the kselftest runner's output
  read.py          what a program left in the VM's results (ProgramRun)
  expectations.py  expectations.json, programs.txt, tdc's categories
  case.py          one program and one case judged
  judge.py         the matrix judged (judge(), MatrixVerdict)
  debug_checks.py  the debug kernels' instruments and fault injection
  kselftests.py    the tree's kselftests installed on the host
  run.py           run_matrix(): install, boot, run, judge
"""
