"""The CLI explains itself: every option and positional of every command has help text."""

from __future__ import annotations

import argparse

import pytest

from tempr.cli.main import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_is_listed_with_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    described = {c.dest for c in sub._choices_actions if c.help}
    assert set(_commands()) == described


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_option_has_help(name: str) -> None:
    command = _commands()[name]
    missing = [
        "/".join(a.option_strings) or a.dest
        for a in command._actions
        if not isinstance(a, argparse._HelpAction) and not (a.help and a.help.strip())
    ]
    assert not missing, f"`tempr {name}`: no help text for {missing}"


def test_recall_limit_is_an_option() -> None:
    args = build_parser().parse_args(["recall", "--bank", "demo", "q", "--limit", "3"])
    assert args.limit == 3
