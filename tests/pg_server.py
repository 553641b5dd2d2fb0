"""A private, throwaway PostgreSQL server for the board's tests (a helper, not a test file).

Why a private cluster: the tests must run against a real server (claims, row locks, LISTEN/NOTIFY
are the point) without touching any cluster the machine already runs. So we ``initdb`` into a
temporary directory, start it on a free loopback port with its socket in that directory, and
delete it afterwards. ``initdb`` refuses to run as root, so as root the server runs as the
``postgres`` system user that Debian's ``postgresql`` package creates.

Durability is switched off (``fsync=off`` …): the data is thrown away, and it keeps the suite fast.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

SUPERUSER = "moot"


class ServerUnavailable(RuntimeError):
    """The private server could not be started (the message says why)."""


def find_bindir() -> Path | None:
    """The directory with ``initdb``/``pg_ctl``: ``MOOT_PG_BINDIR``, Debian's layout, or ``PATH``."""
    if env := os.environ.get("MOOT_PG_BINDIR"):
        return Path(env) if (Path(env) / "initdb").exists() else None

    def major(path: str) -> int:
        match = re.search(r"/postgresql/(\d+)/", path)
        return int(match.group(1)) if match else 0

    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=major)
    if debian:
        return Path(debian[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PrivateServer:
    """A running private cluster; :meth:`stop` shuts it down and deletes its files."""

    bindir: Path
    root: Path
    port: int
    run_as: str | None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.root / "server.log"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(self.bindir / args[0]), *args[1:]],
            user=self.run_as,
            cwd=self.root,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and proc.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise ServerUnavailable(
                f"{args[0]} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}\n{tail}"
            )
        return proc

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")  # fmt: skip
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def create_database(self, name: str | None = None) -> str:
        """A fresh, empty database; its URL (one per test keeps tests independent)."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')  # type: ignore[arg-type]
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def start_private_server(bindir: Path) -> PrivateServer:
    """initdb + pg_ctl start on a free loopback port; raises :class:`ServerUnavailable`."""
    run_as: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise ServerUnavailable(
                "running as root and there is no 'postgres' user for initdb (install the Debian package 'postgresql')"
            ) from None
        run_as = "postgres"
    last: ServerUnavailable | None = None
    for _ in range(3):  # a port taken between probing and binding: try another
        root = Path(tempfile.mkdtemp(prefix="moot-pg-"))
        if run_as:
            entry = pwd.getpwnam(run_as)
            os.chown(root, entry.pw_uid, entry.pw_gid)
        server = PrivateServer(bindir=bindir, root=root, port=_free_port(), run_as=run_as)
        try:
            server.start()
        except (ServerUnavailable, OSError, subprocess.TimeoutExpired) as exc:
            server.stop()
            last = exc if isinstance(exc, ServerUnavailable) else ServerUnavailable(str(exc))
            continue
        atexit.register(server.stop)  # also when the session is interrupted
        return server
    assert last is not None
    raise last
