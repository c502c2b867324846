"""The HTTP contract: Pydantic models of every request body and every response.

Response models mirror the domain's ``to_dict`` shapes field for field (``Concept``, ``Edge``,
``Version``, ``Snapshot``, ``Diff``, the ``answer/1`` object of
:mod:`control_plane.planning.answer`, the replay report of :mod:`control_plane.planning.replay`),
so declaring them changes no byte of a response; it makes ``/openapi.json`` a contract a
learning platform can generate a client from. Times in responses are ISO 8601 strings in UTC
with a ``Z`` suffix (``data_plane.clock.format_time``); times in requests (bodies and query
parameters alike, :data:`Instant`) are what ``kg`` accepts: a bare date (midnight UTC of that day)
or a datetime with a zone (naive datetimes are refused with 400).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from enum import StrEnum
from importlib import resources
from typing import Annotated, Any, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator

from data_plane.records import Grounding
from data_plane.tokens import Token

# Real values from the bundled curriculum, for the examples Swagger UI and ReDoc show (made by
# asking a fresh `kg init` database through this API; lists cut to two items).
_EXAMPLES: Final[dict[str, Any]] = json.loads(
    resources.files("control_plane.surfaces.http").joinpath("examples.json").read_text(encoding="utf-8")
)


def example(name: str) -> dict[str, Any]:
    """The ``json_schema_extra`` that gives a model its example from ``examples.json``."""
    return {"examples": [_EXAMPLES[name]]}


__all__ = [
    "AnswerOut",
    "AskIn",
    "ConceptDetailOut",
    "ConceptHitOut",
    "ConceptIn",
    "ConceptOut",
    "ConceptReviseIn",
    "DiffOut",
    "EdgeIn",
    "EdgeInvalidateIn",
    "EdgeOut",
    "GroundingIn",
    "HealthOut",
    "Instant",
    "InvalidateIn",
    "LessonLinkIn",
    "LessonUnlinkIn",
    "Problem",
    "ReadyOut",
    "RelationName",
    "ReplayOut",
    "SnapshotOut",
    "VersionOut",
    "WrittenOut",
]

MAX_QUESTION: Final = 2000

_TIME = "ISO 8601 time in UTC, e.g. 2024-06-01T00:00:00Z"
AS_OF: Final = (
    "Valid time: the curriculum as it was (or will be) true at this time; default now. "
    "A date (2024-06-01, midnight UTC) or a datetime with a zone (2024-06-01T12:00:00Z)."
)
KNOWN_AT: Final = (
    "Recorded time: what the system had recorded by this time (audit view); default now. "
    "A date (midnight UTC) or a datetime with a zone."
)
TIME_IN: Final = "A date (2024-06-01, midnight UTC) or a datetime with a zone (2024-06-01T12:00:00Z)."


def _bare_date(value: Any) -> Any:
    """A bare ISO date is midnight UTC of that day, as on the command line (``parse_time``)."""
    if isinstance(value, str) and len(value.strip()) == 10:
        try:
            day = date.fromisoformat(value.strip())
        except ValueError:
            return value  # not a date: the datetime parser says what is wrong
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    return value


# A time in a request: a bare date or a datetime (a naive datetime is refused with 400 downstream).
# Declared as either in /openapi.json, so a generated client takes a date as well as a datetime.
Instant = Annotated[
    datetime,
    BeforeValidator(_bare_date),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]}
    ),
]


class RelationName(StrEnum):
    """A relation type: ``data_plane.relations.RELATIONS`` (a test checks they agree), as an enum
    a generated client can name."""

    prerequisite = "prerequisite"
    builds_on = "builds_on"
    part_of = "part_of"
    related = "related"
    contrasts_with = "contrasts_with"


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

    model_config = ConfigDict(json_schema_extra=example("ASK_IN"))

    question: str = Field(min_length=1, max_length=MAX_QUESTION)
    as_of: Instant | None = Field(default=None, description=AS_OF)
    known_at: Instant | None = Field(default=None, description=KNOWN_AT)
    fresh: bool = Field(
        default=False,
        description="Always answer afresh: do not reuse a recorded answer to the same question "
        "(by default one is reused, at no model call, when nothing it read has changed since).",
    )


class ConceptIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("CONCEPT_IN"))

    concept_id: str = Field(min_length=1, max_length=200)
    name: str = Field(min_length=1, max_length=400)
    aliases: list[str] = Field(default_factory=list)
    summary: str = ""
    valid_at: Instant | None = Field(default=None, description=TIME_IN)
    grounding: GroundingIn
    allow_duplicate_name: bool = Field(
        default=False,
        description="Add the concept even if its name or an alias reads the same as another concept's "
        "(otherwise 409).",
    )


_UNTIL = "End of the valid period the write covers (default: open). " + TIME_IN
_CORRECT = (
    "Correct the whole period instead: one version from valid_at (default: the first start) to "
    "until (default: the last end) replaces every version in force."
)


class ConceptReviseIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("REVISE_IN"))

    name: str | None = None
    aliases: list[str] | None = None
    summary: str | None = None
    valid_at: Instant | None = Field(
        default=None, description="Start of the revised period (default: all of it). " + TIME_IN
    )
    until: Instant | None = Field(default=None, description=_UNTIL)
    correct: bool = Field(default=False, description=_CORRECT)
    grounding: GroundingIn
    allow_duplicate_name: bool = Field(
        default=False,
        description="Accept a new name or alias that reads the same as another concept's (otherwise 409).",
    )


class InvalidateIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("INVALIDATE_IN"))

    invalid_at: Instant | None = Field(default=None, description=TIME_IN)
    until: Instant | None = Field(default=None, description=_UNTIL)
    retract: bool = False
    grounding: GroundingIn


class EdgeIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("EDGE_IN"))

    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    valid_at: Instant | None = Field(default=None, description=TIME_IN)
    until: Instant | None = Field(default=None, description=_UNTIL)
    correct: bool = Field(default=False, description="Revisions only. " + _CORRECT)
    grounding: GroundingIn


class EdgeInvalidateIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("EDGE_INVALIDATE_IN"))

    source_id: str = Field(min_length=1, max_length=200)
    target_id: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=32)
    invalid_at: Instant | None = Field(default=None, description=TIME_IN)
    until: Instant | None = Field(default=None, description=_UNTIL)
    retract: bool = False
    grounding: GroundingIn


class LessonLinkIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("LESSON_LINK_IN"))

    concept_id: str = Field(min_length=1, max_length=200)
    title: str | None = None
    grounding: GroundingIn


class LessonUnlinkIn(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("LESSON_UNLINK_IN"))

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


class HealthOut(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("HEALTH"))

    status: str = Field(description='"ok"')


class CheckOut(BaseModel):
    ok: bool
    detail: str


class ReadyOut(BaseModel):
    model_config = ConfigDict(json_schema_extra=example("READY"))

    status: str = Field(description='"ready" or "not ready"')
    checks: dict[str, CheckOut] = Field(description="database, schema and synthesizer")


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
    model_config = ConfigDict(json_schema_extra=example("CONCEPT"))

    concept_id: str
    name: str
    aliases: list[str]
    summary: str
    grounding: GroundingOut


class ConceptHitOut(BaseModel):
    """A concept that matches a search (``kg concept search``): its best-matching field and text."""

    model_config = ConfigDict(json_schema_extra=example("HIT"))

    concept_id: str
    name: str
    field: str = Field(description="name, alias or summary")
    text: str = Field(description="The text of that field that matched.")
    score: float = Field(ge=0.0, le=100.0, description="0-100; the best field's similarity")


class EdgeOut(_Stamped):
    model_config = ConfigDict(json_schema_extra=example("EDGE"))

    key: str = Field(description="source>relation>target")
    source_id: str
    target_id: str
    relation: str
    grounding: GroundingOut


class RequirementMemberOut(_Stamped):
    """One member: ``concept_id`` is part of option ``option`` of group ``group_id``."""

    group_id: str
    option: int = Field(ge=1)
    concept_id: str
    grounding: GroundingOut


class RequirementOut(_Stamped):
    """A requirement group: ``target_id`` needs ``needs`` of ``options`` (each option's concepts
    all needed), with its members in force at the same point."""

    model_config = ConfigDict(json_schema_extra=example("REQUIREMENT"))

    group_id: str
    target_id: str
    needs: int = Field(ge=1)
    options: list[list[str]] = Field(description="By option number; each option's concept ids, sorted.")
    grounding: GroundingOut
    members: list[RequirementMemberOut]


class VersionOut(_Stamped):
    """Any version of any versioned table (history, snapshot lessons, diffs, writes)."""

    model_config = ConfigDict(json_schema_extra=example("VERSION"))

    table: str
    key: str
    content: dict[str, Any]
    grounding: GroundingOut


class LessonLinkOut(VersionOut):
    """A lesson linked to a concept: the link's version, the lesson's id and title."""

    model_config = ConfigDict(json_schema_extra=example("LESSON_LINK"))

    lesson_id: str
    title: str | None = None


class ConceptDetailOut(ConceptOut):
    """One concept with what ``kg concept show`` prints of it: its edges out and in (a symmetric
    edge counts as outgoing from both ends) and its lessons, each with grounding, as of the same
    point."""

    model_config = ConfigDict(json_schema_extra=example("CONCEPT_DETAIL"))

    outgoing: list[EdgeOut]
    incoming: list[EdgeOut]
    lessons: list[LessonLinkOut]


class TouchedOut(BaseModel):
    answer_id: str
    question: str
    created_at: str = Field(description=_TIME)
    how: str = Field(description="cited, or read")
    facts: list[str]


class ImpactOut(BaseModel):
    """Recorded answers that cited or read the facts; when replayed, answer ids by how they changed
    (now abstains, now answers, answer changed, evidence changed, unchanged)."""

    model_config = ConfigDict(json_schema_extra=example("IMPACT"))

    facts: list[str]
    answers: list[TouchedOut]
    changes: dict[str, list[str]] | None = None
    not_replayed: list[str] | None = None


class WrittenOut(BaseModel):
    """The versions a curation request wrote (kept earlier parts of what it superseded, and
    cascades, included); with ``dry_run``, what it would write and the recorded answers it would
    change, nothing written."""

    model_config = ConfigDict(json_schema_extra=example("WRITTEN"))

    written: list[VersionOut]
    dry_run: bool = False
    answers: ImpactOut | None = None


class SnapshotOut(BaseModel):
    """One page of the whole graph as of (valid time, recorded time)."""

    model_config = ConfigDict(json_schema_extra=example("SNAPSHOT"))

    valid_at: str = Field(description=_TIME)
    recorded_at: str = Field(description=_TIME)
    concepts: list[ConceptOut]
    edges: list[EdgeOut]
    lessons: list[VersionOut]
    lesson_links: list[VersionOut]
    requirement_groups: list[VersionOut] = Field(
        default_factory=list,
        description="Groups: content {target_id, needs}; the target needs `needs` of its options.",
    )
    requirement_members: list[VersionOut] = Field(
        default_factory=list,
        description="Members: key group_id/option/concept_id; an option's concepts are all needed.",
    )
    next_cursor: str | None = Field(default=None, description="Pass as `cursor` for the next page.")


class DiffOut(BaseModel):
    """One page of the versions recorded in (from, to], grouped by operation."""

    model_config = ConfigDict(populate_by_name=True, json_schema_extra=example("DIFF"))

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
    requirements: list[dict[str, Any]] | None = Field(
        default=None,
        description='The requirement groups read ("one of A or B"), whole, each with its "ref" ("g" + '
        "version id), target_id, needs (k), options, grounding and stamps; absent on a graph without "
        "groups.",
    )


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


class ResultOut(BaseModel):
    """What the answer states, as data. Form-specific keys (``holds``, ``direct``, ``count``,
    ``first``, ``how``) appear beside ``members`` for the forms that have them; on a graph with
    requirement groups, ``requirements`` (the groups the answer states), ``one_of`` (the group a
    concept is one way to meet) and ``unmet`` (the groups a learner has not met yet)."""

    model_config = ConfigDict(extra="allow")

    intent: str
    members: list[str] = Field(
        description="The answer set the text states (e.g. for 'which of those does Y build on' the "
        "concepts found); cited_concepts is wider: every concept the text names."
    )


class AnswerOut(BaseModel):
    """The ``answer/1`` object: the answer, or an abstention with its reason, and the evidence
    sub-graph it rests on. Later minor additions appear as extra fields (e.g. ``partial``)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", json_schema_extra=example("ANSWER"))

    schema_: str = Field(alias="schema", description='"answer/1"')
    answer_id: str
    question: str
    text: str = Field(description='The answer, or "" when abstained.')
    abstained: bool
    abstain_reason: str | None
    confidence: float = Field(ge=0.0, le=1.0)
    cited_concepts: list[CitedConcept]
    cited_edges: list[str] = Field(description="Edge ids, all in evidence.edges.")
    cited_requirements: list[str] | None = Field(
        default=None,
        description="Group ids of the requirement groups the result names, all in "
        "evidence.requirements; absent when it names none.",
    )
    result: ResultOut | None = Field(default=None, description="null when abstained")
    seeds: list[str]
    evidence: EvidenceOut
    as_of: AsOfOut
    rounds: list[RoundOut]
    llm_calls: int = Field(description="Model calls made (0 for the offline synthesizer, and for a reuse).")
    syntheses: int | None = Field(
        default=None,
        description="Synthesis steps run (rounds that asked the synthesizer, offline or model); absent "
        "from answers recorded before it was added, which counted each offline synthesis in llm_calls.",
    )
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    synthesizer: SynthesizerOut
    created_at: str = Field(description=_TIME)
    reused_from: str | None = Field(
        default=None,
        description="The recorded answer this one reuses (no model call was made; usage counters "
        "are 0), or null when it was computed afresh.",
    )


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
    members: list[str] = Field(default_factory=list, description="The answer set (result.members).")
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
    members: CitationChange = Field(default_factory=lambda: CitationChange(added=[], removed=[]))
    cited_concepts: CitationChange
    evidence_edges: EvidenceChange


class ReplayOut(BaseModel):
    """A recorded answer re-run as of its own times ("then") and as of now, and what changed."""

    model_config = ConfigDict(json_schema_extra=example("REPLAY"))

    answer_id: str
    question: str
    recorded: RecordedOut
    then: ReplayRunOut
    now: ReplayRunOut
    reproduced: bool
    changes: ChangesOut
    replayed_at: str = Field(description=_TIME)
