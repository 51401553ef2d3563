"""`tempr services up|down|status` against real processes, in a private state folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tempr.services.process import pid_alive
from tempr.services.redis_server import LocalRedis

pytestmark = pytest.mark.integration


def _tempr(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEMPR_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args], env=env, capture_output=True, text=True, timeout=180
    )


def test_up_twice_is_harmless_and_down_stops_only_its_own(tmp_path: Path) -> None:
    state = tmp_path / "state"
    bystander = LocalRedis(tmp_path / "bystander")  # a Redis tempr did not start
    bystander.up()
    try:
        first = _tempr(state, "services", "up", "--no-worker")
        assert first.returncode == 0, first.stderr
        status1 = json.loads(_tempr(state, "services", "status", "--json").stdout)
        second = _tempr(state, "services", "up", "--no-worker")
        assert second.returncode == 0, second.stderr
        status2 = json.loads(_tempr(state, "services", "status", "--json").stdout)
        assert status1["postgres"]["running"] and status1["redis"]["running"]
        assert status1["postgres"]["pid"] == status2["postgres"]["pid"]  # not restarted
        assert status1["redis"]["pid"] == status2["redis"]["pid"]
        down = _tempr(state, "services", "down")
        assert down.returncode == 0 and "postgres" in down.stdout and "redis" in down.stdout
        status3 = json.loads(_tempr(state, "services", "status", "--json").stdout)
        assert not status3["postgres"]["running"] and not status3["redis"]["running"]
        assert redis.Redis.from_url(bystander.status().url).ping()  # untouched
        again = _tempr(state, "services", "down")
        assert again.returncode == 0 and "nothing was running" in again.stdout
    finally:
        _tempr(state, "services", "down", "--purge")
        bystander.down()


def test_restarts_keep_their_ports_status_is_honest_and_postgres_wants_a_password(tmp_path: Path) -> None:
    import psycopg

    from tempr.services import process

    state = tmp_path / "private-0700"
    state.mkdir(mode=0o700)  # a parent the PostgreSQL user cannot enter (as root it runs as tempr_pg)
    state = state / "state"
    try:
        assert _tempr(state, "services", "up", "--no-worker").returncode == 0
        before = _tempr(state, "services", "status", "--json")
        first = json.loads(before.stdout)
        assert before.returncode == 0 and first["postgres"]["healthy"] and first["redis"]["healthy"]

        password = state / "pg" / "password"
        assert password.stat().st_mode & 0o777 == 0o600
        assert ":***@" in first["postgres"]["url"] and password.read_text() not in before.stdout
        port = first["postgres"]["port"]
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", connect_timeout=5)
        with psycopg.connect(
            f"postgresql://postgres:{password.read_text()}@127.0.0.1:{port}/postgres", connect_timeout=5
        ) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        if process.running_as_root():  # the cluster lives where tempr_pg can always reach it
            home = Path((state / "pg" / "home").read_text())
            assert home.parent == Path("/var/lib/tempr") and home.owner() == process.PG_USER

        os.kill(first["redis"]["pid"], 9)  # Redis dies: status says so and exits 1
        process.wait_until(lambda: not process.pid_alive(first["redis"]["pid"]), timeout=10, what="redis to die")
        dead = _tempr(state, "services", "status", "--json")
        assert dead.returncode == 1 and not json.loads(dead.stdout)["redis"]["healthy"]

        assert _tempr(state, "services", "down").returncode == 0  # stops PostgreSQL (clients' sockets close)
        assert _tempr(state, "services", "up", "--no-worker").returncode == 0
        after = json.loads(_tempr(state, "services", "status", "--json").stdout)
        assert after["redis"]["healthy"] and after["postgres"]["healthy"]
        assert (after["redis"]["port"], after["postgres"]["port"]) == (first["redis"]["port"], port)
    finally:
        _tempr(state, "services", "down", "--purge")
    if process.running_as_root():
        assert not home.exists()


def test_up_starts_the_pool_layout_warm_and_a_recall_goes_through_it(tmp_path: Path) -> None:
    """`services up` starts one pool per kind of work and returns once every worker answers, with the
    query embedder already loaded in each analyse child; a recall then runs through those pools."""
    from tempr.services.workers import fleet_layout

    state = tmp_path / "state"
    sample = Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"
    try:
        up = _tempr(state, "services", "up", "--concurrency", "1", "--retrieve-concurrency", "2")
        assert up.returncode == 0, up.stdout + up.stderr
        assert "ready in" in up.stdout
        logs = state / "workers"
        assert (logs / "analyse.log").read_text().count("query embedder warm") == 1  # before it answered
        for pool in ("analyse", "retrieve"):  # each child froze its warm heap out of the collector (tempr.heap)
            assert "pool process, warm:" in (logs / f"{pool}.log").read_text(), pool
        status = json.loads(_tempr(state, "services", "status", "--json").stdout)
        workers = {w["name"].split("@")[0]: w for w in status["workers"]}
        for spec in fleet_layout(retrieve=2, analyse=1):
            w = workers[spec.name]
            assert w["ping"] and sorted(w["queues"]) == sorted(spec.queues.split(",")), w
            assert w["concurrency"] == spec.concurrency and w["pool"].startswith(spec.pool[:6]), w
        assert _tempr(state, "keys", "local").returncode == 0
        ingest = _tempr(state, "ingest", "--bank", "layout", str(sample))
        assert ingest.returncode == 0, ingest.stderr
        got = _tempr(state, "recall", "--via-workers", "--bank", "layout", "--json", "Where does Alice work?")
        assert got.returncode == 0, got.stderr
        answer = json.loads(got.stdout)
        assert answer["results"] and answer["degraded"] == []
        assert {"queue.strategy.semantic", "queue.fuse"} <= set(answer["timings_ms"])  # the chord ran on the pools
        _the_cli_asks_the_local_gateway_with_the_standard_library_alone(state, status["gateway"])
    finally:
        _tempr(state, "services", "down", "--purge")
    assert not pid_alive(status["gateway"]["pid"])  # `down` stopped the gateway too


QUICK = (
    "import sys\n"
    "from tempr.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "heavy = ('celery', 'kombu', 'redis', 'pydantic', 'sqlalchemy')\n"
    "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def _quick(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEMPR_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-c", QUICK, *args], env=env, capture_output=True, text=True, timeout=60)


def _the_cli_asks_the_local_gateway_with_the_standard_library_alone(state: Path, gateway: dict[str, object]) -> None:
    """`services up` started the gateway; `tempr recall` and `tempr ingest` go through it without
    importing Celery, redis-py or pydantic, and their errors keep the CLI's exit codes and messages."""
    assert gateway["running"] and str(gateway["url"]).startswith("http://127.0.0.1:")
    got = _quick(state, "recall", "--bank", "layout", "--json", "Who attended Alice's thesis defense?")
    assert got.returncode == 0, got.stderr
    assert got.stderr.strip().splitlines()[-1] == "[]", got.stderr  # nothing heavy imported
    answer = json.loads(got.stdout)
    assert answer["results"] and {"analyse", "strategies", "queue.fuse"} <= set(answer["timings_ms"])  # the chord ran
    assert "queue.start" not in answer["timings_ms"]  # a miss the gateway analysed and started itself
    unknown = _quick(state, "recall", "--bank", "no-such-bank", "Where?")
    assert unknown.returncode == 1 and "error: bank 'no-such-bank' does not exist" in unknown.stderr
    bad = _quick(state, "recall", "--bank", "layout", "--types", "gossip", "Where?")
    assert bad.returncode == 2 and "error: field 'types" in bad.stderr, bad.stderr
    assert "Traceback" not in unknown.stderr + bad.stderr

    sample = Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"
    imported = _quick(state, "ingest", "--bank", "via-gateway", "--json", str(sample))
    assert imported.returncode == 0, imported.stderr
    assert imported.stderr.strip().splitlines()[-1] == "[]", imported.stderr  # no Celery, SQLAlchemy, pydantic
    report = json.loads(imported.stdout)
    assert report["inserted"] == 62 and report["import_id"].startswith("import-")
    broken = state / "broken.jsonl"
    broken.write_text('{"text": "Dana moved to Lisbon."}\n{"txt": "no text"}\n')
    refused = _quick(state, "ingest", "--bank", "never-made", str(broken))
    assert refused.returncode == 2 and "error: line 2, field 'text'" in refused.stderr, refused.stderr
    nothing = _quick(state, "recall", "--bank", "never-made", "Where?")
    assert nothing.returncode == 1 and "does not exist" in nothing.stderr  # validated before anything was queued


def test_under_memory_pressure_live_short_lived_keys_outlast_old_entries(tmp_path: Path) -> None:
    """The embedded Redis at ``maxmemory`` evicts old entries, not what an in-flight recall holds.

    Celery's chord-callback claim lives 5-10 s; evicting it before the callback is published leaves
    the recall unanswered ("dispatch claim is no longer owned by this worker"). Under the former
    default (``volatile-ttl``) such keys, the soonest to expire, went first. The old entries here
    are 2 s old (Redis's LRU clock counts whole seconds) and outnumber what is written after them,
    as a cache filled over minutes does."""
    server = LocalRedis(tmp_path / "redis", maxmemory="8mb")
    client = redis.Redis.from_url(server.up().url)
    try:
        filler = b"x" * 10_000
        for i in range(1_200):  # 12 MB of cache entries and job records: past maxmemory
            client.set(f"old:{i}", filler, ex=600 if i % 2 else 86_400)
        assert int(client.info("stats")["evicted_keys"]) > 0
        time.sleep(2.2)
        for n in range(30):  # a claim, then the entries written while it is held (3 MB in all)
            client.set(f"claim:{n}", b"token", ex=10)
            for j in range(10):
                client.set(f"new:{n}:{j}", filler, ex=600)
        lost = [n for n in range(30) if not client.exists(f"claim:{n}")]
        assert lost == [], f"claims evicted under pressure: {lost}"
        assert client.config_get("maxmemory-policy")["maxmemory-policy"] == "volatile-lru"
    finally:
        client.close()
        server.down()
