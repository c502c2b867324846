"""The question-set format: JSON Lines, one question per line.

Each line is an object::

    {"id": "q001", "question": "What must I master before RAG?", "type": "needed_before",
     "expect": {"concepts": ["llm_basics", ...], "abstain": false},
     "as_of": "2025-01-01", "known_at": "2025-07-01T00:00:00Z"}

``as_of`` (valid time) and ``known_at`` (recorded time) are optional ISO 8601 times; missing means
now. ``expect.concepts`` is the gold set of concept ids the answer should cite; it is empty when
``expect.abstain`` is true (the only correct response is to abstain).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from data_plane.clock import parse_time
from data_plane.errors import InputError

__all__ = ["Question", "dump_questions", "load_questions", "parse_question"]


@dataclass(frozen=True)
class Question:
    """One evaluation question with its gold answer."""

    id: str
    question: str
    type: str
    concepts: tuple[str, ...]
    abstain: bool
    as_of: str | None = None
    known_at: str | None = None

    @property
    def as_of_time(self) -> datetime | None:
        return None if self.as_of is None else parse_time(self.as_of, field="as_of")

    @property
    def known_at_time(self) -> datetime | None:
        return None if self.known_at is None else parse_time(self.known_at, field="known_at")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "type": self.type,
            "expect": {"concepts": list(self.concepts), "abstain": self.abstain},
        }
        if self.as_of is not None:
            out["as_of"] = self.as_of
        if self.known_at is not None:
            out["known_at"] = self.known_at
        return out


def _text(obj: dict[str, Any], name: str, where: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: {name!r} must be non-empty text", field=name, value=value)
    return value


def parse_question(obj: Any, *, where: str = "question") -> Question:
    """Validate one decoded JSON object; raises InputError naming the field."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object", value=obj)
    expect = obj.get("expect")
    if not isinstance(expect, dict):
        raise InputError(f"{where}: 'expect' must be an object", field="expect", value=expect)
    concepts = expect.get("concepts", [])
    if not isinstance(concepts, list) or not all(isinstance(c, str) and c for c in concepts):
        raise InputError(f"{where}: expect.concepts must be a list of ids", field="expect.concepts")
    abstain = expect.get("abstain", False)
    if not isinstance(abstain, bool):
        raise InputError(f"{where}: expect.abstain must be true or false", field="expect.abstain")
    if not abstain and not concepts:
        raise InputError(
            f"{where}: an answerable question needs at least one gold concept", field="expect.concepts"
        )
    times: dict[str, str | None] = {}
    for name in ("as_of", "known_at"):
        raw = obj.get(name)
        if raw is not None:
            if not isinstance(raw, str):
                raise InputError(f"{where}: {name!r} must be an ISO 8601 string", field=name, value=raw)
            parse_time(raw, field=name)
        times[name] = raw
    return Question(
        id=_text(obj, "id", where),
        question=_text(obj, "question", where),
        type=_text(obj, "type", where),
        concepts=tuple(dict.fromkeys(concepts)),
        abstain=abstain,
        as_of=times["as_of"],
        known_at=times["known_at"],
    )


def load_questions(path: str | Path) -> list[Question]:
    """Read a JSON Lines question set; blank lines are skipped, ids must be unique."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read question set {path}: {exc.strerror}", field="questions") from exc
    out: list[Question] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not valid JSON ({exc.msg})", field="questions") from exc
        q = parse_question(obj, where=where)
        if q.id in seen:
            raise InputError(f"{where}: duplicate question id {q.id!r}", field="id", value=q.id)
        seen.add(q.id)
        out.append(q)
    return out


def dump_questions(questions: Iterable[Question], path: str | Path) -> None:
    """Write questions as JSON Lines (stable key order, one per line)."""
    text = "".join(json.dumps(q.to_dict(), ensure_ascii=False) + "\n" for q in questions)
    Path(path).write_text(text, encoding="utf-8")
