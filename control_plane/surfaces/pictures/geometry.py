"""What a layout is, whichever engine made it: boxes, routes, the canvas (pure values).

Box sizes are computed here from a node's text, the same for every engine (room for wider fonts
than the one a layout engine measures with).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["EDGE_FONT_PX", "LINE_PX", "NODE_FONT_PX", "Box", "Layout", "Point", "Route", "box_size"]

NODE_FONT_PX: Final = 13
EDGE_FONT_PX: Final = 11
LINE_PX: Final = 17
# Generous per-character width (13 px DejaVu Sans averages ~7.6 px) so names fit in any sans font.
_CHAR_PX: Final = 8.2
_PAD_X: Final = 22
_PAD_Y: Final = 14

Point = tuple[float, float]


@dataclass(frozen=True)
class Box:
    """A concept box: centre and size, in page pixels."""

    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Route:
    """An edge's cubic Bézier control points (p0, then three per segment), the arrow tips at the
    end or the start (if any), and the centre of its label."""

    points: tuple[Point, ...]
    end_tip: Point | None
    start_tip: Point | None
    label: Point | None


@dataclass(frozen=True)
class Layout:
    """Boxes by node id, routes by edge id, the canvas size, and which way learning order runs
    (``LR``: left to right, ``TB``: top to bottom); ``engine``: what laid it out."""

    boxes: Mapping[str, Box]
    routes: Mapping[str, Route]
    width: float
    height: float
    rankdir: str = "LR"
    engine: str = "dot"

    @property
    def positions(self) -> dict[str, Point]:
        """Node centres by node id."""
        return {k: (b.x, b.y) for k, b in self.boxes.items()}


def box_size(lines: tuple[str, ...]) -> tuple[float, float]:
    """Width and height of a box holding these lines at the page's node font."""
    return (
        max(96.0, max(len(x) for x in lines) * _CHAR_PX + 2 * _PAD_X),
        len(lines) * LINE_PX + 2 * _PAD_Y,
    )
