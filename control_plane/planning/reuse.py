"""Answer reuse, the pure part: the key a question is filed under, and the answer a reuse gives.

**The key** (:func:`reuse_key`) is a SHA-256 of canonical JSON (sorted keys, no spaces) of:

* the question's whole reading (``Reading.to_dict()``), taken generically: every field it has now
  or gains later is part of the key, except the volatile ones (:data:`VOLATILE`: timings, token
  counts, costs), removed at any depth;
* the question's normalised words (``names.normalise``: case, spacing and punctuation do not
  matter). The loop ranks neighbours by the words they share with the question and the model
  reads the question itself, so two questions with one reading but other words can be answered
  from different evidence; they are not one question;
* the seeds, the as-of semantics (``as_of`` and ``known_at`` as given, or ``"now"``), the
  synthesizer (name, model, prompt version) and the planner's bounds (rounds, frontier, threshold,
  walks): anything else that decides what a fresh answer would be;
* for a question the grammar reads unsure and the model is asked to read, the relation names the
  graph has (what the model may read it as). It is filed under the grammar's reading, before the
  model reads it, so a reuse costs no model call at all, not even the reading one; the reused
  answer carries the model's reading it was answered by.

Whether the newest answer under a key still holds is the data plane's call
(``data_plane.reuse.AnswerIndex.unchanged``).

**The reused answer** (:func:`reused_payload`) is the recorded payload, every key of it kept as it
was recorded (whatever the answer object holds, ``result`` included), except what belongs to this
answer alone: its ``answer_id``, the asker's ``question``, ``created_at``, ``latency_ms``, the
as-of point it was asked at, and the usage counters, which are 0 (no model call was made; the
``rounds`` keep the trace of how the reused answer was reached). ``reused_from`` names the answer
whose work it reuses (the original, also when that answer was itself found by reuse).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from control_plane.synthesizers.base import SynthesizerInfo
from control_plane.understanding.names import normalise
from data_plane.clock import format_time
from data_plane.temporal import AsOf

__all__ = [
    "INSTANCE",
    "USAGE",
    "VOLATILE",
    "ReusedAnswer",
    "canonical",
    "reuse_key",
    "reused_payload",
    "substance",
]

# Bump when the key's recipe changes: old entries then simply stop matching.
KEY_VERSION: Final = "reuse/1"
# Fields that say how much something cost or when, never what it means.
VOLATILE: Final = frozenset(
    {
        "latency_ms",
        "elapsed_ms",
        "duration_ms",
        "created_at",
        "usage",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "cache_hit_tokens",
        "cache_miss_tokens",
        "cost_usd",
    }
)
# What a reused answer cost: nothing.
USAGE: Final[dict[str, int | float]] = {
    "llm_calls": 0,
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "reasoning_tokens": 0,
    "cache_hit_tokens": 0,
    "cache_miss_tokens": 0,
    "cost_usd": 0.0,
}


# Fields of an answer payload that belong to that one answer, not to what it says.
INSTANCE: Final = frozenset({"answer_id", "question", "created_at", "latency_ms", "reused_from", *USAGE})


def substance(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What an answer says: its payload without :data:`INSTANCE` fields (also in its rounds). A
    reused answer's substance equals that of a fresh answer as of the same point."""
    out = {k: v for k, v in payload.items() if k not in INSTANCE}
    out["rounds"] = [{k: v for k, v in r.items() if k not in INSTANCE} for r in payload.get("rounds", ())]
    return out


def canonical(value: Any) -> Any:
    """``value`` as plain JSON data without its volatile fields (at any depth)."""
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list | tuple | set | frozenset):
        items = [canonical(v) for v in value]
        return sorted(items, key=_dumps) if isinstance(value, set | frozenset) else items
    if isinstance(value, datetime):
        return format_time(value)
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def reuse_key(
    reading: Mapping[str, Any],
    *,
    question: str,
    seeds: Sequence[str],
    as_of: datetime | None,
    known_at: datetime | None,
    synthesizer: SynthesizerInfo,
    planner: Mapping[str, Any],
    relations: Sequence[str] | None = None,
) -> str:
    """The key a question is filed under (module docstring): 64 hex characters."""
    spec = {
        "key": KEY_VERSION,
        "reading": canonical(reading),
        "words": list(normalise(question)),
        "seeds": list(seeds),
        "as_of": format_time(as_of) if as_of is not None else "now",
        "known_at": format_time(known_at) if known_at is not None else "now",
        "synthesizer": canonical(synthesizer.to_dict()),
        "planner": canonical(planner),
        **({"relations": list(relations)} if relations is not None else {}),
    }
    return hashlib.sha256(_dumps(spec).encode("utf-8")).hexdigest()


def reused_payload(
    recorded: Mapping[str, Any],
    *,
    answer_id: str,
    question: str,
    created_at: datetime,
    as_of: AsOf,
    latency_ms: float,
) -> dict[str, Any]:
    """The answer a reuse of ``recorded`` gives (module docstring)."""
    out = dict(recorded)
    out.update(
        answer_id=answer_id,
        question=question,
        created_at=format_time(created_at),
        latency_ms=round(latency_ms, 3),
        as_of=as_of.to_dict(),
        reused_from=recorded.get("reused_from") or recorded["answer_id"],
    )
    out.update({k: v for k, v in USAGE.items() if k in out})
    return out


@dataclass(frozen=True)
class ReusedAnswer:
    """An answer given by reusing a recorded one: its payload (``answer/1``), as recorded."""

    payload: Mapping[str, Any]

    @property
    def answer_id(self) -> str:
        return str(self.payload["answer_id"])

    @property
    def abstained(self) -> bool:
        return bool(self.payload["abstained"])

    @property
    def reused_from(self) -> str:
        return str(self.payload["reused_from"])

    @property
    def llm_calls(self) -> int:
        return 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.payload)
