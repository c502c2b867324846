"""The MCP tools: each one a thin call into the function ``kg`` and the HTTP API call for the same
thing (``Planner.reply``, ``lookup``, ``listings``, ``writes``), returning the same JSON.

A tool body takes the :class:`~control_plane.surfaces.mcp.backend.Call` first (the runtime and the
caller's token) and then its arguments, whose annotations (with their descriptions) are the
tool's input schema; its docstring is the tool's description, written for an agent that has not
read our docs. :data:`TOOLS` lists them with what each needs of its caller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import Field

from control_plane.surfaces.mcp.backend import Call, Needs
from control_plane.surfaces.messages import abstention_said
from data_plane.clock import parse_time
from data_plane.relations import RELATIONS

if TYPE_CHECKING:
    pass

__all__ = ["TOOLS", "ToolSpec"]

_TIME = "A date (2024-06-01, midnight UTC) or a datetime with a zone (2024-06-01T12:00:00Z)."
AsOf = Annotated[
    str | None,
    Field(description="Valid time: the curriculum as it was (or will be) true then; default now. " + _TIME),
]
KnownAt = Annotated[
    str | None,
    Field(
        description="Recorded time: what the system had recorded by then (an audit view); default now. "
        + _TIME
    ),
]
ConceptId = Annotated[str, Field(min_length=1, max_length=200, description="A concept's id, e.g. rag.")]
Cursor = Annotated[
    str | None,
    Field(max_length=4096, description="next_cursor of the previous page; the other arguments as then."),
]
Relation = Annotated[
    str,
    Field(
        description="prerequisite (source before target), builds_on (source builds on target), part_of "
        "(source is part of target), related, contrasts_with (these two are symmetric).",
        json_schema_extra={"enum": list(RELATIONS)},
    ),
]
Reason = Annotated[str, Field(min_length=1, max_length=4000, description="Why the write is believed.")]
Evidence = Annotated[
    dict[str, Any],
    Field(
        description='What it rests on, as a non-empty JSON object: {"doc": "syllabus.pdf", "page": 4}, a URL, a quote.'
    ),
]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, description="How sure the write is, 0 to 1.")]
Source = Annotated[
    str | None, Field(max_length=400, description="Who or what vouches for it; default mcp:<token name>.")
]
DryRun = Annotated[
    bool,
    Field(
        description="Rehearse: say what would be written and which recorded answers it would change; write nothing."
    ),
]
Until = Annotated[
    str | None,
    Field(
        description="End of the valid period the write covers (default: open); outside it nothing changes. "
        + _TIME
    ),
]
ValidAt = Annotated[str | None, Field(description="Start of its validity; default now. " + _TIME)]
RevisedFrom = Annotated[
    str | None, Field(description="Start of the revised period; default: all of its validity. " + _TIME)
]
Correct = Annotated[
    bool, Field(description="Replace the whole period instead of revising only [valid_at, until).")
]
InvalidAt = Annotated[str | None, Field(description="When it stops holding; default now. " + _TIME)]
Retract = Annotated[bool, Field(description="Retract it: it was never true.")]
Page = Annotated[int, Field(ge=1, le=1000, description="Items per page (per section for snapshot and diff).")]


def _time(text: str | None, field: str) -> datetime | None:
    """A time argument as ``kg`` reads one (a bare date is midnight UTC; naive times are refused)."""
    return None if text is None else parse_time(text, field=field)


# -- asking -------------------------------------------------------------------------------------


def ask(
    call: Call,
    question: Annotated[str, Field(min_length=1, max_length=2000, description="The learner's question.")],
    as_of: AsOf = None,
    known_at: KnownAt = None,
    fresh: Annotated[
        bool, Field(description="Answer afresh instead of reusing a recorded answer to the same question.")
    ] = False,
) -> dict[str, Any]:
    """Answer a learner's question from the curriculum knowledge graph, or abstain and say why.

    Returns the answer object (schema answer/1, what `kg ask --format json` prints): `text` (the
    answer), `abstained` and `abstain_reason`, `confidence`, `result` (the structured claim the
    text is rendered from), `evidence` (the cited sub-graph: every edge and concept with its
    grounding: reason, source, confidence, validity), `reading` (how the question was read),
    `rounds`, `llm_calls` and `cost_usd`, and `answer_id` (for `replay`). Say what the learner
    already knows in the question itself ("I already know embeddings and vector search; what is
    left before RAG?"), as the reader reads it. A recorded answer to the same question is reused
    (`reused_from`, no model call) while nothing it read has changed. Every answer is recorded.
    Spends one question from the caller's limit."""
    reply = call.runtime.planner.reply(
        question, as_of=_time(as_of, "as_of"), known_at=_time(known_at, "known_at"), fresh=fresh
    )
    return call.answered(dict(abstention_said(reply.to_dict())))


# -- reading the graph ----------------------------------------------------------------------------


def search_concepts(
    call: Call,
    query: Annotated[
        str,
        Field(min_length=1, max_length=400, description="Words to find; typos and partial names are fine."),
    ],
    limit: Annotated[int, Field(ge=1, le=1000, description="Most hits to return.")] = 10,
    min_score: Annotated[float, Field(ge=0, le=100, description="Lowest score (0-100) returned.")] = 75.0,
    as_of: AsOf = None,
    known_at: KnownAt = None,
) -> dict[str, Any]:
    """Find concepts whose name, an alias or summary match the query (fuzzy), best first: `hits`,
    each with `concept_id`, `name`, the matching `field` and `text`, and `score`. Use it to find
    the id another tool needs."""
    from control_plane.surfaces.lookup import search

    reader = call.runtime.reader
    point = reader.as_of(_time(as_of, "as_of"), _time(known_at, "known_at"))
    hits = search(query, reader.stream_concepts(point), limit=limit, cutoff=min_score)
    return {"hits": [h.to_dict() for h in hits]}


def show_concept(
    call: Call, concept_id: ConceptId, as_of: AsOf = None, known_at: KnownAt = None
) -> dict[str, Any]:
    """One concept as of a time: its current version (`concept`: name, aliases, summary,
    grounding and validity), the edges out of it and into it (`outgoing`, `incoming`, each with
    its grounding) and the lessons that teach it (`lessons`)."""
    from control_plane.surfaces.lookup import profile

    reader = call.runtime.reader
    point = reader.as_of(_time(as_of, "as_of"), _time(known_at, "known_at"))
    return profile(reader, concept_id, point).to_dict()


def history(
    call: Call,
    key: Annotated[
        str,
        Field(
            min_length=1, max_length=420, description="A concept id, or an edge as source>relation>target."
        ),
    ],
) -> dict[str, Any]:
    """Every version of a concept or an edge, oldest first (`versions`): what it said, its
    grounding, its operation (assert, revise, invalidate, retract) and its four stamps (valid
    from/until in the curriculum, recorded from/until in the system). Nothing is ever deleted."""
    from data_plane.errors import InputError
    from data_plane.relations import parse_edge_key

    reader = call.runtime.reader
    if ">" not in key:
        return {"key": key, "versions": [v.to_dict() for v in reader.history("concepts", (key,))]}
    try:
        parts = parse_edge_key(key)
    except ValueError as exc:
        raise InputError(str(exc), field="key", value=key) from exc
    return {"key": key, "versions": [v.to_dict() for v in reader.history("concept_edges", parts)]}


def snapshot(
    call: Call, as_of: AsOf = None, known_at: KnownAt = None, limit: Page = 100, cursor: Cursor = None
) -> dict[str, Any]:
    """The whole graph in force at a point in time, a page at a time: up to `limit` each of
    `concepts`, `edges`, `lessons` and `lesson_links`, and `next_cursor` (null on the last page;
    pass it back with the same times to continue). Every page of one walk reads the same
    graph, whatever is written meanwhile."""
    from control_plane.surfaces.listings import snapshot_page

    reader = call.runtime.reader
    return snapshot_page(reader, _time(as_of, "as_of"), _time(known_at, "known_at"), limit, cursor)


def diff(
    call: Call,
    since: Annotated[str, Field(description="Recorded time to diff from (exclusive). " + _TIME)],
    until: Annotated[
        str | None, Field(description="Recorded time to diff to (inclusive); default now. " + _TIME)
    ] = None,
    limit: Page = 100,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """What the system learned between two recorded times, a page at a time: the versions
    `asserted`, `revised`, `invalidated` and `retracted` in (since, until], and `next_cursor`."""
    from control_plane.surfaces.listings import diff_page

    start = parse_time(since, field="since")
    rt = call.runtime
    return diff_page(rt.reader, start, _time(until, "until"), rt.clock(), limit, cursor)


def recorded_answers(
    call: Call,
    since: Annotated[
        str | None, Field(description="Only answers recorded at or after this. " + _TIME)
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Answers per page.")] = 10,
    cursor: Cursor = None,
) -> dict[str, Any]:
    """Recorded answers and abstentions, newest first, each exactly as it was given (the answer
    object `ask` returns), and `next_cursor`. Every answer from any client is recorded."""
    from control_plane.surfaces.listings import answers_page

    items, nxt = answers_page(call.runtime.reader, _time(since, "since"), limit, cursor)
    return {"answers": list(items), "next_cursor": nxt}


def replay(
    call: Call,
    answer_id: Annotated[str, Field(min_length=1, max_length=64, description="A recorded answer's id.")],
) -> dict[str, Any]:
    """Re-run a recorded answer as of its own times (does the backend reproduce it?) and as of
    now (what would it answer today?), and say what changed: `reproduced`, the answer then and
    now, and their difference (what `kg audit replay` prints)."""
    call.runtime.reader.answer(answer_id)
    return call.runtime.replay(answer_id)


# -- curating ---------------------------------------------------------------------------------------


def _grounding(
    call: Call, reason: str, evidence: dict[str, Any], confidence: float, source: str | None
) -> Any:
    from data_plane.records import Grounding

    name = call.token.name if call.token is not None else "unknown"
    return Grounding(confidence, reason, source or f"mcp:{name}", evidence)


def _curate(call: Call, write: Any, *, dry_run: bool, allow_duplicate_names: bool = False) -> dict[str, Any]:
    from control_plane.surfaces.writes import curate

    return curate(
        call.runtime, [write], dry_run=dry_run, allow_duplicate_names=allow_duplicate_names
    ).to_dict()


def add_concept(
    call: Call,
    concept_id: ConceptId,
    name: Annotated[str, Field(min_length=1, max_length=400, description="Display name.")],
    reason: Reason,
    evidence: Evidence,
    aliases: Annotated[list[str] | None, Field(description="Other names it goes by.")] = None,
    summary: Annotated[str, Field(description="One-paragraph summary.")] = "",
    valid_at: ValidAt = None,
    until: Until = None,
    confidence: Confidence = 1.0,
    source: Source = None,
    allow_duplicate_name: Annotated[
        bool, Field(description="Add it even if its name or an alias reads like another concept's.")
    ] = False,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Assert a new concept (or again one that was invalidated). Needs a write token. Returns
    `written` (every version written, with its stamps); with `dry_run`, what would be written
    and `answers`, the recorded answers it would change. Nothing is ever deleted."""
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=_grounding(call, reason, evidence, confidence, source),
        name=name,
        aliases=aliases or [],
        summary=summary,
        valid_at=_time(valid_at, "valid_at"),
        invalid_at=_time(until, "until"),
    )
    return _curate(call, w, dry_run=dry_run, allow_duplicate_names=allow_duplicate_name)


def revise_concept(
    call: Call,
    concept_id: ConceptId,
    reason: Reason,
    evidence: Evidence,
    name: Annotated[str | None, Field(max_length=400, description="New display name; default: kept.")] = None,
    aliases: Annotated[list[str] | None, Field(description="Replaces the aliases; default: kept.")] = None,
    summary: Annotated[str | None, Field(description="New summary; default: kept.")] = None,
    valid_at: RevisedFrom = None,
    until: Until = None,
    correct: Correct = False,
    confidence: Confidence = 1.0,
    source: Source = None,
    allow_duplicate_name: Annotated[
        bool, Field(description="Accept a name or alias that reads like another concept's.")
    ] = False,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Revise a concept's name, aliases or summary over a valid period (before and after it, the
    concept stays as it was). Needs a write token. Returns `written` (or, with `dry_run`, what
    would be written and the recorded answers it would change)."""
    from control_plane.surfaces.writes import revision
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=_grounding(call, reason, evidence, confidence, source),
        name=name,
        aliases=aliases,
        summary=summary,
        **revision(_time(valid_at, "valid_at"), _time(until, "until"), correct=correct),
    )
    return _curate(call, w, dry_run=dry_run, allow_duplicate_names=allow_duplicate_name)


def invalidate_concept(
    call: Call,
    concept_id: ConceptId,
    reason: Reason,
    evidence: Evidence,
    invalid_at: InvalidAt = None,
    until: Until = None,
    retract: Retract = False,
    confidence: Confidence = 1.0,
    source: Source = None,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Close a concept's validity (its edges and lesson links close with it over the same period),
    or retract it. Its history stays readable. Needs a write token. Returns `written` (or, with
    `dry_run`, what would be written and the recorded answers it would change)."""
    from control_plane.surfaces.writes import invalidation
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=_grounding(call, reason, evidence, confidence, source),
        **invalidation(_time(invalid_at, "invalid_at"), _time(until, "until"), retract=retract),
    )
    return _curate(call, w, dry_run=dry_run)


def add_edge(
    call: Call,
    source_id: ConceptId,
    relation: Relation,
    target_id: ConceptId,
    reason: Reason,
    evidence: Evidence,
    valid_at: ValidAt = None,
    until: Until = None,
    confidence: Confidence = 1.0,
    source: Source = None,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Assert an edge source -relation-> target between two active concepts (a prerequisite that
    would close a cycle is refused). Needs a write token. Returns `written` (or, with `dry_run`,
    what would be written and the recorded answers it would change)."""
    from data_plane.gateway import Write

    w = Write.edge(
        source_id,
        target_id,
        relation,
        grounding=_grounding(call, reason, evidence, confidence, source),
        valid_at=_time(valid_at, "valid_at"),
        invalid_at=_time(until, "until"),
    )
    return _curate(call, w, dry_run=dry_run)


def revise_edge(
    call: Call,
    source_id: ConceptId,
    relation: Relation,
    target_id: ConceptId,
    reason: Reason,
    evidence: Evidence,
    valid_at: RevisedFrom = None,
    until: Until = None,
    correct: Correct = False,
    confidence: Confidence = 1.0,
    source: Source = None,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Re-ground an edge (a new reason, evidence, confidence) over a valid period. Needs a write
    token. Returns `written` (or, with `dry_run`, what would be written and the recorded answers
    it would change)."""
    from control_plane.surfaces.writes import revision
    from data_plane.gateway import Write

    w = Write.edge(
        source_id,
        target_id,
        relation,
        grounding=_grounding(call, reason, evidence, confidence, source),
        **revision(_time(valid_at, "valid_at"), _time(until, "until"), correct=correct),
    )
    return _curate(call, w, dry_run=dry_run)


def invalidate_edge(
    call: Call,
    source_id: ConceptId,
    relation: Relation,
    target_id: ConceptId,
    reason: Reason,
    evidence: Evidence,
    invalid_at: InvalidAt = None,
    until: Until = None,
    retract: Retract = False,
    confidence: Confidence = 1.0,
    source: Source = None,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Close an edge's validity, or retract it; its history stays readable. Needs a write token.
    Returns `written` (or, with `dry_run`, what would be written and the recorded answers it
    would change)."""
    from control_plane.surfaces.writes import invalidation
    from data_plane.gateway import Write

    w = Write.edge(
        source_id,
        target_id,
        relation,
        grounding=_grounding(call, reason, evidence, confidence, source),
        **invalidation(_time(invalid_at, "invalid_at"), _time(until, "until"), retract=retract),
    )
    return _curate(call, w, dry_run=dry_run)


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its body, what it needs of its caller, and its title."""

    body: Callable[..., dict[str, Any]]
    needs: Needs
    title: str

    @property
    def name(self) -> str:
        return self.body.__name__


TOOLS: Final = (
    ToolSpec(ask, Needs.ASK, "Ask the curriculum graph"),
    ToolSpec(search_concepts, Needs.READ, "Find concepts by name"),
    ToolSpec(show_concept, Needs.READ, "Show a concept, its edges and lessons"),
    ToolSpec(history, Needs.READ, "History of a concept or an edge"),
    ToolSpec(snapshot, Needs.READ, "The graph at a point in time"),
    ToolSpec(diff, Needs.READ, "What changed between two recorded times"),
    ToolSpec(recorded_answers, Needs.READ, "Recorded answers"),
    ToolSpec(replay, Needs.READ, "Replay a recorded answer"),
    ToolSpec(add_concept, Needs.WRITE, "Add a concept"),
    ToolSpec(revise_concept, Needs.WRITE, "Revise a concept"),
    ToolSpec(invalidate_concept, Needs.WRITE, "Invalidate a concept"),
    ToolSpec(add_edge, Needs.WRITE, "Add an edge"),
    ToolSpec(revise_edge, Needs.WRITE, "Re-ground an edge"),
    ToolSpec(invalidate_edge, Needs.WRITE, "Invalidate an edge"),
)
