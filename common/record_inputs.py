"""What each stage reads: the inputs of a results record.

A record's source stamp (common/stamp.py) names the stages that made it:
the pipeline's stages that ran (ci/pipeline.py), or the tool that ran
(its module name, e.g. tools.bench.icount). Its inputs are the union of
its stages' inputs here; ci/tests/test_results_fresh.py flags a kept
record whose inputs changed since its commit.

A stage's inputs are git pathspecs, judged as one set (an exclusion
applies to that stage's paths alone), and the project modules that run
it, with every project module they import. The cover letters quote
results and build nothing: they are an input only of the stages whose
records hold them (submission and mailing-list send them: the b4
record's mbox files are the mails). The apply stage's export round trip
and the checks' cover_letter read them too, but their records hold only
that the round trip was exact and that a cover letter leads the series,
which an edit of the numbers a cover quotes does not change.
"""

from dataclasses import dataclass

COVER = ":(exclude)patches/**/0000-cover-letter.patch"
# The patches as applied and built; the cover letters are no part of them.
PATCHES = ("patches", COVER)
# The kernel a run builds: the pinned base, how it is fetched, configured
# and built. The stable trees' pins are the stable run's alone.
KERNEL = ("kernel", ":(exclude)kernel/stable", ":(exclude)kernel/known-commits.txt")
# The benchmark's tests (tools/bench/tests/) make no record.
BENCH_CODE = ("tools/bench", ":(exclude)tools/bench/tests")
# The driver of every pipeline stage: the stage order, what each needs.
PIPELINE = ("ci/pipeline.py",)


@dataclass(frozen=True)
class Inputs:
    paths: tuple[str, ...]
    modules: tuple[str, ...] = ()
    # A record of the kernels alone: a patch that touches only
    # tools/testing/selftests/, before and after, is no input, nor one
    # whose message alone changed.
    kernel_only: bool = False


STAGES = {
    # The pipeline's stages (ci/pipeline.py Pipeline.PLAN), each with the
    # driver and the module of its stage class.
    "setup": Inputs(("ci/setup-host.sh", "ci/lib", *PIPELINE), ("ci/pipeline_host.py",)),
    "base": Inputs(("kernel/base.env", "kernel/fetch-base.sh", "kernel/import-base.sh",
                    *PIPELINE), ("ci/pipeline_tree.py",)),
    "apply": Inputs((*PATCHES, *PIPELINE), ("ci/pipeline_tree.py",)),
    # CMake: the C++ selftests and tools against the applied tree's uapi headers.
    "userspace": Inputs((":(glob)**/CMakeLists.txt", "lib", "selftests", *BENCH_CODE,
                         *PIPELINE), ("ci/pipeline_host.py",)),
    # Every test of the project: everything but the documentation, as the
    # stamp's "dirty" is (README.md quotes records' numbers), and the check
    # of the documents' quotes, which follows the records it binds: a record
    # quoted anew would otherwise be stale by its own quoting.
    "host_tests": Inputs((".", ":(exclude)Documentation", ":(exclude)README.md", COVER,
                          ":(exclude)ci/tests/doc_claims.py",
                          ":(exclude)ci/tests/test_doc_numbers.py"),
                         ("ci/pipeline_host.py",)),
    "build_base": Inputs((*KERNEL, *PIPELINE), ("ci/pipeline_tree.py",)),
    "checks": Inputs((*PATCHES, "kernel", ":(exclude)kernel/stable", "ci/negative-controls",
                      *PIPELINE), ("ci/pipeline_checks.py",)),
    # b4 sends every patch and the cover letter: the mbox files hold them.
    "submission": Inputs(("patches", *PIPELINE),
                         ("ci/pipeline_submit.py", "tools/series/b4flow.py")),
    "mailing_list": Inputs(("patches", *PIPELINE), ("ci/pipeline_mail.py",)),
    "kunit": Inputs(("kunit", *PATCHES, *KERNEL, "ci/negative-controls", *PIPELINE),
                    ("ci/pipeline_boot.py",)),
    # The VM matrix: the selftests on both kernels, tc-testing with the
    # iproute2 setup-host.sh unpacks, the negative-control kernels.
    "vm": Inputs((*PATCHES, "selftests", "lib", *KERNEL, "ci/negative-controls",
                  "ci/setup-host.sh", "ci/lib/iproute2.version", *PIPELINE),
                 ("ci/pipeline_boot.py",)),
    "icount": Inputs((*PATCHES, *BENCH_CODE, "kernel", "ci/negative-controls", *PIPELINE),
                     ("ci/pipeline_bench.py", "tools/bench/icount.py"), kernel_only=True),
    "vm_debug": Inputs((*PATCHES, "selftests", "lib", *KERNEL, *PIPELINE),
                       ("ci/pipeline_boot.py",)),
    "bench": Inputs((*PATCHES, *BENCH_CODE, ":(exclude)tools/bench/icount.py",
                     ":(exclude)tools/bench/icount-guest.sh", ":(exclude)tools/bench/README.md",
                     *KERNEL, *PIPELINE),
                    ("ci/pipeline_bench.py", "tools/bench/bench.py"), kernel_only=True),
    # Records of a tool run alone, on kernels the pipeline built (named in
    # the record by the tree commit each was built from).
    # Instructions per packet of the x86 test kernels under QEMU icount, on
    # kernels the pipeline built: how it applies the series and builds them
    # (ci/pipeline_tree.py: the fragments, W=1, the unmet list).
    "tools.bench.icount": Inputs((*PATCHES, *BENCH_CODE, "kernel"),
                                 ("tools/bench/icount.py", "ci/pipeline_tree.py"),
                                 kernel_only=True),
    # The UML benchmark; icount.py and its guest drive the x86 kernels instead.
    # Its kernels are built by the command its record names (results
    # README): kernel/build.sh with kernel/configs/uml-bench.config and, for
    # the lock kernel, tools/bench/variants/dummy-queue-lock.patch, all in
    # these paths; the pipeline's bench stage, which builds them the same
    # way, does not run.
    "tools.bench.bench": Inputs((*PATCHES, *BENCH_CODE, ":(exclude)tools/bench/icount.py",
                                 ":(exclude)tools/bench/icount-guest.sh",
                                 ":(exclude)tools/bench/README.md", *KERNEL),
                                ("tools/bench/bench.py",), kernel_only=True),
    # The stable trees: stable.py applies the net fixes, stable_vm.py boots them.
    "ci.stable_vm": Inputs((*PATCHES, "selftests", "lib", "kernel",
                            ":(exclude)kernel/known-commits.txt"),
                           ("ci/stable_vm.py", "tools/series/stable.py")),
}
