"""The debug runs check their instruments and judge fault injection
(ci/matrix/debug_checks.py). Each crafted bad run here passed the vm-debug stage
before: it read only the programs' results and the console's splats, and a
kernel whose lockdep turned itself off, whose kmemleak was missing or
disabled, or whose KCSAN never ran its self-test shows none."""

import re
import unittest

from ci.matrix import debug_checks, expectations, ktap_parse, read

# Console lines of a good debug boot (the real ones, from results/vm-debug).
DEBUG_CONSOLE = """\
[    0.000000] KernelAddressSanitizer initialized (generic)
[   21.437612] kmemleak: Kernel memory leak detector initialized (mem pool available: 15614)
[   21.438102] kmemleak: Automatic memory scanning thread started
"""
DEBUG_DUMP = "lockdep: debug_locks 1\nkmemleak: enabled\nkcsan: absent\n"
KCSAN_CONSOLE = "[    3.113561] kcsan: selftest: 3/3 tests passed\n"
KCSAN_DUMP = "lockdep: absent\nkmemleak: absent\nkcsan: enabled: 1\n"


def failed(cfg, console, dump):
    """{instrument: message} of the checks that failed."""
    return {c.instrument: c.message
            for c in debug_checks.check_instruments(cfg, console, dump) if not c.ok}


class InstrumentsTest(unittest.TestCase):
    def test_good_runs_pass(self):
        self.assertEqual(failed("debug", DEBUG_CONSOLE, DEBUG_DUMP), {})
        self.assertEqual(failed("kcsan", KCSAN_CONSOLE, KCSAN_DUMP), {})
        self.assertEqual([c.instrument for c in
                          debug_checks.check_instruments("debug", DEBUG_CONSOLE, DEBUG_DUMP)],
                         ["kasan", "lockdep", "kmemleak"])

    def test_no_dump_fails(self):
        self.assertEqual(set(failed("debug", DEBUG_CONSOLE, "")), {"lockdep", "kmemleak"})
        self.assertEqual(set(failed("kcsan", KCSAN_CONSOLE, "")), {"kcsan"})

    def test_lockdep_turned_off_on_the_console(self):
        console = DEBUG_CONSOLE + (
            "[  301.2] BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low!\n"
            "[  301.2] turning off the locking correctness validator.\n")
        self.assertIn("turned itself off", failed("debug", console, DEBUG_DUMP)["lockdep"])

    def test_lockdep_debug_locks_0(self):
        dump = DEBUG_DUMP.replace("debug_locks 1", "debug_locks 0")
        self.assertIn("debug_locks 0", failed("debug", DEBUG_CONSOLE, dump)["lockdep"])

    def test_lockdep_absent(self):
        dump = DEBUG_DUMP.replace("lockdep: debug_locks 1", "lockdep: absent")
        self.assertIn("not built in", failed("debug", DEBUG_CONSOLE, dump)["lockdep"])

    def test_kmemleak_absent(self):
        dump = DEBUG_DUMP.replace("kmemleak: enabled", "kmemleak: absent")
        console = DEBUG_CONSOLE.replace("kmemleak: Kernel memory leak detector initialized", "")
        self.assertIn("not built in", failed("debug", console, dump)["kmemleak"])

    def test_kmemleak_never_initialized(self):
        console = "\n".join(ln for ln in DEBUG_CONSOLE.splitlines() if "kmemleak" not in ln)
        self.assertIn("never initialized", failed("debug", console, DEBUG_DUMP)["kmemleak"])

    def test_kmemleak_disabled_during_the_run(self):
        console = DEBUG_CONSOLE + (
            "[  120.1] kmemleak: Cannot allocate a kmemleak_object structure\n"
            "[  120.1] kmemleak: Kernel memory leak detector disabled\n")
        self.assertIn("disabled itself", failed("debug", console, DEBUG_DUMP)["kmemleak"])

    def test_kmemleak_refusing_commands_at_the_end(self):
        dump = DEBUG_DUMP.replace("kmemleak: enabled",
                                  "kmemleak: disabled (Operation not permitted)")
        self.assertIn("disabled (Operation not permitted) at the end",
                      failed("debug", DEBUG_CONSOLE, dump)["kmemleak"])

    def test_kmemleak_leaks_on_the_console(self):
        console = DEBUG_CONSOLE + "[  900.0] kmemleak: 2 new suspected memory leaks (see ...)\n"
        self.assertIn("2 suspected leak", failed("debug", console, DEBUG_DUMP)["kmemleak"])

    def test_kasan_missing(self):
        console = DEBUG_CONSOLE.replace("KernelAddressSanitizer initialized (generic)", "")
        self.assertIn("KernelAddressSanitizer", failed("debug", console, DEBUG_DUMP)["kasan"])

    def test_kcsan_selftest_missing(self):
        self.assertIn("selftest", failed("kcsan", "[    3.1] kcsan: enabled early\n",
                                         KCSAN_DUMP)["kcsan"])

    def test_kcsan_selftest_failed(self):
        console = KCSAN_CONSOLE.replace("3/3", "2/3")
        self.assertIn("2/3", failed("kcsan", console, KCSAN_DUMP)["kcsan"])

    def test_kcsan_disabled_at_the_end(self):
        dump = KCSAN_DUMP.replace("enabled: 1", "enabled: 0")
        self.assertIn("not enabled", failed("kcsan", KCSAN_CONSOLE, dump)["kcsan"])

    def test_a_debug_console_does_not_stand_in_for_kcsan(self):
        self.assertIn("kcsan", failed("kcsan", DEBUG_CONSOLE, DEBUG_DUMP))


def fault_ktap(results, plan=None, faults=(4, 4)):
    """fault_inject's KTAP with these (name, ok) results, each passing one
    with faults (injected, sites)."""
    lines = ["TAP version 13", f"1..{len(results) if plan is None else plan}"]
    for i, (name, ok) in enumerate(results, 1):
        if not ok:
            lines.append("# 1 inconsistent answer(s) under tc_new_tfilter")
        else:
            lines.append(f"# {faults[0]} faults injected at {faults[1]} sites under whole "
                         f"request ({faults[1]} in the whole request)")
        lines.append(f"{'' if ok else 'not '}ok {i} {name}")
    return "\n".join(lines) + "\n"


def fault_run(results, rc=None, plan=None, faults=(4, 4)):
    rc = (0 if all(ok for _, ok in results) else 1) if rc is None else rc
    return read.ProgramRun("ktap", rc,
                           ktap_parse.parse_results(fault_ktap(results, plan, faults)))


class FaultInjectionJudgeTest(unittest.TestCase):
    ALL = [(name, True) for name in debug_checks.FAULT_REQUESTS]

    def problems(self, run):
        return debug_checks.judge_fault_injection(run)[1]

    def test_all_requests_passing_pass(self):
        cases, problems = debug_checks.judge_fault_injection(fault_run(self.ALL))
        self.assertEqual(problems, [])
        self.assertEqual(len(cases), 1 + len(debug_checks.FAULT_REQUESTS))

    def test_a_failing_request_fails(self):
        results = [(n, n != "filter_add_sfq") for n, _ in self.ALL]
        probs = self.problems(fault_run(results))
        self.assertEqual(len(probs), 1)
        self.assertIn("filter_add_sfq", probs[0])
        self.assertIn("inconsistent", probs[0])

    def test_a_request_that_never_ran_fails(self):
        probs = self.problems(fault_run(self.ALL[:-1]))
        self.assertEqual(len(probs), 1)
        self.assertIn(f"fault_inject: {self.ALL[-1][0]} on patched: control, never ran", probs[0])

    def test_skipped_requests_fail(self):
        text = "TAP version 13\n1..1\nok 1 link_add_txq4 # SKIP no fail-nth\n"
        run = read.ProgramRun("ktap", 4, ktap_parse.parse_results(text))
        probs = self.problems(run)
        self.assertTrue(any("link_add_txq4 on patched: control, got skip" in p for p in probs),
                        probs)
        self.assertTrue(any("never ran" in p for p in probs), probs)

    def test_a_crash_fails(self):
        probs = self.problems(fault_run(self.ALL[:3], rc=139, plan=len(self.ALL)))
        self.assertTrue(any("crashed" in p for p in probs), probs)
        self.assertTrue(any("plan" in p for p in probs), probs)

    def test_no_output_fails(self):
        run = read.ProgramRun("ktap", None, ktap_parse.parse_results(""))
        probs = self.problems(run)
        self.assertIn("fault_inject on patched: no KTAP plan", probs)
        for name in debug_checks.FAULT_REQUESTS:
            self.assertTrue(any(p.startswith(f"fault_inject: {name} on patched: control, never ran")
                                for p in probs), name)

    def test_an_unknown_request_fails(self):
        probs = self.problems(fault_run(self.ALL + [("link_add_txq8", True)]))
        self.assertEqual(probs, ["fault_inject: link_add_txq8 on patched: no entry in "
                                 "expectations.json (got pass)"])

    def test_no_fault_injected_fails(self):
        # A recorded run with every "faults injected" set to 0 passed before.
        probs = self.problems(fault_run(self.ALL, faults=(0, 0)))
        self.assertEqual(len(probs), len(self.ALL))
        self.assertIn("fault_inject: link_add_txq4 on patched: no fault injected (0 sites)", probs)
        probs = self.problems(fault_run(self.ALL, faults=(0, 326)))
        self.assertEqual(len(probs), len(self.ALL))

    def test_far_fewer_faults_than_sites_fails(self):
        self.assertEqual(self.problems(fault_run(self.ALL, faults=(16, 26))), [])
        probs = self.problems(fault_run(self.ALL, faults=(3, 326)))
        self.assertIn("fault_inject: link_add_txq4 on patched: 3 faults injected at 326 sites "
                      "(fewer than 50%)", probs)

    def test_a_pass_without_its_fault_count_fails(self):
        text = fault_ktap(self.ALL).replace("faults injected", "faults")
        run = read.ProgramRun("ktap", 0, ktap_parse.parse_results(text))
        self.assertEqual(len(self.problems(run)), len(self.ALL))

    def test_the_recorded_run_passes_and_zeroed_fails(self):
        # The debug kernel's recorded fault_inject.ktap, and the same with
        # every count of faults injected set to 0.
        ktap = (expectations.ROOT / "Documentation/results/vm-debug/patched/"
                "fault_inject.ktap").read_text()
        run = read.ProgramRun("ktap", 0, ktap_parse.parse_results(ktap))
        self.assertEqual(self.problems(run), [])
        zeroed = re.sub(r"\d+ faults injected", "0 faults injected", ktap)
        run = read.ProgramRun("ktap", 0, ktap_parse.parse_results(zeroed))
        self.assertEqual(len(self.problems(run)), len(self.ALL))

    def test_requests_are_expectations_entries(self):
        expect = expectations.load_expectations()[debug_checks.FAULT_PROGRAM]
        self.assertEqual(debug_checks.FAULT_REQUESTS, tuple(expect))
        self.assertEqual(len(debug_checks.FAULT_REQUESTS), 10)


class ProgramAgreesTest(unittest.TestCase):
    def test_requests_are_the_programs_cases(self):
        """FAULT_REQUESTS and the cases fault_inject.cpp registers agree."""
        src = (expectations.ROOT / "selftests/progs/fault_inject/fault_inject.cpp").read_text()
        for name in debug_checks.FAULT_REQUESTS:
            self.assertTrue(name.startswith(("link_add", "channels_set", "channels_grow",
                                             "qstats_dump",
                                             "filter_add", "filter_delete", "limit0")), name)
        for stem in ("link_add_txq", "channels_set_tx", "channels_grow_tx", "qstats_dump",
                     "filter_add_",
                     "filter_delete_", "limit0_"):
            self.assertIn(f'"{stem}', src)


if __name__ == "__main__":
    unittest.main()
