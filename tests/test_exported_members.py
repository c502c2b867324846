"""Each package's public surface is exactly its ``__all__``, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

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


def test_importing_the_packages_does_not_import_heavy_frameworks() -> None:
    """LlamaIndex, FastAPI and Typer are imported only by the modules that need them."""
    code = (
        "import sys, data_plane, control_plane;"
        "print(sorted(m for m in ('llama_index', 'fastapi', 'typer', 'alembic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
