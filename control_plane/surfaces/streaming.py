"""JSON written as it is produced: one object whose list members are iterators.

``write_json_object`` emits exactly what ``json.dumps(obj, indent=2, ensure_ascii=False)`` would
for the same object with every iterator turned into a list, but holds one list item at a time,
so a whole-graph snapshot or a long diff prints with flat memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ["write_json_object"]


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _indented(text: str, by: str) -> str:
    return text.replace("\n", "\n" + by)


def write_json_object(write: Callable[[str], Any], fields: Mapping[str, Any]) -> None:
    """Write ``fields`` as one indented JSON object; values that are iterators (not lists,
    dicts or strings) are streamed item by item."""
    write("{")
    for i, (key, value) in enumerate(fields.items()):
        write(("," if i else "") + "\n  " + json.dumps(key, ensure_ascii=False) + ": ")
        if isinstance(value, Iterator):
            _write_list(write, value)
        else:
            write(_indented(_dumps(value), "  "))
    write("\n}" if fields else "}")
    write("\n")


def _write_list(write: Callable[[str], Any], items: Iterable[Any]) -> None:
    empty = True
    for item in items:
        write(("[\n    " if empty else ",\n    ") + _indented(_dumps(item), "    "))
        empty = False
    write("[]" if empty else "\n  ]")
