"""Run a command and tee its output: each line kept, written to a log file
and handed to a callback as it comes, with an optional hard timeout that
kills the command's whole process group."""

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class Finished:
    """How a teed command ended: its exit code (None when it was killed at
    the timeout) and its output (stdout and stderr together), line by line
    as printed (each with its newline)."""
    code: int | None
    timed_out: bool = False
    raw: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.raw)

    @property
    def lines(self) -> list[str]:
        return [ln.rstrip("\n") for ln in self.raw]


def run_tee(cmd: Sequence[str | os.PathLike[str]], *, cwd: str | os.PathLike[str] | None = None,
            env: dict[str, str] | None = None, log_path: str | os.PathLike[str] | None = None,
            append: bool = False, echo: Callable[[str], object] | None = None,
            timeout: float | None = None, stdin: int | None = None) -> Finished:
    """Run cmd, its output to log_path (appended with append) and each line,
    without its newline, to echo. With a timeout the command runs in a
    session of its own and the whole group is killed when it runs over."""
    out = open(log_path, "a" if append else "w") if log_path else None
    raw: list[str] = []
    proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, text=True,
                            errors="replace", stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=stdin,
                            start_new_session=timeout is not None)
    assert proc.stdout is not None

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            raw.append(line)
            if out and not out.closed:
                out.write(line)
            if echo:
                echo(line.rstrip("\n"))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # A process of the group that outlived it may hold the pipe: with a
        # timeout, the reader is not waited for long.
        thread.join(timeout=5 if timeout is not None else None)
        proc.stdout.close()
        if out:
            out.close()
    return Finished(None if timed_out else proc.returncode, timed_out, raw)
