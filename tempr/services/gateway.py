"""The local HTTP gateway `tempr services up` starts beside the workers (and `down` stops).

Why it exists: a `tempr recall` that talks to the fleet through Celery must import Celery, kombu,
redis-py and pydantic first, which is most of its wall time (issue 12: ≤ 0.5 s on a warm fleet;
0.4–0.9 s measured on a 2-core machine, 1.2–1.7 s on a slower one). A long-lived gateway has paid
those imports once; the CLI then needs only the standard library's HTTP client
(``tempr.cli.quick``). The gateway is the same app as `tempr api` (every route, the console), bound
to 127.0.0.1 on a port of its own: the one recorded in ``<state>/gateway/port`` when it is free,
else a new free one, so it never collides with a `tempr api` on ``TEMPR_API_PORT``.

``<state>/gateway/gateway.json`` tells clients where it is and which configuration it was started
with: the ``fingerprint`` of every ``TEMPR_*`` variable (but the caller's own key) and of ``.env``.
A CLI whose fingerprint differs (another database, another broker, another auth mode) must not
use it, and falls back to the Celery path, which follows its own settings. This module (and
``tempr.services.process``) imports nothing beyond the standard library and ``config.errors``,
so the CLI's quick path can read that file cheaply.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tempr.services.process import pid_alive

INFO_FILE = "gateway.json"
CLIENT_ONLY = frozenset({"TEMPR_API_KEY"})
"""Variables that change what a client sends, not how the gateway behaves: left out of the fingerprint."""


def config_fingerprint(environ: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """A digest of the configuration a process would load: ``TEMPR_*`` variables (names compared
    case-insensitively, as pydantic-settings reads them) and the bytes of ``.env`` in ``cwd``."""
    env = os.environ if environ is None else environ
    pairs = sorted((k.upper(), v) for k, v in env.items() if k.upper().startswith("TEMPR_"))
    digest = hashlib.sha256(json.dumps([p for p in pairs if p[0] not in CLIENT_ONLY]).encode())
    try:
        digest.update((cwd or Path.cwd()).joinpath(".env").read_bytes())
    except OSError:
        pass
    return digest.hexdigest()


def gateway_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """What the gateway's process gets on top of the caller's environment: one embedding thread
    (it embeds one query per miss, ``tempr.api.miss``; the runtime's default, a spinning thread per
    core, took the cores from the strategies as it did in the analyse pool: BENCHMARKS.md, "One
    embedding thread per process"), unless ``TEMPR_EMBEDDER_THREADS`` is set already."""
    env = os.environ if environ is None else environ
    return {} if "TEMPR_EMBEDDER_THREADS" in env else {"TEMPR_EMBEDDER_THREADS": "1"}


@dataclass(frozen=True)
class GatewayInfo:
    url: str
    pid: int
    fingerprint: str


def read_info(root: Path) -> GatewayInfo | None:
    """What ``gateway.json`` under ``root`` says, or None (absent, unreadable, incomplete)."""
    try:
        raw = json.loads((root / INFO_FILE).read_text())
        return GatewayInfo(str(raw["url"]), int(raw["pid"]), str(raw["fingerprint"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def answers(url: str, timeout_s: float = 0.5) -> bool:
    """True when ``GET /healthz`` answers 200."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=timeout_s) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


class LocalGateway:
    """The detached gateway under ``<state>/gateway``: pidfile, log, port file and ``gateway.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def log(self) -> Path:
        return self.root / "gateway.log"

    def running(self) -> GatewayInfo | None:
        info = read_info(self.root)
        return info if info is not None and pid_alive(info.pid) else None

    def start(self, *, port: int | None = None, timeout_s: float = 60.0) -> GatewayInfo:
        """Start it (or return the one running) and wait until it answers (``launch``, then ``wait``)."""
        return self.wait(self.launch(port=port), timeout_s=timeout_s)

    def launch(self, *, port: int | None = None) -> GatewayInfo:
        """Start the process (or return the one running) without waiting for it to answer."""
        current = self.running()
        if current is not None:
            return current
        self.root.mkdir(parents=True, exist_ok=True)
        port = port or self._port()
        command = [sys.executable, "-m", "tempr.cli.main", "api", "--host", "127.0.0.1", "--port", str(port)]
        with open(self.log, "ab") as log:
            child = subprocess.Popen(
                [*command, "--log-level", "warning"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **gateway_env(), "HF_HUB_OFFLINE": "1"},
            )
        return GatewayInfo(f"http://127.0.0.1:{port}", child.pid, config_fingerprint())

    def wait(self, info: GatewayInfo, *, timeout_s: float = 60.0) -> GatewayInfo:
        """Wait until ``info``'s gateway answers ``/healthz``, then publish ``gateway.json``.

        Raises ``ServiceError`` (and stops the process) when it exits or does not answer in time."""
        from config.errors import ServiceError

        deadline = time.monotonic() + timeout_s
        while not answers(info.url, timeout_s=0.5):
            if not pid_alive(info.pid) or time.monotonic() > deadline:
                if pid_alive(info.pid):
                    os.kill(info.pid, signal.SIGKILL)
                raise ServiceError(f"the local gateway did not start on {info.url}; see {self.log}")
            time.sleep(0.1)
        tmp = self.root / f"{INFO_FILE}.tmp"
        tmp.write_text(json.dumps(info.__dict__))
        tmp.replace(self.root / INFO_FILE)  # readers see the whole file or none
        return info

    def _port(self) -> int:
        """The recorded port while it is free, else a new free one (recorded for next time)."""
        from tempr.services.process import free_port, port_is_free

        port_file = self.root / "port"
        try:
            port = int(port_file.read_text())
            if port_is_free(port):
                return port
        except (OSError, ValueError):
            pass
        port = free_port()
        port_file.write_text(str(port))
        return port

    def stop(self, timeout_s: float = 15.0) -> bool:
        """Stop the gateway this folder records (SIGTERM, then SIGKILL); True when one was running."""
        info = self.running()
        (self.root / INFO_FILE).unlink(missing_ok=True)
        if info is None:
            return False
        os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(info.pid):
            os.kill(info.pid, signal.SIGKILL)
        return True
