"""The seam between the planning loop and a model: one ``synthesize`` call per round.

Production wraps LlamaIndex's DeepSeek LLM (``control_plane.synthesizers.deepseek``); the embedded default is
the deterministic, graph-grounded ``control_plane.synthesizers.offline``; tests pass a scripted one
(``control_plane.testing``). The loop cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from control_plane.evidence import EvidenceGraph
from control_plane.understanding.interpretation import Reading
from data_plane.temporal import AsOf


@dataclass(frozen=True)
class Focus:
    """What the next round should favour: relation types, concepts, and free text."""

    relations: tuple[str, ...] = ()
    concept_ids: tuple[str, ...] = ()
    text: str = ""
    # "after" for questions about what comes after a concept: learning order runs forward.
    direction: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "relations": list(self.relations),
            "concept_ids": list(self.concept_ids),
            "text": self.text,
        }
        if self.direction:
            out["direction"] = self.direction
        return out


@dataclass(frozen=True)
class Usage:
    """Cost of one synthesis: model calls made (including a retry), tokens, wall time, dollars.

    ``reasoning_tokens`` are part of ``completion_tokens`` (the API reports them as a detail of it);
    ``cache_hit_tokens + cache_miss_tokens`` is the API's split of ``prompt_tokens`` (both 0 when
    the gateway did not report one). ``cost_usd`` is an estimate from the configured price table.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    reasoning_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class SynthesisRequest:
    """Everything a synthesizer may look at. Built by the loop once per round."""

    question: str
    focus: Focus
    evidence: EvidenceGraph[Any, Any]
    round_no: int
    max_rounds: int
    as_of: AsOf
    # Concepts in the evidence whose neighbourhoods have not been expanded yet: the boundary.
    unexpanded: frozenset[str] = frozenset()
    # How the question was read before round 1 (None: a caller that did not interpret it).
    reading: Reading | None = None
    # Concepts expanded one hop over every relation (a walk follows the learning relations only).
    visited: frozenset[str] = frozenset()
    # Why the previous round's claim was refused as contradicting the evidence ("": it was not).
    rejected: str = ""


@dataclass(frozen=True)
class Result:
    """What an answer states, as data: the answer contract's ``result``.

    ``members`` is the answer set the text states (for "what is needed before X" the closure, for
    "which of those does Y build on" only the concepts found, for a path its nodes); the cited
    concepts are wider (every concept the text names, and the paths that back it). ``facts``
    holds a form's other keys (``holds``, ``direct``, ``count``, ``first``, ``how``)."""

    intent: str
    members: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"intent": self.intent, "members": list(self.members), **self.facts}


@dataclass(frozen=True)
class Step:
    """One explained step of an answer: ``source -relation-> target`` is evidence edge ``edge``."""

    source: str
    relation: str
    target: str
    edge: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "relation": self.relation, "target": self.target, "edge_id": self.edge}


@dataclass(frozen=True)
class Claim:
    """What an answer asserts, as data, in the fields of its question form's contract
    (``control_plane.semantics.claims.CONTRACTS``: ``contract`` names it; the fields a contract
    does not have keep their defaults). ``complete`` says the claim is the whole answer the
    evidence gives, not a part of it.

    The verifier recomputes the claim from the evidence with the same meaning the offline
    synthesizer answers with, and the words a learner reads are rendered from the claim it
    verified, never from a model's prose."""

    contract: str
    complete: bool
    members: tuple[str, ...] = ()
    holds: bool | None = None
    count: int | None = None
    first: str | None = None
    path: tuple[str, ...] = ()  # edge refs, in order
    steps: tuple[Step, ...] = ()
    how: str | None = None
    lessons: tuple[str, ...] = ()  # lesson link refs

    def concept_ids(self) -> tuple[str, ...]:
        """Every concept id the claim names (members, the first, the ends of its steps)."""
        ids = [*self.members, *([self.first] if self.first else [])]
        ids += [c for s in self.steps for c in (s.source, s.target)]
        return tuple(dict.fromkeys(ids))

    def edge_ids(self) -> tuple[str, ...]:
        """Every edge ref the claim cites (its path, its steps)."""
        return tuple(dict.fromkeys([*self.path, *(s.edge for s in self.steps)]))


@dataclass(frozen=True)
class NameSpan:
    """Where an answer's text names a concept: characters ``[start, end)`` are its name."""

    start: int
    end: int
    concept_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.concept_id, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Draft:
    """A synthesizer's proposal: its ``claim`` (what it asserts, by the question form's
    contract), its confidence, what is missing and where to look next. ``error`` is set when the
    model's output could not be used (malformed JSON, wrong types, a claim without its form's
    fields); such a draft has confidence 0 and cites nothing.

    ``answer`` is text written from the claim (the offline synthesizer writes it, with ``names``
    saying where it named which concept); a model's draft has none: the verifier renders the
    text a learner reads from the claim it verified (``planning.verify``)."""

    answer: str
    confidence: float
    concept_ids: tuple[str, ...]
    edge_ids: tuple[str, ...]
    missing: str
    next_focus: Focus
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    lesson_refs: tuple[str, ...] = ()  # cited lesson links ("l" + version id), all in the evidence
    result: Result | None = None  # what the answer states (None: a synthesizer that does not say)
    names: tuple[NameSpan, ...] | None = None
    claim: Claim | None = None  # None: states no claim, so it is never an answer


@dataclass(frozen=True)
class SynthesizerInfo:
    """Who answered: recorded as the answer's grounding ``source``."""

    name: str  # "offline" | "deepseek" | "scripted"
    model: str
    prompt_version: str
    offline: bool

    @property
    def source(self) -> str:
        return f"{self.name}:{self.model}:prompt-{self.prompt_version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "offline": self.offline,
        }


@runtime_checkable
class QuestionReader(Protocol):
    """A synthesizer that can also read a question the grammar could not (one model call):
    ``messages`` are the reading prompt's (``prompts.build_reading_messages``); the reply text and
    what the call cost come back. The offline synthesizer is not one: offline reading is the
    grammar's alone."""

    def read_question(self, messages: list[dict[str, str]]) -> tuple[str, Usage]: ...


@runtime_checkable
class Synthesizer(Protocol):
    """One model call per round: propose an answer from the evidence sub-graph."""

    @property
    def info(self) -> SynthesizerInfo: ...

    def synthesize(self, request: SynthesisRequest) -> Draft: ...
