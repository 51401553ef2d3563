"""Small process helpers shared by the PostgreSQL and Redis managers."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from config.errors import ServiceError

PG_USER = "tempr_pg"
"""PostgreSQL refuses to run as root, so as root tempr runs it as this system user."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    """True when a server could listen on ``port`` now.

    Binds with SO_REUSEADDR, as Redis and PostgreSQL do: sockets of a stopped server that linger
    in TIME_WAIT do not make its port look taken (which once moved a restarted Redis to a new
    port, stranding every client on the old one); a live listener still does."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def port_answers(port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def stable_port(port_file: Path, what: str) -> int:
    """The port recorded in ``port_file`` (chosen once, on first start, then kept).

    Clients (the gateway, every worker) hold URLs with this port and reconnect to it when the
    service returns, so a restart must never move it: if another process holds it, fail loudly
    rather than pick a new one."""
    try:
        port = int(port_file.read_text())
    except (OSError, ValueError):
        port = free_port()
        port_file.parent.mkdir(parents=True, exist_ok=True)
        port_file.write_text(str(port))
        return port
    if not port_is_free(port):
        raise ServiceError(
            f"{what}'s port {port} (recorded in {port_file}) is taken by another process; "
            f"stop that process, or delete {port_file} to let tempr choose a new port "
            "(running gateways and workers must then be restarted)"
        )
    return port


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (OSError, IndexError):
        return True
    return state != "Z"


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc), e.g. a prefork worker's pool processes."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def wait_until(check: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise ServiceError(f"timed out after {timeout:.0f}s waiting for {what}")


def running_as_root() -> bool:
    return os.geteuid() == 0


def ensure_service_user() -> tuple[int, int]:
    """Create the unprivileged PostgreSQL user when running as root; return its uid/gid."""
    try:
        entry = pwd.getpwnam(PG_USER)
    except KeyError:
        run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER])
        entry = pwd.getpwnam(PG_USER)
    return entry.pw_uid, entry.pw_gid


def make_traversable(path: Path) -> None:
    """Let the service user reach ``path``: every parent directory needs o+x."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.stat().st_mode
            if not mode & 0o001:
                parent.chmod(mode | 0o001)
        except OSError:
            continue


def run(cmd: Sequence[str], *, user: str | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command (as ``user`` when given), raising ServiceError with its output on failure."""
    try:
        done = subprocess.run(
            list(cmd),
            user=user,
            group=user,
            extra_groups=[] if user else None,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServiceError(f"could not run {cmd[0]}: {exc}") from exc
    if done.returncode != 0:
        raise ServiceError(
            f"{Path(cmd[0]).name} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
        )
    return done.stdout
