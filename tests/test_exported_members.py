"""Each package's public surface is exactly its ``__all__``, and importing it stays light."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import control_plane
import data_plane


@pytest.mark.parametrize("package", [data_plane, control_plane])
def test_all_names_exist_and_nothing_public_is_unlisted(package: object) -> None:
    """Every name in __all__ exists, and every public module-level class or function is listed."""
    exported = set(package.__all__)  # type: ignore[attr-defined]
    assert all(hasattr(package, name) for name in exported)
    public = {
        n for n in vars(package) if not n.startswith("_") and not isinstance(getattr(package, n), type(sys))
    }
    assert public - exported == set()


@pytest.mark.parametrize("package", [data_plane, control_plane])
def test_type_checkers_see_exactly_the_names_loaded_at_run_time(package: object) -> None:
    """The ``if TYPE_CHECKING:`` re-exports name exactly ``__all__``, each from the module the lazy
    look-up loads it from."""
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))  # type: ignore[attr-defined]
    declared: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                declared.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    assert sorted(declared) == sorted(package.__all__)  # type: ignore[attr-defined]
    for name, module in declared.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name)


def test_importing_the_packages_does_not_import_heavy_frameworks() -> None:
    """LlamaIndex, FastAPI, Typer and SQLAlchemy are imported only by the modules that need them
    (the packages' names load on first use)."""
    code = (
        "import sys, data_plane, control_plane;"
        "print(sorted(m for m in ('llama_index', 'fastapi', 'typer', 'alembic', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
