"""Layered layout by Graphviz ``dot``: the one place the layout engine is called.

``dot`` (Sugiyama: ranks, crossing minimisation, spline routing) places the boxes in learning
order, from left to right, or from top to bottom when that is what fits the page
(:func:`layout_scene` with ``fit``), and routes every edge with its label as a box of its own, so
labels never sit on boxes or on each other. Every directed edge is laid out and drawn from its
foundation to what needs it (``scene.learning_order``), so its arrow points the same way for a
prerequisite and for "builds on". We ask ``dot`` for positions only (``-Tjson0``) and draw the
SVG ourselves, so every element keeps its ids, grounding and escaping. Node boxes get a fixed
size computed here from the text (with room for wider fonts than the one ``dot`` measures with),
and edge labels are measured by ``dot`` at a larger font size than the page prints them. Where
``dot`` is not on PATH, :func:`layout_scene` lays the scene out with :mod:`.layered` instead
(pure Python, same boxes and directions).

:func:`dot_source` and :func:`parse_layout` are pure; :func:`run_dot` is the I/O. Error tree::

    KGError                 (data_plane.errors)
    └── LayoutUnavailable   dot is not installed, failed, or timed out (.reason)
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any, Final

from control_plane.surfaces.pictures.geometry import (
    EDGE_FONT_PX,
    LINE_PX,
    NODE_FONT_PX,
    Box,
    Layout,
    Point,
    Route,
    box_size,
)
from control_plane.surfaces.pictures.layered import layered_layout
from control_plane.surfaces.pictures.scene import Scene, learning_order
from data_plane.errors import KGError
from data_plane.events import get_logger

log = get_logger(__name__)

__all__ = [
    "EDGE_FONT_PX",
    "FIT_PX",
    "LINE_PX",
    "NODE_FONT_PX",
    "Box",
    "Layout",
    "LayoutUnavailable",
    "Route",
    "box_size",
    "dot_source",
    "layout_scene",
    "parse_layout",
    "run_dot",
]

# dot measures edge labels in its own Helvetica metrics at this size; the page prints them at 11 px.
_DOT_EDGE_FONT: Final = 15
_MARGIN: Final = 16
_TIMEOUT_S: Final = 60
# The widest picture that fits the page at 1280 px (2 rem margins, a border, room for a scrollbar).
FIT_PX: Final = 1180


class LayoutUnavailable(KGError):
    """The layout engine could not lay out a picture: not installed, failed, or timed out."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def dot_source(scene: Scene, *, rankdir: str = "LR") -> str:
    """The layout graph: nodes ``n0..`` and edges ``x0..`` (scene ids never reach dot unescaped),
    each directed edge pointing from its foundation to its dependent, so ranks follow learning
    order along ``rankdir`` (``LR`` or ``TB``)."""
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"rankdir must be LR or TB, got {rankdir!r}")
    index = {n.id: i for i, n in enumerate(scene.nodes)}
    out = [
        "digraph layout {",
        f"  rankdir={rankdir}; newrank=true; nodesep=0.28; ranksep=0.5; splines=true; margin=0;",
        f'  node [shape=box, fixedsize=true, label=""]; edge [fontname="Helvetica", fontsize={_DOT_EDGE_FONT}];',
    ]
    for n in scene.nodes:
        w, h = box_size(n.lines)
        out.append(f"  n{index[n.id]} [width={w / 72:.3f}, height={h / 72:.3f}];")
    for i, e in enumerate(scene.edges):
        if e.source not in index or e.target not in index:
            continue
        s, t = index[e.source], index[e.target]
        order = learning_order(e.source, e.target, e.relation)
        attrs = "dir=none, constraint=false" if order is None else "dir=forward"
        if order is not None and order[0] != e.source:
            s, t = t, s
        label = f"label={_quoted(e.label)}, " if e.label else ""
        out.append(f"  n{s} -> n{t} [id=x{i}, {label}{attrs}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _point(text: str, height: float) -> Point:
    x, y = text.split(",")[:2]
    return float(x) + _MARGIN, height - float(y) + _MARGIN


def parse_layout(scene: Scene, dot_json: str, *, rankdir: str = "LR") -> Layout:
    """Read ``dot -Tjson0`` output back onto the scene's ids, with y pointing down."""
    data: dict[str, Any] = json.loads(dot_json)
    bb = [float(v) for v in str(data["bb"]).split(",")]
    height = bb[3]
    boxes: dict[str, Box] = {}
    for obj in data.get("objects", []):
        name = str(obj["name"])
        if not name.startswith("n"):
            continue
        node = scene.nodes[int(name[1:])]
        x, y = _point(str(obj["pos"]), height)
        boxes[node.id] = Box(x, y, float(obj["width"]) * 72, float(obj["height"]) * 72)
    routes: dict[str, Route] = {}
    for edge in data.get("edges", []):
        e = scene.edges[int(str(edge["id"])[1:])]
        end_tip = start_tip = None
        points: list[Point] = []
        for token in str(edge["pos"]).split():
            if token.startswith("e,"):
                end_tip = _point(token[2:], height)
            elif token.startswith("s,"):
                start_tip = _point(token[2:], height)
            else:
                points.append(_point(token, height))
        label = _point(str(edge["lp"]), height) if "lp" in edge else None
        routes[e.id] = Route(tuple(points), end_tip, start_tip, label)
    return Layout(boxes, routes, bb[2] + 2 * _MARGIN, height + 2 * _MARGIN, rankdir)


def run_dot(source: str, *, dot: str = "dot") -> str:
    """Run ``dot -Tjson0`` on a graph; :class:`LayoutUnavailable` if it is missing or fails."""
    exe = shutil.which(dot)
    if exe is None:
        raise LayoutUnavailable(
            f"Graphviz's {dot!r} command was not found on PATH; install Graphviz "
            "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"
        )
    try:
        proc = subprocess.run(
            [exe, "-Tjson0"], input=source, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise LayoutUnavailable(f"Graphviz dot did not finish within {_TIMEOUT_S} s") from exc
    except OSError as exc:
        raise LayoutUnavailable(f"Graphviz dot could not be run: {exc}") from exc
    if proc.returncode != 0:
        raise LayoutUnavailable(f"Graphviz dot failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
    return proc.stdout


def layout_scene(scene: Scene, *, dot: str = "dot", fit: float | None = None) -> Layout:
    """Lay a scene out, learning order left to right: with Graphviz dot, or, where ``dot`` is not
    on PATH, with the pure-Python layered layout (:mod:`.layered`). With ``fit`` (pixels): if
    that is wider than ``fit``, top to bottom instead when that is narrower, so the page shows the
    picture without sideways scrolling (what is still wider, the page scales down to its width)."""
    if not scene.nodes:
        return Layout({}, {}, 0.0, 0.0)
    if shutil.which(dot) is None:
        log.info("pictures.layered_layout", reason=f"{dot!r} is not on PATH")

        def lay(rankdir: str) -> Layout:
            return layered_layout(scene, rankdir=rankdir)
    else:

        def lay(rankdir: str) -> Layout:
            return parse_layout(scene, run_dot(dot_source(scene, rankdir=rankdir), dot=dot), rankdir=rankdir)

    across = lay("LR")
    if fit is None or across.width <= fit:
        return across
    down = lay("TB")
    return down if down.width < across.width else across
