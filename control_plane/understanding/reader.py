"""Reading a question in one pass: names, time, seeds, the reading, and what to suggest.

:func:`understand` is what the planner calls once before round 1. It finds the concepts the
question names (the name index as of the question's time: time words move the valid time unless
one was given), the seeds (at most three, most specific first), the relations in force, and reads
the question (``interpretation.interpret``). It answers with an :class:`Understanding`: the
reading, the time point to answer at, and the seed records.

Names it cannot place are never guessed. Words that name no concept but are close to one
("embedings", "Retrieval Augmented Genration") make the reading a problem with ``did_you_mean``;
so does a known name followed by words that, with it, are close to a *longer* name ("Fisher
information matric" is not "Fisher information"). A name that only a later version of the graph
has ("LLM router" asked of January 2025, when only "LLM" existed) is a problem too.

The graph is reached through :class:`Vocabulary` (the planner's cached name index, relation
counts, degrees and concept records); this module does no I/O of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from types import EllipsisType
from typing import Final, Protocol

from rapidfuzz import fuzz

from control_plane.understanding.grammar import _surface, _token_spans
from control_plane.understanding.intent_model import IntentModel
from control_plane.understanding.interpretation import interpret
from control_plane.understanding.lexicon import VOCABULARY, respelt
from control_plane.understanding.names import MAX_SEEDS, NameIndex, Suggestion, normalise
from control_plane.understanding.reading import Mention, Reading, mentions_in
from control_plane.understanding.timewords import find_time
from data_plane.records import Concept
from data_plane.temporal import AsOf

__all__ = ["Understanding", "Vocabulary", "understand"]

# How many concepts named in a question are read (the most specific first); the seeds, at most
# ``names.MAX_SEEDS``, are chosen among them by the reading.
MAX_NAMED: Final = 8
# How many close names a problem reading offers.
SUGGESTIONS: Final = 3
# How close a word written after a known name must be to the rest of a longer name.
REST_OF_NAME_SCORE: Final = 75.0


class Vocabulary(Protocol):
    """What reading a question needs to know of the graph as of a time."""

    def names(self, as_of: AsOf) -> NameIndex: ...

    def relation_counts(self, as_of: AsOf) -> Mapping[str, int]: ...

    def degrees(self, ids: Sequence[str], as_of: AsOf) -> Mapping[str, int]: ...

    def concepts(self, ids: Sequence[str], as_of: AsOf) -> Mapping[str, Concept]: ...


@dataclass(frozen=True)
class Understanding:
    """A question read: the reading, the (valid, recorded) time to answer at, the seed records, and
    the name index in force then (what an answer's text may name)."""

    reading: Reading
    point: AsOf
    seeds: tuple[Concept, ...]
    names: NameIndex
    named: Mapping[str, str]  # id -> name of every concept the question names (at most MAX_NAMED)


def understand(
    question: str,
    vocabulary: Vocabulary,
    point: AsOf,
    *,
    explicit: bool,
    now: datetime,
    model: IntentModel | EllipsisType | None = ...,
) -> Understanding:
    """Read ``question`` (module docstring). ``explicit``: the valid time was given, so time words
    do not move it; ``now`` resolves "today" and "two years ago"."""
    entry_point = point
    index = vocabulary.names(point)
    found = mentions_in(question, index)
    when = find_time(question, now, [(m.start, m.end) for m in found])
    if when is not None and not explicit:
        point = AsOf(when.valid_at, point.recorded_at)
        index = vocabulary.names(point)  # the names in force at the time the question names
    candidates = index.candidates(question)
    degrees = vocabulary.degrees(candidates, point) if len(candidates) > 1 else {}
    ids = index.find(question, degrees, limit=MAX_NAMED)
    records = vocabulary.concepts(ids, point) if ids else {}
    names = {cid: records[cid].name for cid in ids if cid in records}
    mentions = [replace(m, name=names[m.concept_id]) for m in mentions_in(question, index, names)]
    reading = interpret(question, mentions, now=now, relations=vocabulary.relation_counts(point), model=model)
    # The seeds are what the reading is about (the subject first, then the other concepts and
    # what the learner knows), at most MAX_SEEDS; a concept named only in the learner's
    # background is not one. A question read as about nothing keeps the most specific names.
    about = [cid for cid in dict.fromkeys(reading.ids()) if cid in records] or list(names)
    seeds = tuple(records[cid] for cid in about[:MAX_SEEDS])
    if when is not None and reading.problem is None and (gone := _shadowed(found, mentions)):
        # "what was LLM router grounded in, in January 2025?" when "LLM router" came later:
        # "LLM" alone, a name in force then, is not what the question names.
        later = vocabulary.concepts([gone.concept_id], entry_point)
        name = later[gone.concept_id].name if gone.concept_id in later else gone.concept_id
        reading = replace(
            reading,
            sureness=0.0,
            problem=f"the question names {name!r}, which is not a concept in this graph "
            f"as of {point.valid_at.date().isoformat()}",
        )
    close = _close_names(question, mentions, index, reading)
    if close:
        words, suggested = close
        concepts = vocabulary.concepts([s.concept_id for s in suggested], point)
        offered = tuple(
            (s.concept_id, concepts[s.concept_id].name) for s in suggested if s.concept_id in concepts
        )
        if offered:
            reading = replace(
                reading,
                sureness=0.0,
                problem=f"the question names {words!r}, which is not a concept in this graph; did you mean "
                + " or ".join(name for _, name in offered)
                + "?",
                did_you_mean=offered,
            )
    return Understanding(reading, point, seeds, index, names)


def _close_names(
    question: str, mentions: Sequence[Mention], index: NameIndex, reading: Reading
) -> tuple[str, list[Suggestion]] | None:
    """(the words, the concepts close to them) when the question writes a name the graph does not
    have but nearly has; None otherwise (module docstring)."""
    toks = normalise(question)
    masked = {i for m in mentions for i in range(m.start, m.end)}
    unexplained = [
        i for i, t in enumerate(toks) if i not in masked and t.isalpha() and respelt(t) not in VOCABULARY
    ]
    if reading.problem is None and reading.subjects:
        # A name the question did find, with an unexplained word written right after it that is
        # close to the rest of a longer name ("Fisher information matric": "matric" ~ "matrix").
        spans = _token_spans(question)
        for m in mentions:
            end = m.end
            if (
                end not in unexplained
                or end >= len(spans)
                or question[spans[end - 1][1] : spans[end][0]] != " "
            ):
                continue
            words = _surface(question, m.start, end + 1)
            own = " ".join(toks[m.start : m.end])
            close = [
                s
                for s in index.suggest(words, limit=SUGGESTIONS)
                if s.concept_id != m.concept_id
                and s.phrase.startswith(own + " ")
                and fuzz.ratio(toks[end], s.phrase[len(own) + 1 :]) >= REST_OF_NAME_SCORE
            ]
            if close:
                return words, close
        return None
    for lo, hi in _runs(unexplained):
        words = _surface(question, lo, hi)
        close = index.suggest(words, limit=SUGGESTIONS)
        if close:
            return words, close
    return None


def _runs(positions: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive token positions, as ``[lo, hi)`` spans."""
    runs: list[tuple[int, int]] = []
    for i in positions:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _shadowed(before: Sequence[Mention], after: Sequence[Mention]) -> Mention | None:
    """A name found at first (``before``) that the names in force at the question's own time
    (``after``) no longer cover, though a shorter name inside it is found: the question names a
    concept the graph did not have then."""
    spans = {(m.start, m.end) for m in after}
    for m in before:
        if (m.start, m.end) not in spans and any(m.start <= a.start and a.end <= m.end for a in after):
            return m
    return None
