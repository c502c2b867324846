"""The project's modules import each other one way only: no import circles, not even inside functions.

The check reads every module's source (``ast``), so an import hidden in a function body counts
as much as one at the top. ``from pkg import name`` resolves to ``pkg.name`` when that is a
module of ours, else to ``pkg`` itself (its ``__init__``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from data_plane.cycles import strongly_connected

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("data_plane", "control_plane", "evals", "migrations")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its source)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (the data plane's Tarjan)."""
    succ = {node: sorted(targets) for node, targets in graph.items()}
    return [sorted(c) for c in strongly_connected(sorted(graph), succ)]


def test_the_checker_finds_a_circle() -> None:
    """The cycle finder is not vacuous: a two-module circle and a three-module one are found."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": set()}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


def test_the_graph_sees_imports_inside_functions() -> None:
    """Function-level imports count (the CLI imports its heavy modules lazily)."""
    graph = import_graph()
    assert "control_plane.surfaces.runtime" in graph["control_plane.surfaces.cli.shell"]


def test_no_import_circles_in_the_project() -> None:
    """No module reaches itself through the project's own imports."""
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("control_plane.understanding", "control_plane.synthesizers"),
        ("control_plane.understanding", "control_plane.planning"),
        ("control_plane.synthesizers", "control_plane.planning"),
        ("control_plane.understanding", "control_plane.surfaces"),
        ("control_plane.synthesizers", "control_plane.surfaces"),
        ("control_plane.planning", "control_plane.surfaces"),
        ("data_plane", "control_plane"),
        # The HTTP app mounts the MCP server; the MCP server never reaches into the HTTP app.
        ("control_plane.surfaces.mcp", "control_plane.surfaces.http"),
    ],
)
def test_arrows_point_down(lower: str, higher: str) -> None:
    """A lower folder never imports a higher one (surfaces -> planning -> synthesizers -> understanding)."""
    graph = import_graph()
    offenders = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if m == lower or m.startswith(lower + ".")
        for t in targets
        if t == higher or t.startswith(higher + ".")
    )
    assert offenders == []
