"""Every request's text is checked at the door, before any route (and so any round of a question,
any model call, any database query) sees it.

Text that no engine stores alike is refused wherever it comes in: a NUL character (PostgreSQL
refuses it, and a driver error is no answer) or a lone surrogate (no UTF-8 text at all; a JSON
``"\\ud800"`` escape decodes to one). Path and query parameters, headers, and every string of a
JSON body (keys included) are checked; the 422 problem names where the text was, in the shape
the validation errors use (``path.concept_id``, ``query.cursor``, ``header.x-request-id``,
``body.grounding.reason``). A body that is not JSON is left to the route, which reports where it
breaks. :func:`checked_input` is an app-wide dependency (``create_app``); the walk is pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Final

from fastapi import HTTPException, Request

from data_plane.records import text_fault

__all__ = ["checked_input", "first_fault", "json_faults"]

_WITH_BODY: Final = frozenset({"POST", "PUT", "PATCH"})


def json_faults(value: Any, where: str = "body") -> Iterator[tuple[str, str]]:
    """``(where, why)`` for every string in a decoded JSON value (keys too) that cannot be stored."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, str):
            fault = text_fault(item)
            if fault is not None:
                yield at, fault
        elif isinstance(item, dict):
            for key, inner in item.items():
                fault = text_fault(str(key))
                if fault is not None:
                    yield at, f"has a key that {fault}"
                stack.append((f"{at}.{key}", inner))
        elif isinstance(item, list):
            stack.extend((f"{at}.{i}", inner) for i, inner in enumerate(item))


def first_fault(texts: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The first ``(where, why)`` among ``(where, text)`` pairs whose text cannot be stored."""
    for where, text in texts:
        fault = text_fault(text)
        if fault is not None:
            return where, fault
    return None


def _is_json(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


async def checked_input(request: Request) -> None:
    """422 naming the first path, query, header or body text that cannot be stored (see above)."""
    found = first_fault(
        [
            *((f"path.{name}", str(value)) for name, value in request.path_params.items()),
            *((f"query.{name}", value) for name, value in request.query_params.multi_items()),
            *((f"query.{name}", name) for name in request.query_params),
            *((f"header.{name}", value) for name, value in request.headers.items()),
        ]
    )
    if found is None and request.method in _WITH_BODY and _is_json(request):
        try:
            body = json.loads(await request.body())
        except (ValueError, RecursionError):
            body = None  # the route reports a body that is not JSON, with its line and column
        found = next(json_faults(body), None)
    if found is not None:
        where, why = found
        raise HTTPException(422, f"{where}: {why}")
