"""The HTTP gateway (FastAPI): `tempr api`. See docs/execution.md for the routes."""
