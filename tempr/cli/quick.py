"""`tempr recall` and `tempr ingest` through the local gateway, with the standard library only.

The Celery path imports Celery, kombu, redis-py and pydantic before it sends anything: most of a
warm recall's wall time. `tempr services up` also starts a local gateway
(``tempr.services.gateway``) that has paid those imports once, so the CLI asks it over HTTP with
``urllib`` instead. The quick path is taken only when it is sure to mean the same thing as the
Celery path; otherwise ``recall`` (and ``ingest``) return None and the caller goes the usual way:

* the state folder is known without loading the settings (``TEMPR_STATE_DIR``, else ``.tempr``;
  a ``.env`` that sets the state folder is left to the settings loader);
* ``<state>/gateway/gateway.json`` names a live gateway started with this very configuration
  (``config_fingerprint``: every ``TEMPR_*`` variable and ``.env``);
* the gateway answers, and says a worker consuming ``fuse`` answers (``GET /v1/fleet/ready``). When
  none does, the caller's fallback (recall in-process, or an error with ``--via-workers``) gets the
  gateway's reason, as it would get the fleet probe's.

Errors come back as the gateway's JSON body and are raised as the ``config.errors`` exception the
Celery path would raise (a bad field exits 2, an unknown bank 1), never as a traceback.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from config import errors
from tempr.services.gateway import config_fingerprint, read_info

ANSWER_WAIT_S = 300.0
"""Socket timeout while the gateway works: it answers 504 itself at its own wait limit."""
READY_WAIT_S = 3.0
"""The readiness check: the gateway's own probe waits at most 1 s."""


class NotReady(Exception):
    """The gateway answers but no worker consuming the queue does: ``args[0]`` says why."""


def _env(environ: dict[str, str], name: str) -> str | None:
    """A ``TEMPR_*`` variable, its name compared case-insensitively (as pydantic-settings reads them)."""
    for key, value in environ.items():
        if key.upper() == name:
            return value
    return None


def state_dir(environ: dict[str, str], cwd: Path) -> Path | None:
    """The state folder the settings would load, or None when only the settings loader can tell."""
    explicit = _env(environ, "TEMPR_STATE_DIR")
    if explicit:
        return cwd / explicit  # an absolute path stays absolute
    try:
        dotenv = (cwd / ".env").read_text(errors="replace")
    except OSError:
        return cwd / ".tempr"
    return None if "STATE_DIR" in dotenv.upper() else cwd / ".tempr"


def gateway_url(environ: dict[str, str] | None = None, cwd: Path | None = None) -> str | None:
    """The local gateway's URL when one started with this configuration runs; else None."""
    from tempr.services.process import pid_alive

    env = dict(os.environ if environ is None else environ)
    here = cwd or Path.cwd()
    state = state_dir(env, here)
    info = read_info(state / "gateway") if state is not None else None
    if info is None or info.fingerprint != config_fingerprint(env, here) or not pid_alive(info.pid):
        return None
    return info.url


def api_key(environ: dict[str, str], state: Path) -> str | None:
    """The key the settings would send: ``TEMPR_API_KEY``, else ``<state>/api_key``."""
    key = _env(environ, "TEMPR_API_KEY")
    if key:
        return key
    try:
        return (state / "api_key").read_text().strip() or None
    except OSError:
        return None


def recall(bank_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The recall's answer (the response object as JSON) through the local gateway, or None when
    there is no usable gateway (the caller takes the Celery path). Raises ``NotReady`` when no
    worker consumes ``fuse``, and the ``config.errors`` exception of an error answer."""
    env = dict(os.environ)
    url = gateway_url(env)
    if url is None:
        return None
    try:
        ready = _call("GET", f"{url}/v1/fleet/ready?queue=fuse", None, None, READY_WAIT_S)
    except _Unreachable:
        return None
    if not ready.get("ready"):
        raise NotReady(ready.get("reason") or "no worker consuming the 'fuse' queue answered")
    state = state_dir(env, Path.cwd())
    key = api_key(env, state) if state is not None else None
    path = f"/v1/default/banks/{urllib.parse.quote(bank_id, safe='')}/memories/recall"
    try:
        return _call("POST", url + path, body, key, ANSWER_WAIT_S, key_file=state and state / "api_key")
    except _Unreachable:
        return None


def ingest(
    bank_id: str,
    path: Path,
    *,
    chunk_facts: int | None,
    spread_over: int | None,
    on_progress: Callable[[dict[str, Any]], None],
    poll_s: float = 0.1,
) -> dict[str, Any] | None:
    """Import a JSONL file through the local gateway (``POST .../imports``, then ``GET /v1/jobs/{id}``
    until it is published or failed): the import's last status, or None when the Celery path must
    take it. That is: no usable gateway; no key here while ``TEMPR_AUTH`` is not ``off`` (the
    Celery path needs none: it writes to the database itself); a key the gateway refuses
    (401/403); a file over the gateway's body limit (413); or no worker consuming ``ingest``
    answers (the Celery path then waits for workers `services up` is still starting, or ingests
    in-process). A bad line raises
    ``IngestValidationError`` naming it: the gateway validated the whole file before queueing any.
    The poll interval starts at 20 ms and grows by half up to ``poll_s``, as ``fleet.wait``'s."""
    env = dict(os.environ)
    url = gateway_url(env)
    state = state_dir(env, Path.cwd())
    key = api_key(env, state) if state is not None else None
    auth_off = (_env(env, "TEMPR_AUTH") or "").strip().lower() == "off"
    if url is None or (key is None and not auth_off):
        return None
    try:
        if not _call("GET", f"{url}/v1/fleet/ready?queue=ingest", None, None, READY_WAIT_S).get("ready"):
            return None
        query = {"chunk_facts": chunk_facts} if chunk_facts else {"spread_over": spread_over} if spread_over else {}
        target = f"{url}/v1/default/banks/{urllib.parse.quote(bank_id, safe='')}/imports"
        if query:
            target += "?" + urllib.parse.urlencode(query)
        with path.open("rb") as body:
            upload = (body, os.fstat(body.fileno()).st_size, "application/x-ndjson")
            import_id = str(_call("POST", target, None, key, ANSWER_WAIT_S, upload=upload)["job_id"])
    except (errors.AuthError, errors.PayloadTooLarge, _Unreachable):
        return None  # nothing was queued
    status_url = f"{url}/v1/jobs/{urllib.parse.quote(import_id, safe='')}"
    delay = 0.02
    while True:
        try:
            status = _call("GET", status_url, None, key, ANSWER_WAIT_S)
        except _Unreachable:
            raise errors.ServiceUnavailable(
                f"the local gateway stopped answering while import {import_id} ran; "
                f"`tempr services up` restarts it, and GET /v1/jobs/{import_id} tells how the import ended"
            ) from None
        on_progress(status)
        if status.get("status") in ("succeeded", "failed"):
            return status
        time.sleep(delay)
        delay = min(poll_s, delay * 1.5)


class _Unreachable(Exception):
    """No HTTP answer (refused, reset): the gateway is gone; the caller falls back."""


def _call(
    method: str,
    url: str,
    body: Any,
    key: str | None,
    timeout_s: float,
    *,
    key_file: Path | None = None,
    upload: tuple[BinaryIO, int, str] | None = None,
) -> dict[str, Any]:
    """One request; ``body`` is sent as JSON, ``upload`` (file, its size, content type) as it is."""
    headers = {"Accept": "application/json"}
    data: Any = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    elif upload is not None:
        data, size, kind = upload
        headers.update({"Content-Type": kind, "Content-Length": str(size)})
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as reply:
            return dict(json.loads(reply.read()))
    except urllib.error.HTTPError as exc:
        raise error_from(exc.code, _json_of(exc), sent_key=bool(key), key_file=key_file) from None
    except TimeoutError:
        raise errors.RecallTimeout(f"the local gateway did not answer within {timeout_s:g} s") from None
    except (urllib.error.URLError, ConnectionError):
        raise _Unreachable from None


def _json_of(exc: urllib.error.HTTPError) -> dict[str, Any]:
    try:
        value = json.loads(exc.read())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def error_from(status: int, body: dict[str, Any], *, sent_key: bool, key_file: Path | None = None) -> Exception:
    """The exception the Celery path raises for what the gateway answered ``status`` with ``body``."""
    message = str(body.get("message") or body.get("detail") or f"the gateway answered HTTP {status}")
    if status in (400, 422) and body.get("line"):
        return errors.IngestValidationError(message, line=int(body["line"]), field=body.get("field"))
    if status == 413:
        return errors.PayloadTooLarge(message)
    if status in (400, 422):
        return errors.ValidationError(message, field=body.get("field"))
    if status == 401 and not sent_key:
        where = f" (writes {key_file})" if key_file else ""
        return errors.AuthError(f"no API key: run `tempr keys local`{where} or set TEMPR_API_KEY")
    if status == 401:
        return errors.AuthError(message)
    if status == 403:
        return errors.Forbidden(message)
    if status == 404:
        return errors.NotFound(message)
    if status == 503:
        return errors.ServiceUnavailable(message)
    if status == 504:
        return errors.RecallTimeout(message)
    return errors.RecallError(message)
