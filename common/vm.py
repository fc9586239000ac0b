"""Boot a kernel build under virtme-ng (TCG) and run one command in it.

The guest sees the host root filesystem read-only and one read/write
directory for results. The run fails when the command fails, when the VM
does not finish before the hard timeout (it is killed), or when the console
log shows a kernel splat, whatever the command returned.
"""

import argparse
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common.proc import run_tee
from common.splats import find_splats

VNG = os.environ.get("VNG", "vng")


@dataclass
class VmResult:
    kernel: str
    command: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    splats: list[str] = field(default_factory=list)
    log_path: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.splats

    def reason(self) -> str:
        if self.timed_out:
            return f"VM killed after {self.seconds:.0f}s timeout"
        if self.splats:
            return f"kernel splat: {self.splats[0]}"
        if self.exit_code != 0:
            return f"command exited {self.exit_code}"
        return "ok"


# 4-level paging. TCG's CPU offers LA57; with 5-level paging, identify_cpu()
# clears boot_cpu_data's capabilities (X86_FEATURE_LA57 among them) with
# interrupts on, and KASAN, which sizes its shadow by pgtable_l5_enabled(),
# reports the irq_desc lock of an interrupt in that window as a wild access
# (the debug kernel, 7.3.4, during boot; lockdep then turns itself off).
BOOT_ARGS = "no5lvl"


def run_vm(kernel_dir: str | Path, command: str, rwdir: str | Path, timeout: float = 600,
           cpus: int = 2, memory: str = "1G", log_path: str | Path | None = None,
           echo: Callable[[str], object] | None = None, qemu_opts: str = "",
           append: str = "") -> VmResult:
    """Run `command` in a VM booted from the build directory `kernel_dir`;
    qemu_opts: more QEMU options (vng --qemu-opts), e.g. icount; append:
    more kernel command-line parameters."""
    kernel_dir = Path(kernel_dir).resolve()
    image = kernel_dir / "arch/x86/boot/bzImage"
    if not image.is_file() and os.environ.get("VNG") is None:
        raise FileNotFoundError(f"no kernel image at {image}: build it first")
    rwdir = Path(rwdir).resolve()
    rwdir.mkdir(parents=True, exist_ok=True)
    # vng cannot always relay the command's exit status (its script console
    # fallback): the guest writes it into the shared directory instead.
    status_file = rwdir / ".vm-exit-status"
    status_file.unlink(missing_ok=True)
    wrapped = f"{command}; echo $? > {shlex.quote(str(status_file))}"
    cmd = [VNG, "--run", str(kernel_dir), "--disable-kvm", "--force-initramfs",
           "--cpus", str(cpus), "--memory", memory, "--verbose",
           "--append", f"{BOOT_ARGS} {append}".strip(), "--rwdir", str(rwdir), "--exec", wrapped]
    if qemu_opts:
        cmd[-2:-2] = [f"--qemu-opts={qemu_opts}"]
    start = time.monotonic()
    done = run_tee(cmd, log_path=log_path, echo=echo, timeout=timeout, stdin=subprocess.DEVNULL)
    timed_out = done.timed_out
    text = "\n".join(done.lines)
    exit_code = done.code
    if not timed_out:
        try:
            exit_code = int(status_file.read_text().strip())
        except (OSError, ValueError):
            exit_code = exit_code or -1  # the guest never got to the end
    return VmResult(kernel=str(kernel_dir), command=command,
                    exit_code=exit_code, timed_out=timed_out,
                    seconds=time.monotonic() - start, splats=find_splats(text),
                    log_path=str(log_path or ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel_dir", help="kernel build directory (O=) holding bzImage")
    ap.add_argument("command")
    ap.add_argument("--rwdir", default="results/vm")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--log")
    args = ap.parse_args(argv)
    res = run_vm(args.kernel_dir, args.command, args.rwdir, args.timeout, log_path=args.log,
                 echo=print)
    print(f"vm: {res.reason()} ({res.seconds:.0f}s)", file=sys.stderr)
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
