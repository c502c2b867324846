"""A package's public names, each imported from its module on first use (PEP 562).

``data_plane`` and ``control_plane`` list what they offer in their ``__init__`` but import none
of it there, so that a light caller (``kg --help``, the error tree) does not pay for SQLAlchemy,
the question reader or the planner. Type checkers read the same names from an
``if TYPE_CHECKING:`` block of explicit re-exports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, Sequence[str]]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose public names live in the
    submodules ``homes`` maps to them (``{"clock": ("utc_now", ...)}``)."""
    home_of = {name: f"{package}.{module}" for module, names in homes.items() for name in names}

    def getattr_(name: str) -> object:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        vars(sys.modules[package])[name] = value  # later look-ups skip this function
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *home_of})

    return sorted(home_of), getattr_, dir_
