"""The callback-URL guard (SSRF): what is refused, what an allow-list admits, and the pinned
address a delivery connects to. No network: resolvers are injected."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import pytest

from config.errors import ValidationError
from tempr.jobs.callback_guard import (
    check_callback_url,
    embedded_ipv4,
    forbidden_reason,
    parse_networks,
    resolve_callback,
)


def _resolver(mapping: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    def resolve(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise OSError("Name or service not known")
        return mapping[host]

    return resolve


PUBLIC = _resolver({"hooks.example.com": ["93.184.216.34"], "v6.example.com": ["2606:4700::1111"]})


@pytest.mark.parametrize(
    "url", ["https://hooks.example.com/tempr", "http://93.184.216.34:8080/x", "http://v6.example.com/"]
)
def test_public_hosts_are_allowed(url: str) -> None:
    assert check_callback_url(url, resolve=PUBLIC) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://metadata.google.internal/computeMetadata/v1/", "metadata host"),
        ("http://METADATA.GOOGLE.INTERNAL./", "metadata host"),
        ("http://169.254.10.1/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://100.100.100.200/", "metadata"),
        ("http://rebind.example/", "link-local"),
        ("http://0.0.0.0/", "unicast"),
        ("http://127.0.0.1:8080/hook", "loopback"),
        ("http://localhost/hook", "loopback"),
        ("http://[::1]:8000/hook", "loopback"),
        ("https://10.1.2.3/x", "private"),
        ("http://192.168.0.5:9000/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://100.64.0.1/", "private or reserved"),  # shared address space (CGNAT)
        ("http://[fd12:3456::1]/", "private"),
        ("ftp://127.0.0.1/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("http:///nohost", "no host"),
        ("http://user:pw@127.0.0.1/", "credentials"),
        ("http://nowhere.invalid/", "does not resolve"),
    ],
)
def test_forbidden_callback_hosts_are_refused(url: str, why: str) -> None:
    resolve = _resolver({"rebind.example": ["93.184.216.34", "169.254.1.1"], "localhost": ["127.0.0.1"]})
    with pytest.raises(ValidationError) as info:
        check_callback_url(url, resolve=resolve)
    assert info.value.field == "callback_url"
    assert why in info.value.message
    assert info.value.to_dict()["error"] == "ValidationError"


# Every IPv6 spelling that carries an IPv4 address, each carrying the metadata address, loopback
# and a private address: all refused, whatever the IPv6 wrapper.
EMBEDDINGS = {
    "mapped": "::ffff:{v4}",
    "nat64": "64:ff9b::{v4}",
    "ipv4-compatible": "::{v4}",
}


def _sixtofour(v4: str) -> str:
    packed = int(ipaddress.IPv4Address(v4))
    return str(ipaddress.IPv6Address((0x2002 << 112) | (packed << 80) | 1))


def _teredo(client: str, server: str = "65.54.227.120") -> str:
    obfuscated = int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF
    value = (0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64) | (0x8000 << 48) | (0xFFFF << 32)
    return str(ipaddress.IPv6Address(value | obfuscated))


@pytest.mark.parametrize("v4", ["169.254.169.254", "127.0.0.1", "10.0.0.1", "192.168.1.1"])
@pytest.mark.parametrize("form", [*EMBEDDINGS, "6to4", "teredo"])
def test_ipv4_embedding_ipv6_forms_of_forbidden_addresses_are_refused(form: str, v4: str) -> None:
    if form == "6to4":
        v6 = _sixtofour(v4)
    elif form == "teredo":
        v6 = _teredo(v4)
    else:
        v6 = EMBEDDINGS[form].format(v4=v4)
    addr = ipaddress.ip_address(v6)
    assert embedded_ipv4(addr) is not None and ipaddress.IPv4Address(v4) in embedded_ipv4(addr)
    with pytest.raises(ValidationError) as info:
        check_callback_url(f"http://[{v6}]/hook")
    assert f"an IPv6 form of {v4}" in info.value.message
    # ... and through DNS too (an AAAA record holding the form)
    with pytest.raises(ValidationError):
        check_callback_url("http://sneaky.example/", resolve=_resolver({"sneaky.example": [v6]}))


@pytest.mark.parametrize("form", ["mapped", "nat64", "6to4", "teredo"])
def test_ipv4_embedding_forms_of_public_addresses_pass(form: str) -> None:
    v4 = "93.184.216.34"
    v6 = {"6to4": _sixtofour(v4), "teredo": _teredo(v4)}.get(form) or EMBEDDINGS[form].format(v4=v4)
    assert forbidden_reason(ipaddress.ip_address(v6)) is None


def test_local_use_nat64_is_refused_outright() -> None:
    assert forbidden_reason(ipaddress.ip_address("64:ff9b:1::a9fe:a9fe")) == "a local-use NAT64 address"


def test_allow_list_admits_exactly_its_networks() -> None:
    allow = "127.0.0.1/32, 10.0.0.0/8, ::1/128"
    for url in ("http://127.0.0.1:8080/hook", "http://10.9.8.7/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"):
        assert check_callback_url(url, allow_networks=allow) == url
    for url in ("http://127.0.0.2/", "http://192.168.0.1/", "http://169.254.169.254/"):
        with pytest.raises(ValidationError):
            check_callback_url(url, allow_networks=allow)


def test_a_bad_allow_list_entry_is_named() -> None:
    with pytest.raises(ValidationError) as info:
        parse_networks("127.0.0.1/32,not-a-net")
    assert "not-a-net" in info.value.message and info.value.field == "webhook_allow_networks"


def test_link_local_switch_allows_everything_but_bad_schemes() -> None:
    url = "http://169.254.169.254/latest"
    assert check_callback_url(url, allow_link_local=True) == url
    with pytest.raises(ValidationError):
        check_callback_url("gopher://169.254.169.254/", allow_link_local=True)


def test_delivery_connects_to_the_checked_address_and_keeps_the_name() -> None:
    answers = iter([["93.184.216.34"], ["169.254.169.254"]])  # DNS rebinding: a second answer differs

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    target = resolve_callback("https://hooks.example.com:8443/tempr?x=1", resolve=rebinding)
    assert str(target.address) == "93.184.216.34"
    assert target.pinned_url() == "https://93.184.216.34:8443/tempr?x=1"
    assert target.host_header() == "hooks.example.com:8443"
    with pytest.raises(ValidationError):  # the next check sees the rebound answer and refuses
        resolve_callback("https://hooks.example.com:8443/tempr", resolve=rebinding)


def test_pinned_ipv6_url_is_bracketed_and_default_port_dropped() -> None:
    target = resolve_callback("http://v6.example.com/hook", resolve=PUBLIC)
    assert target.pinned_url() == "http://[2606:4700::1111]/hook" and target.host_header() == "v6.example.com"
