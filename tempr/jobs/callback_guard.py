"""Which callback URLs tempr may POST to, and the address it then connects to (SSRF guard).

A callback URL is refused when its host is a cloud-metadata name, or when any address it resolves
to is not a public unicast address: loopback, private (RFC 1918, ULA), shared (100.64/10),
link-local, metadata, multicast, unspecified, documentation and other reserved ranges are all
refused unless they fall in an allow-listed network (``TEMPR_WEBHOOK_ALLOW_NETWORKS``, e.g.
``127.0.0.1/32`` for a receiver on this host).

IPv6 forms that carry an IPv4 address are judged by the address they carry, so
``[::ffff:169.254.169.254]`` (IPv4-mapped), ``[64:ff9b::a9fe:a9fe]`` (NAT64),
``[2002:a9fe:a9fe::]`` (6to4), Teredo (``2001::/32``, server and client) and the deprecated
IPv4-compatible ``[::a9fe:a9fe]`` cannot smuggle a forbidden IPv4 address past the check;
local-use NAT64 (``64:ff9b:1::/48``), whose embedding varies by site, is refused outright.

``resolve_callback`` returns the address that passed the check; the delivery connects to exactly
that address (Host header and TLS SNI keep the name), so DNS cannot answer one address to the check
and another to the connection (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from config.errors import ValidationError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Iterable[str]]

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


@dataclass(frozen=True)
class CallbackTarget:
    """A checked callback: the URL as given, its host and port, and the address to connect to."""

    url: str
    host: str
    port: int
    address: Address

    def pinned_url(self) -> str:
        """The URL with its host replaced by the checked address (send with ``Host: host``)."""
        parts = urlsplit(self.url)
        literal = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        default = 443 if parts.scheme == "https" else 80
        netloc = literal if self.port == default else f"{literal}:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))

    def host_header(self) -> str:
        parts = urlsplit(self.url)
        default = 443 if parts.scheme == "https" else 80
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == default else f"{name}:{self.port}"


def parse_networks(spec: str) -> tuple[Network, ...]:
    """``"127.0.0.1/32, 10.0.0.0/8"`` -> networks; a bad entry is a ValidationError naming it."""
    out: list[Network] = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        try:
            out.append(ipaddress.ip_network(item, strict=False))
        except ValueError as exc:
            raise ValidationError(f"not a network: {item!r} ({exc})", field="webhook_allow_networks") from None
    return tuple(out)


def embedded_ipv4(addr: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 transition form carries, or None when it carries none."""
    if addr.ipv4_mapped is not None:
        return [addr.ipv4_mapped]
    if addr.teredo is not None:
        return list(addr.teredo)
    if addr.sixtofour is not None:
        return [addr.sixtofour]
    if addr in NAT64:
        return [ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)]
    if addr in IPV4_COMPATIBLE and int(addr) > 1:  # not :: or ::1
        return [ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)]
    return None


def forbidden_reason(addr: Address, allowed: Iterable[Network] = ()) -> str | None:
    """Why tempr must not connect to ``addr``, or None when it may."""
    allowed = tuple(allowed)
    if any(addr.version == net.version and addr in net for net in allowed):
        return None
    if addr in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr in LOCAL_NAT64:
            return "a local-use NAT64 address"
        carried = embedded_ipv4(addr)
        if carried is not None:
            for v4 in carried:
                why = forbidden_reason(v4, allowed)
                if why:
                    return f"an IPv6 form of {v4}, {why}"
            return None
    if addr.is_link_local:
        return "a link-local address"
    if addr.is_multicast or addr.is_unspecified:
        return "not a unicast address"
    if addr.is_loopback:
        return "a loopback address"
    if not addr.is_global:
        return "a private or reserved address"
    return None


def _default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def _refuse(why: str) -> ValidationError:
    return ValidationError(f"callback_url refused: {why}", field="callback_url")


def _split(url: str) -> tuple[str, int]:
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise _refuse(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise _refuse("the scheme must be http or https")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise _refuse("no host")
    if parts.username or parts.password:
        raise _refuse("credentials in the URL are not allowed")
    return host, port


def _addresses(host: str, port: int, resolve: Resolver | None) -> list[Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        found = [ipaddress.ip_address(a.split("%")[0]) for a in (resolve or _default_resolver)(host, port)]
    except (OSError, UnicodeError, ValueError) as exc:
        raise _refuse(f"host {host!r} does not resolve ({exc})") from None
    if not found:
        raise _refuse(f"host {host!r} does not resolve")
    return found


def resolve_callback(
    url: str,
    *,
    allow_link_local: bool = False,
    allow_networks: str | Iterable[Network] = "",
    resolve: Resolver | None = None,
) -> CallbackTarget:
    """Check ``url`` and return the address to connect to; else raise ValidationError(field="callback_url").

    Every resolved address must pass (one bad answer among good ones refuses the URL)."""
    host, port = _split(url)
    allowed = parse_networks(allow_networks) if isinstance(allow_networks, str) else tuple(allow_networks)
    if host in METADATA_HOSTS and not allow_link_local:
        raise _refuse(f"{host} is a cloud metadata host")
    addresses = _addresses(host, port, resolve)
    if not allow_link_local:
        for addr in addresses:
            why = forbidden_reason(addr, allowed)
            if why:
                raise _refuse(
                    f"host {host!r} resolves to {addr}, {why} "
                    "(allow a network with TEMPR_WEBHOOK_ALLOW_NETWORKS, e.g. 127.0.0.1/32)"
                )
    return CallbackTarget(url, host, port, addresses[0])


def check_callback_url(
    url: str,
    *,
    allow_link_local: bool = False,
    allow_networks: str | Iterable[Network] = "",
    resolve: Resolver | None = None,
) -> str:
    """Return ``url`` if tempr may POST to it, else raise ValidationError(field="callback_url")."""
    resolve_callback(url, allow_link_local=allow_link_local, allow_networks=allow_networks, resolve=resolve)
    return url
