"""A real PostgreSQL server for the database outputs' tests: Debian's binaries, `initdb` in a
temporary folder, loopback only, a free port, a password required (SCRAM), started once per
test run. As root the server runs as Debian's `postgres` user (PostgreSQL refuses root)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

USER = "asaql"
DATABASE = "asaql"


def postgres_bin() -> Path | None:
    """The newest PostgreSQL's binaries Debian installed, or those on the PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


@dataclass
class PostgresServer:
    folder: Path
    port: int
    password: str
    bin: Path
    owner: str | None  # the user the server runs as (root cannot)

    @property
    def location(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    def table(self, name: str) -> str:
        return f"{self.location}/{name}"

    def connect(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=USER, dbname=DATABASE,
                               password=self.password, autocommit=True)

    def execute(self, sql: str, params=None) -> list[tuple]:
        with self.connect() as connection:
            cursor = connection.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def stop(self) -> None:
        subprocess.run(self._as_owner([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"),
                                       "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _as_owner(self, command: list[str]) -> list[str]:
        return ["runuser", "-u", self.owner, "--", *command] if self.owner else command


def start_postgres() -> PostgresServer:
    """initdb, then the server on a free loopback port; raises RuntimeError with its log."""
    binaries = postgres_bin()
    if binaries is None:
        raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    owner = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="asaql-postgres-"))
    password = "pw-" + os.urandom(8).hex()
    server = PostgresServer(folder, _free_port(), password, binaries, owner)
    (folder / "password").write_text(password + "\n")
    if owner:
        shutil.chown(folder, owner)
        shutil.chown(folder / "password", owner)
        os.chmod(folder, 0o700)
    run = lambda command: subprocess.run(server._as_owner(command), capture_output=True,  # noqa: E731
                                         text=True, timeout=120)
    made = run([str(binaries / "initdb"), "-D", str(folder / "data"), "-U", USER,
                "--auth=scram-sha-256", f"--pwfile={folder / 'password'}", "-E", "UTF8",
                "--no-sync", "--locale=C"])
    if made.returncode != 0:
        raise RuntimeError(f"initdb failed: {made.stderr[-2000:]}")
    options = (f"-c listen_addresses=127.0.0.1 -c port={server.port} -c fsync=off "
               f"-c unix_socket_directories={folder} -c max_connections=50")
    started = run([str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-o", options,
                   "-l", str(folder / "server.log"), "-w", "-t", "60", "start"])
    if started.returncode != 0:
        log = (folder / "server.log").read_text() if (folder / "server.log").exists() else ""
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr[-1000:]} {log[-2000:]}")
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=server.port, user=USER, dbname="postgres",
                         password=password, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
    return server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
