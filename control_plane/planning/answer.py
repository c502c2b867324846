"""The answer object: what a question gets back, and what is recorded for audit and replay.

JSON schema (``Answer.to_dict``), version ``answer/1``::

    {
      "schema": "answer/1",
      "answer_id": str,                 # uuid4 hex; key of the recorded answer
      "question": str,
      "text": str,                      # the answer, or "" when abstained
      "abstained": bool,
      "abstain_reason": str | null,
      "confidence": float,              # in [0, 1]; >= 0.80 whenever abstained is false
      "cited_concepts": [{"id": str, "name": str}],   # every concept the text names, and
                                        # every concept on the cited paths that back it
      "cited_edges": [str],             # edge ids ("e" + version id), all in evidence.edges
      "cited_lessons": [str],           # lesson ids whose active links the answer cites
      "result": {"intent": str, "members": [str], ...} | null,
                                        # what the text states, as data; null when abstained
      "reading": {...},                 # how the question was read (Reading.to_dict)
      "seeds": [str],
      "evidence": {"seeds": [...], "concepts": [Concept], "edges": [Edge + "edge_id"]},
      "as_of": {"valid_at": iso, "recorded_at": iso},
      "rounds": [RoundTrace],
      "llm_calls": int,                 # model calls made: the rounds' and the reading call's;
                                        # 0 for the offline synthesizer, which calls no model
      "syntheses": int,                 # synthesis steps run (rounds that asked the synthesizer,
                                        # offline or model): a separate figure from model calls
      "prompt_tokens": int, "completion_tokens": int,
      "reasoning_tokens": int,          # part of completion_tokens (thinking mode)
      "cache_hit_tokens": int, "cache_miss_tokens": int,   # DeepSeek's split of prompt_tokens
      "cost_usd": float,                # estimate from the configured price table
      "latency_ms": float,
      "synthesizer": {"name", "model", "prompt_version", "offline"},
      "created_at": iso,
      # only when the loop walked a closure (learning-order questions):
      "closure": {"walks": int, "partial": bool, "open": [str]},
      # only when the question asks for a study plan or a learning order:
      "study_plan": {"subject": str, "layers": [[{"concept_id": str, "lesson_ids": [str]}]],
                     "known": [str], "skipped": [str], "complete": bool},
      # only when abstained with a best draft: "partial": {"text", "confidence", ...}
    }

``result`` is the answer contract (``synthesizers.base.Result``): ``members`` is the answer set
the text states (for "which of those does Y build on" the concepts found, not the closure the
text also lists), distinct from ``cited_concepts``; form-specific keys (``holds``, ``direct``,
``count``, ``first``, ``how``) sit beside it. A synthesizer that states no result (a scripted one)
gives ``{"intent": <the reading's>, "members": <cited concepts>}``.

``llm_calls`` counts model calls only. Answers recorded before ``syntheses`` was added counted
each offline synthesis as one call; :func:`model_calls` and :func:`syntheses` read any recorded
payload with today's meaning (an offline answer: 0 model calls).

``closure.partial`` is true when a walk stopped at its row budget and its boundary (``open``)
was never expanded: such an answer is never accepted (it abstains below 0.80). ``study_plan``
layers go from what can be learned first to the subject's direct needs
(``control_plane.planning.study_plan``).

A ``RoundTrace`` is ``{"round", "focus", "frontier_added", "edges_added", "llm_calls",
"prompt_tokens", "completion_tokens", "latency_ms", "model_confidence", "confidence",
"verdict", "decision", "reasoning_tokens", "cache_hit_tokens", "cache_miss_tokens", "cost_usd"}``
(the last four were added later: answers recorded before them lack them, read them as 0); ``decision`` is one of ``answer``, ``continue``, ``abstain``,
``stop-empty`` (the frontier was empty, no LLM call was made).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from control_plane.evidence import EvidenceGraph
from control_plane.synthesizers.base import Focus, Result, SynthesizerInfo, Usage
from data_plane.clock import format_time
from data_plane.records import Concept, Edge
from data_plane.temporal import AsOf

SCHEMA = "answer/1"
# The one round that runs no synthesis: the frontier was empty.
NO_SYNTHESIS = "stop-empty"

__all__ = ["NO_SYNTHESIS", "SCHEMA", "Answer", "RoundTrace", "model_calls", "syntheses"]


@dataclass(frozen=True)
class RoundTrace:
    round: int
    focus: Focus
    frontier_added: tuple[str, ...]
    edges_added: tuple[str, ...]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    model_confidence: float | None
    confidence: float
    verdict: str
    decision: str
    reasoning_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    cost_usd: float = 0.0
    reading: dict[str, Any] | None = None  # round 1 only: how the question was read

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "focus": self.focus.to_dict(),
            "frontier_added": list(self.frontier_added),
            "edges_added": list(self.edges_added),
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": round(self.latency_ms, 3),
            "model_confidence": self.model_confidence,
            "confidence": self.confidence,
            "verdict": self.verdict,
            "decision": self.decision,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_hit_tokens": self.cache_hit_tokens,
            "cache_miss_tokens": self.cache_miss_tokens,
            "cost_usd": round(self.cost_usd, 8),
        }
        if self.reading is not None:
            out["reading"] = self.reading
        return out


@dataclass(frozen=True)
class Answer:
    answer_id: str
    question: str
    text: str
    abstained: bool
    abstain_reason: str | None
    confidence: float
    cited_concepts: tuple[tuple[str, str], ...]  # (id, name)
    cited_edges: tuple[str, ...]
    seeds: tuple[str, ...]
    evidence: EvidenceGraph[Concept, Edge]
    as_of: AsOf
    rounds: tuple[RoundTrace, ...]
    synthesizer: SynthesizerInfo
    created_at: datetime
    latency_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    cited_lessons: tuple[str, ...] = ()
    result: Result | None = None  # None when abstained
    # the model call that read a question the grammar could not (none: no such call)
    reading_usage: Usage = field(default_factory=Usage)

    @property
    def usage(self) -> Usage:
        """The answer's whole cost: every round's model calls and the call that read the question."""
        r = self.reading_usage
        return Usage(
            calls=sum(t.llm_calls for t in self.rounds) + r.calls,
            prompt_tokens=sum(t.prompt_tokens for t in self.rounds) + r.prompt_tokens,
            completion_tokens=sum(t.completion_tokens for t in self.rounds) + r.completion_tokens,
            reasoning_tokens=sum(t.reasoning_tokens for t in self.rounds) + r.reasoning_tokens,
            cache_hit_tokens=sum(t.cache_hit_tokens for t in self.rounds) + r.cache_hit_tokens,
            cache_miss_tokens=sum(t.cache_miss_tokens for t in self.rounds) + r.cache_miss_tokens,
            cost_usd=sum(t.cost_usd for t in self.rounds) + r.cost_usd,
        )

    @property
    def llm_calls(self) -> int:
        """Model calls made (0 offline); :attr:`syntheses` counts the synthesis steps."""
        return self.usage.calls

    @property
    def syntheses(self) -> int:
        """Synthesis steps run: rounds that asked the synthesizer, whether or not it called a model."""
        return sum(1 for t in self.rounds if t.decision != NO_SYNTHESIS)

    @property
    def prompt_tokens(self) -> int:
        return self.usage.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.usage.completion_tokens

    @property
    def reasoning_tokens(self) -> int:
        return self.usage.reasoning_tokens

    @property
    def cache_hit_tokens(self) -> int:
        return self.usage.cache_hit_tokens

    @property
    def cache_miss_tokens(self) -> int:
        return self.usage.cache_miss_tokens

    @property
    def cost_usd(self) -> float:
        return self.usage.cost_usd

    @property
    def cited_concept_ids(self) -> tuple[str, ...]:
        return tuple(cid for cid, _ in self.cited_concepts)

    @property
    def cited_requirements(self) -> tuple[str, ...]:
        """The requirement groups the answer's result names (``requirements``, ``one_of``,
        ``unmet``), by group id: what backs "one of" as cited edges back a plain need."""
        facts = self.result.facts if self.result is not None and not self.abstained else {}
        ids = [g["group_id"] for g in facts.get("requirements", ())]
        ids += [facts["one_of"]] if facts.get("one_of") else []
        ids += list(facts.get("unmet", ()))
        return tuple(sorted(set(ids)))

    def edge_version_ids(self) -> list[int]:
        """Version ids of every edge in the evidence (recorded as the answer's evidence)."""
        return sorted(e.version_id for e in self.evidence.edges.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "answer_id": self.answer_id,
            "question": self.question,
            "text": self.text,
            "abstained": self.abstained,
            "abstain_reason": self.abstain_reason,
            "confidence": self.confidence,
            "cited_concepts": [{"id": cid, "name": name} for cid, name in self.cited_concepts],
            "cited_edges": list(self.cited_edges),
            "cited_lessons": list(self.cited_lessons),
            # absent without groups, so answers on graphs without them keep their shape
            **({"cited_requirements": list(self.cited_requirements)} if self.cited_requirements else {}),
            "result": None if self.result is None or self.abstained else self.result.to_dict(),
            "seeds": list(self.seeds),
            "evidence": self.evidence.to_dict(),
            "as_of": self.as_of.to_dict(),
            "rounds": [r.to_dict() for r in self.rounds],
            **_usage_dict(self.usage),
            "syntheses": self.syntheses,
            "latency_ms": round(self.latency_ms, 3),
            "synthesizer": self.synthesizer.to_dict(),
            "created_at": format_time(self.created_at),
            **({"reading_call": _usage_dict(self.reading_usage)} if self.reading_usage.calls else {}),
            **self.extra,
        }


def _usage_dict(u: Usage) -> dict[str, Any]:
    return {
        "llm_calls": u.calls,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "reasoning_tokens": u.reasoning_tokens,
        "cache_hit_tokens": u.cache_hit_tokens,
        "cache_miss_tokens": u.cache_miss_tokens,
        "cost_usd": round(u.cost_usd, 8),
    }


def model_calls(payload: Mapping[str, Any]) -> int:
    """The model calls a recorded ``answer/1`` payload made. Payloads from before ``syntheses``
    was added counted every offline synthesis as a call: an offline one made none."""
    if "syntheses" not in payload and (payload.get("synthesizer") or {}).get("name") == "offline":
        return 0
    return int(payload.get("llm_calls", 0))


def syntheses(payload: Mapping[str, Any]) -> int:
    """The synthesis steps a recorded ``answer/1`` payload ran (older payloads: from its rounds)."""
    if "syntheses" in payload:
        return int(payload["syntheses"])
    return sum(1 for r in payload.get("rounds", ()) if r.get("decision") != NO_SYNTHESIS)
