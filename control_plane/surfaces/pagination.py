"""Cursors for paged listings (the HTTP list endpoints, the MCP tools): opaque to clients, pure
to build and to read.

A cursor is URL-safe base64 of a small JSON object: which listing it belongs to (``kind``), the
query it continues (``q``: the filters the client gave), the point in time the first page was
read at (``at``: so every page of one walk sees the same graph even while others write), and
where the previous page stopped (``pos``: a last key, or per-section offsets). A cursor given
with filters other than its own, or one that does not decode to values this API could have
written (text a database stores, integers within 64 bits), is an ``InputError`` (HTTP: a 400
problem), never a guess.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from data_plane.errors import InputError
from data_plane.records import text_fault

__all__ = [
    "DEFAULT_LIMIT",
    "END",
    "MAX_LIMIT",
    "PAGED",
    "Cursor",
    "Section",
    "keyset_sections",
    "next_headers",
]

DEFAULT_LIMIT: Final = 100
MAX_LIMIT: Final = 1000

T = TypeVar("T")

# OpenAPI: how a list response points at its next page.
PAGED: Final[dict[int | str, dict[str, Any]]] = {
    200: {
        "headers": {
            "X-Next-Cursor": {
                "description": "Cursor of the next page; absent on the last page.",
                "schema": {"type": "string"},
            },
            "Link": {
                "description": 'RFC 8288 `<url>; rel="next"` for the next page; absent on the last page.',
                "schema": {"type": "string"},
            },
        }
    }
}


class Cursor:
    """The decoded state of one listing walk."""

    def __init__(self, kind: str, query: Mapping[str, Any], at: Any = None, pos: Any = None) -> None:
        self.kind = kind
        self.query = dict(query)
        self.at = at
        self.pos = pos

    def encode(self) -> str:
        raw = json.dumps(
            {"kind": self.kind, "q": self.query, "at": self.at, "pos": self.pos},
            separators=(",", ":"),
            sort_keys=True,
        )
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def advanced(self, pos: Any) -> Cursor:
        return Cursor(self.kind, self.query, self.at, pos)

    @classmethod
    def resume(cls, text: str | None, kind: str, query: Mapping[str, Any]) -> Cursor | None:
        """The cursor ``text`` for listing ``kind``, checked against the client's ``query``
        (filters the client repeats must equal the cursor's); None when ``text`` is None."""
        if text is None:
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError, RecursionError):
            data = None
        if (
            not isinstance(data, dict)
            or data.get("kind") != kind
            or not isinstance(data.get("q"), dict)
            or not _storable(data)
        ):
            raise InputError(
                f"cursor is not a {kind} cursor; pass next_cursor back unchanged", field="cursor"
            )
        given = {k: v for k, v in query.items() if v is not None}
        if any(data["q"].get(k) != v for k, v in given.items()):
            raise InputError("cursor belongs to a query with other filters", field="cursor")
        return cls(kind, data["q"], data.get("at"), data.get("pos"))


_INT64: Final = range(-(2**63), 2**63)


def _storable(data: Any) -> bool:
    """Whether every value a cursor decodes to could be one this API wrote: text a database
    stores (no NUL, no lone surrogate), integers within 64 bits, no NaN (pure)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if text_fault(item) is not None:
                return False
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if item not in _INT64:
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


# A section's position in a keyset walk: None (not started), END (exhausted) or the JSON key of
# the last item served. A section reads ``(position, n)`` -> at most n items after it, in key order.
END: Final = "end"
Section = tuple[Callable[[Any, int], Iterable[T]], Callable[[T], Any]]


def keyset_sections(
    sections: Mapping[str, Section[T]], positions: Sequence[Any] | None, limit: int
) -> tuple[dict[str, list[T]], list[Any] | None]:
    """Up to ``limit`` items of every section after its position, and the next positions (None
    when every section is exhausted). Each section is read with ``limit + 1`` rows at most, so a
    page costs the same on a graph of any size."""
    if positions is not None and not isinstance(positions, list | tuple):
        raise InputError("cursor positions do not match this listing", field="cursor")
    start = list(positions) if positions is not None else [None] * len(sections)
    if len(start) != len(sections):
        raise InputError("cursor positions do not match this listing", field="cursor")
    page: dict[str, list[T]] = {}
    after: list[Any] = []
    for (name, (read, key)), pos in zip(sections.items(), start, strict=True):
        if pos == END:
            page[name] = []
            after.append(END)
            continue
        items = list(read(pos, limit + 1))
        page[name] = items[:limit]
        after.append(key(items[limit - 1]) if len(items) > limit else END)
    return page, (after if any(a != END for a in after) else None)


def next_headers(next_url: str, cursor: str | None) -> dict[str, str]:
    """``X-Next-Cursor`` and an RFC 8288 ``Link: <next_url>; rel="next"`` for a next page, or nothing."""
    if cursor is None:
        return {}
    return {"X-Next-Cursor": cursor, "Link": f'<{next_url}>; rel="next"'}
