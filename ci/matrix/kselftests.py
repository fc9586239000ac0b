"""The tree's kselftests installed on the host with the kselftest make, as
netdev CI installs them, for the VM's kselftest runner
(install_kselftests())."""

import logging
import shutil
import subprocess
import time
from pathlib import Path

logger = logging.getLogger(__name__)

SELFTESTS_DIR = "tools/testing/selftests"
# The C programs of the installed collections that the matrix's tests run,
# built one by one: (the targets that install it, its directory, its name).
# net/lib goes with net and drivers/net; xdp_helper: drivers/net/queues.py
# check_xsk.
KSFT_HELPERS = ((("net", "drivers/net"), "net/lib", "xdp_helper"),)
# On the make command line, these empty the lists of C programs and files
# the collections' Makefiles build: "install" then copies the tests, their
# libraries and settings, and writes kselftest-list.txt, compiling nothing.
LEAN_INSTALL = ("TEST_GEN_PROGS=", "TEST_GEN_PROGS_EXTENDED=", "TEST_GEN_FILES=",
                "TEST_CUSTOM_PROGS=")


def kselftest_collections(progs, tests):
    """The collections (make TARGETS) of the kselftest programs of progs,
    in order; tests: {program: COLLECTION:TEST}."""
    out = []
    for prog, kind in progs:
        coll = tests.get(prog, "").partition(":")[0] if kind == "kselftest" else ""
        if coll and coll not in out:
            out.append(coll)
    return out


def kselftest_install_commands(tree, build, dest, targets, lean=True):
    """The make commands that install the tree's selftests of targets into
    dest, as netdev CI installs them (make -C tools/testing/selftests
    TARGETS=... install), objects under build (O=), outside the tree.
    lean: without the C programs (LEAN_INSTALL), KSFT_HELPERS then built
    on their own (their collection's Makefile rule) and copied in."""
    sdir = Path(tree) / SELFTESTS_DIR
    cmds = [["make", "-C", str(sdir), f"O={build}", f"TARGETS={' '.join(targets)}",
             f"INSTALL_PATH={dest}", *(LEAN_INSTALL if lean else ()), "install"]]
    for with_, coll, prog in KSFT_HELPERS if lean else ():
        if set(with_) & set(targets):
            out = Path(build) / "kselftest" / coll
            cmds.append(["make", "-C", str(sdir / coll), f"OUTPUT={out}", f"{out}/{prog}"])
            cmds.append(["install", "-D", "-m", "755", f"{out}/{prog}",
                         f"{dest}/{coll}/{prog}"])
    return cmds


def install_kselftests(tree, root, targets, lean=True):
    """(install directory, seconds): the tree's selftests of targets
    installed into root/install (emptied first), built in root/build;
    the tree itself is not written. A failing command is a RuntimeError
    naming it; a test the installed list lacks is the VM's to find (the
    runner refuses it, as netdev CI's would)."""
    root = Path(root)
    dest, build = root / "install", root / "build"
    shutil.rmtree(dest, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    logger.info(f"  installing the tree's selftests ({' '.join(targets)}) into {dest}"
                + ("" if lean else ", every C program built"))
    for cmd in kselftest_install_commands(Path(tree).resolve(), build, dest, targets, lean):
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            tail = " | ".join((res.stdout + res.stderr).strip().splitlines()[-6:])
            raise RuntimeError(f"selftests install: {' '.join(cmd)} exited "
                               f"{res.returncode}: {tail}")
    if not (dest / "run_kselftest.sh").is_file():
        raise RuntimeError(f"selftests install: no run_kselftest.sh in {dest}")
    return dest, time.monotonic() - start
