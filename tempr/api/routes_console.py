"""The recall console: static HTML/CSS/JS shipped as package data, served by the gateway.

No build step and no CDN: the files in ``tempr/api/console`` are plain, and everything they need
comes from this gateway's JSON routes. ``/`` and ``/console`` redirect to ``/console/``.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

CONSOLE_DIR = Path(__file__).resolve().parent / "console"


def install(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    @app.get("/console", include_in_schema=False)
    async def to_console() -> RedirectResponse:
        return RedirectResponse("/console/")

    app.mount("/console/", StaticFiles(directory=CONSOLE_DIR, html=True), name="console")
