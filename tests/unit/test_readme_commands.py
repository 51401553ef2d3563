"""Every command the README shows parses: `tempr …` lines against the real argument parser
(unknown commands or options fail), `make …` lines against the Makefile's targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from readme_blocks import blocks

from tempr.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _commands(program: str) -> list[list[str]]:
    return [argv for block in blocks() for argv in block.commands() if argv[0] == program]


def test_the_readme_has_a_block_marked_to_run() -> None:
    assert any(b.run for b in blocks())


@pytest.mark.parametrize("argv", _commands("tempr"), ids=lambda a: " ".join(a)[:60])
def test_tempr_command_parses(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exc:  # argparse's way of refusing
        pytest.fail(f"`{' '.join(argv)}` does not parse: {capsys.readouterr().err.strip()} (exit {exc.code})")


def test_every_cli_command_is_in_the_readme() -> None:
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    shown = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in sub.choices if f"`tempr {name}" not in shown]
    assert not missing, f"README does not list: {missing}"


def test_make_targets_exist() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    for argv in _commands("make"):
        for target in argv[1:]:
            assert target in targets, f"README runs `make {target}`, which the Makefile lacks"


def test_every_http_route_is_in_the_readme() -> None:
    from types import SimpleNamespace

    from fastapi.routing import APIRoute

    from config.settings import Settings
    from tempr.api.app import create_app

    app = create_app(celery_app=object(), resources=SimpleNamespace(settings=Settings()))  # type: ignore[arg-type]
    shown = (ROOT / "README.md").read_text(encoding="utf-8")
    for route in app.routes:
        if isinstance(route, APIRoute) and "oauth2" not in route.path:
            for method in route.methods - {"HEAD"}:
                assert f"`{method} {route.path}`" in shown or f"{method} {route.path}" in shown, (
                    f"README's route table lacks {method} {route.path}"
                )
