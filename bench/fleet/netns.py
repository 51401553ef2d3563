"""Hosts made of Linux network namespaces, joined by veth pairs to a bridge in a namespace of its own.

Nothing here touches the machine's own network: the bridge lives in the ``<prefix>-sw``
namespace, each host's ``eth0`` is one end of a veth pair whose other end is a bridge port, and
addresses come from 10.231.0.0/24. ``cut``/``restore`` set a host's link down/up. ``destroy``
kills every process left in the namespaces (by pid, from ``ip netns pids``) and deletes them; it
runs at the end whatever happened, and the next run first removes what a killed run left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field

SUBNET = "10.231.0"
PREFIX = "tflt"  # namespace names: tflt<pid>-<host>


def ip(*args: str, check: bool = True) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def namespaces() -> list[str]:
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


@dataclass
class Net:
    """``hosts``: name -> last octet. ``ns(name)`` is the namespace, ``addr(name)`` its address."""

    hosts: dict[str, int]
    prefix: str = field(default_factory=lambda: f"{PREFIX}{os.getpid()}")
    created: list[str] = field(default_factory=list)

    def ns(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def addr(self, host: str) -> str:
        return f"{SUBNET}.{self.hosts[host]}"

    @property
    def switch(self) -> str:
        return f"{self.prefix}-sw"

    def create(self) -> None:
        ip("netns", "add", self.switch)
        self.created.append(self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")
        ip("-n", self.switch, "link", "set", "lo", "up")
        for host in self.hosts:
            ns = self.ns(host)
            ip("netns", "add", ns)
            self.created.append(ns)
            port = f"p-{host}"[:15]
            ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("-n", self.switch, "link", "set", port, "master", "br0")
            ip("-n", self.switch, "link", "set", port, "up")
            ip("-n", ns, "addr", "add", f"{self.addr(host)}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")

    def cut(self, host: str) -> None:
        ip("-n", self.ns(host), "link", "set", "eth0", "down")

    def restore(self, host: str) -> None:
        ip("-n", self.ns(host), "link", "set", "eth0", "up")

    def exec_prefix(self, host: str) -> list[str]:
        return ["ip", "netns", "exec", self.ns(host)]

    def destroy(self) -> None:
        for ns in reversed(self.created):
            kill_namespace(ns)
        self.created.clear()


def kill_namespace(ns: str) -> None:
    """SIGTERM then SIGKILL every process in ``ns`` (by pid), then delete it."""
    for sig, pause in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 0.5)):
        pids = [int(p) for p in ip("netns", "pids", ns, check=False).split()]
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not pids:
            break
        deadline = time.monotonic() + pause
        while time.monotonic() < deadline and ip("netns", "pids", ns, check=False).split():
            time.sleep(0.1)
    ip("netns", "del", ns, check=False)


def remove_stale() -> list[str]:
    """Namespaces an earlier run (a pid no longer alive) left behind."""
    removed = []
    for ns in namespaces():
        if not ns.startswith(PREFIX):
            continue
        try:
            owner = int(ns[len(PREFIX) :].split("-")[0])
        except ValueError:
            continue
        if owner != os.getpid() and not os.path.exists(f"/proc/{owner}"):
            kill_namespace(ns)
            removed.append(ns)
    return removed
