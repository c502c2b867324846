"""A structured reading of a learner's question, made before round 1: intent, subjects and their
roles, direction, direct or transitive, relation family, time point, and how sure the reading is.

The words and phrases it reads with are data in ``control_plane.understanding.lexicon``; this
module is the grammar. Pure: the planner passes the concepts the question names (``Mention``:
token spans from the name index, ``control_plane.understanding.names``), the relation counts in
force, and ``now``; nothing here reads the clock or the database, and :func:`interpret` never
raises on any text.

Direction comes from the sentence's structure, not from which words occur. Each relational cue
has a *left role* and a *right role*: the role of a concept named before it and after it.

=====================  ================  ================  ==================================
cue (any tense)        left role         right role        e.g.
=====================  ================  ================  ==================================
require, need,         dependent         foundation        "what does X require" (X needs
depend on, rely on,                                        something: answer what comes
come after, follow                                         before X); "what requires X"
build on, based on,    dependent         foundation        "what does X build on" / "what
use, extend                                                builds on X" (builds_on edges)
come before, precede,  foundation        dependent         "what does X unlock", "what leads
lead (up) to, unlock,                                      up to X"
enable, underlie
include, contain,      whole             part              "what does X include"
consist of, made of
part of, belong to,    part              whole             "what is X part of"
make up
=====================  ================  ================  ==================================

Passive voice swaps the roles ("what is required by X": X takes the left role; "what is X
required for": X takes the right role). Nouns read by their preposition: "prerequisites of/for
X", "X's prerequisites", "its prerequisites" make X the dependent; "X as a prerequisite", "X is
a prerequisite" make X the foundation; "parts of X" make X the whole. Prepositions next to the
concept settle it first: "before X", "to learn X" (X is the dependent), "after X", "once I know
X" (X is the foundation), "from A to B" (a path), "I already know Y" (known), "but not Y"
(excluded), "like Y" (an example, ignored). Case and punctuation never matter: the reading works
on normalised tokens.

Intents: ``prerequisites`` (direct prerequisite edges), ``needed_before`` (learning order, direct
or transitive), ``dependents`` (what comes after / requires / is unlocked by X), ``builds_on``,
``built_by``, ``parts``, ``wholes``, ``contrasts``, ``related``, ``neighbours``, ``path`` (A to
B in learning order), ``before_uses`` (needed before X and built on by Y), ``lessons_covering``,
``lessons_before``, ``study_plan`` (what X needs, in order, minus what is already known),
``about``; ``unknown`` when nothing is named.

Noun phrases read like the nouns they are built on: "the prerequisite list for X", "X's list of
immediate prerequisites", "prerequisites behind X", "X direct dependents"; a relational noun applied
to itself ("prerequisites of its prerequisites") is the closure. Scope words are scoped: "directly
or through other topics" and "not only the immediate ones" ask for the closure, "not the whole
chain" for one step.

Several sentences: the learner's own background ("backend dev here, pivoting into ML. For X, what
are ...?") is *context*: its concepts, scope, lesson and plan words are not what is asked, unless
the asking sentence only points back ("... Can you list them?"), when the request runs from the
sentence that names the concept. A lesson noun makes a lesson question only when it is what is
asked ("which lessons", "lessons that cover", a bare "X lessons"). Misspelt ordinary words are
respelt against this module's own vocabulary ("prerequisits", "befor", "lessions"); names never.

Words standing where a concept stands but naming none ("how does <words> lead to X", "from
<words> to X", "for <words>, what are the prerequisites", "I'm comfortable with <words>", "a route
starting at <words>") make the reading a *problem*: an answer about X alone would answer another
question.

A reading is *sure* (``sureness >= 0.8``) when a cue or preposition governs the subject and no
two cues disagree. Otherwise (``read_by == "fallback"`` or conflicting readings) the planner
abstains, quoting :meth:`Reading.describe` and two or three ``suggestions`` it does understand.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import EllipsisType
from typing import Any, Final

from control_plane.understanding.intent_model import (
    BAD_INPUT,
    LABEL_READING,
    IntentModel,
    compatible_labels,
    default_model,
    question_tokens,
    second_opinion,
)
from control_plane.understanding.lexicon import (
    ABOUT,
    ABOUT_COPULAS,
    ADVERBS,
    AFTER_MARKERS,
    AFTER_VERBS,
    APPOSITIVE,
    ARGUMENT_PREPOSITIONS,
    AUX_START,
    BARE,
    BEFORE_MARKERS,
    BEFORE_WORDS,
    BETWEEN_PROFORMS,
    BOTH,
    BUILD,
    CAUSAL,
    CLAUSE_SUBJECT,
    COMPOUND_SUFFIXES,
    CONTAINER,
    CONTRAST,
    COPULA,
    COVERING,
    COVERING_VERBS,
    DASH_END,
    DEMONSTRATIVES,
    DEP,
    DETERMINERS,
    DIRECT,
    EXACT,
    EXCEPT,
    EXPLAINED,
    FIRST_PERSON,
    FIRST_WORDS,
    FOUND,
    FRONTED,
    GOAL_REACH,
    HOLDERS,
    INFINITIVE_LEADS,
    INVERTING_AUX,
    KNOWN_FRAMES,
    KNOWN_VERBS,
    LEARN,
    LESSON,
    LIGHT_VERBS,
    MODALS,
    NEGATORS,
    NEIGHBOUR,
    NOUN_GAP,
    NOUN_MODIFIERS,
    NOUNS,
    NUMBERS,
    ON_TOPIC,
    ORIGINS,
    OTHER_SUBJECTS,
    OWNERS,
    PART,
    PASSIVE_FLIP,
    PATH,
    PATH_END,
    PATH_START,
    PEOPLE,
    PERSONS,
    PLACE,
    PLACE_PROFORMS,
    PLAN,
    PLAN_NAMED,
    POLITE,
    POSSESSIVE,
    PREPOSITIONS,
    PREREQ,
    PRONOUNS,
    PURPOSE_VERBS,
    RELATED_WORDS,
    RELATIVE,
    RELATIVE_WORDS,
    REQUESTS,
    SCOPE_ADJECTIVES,
    SENTENCE_END,
    SLOT_END,
    STRUCTURE_NOUNS,
    TAUGHT,
    TIME_NOUNS,
    TOKEN_SPAN,
    TRANSITIVE,
    TWO_PLACE,
    VERB_LEADERS,
    VERB_LIKE,
    VERBS,
    VOCABULARY,
    WANT_SOMETHING,
    WH,
    WHOLE,
    Cue,
    respelt,
    you_respelt,
)
from control_plane.understanding.names import ARROW, TOKEN_PATTERN, NameIndex, normalise
from control_plane.understanding.timewords import TimePoint, find_time
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED, RELATIONS

__all__ = ["SURE", "Mention", "Reading", "Subject", "interpret", "mentions_in"]

SURE: Final = 0.8
MAX_READ_CHARS: Final = 2000

_LEARNING: Final = (PREREQUISITE, BUILDS_ON)


_INTENT_RELATIONS: Final[dict[str, tuple[str, ...]]] = {
    "prerequisites": (PREREQUISITE,),
    "needed_before": _LEARNING,
    "dependents": _LEARNING,
    "builds_on": (BUILDS_ON,),
    "built_by": (BUILDS_ON,),
    "parts": (PART_OF,),
    "wholes": (PART_OF,),
    "contrasts": (CONTRASTS_WITH,),
    "related": (RELATED,),
    "neighbours": RELATIONS,
    "path": _LEARNING,
    "before_uses": _LEARNING,
    "lessons_before": _LEARNING,
    "study_plan": _LEARNING,
    "lessons_covering": (),
    "about": (),
    "unknown": (),
}
# The learning direction each directional intent answers in.
_DIRECTION: Final[dict[str, str]] = {
    "prerequisites": "before",
    "needed_before": "before",
    "builds_on": "before",
    "lessons_before": "before",
    "study_plan": "before",
    "before_uses": "before",
    "dependents": "after",
    "built_by": "after",
    "path": "forward",
}


@dataclass(frozen=True)
class Mention:
    """A concept named in the question: normalised token span ``[start, end)``."""

    concept_id: str
    start: int
    end: int
    name: str = ""


@dataclass(frozen=True)
class Subject:
    """A concept the reading is about and its role: ``subject`` (what is asked about),
    ``target`` (a path's end, a plan's goal), ``other`` (the second concept of a combined
    question), ``known`` (already learned), ``excluded`` ("but not Y")."""

    concept_id: str
    role: str
    words: str

    def to_dict(self) -> dict[str, str]:
        return {"concept_id": self.concept_id, "role": self.role, "words": self.words}


@dataclass(frozen=True)
class Reading:
    """How the question was read (module docstring). ``relations`` are the relations the answer
    is computed from on this graph; ``asked_relations`` what the words asked for."""

    question: str
    intent: str
    subjects: tuple[Subject, ...] = ()
    direction: str = ""  # "before" | "after" | "forward" | ""
    transitive: bool = False
    asked_relations: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    relation_note: str = ""
    relations_missing: bool = False  # the asked relation has no edge in force in this graph
    combine: str = ""  # "" | "both" | "either" | "except"
    hops: int = 1
    exact: bool = False
    time: TimePoint | None = None
    sureness: float = 0.0
    read_by: str = "grammar"  # "grammar" | "fallback" | "none"
    cue: str = ""
    alternatives: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    problem: str | None = None
    doubt: str = ""  # what the learnt second reading (intent_model) finds more likely
    names: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def sure(self) -> bool:
        return self.problem is None and self.sureness >= SURE

    def ids(self, *roles: str) -> tuple[str, ...]:
        return tuple(s.concept_id for s in self.subjects if not roles or s.role in roles)

    @property
    def subject(self) -> str | None:
        found = self.ids("subject") or self.ids("target")
        return found[0] if found else None

    @property
    def other(self) -> str | None:
        found = self.ids("target") if self.intent == "path" else self.ids("other", "excluded")
        return found[0] if found else None

    @property
    def known(self) -> tuple[str, ...]:
        return self.ids("known")

    def _words(self, concept_id: str | None) -> str:
        for s in self.subjects:
            if s.concept_id == concept_id:
                return s.words
        return concept_id or "?"

    def describe(self) -> str:
        """One line: what the question was read as ("concepts that have RAG as a prerequisite")."""
        if self.problem:
            return self.problem
        x, y = self._words(self.subject), self._words(self.other)
        if self.combine == "both":
            x = f"both {x} and {y}"
        elif self.combine == "either":
            x = f"{x} and {y}"
        how = "transitively" if self.transitive else "directly"
        text = {
            "prerequisites": f"the direct prerequisites of {x}",
            "needed_before": f"everything needed before {x}"
            if self.transitive
            else f"what comes directly before {x}",
            "dependents": (
                f"concepts that have {x} as a prerequisite"
                if self.asked_relations == (PREREQUISITE,) and not self.transitive
                else f"everything that comes after {x}"
                if self.transitive
                else f"what comes directly after {x}"
            ),
            "builds_on": f"what {x} builds on" + (" (transitively)" if self.transitive else ""),
            "built_by": f"what builds on {x}" + (" (transitively)" if self.transitive else ""),
            "parts": f"the parts of {x}",
            "wholes": f"what {x} is part of",
            "contrasts": f"what {x} contrasts with"
            if not self.other or self.combine
            else f"how {x} contrasts with {y}",
            "related": f"what {x} is related to",
            "neighbours": f"concepts {'exactly' if self.exact else 'within'} {self.hops} hop{'s' if self.hops > 1 else ''} of {x}",
            "path": f"the learning path from {x} to {y}",
            "before_uses": f"concepts needed before {x} that {y} builds on",
            "lessons_covering": f"lessons that cover {x}",
            "lessons_before": f"lessons to take before {x} ({how})",
            "study_plan": f"a study plan for {x}",
            "about": f"what {x} is",
            "unknown": "no known concept is named",
        }.get(self.intent, self.intent)
        if self.combine == "except":
            text += f", except {y}"
        if self.known:
            text += " (already known: " + ", ".join(self._words(k) for k in self.known) + ")"
        if self.time is not None:
            text += f", as of {self.time.valid_at.date().isoformat()} (from {self.time.words!r})"
        if self.relation_note:
            text += f"; {self.relation_note}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "read_as": self.describe() if self.sure or self.problem else f"{self.describe()} (unsure)",
            "subjects": [s.to_dict() for s in self.subjects],
            "direction": self.direction,
            "transitive": self.transitive,
            "asked_relations": list(self.asked_relations),
            "relations": list(self.relations),
            "relation_note": self.relation_note,
            "combine": self.combine,
            "hops": self.hops,
            "exact": self.exact,
            "time": self.time.to_dict() if self.time else None,
            "sureness": self.sureness,
            "sure": self.sure,
            "read_by": self.read_by,
            "cue": self.cue,
            "alternatives": list(self.alternatives),
            "suggestions": list(self.suggestions),
            "problem": self.problem,
            "doubt": self.doubt,
        }


def mentions_in(question: str, index: NameIndex, ids: Iterable[str] | None = None) -> list[Mention]:
    """Where the concepts ``ids`` (all, by default) are named in ``question`` (outermost spans)."""
    wanted = None if ids is None else set(ids)
    found = index.matches(question)
    kept = [m for m in found if not any(m.inside(o) for o in found)]
    out = [Mention(m.concept_id, m.start, m.end) for m in kept if wanted is None or m.concept_id in wanted]
    return sorted(out, key=lambda m: (m.start, m.concept_id))


# -- token helpers ---------------------------------------------------------------------------


_OBJECT_PRONOUNS: Final = frozenset({"me", "us", "them", "him", "her"})


def _find_all(toks: Sequence[str], phrase: Sequence[str], masked: frozenset[int]) -> list[tuple[int, int]]:
    """Occurrences of ``phrase`` (adverbs may sit between its words; "upon" is "on" after its first
    word: "rest upon"), outside ``masked``."""
    first = phrase[0]
    if first not in toks:  # most phrases miss: one scan in C instead of a Python loop
        return []
    out = []
    n = len(toks)
    for i in range(n):
        if toks[i] != first or i in masked:
            continue
        j, k = i + 1, 1
        while k < len(phrase) and j < n:
            if (toks[j] == phrase[k] or (toks[j], phrase[k]) == ("upon", "on")) and j not in masked:
                j, k = j + 1, k + 1
            elif toks[j] in ADVERBS or (toks[j] in _OBJECT_PRONOUNS and j not in masked):
                j += 1  # "lead them to", "get me from": a verb's object between its words
            else:
                break
        if k == len(phrase):
            out.append((i, j))
    return out


def _any(toks: Sequence[str], phrases: Iterable[Sequence[str]], masked: frozenset[int] = frozenset()) -> bool:
    return any(_find_all(toks, p, masked) for p in phrases)


def _ends_with(toks: Sequence[str], end: int, phrases: Iterable[Sequence[str]]) -> bool:
    """Does some phrase end exactly at token ``end`` (exclusive)?"""
    return any(tuple(toks[max(0, end - len(p)) : end]) == tuple(p) for p in phrases)


def _content_span(toks: Sequence[str], lo: int, hi: int, skip: frozenset[str]) -> tuple[int, int] | None:
    """``[lo, hi)`` without the ``skip`` words at either end; None when nothing else is left."""
    while lo < hi and toks[lo] in skip:
        lo += 1
    while hi > lo and toks[hi - 1] in skip:
        hi -= 1
    return (lo, hi) if lo < hi else None


def _unknown_slot(
    toks: Sequence[str], masked: frozenset[int], sentence: Sequence[int] = ()
) -> tuple[int, int] | None:
    """The token span in the other place of a two-place frame around a known concept ("from
    <words> to X"), when it names no known concept (``masked`` marks the tokens of recognised
    names); None when there is no such frame. A frame stays inside one sentence (``sentence``:
    per token, its sentence): "from zero. Give me everything down to the basics" is no frame."""
    for openers, joiners in TWO_PLACE:
        for i, t in enumerate(toks):
            if t not in openers or i in masked:
                continue
            stop = len(toks)
            if len(sentence) == len(toks):
                stop = next((k for k in range(i, len(toks)) if sentence[k] != sentence[i]), len(toks))
            j = next(
                (
                    k
                    for k in range(i + 1, stop)
                    if toks[k] in joiners
                    and k not in masked
                    and not (toks[k] == "to" and toks[k - 1] in INFINITIVE_LEADS)  # "need to master"
                ),
                None,
            )
            if j is None:
                continue
            end = next((k for k in range(j + 1, stop) if toks[k] in SLOT_END and k not in masked), stop)
            slots = ((i + 1, j), (j + 1, end))
            named = [any(k in masked for k in range(lo, hi)) for lo, hi in slots]
            if named.count(True) != 1:
                continue  # not a frame around the concept the question names
            lo, hi = slots[named.index(False)]
            if toks[lo : lo + 1] in _PRO_FORMS:
                continue  # "related to it — nothing formal": the place is "it"; a remark follows
            # a pronoun in the other place points back at the named concept ("exactly 2 hops
            # from X, not directly linked to it", "from there to X"); "from scratch to X" starts
            # where a learner knows nothing
            span = _content_span(
                toks, lo, hi, DETERMINERS | PRONOUNS | DEMONSTRATIVES | PLACE_PROFORMS | POLITE
            )
            if span is not None and not _origin(toks, *span):
                return span
    return None


# Pro-forms that fill a place on their own (unlike "its" or "this", which may open a noun phrase).
_PRO_FORMS: Final = tuple((w,) for w in ("it", "them", "there", "here"))


def _origin(toks: Sequence[str], lo: int, hi: int | None = None) -> bool:
    """Do the words from ``lo`` (up to ``hi``, or any length) say where a learner who knows nothing
    starts ("scratch", "zero", "the ground up")?"""
    if toks[lo : lo + 2] == ("the", "very"):  # "the very bottom" is "the bottom"
        toks = (*toks[: lo + 1], *toks[lo + 2 :])
        hi = None if hi is None else hi - 1
    while lo < len(toks) - 1 and toks[lo] in _INTENSIFIERS and (hi is None or lo + 1 < hi):
        lo += 1  # "absolute zero", "literally nothing", "total scratch"
    return any(tuple(toks[lo : lo + len(p)]) == p and (hi is None or lo + len(p) == hi) for p in ORIGINS)


# Words that strengthen an origin without changing it ("absolute zero", "literally nothing").
_INTENSIFIERS: Final = frozenset(
    normalise("absolute absolutely literally total totally complete completely utter very")
)

# Words that open a new question after a dash: "— so what ...", "— which ...", "— can you ...".
_NEW_QUESTION: Final = frozenset({"so", "now", "then", "but"}) | WH | (AUX_START - {"i"})


def _sentences(question: str) -> tuple[list[int], list[bool]]:
    """Per token, the index of its sentence; per sentence, whether it asks (ends with "?", or
    starts, after a greeting or "kindly", with a question word, an auxiliary or a request). A dot
    after a one-letter token ("e.g.", "i.e.") ends nothing, and a "sentence" of fewer than three
    words ("Hi!") joins the next one; punctuation every few words is noise (one sentence)."""
    low = question.lower()
    spans: list[list[str]] = [[]]
    marks: list[bool] = []
    pos, prev, stops = 0, "", 0
    for m in TOKEN_SPAN.finditer(low):
        gap = low[pos : m.start()]
        ends = bool(SENTENCE_END.search(gap)) or (
            bool(DASH_END.search(gap)) and normalise(m.group())[0] in _NEW_QUESTION
        )
        stops += ends
        if spans[-1] and ends and len(prev) > 1 and len(spans[-1]) >= 3:
            marks.append("?" in gap)
            spans.append([])
        spans[-1].append(normalise(m.group())[0])
        pos, prev = m.end(), m.group()
    marks.append("?" in low[pos:])
    if len(spans) > 1 and len(spans[-1]) < 3:  # a short tail joins the sentence before it
        tail = spans.pop()
        spans[-1] += tail
        marks[-2:] = [marks[-1] or marks[-2]]
    if len(spans) > 1 and 5 * stops > sum(map(len, spans)):
        # punctuation after every few words is noise, not sentences ("Make! me! a! plan!")
        spans, marks = [[w for words in spans for w in words]], [marks[-1]]
    ids = [sid for sid, words in enumerate(spans) for _ in words]
    asks: list[bool] = []
    for words, mark in zip(spans, marks, strict=False):
        first = next((w for w in words if w not in POLITE), "")
        asks.append(
            mark
            # a clarification restates the question before it: "... after X? I mean the whole chain"
            or (any(asks) and any(tuple(words[: len(p)]) == p for p in _CLARIFYING))
            or (first in (AUX_START - {"i"}) and not _subordinate(words, first))
            or first in WH
            or first in REQUESTS
            or _any(words, WANT_SOMETHING)  # "I want the full list", "I would appreciate a list"
            # a fronted adverbial, then the question: "after X whats next", "once I know X, which ..."
            or (first in _FRONTED_ADVERBIAL and any(w in _QUESTION_WORDS for w in words[1:8]))
        )
    return ids, asks


def _subordinate(words: Sequence[str], first: str) -> bool:
    """ "When I taught school, ...", "Where we work, ...": a question word followed straight by its
    subject opens a clause that states, not a question ("when do I ..." inverts)."""
    k = words.index(first)
    return first in {"when", "where", "how", "why"} and k + 1 < len(words) and words[k + 1] in PERSONS


# Words that open a sentence restating the question before it.
_CLARIFYING: Final = tuple(
    normalise(w) for w in ("i mean", "i meant", "meaning", "i.e.", "ie", "that is", "in other words", "as in")
)
# Words that open an adverbial phrase a question may follow ("after X, what ...").
_FRONTED_ADVERBIAL: Final = frozenset(normalise("after before for once when if since regarding about"))
_QUESTION_WORDS: Final = frozenset({"what", "which", "who", "where", "how", "why"})
# Words that open an aside after the question ("Also, any idea where to buy ...?", "btw ...").
_ASIDE_OPENERS: Final = (
    *(
        normalise(w)
        for w in ("also", "btw", "by the way", "ps", "p s", "unrelated", "off topic", "one more thing")
    ),
    *(normalise(f"and {w}") for w in ("also", "btw", "by the way")),
    *(normalise(f"oh {w}") for w in ("and", "also", "btw", "by the way")),
)


def _asides(
    toks: Sequence[str], sentence: Sequence[int], naming: Collection[int], masked: frozenset[int]
) -> frozenset[int]:
    """Sentences after the first that open with "also" / "btw" / "by the way" and ask something
    of their own: no concept named, nothing pointed back at, no relation's word ("Also, any idea
    where to buy cheap servo motors?"). The graph has nothing to say there; the question before
    them is read without them."""
    out: set[int] = set()
    for sid in set(sentence) - {0} - set(naming):
        idx = [i for i, s in enumerate(sentence) if s == sid]
        words = [toks[i] for i in idx]
        start = next((k for k, w in enumerate(words) if w not in POLITE), len(words))
        if not any(tuple(words[start : start + len(p)]) == p for p in _ASIDE_OPENERS):
            continue
        if any(w in PRONOUNS or w in DEMONSTRATIVES for w in words):
            continue
        inside = frozenset(range(len(toks))) - frozenset(idx)
        if _occurrences(toks, masked | inside, VERBS) or _occurrences(toks, masked | inside, NOUNS):
            continue
        out.add(sid)
    return frozenset(out)


# Words that leave something out of the answer ("leave out those that need it only indirectly",
# "rather than its whole ancestry"), before the words they leave out, or after them ("... should
# be excluded"). Not lexicon.EXCEPT as a whole: its "besides" and "apart from" add ("besides the
# direct ones, the indirect ones too").
_LEAVING_OUT: Final = tuple(
    normalise(w)
    for w in ("leave out", "leaving out", "exclude", "excluding", "omit", "omitting", "skip", "skipping",
              "ignore", "ignoring", "drop", "rather than", "instead of", "not including", "minus")
)  # fmt: skip
_LEFT_OUT: Final = frozenset(normalise("excluded omitted skipped ignored dropped"))


_ALTERNATIVE_TO: Final = (normalise("rather than"), normalise("instead of"))


def _contrasted(toks: Sequence[str], quiet: frozenset[int], masked: frozenset[int]) -> bool:
    """Does a contrast word ask for what a concept is contrasted with? "instead of X" and "rather
    than X" do only with a concept as the alternative, and not "rather than X itself" or "rather
    than its whole ancestry": those leave something out of another question's answer."""
    for phrase in CONTRAST:
        for _, j in _find_all(toks, phrase, quiet):
            if phrase not in _ALTERNATIVE_TO:
                return True
            k = _skip_forward(toks, j)
            if k in masked:
                end = k
                while end in masked:
                    end += 1
                if toks[end : end + 1] != ("itself",):
                    return True
    return False


def _left_out(toks: Sequence[str], i: int, j: int, masked: frozenset[int]) -> bool:
    """Is the scope word at ``[i, j)`` what the learner leaves out of the answer? (A name is no
    such word: "prior to skip-gram, transitively".)"""
    lo = max(0, i - 8)
    for phrase in _LEAVING_OUT:
        for s, _ in _find_all(toks[:i], phrase, masked):
            if s >= lo and not any(t in _QUESTION_WORDS for t in toks[s:i]):
                return True
    after = toks[j : j + 6]
    return any(t in _LEFT_OUT for t in after) or tuple(after[:2]) == ("left", "out")


def _scope(
    toks: Sequence[str], masked: frozenset[int], nouns: Sequence[tuple[int, int, Cue]]
) -> tuple[bool, bool]:
    """(direct, transitive) as the words scope the relation. "directly or through others",
    "direct and indirect" ask for both, so they are transitive; a relational noun applied to
    itself ("prerequisites of its prerequisites", "prerequisites' prerequisites") asks for the
    iterated relation."""
    coordinated = {"or", "and"}
    direct = transitive = False

    negated_until = -10  # "don't give me the whole tree": the negation runs on over the noun phrase
    # "next term", "next week": when, not how far
    direct_hits = [
        o for phrase in DIRECT for o in _find_all(toks, phrase, masked) if not _next_time(toks, o[0])
    ]
    direct_word = any(not _negated(toks, i) for i, _ in direct_hits)
    for i, j in sorted(o for phrase in TRANSITIVE for o in _find_all(toks, phrase, masked)):
        if direct_word and toks[i] in STRUCTURE_NOUNS:
            continue  # "skill tree thinking: the nodes immediately after X": the tree is the map
        if (
            toks[i] == "whole"
            and j == i + 1
            and (
                j == len(toks)
                or toks[j] in PRONOUNS
                or j in masked
                or toks[i - 1 : i] in (("what",), ("which",))
            )
        ):
            continue  # "what's the whole it's a piece of", "what whole is it part of": a noun
        if (
            toks[i] == "further"
            and toks[i - 1 : i] in _BUILD_FORMS
            and toks[j : j + 1] in (("on",), ("upon",))
        ):
            continue  # "build further on X": goes on building on it, one step
        if (
            toks[i] in _QUANTIFIERS
            and j < len(toks)
            and j not in masked
            and toks[j] not in VOCABULARY
            and toks[j] not in _COLLECTIONS
        ):
            continue  # "every model is grounded in theory", "what's the whole kitchen": about something else
        if _negated(toks, i) or i <= negated_until + 2 or _left_out(toks, i, j, masked):
            direct, negated_until = True, j
        else:
            transitive = True
    direct_starts = {i for i, _ in direct_hits}
    direct_ends = {j for _, j in direct_hits}
    for i, j in direct_hits:
        if (toks[j : j + 1] and toks[j] in coordinated and j + 1 not in direct_starts) or (
            i > 0 and toks[i - 1] in coordinated and i - 1 not in direct_ends
        ):
            # "direct or indirect", "directly and through others": both; not "direct and immediate"
            transitive = True
        elif _negated(toks, i) and {"only", "just", "merely", "simply"} & set(toks[max(0, i - 3) : i]):
            transitive = True  # "not only the immediate ones", "not just the direct one": more
        elif not _negated(toks, i):
            direct = True
    for (s1, e1, c1), (s2, e2, c2) in itertools.pairwise(nouns):
        if e1 == s2 and toks[s1:e1] != toks[s2:e2]:
            continue  # "its constituent pieces": one noun phrase, not "prerequisites' prerequisites"
        if c1.family == c2.family and all(
            t in OWNERS and k not in masked for k, t in enumerate(toks[e1:s2], e1)
        ):
            if _negated(toks, s1):  # "direct prerequisites, not the prerequisites of those prerequisites"
                direct = True
            else:
                transitive = True
    return direct and not transitive, transitive


# "build further on": the verb's adverb, not a scope word.
_BUILD_FORMS: Final = frozenset((w,) for w in normalise("build builds built building"))
# Scope words that quantify or modify the noun after them ("every <noun>", "the whole <noun>").
_QUANTIFIERS: Final = frozenset(normalise("every whole entire complete full"))
# ... unless that noun is a collection of what is asked ("the complete set of prerequisites").
_COLLECTIONS: Final = frozenset(
    normalise(
        "set list chain tree path sequence lineage history picture map range collection series line "
        "curriculum syllabus course programme program"
    )
)


def _next_time(toks: Sequence[str], i: int) -> bool:
    """Is the word at ``i`` "next" in a time phrase ("next term", "next week")?"""
    return toks[i] == "next" and i + 1 < len(toks) and toks[i + 1] in TIME_NOUNS


def _skip_forward(toks: Sequence[str], i: int) -> int:
    while i < len(toks) and toks[i] in DETERMINERS:
        i += 1
    return i


def _unexplained(toks: Sequence[str], i: int, stop: frozenset[int]) -> tuple[int, int] | None:
    """The run of words from ``i`` that no vocabulary here explains (and no name, ``stop``)."""
    j = i
    while j < len(toks) and j not in stop and toks[j] not in EXPLAINED and not toks[j].isdigit():
        j += 1
    return (i, j) if j > i else None


def _unknown_argument(
    toks: Sequence[str], context: frozenset[int], masked: frozenset[int]
) -> tuple[int, int] | None:
    """In the asking sentences (tokens outside ``context``), a preposition whose object is words
    no vocabulary here explains ("for Roman contract law, what ..."): the span of those words."""
    for i, t in enumerate(toks):
        infinitive = t == "to" and i > 0 and toks[i - 1] in INFINITIVE_LEADS  # "have to go through"
        span = (
            _unexplained(toks, i + 1, context | masked)
            if t in ARGUMENT_PREPOSITIONS and not infinitive
            else None
        )
        if i not in context and span is not None and not _origin(toks, *span):  # "back to basics"
            return span
    return None


def _unknown_known(toks: Sequence[str], masked: frozenset[int]) -> tuple[int, int] | None:
    """ "I'm comfortable with <words>": what the learner already knows, when it names no concept."""
    ends = tuple(phrase for phrase in (*PATH_START, *PATH_END) if len(phrase) > 1)  # "starting at <words>"
    for phrase in (*KNOWN_FRAMES, *ends):
        for _, j in _find_all(toks, phrase, masked):
            if _origin(toks, j):
                continue  # "starting from scratch"
            k = _skip_forward(toks, j)
            if toks[k : k + 1] in _QUANTITY and toks[k + 1 : k + 2] == ("of",):
                continue  # "I've got loads of free evenings": an amount of something, not a topic
            if (span := _unexplained(toks, k, masked)) is not None:
                return span
    # "an applicant who has finished <words>", "I have completed <words>": a perfect or past tense
    # with its subject, followed by words no vocabulary here knows.
    for i, t in enumerate(toks[1:], 1):
        # "I must have covered", "what must I have covered": asked, not said done
        modal = toks[i - 1] in {"have", "ve"} and bool(MODALS.intersection(toks[max(0, i - 3) : i - 1]))
        if t in KNOWN_VERBS and i not in masked and toks[i - 1] in _DONE_SUBJECTS and not modal:
            lo = _skip_forward(toks, i + 1)
            if lo < len(toks) and _origin(toks, lo):
                continue  # "I know literally nothing"
            hi = lo
            while hi < len(toks) and hi - lo < 4 and hi not in masked and toks[hi] not in WH:
                hi += 1
            if any(w not in VOCABULARY and not w.isdigit() for w in toks[lo:hi]):
                return lo, hi
    return None


# Nouns of amount ("loads of", "a lot of", "plenty of"), singular as ``normalise`` makes them.
_QUANTITY: Final = tuple((w,) for w in normalise("loads lots plenty tons heaps bunch couple number deal"))

_DONE_SUBJECTS: Final = frozenset({"has", "have", "ve", "had", "i", "we", "already", "who", "they"})

# "need"-like verbs, and the words that may stand as their subject when the concept is the object.
_NEED_WORDS: Final = frozenset(normalise("need needs needed needing require requires requiring"))
_NEED_SUBJECTS: Final = (
    WH
    | RELATIVE
    | DETERMINERS
    | frozenset(
        normalise(
            "concept topic thing idea subject skill area field module unit one ones stuff anything everything something else other"
        )
    )
)


def _stranded(toks: Sequence[str], masked: frozenset[int]) -> list[tuple[int, int, Cue]]:
    """Verb cues whose preposition was fronted with "which"/"what": "on which ideas X is based",
    "the concepts upon which X builds" read as "X is based on", "X builds upon"."""
    out: list[tuple[int, int, Cue]] = []
    for i in range(len(toks) - 1):
        if toks[i] not in FRONTED or toks[i + 1] not in {"which", "what", "whom"} or i in masked:
            continue
        for j in range(i + 2, min(len(toks), i + 10)):
            if j in masked:
                continue
            for cue in VERBS:
                if any(len(w) == 2 and w[1] == toks[i] and w[0] == toks[j] for w in cue.words):
                    out.append((j, j + 1, cue))
    return out


# Two-word verbs whose second word is a particle a pronoun object may split off ("make it up").
_PHRASAL: Final = frozenset(
    (w[0], w[1])
    for c in VERBS
    for w in c.words
    if len(w) == 2 and w[1] in {"up", "out", "down", "off", "over", "apart", "together"}
)


def _particle_before_pronoun(toks: tuple[str, ...], masked: frozenset[int]) -> tuple[str, ...]:
    """ "which components make it up": a pronoun object splits a phrasal verb; the particle is
    moved back next to its verb ("make up it"), so the verb is read as one cue and the pronoun
    as its object. Positions do not change (the two words swap)."""
    out = list(toks)
    for i in range(len(out) - 2):
        if (
            (out[i], out[i + 2]) in _PHRASAL
            and out[i + 1] in {"it", "them"}
            and not ({i, i + 1, i + 2} & masked)
        ):
            out[i + 1], out[i + 2] = out[i + 2], out[i + 1]
    return tuple(out)


_RECENT: Final = frozenset(normalise("last ago yesterday recently earlier"))
_DID: Final = (
    KNOWN_VERBS | AFTER_VERBS | frozenset(normalise("finished completed started began took passed did"))
)


def _learners_own_time(toks: Sequence[str], when: TimePoint) -> bool:
    """Does the time phrase date something the learner did recently ("I finished X last week",
    "my group completed X yesterday"), rather than the graph the question asks about? Yes when a
    verb of studying with a personal subject stands in the few words before it."""
    said = normalise(when.words)
    if not _RECENT.intersection(said):
        return False  # "when I studied it in 2018" may well ask for the graph of 2018
    first = said[:1]
    at = next((i for i in range(len(toks)) if first and toks[i] == first[0]), None)
    if at is None:
        return False
    window = toks[max(0, at - 6) : at]
    verb = next((k for k in range(len(window) - 1, -1, -1) if window[k] in _DID), None)
    return verb is not None and any(w in PERSONS or w in {"my", "our"} or w in PEOPLE for w in window[:verb])


def _cannot_without(toks: Sequence[str], masked: frozenset[int]) -> list[tuple[int, int, Cue]]:
    """ "which topics can't be learnt without X", "X cannot be understood without what?": what
    cannot be done without something requires it, so the "without" stands as a "require" verb
    (its object X after it, the requiring concept before it)."""
    out: list[tuple[int, int, Cue]] = []
    for i, t in enumerate(toks):
        if t != "without" or i in masked:
            continue
        lo = max(0, i - 8)
        neg = next((k for k in range(i - 1, lo - 1, -1) if toks[k] in _CANNOT and k not in masked), None)
        if neg is not None and any(toks[k] in _DOING for k in range(neg + 1, i)):
            out.append((i, i + 1, _REQUIRE))
    return out


_CANNOT: Final = (NEGATORS - {"without", "no", "none", "nothing"}) | frozenset(
    normalise("impossible unable nobody hard difficult")
)
_DOING: Final = (
    PURPOSE_VERBS
    | KNOWN_VERBS
    | frozenset(normalise("started begun tackled grasped attempted followed approached taken be"))
)
_REQUIRE: Final = next(c for c in VERBS if ("require",) in c.words)


def _asked_noun(toks: Sequence[str], i: int, other_cues: bool, masked: frozenset[int]) -> bool:
    """Is the noun at ``i`` what the question asks for: after a question word or a request
    ("which lessons", "list the lessons"), before what it does ("lessons that cover", "lessons to
    take"), or the only relational word of a keyword query ("RAG lessons")? "Before the module
    starts, what are its subtopics" asks for subtopics, not modules."""
    if i > 0 and toks[i - 1] in {"my", "our"}:
        return False  # "for my lecture on X": the learner's own lesson, not one asked for
    k = i
    while k > 0 and (toks[k - 1] in DETERMINERS or toks[k - 1] in ADVERBS or toks[k - 1] in {"any", "good"}):
        k -= 1
        if toks[k - 1 : k] == ("of",) and k > 1 and toks[k - 2] in _PARTITIVES:
            k -= 1  # "in any of the lessons", "which of your lessons"
    if k > 0 and (
        toks[k - 1] in WH
        or toks[k - 1] in REQUESTS
        or toks[k - 1] in {"recommend", "suggest", "need", "take", "do"}
        or (toks[k - 1] == "in" and k > 1 and toks[k - 2] in TAUGHT)  # "covered in any lesson"
        or (toks[k - 1] == "in" and k > 1 and toks[k - 2] in WH)  # "where in the course is X covered"
        # "point me to the lessons", "direct us to lessons"
        or (toks[k - 1] == "to" and k > 2 and toks[k - 2] in {"me", "us"} and toks[k - 3] in REQUESTS)
    ):
        return True
    j = i + 1 + (toks[i + 1 : i + 2] == ("s",))  # "lesson(s)"
    while j < len(toks) and (toks[j] in ADVERBS or toks[j] == "already"):
        j += 1  # "lessons already deal with X"
    nxt = toks[j + 1 : j + 2]
    if toks[j : j + 1] and toks[j] in COVERING:
        if toks[j] == "in":
            return nxt in (("which",), ("where",))  # "the lessons in which X is covered"
        if toks[j] not in RELATIVE_WORDS or (nxt and nxt[0] in COVERING_VERBS):
            return True
    if toks[j : j + 1] and toks[j] in COVERING_VERBS and j not in masked:
        return True  # "which of the lessons deal with X"
    if toks[j : j + 1] and toks[j] in ON_TOPIC and _skip_forward(toks, j + 1) in masked:
        return True  # "lessons on X", not "units for a workshop"
    return not other_cues


_PARTITIVES: Final = frozenset(normalise("any one some each which all none either"))
# Nouns for the graph's concepts when a question word asks for them ("which concepts", "what topics").
_CONCEPT_NOUNS: Final = frozenset(normalise("concept topic idea"))
_TOPIC_WORDS: Final = _CONCEPT_NOUNS | frozenset(normalise("subject area skill module unit ones"))


def _same_sentence(sentence: Sequence[int], i: int) -> range:
    """Token positions before ``i`` in ``i``'s sentence (all of them when the text was not split
    into sentences)."""
    if len(sentence) <= i:
        return range(0, i)
    return range(next((k for k in range(i) if sentence[k] == sentence[i]), i), i)


def _bare_lesson_for(toks: Sequence[str], i: int) -> bool:
    """Is the "for" at ``i`` the preposition of a bare lesson noun ("lesson for X?", "which
    lessons for X"), i.e. a lesson on X? Not "lessons that prepare me for X", "prep lessons for X"."""
    k = i - 1 - (toks[i - 1 : i] == ("s",))
    if k < 0 or toks[k] not in LESSON:
        return False
    return all(t in WH or t in DETERMINERS or t in POLITE or t in {"any", "good"} for t in toks[:k])


def _negated(toks: Sequence[str], i: int) -> bool:
    """Is the word at ``i`` in the scope of a negator (one of the four words before it)? A
    contrast after the negator ends its scope: "no particular relation, just related" affirms
    "related" (but "not just X" negates X)."""
    lo = max(0, i - 4)
    for k in range(i - 1, lo - 1, -1):
        if toks[k] in NEGATORS:
            # a question word opens a new clause: "I know nothing. what's everything ..."
            return not any(t in _CONTRAST_AFTER_NEGATION for t in toks[k + 2 : i]) and not any(
                t in _QUESTION_WORDS for t in toks[k + 1 : i]
            )
    return False


_CONTRAST_AFTER_NEGATION: Final = frozenset({"just", "only", "but", "rather", "instead"})


def _affirmed(toks: Sequence[str], phrases: Iterable[Sequence[str]], masked: frozenset[int]) -> bool:
    """Does some phrase occur outside ``masked`` without a negator just before it?"""
    return any(not _negated(toks, i) for phrase in phrases for i, _ in _find_all(toks, phrase, masked))


def _unexplained_anywhere(toks: Sequence[str], masked: frozenset[int]) -> tuple[int, int] | None:
    """The first run of words outside ``masked`` that no vocabulary here explains."""
    for i in range(len(toks)):
        if i not in masked and (span := _unexplained(toks, i, masked)) is not None:
            return span
    return None


def _said_known(toks: Sequence[str], start: int) -> bool:
    """Is the name at ``start`` what the learner says they know ("I already know X")?"""
    before = toks[max(0, start - 3) : start]
    return any(w in KNOWN_VERBS for w in before) or any(_ends_with(toks, start, [p]) for p in KNOWN_FRAMES)


def _unknown_subject(
    toks: Sequence[str], masked: frozenset[int], verbs: Sequence[tuple[int, int, Cue]]
) -> tuple[int, int] | None:
    """The subject of "how does <words> lead to X" / "does <words> build on X" when it names no
    known concept while the verb's other side does: the words stand in a concept's place, so the
    question is about something the graph lacks. None when there is no such frame."""
    for s, e, _ in verbs:
        a = next((k for k in range(s - 1, -1, -1) if toks[k] in INVERTING_AUX or k in masked), None)
        if a is None or a in masked or not (a == 0 or toks[a - 1] in {"how", "why", "when", "where"}):
            continue
        if not any(k in masked for k in range(e, len(toks))) or any(t in WH for t in toks[a + 1 : s]):
            continue  # "could you let me know which concepts build on X": the wh-phrase is the subject
        if toks[s - 1] in DETERMINERS or any(t in REQUESTS for t in toks[a + 1 : s]):
            continue  # "could you tell me the underpinnings of X": a request, and a noun after "the"
        skip = DETERMINERS | ADVERBS | CLAUSE_SUBJECT | PRONOUNS | PURPOSE_VERBS
        if any(toks[k] not in skip for k in range(a + 1, s)):
            return _content_span(toks, a + 1, s, skip)
    return None


def _skip_back(toks: Sequence[str], i: int, masked: frozenset[int]) -> int:
    """Index just after the last meaningful token before ``i`` (determiners skipped)."""
    j = i
    while j > 0 and toks[j - 1] in DETERMINERS and j - 1 not in masked:
        j -= 1
    return j


@dataclass(frozen=True)
class _Role:
    family: str
    role: str
    transitive: bool
    cue: str
    strength: int  # 3 preposition, 2 noun, 1 verb
    reach: int = -1  # where the construction that gave the role ends (its pronouns are its own)

    @property
    def purpose(self) -> bool:
        """Read from a purpose ("to learn X", "I want X"), not from an ordering word."""
        return self.cue.startswith("to ") or self.cue == "want"


_BRIEF_PARTICLES: Final = ((), ("in",), ("up",))


def _briefing(toks: Sequence[str], masked: frozenset[int]) -> bool:
    """ "Fill me in on X", "brief me on X", "catch me up on X": a verb, "me", maybe a particle,
    "on" and a concept's name asks to be told about the concept, whatever the verb."""
    for i, t in enumerate(toks):
        if t != "me" or i in masked:
            continue
        for particle in _BRIEF_PARTICLES:
            k = i + 1 + len(particle)
            if (
                toks[i + 1 : k] == particle
                and toks[k : k + 1] == ("on",)
                and _skip_forward(toks, k + 1) in masked
            ):
                return True
    return False


# Each cue table's phrases by their first word, with their place in the table (the order ties
# keep): a question is scanned for the phrases its own words can start, not for every phrase.
_BY_FIRST_WORD: dict[int, dict[str, list[tuple[int, tuple[str, ...], Cue]]]] = {}


def _phrases_by_first_word(table: Sequence[Cue]) -> dict[str, list[tuple[int, tuple[str, ...], Cue]]]:
    index = _BY_FIRST_WORD.get(id(table))
    if index is None:
        index = {}
        order = 0
        for cue in table:
            for phrase in cue.words:
                index.setdefault(phrase[0], []).append((order, phrase, cue))
                order += 1
        _BY_FIRST_WORD[id(table)] = index
    return index


def _occurrences(
    toks: Sequence[str], masked: frozenset[int], table: Sequence[Cue]
) -> list[tuple[int, int, Cue]]:
    index = _phrases_by_first_word(table)
    hits: list[tuple[int, int, int, Cue]] = []
    for word in set(toks):
        for order, phrase, cue in index.get(word, ()):
            hits.extend((s, e, order, cue) for s, e in _find_all(toks, phrase, masked))
    # Longest first at the same start ("built on top of" over "built on"); then table order.
    hits.sort(key=lambda t: (t[0], -(t[1] - t[0]), t[2]))
    found = [(s, e, cue) for s, e, _, cue in hits]
    kept: list[tuple[int, int, Cue]] = []
    for s, e, cue in found:
        if not any(s < ke and ks < e for ks, ke, _ in kept):
            kept.append((s, e, cue))
    return kept


def _role_at(
    toks: Sequence[str],
    start: int,
    end: int,
    masked: frozenset[int],
    verbs: Sequence[tuple[int, int, Cue]],
    nouns: Sequence[tuple[int, int, Cue]],
    relational: bool,
) -> _Role | None:
    """The role of the concept named at ``[start, end)`` (module docstring), or None."""
    b = _skip_back(toks, start, masked)
    before = tuple(toks[max(0, b - 4) : b])
    # "before (they / I can) study X": the clause's subject and verb may sit between.
    k = b
    if (
        k > 1
        and toks[k - 1] in {"on", "into", "up", "in", "about", "to", "with"}
        and toks[k - 2] in PURPOSE_VERBS
    ):
        k -= 1  # "before taking on X", "before diving into X", "before I can begin with X"
    stops = [k]  # where the clause may begin: "prior to (I) starting X" ("to" is a subject word too)
    if k > 0 and toks[k - 1] in PURPOSE_VERBS:
        k -= 1
        stops.append(k)
        while k > 0 and toks[k - 1] in CLAUSE_SUBJECT:
            k -= 1
            stops.append(k)
    lead = tuple(toks[max(0, k - 4) : k])
    leads = [tuple(toks[max(0, s - 4) : s]) for s in stops if s < b]
    c = _clause_start(toks, b, masked)
    clause = tuple(toks[max(0, c - 4) : c]) if c < b else ()

    def marked(m: tuple[str, ...]) -> bool:
        return before[-len(m) :] == m or any(ld[-len(m) :] == m for ld in leads) or clause[-len(m) :] == m

    # Prepositions right before the concept.
    for m in BEFORE_MARKERS:
        if marked(m):
            if any(cue.family == PREREQ for _, _, cue in nouns):
                # "Before X, which concepts are prerequisites?": X's prerequisites.
                return _Role(PREREQ, DEP, False, " ".join(m), 3)
            return _Role(LEARN, DEP, True, " ".join(m), 3)
    for m in AFTER_MARKERS:
        if marked(m):
            return _Role(LEARN, FOUND, False, " ".join(m), 3)
    window = toks[max(0, b - 7) : b]  # "once my year 6 pupils finish X": the subject may be long
    triggers = [i for i, w in enumerate(window) if w in {"once", "since", "having", "if", "when"}]
    # an inverted conditional: "were I to complete X", "had we finished X" is "if I complete X"
    triggers += [
        i for i, w in enumerate(window[:-1]) if w in {"were", "had"} and window[i + 1] in {"i", "we", "you"}
    ]
    if tuple(window[-3:-1]) == ("now", "that"):
        triggers.append(len(window) - 3)
    recent = [i for i in triggers if i >= len(window) - 5]
    if (recent and any(w in KNOWN_VERBS or w in AFTER_VERBS for w in window[min(recent) :])) or (
        # "once my year 6 pupils finish X": farther back, only with the verb right before X
        triggers
        and window[-1] in KNOWN_VERBS | AFTER_VERBS
        and "to" not in window[-3:]  # not "want to learn X"
    ):
        return _Role(LEARN, FOUND, False, "once I know", 3)
    if (
        len(before) >= 2
        and before[-1] in PURPOSE_VERBS
        and (
            before[-2] == "to" or (before[-2] == "for" and not before[-1].endswith("ing"))  # "For learn X"
        )
    ):
        return _Role(LEARN, DEP, True, f"to {before[-1]}", 3)
    j = b
    if (
        j > 1
        and toks[j - 1] in {"to", "into", "on", "up", "till", "until", "upto"}
        and toks[j - 2] in PURPOSE_VERBS
    ):
        j -= 1  # "to get to X", "to move on to X"
    if j > 1 and toks[j - 1] in PURPOSE_VERBS and j - 1 not in masked:
        v = j - 1
        while v > 0 and toks[v - 1] in ADVERBS:
            v -= 1
        if v > 0 and toks[v - 1] == "to" and (v < 2 or toks[v - 2] not in BEFORE_WORDS):
            return _Role(LEARN, DEP, True, f"to {toks[j - 1]}", 3)
    if before[-1:] == ("want",) or before[-2:] == ("aim", "for"):
        return _Role(LEARN, DEP, True, "want", 3)
    if before[-1:] == ("by",):
        for s, e, cue in verbs:
            if e <= b - 1 and b - 1 - e <= 1 and toks[e - 1] in PASSIVE_FLIP:
                return _Role(
                    cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[s:e]) + " by", 3
                )
    # "<noun> of/for X", "<verb> of X" ("part of X").
    if before[-1:] in (("of",), ("for",), ("to",), ("in",), ("on",), ("into",), ("from",)) or (
        before and before[-1] in PLACE
    ):
        p = b - 1
        for s, e, cue in (*nouns, *verbs):
            if before[-1] == "from" and not (cue.noun and cue.family == LEARN and e == p):
                continue  # "downstream from X", "upstream from X": a direction, as "of X"
            gap_ok = all(t in NOUN_GAP or t in CONTAINER or t in LIGHT_VERBS for t in toks[e:p]) or (
                # "the components that live inside X": a relative clause of one verb of position
                before[-1] in PLACE
                and cue.noun
                and p - e in (2, 3)
                and toks[e] in RELATIVE_WORDS
                and not any(k in masked or toks[k] in WH for k in range(e, p))
            )
            near = e == p or (cue.noun and e < p and p - e <= 4 and gap_ok)
            if near or (e == p + 1 and cue.words and toks[e - 1] == before[-1]):
                if cue.noun:
                    return _Role(
                        cue.family, cue.right, cue.transitive, " ".join(toks[s:e]) + f" {before[-1]}", 2
                    )
                if toks[e - 1] in PASSIVE_FLIP and before[-1] != "by":
                    # "what is needed for X": X is what the thing is needed for.
                    role = DEP if cue.family != PART else WHOLE
                    return _Role(cue.family, role, cue.transitive, " ".join(toks[s:e]) + f" {before[-1]}", 2)
        if before[-1] == "for" and relational:
            return _for_role(toks, nouns)
    if k < b and lead[-1:] == ("for",) and relational:
        return _for_role(toks, nouns)  # "For learning X, what is the direct prerequisite topic?"
    # "direct prerequisites mlops": a keyword query puts the noun right before the name.
    for _, e, cue in nouns:
        if e == b and cue.noun and toks[e - 1 : e] != ("s",):
            return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[e - 1 : e]) + " X", 2)
    # "which prerequisites does X have".
    if end < len(toks) and toks[end] in {"have", "has", "had", "need", "require"}:
        for s, e, cue in nouns:
            if e <= start and all(t in {"doe", "do", "did", "the", "a", "an"} for t in toks[e:start]):
                return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[s:e]) + " does X have", 2)
    # "X has its own components", "X has several prerequisites": the noun is X's.
    if end < len(toks) and toks[end] in {"have", "has", "had"}:
        k = end + 1
        while k < len(toks) and k not in masked and (toks[k] in OWNERS or toks[k] in _HAVE_QUANTIFIERS):
            k += 1
        for s, e, cue in nouns:
            if s == k and cue.noun:
                return _Role(cue.family, cue.right, cue.transitive, "X has " + " ".join(toks[s:e]), 2)
    # "X's prerequisites", "X prerequisites".
    after_tok = end
    if after_tok < len(toks) and toks[after_tok] in ("s", ARROW):
        after_tok += 1  # "X's prerequisites", "X -> next?"
    if (
        after_tok < len(toks)
        and toks[after_tok] in CONTAINER
        and toks[after_tok + 1 : after_tok + 2] == ("of",)
    ):
        after_tok += 2  # "X's list of (immediate) prerequisites"
        while after_tok < len(toks) and toks[after_tok] in NOUN_GAP and after_tok not in masked:
            after_tok += 1
    while (
        after_tok < len(toks)
        and (toks[after_tok] in SCOPE_ADJECTIVES or toks[after_tok] in NOUN_MODIFIERS)
        and after_tok not in masked
    ):
        after_tok += 1  # "X direct dependents", "X - underlying foundations?"
    for s, e, cue in nouns:
        if s == after_tok and toks[e : e + 1] != ("of",):
            return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[s:e]), 2)
    # "which topics sit under X as prerequisites": X is a place preposition's object, so "as a
    # <noun>" describes the clause's (wh-) subject, and X takes the noun's other role.
    if before and before[-1] in PLACE and any(t in WH for t in toks[:start]):
        for s, e, cue in nouns:
            if s >= end and s - end <= 4 and "as" in toks[end:s] and all(g in NOUN_GAP for g in toks[end:s]):
                return _Role(
                    cue.family, cue.right, cue.transitive, f"{before[-1]} X as {' '.join(toks[s:e])}", 2
                )
    # "X is a prerequisite (for ...)", "X as a prerequisite" (not "topics under X as prerequisites").
    for s, e, cue in nouns if not (before and before[-1] in PLACE) else ():
        if s >= end and s - end <= 10:  # "X (written right there) as one of their own direct <noun>"
            gap = toks[end:s]
            if (
                "as" in gap
                and all(g in NOUN_GAP for g in gap[gap.index("as") :])
                and gap.index("as") <= 3
                and end < len(toks)
                and toks[end] not in NOUN_GAP
                and not any(g in WH or g in RELATIVE_WORDS or g in PERSONS for g in gap)
                and not any(k in masked for k in range(end, s))
            ):
                # "which area does X fold into as a component": whatever the verb, "as a <noun>"
                # says what X is. But "what does X take as its foundation", "which topics does X
                # have as prerequisites": X is the inverted subject and the question word the
                # object, so the noun is X's own, as in "the foundation of X" (not "... does X
                # fold into as a component", "belong inside, as one of its pieces": there the
                # question word is a preposition's object, and X a member of the asked whole).
                if (
                    toks[_skip_back(toks, start, masked) - 1 : start][:1] in _INVERTED
                    and "one" not in gap[gap.index("as") :]
                    and not any(g in PREPOSITIONS for g in gap[: gap.index("as")])
                ):
                    return _Role(
                        cue.family, cue.right, cue.transitive, f"X ... as its {' '.join(toks[s:e])}", 2
                    )
                return _Role(cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[s:e]), 2)
            if not all(g in NOUN_GAP or g in ADVERBS or g in HOLDERS or g in LIGHT_VERBS for g in gap):
                continue
            held = "as" not in gap and ("in" in gap or "among" in gap) and any(g in POSSESSIVE for g in gap)
            if held:
                # "have X somewhere in their prerequisite chain": X is among their prerequisites.
                return _Role(
                    cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[s:e]), 2, e
                )
            if "as" not in gap and any(g in HOLDERS for g in gap):
                continue
            copula_before = start > 0 and toks[_skip_back(toks, start, masked) - 1 : start][:1] in (
                ("is",),
                ("was",),
                ("are",),
            )
            if "as" in gap or any(g in COPULA for g in gap) or copula_before:
                return _Role(cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[s:e]), 2)
    # The nearest verb cue: left of it takes the left role, right of it the right role; the
    # passive ("X is required for what") swaps them.
    best: tuple[int, _Role] | None = None
    for s, e, cue in verbs:
        k = s
        while k > 0 and toks[k - 1] in VERB_LEADERS:
            k -= 1
        if k > 0 and toks[k - 1] in PERSONS:
            continue  # "I need the subtopics inside X": the learner's need, not X's relation
        if e <= start:
            dist = start - e
            passive = toks[e - 1] in PASSIVE_FLIP and any(t in COPULA for t in toks[max(0, s - 3) : s])
            if (
                not passive
                and toks[s] in _NEED_WORDS
                and not (k > 0 and (toks[k - 1] in _NEED_SUBJECTS or k - 1 in masked))
            ):
                # "zero background, need X by next month": a need with no subject is the
                # learner's; only "what / which topics / that / <a concept> need(s) X" is X's.
                continue
            role = cue.left if passive else cue.right
            between = toks[e:start]
            if _any(between, CAUSAL) or (between and between[0] in WH):
                # "which topics open up because of X": X is the cause, the verb's subject side;
                # "part of what? (X)": the question word is the object, X the subject.
                role = cue.right if passive else cue.left
        elif s >= end:
            if any(t in WH or t in RELATIVE or t in OTHER_SUBJECTS for t in toks[end:s]):
                # "X: what builds on it?", "how far X reaches: every concept that requires it":
                # X is the topic, not the verb's subject.
                continue
            dist = s - end
            passive = (
                toks[e - 1] in PASSIVE_FLIP and any(t in COPULA for t in toks[max(0, start - 3) : s])
            ) or _agent_after(toks, e, masked)
            role = cue.right if passive else cue.left
        else:
            continue
        candidate = _Role(cue.family, role, cue.transitive and role == DEP, " ".join(toks[s:e]), 1)
        if best is None or dist < best[0]:
            best = (dist, candidate)
    return best[1] if best is not None else None


# What may follow an agent's "by" ("built on by which topics", "required by later ones"), besides
# a question word, a determiner or a concept's name.
_AGENTS: Final = frozenset(
    normalise("any anything other another later more further subsequent advanced many several "
              "topic concept idea subject thing one")
)  # fmt: skip


def _agent_after(toks: Sequence[str], e: int, masked: frozenset[int]) -> bool:
    """Does a "by" phrase naming the doer follow the verb ending at ``e`` ("X built on by what",
    "X required by which topics")? Then X is the verb's object, "is" or not: the passive."""
    if toks[e : e + 1] != ("by",) or e + 1 >= len(toks):
        return False
    nxt = toks[e + 1]
    if nxt == "the":  # "by the later topics", not "by the way", "by the end of 2024"
        return toks[e + 2 : e + 3] in tuple((a,) for a in _AGENTS) or e + 2 in masked
    return e + 1 in masked or nxt in WH or nxt in DETERMINERS or nxt in _AGENTS


_HAVE_QUANTIFIERS: Final = frozenset(normalise("a an any some several many few its own various other"))
_ABOUT_TAIL: Final = frozenset(normalise("about all really exactly actually"))
_INVERTED: Final = tuple((w,) for w in INVERTING_AUX)  # "does X take ...": X is the subject

_PARTICLES: Final = frozenset({"on", "into", "up", "in", "about", "to", "with", "at"})
_NOT_A_VERB: Final = (
    WH | DETERMINERS | NEGATORS | COPULA | frozenset({"and", "or", "but", "than", "of", "for", "s"})
    | frozenset(w for m in (*BEFORE_MARKERS, *AFTER_MARKERS) for w in m)
)  # fmt: skip


def _clause_start(toks: Sequence[str], b: int, masked: frozenset[int]) -> int:
    """Where the clause whose object is the name before ``b`` starts: "before [I] <verb>
    [particle] [the lesson on] X" - any verb, with its subject, particle, and a lesson noun whose
    topic X is ("before I touch X", "before arriving to X", "before taking the lesson on X").
    ``b`` itself when there is no such clause."""
    j = b
    if j > 1 and toks[j - 1] in ON_TOPIC | {"covering"} and toks[j - 2] in LESSON:
        j -= 2
        while j > 0 and toks[j - 1] in DETERMINERS and j - 1 not in masked:
            j -= 1
    if j > 1 and toks[j - 1] in _PARTICLES and j - 1 not in masked:
        j -= 1
    if j < 2 or j - 1 in masked or not toks[j - 1].isalpha() or toks[j - 1] in _NOT_A_VERB:
        return b
    j -= 1
    while j > 0 and (toks[j - 1] in CLAUSE_SUBJECT or toks[j - 1] in ADVERBS) and j - 1 not in masked:
        j -= 1  # "before I finally touch X", "before eventually reaching X"
    return j


def _for_role(toks: Sequence[str], nouns: Sequence[tuple[int, int, Cue]]) -> _Role:
    """ "For X, what are the direct prerequisites?": a noun in the sentence names the relation,
    and X is what the asked concepts are for."""
    for _, e, cue in nouns:
        if cue.right == DEP:
            return _Role(cue.family, DEP, cue.transitive, f"for X ... {' '.join(toks[e - 1 : e])}", 2)
    return _Role(LEARN, DEP, True, "for", 1)


def _orphan_role(
    toks: Sequence[str],
    nouns: Sequence[tuple[int, int, Cue]],
    masked: frozenset[int],
    sentence: Sequence[int],
) -> _Role | None:
    """The role a relational noun gives the question's one concept when the noun stands in a
    sentence that names no concept ("I'm teaching X. What's the full chain of prerequisites?"):
    X takes the noun's object role, as in "<noun> of X". So does a noun after the name in its
    sentence, the name being the topic the rest comments on ("X: list the prerequisites", "For
    checklist item X: list the preceding prerequisites"): the caller asks only when the grammar
    gave X no role. Negated nouns say nothing; None when a noun comes before a name in its sentence."""
    if not nouns or len(sentence) != len(toks):
        return None
    first_name: dict[int, int] = {}
    for i in sorted(masked):
        first_name.setdefault(sentence[i], i)
    nouns = [n for n in nouns if not _negated(toks, n[0])]  # "nothing further upstream"
    if not nouns or any(sentence[s] in first_name and s < first_name[sentence[s]] for s, _, _ in nouns):
        return None
    s, e, cue = nouns[0]
    if sentence[s] in first_name and any(
        toks[k] in COPULA or toks[k] in POSSESSIVE or toks[k] in _TOPIC_WORDS or toks[k] in {"one", "of"}
        for k in range(first_name[sentence[s]], s)
        if k not in masked
    ):
        # "which topics would lose their requirements", "is X one of the sub-parts": the noun
        # belongs to something else in X's sentence, or says what X is ("X have which smaller
        # parts inside?" is X's)
        return None
    return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[s:e]), 1)


def _intent_of(role: _Role) -> tuple[str, tuple[str, ...]]:
    """The intent and asked relations of a subject's role."""
    if role.family == PART:
        return ("parts" if role.role == WHOLE else "wholes"), (PART_OF,)
    if role.family == BUILD:
        return ("builds_on" if role.role == DEP else "built_by"), (BUILDS_ON,)
    if role.family == PREREQ:
        if role.role == DEP:
            return ("needed_before", _LEARNING) if role.transitive else ("prerequisites", (PREREQUISITE,))
        return "dependents", ((PREREQUISITE,) if not role.transitive else _LEARNING)
    return ("needed_before" if role.role == DEP else "dependents"), _LEARNING


def _token_spans(question: str) -> list[tuple[int, int]]:
    """Where each token of ``question`` stands in it (characters), in token order."""
    return [m.span() for m in re.finditer(TOKEN_PATTERN, question.lower())]


def _surface(question: str, start: int, end: int) -> str:
    spans = _token_spans(question)
    if start >= len(spans) or end > len(spans) or start >= end:
        return ""
    return question[spans[start][0] : spans[end - 1][1]]


def _hops(toks: Sequence[str]) -> int:
    for i, tok in enumerate(toks):
        if tok == "hop" and i > 0:
            prev = toks[i - 1]
            if prev.isdigit():
                return max(1, min(int(prev), 6))
            if prev in NUMBERS:
                return NUMBERS[prev]
    return 1


def _suggestions(name: str, relations: Mapping[str, int] | None) -> tuple[str, ...]:
    def has(relation: str) -> bool:
        return relations is None or relations.get(relation, 0) > 0

    out = [f"What are the prerequisites of {name}?", f"What comes after {name}?"]
    if has(BUILDS_ON):
        out.append(f"What does {name} build on?")
    elif has(PART_OF):
        out.append(f"What is {name} part of?")
    else:
        out.append(f"What is {name}?")
    return tuple(out)


def _map_relations(
    asked: tuple[str, ...], counts: Mapping[str, int] | None
) -> tuple[tuple[str, ...], str, bool]:
    """Fit the asked relations to the relations in force (module docstring of the issue: on a
    prerequisite-only graph "builds on" is answered from prerequisite edges)."""
    if counts is None or not asked:
        return asked, "", False
    present = tuple(r for r in asked if counts.get(r, 0) > 0)
    if present:
        return present, "", False
    if set(asked) <= set(_LEARNING):
        learning = tuple(r for r in _LEARNING if counts.get(r, 0) > 0)
        if learning:
            missing = " or ".join(asked)
            used = " and ".join(learning)
            return learning, f"this graph has no {missing} edges, so {used} edges were used", False
    return asked, f"this graph has no {' or '.join(asked)} edges", True


def interpret(
    question: str,
    mentions: Sequence[Mention],
    *,
    now: datetime,
    relations: Mapping[str, int] | None = None,
    model: IntentModel | EllipsisType | None = ...,
) -> Reading:
    """Read ``question`` (module docstring). Total: any text gives a Reading, never an error.

    ``mentions``: the concepts it names (``mentions_in``); ``relations``: active edge counts per
    relation (None: unknown, no vocabulary fitting); ``now``: resolves "today", "two years ago";
    ``model``: the learnt second reading that checks this one (default: the committed
    ``intent_model.json``; None: no check)."""
    checker = default_model() if model is ... else model
    try:
        return _interpret(question, mentions, now, relations, checker)
    except Exception as exc:  # a reading must never take the question down
        return Reading(
            question if isinstance(question, str) else "",
            "unknown",
            problem=f"could not read the question ({type(exc).__name__})",
            read_by="none",
        )


# Sureness of a grammar reading the learnt second reading doubts: below SURE, so not answered.
DOUBTED: Final = 0.5


def _checked(reading: Reading, tokens: Sequence[str], model: IntentModel | None) -> Reading:
    """``reading``, made unsure when the learnt ``model`` (intent_model) finds another intent far
    more likely than any the reading answers; the reading says which."""
    # combined questions, and neighbourhoods wider than one hop, have no label in the corpus
    combined = bool(reading.combine) or reading.intent == "before_uses" or reading.hops > 1
    labels = compatible_labels(reading.intent, transitive=reading.transitive, combined=combined)
    named = len({cid for cid, _ in reading.names} | set(reading.ids()))
    found = second_opinion(model, tokens, labels, concepts=named) if model is not None else None
    if found is None:
        return reading
    label, margin = found
    if label == BAD_INPUT:
        doubt = "not a question about this graph"
    else:
        intent, transitive = LABEL_READING[label]
        doubt = replace(reading, intent=intent, transitive=transitive, relation_note="", time=None).describe()
    return replace(
        reading,
        sureness=min(reading.sureness, DOUBTED),
        doubt=f"{doubt} (log-odds {margin:.1f})",
    )


# Words that may stand right before a one-word name without being part of a longer name.
_MODIFIERS_KNOWN: Final = (
    VOCABULARY
    | PLACE
    | COVERING_VERBS
    | FIRST_PERSON
    | NEGATORS
    | OTHER_SUBJECTS
    | POLITE
    | REQUESTS
    | SCOPE_ADJECTIVES
    | NOUN_MODIFIERS
    | CONTAINER
    | HOLDERS
    | frozenset(
        normalise(
            "far how much many more most other new next same different basic advanced just like than am m re ve ll d "
            # conjunctions opening a clause ("If RAG were a room, ...")
            "if when whether because since once while unless although though"
        )
    )
    # verbs that take a topic as object: "want X", "love X", "revisit X"
    | frozenset(
        normalise(
            "want need like love hate enjoy review revisit practise practice try see pick choose finish "
            "start begin began teach taught explain tackle attempt grok"
        )
    )
)


# Verbs of making something ("write me a poem about X"): what they make is their object.
_MAKING: Final = frozenset(
    respelt(w) for w in normalise("write compose sing rap craft tell make create produce draft design")
)
# Verbs that make something only when their object is "a <thing>" ("tell me a joke", not "tell me
# what", "tell me quickly what", "tell me if").
_MAKING_WITH_ARTICLE: Final = frozenset(normalise("tell make create produce draft design"))
# Degree and quantity words that are not a made thing ("tell me a bit / something about X").
_AMOUNTS: Final = frozenset(normalise("bit little lot few something anything everything more much thing"))
# What a making verb may make and still ask about X ("a summary", "an overview", "explain").
_ABOUT_WORDS: Final = frozenset(phrase[0] for phrase in ABOUT if len(phrase) == 1)
# Where the object of a making verb ends ("a poem about X", "a song on X", "code for X").
_OBJECT_END: Final = frozenset(normalise("about on of for explaining describing in to that which with"))


def _made_thing(
    toks: Sequence[str], masked: frozenset[int], sentence: Sequence[int], asking: Collection[int]
) -> tuple[int, int] | None:
    """The object of a making verb in an asking sentence (``sentence``: each token's sentence;
    ``asking``: the asking ones) when it is something no vocabulary here explains ("write a poem
    about X", "compose a song on X"): the graph can say what X is, not make a poem of it. A
    summary, an explanation or an overview ("write me a summary of X") is a question about X;
    "before I write a feature" in a sentence that only sets the scene asks for nothing."""
    for i, t in enumerate(toks):
        if t not in _MAKING or i in masked or sentence[i] not in asking:
            continue
        lo = i + 1 + (toks[i + 1 : i + 2] in (("me",), ("us",)))  # "write me a poem"
        if t in _MAKING_WITH_ARTICLE and toks[lo : lo + 1] not in (("a",), ("an",)):
            continue
        j = lo
        while (
            j < len(toks)
            and j not in masked
            and sentence[j] == sentence[i]
            and toks[j] not in _OBJECT_END
            and j - lo < 4
        ):
            j += 1
        words = toks[lo:j]
        if (
            words
            and not _ABOUT_WORDS & set(words)
            and any(w not in VOCABULARY and w not in _AMOUNTS and w.isalpha() for w in words)
        ):
            return lo, j
    return None


def _foreign_modifier(token: str) -> bool:
    """Could ``token`` be part of a longer name ("support", "agentic"), not a verb ("linking X",
    "nailed X") or a word this module knows?"""
    plural_of_known = token.endswith("s") and token[:-1] in _MODIFIERS_KNOWN  # "ideas" (kept plural)
    return (
        token.isalpha()
        and token not in _MODIFIERS_KNOWN
        and not plural_of_known
        and not token.endswith(("ing", "ed"))
    )


# Verbs taking an object and an "as" complement ("treat X as the base", "regard X as a tool").
_AS_VERBS: Final = frozenset(
    normalise("treat regard consider view see picture imagine take count classify describe")
)


def _split_by_name(
    toks: Sequence[str], phrases: Iterable[Sequence[str]], masked: frozenset[int], context: frozenset[int]
) -> bool:
    """Does a phrase of two or more words occur with a name between its first word and the rest
    ("set X against", as "set against X")? The name's tokens are ``masked``."""
    for p in phrases:
        if len(p) < 2:
            continue
        for i, t in enumerate(toks):
            if t != p[0] or i in masked or i in context or i + 1 not in masked:
                continue
            j = i + 1
            while j in masked:
                j += 1
            if tuple(toks[j : j + len(p) - 1]) == tuple(p[1:]):
                return True
    return False


def _in_sentence_of(
    i: int,
    sentence: Sequence[int],
    verbs: Sequence[tuple[int, int, Cue]],
    nouns: Sequence[tuple[int, int, Cue]],
) -> tuple[list[tuple[int, int, Cue]], list[tuple[int, int, Cue]]]:
    """The verb and noun cues in the sentence of token ``i`` (all of them when sentences are not
    known)."""
    if not sentence or i >= len(sentence):
        return list(verbs), list(nouns)
    sid = sentence[i]
    return [v for v in verbs if sentence[v[0]] == sid], [n for n in nouns if sentence[n[0]] == sid]


def _verb_before_name(question: str, toks: Sequence[str], i: int, m: Mention) -> bool:
    """Is the unknown word at ``i``, before the one-word name ``m``, a verb taking the name as its
    object rather than part of a longer name? Yes after an infinitive's "to" ("I'd like to revise
    X"), and when the name is capitalised as a title ("Chunking") but the word is not ("heard
    someone mention Chunking"): a longer name is capitalised as one ("Agentic RAG")."""
    if i >= 2 and toks[i - 1] == "to" and toks[i - 2] in INFINITIVE_LEADS:
        return True
    if toks[i] in _AS_VERBS and toks[m.end : m.end + 1] == ("as",):
        return True  # a verb with an object and its "as" complement: "Treat X as the footing"
    if i >= 1 and toks[i - 1] in PERSONS - {"m"}:
        return True  # "I imagine X has ...": the word after a personal subject is its verb
    name, word = _surface(question, m.start, m.end), _surface(question, i, i + 1)
    return name[:1].isupper() and not name.isupper() and word.islower()


def _quoted(question: str, m: Mention) -> bool:
    """Is the name ``m`` written between quotation marks?"""
    spans = _token_spans(question)
    if m.end > len(spans):
        return False
    lo, hi = spans[m.start][0], spans[m.end - 1][1]
    return question[lo - 1 : lo] in _QUOTES and question[hi : hi + 1] in _QUOTES


_QUOTES: Final = frozenset("\"'“”‘’«»")


def _between(toks: Sequence[str], a: Mention, b: Mention) -> bool:
    """ "the steps between A and B": the two names are the two places of "between ... and"."""
    first, last = sorted((a, b), key=lambda m: m.start)
    return toks[first.start - 1 : first.start] == ("between",) and toks[first.end : last.start] == ("and",)


def _name_as_verb(question: str, toks: Sequence[str], m: Mention, sentence: Sequence[int]) -> bool:
    """A one-word name written in lower case right after a personal subject that an auxiliary
    inverts or that opens the clause ("what should we benchmark X against", "we benchmark X") is
    that subject's verb, not the concept."""
    i = m.start
    if (
        m.end - i != 1
        or i == 0
        or toks[i - 1] not in PERSONS - {"m"}
        or not _surface(question, i, i + 1).islower()
    ):
        return False
    clause_start = i == 1 or (len(sentence) == len(toks) and sentence[i - 2] != sentence[i - 1])
    return clause_start or toks[i - 2] in INVERTING_AUX


def _names_unknown(question: str, span: tuple[int, int], when: TimePoint | None) -> Reading:
    """The reading of a question that names ``span``, a longer name this graph does not have."""
    return Reading(
        question,
        "unknown",
        time=when,
        problem=f"the question names {_surface(question, *span)!r}, which is not a concept in this graph",
        read_by="none",
    )


def _capitalised_compound(
    question: str,
    spans: Sequence[tuple[int, int]],
    toks: Sequence[str],
    sentence: Sequence[int],
    mentions: Sequence[Mention],
    masked: frozenset[int],
) -> tuple[int, int] | None:
    """ "before Support vector machines" (where only "vectors" is known): a one-word name between a
    capital letter mid-sentence and a head noun no vocabulary here explains is the middle of a
    longer name, whatever the capitalised word means on its own. Not in a title-cased question
    ("What Must I Learn Before Vector Spaces"), where a capital says nothing."""
    if len(spans) != len(toks) or len(sentence) != len(toks):
        return None
    capital = [question[a].isupper() for a, _ in spans]
    words = [i for i, t in enumerate(toks) if i not in masked and t.isalpha()]
    if not words or sum(capital[i] for i in words) > len(words) / 3:
        return None
    for m in mentions:
        lo, hi = m.start - 1, m.end
        if (
            m.end - m.start == 1
            and lo > 0
            and hi < len(toks)
            and not {lo, hi} & masked
            and capital[lo]
            and toks[lo] not in PERSONS
            and sentence[lo - 1] == sentence[lo]  # not the sentence's first word
            and _foreign_modifier(toks[hi])
        ):
            return lo, hi + 1
    return None


def _interpret(
    question: str,
    mentions: Sequence[Mention],
    now: datetime,
    counts: Mapping[str, int] | None,
    model: IntentModel | None,
) -> Reading:
    if not isinstance(question, str) or not question.strip():
        return Reading("", "unknown", problem="the question is empty", read_by="none")
    if len(question) > MAX_READ_CHARS:
        return Reading(
            question[:80],
            "unknown",
            problem=f"the question is longer than {MAX_READ_CHARS} characters",
            read_by="none",
        )
    masked = frozenset(i for m in mentions for i in range(m.start, m.end))
    toks = you_respelt(
        tuple(t if i in masked else respelt(t) for i, t in enumerate(normalise(question))), masked
    )
    # what the learnt check reads (the words as written, as its training phrasings are): every
    # name (context ones too) one token
    model_toks = question_tokens(toks, [(m.start, m.end) for m in mentions])
    toks = _particle_before_pronoun(toks, masked)
    when = find_time(question, now, [(m.start, m.end) for m in mentions])
    if when is not None and _learners_own_time(toks, when):
        when = None  # "my study group finished X last week": when they studied, not the graph's time
    words = [t for i, t in enumerate(toks) if i not in masked and not t.isdigit()]
    english = sum(1 for w in words if w in VOCABULARY)
    cue_words = bool(_occurrences(toks, masked, VERBS) or _occurrences(toks, masked, NOUNS))
    if len(words) >= 4 and english < 0.25 * len(words) and not cue_words:
        return Reading(
            question, "unknown", time=when, problem="the question does not read as English", read_by="none"
        )
    if sum(1 for ch in question if ch.isalpha() and ord(ch) > 0x24F) >= 3:
        return Reading(
            question,
            "unknown",
            time=when,
            problem="the question mixes in text that is not English",
            read_by="none",
        )
    if not mentions:
        return Reading(question, "unknown", time=when, read_by="none")
    # Several sentences, some asking: the others are context ("backend dev here, pivoting into
    # ML. For X, what are the prerequisites?"). Their concepts are not asked about when the asking
    # sentences name one; their lesson and plan words do not make the question about lessons.
    sentence, asks = _sentences(question)
    naming = {sentence[m.start] for m in mentions} if len(sentence) == len(toks) else set()
    context: frozenset[int] = frozenset()
    asking_only: frozenset[int] = frozenset()  # when the asking sentences only point back: theirs
    clauses = len(asks) > 1 and all(
        sentence.count(sid) >= 3 for sid in range(len(asks))
    )  # not "Which! lessons!"
    asides = (
        _asides(toks, sentence, naming, masked) if clauses and len(sentence) == len(toks) else frozenset()
    )
    if asides and any(a for sid, a in enumerate(asks) if sid not in asides):
        # the aside is context: it neither asks of the graph nor names an unknown topic of the question
        asks = [a and sid not in asides for sid, a in enumerate(asks)]
        context = frozenset(i for i, sid in enumerate(sentence) if sid in asides)
    if clauses and any(asks) and not all(asks) and len(sentence) == len(toks):
        # Context is the learner speaking of themselves ("I'm planning a course", "dev here").
        personal = {sentence[i] for i, t in enumerate(toks) if t in FIRST_PERSON}
        context |= frozenset(i for i, sid in enumerate(sentence) if not asks[sid] and sid in personal)
        # So is a remark about the world, neither asking nor personal, naming no concept and not
        # pointing back at one ("Every idea stands on the shoulders of others. What's X based
        # on?"): its "every" scopes nothing asked, its "connected" asks for no relation.
        pointing = {sentence[i] for i, t in enumerate(toks) if t in PRONOUNS or t in DEMONSTRATIVES}
        named_in = {sentence[m.start] for m in mentions} | pointing | personal
        first_ask = asks.index(True)  # a remark comes before the question; after it, a clarification
        context |= frozenset(i for i, sid in enumerate(sentence) if sid < first_ask and sid not in named_in)
        inside = [m for m in mentions if m.start not in context]
        if inside:
            # Names stay names (masked); what the learner says they know stays known.
            named_here = {m.concept_id for m in inside}
            mentions = [
                m
                for m in mentions
                if m.start not in context or (_said_known(toks, m.start) and m.concept_id not in named_here)
            ]
        elif any(t in PRONOUNS or t in DEMONSTRATIVES for i, t in enumerate(toks) if i not in context):
            # "Before I start X, I'd like everything that comes before it. Can you list them?":
            # the asking sentence points back, so the request runs from the sentence naming X on.
            last = max(sentence[m.start] for m in mentions)
            asking_only = frozenset(i for i, sid in enumerate(sentence) if asks[sid] and sid > last)
            context = frozenset(i for i in context if sentence[i] < last)
        else:
            slot = _unknown_argument(toks, context, masked)
            if slot is not None:
                return Reading(
                    question,
                    "unknown",
                    time=when,
                    problem=f"the question asks about {_surface(question, *slot)!r}, which is not a concept in this graph",
                    read_by="none",
                )

    # "write me a poem about X" (in a sentence that asks): a request to make something
    # (no sentence marked as asking: the whole text is the request)
    asking = {sid for sid, a in enumerate(asks) if a or not any(asks)}
    if len(sentence) == len(toks) and (made := _made_thing(toks, masked, sentence, asking)) is not None:
        return Reading(
            question,
            "unknown",
            time=when,
            problem=f"the question asks for {_surface(question, *made)!r} to be made, which the graph cannot give",
            read_by="none",
        )

    # "Vector-borne diseases" (where only "vectors" is known): a name joined by a hyphen to a word
    # no vocabulary here explains is part of a longer name the graph lacks.
    spans = _token_spans(question)
    for m in mentions if len(spans) == len(toks) else ():
        joined = [
            k
            for k, gap in ((m.end, (spans[m.end - 1][1], spans[m.end][0]) if m.end < len(toks) else None),
                           (m.start - 1, (spans[m.start - 1][1], spans[m.start][0]) if m.start > 0 else None))
            if gap is not None and question[gap[0] : gap[1]] == "-"
        ]  # fmt: skip
        for k in joined:
            if k in masked or toks[k].isdigit():
                continue
            head = k + 1 if k >= m.end else -1  # "RAG-based search": the noun after the adjective
            compound = toks[k] in COMPOUND_SUFFIXES and 0 < head < len(toks) and head not in masked
            if toks[k] not in VOCABULARY or (compound and toks[head] not in VOCABULARY):
                lo, hi = min(k, m.start), max(k + 1 + compound, m.end)
                return _names_unknown(question, (lo, hi), when)
    # "support vector machines", "agentic RAG" (where only "vector", "RAG" are known): a one-word
    # name modified by words no vocabulary here explains names something bigger the graph lacks.
    for m in mentions:
        lo = m.start
        while (
            m.end - m.start == 1
            and lo > 0
            and lo - 1 not in masked
            and (len(sentence) != len(toks) or sentence[lo - 1] == sentence[m.start])  # "weekends. X"
            and _foreign_modifier(toks[lo - 1])
            and not _verb_before_name(question, toks, lo - 1, m)
            and not _quoted(question, m)  # 'worksheet entry "X"': the quotes delimit the name
        ):
            lo -= 1
        if lo < m.start:
            return _names_unknown(question, (lo, m.end), when)
    if (span := _capitalised_compound(question, spans, toks, sentence, mentions, masked)) is not None:
        return _names_unknown(question, span, when)

    # Time words are not relational words ("at the start of 2025", "back in 2018").
    # The learner's background before the question, naming no concept ("I'm an electrician with no
    # computing background. What is X?"), names no relation either. (Not a clarification after
    # it, "I mean what it builds on", nor a sentence that names the concept asked about.)
    first_ask = asks.index(True) if any(asks) else 0
    background = frozenset(i for i in context if sentence[i] < first_ask and sentence[i] not in naming)
    verbs = [
        v
        for v in _occurrences(toks, masked, VERBS) + _stranded(toks, masked) + _cannot_without(toks, masked)
        if v[0] not in background
    ]
    nouns = [n for n in _occurrences(toks, masked, NOUNS) if n[0] not in background]
    # "developed on the basis of X": a noun inside a longer prepositional cue is part of that cue
    nouns = [n for n in nouns if not any(vs < n[0] < ve and ve - vs > 2 for vs, ve, _ in verbs)]
    # "X - underlying foundations?", "the required prerequisites": a verb form right before a
    # relational noun modifies the noun; the noun names the relation.
    verbs = [(vs, ve, v) for vs, ve, v in verbs if not any(ns == ve and n.noun for ns, _, n in nouns)]
    # "including the prerequisites of ...": a part-whole verb whose object is another relation's
    # noun only introduces it.
    verbs = [
        (vs, ve, v)
        for vs, ve, v in verbs
        if not (
            v.family == PART and any(ns == _skip_forward(toks, ve) and n.family != PART for ns, _, n in nouns)
        )
    ]
    # "Teaching X next week; I like to show the class where an idea comes from. Which concepts is
    # it built upon?": a lesson noun outside the asking sentences does not make the question
    # about lessons when those sentences name a relation of their own.
    asking_cues = len(sentence) == len(toks) and any(asks) and not all(asks)
    asking_cues = asking_cues and any(asks[sentence[s0]] for s0, _, _ in (*verbs, *nouns))
    # "Before I open the chapter on X, which concepts must I have finished?": the question word asks
    # for concepts; the lesson noun is the learner's act, unless a question word asks for it
    concepts_asked = any(
        t in _CONCEPT_NOUNS and i > 0 and toks[i - 1] in {"which", "what"} and i not in masked
        for i, t in enumerate(toks)
    )
    lesson = any(
        t in LESSON
        and _asked_noun(toks, i, bool(verbs or nouns), masked)
        and not (concepts_asked and toks[i - 1 : i] not in (("which",), ("what",)))
        for i, t in enumerate(toks)
        if i not in masked and i not in context and (not asking_cues or asks[sentence[i]])
    )
    plan = any(
        (len(phrase) > 1 or _asked_noun(toks, i, bool(verbs or nouns), masked))
        and not (phrase == ("learning", "order") and toks[i - 1 : i] == ("the",))
        and not _negated(toks, i)  # "I mean its foundations, not a full study plan"
        for phrase in PLAN
        for i, _ in _find_all(toks, phrase, masked | context)
    )  # "every concept downstream of X, for the syllabus" is not a plan question; "after X in the
    # learning order" names the relation, it asks for no plan
    relational = bool(verbs or nouns or lesson or plan)
    briefing = _briefing(toks, masked)
    # A statement ("RAG is great") is not a question; a bare keyword query ("RAG prerequisites")
    # or an imperative with a relational word is.
    markers = _any(
        toks, (*BEFORE_MARKERS, *AFTER_MARKERS, *PATH, *CONTRAST, *RELATED_WORDS, *NEIGHBOUR), masked
    )
    if (
        (
            words
            and not relational
            and not markers
            and not briefing
            and toks[0] not in AUX_START
            and not any(w in WH for w in words)
            and any(w in VERB_LIKE for w in words)
            # "A student of mine wants X. Can you list everything first?": a later sentence asks
            and not (len(asks) > 1 and any(asks[1:]))
        )
        or (
            # "I finished my RAG course yesterday.": a full stop, nothing asked, no relation named.
            # ("Lessons that teach X." is a query as a noun phrase; "Fill me in on X." asks.)
            question.rstrip().endswith(".")
            and not any(asks)
            and not (verbs or nouns or plan or markers or briefing)
            and not (lesson and set(toks[_skip_forward(toks, 0) :][:1]) & LESSON)  # "Lessons on X."
            and not _any(toks, ABOUT, masked)  # "I would like a brief overview of X." asks
            and not any(w in WH for w in words)
        )
    ):
        return Reading(
            question, "unknown", time=when, problem="this does not read as a question", read_by="none"
        )

    # Each mention: its role, or known / excluded / an example.
    first: dict[str, Mention] = {}
    for m in sorted(mentions, key=lambda m: m.start):
        first.setdefault(m.concept_id, m)  # a later alias ("X like <alias of X>") does not replace it
    ordered = sorted(first.values(), key=lambda m: m.start)
    words_of = {m.concept_id: _surface(question, m.start, m.end) or m.name or m.concept_id for m in ordered}
    tags: dict[str, str] = {}
    roles: dict[str, _Role | None] = {}
    prev: Mention | None = None
    for m in ordered:
        b = _skip_back(toks, m.start, masked)
        window = toks[max(0, b - 6) : b]
        if prev is not None:
            window = toks[max(prev.end, b - 6) : b]
        gap = toks[prev.end : m.start] if prev is not None else ()
        coordinated = (
            prev is not None
            and gap
            and all(t in {"and", "or", "as", "well", "plus", "both", "the", "a", "an"} for t in gap)
        )
        opens = m.start == 0 or (len(sentence) == len(toks) and sentence[m.start - 1] != sentence[m.start])
        if (
            _ends_with(toks, b, APPOSITIVE)
            or (
                # "I'm planning to study X": a concept's name used as a verb.
                toks[max(0, m.start - 1) : m.start] in (("m",), ("am",), ("re",))
                and (
                    toks[m.end : m.end + 1] == ("to",)
                    or (m.end - m.start == 1 and toks[m.start].endswith("ing"))
                )
            )  # "I'm planning the next year": a progressive verb, not the concept "planning"
            or (
                # "planning a 6 month self-study ...": a sentence opening with a gerund and its object
                opens
                and m.end - m.start == 1
                and toks[m.start].endswith("ing")
                and toks[m.end : m.end + 1] in (("a",), ("an",), ("the",), ("my",), ("our",))
            )
            or _name_as_verb(question, toks, m, sentence)  # "what should we benchmark X against"
        ):
            tags[m.concept_id] = "example"
        elif any(_ends_with(window, len(window) - k, EXCEPT) for k in range(min(3, len(window)) + 1)) or _any(
            window, EXCEPT
        ):
            tags[m.concept_id] = "excluded"
        elif (
            any(w in KNOWN_VERBS for w in window[-3:])
            and not (len(window) >= 2 and window[-2] == "to")
            and not any(
                w in {"once", "since", "having", "after", "before", "what", "which", "to", "if", "when"}
                for w in window[-4:]
            )
            # "I've done X", "an applicant who has finished X": what the learner knows
            and any(w in {"i", "already", "ve", "have", "has", "had", "we", "m", "am"} for w in window)
        ) or _ends_with(window, len(window), [normalise("familiar with"), normalise("comfortable with")]):
            tags[m.concept_id] = "known"
        elif coordinated and prev is not None:
            tags[m.concept_id] = tags.get(prev.concept_id, "")
            roles[m.concept_id] = roles.get(prev.concept_id)
            prev = m
            continue
        roles[m.concept_id] = _role_at(toks, m.start, m.end, masked, verbs, nouns, relational)
        prev = m
    # Pronouns stand for the first subject: "once I know RAG, what builds on it?".
    subjects = [m for m in ordered if tags.get(m.concept_id, "") == ""]
    if not subjects:
        subjects = [m for m in ordered if tags.get(m.concept_id) != "example"]
        if not subjects:  # only an example or a name used as a verb: nothing is asked about
            return Reading(question, "unknown", time=when, read_by="none")
        for m in subjects:
            tags[m.concept_id] = ""
    # The subject is the first concept a cue governs ("I'm planning to study X": not "planning").
    main = next((m for m in subjects if roles.get(m.concept_id) is not None), subjects[0])
    subjects = [main, *(m for m in subjects if m is not main)]
    main_role = roles.get(main.concept_id)
    reach = main_role.reach if main_role is not None else -1
    pronoun_roles = [
        r
        for i, t in enumerate(toks)
        # "that"/"this" after "before"/"after" or as an inverted subject ("what does that unlock")
        if (
            t in PRONOUNS
            or (t in {"that", "this"} and i > 0 and toks[i - 1] in {"before", "after", *INVERTING_AUX})
        )
        # "concepts that contain X as one of their parts", "X among their prerequisites": "their"
        # is the asked concepts' (but "Loss functions: what are their prerequisites?" is X's)
        and not (t in ("their", "its") and {"as", "among"} & set(toks[max(0, i - 3) : i]))
        and i not in masked
        and i > main.start
        and toks[i - 1] != "as"
        and i >= reach
        and not _negated(toks, i)  # "(not the stuff before it)"
        # "if a student masters X, what does that open up for them?": the student's benefit
        and not (t in ("them", "their") and toks[i - 1] in ("for", "to") and PEOPLE & set(toks[:i]))
        # "topics that need X right before them": a plural pronoun after a topic noun is the topics
        and not (
            t in ("them", "their")
            and any(toks[k] in _TOPIC_WORDS and k not in masked for k in _same_sentence(sentence, i))
        )
        # a pronoun takes its role from its own sentence's words: in "What does X unlock? I want
        # all of it." the first sentence's verb says nothing of "it"
        for r in [
            _role_at(
                toks,
                i,
                i + 1,
                masked,
                *_in_sentence_of(i, sentence if len(sentence) == len(toks) else (), verbs, nouns),
                relational,
            )
        ]
        if r is not None
    ]
    if lesson:
        # "which course units cover it": a lesson covering X names no part-whole link of X's
        pronoun_roles = [r for r in pronoun_roles if r.cue.split()[0] not in COVERING_VERBS]
    repeats = [
        _role_at(toks, m.start, m.end, masked, verbs, nouns, relational)
        for m in mentions
        if m.concept_id == main.concept_id and m.start != main.start
    ]
    main_role = roles.get(main.concept_id)
    if (
        main_role is not None
        and main_role.purpose
        and pronoun_roles
        and len(sentence) == len(toks)
        and not asks[sentence[main.start]]
    ):
        # "I want to study X chunk by chunk. What are its subtopics?": the purpose is the
        # learner's background; the asking sentence's word for "it" says what is asked
        main_role = None
        roles.pop(main.concept_id, None)
    agreeing = [r for r in [main_role, *repeats, *pronoun_roles] if r is not None]
    conflicts = {r.role for r in agreeing}
    if len(conflicts) == 1:
        # Same direction from several cues: the most specific family wins ("once I know RAG,
        # what builds on it?" asks about builds_on, not learning order in general).
        specific = [r for r in agreeing if r.family != LEARN]
        roles[main.concept_id] = max(specific or agreeing, key=lambda r: r.strength)
    direct, transitive_word = _scope(toks, masked | context, [n for n in nouns if n[0] not in context])
    known = tuple(
        Subject(m.concept_id, "known", words_of[m.concept_id])
        for m in ordered
        if tags.get(m.concept_id) == "known"
    )
    excluded = [m for m in ordered if tags.get(m.concept_id) == "excluded"]
    names = tuple((m.concept_id, m.name) for m in ordered)

    def build(
        intent: str,
        subs: list[Subject],
        *,
        transitive: bool = False,
        combine: str = "",
        cue: str = "",
        sureness: float = 0.95,
        read_by: str = "grammar",
        asked: tuple[str, ...] | None = None,
        alternatives: tuple[str, ...] = (),
    ) -> Reading:
        asked_rel = asked if asked is not None else _INTENT_RELATIONS.get(intent, ())
        if excluded and not combine and intent != "path":
            # "connected to A but not to B", "what do I need before A, except B".
            combine, subs = (
                "except",
                [*subs, Subject(excluded[0].concept_id, "excluded", words_of[excluded[0].concept_id])],
            )
        rels, note, missing = _map_relations(asked_rel, counts)
        asked_ids = {s.concept_id for s in subs}
        extra = [k for k in known if k.concept_id not in asked_ids]
        if excluded and combine != "except":
            extra += [Subject(m.concept_id, "excluded", words_of[m.concept_id]) for m in excluded]
        reading = Reading(
            question=question,
            intent=intent,
            subjects=(*subs, *extra),
            direction=_DIRECTION.get(intent, ""),
            transitive=transitive,
            asked_relations=asked_rel,
            relations=rels,
            relation_note=note,
            relations_missing=missing,
            combine=combine,
            hops=_hops(toks) if intent == "neighbours" else 1,
            exact=intent == "neighbours" and EXACT[0] in toks,
            time=when,
            sureness=sureness,
            read_by=read_by,
            cue=cue,
            alternatives=alternatives,
            names=names,
        )
        if reading.sure:
            reading = _checked(reading, model_toks, model)
        if not reading.sure:
            reading = replace(reading, suggestions=_suggestions(words_of[main.concept_id], counts))
        return reading

    def sub(m: Mention, role: str = "subject") -> Subject:
        return Subject(m.concept_id, role, words_of[m.concept_id])

    def trans(role: _Role | None, default: bool) -> bool:
        if transitive_word:
            return True
        if direct:
            return False
        return role.transitive if role is not None else default

    others = [m for m in subjects[1:]]
    second = others[0] if others else None
    unknown = _unknown_slot(toks, masked, sentence) or _unknown_subject(toks, masked, verbs)
    # A plan or a path that leaves out what the learner knows needs to know what that is; other
    # questions ("I studied philosophy; what does X rest on?") are answered the same either way.
    ordering = _any(toks, (*PATH, *PLAN, *PATH_END, *GOAL_REACH, *BEFORE_MARKERS), masked) or bool(
        _NEED_WORDS.intersection(toks)
    )
    if unknown is None and ordering and (span := _unknown_known(toks, masked)) is not None:
        unknown = span
    if unknown is None and second is None and ARROW in toks:
        unknown = _unexplained_anywhere(toks, masked)  # "<words the graph lacks> -> X"
    if second is None and unknown is not None:
        unknown_words = _surface(question, *unknown)
        # "the path from <something the graph lacks> to X": answering about X alone would answer
        # another question, so the reading is not an answer.
        return replace(
            build(
                "path" if _any(toks, PATH, masked) else "about",
                [sub(main)],
                sureness=0.0,
                read_by="fallback",
            ),
            problem=f"the question also names {unknown_words!r}, which is not a concept in this graph",
        )
    # "I know A; my goal is B, what's in between?", "comfortable with A, what's the route to get
    # to B?": where the learner stands is where the path starts. A plan asked for by name ("a
    # study plan for B, I already know A") leaves A out instead (below).
    goal_role = roles.get(main.concept_id)
    goal = (goal_role is not None and goal_role.purpose) or _ends_with(
        toks, _skip_back(toks, main.start, masked), (*PATH_END, *GOAL_REACH)
    )
    # "the steps between them": a path unless the words ask how the two differ or relate
    between_pair = _any(toks, BETWEEN_PROFORMS, masked) and not _any(
        toks, (*CONTRAST, *RELATED_WORDS, *NEIGHBOUR), masked
    )
    if (
        second is None
        and len(known) == 1
        and (goal or between_pair or _affirmed(toks, PATH, masked | context))
        and not _affirmed(toks, PLAN_NAMED, masked | context)
    ):
        return build(
            "path", [replace(known[0], role="subject"), sub(main, "target")], transitive=True, cue="path"
        )
    # A path: "from A to B", "how does A lead to B", "what connects A to B".
    ends_marked = any(
        _ends_with(toks, _skip_back(toks, m.start, masked), [p])
        for m in subjects
        for p in (*PATH_START, *PATH_END)
    )
    if second is not None and (
        _any(toks, PATH, masked)
        or ("from" in toks and "to" in toks)
        or (
            (_between(toks, main, second) or between_pair)  # not "the difference / the link between A and B"
            and not _any(toks, (*CONTRAST, *RELATED_WORDS, *NEIGHBOUR), masked)
        )
        or ends_marked
        or ARROW in toks
    ):
        a, b2 = main, second
        for m in subjects:
            bb = _skip_back(toks, m.start, masked)
            other = next(x for x in subjects if x is not m)
            if _ends_with(toks, bb, PATH_START) or toks[m.end : m.end + 1] == (ARROW,):
                a, b2 = m, other
            elif _ends_with(toks, bb, PATH_END):
                a, b2 = other, m
        return build("path", [sub(a), sub(b2, "target")], transitive=True, cue="path")
    # context sentences (the learner's background, remarks) name no relation of the question
    quiet = masked | context
    if _contrasted(toks, quiet, masked) or _split_by_name(toks, CONTRAST, masked, context):
        subs = [sub(main)] + ([sub(second, "other")] if second is not None else [])
        return build("contrasts", subs, cue="contrast")
    named = roles.get(main.concept_id)
    # "before I touch X": a person's act, not a link between concepts
    acts = frozenset(i for i in range(1, len(toks)) if toks[i - 1] in PERSONS and (toks[i],) in NEIGHBOUR)
    one_hop = _hops(toks) == 1 and not _any(toks, [p for p in NEIGHBOUR if p != ("hop",)], quiet | acts)
    # "topics linked to X? no particular type, just related": the word that names one of the
    # graph's relations outranks the generic "linked".
    related_named = _affirmed(toks, RELATED_WORDS, quiet) and not verbs and (counts or {}).get(RELATED, 0) > 0
    # "which links come straight after X": the noun after the question word names the items asked
    # for; the verb names the relation
    link_items = frozenset(
        i
        for p in NEIGHBOUR
        for i, _ in _find_all(toks, p, quiet | acts)
        if i > 0 and toks[i - 1] in {"which", "what"} and named is not None and named.strength >= 2
    )
    # "Lessons on X? Links pls.": with lessons asked for, the noun "links" with no preposition
    # after it asks for the lessons' links, not for what X links to
    lesson_links = frozenset(
        i
        for i, t in enumerate(toks)
        if lesson and t == "link" and toks[i + 1 : i + 2] not in (("to",), ("with",), ("between",), ("from",))
    )
    if (
        _any(toks, NEIGHBOUR, quiet | acts | link_items | lesson_links)
        and not related_named
        and not (
            # "which modules have X as an immediate prereq (one hop forward only)", "immediate
            # downstream of X, one hop": the relation is named, "one hop" says how far along it.
            one_hop
            and (
                (named is not None and (named.strength >= 2 or named.cue != "for"))
                # "For X: list only the immediately preceding prerequisites. One hop back."
                or ((named is None or named.cue == "for") and any(c.noun for _, _, c in nouns))
            )
        )
    ):
        if second is None and not excluded and "hop" not in toks and (counts or {}).get(RELATED, 0) > 0:
            # "anything connected to X?", "topics linked to X": a link of no named kind and no
            # distance is the graph's own association relation when it has one (every blind
            # writer who asked this way meant `related`, not every relation). A distance ("within
            # 2 hops") or a second concept ("to both A and B", "to A but not to B") still reads
            # the structure.
            return build("related", [sub(main)], cue="connected")
        subs = [sub(main)] + ([sub(second, "other")] if second is not None else [])
        return build("neighbours", subs, combine="both" if second is not None else "", cue="connected")
    if _any(toks, RELATED_WORDS, quiet) and not verbs:
        subs = [sub(main)] + ([sub(second, "other")] if second is not None else [])
        return build("related", subs, combine="both" if second is not None else "", cue="related")
    role = roles.get(main.concept_id)
    if (
        role is not None
        and asking_only
        and role.purpose
        and not any(s in asking_only for s, _, _ in (*verbs, *nouns))
        and not pronoun_roles  # "... What comes right before it?" reads the asking sentence
    ):
        # "I want to study X piece by piece. What smaller topics is it divided into?": the
        # question is the second sentence, and nothing in it was read; "to study X" is background.
        role = None
    if len(conflicts) > 1:
        readings = sorted({_intent_of(r)[0] for r in agreeing})
        return build(
            _intent_of(role)[0] if role else "about",
            [sub(main)],
            sureness=0.4,
            read_by="conflict",
            alternatives=tuple(readings),
        )
    if second is not None and (lesson or plan):
        # "start at A and finish at B, step by step" read as a plan for A would drop B.
        return build(
            "study_plan" if plan else "lessons_covering",
            [sub(main)],
            sureness=0.4,
            read_by="conflict",
            alternatives=("path", "study_plan" if plan else "lessons_covering"),
        )
    if lesson:
        # "which lesson should I read to learn X" names what the lesson is for: X itself. Only an
        # ordering word ("before X", "X's prerequisites", "prepare for X") asks for earlier lessons.
        purpose = role is not None and role.purpose
        # "my daughter wants to do X: what lessons must she finish before that?": an ordering
        # word elsewhere (a pronoun's role) outranks the purpose.
        ordering_word = any(r.role == DEP and not r.purpose for r in pronoun_roles)
        purpose = purpose and not ordering_word
        before = (
            role is not None
            and role.role == DEP
            and role.family in (LEARN, PREREQ)
            and not purpose
            and not (role.cue == "for" and _bare_lesson_for(toks, _skip_back(toks, main.start, masked) - 1))
        )
        if (role is None or purpose) and _affirmed(toks, FIRST_WORDS, masked | context):
            # "X: lessons to do first?", "I'm about to start X: which lessons first, to be ready?"
            return build("lessons_before", [sub(main)], transitive=not direct, cue="first")
        if before:
            # Lessons to take before X prepare for all X needs ("lessons that teach the
            # prerequisites of X"), unless the question says "direct".
            return build(
                "lessons_before", [sub(main)], transitive=not direct, cue=role.cue if role else "lesson"
            )
        if (
            role is not None
            and not purpose
            and role.strength >= 2
            and role.family != PART
            and role.role == FOUND
        ):
            # "which modules have X as a prerequisite": what comes after X, asked of lessons (or
            # of topics called modules); lessons covering X would answer another question.
            return build(
                "lessons_covering",
                [sub(main)],
                sureness=0.4,
                read_by="conflict",
                alternatives=("lessons_covering", _intent_of(role)[0]),
            )
        return build("lessons_covering", [sub(main)], cue="lesson")
    if plan and (role is None or role.role == DEP):  # a plan reaches X; "after X" is no plan
        target = main
        return build("study_plan", [sub(target, "target")], transitive=True, cue="plan")
    if (role is None or role.purpose) and _affirmed(toks, FIRST_WORDS, masked | context):
        # "I'm aiming for X. What should I study beforehand?": an ordering adverb points back at X
        # (lesson and plan questions were read above).
        return build("needed_before", [sub(main)], transitive=not direct, cue="beforehand")
    if (
        role is None
        and _affirmed(toks, PATH, masked | context)
        and _unexplained_anywhere(toks, masked) is None
    ):
        # "the learning path that ends at X" with one concept: what leads up to X (not "not the
        # whole chain", not "learning path <words the graph lacks> -> X").
        return build("needed_before", [sub(main)], transitive=True, cue="path")
    if (
        role is None
        and second is None
        and (orphan := _orphan_role(toks, [n for n in nouns if n[0] not in context], masked, sentence))
        is not None
    ):
        # "I'm building a module on X. What's the full chain of prerequisites?": a relational
        # noun attached to no name is said of the one concept the question is about.
        role = orphan
    if role is None:
        # "RAG?", "what's RAG", "um so what exactly is RAG", "RAG??? what even is that"
        bare = all(
            t in BARE
            or t in POLITE
            or t in ADVERBS
            or t in EXACT
            or (t in DEMONSTRATIVES | {"it"} and i > main.end)
            for i, t in enumerate(toks)
            # "So what exactly is X? heard it a lot at work": a remark after the question (a
            # sentence that does not ask) is not part of it
            if i not in masked
            and not (
                len(sentence) == len(toks) and sentence[i] > sentence[main.start] and not asks[sentence[i]]
            )
        )
        b0 = _skip_back(toks, main.start, masked)
        # "what's X" ("in simple words"), not "what's the opposite of X" or "whats X based off of"
        rest = [
            t
            for k, t in enumerate(toks[main.end :], main.end)
            if t not in POLITE and (len(sentence) != len(toks) or sentence[k] == sentence[main.start])
        ]  # "what exactly is X? heard it a lot at work": the next sentence is a remark
        copula_about = any(_ends_with(toks, b0, [p]) for p in ABOUT_COPULAS) and (
            not rest or _any(rest, [p for p in ABOUT if p not in ABOUT_COPULAS])
        )
        # "RAG?? never heard of it, whats that": the copula's subject points back at the name
        pointed_about = any(
            j < len(toks)
            and j > main.end
            and toks[j] in DEMONSTRATIVES | {"it"}
            and all(t in POLITE or t in ADVERBS or t in EXACT for t in toks[j + 1 :])
            for p in ABOUT_COPULAS
            for _, j in _find_all(toks, p, masked)
        )
        # "could you tell me what X is", "I wonder what X really is": an embedded "what is X"
        after = [t for t in toks[main.end :] if t not in POLITE and t not in ADVERBS and t not in EXACT]
        embedded_about = (
            toks[b0 - 1 : b0] == ("what",)
            and after[:1] in (["is"], ["are"], ["involve"])
            and all(t in _ABOUT_TAIL for t in after[1:])
        )
        about = (
            bare
            or copula_about
            or embedded_about
            or pointed_about
            or briefing
            or _any(toks, [p for p in ABOUT if p not in ABOUT_COPULAS], masked)
        )
        # "For a label I need a plain-language explanation of X": the learner's need is no relation
        own_needs = all(
            toks[vs] in _NEED_WORDS and any(t in PERSONS for t in toks[max(0, vs - 3) : vs])
            for vs, _, _ in verbs
        )
        if about and (not relational or (own_needs and verbs and not (nouns or lesson or plan))):
            return build("about", [sub(main)], cue="about")
        return build(
            "about",
            [sub(main)],
            sureness=0.3,
            read_by="fallback",
            alternatives=("prerequisites", "dependents", "about"),
        )
    intent, asked = _intent_of(role)
    is_transitive = trans(role, False)
    if intent == "prerequisites" and is_transitive:
        intent, asked = "needed_before", _LEARNING
    if intent == "dependents" and is_transitive:
        asked = _LEARNING  # everything after X: the mirror of everything needed before X
    # Two subjects.
    if excluded:
        return build(intent, [sub(main)], transitive=is_transitive, cue=role.cue, asked=asked)
    if second is not None:
        r2 = roles.get(second.concept_id)
        both = _any(toks, BOTH, masked)
        if r2 is None:
            return build(
                intent, [sub(main)], transitive=is_transitive, cue=role.cue, asked=asked, sureness=0.85
            )
        intent2, asked2 = _intent_of(r2)
        if (
            (intent2, asked2) == (intent, asked)
            or (intent2 == "prerequisites" and intent == "needed_before")
            or (intent == "prerequisites" and intent2 == "needed_before")
        ):
            return build(intent, [sub(main), sub(second, "other")], transitive=is_transitive,
                         combine="both" if both else "either", cue=role.cue, asked=asked)  # fmt: skip
        learn_first = {intent, intent2} & {"needed_before", "prerequisites"}
        if learn_first and {intent, intent2} & {"builds_on"}:
            x, y = (main, second) if intent in learn_first else (second, main)
            return build("before_uses", [sub(x), sub(y, "other")], transitive=True, cue=role.cue)
        return build(intent, [sub(main)], transitive=is_transitive, cue=role.cue, asked=asked, sureness=0.4,
                     read_by="conflict", alternatives=(intent, intent2))  # fmt: skip
    return build(intent, [sub(main)], transitive=is_transitive, cue=role.cue, asked=asked,
                 sureness=0.95 if role.strength >= 2 else 0.9)  # fmt: skip
