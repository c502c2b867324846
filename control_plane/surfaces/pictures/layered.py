"""Layered layout in pure Python (grandalf's Sugiyama), for a machine without Graphviz ``dot``.

The same contract as :mod:`~control_plane.surfaces.pictures.graphviz`: boxes of the same sizes
(``box_size``), every directed edge laid out from its foundation to what needs it, so ranks follow
learning order, left to right or top to bottom, and a :class:`Layout` the page draws alike.
grandalf places the layers, orders each layer to cut crossings and routes an edge that spans
several layers through points of its own (so it passes beside the boxes between, not through
them); edges are drawn as straight lines between those points. It does not reserve room for edge
labels: a label sits at its edge's middle, on a white ground. Symmetric relations (``related``,
``contrasts_with``) order nothing and are drawn straight between their boxes, as with ``dot``.
Pure: a scene in, a layout out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Final

from grandalf.graphs import Edge as GEdge
from grandalf.graphs import Graph, Vertex
from grandalf.layouts import SugiyamaLayout
from grandalf.routing import route_with_lines

from control_plane.surfaces.pictures.geometry import Box, Layout, Point, Route, box_size
from control_plane.surfaces.pictures.scene import Scene, learning_order

__all__ = ["layered_layout"]

# Room between boxes of one layer, and between layers (in the direction learning order runs).
_ACROSS_GAP: Final = 22.0
_LAYER_GAP: Final = 64.0
# Room between unconnected parts of a picture, and around the whole.
_PART_GAP: Final = 36.0
_MARGIN: Final = 16.0
# The arrow head's length (page.py's marker): the line stops there and the head reaches the box.
_HEAD: Final = 10.0


@dataclass
class _VertexView:
    """What grandalf reads (``w``, ``h``: sizes in its own frame, layers along y) and writes
    (``xy``: the centre)."""

    w: float
    h: float
    xy: tuple[float, float] = (0.0, 0.0)


@dataclass
class _EdgeView:
    pts: list[tuple[float, float]] = field(default_factory=list)

    def setpath(self, pts: list[tuple[float, float]]) -> None:
        self.pts = list(pts)


def layered_layout(scene: Scene, *, rankdir: str = "LR") -> Layout:
    """Lay ``scene`` out in layers of learning order along ``rankdir`` (``LR`` or ``TB``)."""
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"rankdir must be LR or TB, got {rankdir!r}")
    if not scene.nodes:
        return Layout({}, {}, 0.0, 0.0, rankdir, engine="grandalf")
    across = rankdir == "LR"
    sizes = {n.id: box_size(n.lines) for n in scene.nodes}
    vertices = {}
    for n in scene.nodes:
        w, h = sizes[n.id]
        vertex = Vertex(n.id)
        # grandalf stacks layers top to bottom; left to right is that picture turned.
        vertex.view = _VertexView(h, w) if across else _VertexView(w, h)
        vertices[n.id] = vertex
    directed: dict[str, GEdge] = {}
    labels = {e.id: e.label for e in scene.edges}
    for e in scene.edges:
        order = learning_order(e.source, e.target, e.relation)
        if order is None or e.source not in vertices or e.target not in vertices:
            continue
        edge = GEdge(vertices[order[0]], vertices[order[1]])
        edge.view = _EdgeView()
        directed[e.id] = edge
    graph = Graph(list(vertices.values()), list(directed.values()))
    offset = 0.0
    for part in graph.C:
        offset = _lay_part(part, offset) + _PART_GAP
    boxes = {}
    for nid, vertex in vertices.items():
        x, y = vertex.view.xy
        w, h = sizes[nid]
        boxes[nid] = Box(y, x, w, h) if across else Box(x, y, w, h)
    routes = {}
    for eid, edge in directed.items():
        pts = [(y, x) if across else (x, y) for x, y in edge.view.pts]
        routes[eid] = _route(pts, labelled=bool(labels[eid]))
    for e in scene.edges:
        if e.id not in directed and e.source in boxes and e.target in boxes:
            a, b = boxes[e.source], boxes[e.target]
            ends = [_border(a, (b.x, b.y)), _border(b, (a.x, a.y))]
            routes[e.id] = _route(ends, head=False, labelled=bool(e.label))
    return _framed(boxes, routes, rankdir)


def _lay_part(part: Graph, offset: float) -> float:
    """Lay one connected part out, its left edge (in grandalf's frame) at ``offset``; returns its
    right edge."""
    sug = SugiyamaLayout(part)
    sug.xspace, sug.yspace = _ACROSS_GAP, _LAYER_GAP
    sug.route_edge = route_with_lines
    sug.init_all()
    sug.draw()
    views = [v.view for v in part.sV]
    left = min(v.xy[0] - v.w / 2 for v in views)
    shift = offset - left
    for v in views:
        v.xy = (v.xy[0] + shift, v.xy[1])
    for e in part.sE:
        e.view.pts = [(x + shift, y) for x, y in e.view.pts]
    right: float = max(v.xy[0] + v.w / 2 for v in views)
    return right


def _route(pts: list[Point], *, head: bool = True, labelled: bool) -> Route:
    """A polyline as the Bézier route the page draws (each straight piece a cubic with its control
    points on it), the head's tip at the last point, a label (if any) at the middle."""
    if head and len(pts) >= 2:
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
        cut = min(_HEAD, length / 2) / length
        tip, pts = pts[-1], [*pts[:-1], (x1 - (x1 - x0) * cut, y1 - (y1 - y0) * cut)]
    else:
        tip = None
    points = [pts[0]]
    for (ax, ay), (bx, by) in itertools.pairwise(pts):
        points += [
            (ax + (bx - ax) / 3, ay + (by - ay) / 3),
            (ax + 2 * (bx - ax) / 3, ay + 2 * (by - ay) / 3),
            (bx, by),
        ]
    middle = len(pts) // 2
    (ax, ay), (bx, by) = pts[max(middle - 1, 0)], pts[middle]
    return Route(tuple(points), tip, None, ((ax + bx) / 2, (ay + by) / 2) if labelled else None)


def _border(box: Box, toward: Point) -> Point:
    """Where the line from ``box``'s centre toward ``toward`` leaves the box."""
    dx, dy = toward[0] - box.x, toward[1] - box.y
    if dx == 0 and dy == 0:
        return box.x, box.y
    scale = min(
        (box.w / 2) / abs(dx) if dx else float("inf"),
        (box.h / 2) / abs(dy) if dy else float("inf"),
    )
    return box.x + dx * scale, box.y + dy * scale


def _framed(boxes: dict[str, Box], routes: dict[str, Route], rankdir: str) -> Layout:
    """Everything moved to start at the margin, and the canvas around it."""
    xs = [b.x - b.w / 2 for b in boxes.values()] + [p[0] for r in routes.values() for p in r.points]
    ys = [b.y - b.h / 2 for b in boxes.values()] + [p[1] for r in routes.values() for p in r.points]
    dx, dy = _MARGIN - min(xs), _MARGIN - min(ys)

    def moved(p: Point | None) -> Point | None:
        return None if p is None else (p[0] + dx, p[1] + dy)

    boxes = {k: Box(b.x + dx, b.y + dy, b.w, b.h) for k, b in boxes.items()}
    routes = {
        k: Route(
            tuple((x + dx, y + dy) for x, y in r.points), moved(r.end_tip), moved(r.start_tip), moved(r.label)
        )
        for k, r in routes.items()
    }
    width = max([b.x + b.w / 2 for b in boxes.values()] + [p[0] for r in routes.values() for p in r.points])
    height = max([b.y + b.h / 2 for b in boxes.values()] + [p[1] for r in routes.values() for p in r.points])
    return Layout(boxes, routes, width + _MARGIN, height + _MARGIN, rankdir, engine="grandalf")
