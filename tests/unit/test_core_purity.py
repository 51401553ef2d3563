"""tempr.core and tempr.temporal stay pure: no broker, database, cache or settings imports.

The rule (docs/ARCHITECTURE.md) keeps the maths testable without services and
usable from any process; every value comes in as an argument.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE_PACKAGES = ("tempr/core", "tempr/temporal")
FORBIDDEN = frozenset({"celery", "sqlalchemy", "psycopg", "psycopg2", "redis", "kombu", "config"})
DYNAMIC_IMPORTERS = frozenset({"import_module", "__import__"})


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _resolve(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """Absolute name of a (possibly relative) ``from ... import``."""
    if level == 0:
        return module or ""
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imported_modules(source: str, importer: str = "pkg.mod", is_package: bool = False) -> Iterator[str]:
    """Every module name ``source`` imports, statically or via a literal dynamic import."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield _resolve(node.module, node.level, importer, is_package)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            arg = node.args[0]
            if name in DYNAMIC_IMPORTERS and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield arg.value


def violations(source: str, importer: str = "pkg.mod", is_package: bool = False) -> list[str]:
    return sorted({m for m in imported_modules(source, importer, is_package) if m.split(".")[0] in FORBIDDEN})


def pure_files() -> list[Path]:
    return sorted(p for pkg in PURE_PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_the_scanner_catches_every_import_form() -> None:
    source = "\n".join(
        [
            "import celery",
            "import sqlalchemy.orm as orm",
            "from psycopg import sql",
            "from redis.asyncio import Redis",
            "import kombu",
            "from config.settings import Settings",
            "import importlib; importlib.import_module('config')",
            "def f():\n    import redis",
            "try:\n    import celery.app\nexcept ImportError:\n    pass",
        ]
    )
    assert violations(source) == [
        "celery",
        "celery.app",
        "config",
        "config.settings",
        "kombu",
        "psycopg",
        "redis",
        "redis.asyncio",
        "sqlalchemy.orm",
    ]


def test_the_scanner_allows_stdlib_and_relative_siblings() -> None:
    source = "\n".join(
        [
            "import math",
            "from . import types",
            "from .config_like import x",
            "from tempr.core import fusion",
        ]
    )
    assert violations(source, "tempr.core.fusion") == []
    # A relative import that climbs to a top-level "config" would still be caught.
    assert violations("from .. import x", "config.a.b") == ["config"]


def test_pure_packages_exist() -> None:
    assert (ROOT / "tempr/core/fusion.py").is_file()
    assert len(pure_files()) >= 8


@pytest.mark.parametrize("path", pure_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_forbidden_imports(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    found = violations(source, _module_name(path), path.name == "__init__.py")
    assert found == [], f"{path.relative_to(ROOT)} imports {found}"


def test_importing_tempr_core_loads_no_forbidden_module() -> None:
    probe = (
        "import sys, tempr.core, tempr.core.budget, tempr.core.fusion, tempr.core.boosts, "
        "tempr.core.packing, tempr.core.spreading, tempr.core.timeutil, "
        "tempr.core.rerank_scores\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {sorted(FORBIDDEN)!r})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
