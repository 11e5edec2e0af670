"""A throwaway PostgreSQL cluster for fault scripts that stop and start the server: initdb into
a temp dir, its own loopback port and socket dir, trust auth, fsync on, removed on exit (also on
Ctrl-C or an error). The machine's own PostgreSQL is never touched.

As root the binaries run as the `postgres` OS user (initdb refuses root); as anyone else they run
as that user. PG_BIN names the binaries' folder; else the newest /usr/lib/postgresql/*/bin."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

CONF = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{sockets}'
max_connections = 100
shared_buffers = 64MB
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = minimal
max_wal_senders = 0
log_min_messages = warning
"""


def bindir() -> Path:
    explicit = os.environ.get("PG_BIN")
    if explicit:
        return Path(explicit)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    if not found:
        raise RuntimeError("no PostgreSQL binaries: install postgresql or set PG_BIN")
    return Path(found[-1])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class Cluster:
    """`with Cluster(5499) as pg:` → pg.url(dbname); pg.stop(mode), pg.start(); removed at exit."""

    def __init__(self, port: int = 5499) -> None:
        if not port_free(port):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.port = port
        self.bin = bindir()
        self.root: Path | None = None
        self.user = "postgres" if os.geteuid() == 0 else None

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(
            cmd, check=check, capture_output=True, text=True, start_new_session=True, cwd=self.root
        )

    def __enter__(self) -> Cluster:
        self.root = Path(tempfile.mkdtemp(prefix="spoke-pgfault-"))
        try:
            if self.user:
                entry = pwd.getpwnam(self.user)
                os.chown(self.root, entry.pw_uid, entry.pw_gid)
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-instructions",
            )
            with open(self.data / "postgresql.conf", "a") as conf:
                conf.write(CONF.format(port=self.port, sockets=self.root))
            self.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def start(self) -> float:
        """Start and wait until it accepts connections; returns the seconds that took."""
        t = time.monotonic()
        self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.root / "log")
        )
        return time.monotonic() - t

    def stop(self, mode: str = "fast") -> float:
        """`pg_ctl stop -m fast|immediate` (immediate is a crash: recovery runs at the next start)."""
        t = time.monotonic()
        self._run("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", str(self.data))
        return time.monotonic() - t

    def running(self) -> bool:
        return (
            self.root is not None
            and self._run("pg_ctl", "status", "-D", str(self.data), check=False).returncode == 0
        )

    def log_tail(self, lines: int = 20) -> str:
        path = self.root / "log"
        return (
            "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
            if path.exists()
            else ""
        )

    def __exit__(self, *exc) -> None:
        if self.root is None:
            return
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(
                    "pg_ctl",
                    "stop",
                    "-w",
                    "-t",
                    "30",
                    "-m",
                    "immediate",
                    "-D",
                    str(self.data),
                    check=False,
                )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
