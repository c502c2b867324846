"""Strict parsing of a model reply into a ``Draft``. Pure: text in, value out.

The reply must be exactly one JSON object with exactly the keys the system prompt asks for, each
of exactly the right type, and a ``claim`` with exactly the fields of the question's contract
(``semantics.claims.CONTRACTS``: a check's ``holds``, ``path`` and ``complete``, a count's
``count``, ``members`` and ``complete``, ...). The only leniency is a single ```json (or bare ```) code fence around
the whole object, which DeepSeek sometimes adds despite ``response_format``. Anything else
(prose around the object, a missing or extra key, ``"0.8"`` or ``true`` or ``NaN`` for a confidence,
an unknown relation type, a duplicated key, a claim with another contract's fields) yields a ``Draft`` with confidence 0, no citations and
``error`` saying what was wrong. Model content never raises.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from typing import Any, Final

from control_plane.semantics.claims import CONTRACTS
from control_plane.synthesizers.base import Claim, Draft, Focus, Step, Usage
from data_plane.relations import RELATIONS

__all__ = ["MalformedReading", "error_draft", "parse_draft", "parse_reading"]

TOP_KEYS: Final = frozenset({"claim", "confidence", "missing", "next_focus"})
FOCUS_KEYS: Final = frozenset({"relations", "concept_ids", "text"})
STEP_KEYS: Final = frozenset({"source", "relation", "target", "edge_id"})
_FENCE_RE: Final = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*)\n[ \t]*```", re.DOTALL)


class _Malformed(ValueError):
    """Internal: the reply is unusable; the message says why."""


def error_draft(error: str, usage: Usage) -> Draft:
    """The draft for an unusable reply: no answer, confidence 0, no citations, ``error`` set."""
    return Draft(
        answer="",
        confidence=0.0,
        concept_ids=(),
        edge_ids=(),
        missing="",
        next_focus=Focus(),
        usage=usage,
        error=error,
    )


def _unfence(text: str) -> str:
    stripped = text.strip()
    m = _FENCE_RE.fullmatch(stripped)
    return m.group(1) if m else stripped


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Malformed(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _no_constants(name: str) -> Any:
    raise _Malformed(f"{name} is not valid JSON")


def _keys(
    obj: dict[str, Any], expected: frozenset[str], where: str, optional: frozenset[str] = frozenset()
) -> None:
    missing = sorted(expected - obj.keys())
    extra = sorted(obj.keys() - expected - optional)
    if missing:
        raise _Malformed(f"{where} is missing key(s) {', '.join(missing)}")
    if extra:
        raise _Malformed(f"{where} has unexpected key(s) {', '.join(extra)}")


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"{where} must be a string, got {type(value).__name__}")
    return value


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Malformed(f"{where} must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _Malformed(f"{where}[{i}] must be a string, got {type(item).__name__}")
    return tuple(value)


def _confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed(f"confidence must be a number, got {type(value).__name__}")
    # Compare before converting: an integer like 10**400 does not fit a float.
    if (isinstance(value, float) and not math.isfinite(value)) or not 0 <= value <= 1:
        raise _Malformed(f"confidence must be in [0, 1], got {value!r}")
    return float(value)


def _bool(value: Any, where: str, *, null: bool = False) -> bool | None:
    if value is None and null:
        return None
    if not isinstance(value, bool):
        allowed = "true, false or null" if null else "true or false"
        raise _Malformed(f"{where} must be {allowed}, got {type(value).__name__}")
    return value


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Malformed(f"{where} must be a whole number >= 0, got {value!r}"[:200])
    return value


def _id_or_null(value: Any, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _steps(value: Any, where: str) -> tuple[Step, ...]:
    if not isinstance(value, list):
        raise _Malformed(f"{where} must be a list of steps, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise _Malformed(f"{at} must be an object, got {type(item).__name__}")
        _keys(item, STEP_KEYS, at)
        relation = _str(item["relation"], f"{at}.relation")
        if relation not in RELATIONS:
            raise _Malformed(f"{at}.relation is not a relation type: {relation!r}"[:200])
        out.append(
            Step(_str(item["source"], f"{at}.source"), relation, _str(item["target"], f"{at}.target"),
                 _str(item["edge_id"], f"{at}.edge_id"))
        )  # fmt: skip
    return tuple(out)


def _claim(value: Any, contract: str) -> Claim:
    """The claim object of ``contract``: exactly its fields (``claims.CONTRACTS``), each typed."""
    if not isinstance(value, dict):
        raise _Malformed(f"claim must be an object, got {type(value).__name__}")
    fields = CONTRACTS[contract].fields
    _keys(value, frozenset(fields), f"the claim ({contract})")
    get = value.get
    return Claim(
        contract,
        bool(_bool(value["complete"], "claim.complete")),
        members=_str_list(get("members", []), "claim.members"),
        holds=_bool(get("holds"), "claim.holds", null=True),
        count=_count(value["count"], "claim.count") if "count" in fields else None,
        first=_id_or_null(get("first"), "claim.first"),
        path=_str_list(get("path", []), "claim.path"),
        steps=_steps(get("steps", []), "claim.steps"),
        how=_str(value["how"], "claim.how") if "how" in fields else None,
        lessons=_str_list(get("lesson_link_ids", []), "claim.lesson_link_ids"),
    )


def _parse(text: str, contract: str) -> Draft:
    body = _unfence(text)
    if not body:
        raise _Malformed("the reply is empty")
    try:
        obj = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise _Malformed(f"the reply is not one JSON object ({exc.msg} at line {exc.lineno})") from None
    except _Malformed:
        raise
    except ValueError as exc:  # e.g. an integer literal longer than Python's conversion limit
        raise _Malformed(f"the reply is not usable JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise _Malformed(f"the reply must be a JSON object, got {type(obj).__name__}")
    _keys(obj, TOP_KEYS, "the reply")
    focus = obj["next_focus"]
    if not isinstance(focus, dict):
        raise _Malformed(f"next_focus must be an object, got {type(focus).__name__}")
    _keys(focus, FOCUS_KEYS, "next_focus")
    relations = _str_list(focus["relations"], "next_focus.relations")
    unknown = [r for r in relations if r not in RELATIONS]
    if unknown:
        raise _Malformed(f"next_focus.relations has unknown relation type(s) {', '.join(map(repr, unknown))}")
    claim = _claim(obj["claim"], contract)
    return Draft(
        answer="",  # a model writes no text: the learner reads the verified claim's words
        confidence=_confidence(obj["confidence"]),
        concept_ids=claim.concept_ids(),
        edge_ids=claim.edge_ids(),
        missing=_str(obj["missing"], "missing"),
        next_focus=Focus(
            relations=relations,
            concept_ids=_str_list(focus["concept_ids"], "next_focus.concept_ids"),
            text=_str(focus["text"], "next_focus.text"),
        ),
        lesson_refs=claim.lessons,
        claim=claim,
    )


def parse_draft(text: str, usage: Usage, *, contract: str = "set") -> Draft:
    """The ``Draft`` in ``text``, whose claim is in ``contract`` (``semantics.claims.CONTRACTS``:
    the reading's), or an error draft (confidence 0, no citations) saying what is wrong. Whether
    the claim is true of the evidence is the verifier's business, not the parser's."""
    try:
        draft = _parse(text, contract)
    except _Malformed as exc:
        return error_draft(f"malformed model reply: {exc}", usage)
    except RecursionError:
        return error_draft("malformed model reply: nested too deeply", usage)
    return replace(draft, usage=usage)


READING_KEYS: Final = frozenset({"understood", "intent", "form", "subjects", "transitive"})
SUBJECT_KEYS: Final = frozenset({"concept_id", "role"})


class MalformedReading(ValueError):
    """A model's reading of a question that is not the JSON object the reading prompt asks for."""


def parse_reading(text: str) -> dict[str, Any]:
    """The reading object in ``text`` (``prompts.READING_PROMPT``), types checked; raises
    :class:`MalformedReading` saying what is wrong. Whether its intent, roles and ids are ones the
    reader supports is ``understanding.model_reading``'s business."""
    body = _unfence(text)
    try:
        obj = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (json.JSONDecodeError, _Malformed, ValueError) as exc:
        raise MalformedReading(f"the reading is not one JSON object ({exc})") from None
    if not isinstance(obj, dict):
        raise MalformedReading(f"the reading must be a JSON object, got {type(obj).__name__}")
    try:
        _keys(obj, READING_KEYS, "the reading")
        if not isinstance(obj["understood"], bool) or not isinstance(obj["transitive"], bool):
            raise _Malformed("understood and transitive must be true or false")
        _str(obj["intent"], "intent")
        _str(obj["form"], "form")
        subjects = obj["subjects"]
        if not isinstance(subjects, list):
            raise _Malformed("subjects must be a list")
        for i, sub in enumerate(subjects):
            if not isinstance(sub, dict):
                raise _Malformed(f"subjects[{i}] must be an object")
            _keys(sub, SUBJECT_KEYS, f"subjects[{i}]")
            _str(sub["concept_id"], f"subjects[{i}].concept_id")
            _str(sub["role"], f"subjects[{i}].role")
    except _Malformed as exc:
        raise MalformedReading(str(exc)) from None
    return obj
