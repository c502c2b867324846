"""Replay a recorded answer: the same question against the graph as it was known when it was
answered, and against today's graph, with a JSON-serialisable report of what changed.

"As it was known" means the recorded answer's own as-of point: the same valid time, and the
recorded time it used (the answer's ``created_at`` unless the question asked for another
``known_at``). "Today" is now on both timelines. Neither replay is recorded.
"""

from __future__ import annotations

from typing import Any

from control_plane.planning.answer import Answer
from control_plane.planning.expansion import Expander
from control_plane.planning.loop import Planner
from control_plane.synthesizers.base import Synthesizer
from data_plane.clock import Clock, format_time, parse_time, utc_now
from data_plane.reads import GraphReader

__all__ = ["compare", "replay"]


def _edges(a: Answer) -> dict[int, str]:
    return {e.version_id: e.key for e in a.evidence.edges.values()}


def _members(a: Answer) -> set[str]:
    return set(a.result.members) if a.result is not None and not a.abstained else set()


def compare(before: Answer, after: Answer) -> dict[str, Any]:
    """What changed from ``before`` to ``after``: text, confidence, answer set (``result``
    members), citations, evidence edges (pure)."""
    eb, ea = _edges(before), _edges(after)
    kb, ka = set(eb.values()), set(ea.values())
    cb, ca = set(before.cited_concept_ids), set(after.cited_concept_ids)
    mb, ma = _members(before), _members(after)
    return {
        "answer_changed": before.text != after.text or before.abstained != after.abstained,
        "text": {"before": before.text, "after": after.text},
        "abstained": {"before": before.abstained, "after": after.abstained},
        "confidence": {
            "before": before.confidence,
            "after": after.confidence,
            "delta": round(after.confidence - before.confidence, 4),
        },
        "members": {"added": sorted(ma - mb), "removed": sorted(mb - ma)},
        "cited_concepts": {"added": sorted(ca - cb), "removed": sorted(cb - ca)},
        "evidence_edges": {
            "added_version_ids": sorted(set(ea) - set(eb)),
            "removed_version_ids": sorted(set(eb) - set(ea)),
            "added_keys": sorted(ka - kb),
            "removed_keys": sorted(kb - ka),
            "revised_keys": sorted(
                k
                for k in kb & ka
                if {v for v, kk in eb.items() if kk == k} != {v for v, kk in ea.items() if kk == k}
            ),
        },
    }


def replay(
    answer_id: str,
    *,
    reader: GraphReader,
    synthesizer: Synthesizer,
    store: Expander | None = None,
    clock: Clock = utc_now,
) -> dict[str, Any]:
    """Re-run recorded answer ``answer_id`` then and now; report both and the difference."""
    recorded = reader.answer(answer_id)
    payload = dict(recorded.content["payload"])
    question = str(recorded.content["question"])
    as_of = payload["as_of"]
    valid_at = parse_time(as_of["valid_at"], field="as_of")
    known_at = parse_time(as_of["recorded_at"], field="known_at")
    planner = Planner(reader, synthesizer, store=store, clock=clock)
    then = planner.ask(question, as_of=valid_at, known_at=known_at, record=False)
    now = planner.ask(question, record=False)
    return {
        "answer_id": answer_id,
        "question": question,
        "recorded": {
            "text": payload.get("text", recorded.content.get("answer_text")),
            "confidence": payload.get("confidence"),
            "abstained": payload.get("abstained"),
            "created_at": payload.get("created_at"),
            "synthesizer": payload.get("synthesizer"),
        },
        "then": {"as_of": then.as_of.to_dict(), **_summary(then)},
        "now": {"as_of": now.as_of.to_dict(), **_summary(now)},
        "reproduced": then.text == payload.get("text") and then.abstained == payload.get("abstained"),
        "changes": compare(then, now),
        "replayed_at": format_time(now.created_at),
    }


def _summary(a: Answer) -> dict[str, Any]:
    return {
        "text": a.text,
        "abstained": a.abstained,
        "abstain_reason": a.abstain_reason,
        "confidence": a.confidence,
        "members": sorted(_members(a)),
        "cited_concepts": list(a.cited_concept_ids),
        "cited_edges": list(a.cited_edges),
        "edge_version_ids": a.edge_version_ids(),
    }
