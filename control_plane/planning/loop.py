"""The planning loop: seed, then up to four rounds of expand → synthesize → verify; answer or abstain.

:meth:`Planner._ask` seeds a :class:`~control_plane.planning.round.LoopState` and runs
:meth:`Planner._round` until an answer, a reason to stop or ``max_rounds``; a round is the named
steps of ``planning.round`` over that state (``expand``, ``read_lessons``, ``request``,
``synthesize``, ``judge``, ``decide``, ``refocus``); :meth:`Planner._finish` turns the final
state into the answer. One question runs like this (all rules but the I/O live in pure modules):

1. **Seed** (``seeding``): the concepts named in the question, at most 3, most specific first.
   None: abstain at once ("no known concept is named"), no model call. The name index is cached
   and rebuilt only when the concepts table changed or the as-of point leaves the time box in
   which no concept version changes state.
2. **Expand**: exactly one data-plane call per round, of one of two kinds, chosen from the
   question's reading by ``walk_order``:

   * **walk** (learning-order questions: everything before X, what X unlocks, a path, a study
     plan, lessons before X): ``Expander.walk`` follows the reading's learning relations
     transitively from the frontier in one recursive statement (``data_plane.walks``), bounded
     by depth and a row budget. The frontier (the starts) stays capped at ``frontier_cap``; what
     the walk gathers is evidence, all of it. The walk's boundary (concepts it reached but did
     not expand) becomes the next frontier. A walk cut by its *row budget* leaves the closure
     partial: no answer is accepted while that boundary is open (confidence at most
     ``PARTIAL_CLOSURE``), and the answer's ``closure`` says so.
   * **one hop** (every other question): ``Expander.neighbours``, active neighbours of the
     frontier in both directions as of (valid, recorded) time, never an already visited concept.
     New concepts compete for at most ``frontier_cap`` places per call (``ranking.rank``); every
     edge between a chosen or already-gathered concept and the frontier joins the evidence.
     ``unexpanded`` in the request also names expanded concepts some of whose neighbours along
     the question's relations did not win a place: their neighbourhood is not in the evidence.

3. **Synthesize**: exactly one ``synthesizer.synthesize`` call per round.
4. **Verify** (``verify``): accepted → answer. Otherwise the confidence is capped below the
   threshold, the focus moves to what was missing, and the next frontier (at most
   ``frontier_cap`` gathered-but-unexpanded concepts) is ranked against the new focus.
5. An empty frontier stops early with no model call ("the graph has nothing more to offer"); after
   ``max_rounds`` the loop abstains with the best partial evidence and the reason. A model that
   stays unavailable (``LLMUnavailable``) also ends in an abstention naming the failure.

Every answer or abstention is recorded through ``WriteGateway.record_answer`` (when asked) and
logged ("loop.round" per round, "loop.answer" per question). A study-plan question also gets the
layered needed-before closure as data (answer key ``study_plan``), with the lessons in force for
each concept and the concepts the learner said they know left out.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import EllipsisType
from typing import Any, Final, NamedTuple

import sqlalchemy as sa

from control_plane.errors import LLMUnavailable, ModelBudgetSpent
from control_plane.learning_order import needs_from_edges
from control_plane.planning.answer import Answer, RoundTrace
from control_plane.planning.expansion import Expander, ReaderExpander
from control_plane.planning.reuse import ReusedAnswer, reuse_key, reused_payload
from control_plane.planning.round import (
    MODEL_UNAVAILABLE,
    NO_SEED,
    NOTHING_MORE,
    TOO_LARGE,
    Expansion,
    LoopState,
    decide,
    expand,
    ground,
    judge,
    read_lessons,
    read_requirements,
    refocus,
    request,
    synthesize,
    trace,
)
from control_plane.planning.study_plan import StudyPlan, study_plan
from control_plane.planning.table_cache import UNREAD, TableCache, Unread, name_cache
from control_plane.planning.walk_order import WalkOrder, walk_order
from control_plane.semantics.requirements import chosen
from control_plane.synthesizers.base import (
    QuestionReader,
    Result,
    Synthesizer,
    Usage,
)
from control_plane.synthesizers.parsing import MalformedReading, parse_reading
from control_plane.synthesizers.prompts import build_reading_messages
from control_plane.understanding.intent_model import IntentModel, default_model
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.model_reading import checked_reading
from control_plane.understanding.names import MAX_SEEDS, NameIndex
from control_plane.understanding.reader import Understanding, understand
from control_plane.understanding.reading import LESSONS
from data_plane import schema, write_clock
from data_plane.clock import Clock, ensure_utc, format_time, utc_now
from data_plane.errors import InputError
from data_plane.events import get_logger
from data_plane.gateway import WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import (
    Concept,
    Grounding,
    Version,
    text_fault,
)
from data_plane.relations import BUILDS_ON, PREREQUISITE
from data_plane.reuse import MAX_READS, AnswerIndex, Reads, ReuseEntry
from data_plane.temporal import AsOf
from data_plane.walks import (
    COUNT_BUDGET,
    FRINGE,
    NEEDED_BEFORE,
    REQUIREMENT,
    UNLOCKS,
    closure_size,
    learning_steps,
    lessons_for,
)

__all__ = ["MAX_QUESTION_CHARS", "MODEL_UNAVAILABLE", "NOTHING_MORE", "NO_SEED", "UNSURE", "Planner"]

# The same limit as the HTTP API: longer text is refused before any work (and keeps the
# memoised normalisation in ``seeding`` small).
MAX_QUESTION_CHARS: Final = 2000
UNSURE = "the question could not be read with confidence"

log = get_logger(__name__)


class _Tops(NamedTuple):
    """The newest concept, edge, requirement group and lesson link version ids, and the stamp of
    the latest committed write (``data_plane.write_clock``)."""

    concept: int | None
    edge: int | None
    group: int | None
    lesson: int | None
    written: datetime | None


def _tops(reader: GraphReader) -> _Tops:
    """The newest concept, edge, requirement group and lesson link version ids and the write
    clock, in one statement: what tells whether the cached name index, relation counts, "does
    this graph hold groups" and "does it map lessons" may still hold, and how late a read may be
    known at."""
    with reader.connection() as conn:
        concept, edge, group, lesson, written = conn.execute(_tops_statement()).one()
    concept, edge, group, lesson = (None if v is None else int(v) for v in (concept, edge, group, lesson))
    return _Tops(concept, edge, group, lesson, written)


@functools.cache
def _tops_statement() -> sa.Select[Any]:
    """Built once: the check runs at the start of every question."""
    latest = [
        sa.select(sa.func.max(t.c.version_id)).scalar_subquery()
        for t in (schema.concepts, schema.concept_edges, schema.requirement_groups, schema.lesson_concepts)
    ]
    return sa.select(*latest, sa.select(schema.write_clock.c.recorded_at).scalar_subquery())


@dataclass(frozen=True)
class _Start:
    """A question read and dated, before its first round."""

    started: float  # perf_counter at the start, for latency
    created_at: datetime
    point: AsOf
    answer_id: str
    reading: Reading
    seeds: tuple[Concept, ...]
    reading_usage: Usage  # the model call that read the question, if any
    understanding: Understanding  # the grammar's reading, names and seeds
    grouped: bool = False  # the graph holds requirement groups at the question's point


@dataclass(frozen=True)
class _Vocabulary:
    """The planner's view of the graph for reading a question (``understanding.reader.Vocabulary``):
    its cached name index and relation counts, and the reader's degrees and records."""

    planner: Planner
    top_concept: int | None
    top_edge: int | None
    top_lesson: int | Unread | None = UNREAD

    def names(self, as_of: AsOf) -> NameIndex:
        return self.planner.name_index(as_of, top=self.top_concept)

    def relation_counts(self, as_of: AsOf) -> Mapping[str, int]:
        counts = self.planner.relation_counts(as_of, top=self.top_edge)
        return _Counts(counts, lambda: int(self.planner.maps_lessons(as_of, top=self.top_lesson)))

    def degrees(self, ids: Sequence[str], as_of: AsOf) -> dict[str, int]:
        return self.planner.reader.degrees(list(ids), as_of=as_of)

    def concepts(self, ids: Sequence[str], as_of: AsOf) -> dict[str, Concept]:
        return self.planner.reader.concepts(list(ids), as_of=as_of)


class _Counts(Mapping[str, int]):
    """Active edges per relation, and (read only when a lesson question asks) whether lesson links
    hold, under ``reading.LESSONS``."""

    def __init__(self, counts: Mapping[str, int], lessons: Callable[[], int]) -> None:
        self._counts, self._lessons = dict(counts), lessons

    def __getitem__(self, key: str) -> int:
        if key == LESSONS and key not in self._counts:
            self._counts[key] = self._lessons()
        return self._counts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)


class Planner:
    """Answers questions from the graph with an evidence sub-graph, or abstains."""

    def __init__(
        self,
        reader: GraphReader,
        synthesizer: Synthesizer,
        *,
        store: Expander | None = None,
        gateway: WriteGateway | None = None,
        clock: Clock = utc_now,
        max_rounds: int = 4,
        frontier_cap: int = 12,
        threshold: float = 0.80,
        walks: bool = True,
        walk_order: Callable[[Reading], WalkOrder | None] = walk_order,
        intent_model: IntentModel | EllipsisType | None = ...,
        reuse: AnswerIndex | None = None,
    ) -> None:
        if max_rounds < 1 or frontier_cap < 1 or not 0.0 < threshold <= 1.0:
            raise InputError("max_rounds and frontier_cap must be >= 1 and threshold in (0, 1]")
        if store is None:
            store = ReaderExpander(reader)
        self.reader = reader
        self.synthesizer = synthesizer
        self.store = store
        self.gateway = gateway
        self.clock = clock
        self.max_rounds = max_rounds
        self.frontier_cap = frontier_cap
        self.threshold = threshold
        # False: every round expands one hop (the pre-walk loop, kept as an eval baseline).
        self.walks = walks
        self.walk_order = walk_order  # reading -> walk or one hop (tests pass smaller bounds)
        # the learnt second reading that checks the grammar's (... = the committed one, None = none)
        self.intent_model = default_model() if intent_model is ... else intent_model
        # Where recorded answers are looked up for reuse (``reply``); None: every reply is fresh.
        self.reuse = reuse
        self._names = name_cache(reader)
        # Active edges per relation, kept by the same rule as the name index.
        # Whether any requirement group holds, kept by the same rule.
        self._grouped = TableCache(
            reader, schema.requirement_groups, lambda as_of: reader.has_requirement_groups(as_of=as_of)
        )
        self._relations = TableCache(
            reader, schema.concept_edges, lambda as_of: reader.relation_counts(as_of=as_of)
        )
        # Whether any lesson link holds (does the graph map lessons), kept by the same rule.
        self._lessons = TableCache(
            reader, schema.lesson_concepts, lambda as_of: reader.has_lesson_links(as_of=as_of)
        )

    @property
    def index_builds(self) -> int:
        """How often the name index was (re)built; for tests and benchmarks."""
        return self._names.builds

    # -- seeding ----------------------------------------------------------------------------

    def name_index(self, as_of: AsOf, *, top: int | Unread | None = UNREAD) -> NameIndex:
        """The cached name index for ``as_of`` (rebuilt only when it may have changed); ``top`` is
        the newest concept version id when the caller already read it."""
        return self._names.get(as_of, top=top)

    def relation_counts(self, as_of: AsOf, *, top: int | Unread | None = UNREAD) -> dict[str, int]:
        """Active edges per relation as of ``as_of``, cached like the name index (``top``: the
        newest edge version id when the caller already read it)."""
        return self._relations.get(as_of, top=top)

    def maps_lessons(self, as_of: AsOf, *, top: int | Unread | None = UNREAD) -> bool:
        """Whether any lesson link holds as of ``as_of``, cached like the name index (``top``: the
        newest lesson link version id when the caller already read it)."""
        return self._lessons.get(as_of, top=top)

    def read(
        self, question: str, point: AsOf, *, explicit: bool, now: datetime
    ) -> tuple[Reading, AsOf, list[Concept]]:
        """Read ``question`` before round 1 (``understanding.reader``, one pass): the reading, the
        time point to answer at (time words move the valid time unless it was given
        explicitly) and the seeds as of that time."""
        u = self._understand(question, point, explicit=explicit, now=now)
        return u.reading, u.point, list(u.seeds)

    def _understand(
        self, question: str, point: AsOf, *, explicit: bool, now: datetime, tops: _Tops | None = None
    ) -> Understanding:
        tops = tops or _tops(self.reader)
        vocabulary = _Vocabulary(self, tops.concept, tops.edge, tops.lesson)
        return understand(question, vocabulary, point, explicit=explicit, now=now, model=self.intent_model)

    def _model_would_read(self, u: Understanding) -> bool:
        """Whether :meth:`_model_read` would send this grammar reading to the model."""
        reading = u.reading
        return not (
            reading.sure
            or not u.named
            or reading.did_you_mean
            or reading.read_by == "none"
            or not isinstance(self.synthesizer, QuestionReader)
        )

    def _model_read(self, question: str, u: Understanding) -> tuple[Reading, Usage]:
        """With a synthesizer that reads questions (DeepSeek), one model call reads a question the
        grammar could not, into the same structure; used only when it passes every check
        (``understanding.model_reading``), else the grammar's unsure reading stands and says why.
        A question that names nothing known, a name the graph lacks, or something the graph does
        not record is not sent: the model cannot make those answerable."""
        reading = u.reading
        if not self._model_would_read(u) or not isinstance(self.synthesizer, QuestionReader):
            return reading, Usage()
        relations = dict(self.relation_counts(u.point))
        messages = build_reading_messages(question, sorted(u.named.items()), relations)
        try:
            text, usage = self.synthesizer.read_question(messages)
        except ModelBudgetSpent:
            raise
        except LLMUnavailable as exc:
            return _noted(reading, f"the model could not read it ({exc})"), Usage(calls=max(1, exc.attempts))
        try:
            payload: dict[str, Any] | str = parse_reading(text)
        except MalformedReading as exc:
            payload = str(exc)
        model = checked_reading(
            payload,
            question=question,
            named=u.named,
            relations=relations,
            time=reading.time,
            placed=reading.placed,
        )
        log.info("loop.model_reading", used=model.sure, problem=model.problem, intent=model.intent)
        if model.sure:
            return model, usage
        return _noted(reading, f"the model's reading was not used: {model.problem}"), usage

    def seeds(self, question: str, as_of: AsOf) -> list[Concept]:
        """The concepts ``question`` names as of ``as_of`` (at most 3, most specific first)."""
        return self._seeds(question, as_of, self.name_index(as_of))

    def _seeds(self, question: str, as_of: AsOf, index: NameIndex) -> list[Concept]:
        candidates = index.candidates(question)
        degrees = self.reader.degrees(candidates, as_of=as_of) if len(candidates) > 1 else {}
        ids = index.find(question, degrees)
        found = self.reader.concepts(ids, as_of=as_of) if ids else {}
        return [found[cid] for cid in ids if cid in found]

    # -- the loop ---------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        record: bool = True,
    ) -> Answer:
        """Answer ``question`` as of (``as_of``, ``known_at``), both defaulting to now."""
        self._check(question, record=record)
        # One connection for every read of the question: one snapshot, one pool checkout.
        with self.reader.pinned():
            answer, _ = self._ask(self._start(question, as_of, known_at), question, as_of is not None)
        if record:
            self._record(answer)
        self._log_answer(answer)
        return answer

    def reply(
        self,
        question: str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        fresh: bool = False,
    ) -> Answer | ReusedAnswer:
        """The answer a learner gets, recorded: a recorded answer to the same question, reused
        when nothing it read has changed since (no model call), else a fresh one (``fresh``:
        always a fresh one), itself indexed for reuse. Without ``reuse`` this is :meth:`ask`."""
        if self.reuse is None:
            return self.ask(question, as_of=as_of, known_at=known_at)
        self._check(question, record=True)
        with self.reader.pinned():
            seen = self.reuse.seen()  # before any read: anything newer was not seen
            # Filed under the grammar's reading: a hit costs no model call, not even a reading one.
            start = self._start(question, as_of, known_at, model=False)
            model_reads = self._model_would_read(start.understanding)
            key = reuse_key(
                start.reading.to_dict(),
                question=question,
                seeds=[c.concept_id for c in start.seeds],
                as_of=as_of,
                known_at=known_at,
                synthesizer=self.synthesizer.info,
                planner=self._bounds(),
                relations=sorted(self.relation_counts(start.point)) if model_reads else None,
            )
            entry = None if fresh else self.reuse.latest(key)
            if entry is not None and self.reuse.unchanged(entry, start.point):
                recorded, ran = self.reader.answer(entry.answer_id), None
            else:
                start = self._read_by_model(question, start) if model_reads else start
                recorded, ran = None, self._ask(start, question, as_of is not None)
        if ran is None:
            assert recorded is not None
            return self._reuse(recorded, start, question)
        answer, reads = ran
        index = None
        if reads is not None and len(reads) <= MAX_READS:
            index = ReuseEntry(answer.answer_id, key, start.point, seen, reads, start.created_at)
        self._record(answer, reuse=index)
        self._log_answer(answer, reuse="stale" if entry is not None else ("bypassed" if fresh else "miss"))
        return answer

    def _bounds(self) -> dict[str, Any]:
        """What bounds a fresh answer, besides the graph and the synthesizer (part of the reuse key)."""
        return {
            "max_rounds": self.max_rounds,
            "frontier_cap": self.frontier_cap,
            "threshold": self.threshold,
            "walks": self.walks,
        }

    def _reuse(self, recorded: Version, start: _Start, question: str) -> ReusedAnswer:
        """Record and return the answer that reuses ``recorded`` (``planning.reuse``)."""
        assert self.gateway is not None
        payload = reused_payload(
            recorded.content["payload"],
            answer_id=start.answer_id,
            question=question,
            created_at=start.created_at,
            as_of=start.point,
            latency_ms=(time.perf_counter() - start.started) * 1000.0,
        )
        original = recorded.grounding
        evidence = dict(original.evidence) if isinstance(original.evidence, dict) else {}
        evidence.update(
            question=question,
            as_of=format_time(start.point.valid_at),
            known_at=format_time(start.point.recorded_at),
            reused_from=payload["reused_from"],
        )
        self.gateway.record_answer(
            start.answer_id,
            question=question,
            answer_text=str(payload["text"]),
            abstained=bool(payload["abstained"]),
            payload=payload,
            grounding=Grounding(original.confidence, original.reason, original.source, evidence),
        )
        answer = ReusedAnswer(payload)
        log.info(
            "loop.answer",
            question_id=answer.answer_id,
            abstained=answer.abstained,
            reused_from=answer.reused_from,
            llm_calls=0,
            reuse="hit",
            latency_ms=payload["latency_ms"],
        )
        return answer

    def _check(self, question: str, *, record: bool) -> None:
        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty", field="question", value=question)
        if len(question) > MAX_QUESTION_CHARS:
            raise InputError(
                f"the question is longer than {MAX_QUESTION_CHARS} characters",
                field="question",
                value=f"{len(question)} characters",
            )
        fault = text_fault(question)  # refused before any round or model call, not when recorded
        if fault is not None:
            raise InputError(f"the question {fault}", field="question", value=question[:200])
        if record and self.gateway is None:
            raise InputError("record=True needs a WriteGateway; pass gateway= or record=False")

    def _log_answer(self, answer: Answer, **extra: Any) -> None:
        log.info(
            "loop.answer",
            question_id=answer.answer_id,
            abstained=answer.abstained,
            confidence=answer.confidence,
            rounds=len(answer.rounds),
            llm_calls=answer.llm_calls,
            cited=list(answer.cited_concept_ids),
            reason=answer.abstain_reason,
            latency_ms=round(answer.latency_ms, 3),
            **extra,
        )

    def _start(
        self, question: str, as_of: datetime | None, known_at: datetime | None, *, model: bool = True
    ) -> _Start:
        """The question's id, clock and reading: everything before the first round (``model``:
        False, the grammar's reading only, before the model is asked to read it)."""
        started = time.perf_counter()
        created_at = ensure_utc(self.clock(), field="clock")
        # Read as known no later than the latest committed write, so a replay reads what this
        # read did even if a write stamped earlier (an import's rows) commits meanwhile.
        tops = _tops(self.reader)
        asked = ensure_utc(known_at or created_at, field="known_at")
        point = AsOf(as_of or created_at, write_clock.known_at(asked, tops.written))
        u = self._understand(question, point, explicit=as_of is not None, now=created_at, tops=tops)
        grouped = self._grouped.get(u.point, top=tops.group)
        start = _Start(
            started, created_at, u.point, uuid.uuid4().hex, u.reading, tuple(u.seeds), Usage(), u, grouped
        )
        return self._read_by_model(question, start) if model else start

    def _read_by_model(self, question: str, start: _Start) -> _Start:
        """``start`` with the model's reading of a question the grammar read unsure
        (:meth:`_model_read`): its reading, seeds and the call's usage."""
        u = start.understanding
        reading, reading_usage = self._model_read(question, u)
        seeds = u.seeds
        if reading.read_by == "model":  # the model's reading names its own subjects, among the names read
            picked = {
                c.concept_id: c for c in self.reader.concepts(list(reading.ids()), as_of=u.point).values()
            }
            seeds = tuple(picked[cid] for cid in dict.fromkeys(reading.ids()) if cid in picked)[:MAX_SEEDS]
        return replace(start, reading=reading, seeds=tuple(seeds), reading_usage=reading_usage)

    def _ask(self, start: _Start, question: str, explicit: bool) -> tuple[Answer, Reads | None]:
        """The rounds, from a read question (seeded state, then :meth:`_round` until an answer, a
        reason to stop, or ``max_rounds``); the answer, and what it read (None: not reusable)."""
        reading = start.reading
        log.info("loop.reading", question_id=start.answer_id, **reading.to_dict())
        order = self.walk_order(reading) if self.walks else None
        if start.grouped and order is not None and order.direction != FRINGE:
            # closures step through requirement groups too (one recursive statement still)
            order = replace(order, relations=(*order.relations, REQUIREMENT))
        state = LoopState.seeded(question, reading, start.seeds, start.point, order, grouped=start.grouped)
        if start.seeds and not reading.sure:
            state.reason = _unsure(reading)
        while state.reason is None and state.accepted is None and state.round_no < self.max_rounds:
            self._round(state, start.answer_id)
        return self._finish(state, start, explicit)

    def _round(self, state: LoopState, answer_id: str) -> None:
        """One round (``planning.round``): expand, read lessons, synthesize, judge, decide; then,
        unless it answered, refocus, and say why the loop stops if it does."""
        state.round_no += 1
        started = time.perf_counter()
        if not state.frontier and not state.retry:
            best = state.best
            state.traces.append(
                trace(state, None, None, started, best.confidence, NOTHING_MORE, "stop-empty")
            )
            self._log_round(answer_id, state.traces[-1], 0)
            state.reason = (
                NOTHING_MORE
                if best.draft is None
                else (f"{NOTHING_MORE} (best confidence {best.confidence:.2f}: {best.missing()})")
            )
            return
        # after a fault over evidence that settles the question: read nothing, ask again
        grown = Expansion([], [], 0) if state.retry else expand(state, self.store, self.frontier_cap)
        state.retry = False
        read_lessons(state, self.reader)
        read_requirements(state, self.reader)
        req = request(state, self.reader, self.max_rounds)
        draft, unavailable = synthesize(state, self.synthesizer, req)
        verdict = judge(state, draft, req, self.threshold)
        decision = decide(state, draft, verdict, unavailable, self.max_rounds, grown, started)
        self._log_round(answer_id, state.traces[-1], grown.expanded)
        if state.accepted is not None:
            return
        refocus(state, draft, verdict, self.reader, self.frontier_cap)
        if unavailable is not None:
            state.reason = f"{MODEL_UNAVAILABLE}: {unavailable}"
        elif decision == "abstain" and state.reason is None and state.closure_spent:
            state.reason = self._too_large(state)
        elif decision == "abstain" and state.reason is None:
            best = state.best
            state.reason = (
                f"confidence stayed below {self.threshold:.2f} after {self.max_rounds} rounds "
                f"(best {best.confidence:.2f}): {best.missing()}"
            )

    def _too_large(self, state: LoopState) -> str:
        """Why a closure the question's walks could not gather all of is not answered, with its
        size, counted by the database in one statement."""
        order = state.order
        assert order is not None
        direction = NEEDED_BEFORE if order.direction == FRINGE else order.direction
        with self.reader.connection() as conn:
            size = closure_size(
                conn, state.first_walk, as_of=state.point, steps=learning_steps(direction, order.relations)
            )
        counted = f"more than {COUNT_BUDGET:,}" if size is None else f"{size:,}"
        where = "come after" if direction == UNLOCKS else "come before"
        names = ", ".join(state.evidence.name(c) for c in state.first_walk)
        return (
            f"{TOO_LARGE}: {counted} concepts {where} {names} (counted by the database), more than "
            f"the {order.total:,} one question gathers"
        )

    def _finish(self, state: LoopState, start: _Start, explicit: bool) -> tuple[Answer, Reads | None]:
        """The answer from the final state: grounded evidence, the reading and its model call,
        the closure a walk gathered, the study plan; and what it read, when it may be reused."""
        if state.traces:
            state.traces[0] = replace(state.traces[0], reading=state.reading.to_dict())
        answer = _with_reading(self._answer(state, start), state.reading, explicit=explicit)
        if start.reading_usage.calls:
            answer = replace(answer, reading_usage=start.reading_usage)
        answer.extra["reused_from"] = None
        if state.walks:
            answer.extra["closure"] = _closure(state)
        plan = self._study_plan(state)
        if plan is not None:
            answer.extra["study_plan"] = plan.to_dict()
            state.lessons_read.update(plan.concepts)
        if not state.reusable:
            return answer, None
        concepts = frozenset(state.evidence.concepts) | {c.concept_id for c in start.seeds}
        return answer, Reads(frozenset(state.read_from), concepts, frozenset(state.lessons_read))

    # -- steps ------------------------------------------------------------------------------

    def _study_plan(self, state: LoopState) -> StudyPlan | None:
        """A study-plan question's layered needed-before closure of its subject in the evidence,
        without what the learner knows, each concept with the lessons in force that cover it."""
        reading, evidence = state.reading, state.evidence
        subject = reading.subject
        if not state.evidence.seeds or reading.intent != "study_plan" or subject is None:
            return None
        needs = needs_from_edges((e.source_id, e.target_id, e.relation) for e in evidence.edges.values())
        if evidence.groups:  # the same way through the choices as the answer's plan
            needs, _ = chosen(
                evidence, subject, reading.known, reading.relations or (PREREQUISITE, BUILDS_ON)
            )
        draft = study_plan(subject, needs, known=reading.known)
        with self.reader.connection() as conn:
            lessons = lessons_for(conn, draft.concepts, as_of=state.point) if draft.concepts else {}
        complete = not ({subject, *draft.concepts} & (state.unexplored | state.budget_open))
        return study_plan(subject, needs, known=reading.known, lessons=lessons, complete=complete)

    @staticmethod
    def _log_round(answer_id: str, t: RoundTrace, frontier_size: int) -> None:
        log.info(
            "loop.round",
            question_id=answer_id,
            round=t.round,
            frontier_size=frontier_size,
            frontier_added=len(t.frontier_added),
            edges_added=len(t.edges_added),
            tokens=t.prompt_tokens + t.completion_tokens,
            latency_ms=round(t.latency_ms, 3),
            confidence=t.confidence,
            decision=t.decision,
        )

    def _answer(self, state: LoopState, start: _Start) -> Answer:
        """The accepted draft as an answer over the grounded evidence, or the abstention with the
        reason and the best partial draft."""
        evidence = ground(state.evidence, self.reader)
        accepted, best = state.accepted, state.best
        extra: dict[str, Any] = {}
        if accepted is not None:
            text, conf, abstained, why = accepted.answer, accepted.confidence, False, None
            cited = tuple((cid, evidence.name(cid)) for cid in dict.fromkeys(accepted.concept_ids))
            edges = tuple(dict.fromkeys(accepted.edge_ids))
            lessons = tuple(dict.fromkeys(evidence.lessons[r].lesson_id for r in accepted.lesson_refs))
            extra["cited_lesson_links"] = list(dict.fromkeys(accepted.lesson_refs))
            if accepted.names is not None:
                extra["names"] = [span.to_dict() for span in accepted.names]
        else:
            text, conf, abstained = "", best.confidence, True
            why = state.reason or NOTHING_MORE
            cited, edges, lessons = (), (), ()
            partial = best.truth or best.draft  # what the evidence answered, never a model's prose
            if partial is not None:
                extra["partial"] = {
                    "text": partial.answer,
                    "confidence": best.confidence,
                    "concept_ids": [c for c in partial.concept_ids if c in evidence.concepts],
                    "edge_ids": [e for e in partial.edge_ids if e in evidence.edges],
                    "missing": partial.missing,
                }
        return Answer(
            answer_id=start.answer_id,
            question=state.question,
            text=text,
            abstained=abstained,
            abstain_reason=why,
            confidence=conf,
            cited_concepts=cited,
            cited_edges=edges,
            cited_lessons=lessons,
            result=accepted.result if accepted is not None else None,
            seeds=evidence.seeds,
            evidence=evidence,
            as_of=state.point,
            rounds=tuple(state.traces),
            synthesizer=self.synthesizer.info,
            created_at=start.created_at,
            latency_ms=(time.perf_counter() - start.started) * 1000.0,
            extra=extra,
        )

    def _record(self, answer: Answer, *, reuse: ReuseEntry | None = None) -> None:
        assert self.gateway is not None
        grounding = Grounding(
            confidence=answer.confidence,
            reason=answer.text
            if not answer.abstained and answer.text.strip()
            else (answer.abstain_reason or "abstained"),
            source=self.synthesizer.info.source,
            evidence={
                "question": answer.question,
                "as_of": format_time(answer.as_of.valid_at),
                "known_at": format_time(answer.as_of.recorded_at),
                "edge_version_ids": answer.edge_version_ids(),
                "cited": {"concepts": list(answer.cited_concept_ids), "edges": list(answer.cited_edges)},
            },
        )
        self.gateway.record_answer(
            answer.answer_id,
            question=answer.question,
            answer_text=answer.text,
            abstained=answer.abstained,
            payload=answer.to_dict(),
            grounding=grounding,
            reuse=reuse,
        )


def _closure(state: LoopState) -> dict[str, Any]:
    """What the walks of a learning-order question gathered: how many, and whether a row budget
    left the closure partial (and the concepts on its open boundary)."""
    return {"walks": state.walks, "partial": bool(state.budget_open), "open": sorted(state.budget_open)}


def _noted(reading: Reading, note: str) -> Reading:
    """The grammar's unsure reading, with why the model's reading did not replace it added where
    the abstention reason will say it (the problem when there is one, else the doubt)."""
    if reading.problem:
        return replace(reading, problem=f"{reading.problem}; {note}")
    return replace(reading, doubt=f"{reading.doubt}; {note}".lstrip("; "))


def _unsure(reading: Reading) -> str:
    """Why an unsure reading is not answered, how it was read, and phrasings that are understood."""
    if reading.problem:
        return f"{UNSURE}: {reading.problem}"
    others = [
        replace(reading, intent=alt, relation_note="", time=None).describe()
        for alt in reading.alternatives
        if alt != reading.intent
    ]
    if reading.doubt:
        others.append(reading.doubt)
    also = f"; it could also mean: {' or '.join(others)}" if others else ""
    tries = "; ".join(repr(s) for s in reading.suggestions)
    return f"{UNSURE} (read as: {reading.describe()}{also}). Try asking: {tries}"


def _with_reading(answer: Answer, reading: Reading, *, explicit: bool) -> Answer:
    """The answer with its reading, the lessons it cites, and what valid time it used and why."""
    extra = dict(answer.extra)
    extra["reading"] = reading.to_dict()
    if reading.did_you_mean and answer.abstained:
        # a name that matched nothing but is close to these: offered, never guessed
        extra["did_you_mean"] = [{"id": cid, "name": name} for cid, name in reading.did_you_mean]
    if answer.result is None and not answer.abstained:
        # A synthesizer that states no result: what it cites is what it answers.
        answer = replace(answer, result=Result(reading.intent, answer.cited_concept_ids))
    text = answer.text
    extra["set_aside"] = list(reading.set_aside)
    if reading.set_aside and not answer.abstained:
        # the part of the message the answer leaves out is said, not silently dropped
        parts = "; ".join(repr(part) for part in reading.set_aside)
        text += f" (I did not answer the part about {parts}: the graph records how concepts depend on each other, not that.)"
    if reading.time is not None and not answer.abstained:
        at = answer.as_of.valid_at
        day = (
            at.date().isoformat()
            if (at.hour, at.minute, at.second, at.microsecond) == (0, 0, 0, 0)
            else format_time(at)
        )
        if explicit:
            text += f" (As of {day}, the --as-of given; the question's words {reading.time.words!r} were set aside.)"
        else:
            text += f" (As of {day}, read from the question's words {reading.time.words!r}.)"
    return replace(answer, text=text, extra=extra)
