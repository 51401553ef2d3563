"""`tempr api --host --port`: the HTTP gateway (FastAPI on uvicorn), in the foreground."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "api",
        help="run the HTTP gateway (recall console at /console, API docs at /docs)",
        description="Serve the HTTP API, the recall console (/console, also at /) and offline API docs "
        "(/docs, /redoc) with uvicorn, in the foreground.",
    )
    p.add_argument("--host", default=None, help="default TEMPR_API_HOST (127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="default TEMPR_API_PORT (8765)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    p.add_argument("--log-level", default="info", help="uvicorn log level (default info)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    import uvicorn

    from config.settings import get_settings
    from tempr.services.gateway import gateway_env

    # One embedding thread unless TEMPR_EMBEDDER_THREADS says otherwise, however the gateway is
    # started (`tempr services up` already passed it; a gateway started by hand or by a benchmark
    # ran a spinning thread per core: 26.9 ms of CPU per recall at saturation, BENCHMARKS.md).
    os.environ.update(gateway_env())
    get_settings.cache_clear()
    settings = get_settings()
    import workers.metrics  # noqa: F401 - sets PROMETHEUS_MULTIPROC_DIR before uvicorn forks workers

    uvicorn.run(
        "tempr.api.app:create_app",
        factory=True,
        host=args.host or settings.api_host,
        port=args.port or settings.api_port,
        workers=args.workers,
        log_level=args.log_level,
    )
    return 0
