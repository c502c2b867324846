"""Streamed JSON output is byte-for-byte what json.dumps would print for the same object."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from control_plane.surfaces.streaming import write_json_object

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=4), _json | st.lists(_json, max_size=4), max_size=4))
def test_streamed_object_equals_json_dumps(obj: dict[str, Any]) -> None:
    """Lists handed over as iterators print exactly as json.dumps(indent=2) prints the lists."""
    buf = io.StringIO()
    write_json_object(buf.write, {k: iter(v) if isinstance(v, list) else v for k, v in obj.items()})
    assert buf.getvalue() == json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def test_items_are_pulled_one_at_a_time() -> None:
    """The writer consumes the iterator lazily: each item is written before the next is pulled."""
    buf = io.StringIO()
    seen: list[int] = []

    def items() -> Any:
        for i in range(3):
            assert buf.getvalue().count("{") == i + 1  # the outer object plus one per written item
            seen.append(i)
            yield {"i": i}

    write_json_object(buf.write, {"items": items()})
    assert seen == [0, 1, 2]
    assert json.loads(buf.getvalue()) == {"items": [{"i": 0}, {"i": 1}, {"i": 2}]}
