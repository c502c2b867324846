"""The colours every picture format shares, so the page, Mermaid and DOT tell the same story."""

from __future__ import annotations

from typing import Final

__all__ = ["BUILT_ON_EDGE", "CITED_EDGE", "FADED_EDGE", "FADED_TEXT", "STYLES"]

# kind -> (fill, stroke, legend label)
STYLES: Final[dict[str, tuple[str, str, str]]] = {
    "seed": ("#fde68a", "#b45309", "asked about (the question names it)"),
    "cited": ("#bbf7d0", "#15803d", "cited by the answer"),
    "evidence": ("#f3f4f6", "#9ca3af", "other gathered evidence (faded)"),
    "requirement": (
        "#e0e7ff",
        "#4338ca",
        "a requirement with alternatives: what it points to needs k of the options drawn into it",
    ),
}
CITED_EDGE: Final = "#111827"
# A cited "builds on" arrow (open head), told apart from a prerequisite's (dark, filled head).
BUILT_ON_EDGE: Final = "#0e7490"
FADED_EDGE: Final = "#9ca3af"
FADED_TEXT: Final = "#6b7280"
