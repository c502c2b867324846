"""The HTTP contract: Pydantic models of every request body and every response.

Response models mirror the domain's ``to_dict`` shapes field for field (``Concept``, ``Edge``,
``Version``, ``Snapshot``, ``Diff``, the ``answer/1`` object of
:mod:`control_plane.planning.answer`, the replay report of :mod:`control_plane.planning.replay`),
so declaring them changes no byte of a response; it makes ``/openapi.json`` a contract a
learning platform can generate a client from. Times in responses are ISO 8601 strings in UTC
with a ``Z`` suffix (``data_plane.clock.format_time``); times in requests are ISO 8601 with a
zone (naive times are refused with 400).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from data_plane.records import Grounding
from data_plane.tokens import Token

__all__ = [
    "AnswerOut",
    "AskIn",
    "ConceptIn",
    "ConceptOut",
    "ConceptReviseIn",
    "DiffOut",
    "EdgeIn",
    "EdgeInvalidateIn",
    "EdgeOut",
    "GroundingIn",
    "InvalidateIn",
    "LessonLinkIn",
    "LessonUnlinkIn",
    "Problem",
    "ReplayOut",
    "SnapshotOut",
    "VersionOut",
    "WrittenOut",
]

MAX_QUESTION: Final = 2000

_TIME = "ISO 8601 time in UTC, e.g. 2024-06-01T00:00:00Z"


# ---------------------------------------------------------------------------------------------
# Request bodies


class GroundingIn(BaseModel):
    """Why a write is believed. ``source`` defaults to ``api:<token name>``; ``confidence`` to 1.0."""

    reason: str = Field(min_length=1, max_length=4000)
    evidence: Any = Field(description="Non-empty JSON: a document, URL, quote ...")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    source: str | None = Field(default=None, max_length=400)

    @field_validator("evidence")
    @classmethod
    def _encodable(cls, value: Any) -> Any:
        # A JSON escape like "\ud800" decodes to a lone surrogate, which SQLite stores but no
        # response can encode: refuse it here (UnicodeEncodeError is a ValueError, so this is a 422).
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value

    def build(self, token: Token) -> Grounding:
        return Grounding(self.confidence, self.reason, self.source or f"api:{token.name}", self.evidence)


class AskIn(BaseModel):
    """A learner's question, optionally as of another (valid time, recorded time)."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    as_of: datetime | None = Field(default=None, description="Valid time; default now.")
    known_at: datetime | None = Field(default=None, description="Recorded time; default now.")


class ConceptIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=400)
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    valid_at: datetime | None = None
    grounding: GroundingIn
    allow_duplicate_name: bool = Field(
        default=False,
        description="Add the concept even if its name or an alias reads the same as another concept's "
        "(otherwise 409).",
    )


class ConceptReviseIn(BaseModel):
    name: str | None = None
    aliases: list[str] | None = None
    summary: str | None = None
    valid_at: datetime | None = None
    grounding: GroundingIn
    allow_duplicate_name: bool = Field(
        default=False,
        description="Accept a new name or alias that reads the same as another concept's (otherwise 409).",
    )


class InvalidateIn(BaseModel):
    invalid_at: datetime | None = None
    retract: bool = False
    grounding: GroundingIn


class EdgeIn(BaseModel):
    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    valid_at: datetime | None = None
    grounding: GroundingIn


class EdgeInvalidateIn(BaseModel):
    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    invalid_at: datetime | None = None
    retract: bool = False
    grounding: GroundingIn


class LessonLinkIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    title: str | None = None
    grounding: GroundingIn


class LessonUnlinkIn(BaseModel):
    concept_id: str = Field(min_length=1, max_length=200)
    grounding: GroundingIn


# ---------------------------------------------------------------------------------------------
# Graph records


class Problem(BaseModel):
    """An RFC 7807 problem body (``application/problem+json``)."""

    type: str
    title: str
    status: int
    detail: str


class GroundingOut(BaseModel):
    confidence: float
    reason: str
    source: str
    evidence: Any


class _Stamped(BaseModel):
    """Where a version sits on both timelines (``data_plane.records.Stamp``)."""

    version_id: int
    op: str = Field(description="assert, revise, invalidate or retract")
    valid_at: str = Field(description=_TIME)
    invalid_at: str | None = Field(description=_TIME + "; null while open")
    recorded_at: str = Field(description=_TIME)
    expired_at: str | None = Field(description=_TIME + "; null while current")
    supersedes_id: int | None


class ConceptOut(_Stamped):
    concept_id: str
    name: str
    aliases: list[str]
    summary: str
    grounding: GroundingOut


class EdgeOut(_Stamped):
    key: str = Field(description="source>relation>target")
    source_id: str
    target_id: str
    relation: str
    grounding: GroundingOut


class VersionOut(_Stamped):
    """Any version of any versioned table (history, snapshot lessons, diffs, writes)."""

    table: str
    key: str
    content: dict[str, Any]
    grounding: GroundingOut


class WrittenOut(BaseModel):
    """The versions a curation request wrote (an invalidation may cascade to edges)."""

    written: list[VersionOut]


class SnapshotOut(BaseModel):
    """One page of the whole graph as of (valid time, recorded time)."""

    valid_at: str = Field(description=_TIME)
    recorded_at: str = Field(description=_TIME)
    concepts: list[ConceptOut]
    edges: list[EdgeOut]
    lessons: list[VersionOut]
    lesson_links: list[VersionOut]
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page.")


class DiffOut(BaseModel):
    """One page of the versions recorded in (from, to], grouped by operation."""

    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from", description=_TIME)
    to: str = Field(description=_TIME)
    asserted: list[VersionOut]
    revised: list[VersionOut]
    invalidated: list[VersionOut]
    retracted: list[VersionOut]
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page.")


# ---------------------------------------------------------------------------------------------
# answer/1


class CitedConcept(BaseModel):
    id: str
    name: str


class EvidenceEdgeOut(EdgeOut):
    edge_id: str = Field(description='"e" + version id; what cited_edges refer to')


class EvidenceOut(BaseModel):
    # Lesson links cited as evidence ("lessons") appear only when a lesson question read them.
    model_config = ConfigDict(extra="allow")

    seeds: list[str]
    concepts: list[ConceptOut]
    edges: list[EvidenceEdgeOut]


class AsOfOut(BaseModel):
    valid_at: str = Field(description=_TIME)
    recorded_at: str = Field(description=_TIME)


class FocusOut(BaseModel):
    model_config = ConfigDict(extra="allow")  # "direction" for questions about what comes after

    relations: list[str]
    concept_ids: list[str]
    text: str


class RoundOut(BaseModel):
    round: int
    focus: FocusOut
    frontier_added: list[str]
    edges_added: list[str]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    model_confidence: float | None
    confidence: float
    verdict: str
    decision: str = Field(description="answer, continue, abstain or stop-empty")


class SynthesizerOut(BaseModel):
    name: str
    model: str
    prompt_version: str
    offline: bool


class AnswerOut(BaseModel):
    """The ``answer/1`` object: the answer, or an abstention with its reason, and the evidence
    sub-graph it rests on. Later minor additions appear as extra fields (e.g. ``partial``)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    schema_: str = Field(alias="schema", description='"answer/1"')
    answer_id: str
    question: str
    text: str = Field(description='The answer, or "" when abstained.')
    abstained: bool
    abstain_reason: str | None
    confidence: float = Field(ge=0.0, le=1.0)
    cited_concepts: list[CitedConcept]
    cited_edges: list[str] = Field(description="Edge ids, all in evidence.edges.")
    seeds: list[str]
    evidence: EvidenceOut
    as_of: AsOfOut
    rounds: list[RoundOut]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    synthesizer: SynthesizerOut
    created_at: str = Field(description=_TIME)


# ---------------------------------------------------------------------------------------------
# Replay report


class RecordedOut(BaseModel):
    text: str | None
    confidence: float | None
    abstained: bool | None
    created_at: str | None
    synthesizer: SynthesizerOut | None


class ReplayRunOut(BaseModel):
    as_of: AsOfOut
    text: str
    abstained: bool
    abstain_reason: str | None
    confidence: float
    cited_concepts: list[str]
    cited_edges: list[str]
    edge_version_ids: list[int]


class BeforeAfterText(BaseModel):
    before: str
    after: str


class BeforeAfterFlag(BaseModel):
    before: bool
    after: bool


class ConfidenceChange(BaseModel):
    before: float
    after: float
    delta: float


class CitationChange(BaseModel):
    added: list[str]
    removed: list[str]


class EvidenceChange(BaseModel):
    added_version_ids: list[int]
    removed_version_ids: list[int]
    added_keys: list[str]
    removed_keys: list[str]
    revised_keys: list[str]


class ChangesOut(BaseModel):
    answer_changed: bool
    text: BeforeAfterText
    abstained: BeforeAfterFlag
    confidence: ConfidenceChange
    cited_concepts: CitationChange
    evidence_edges: EvidenceChange


class ReplayOut(BaseModel):
    """A recorded answer re-run as of its own times ("then") and as of now, and what changed."""

    answer_id: str
    question: str
    recorded: RecordedOut
    then: ReplayRunOut
    now: ReplayRunOut
    reproduced: bool
    changes: ChangesOut
    replayed_at: str = Field(description=_TIME)
