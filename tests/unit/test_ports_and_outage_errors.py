"""Pieces of riding out an outage that need no running service: stable ports (TIME_WAIT does not
move a restarted server), outage errors named without hosts or ports, bounded Celery retries."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from config.celery import celery_config, visibility_timeout_s
from config.errors import ServiceError, outage_message, permanent_database_error, public_message, public_text
from config.settings import Settings
from tempr.services import process


def _leave_time_wait(port: int) -> None:
    """Accept one connection on ``port`` and close the server side first: it lingers in TIME_WAIT."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        client = socket.create_connection(("127.0.0.1", port))
        conn, _ = listener.accept()
        conn.close()  # active close: this end goes to TIME_WAIT
        client.recv(1)
        client.close()


def test_a_port_in_time_wait_is_still_free_for_its_server() -> None:
    port = process.free_port()
    _leave_time_wait(port)
    with socket.socket() as plain, pytest.raises(OSError):  # a bind without SO_REUSEADDR fails here
        plain.bind(("127.0.0.1", port))
    assert process.port_is_free(port)


def test_a_listening_port_is_not_free() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        assert not process.port_is_free(port)
        assert process.port_answers(port)
    assert not process.port_answers(port)


def test_stable_port_is_chosen_once_and_kept(tmp_path: Path) -> None:
    port_file = tmp_path / "svc" / "port"
    first = process.stable_port(port_file, "svc")
    _leave_time_wait(first)
    assert process.stable_port(port_file, "svc") == first  # restarted: same port despite TIME_WAIT
    with socket.socket() as squatter:  # someone else listens there now: fail loudly, do not move
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", first))
        squatter.listen(1)
        with pytest.raises(ServiceError, match=str(first)):
            process.stable_port(port_file, "svc")
    assert int(port_file.read_text()) == first


def test_outage_errors_are_named_without_host_or_port() -> None:
    import psycopg
    import redis
    from kombu.exceptions import OperationalError as KombuOperationalError
    from sqlalchemy.exc import OperationalError

    leaks = [
        psycopg.OperationalError('connection to server at "10.1.2.3", port 5433 failed: Connection refused'),
        OperationalError("SELECT 1", {}, psycopg.OperationalError("connection to server at 10.1.2.3 port 5433")),
        redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused."),
        KombuOperationalError("Error 111 connecting to 127.0.0.1:6390. Connection refused."),
        RuntimeError("\nRetry limit exceeded while trying to reconnect to the Celery result store\nbackend."),
    ]
    for exc in leaks:
        assert outage_message(exc), exc
        for text in (public_text(exc), public_message(exc)):
            assert "10.1.2.3" not in text and "127.0.0.1" not in text and "5433" not in text and "6390" not in text
    assert outage_message(ValueError("bad")) is None
    assert public_text(ValueError("no route to 192.168.4.4:5432 or port 6379")) == "no route to <address> or <address>"


def test_celery_waits_on_a_dead_broker_are_bounded() -> None:
    settings = Settings(broker_connect_timeout_s=1.5, broker_publish_retries=1)
    conf = celery_config(settings, "redis://127.0.0.1:1/0", "redis://127.0.0.1:1/1")
    assert conf["task_publish_retry_policy"]["max_retries"] == 1
    assert conf["result_backend_transport_options"]["retry_policy"]["max_retries"] == 1  # was 20 x 1 s
    assert conf["broker_connection_timeout"] == 1.5 and conf["redis_socket_connect_timeout"] == 1.5
    assert conf["broker_connection_max_retries"] is None  # workers never give up on the broker
    assert conf["broker_transport_options"]["socket_connect_timeout"] == 1.5
    amqp = celery_config(settings, "amqp://guest@127.0.0.1//", None)["broker_transport_options"]
    assert "socket_connect_timeout" not in amqp  # Redis-only options are not handed to py-amqp


def test_visibility_timeout_outlasts_the_longest_task() -> None:
    settings = Settings()
    conf = celery_config(settings, "redis://x/0", None)
    assert visibility_timeout_s(settings) > conf["task_time_limit"]
    assert conf["broker_transport_options"]["visibility_timeout"] == visibility_timeout_s(settings)
    assert visibility_timeout_s(Settings(broker_visibility_timeout_s=90)) == 90


def test_a_statement_error_is_told_without_its_sql_or_row() -> None:
    import psycopg
    from sqlalchemy.exc import IntegrityError

    orig = psycopg.errors.CheckViolation(
        'new row for relation "memory_units" violates check constraint "memory_units_proof_count_check"\n'
        "DETAIL:  Failing row contains (7a242fe8, pc-test, p1, Zed likes tea., [-0.07923525,0.048472296])."
    )
    exc = IntegrityError("INSERT INTO memory_units (id, proof_count) SELECT ...", {"ann": False}, orig)
    text = public_message(exc)
    assert text == (
        'IntegrityError: CheckViolation: new row for relation "memory_units" violates check constraint '
        '"memory_units_proof_count_check"'
    )
    assert "INSERT" in str(exc) and "Failing row" in str(exc)  # what the message used to carry


def test_a_value_too_large_for_an_index_is_neither_an_outage_nor_worth_a_retry() -> None:
    import psycopg
    from sqlalchemy.exc import OperationalError

    too_big = psycopg.errors.ProgramLimitExceeded(
        'index row size 4016 exceeds maximum 2712 for index "memory_units_tags"'
    )
    exc = OperationalError("INSERT INTO memory_units ...", {}, too_big)
    assert isinstance(too_big, psycopg.OperationalError)  # how psycopg classes it
    assert permanent_database_error(exc) and permanent_database_error(too_big)
    assert outage_message(exc) is None
    assert public_message(exc) == (
        'OperationalError: ProgramLimitExceeded: index row size 4016 exceeds maximum 2712 for index "memory_units_tags"'
    )
    refused = OperationalError("SELECT 1", {}, psycopg.OperationalError("connection refused"))
    assert not permanent_database_error(refused) and outage_message(refused) == "the database is unavailable"
