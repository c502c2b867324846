"""Evidence pictures: an answer's evidence sub-graph as Mermaid, Graphviz DOT, or an HTML page.

Pure functions over the answer JSON (``Answer.to_dict()``), so a recorded answer can be drawn long
after it was given. The modules, each one concept:

    scene      what a picture shows: cited vs other evidence, learning order, stages (pure)
    geometry   what a layout is: boxes, routes, the canvas (whichever engine made it)
    graphviz   the layered layout, by Graphviz ``dot`` (the one place it is called), or without it
    layered    the same layout in pure Python (grandalf), where ``dot`` is not installed
    page       the self-contained HTML page: pictures, then the grounding tables
    text       Mermaid and DOT text, laid out by their own engines
    palette    the colours all formats share

Why Graphviz, and what is drawn without it: docs/pictures.md.
"""

from __future__ import annotations

from control_plane.surfaces.pictures.graphviz import Layout, LayoutUnavailable, layout_scene
from control_plane.surfaces.pictures.page import to_html
from control_plane.surfaces.pictures.scene import Answer, cited_scene, evidence_scene
from control_plane.surfaces.pictures.text import to_dot, to_mermaid

__all__ = [
    "Layout",
    "LayoutUnavailable",
    "cited_scene",
    "evidence_scene",
    "layout",
    "to_dot",
    "to_html",
    "to_mermaid",
]


def layout(answer: Answer, *, dot: str = "dot") -> Layout:
    """The layout of all of an answer's gathered evidence (boxes, routes, canvas size)."""
    return layout_scene(evidence_scene(answer), dot=dot)
