"""What a key may do (pure: no database), and the local key file's mode."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from config.errors import AuthError, Forbidden, ValidationError
from config.settings import Settings
from tempr.auth import ANONYMOUS, Principal, check_roles, check_tenant_name, local_key, save_local_key, warn_if_off


def test_roles_and_scopes() -> None:
    reader = Principal("t", "k", ("acme-*",), frozenset({"recall"}))
    assert reader.require("recall", "acme-1") is reader
    with pytest.raises(Forbidden, match="scoped"):
        reader.require("recall", "other")
    with pytest.raises(Forbidden, match="ingest"):
        reader.require("ingest", "acme-1")
    admin = Principal("t", "k", ("acme-*",), frozenset({"admin"}))
    assert admin.can("ingest", "acme-1") and admin.can("recall") and not admin.can("recall", "b")
    assert ANONYMOUS.can("admin", "anything") and ANONYMOUS.tenant is None
    assert isinstance(Forbidden("x"), AuthError)


def test_names_and_roles_are_validated() -> None:
    assert check_roles(["ingest", "recall", "recall"]) == ["ingest", "recall"]
    for bad in (["root"], [], [" "]):
        with pytest.raises(ValidationError):
            check_roles(bad)
    with pytest.raises(ValidationError):
        check_tenant_name("no spaces")


def test_the_local_key_file_is_private(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path / "state")
    assert local_key(settings) is None
    save_local_key(settings, "tk_0123456789abcdef_secret")
    mode = stat.S_IMODE(settings.api_key_file.stat().st_mode)
    assert mode == 0o600 and local_key(settings) == "tk_0123456789abcdef_secret"
    assert local_key(Settings(state_dir=tmp_path / "state", api_key="from-env")) == "from-env"


def test_auth_off_is_warned(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert not warn_if_off(Settings(state_dir=tmp_path), "x")
    assert warn_if_off(Settings(state_dir=tmp_path, auth="off"), "tempr api")
    assert "TEMPR_AUTH=off" in capsys.readouterr().err


def test_the_key_cache_trusts_a_checked_key_for_its_ttl_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempr import auth

    now = [1000.0]
    monkeypatch.setattr(auth.time, "monotonic", lambda: now[0])
    cache = auth.KeyCache(ttl_s=2.0, max_entries=3)
    who = auth.Principal("t", "k1", ("b*",), frozenset({"recall"}))
    assert cache.get("tk_a") is None and cache.get(None) is None
    cache.put("tk_a", who)
    assert cache.get("tk_a") is who and cache.get("tk_b") is None
    now[0] += 2.5
    assert cache.get("tk_a") is None  # past the TTL: checked in PostgreSQL again
    cache.put("tk_a", who)
    cache.clear()  # a revocation on this gateway
    assert cache.get("tk_a") is None
    for i in range(4):  # bounded: a burst of distinct keys starts the cache over
        cache.put(f"tk_{i}", who)
    assert len(cache._entries) <= 3
    off = auth.KeyCache(ttl_s=0)
    off.put("tk_a", who)
    assert off.get("tk_a") is None
