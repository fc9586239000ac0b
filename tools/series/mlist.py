#!/usr/bin/env python3
"""A mailing list on loopback: SMTP into a public-inbox archive served over HTTP.

  smtp     aiosmtpd on 127.0.0.1 (`python3 -m tools.series.mlist smtp`, a
           process of its own): accepts mail for the list address only
           (550 for any other recipient: it relays nothing) and delivers
           each message with `public-inbox-mda --no-precheck` into the
           inbox, keeping a copy in the spool (what came in, to count
           against what the archive holds)
  archive  a public-inbox v2 inbox named "all" (b4 takes a midmask under
           /all/ as a public-inbox that needs no redirect lookup, like lore's)
  httpd    `public-inbox-httpd` on 127.0.0.1, read-only, for b4 (midmask)

List (a context manager) makes the inbox, starts both servers on free ports,
waits until each answers and stops them on the way out, also on failure. A
port in use, a server that exits or does not answer in time is a ListError
naming the server; nothing waits without a timeout. check_loopback refuses any
SMTP server other than 127.0.0.1 in a git configuration (sendemail.*).
"""

import argparse
import asyncio
import email
import email.policy
import logging
import os
import signal
import smtplib
import socket
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from common.git import git_bytes, git_run
from common.paths import ROOT

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
INBOX = "all"
START_TIMEOUT = 30  # seconds for a server to answer
STOP_TIMEOUT = 10
MDA_TIMEOUT = 60
# Debian's python3: it has aiosmtpd (python3-aiosmtpd).
PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


# Lines up to SMTP's 998: a long Message-ID in In-Reply-To/References stays
# one token instead of an RFC 2047 encoded word no archive threads by.
WIRE = email.policy.SMTP.clone(max_line_length=998)


class ListError(Exception):
    """A named failure of the list: which server or check, and why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def ensure_free(port: int, name: str) -> None:
    with socket.socket() as s:
        try:
            s.bind((LOOPBACK, port))
        except OSError as err:
            raise ListError(f"{name}: port {LOOPBACK}:{port} in use ({err.strerror})") from None


def wait_port(port: int, name: str, proc: "subprocess.Popen[Any] | None" = None,
              timeout: float = START_TIMEOUT, log_path: str | Path | None = None) -> None:
    """Until something accepts on 127.0.0.1:port; a ListError when `proc`
    exits first or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise ListError(f"{name} exited with code {proc.returncode} before answering on "
                            f"{LOOPBACK}:{port}{tail_of(log_path)}")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=1):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ListError(f"{name} did not answer on {LOOPBACK}:{port} within {timeout}s"
                            f"{tail_of(log_path)}")
        time.sleep(0.2)


def tail_of(path: str | Path | None, n: int = 5) -> str:
    if not path or not Path(path).is_file():
        return ""
    lines = Path(path).read_text(errors="replace").strip().splitlines()[-n:]
    return (":\n  " + "\n  ".join(lines)) if lines else ""


def stop(proc: "subprocess.Popen[Any] | None", timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM to the process group, SIGKILL after `timeout`."""
    if proc is None or proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue


def git_config_list(path: str | Path) -> list[tuple[str, str]]:
    res = git_run(None, "config", "-f", str(path), "--list", capture="apart", timeout=30)
    pairs = []
    for line in res.stdout.splitlines():
        key, _, value = line.partition("=")
        pairs.append((key.lower(), value))
    return pairs


def check_loopback(config_path: str | Path) -> None:
    """Refuse a git configuration whose SMTP server (sendemail.smtpserver or
    sendemail.<identity>.smtpserver) is anything but 127.0.0.1, or unset
    (b4 would then use its web endpoint or localhost's MTA)."""
    servers = [(k, v) for k, v in git_config_list(config_path)
               if k.startswith("sendemail.") and k.endswith(".smtpserver")]
    if not servers:
        raise ListError(f"refused: no sendemail.smtpserver in {config_path}: the list is "
                        f"reached only at {LOOPBACK}")
    bad = [f"{k}={v}" for k, v in servers if v.strip() != LOOPBACK]
    if bad:
        raise ListError(f"refused: {', '.join(bad)} in {config_path}: mail goes only to "
                        f"{LOOPBACK}, never to another host")


def send(port: int, msg: EmailMessage | bytes, sender: str, rcpt: str, host: str = LOOPBACK,
         timeout: float = 30) -> None:
    """One message to the list's SMTP server (and only to 127.0.0.1)."""
    if host != LOOPBACK:
        raise ListError(f"refused: SMTP server {host} is not {LOOPBACK}")
    data = msg if isinstance(msg, bytes) else msg.as_bytes(policy=WIRE)
    with smtplib.SMTP(host, port, timeout=timeout) as s:
        s.sendmail(sender, [rcpt], data)


class Archive:
    """The inbox as git holds it: one commit per message, the message in `m`."""

    def __init__(self, inboxdir: str | Path) -> None:
        self.dir = Path(inboxdir)

    def epochs(self) -> list[Path]:
        return sorted((self.dir / "git").glob("*.git"), key=lambda p: int(p.stem))

    def commits(self) -> list[tuple[Path, str]]:
        out = []
        for ep in self.epochs():
            res = git_run(None, "--git-dir", str(ep), "rev-list", "--reverse", "HEAD",
                          capture="apart", timeout=60)
            if res.returncode == 0:  # an epoch without commits yet has no HEAD
                out += [(ep, c) for c in res.stdout.split()]
        return out

    def raw(self, epoch: Path, commit: str) -> bytes:
        res = git_bytes(None, "--git-dir", str(epoch), "show", f"{commit}:m", timeout=60)
        res.check_returncode()
        return res.stdout

    def count(self) -> int:
        return len(self.commits())

    def message_ids(self) -> list[str]:
        return [str(email.message_from_bytes(self.raw(ep, c)).get("Message-ID", "")).strip()
                for ep, c in self.commits()]


class List:
    """The list's servers (see the module doc) under `root`, for `address`."""

    def __init__(self, root: str | Path, address: str, smtp_port: int | None = None,
                 http_port: int | None = None,
                 timeout: float = START_TIMEOUT) -> None:
        self.root, self.address, self.timeout = Path(root), address, timeout
        self.smtp_port, self.http_port = smtp_port, http_port
        self.inbox = self.root / "inbox"
        self.spool = self.root / "spool"
        self.pi_config = self.root / "pi-config"
        self.procs: dict[str, subprocess.Popen[Any]] = {}

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.http_port}/{INBOX}"

    def env(self) -> dict[str, str]:
        return {**os.environ, "PI_CONFIG": str(self.pi_config), "HOME": str(self.root / "home")}

    def init(self) -> None:
        subprocess.run(["rm", "-rf", str(self.root)], check=True, timeout=60)
        (self.root / "home").mkdir(parents=True)
        self.spool.mkdir()
        res = subprocess.run(["public-inbox-init", "-V2", "-L", "basic", INBOX, str(self.inbox),
                              self.url, self.address], env=self.env(), text=True,
                             capture_output=True, timeout=120)
        if res.returncode:
            raise ListError(f"public-inbox-init exited {res.returncode}: {res.stderr.strip()}")
        # No spam filter (spamc) on a list only this machine writes to.
        git_run(None, "config", "-f", str(self.pi_config), "publicinboxmda.spamcheck", "none",
                capture="none", timeout=30).check_returncode()

    def start_server(self, name: str, cmd: list[str], port: int,
                     cwd: str | Path | None = None) -> None:
        ensure_free(port, name)
        log_path = self.root / f"{name}.log"
        with open(log_path, "w") as out:
            proc = subprocess.Popen(cmd, env=self.env(), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd)
        self.procs[name] = proc
        wait_port(port, name, proc, self.timeout, log_path)
        logger.info(f"  {name} answering on {LOOPBACK}:{port} (pid {proc.pid})")

    def __enter__(self) -> "List":
        try:
            self.smtp_port = self.smtp_port or free_port()
            self.http_port = self.http_port or free_port()
            self.init()
            # A module of the package (it runs git through common.git): run
            # from the top of the repository.
            self.start_server("smtp", [PYTHON, "-m", "tools.series.mlist", "smtp",
                                       "--port", str(self.smtp_port), "--address", self.address,
                                       "--spool", str(self.spool)], self.smtp_port, cwd=ROOT)
            self.start_server("httpd", ["public-inbox-httpd", "-l",
                                        f"http://{LOOPBACK}:{self.http_port}"], self.http_port)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for name in list(self.procs):
            stop(self.procs.pop(name))

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False

    def archive(self) -> Archive:
        return Archive(self.inbox)

    def spooled(self) -> list[Path]:
        return sorted(self.spool.glob("*.eml"))

    def send(self, msg: EmailMessage | bytes, sender: str) -> None:
        # Before __enter__ there is no port: 0 means to smtplib what None did.
        send(self.smtp_port or 0, msg, sender, self.address)


# -- the SMTP server process ---------------------------------------------

class Handler:
    """aiosmtpd handler: the list address only, each message into the inbox."""

    def __init__(self, address: str, spool: str | Path) -> None:
        self.address, self.spool, self.n = address.lower(), Path(spool), 0

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address.lower() != self.address:
            return f"550 5.1.1 <{address}>: only <{self.address}> is served here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        data = envelope.original_content or envelope.content
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        self.n += 1
        path = self.spool / f"{self.n:05d}.eml"
        path.write_bytes(data)
        env = {**os.environ, "ORIGINAL_RECIPIENT": self.address}
        proc = await asyncio.create_subprocess_exec(
            "public-inbox-mda", "--no-precheck", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(data), MDA_TIMEOUT)
        except asyncio.TimeoutError:
            proc.kill()
            path.rename(path.with_suffix(".failed"))
            return "451 4.3.0 archive timed out"
        if proc.returncode:
            path.rename(path.with_suffix(".failed"))
            print(f"public-inbox-mda exited {proc.returncode}: {out.decode(errors='replace')}",
                  flush=True)
            return "451 4.3.0 archive failed"
        return "250 OK archived"


def serve(port: int, address: str, spool: str | Path) -> None:
    from aiosmtpd.controller import Controller

    controller = Controller(Handler(address, spool), hostname=LOOPBACK, port=port)
    controller.start()
    print(f"smtp: {address} on {LOOPBACK}:{port}", flush=True)
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    parent = os.getppid()
    try:
        # Also gone when the process that started it is (killed, not stopped).
        while not stopping and os.getppid() == parent:
            time.sleep(0.2)
    finally:
        controller.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("smtp", help="the list's SMTP server (run by List)")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--address", required=True)
    s.add_argument("--spool", required=True)
    args = ap.parse_args(argv)
    serve(args.port, args.address, args.spool)
    return 0


if __name__ == "__main__":
    sys.exit(main())
