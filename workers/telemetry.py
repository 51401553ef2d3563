"""OpenTelemetry tracing for the gateway and the workers: one trace per recall, every hop a span.

Off by default (``TEMPR_OTEL_ENABLED``). When on, the FastAPI instrumentation opens the gateway's
server span, and the Celery instrumentation wraps every publish and every task run and carries the
trace context in the message headers, so the chord's tasks (start, the four strategies, the
fusion callback published by the last strategy, rerank, finish) and the webhook delivery all join
the request's trace, whichever host runs them. Spans go to an OTLP/HTTP collector
(``TEMPR_OTEL_ENDPOINT``) or, for debugging and tests, to a JSON-lines file
(``TEMPR_OTEL_SPANS_FILE``). Every span of a job carries ``tempr.job_id``.

Set up through Celery signals (``workers.app``) and app construction (``tempr.api.app``), never in
task bodies. Prefork pools set it up in each child after the fork (the exporter's thread does not
survive a fork); threads and solo pools in the worker's own process.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import IO, Any

from config.settings import Settings

log = logging.getLogger(__name__)
_state: dict[str, Any] = {}


def make_provider(settings: Settings, role: str, exporter: Any = None) -> Any:
    """A TracerProvider for this process (``role``: gateway | worker), or None when tracing is off."""
    if exporter is None and not settings.otel_enabled:
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create(
        {"service.name": f"{settings.otel_service_name}-{role}", "host.name": socket.gethostname()}
    )
    provider = TracerProvider(resource=resource)
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif settings.otel_spans_file:
        provider.add_span_processor(SimpleSpanProcessor(jsonl_exporter(settings.otel_spans_file)))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otel_endpoint)))
    return provider


def jsonl_exporter(path: Path) -> Any:
    """One JSON object per line (the SDK's span JSON), appended; safe for several processes."""
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    path.parent.mkdir(parents=True, exist_ok=True)
    out: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    return ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\n")


def instrument_celery(provider: Any) -> None:
    """Trace every publish and task run of this process with ``provider`` (idempotent)."""
    if provider is None or "celery" in _state:
        return
    from celery.signals import task_prerun
    from opentelemetry.instrumentation.celery import CeleryInstrumentor

    instrumentor = CeleryInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    task_prerun.connect(_tag_run_span, weak=False)  # after the instrumentation's: its span is current
    _state["celery"] = (instrumentor, provider)


def uninstrument_celery() -> None:
    found = _state.pop("celery", None)
    if found:
        from celery.signals import task_prerun

        task_prerun.disconnect(_tag_run_span)
        found[0].uninstrument()


def instrument_gateway(app: Any, provider: Any) -> None:
    """The FastAPI server span around each request, and the Celery publish spans under it."""
    if provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(app, tracer_provider=provider, excluded_urls="healthz,metrics")
    instrument_celery(provider)


def setup_worker(settings: Settings) -> None:
    """Called in the process that runs tasks (a prefork child, or a threads/solo worker)."""
    try:
        instrument_celery(make_provider(settings, "worker"))
    except Exception as exc:  # noqa: BLE001 - tracing must never stop a worker
        log.warning("OpenTelemetry disabled: %s", exc)


def _tag_run_span(task_id: str | None = None, task: Any = None, args: Any = None, **_: Any) -> None:
    from opentelemetry import trace

    from workers.job_context import job_id_of, queue_of

    span = trace.get_current_span()
    if not span.is_recording():
        return
    job = job_id_of(task, task_id, args)
    if job:
        span.set_attribute("tempr.job_id", job)
    span.set_attribute("tempr.queue", queue_of(task))
