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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from itertools import combinations
from types import EllipsisType
from typing import Final, Protocol

from control_plane.understanding.accounting import runs
from control_plane.understanding.intent_model import IntentModel, default_model
from control_plane.understanding.interpretation import interpret
from control_plane.understanding.lexicon import (
    ADVERBS,
    ARGUMENT_PREPOSITIONS,
    FUNCTION_WORDS,
    INVERTING_AUX,
    KNOWN_VERBS,
    VOCABULARY,
    everyday,
    nameless,
    respelt,
)
from control_plane.understanding.names import MAX_SEEDS, NameIndex, Suggestion, normalise
from control_plane.understanding.reading import Mention, Reading, mentions_in
from control_plane.understanding.text import Text
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
# At most this many names that are also the reader's words are tried each way (2^n readings).
MAX_AMBIGUOUS: Final = 3
_QUOTES: Final = "\"'`“”‘’«»"
_DETERMINERS: Final = frozenset(normalise("the a an my our your this that these those"))
_AUXILIARIES: Final = INVERTING_AUX | frozenset(normalise("is are was were"))
_JOINERS: Final = frozenset(normalise("and or vs versus"))
_LEARNING_VERBS: Final = KNOWN_VERBS | frozenset(
    normalise("learn study start tackle master cover understand begin take")
)
_ADVERBS: Final = ADVERBS | frozenset(normalise("next last later more again"))
# Prepositions whose object is a concept the question asks about ("before order", "from set to
# graph"); not "in class", "on time", "at first".
_ARGUMENT_PREPOSITIONS: Final = ARGUMENT_PREPOSITIONS | frozenset(normalise("from than between with like"))


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
    text = Text.of(question)  # the one tokenisation every rule reads
    index = vocabulary.names(point)
    found = mentions_in(text, index)
    plain = [(m.start, m.end) for m in found if not _ambiguous(text, m, found)]
    when = find_time(text, now, plain)
    got = _read_at(text, vocabulary, point, index, found, entry_point, now, model)
    if when is not None and not explicit and got.reading.time is not None:
        # the names in force at the time the question names; not when the time words are an
        # aside's ("..., and who was president of France in 2016?"), which the reading drops
        point = AsOf(when.valid_at, point.recorded_at)
        got = _read_at(text, vocabulary, point, vocabulary.names(point), found, entry_point, now, model)
    return got


def _read_at(
    text: Text,
    vocabulary: Vocabulary,
    point: AsOf,
    index: NameIndex,
    found: Sequence[Mention],
    entry_point: AsOf,
    now: datetime,
    model: IntentModel | EllipsisType | None,
) -> Understanding:
    """The question read with the names in force at ``point`` (``index``); ``found``: its names
    as in force when it was asked (``understand``)."""
    candidates = index.candidates(text)
    degrees = vocabulary.degrees(candidates, point) if len(candidates) > 1 else {}
    ids = index.find(text, degrees, limit=MAX_NAMED)
    records = vocabulary.concepts(ids, point) if ids else {}
    names = {cid: records[cid].name for cid in ids if cid in records}
    every = [
        replace(m, name=names[m.concept_id])
        for m in mentions_in(text, index, names)
        if not _letter_in_another_case(text, m, names[m.concept_id])
    ]
    mentions, reading = _read_names(text, every, now, vocabulary.relation_counts(point), model)
    names = {cid: name for cid, name in names.items() if any(m.concept_id == cid for m in mentions)}
    # The seeds are what the reading is about (the subject first, then the other concepts and
    # what the learner knows), at most MAX_SEEDS; a concept named only in the learner's
    # background is not one. A question read as about nothing keeps the most specific names.
    about = [cid for cid in dict.fromkeys(reading.ids()) if cid in records] or list(names)
    seeds = tuple(records[cid] for cid in about[:MAX_SEEDS])
    if point.valid_at < now and entry_point.valid_at < now:  # asked of the past: compare with the names now
        found = mentions_in(text, vocabulary.names(AsOf(now, entry_point.recorded_at)))
    if point.valid_at < now and reading.problem is None and (gone := _shadowed(found, mentions)):
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
    unheld = _unheld_code(text, mentions, index)
    close = unheld if unheld is not None else _close_names(text, mentions, index, reading)
    if close:
        words, suggested = close
        concepts = vocabulary.concepts([s.concept_id for s in suggested], point)
        offered = tuple(
            (s.concept_id, concepts[s.concept_id].name) for s in suggested if s.concept_id in concepts
        )
        if offered or unheld is not None:
            reading = replace(
                reading,
                sureness=0.0,
                problem=f"the question names {words!r}, which is not a concept in this graph"
                + (("; did you mean " + " or ".join(name for _, name in offered) + "?") if offered else ""),
                did_you_mean=offered,
            )
    return Understanding(reading, point, seeds, index, names)


def _unheld_code(
    text: Text, mentions: Sequence[Mention], index: NameIndex
) -> tuple[str, list[Suggestion]] | None:
    """(the words, the names close to them) for the first code the question writes outside every
    name in the shape of this graph's names, which the graph does not hold; None when there is
    none. The shape is a word the graph's names write a number after (``NameIndex.numbered``)
    with a number: "ECON100D" on a catalogue of ECON courses, "Llama 3" beside "Llama 2"; or a
    number listed after such a name, its word left out ("MATH 20C and 20D", offered as "MATH
    20D"). A number after another word ("in 2016", "week 3"), or counting something ("MATH 20C,
    3 years ago"), is no code."""
    toks = text.words
    masked = {i for m in mentions for i in range(m.start, m.end)}
    loose = [i for i in range(len(toks)) if toks[i][:1].isdigit() and i not in masked]
    if not loose:
        return None
    numbered = index.numbered() - FUNCTION_WORDS
    for i in loose:
        if i > 0 and i - 1 not in masked and toks[i - 1] in numbered:
            words = text.surface(i - 1, i + 1)
            return words, index.suggest(words, limit=SUGGESTIONS)
        # listed after a numbered name: "<name> and|or|, <number>"
        j = i - 1 if i > 0 and toks[i - 1] in _JOINERS else i
        listed = j != i or (i > 0 and "," in text.raw[text.spans[i - 1][1] : text.spans[i][0]])
        head = next((m for m in mentions if m.end == j and toks[m.start] in numbered), None)
        # the number is a list item of its own ("... and 20D?"), not a count ("..., 3 years ago")
        alone = (
            i + 1 == len(toks)
            or toks[i + 1] in _JOINERS
            or bool(text.raw[text.spans[i][1] : text.spans[i + 1][0]].strip())
        )
        if listed and alone and head is not None:
            phrase = f"{toks[head.start]} {toks[i]}"
            held = index.phrases.get(phrase)
            offered = (
                [Suggestion(held, 100.0, phrase)]
                if isinstance(held, str)
                else index.suggest(phrase, limit=SUGGESTIONS)
            )
            return text.surface(i, i + 1), offered
    return None


def _letter_in_another_case(text: Text, m: Mention, name: str) -> bool:
    """Is ``m`` a one-letter name written in another case than the graph's ("q" in "quick q:" is
    no concept "Q"; "C", "R" are written as they are)?"""
    if m.end - m.start != 1 or len(name.strip()) != 1:
        return False
    a, b = text.spans[m.start]
    return text.raw[a:b][:1] != name.strip()  # "C's": the letter, not its possessive


def _ambiguous(text: Text, m: Mention, mentions: Sequence[Mention]) -> bool:
    """Is the mention ``m`` a name only perhaps: every word of it one the reader reads or the
    system's answers use (``lexicon.everyday``: a concept called "Order", "Next", "Graph" or
    "Build", "A"), and the question does not set it apart as a name (a capital
    where its sentence does not begin, unless the question capitalises its other words too;
    quotes; a label's colon after it)?"""
    spans = text.spans
    if not everyday(" ".join(text.words[m.start : m.end])):
        return False
    lo, hi = spans[m.start][0], spans[m.end - 1][1]
    before, after = text.raw[:lo].rstrip(" "), text.raw[hi:]
    at_start = not before or before[-1] in ".?!\n"  # after a label's colon a capital names ("Goal: Order")
    if (before[-1:] in _QUOTES and after[:1] in _QUOTES) or (at_start and after.startswith(":")):
        return False  # quoted, or a label ("C: do I need it for X?"; not "what order: ...")
    named = {i for n in mentions for i in range(n.start, n.end)}
    inner = [
        t
        for i, (a, b) in enumerate(spans)
        if i not in named and (t := text.raw[a:b])[:1].isalpha() and not _opens(text.raw[:a])
    ]
    headline = len(inner) >= 2 and sum(t[0].isupper() for t in inner) * 2 > len(inner)
    return headline or at_start or not any(ch.isupper() for ch in text.raw[lo:hi])


def _opens(before: str) -> bool:
    """Does a word after the text ``before`` open a sentence (where a capital says nothing)?"""
    before = before.rstrip()
    return not before or before[-1] in ".?!:\n"


def _in_a_longer_name(text: Text, m: Mention) -> bool:
    """Is the mention ``m`` followed, a space apart, by a word no vocabulary here explains ("time
    series forecasting"), so that it is the first word of a longer name the graph lacks? The words
    of the phrasings the intent model learnt from are explained too ("Year serves as ...")."""
    spans, toks = text.spans, text.words
    if m.end >= len(toks) or text.raw[spans[m.end - 1][1] : spans[m.end][0]] != " ":
        return False
    word = toks[m.end]
    return nameless(word) and respelt(word) not in _phrasing_words()


@cache
def _phrasing_words() -> frozenset[str]:
    """The single-word features of the committed intent model: words its phrasings use."""
    model = default_model()
    return frozenset() if model is None else frozenset(f for f in model.weights if " " not in f)


def _listed_with_a_name(
    text: Text, m: Mention, mentions: Sequence[Mention], ambiguous: Sequence[Mention]
) -> bool:
    """Is ``m`` an item of a list with a name that is surely one ("Relation and Talrix", "Edge,
    Zork")? Then it is a name too."""
    spans = text.spans
    for n in mentions:
        if n in ambiguous or (m.end - m.start == 1 and text.words[m.start] in _ADVERBS):
            continue  # "X first or Y first": an adverb, not a list item
        a, b = (m, n) if m.end <= n.start else (n, m)
        if a.end > b.start:
            continue
        gap = text.raw[spans[a.end - 1][1] : spans[b.start][0]].strip().lower()
        if gap in ("and", "or", "&", ",", "/", "vs", "vs.", "versus") or re.fullmatch(
            r"[)\]]?\s*[,;&/]", gap
        ):
            return True
    return False


def _in_slot(text: Text, m: Mention, names: Sequence[Mention]) -> bool:
    """Does the mention ``m`` stand where a concept stands: at the question's start, after a
    preposition, an auxiliary or a verb of learning ("before order", "how does build lead to X",
    "is set ...", "about to start lesson"; "learn first" is an adverb), before a possessive, or
    coordinated with another name ("path or order")? Not after a determiner ("the graph", "this
    order": a common noun), nor right before a name or a determiner ("to reach X": a verb and its
    object). Elsewhere a word the reader reads is that word ("learning path", "what builds on X",
    "in what order")."""
    toks = text.words
    spans = text.spans
    before = toks[m.start - 1] if m.start > 0 else None
    if before in _DETERMINERS:
        return False  # "the graph", "this order": a common noun
    after = toks[m.end] if m.end < len(toks) else None
    surface = text.raw[spans[m.start][0] : spans[m.end - 1][1] + 2]
    joined = {n.end for n in names if n is not m} | {n.start for n in names if n is not m}
    adverb = m.end - m.start == 1 and toks[m.start] in _ADVERBS
    gap = text.raw[spans[m.end - 1][1] : spans[m.end][0]] if m.end < len(spans) else "?"
    if gap.isspace() and (m.end in {n.start for n in names} or after in _DETERMINERS):
        return False  # "want to reach X", "build the X": a verb and its object
    if before == "to" and not gap.strip():
        return False  # "to reach", "to build": an infinitive, unless it ends the clause ("leads to order?")
    if after == "to":
        return False  # "lessons to do before X"
    written = text.surface(m.start, m.end)
    again = [text.surface(n.start, n.end) for n in names if n.concept_id == m.concept_id]
    if again:
        # written as a sure name elsewhere is written ("Lesson then X, or X then Lesson?"); written
        # otherwise it is the word ("which lessons cover Lesson?")
        return written in again
    return (
        before is None
        or before in _ARGUMENT_PREPOSITIONS
        or before in _AUXILIARIES
        or (before in _LEARNING_VERBS and not adverb)
        or surface.endswith(("'s", "’s"))
        or (before in _JOINERS and m.start - 1 in joined)
        or (after in _JOINERS and m.end + 1 in joined)
    )


def _read_names(
    text: Text,
    mentions: Sequence[Mention],
    now: datetime,
    relations: Mapping[str, int],
    model: IntentModel | EllipsisType | None,
) -> tuple[list[Mention], Reading]:
    """The names the question uses as names, and its reading. A name that is also a word the
    reader reads ("what comes before order?" against "in what order should I learn A and B?")
    is a name when the question read with it as one is sure, and so accounts for it (a reading
    that leaves a named concept out is a problem); else a word. The question is read with the most
    such names that give a sure reading, else with none of them (with all, when none leaves the
    question naming nothing)."""
    ambiguous = [m for m in mentions if _ambiguous(text, m, mentions) and not _in_a_longer_name(text, m)]
    # the word of a longer name the graph lacks ("time series forecasting"): a word
    mentions = [m for m in mentions if not (_ambiguous(text, m, mentions) and _in_a_longer_name(text, m))]
    listed = [m for m in ambiguous if _listed_with_a_name(text, m, mentions, ambiguous)]
    sure = [m for m in mentions if m not in ambiguous]
    maybe = [m for m in ambiguous if m not in listed and _in_slot(text, m, sure)]
    mentions = [m for m in mentions if m not in ambiguous or m in maybe or m in listed]  # the rest: words
    options = (
        [c for k in range(len(maybe), -1, -1) for c in combinations(maybe, k)]
        if len(maybe) <= MAX_AMBIGUOUS
        else [tuple(maybe), ()]
    )
    tried: list[tuple[list[Mention], Reading]] = []
    for taken in options:
        kept = [m for m in mentions if m not in maybe or m in taken]
        reading = interpret(text, kept, now=now, relations=relations, model=model)
        if reading.sure:
            return kept, reading
        tried.append((kept, reading))
    # None is sure: read with none of them, unless then nothing at all is named ("Path -> next?")
    unnamed = tried[-1]
    return tried[0] if unnamed[1].intent == "unknown" and unnamed[1].problem is None else unnamed


def _close_names(
    text: Text, mentions: Sequence[Mention], index: NameIndex, reading: Reading
) -> tuple[str, list[Suggestion]] | None:
    """(the words, the concepts close to them) when the question writes a name the graph does not
    have but nearly has; None otherwise (module docstring)."""
    toks = text.words
    masked = {i for m in mentions for i in range(m.start, m.end)}
    unexplained = [
        i for i, t in enumerate(toks) if i not in masked and t.isalpha() and respelt(t) not in VOCABULARY
    ]
    if reading.problem is None and reading.subjects:
        # A name the question did find, with an unexplained word written right after it that is
        # close to the rest of a longer name ("Fisher information matric": "matric" ~ "matrix").
        spans = text.spans
        for m in mentions:
            end = m.end
            if (
                end not in unexplained
                or end >= len(spans)
                or text.raw[spans[end - 1][1] : spans[end][0]] != " "
            ):
                continue
            words = text.surface(m.start, end + 1)
            own = " ".join(toks[m.start : m.end])
            from rapidfuzz import fuzz  # loaded by suggestions only (as ``index.suggest`` does)

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
    for lo, hi in runs(unexplained):
        # a slip in one word of a longer name ("reinforcment learning"): the words next to it,
        # when they are words and no name, are tried with it
        tried = [
            (lo, hi),
            *((a, b) for a, b in _widened(lo, hi, len(toks)) if masked.isdisjoint(range(a, b))),
        ]
        best: tuple[float, str, list[Suggestion]] | None = None
        for a, b in tried:
            words = text.surface(a, b)
            close = index.suggest(words, limit=SUGGESTIONS)
            if close and (best is None or close[0].score > best[0]):
                best = (close[0].score, words, close)
        if best is not None:
            return best[1], best[2]
    return None


def _widened(lo: int, hi: int, n: int) -> list[tuple[int, int]]:
    """The span ``[lo, hi)`` with up to two words more on either side, within ``[0, n)``."""
    return [
        (a, b)
        for a, b in ((lo - 1, hi), (lo, hi + 1), (lo - 1, hi + 1), (lo - 2, hi), (lo, hi + 2))
        if a >= 0 and b <= n
    ]


def _shadowed(before: Sequence[Mention], after: Sequence[Mention]) -> Mention | None:
    """A name found at first (``before``) that the names in force at the question's own time
    (``after``) no longer cover, though a name inside it (a shorter one, or the same words as
    another concept's other spelling: "Set" for "Set (mathematics)") is found: the question names
    a concept the graph did not have then."""
    named = {(m.start, m.end, m.concept_id) for m in after}
    for m in before:
        if (m.start, m.end, m.concept_id) not in named and any(
            m.start <= a.start and a.end <= m.end for a in after
        ):
            return m
    return None
