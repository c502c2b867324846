"""The grammar's building blocks: token helpers, sentence and context analysis, cue occurrences,
scope, and the role a relational cue gives a concept named next to it.

Pure functions over normalised tokens (``names.normalise``); the words they read are data in
``lexicon``. ``analysis`` runs them once per question; ``frames`` read their results.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from control_plane.understanding.lexicon import (
    ABOUT,
    ADVERBS,
    AFTER_MARKERS,
    AFTER_VERBS,
    ARGUMENT_PREPOSITIONS,
    AUX_START,
    BEFORE_MARKERS,
    BEFORE_WORDS,
    BUILD,
    CAUSAL,
    CLAUSE_SUBJECT,
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
    EXPLAINED,
    FIRST_PERSON,
    FOUND,
    FRONTED,
    GOALS,
    HOLDERS,
    INFINITIVE_LEADS,
    INVERTING_AUX,
    KNOWN_BEFORE,
    KNOWN_FRAMES,
    KNOWN_VERBS,
    LEARN,
    LESSON,
    LIGHT_VERBS,
    MODALS,
    NEEDED_FOR,
    NEGATORS,
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
    PATH_END,
    PATH_START,
    PEOPLE,
    PERSONS,
    PLACE,
    PLACE_PROFORMS,
    POLITE,
    POSSESSIVE,
    PREPOSITIONS,
    PREREQ,
    PRONOUNS,
    PURPOSE_VERBS,
    RELATIVE,
    RELATIVE_WORDS,
    REQUESTS,
    SCOPE_ADJECTIVES,
    SENTENCE_END,
    SLOT_END,
    STRUCTURE_NOUNS,
    TAUGHT,
    TIME_NOUNS,
    TRANSITIVE,
    TWO_PLACE,
    VERB_LEADERS,
    VERBS,
    VOCABULARY,
    WANT_SOMETHING,
    WH,
    WHOLE,
    Cue,
    nameless,
    respelt,
)
from control_plane.understanding.names import ARROW, normalise
from control_plane.understanding.reading import (
    LEARNING,
    Mention,
    Reading,
)
from control_plane.understanding.text import Text
from control_plane.understanding.timewords import TimePoint
from data_plane.relations import BUILDS_ON, PART_OF, PREREQUISITE

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


def _ends_with(
    toks: Sequence[str], end: int, phrases: Iterable[Sequence[str]], masked: Collection[int] = ()
) -> bool:
    """Does some phrase end exactly at token ``end`` (exclusive), none of its words a concept's
    name (``masked``: "Reach" named as a concept is no "reach")?"""
    return any(
        tuple(toks[max(0, end - len(p)) : end]) == tuple(p)
        and not any(i in masked for i in range(max(0, end - len(p)), end))
        for p in phrases
    )


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
                toks, lo, hi, DETERMINERS | PRONOUNS | DEMONSTRATIVES | PLACE_PROFORMS | POLITE | _LEARNER
            )
            if span is not None and not _origin(toks, *span):
                return span
    return None


# The learner as a place of a two-place frame ("what stands between me and X"): where they stand.
_LEARNER: Final = frozenset(normalise("me us myself ourselves"))

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


def _abbreviation(word: str) -> bool:
    """A word a dot after it does not end a sentence with: one letter, or letters of one or two
    between dots ("e.g", "i.e", "A.I", "Ph.D"; not "Node.js", nor a number: "Web 2.0. What ...")."""
    parts = word.split(".")
    # (Latin letters: an ideograph is a word of its own, "学习. Already ..." ends a sentence)
    return all(p.isascii() and p.isalpha() and len(p) <= 2 for p in parts) and (
        len(word) == 1 or len(parts) > 1
    )


def _sentences(text: Text) -> tuple[list[int], list[bool]]:
    """Per token, the index of its sentence; per sentence, whether it asks (ends with "?", or
    starts, after a greeting or "kindly", with a question word, an auxiliary or a request). A dot
    after a one-letter word or an abbreviation ("e.g.", "i.e.", "A.I.") ends nothing, and a
    "sentence" of fewer than three words ("Hi!") joins the next one; punctuation every few words is noise (one sentence)."""
    question = text.raw
    low = question.lower()
    spans: list[list[str]] = [[]]
    marks: list[bool] = []
    pos, prev, stops = 0, "", 0
    for t in text.tokens:
        gap = question[pos : t.start]
        ends = bool(SENTENCE_END.search(gap)) or (bool(DASH_END.search(gap)) and t.text in _NEW_QUESTION)
        stops += ends
        # "e.g. X", "I? know": no end; "after C? X" (a one-letter name): an end
        named_letter = len(prev) == 1 and prev.isupper() and prev not in "AI"
        # "Aiming for C. Got X" (a capital after the dot): an end too
        ends_a_name = named_letter and (re.search(r"[?!;]", gap) or question[t.start].isupper())
        dotted = _abbreviation(prev) and not ends_a_name
        if spans[-1] and ends and not dotted and len(spans[-1]) >= 3:
            marks.append("?" in gap)
            spans.append([])
        spans[-1].append(t.text)
        pos, prev = t.end, question[t.start : t.end]
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
        for w in (
            "also",
            "btw",
            "by the way",
            "ps",
            "p s",
            "unrelated",
            "off topic",
            "one more thing",
            "separately",
            "on another note",
            "on a different note",
            "side question",
        )
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

    left_out_far = False
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
        if _left_out(toks, i, j, masked):
            # "everything before X, but leave out the indirect ones": what is left out restricts
            # the rest of the question ("everything") to the direct ones
            direct, negated_until, left_out_far = True, j, True
        elif _negated(toks, i) or i <= negated_until + 2:
            direct, negated_until = True, j
        else:
            transitive = True
    direct_starts = {i for i, _ in direct_hits}
    direct_ends = {j for _, j in direct_hits}
    for i, j in direct_hits:
        while j < len(toks) and toks[j] in _STEP_DIRECTIONS:
            j += 1  # "one step back or five steps back": the direction words of the step
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
    if left_out_far:
        return True, False
    return direct and not transitive, transitive


# Words that say which way a step goes ("one step back", "a step away").
_STEP_DIRECTIONS: Final = frozenset({"back", "away", "removed", "earlier", "behind"})
# "build further on": the verb's adverb, not a scope word.
_BUILD_FORMS: Final = frozenset((w,) for w in normalise("build builds built building"))
# Scope words that quantify or modify the noun after them ("every <noun>", "the whole <noun>").
_QUANTIFIERS: Final = frozenset(normalise("every whole entire complete full"))
# ... unless that noun is a collection of what is asked ("the complete set of prerequisites").
_COLLECTIONS: Final = frozenset(
    normalise(
        "set list chain tree path sequence lineage history picture map range collection series line "
        "curriculum syllabus course programme program backlog"
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


def _learners_own_time(toks: Sequence[str], when: TimePoint, masked: frozenset[int]) -> bool:
    """Does the time phrase date something the learner did recently ("I finished X last week",
    "my group completed X yesterday"), rather than the graph the question asks about? Yes when a
    verb of studying with a personal subject stands in the few words before it (a name, however
    long, counts as one word)."""
    said = normalise(when.words)
    if not _RECENT.intersection(said):
        return False  # "when I studied it in 2018" may well ask for the graph of 2018
    first = said[:1]
    at = next((i for i in range(len(toks)) if first and toks[i] == first[0] and i not in masked), None)
    if at is None:
        return False
    words = [t for i, t in enumerate(toks[:at]) if not (i in masked and i - 1 in masked)]
    window = words[-6:]
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
_CONCEPT_NOUNS: Final = frozenset(normalise("concept topic idea ideas"))  # "-as" stays plural
_TOPIC_WORDS: Final = _CONCEPT_NOUNS | frozenset(normalise("subject area areas skill module unit ones"))


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
    return any(w in KNOWN_VERBS for w in before) or any(_ends_with(toks, start, [p]) for p in KNOWN_BEFORE)


def _said_goal(toks: Sequence[str], start: int) -> bool:
    """Is the name at ``start`` the goal the learner states ("I want to get to X", "my target is X")?"""
    return any(_ends_with(toks, start, [p]) for p in GOALS)


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


def _unknown_object(
    toks: Sequence[str],
    masked: frozenset[int],
    verbs: Sequence[tuple[int, int, Cue]],
    sentence: Sequence[int] = (),
) -> tuple[int, int] | None:
    """The object of "does X rely on <words>" / "is X needed for <words>" when it names no known
    concept while the verb's inverted subject does: the mirror of :func:`_unknown_subject`. The
    frame is an inverting auxiliary, a known name, the verb (adverbs may stand between), and words
    up to the end of the sentence or the next known name, at least two and every one a word no
    vocabulary here explains (``lexicon.nameless``)."""

    def same(i: int, j: int) -> bool:
        return not sentence or sentence[i] == sentence[j]

    for s, e, _ in verbs:
        m = s
        while m > 0 and toks[m - 1] in ADVERBS and m - 1 not in masked:
            m -= 1
        if m == 0 or m - 1 not in masked:
            continue
        while m > 0 and m - 1 in masked:
            m -= 1  # the start of the name right before the verb
        a = _skip_back(toks, m, masked)
        if a == 0 or toks[a - 1] not in INVERTING_AUX or not same(a - 1, s):
            continue
        j = e
        while j < len(toks) and toks[j] in DETERMINERS and j not in masked:
            j += 1
        k = j
        while k < len(toks) and k not in masked and same(k, s) and nameless(toks[k]):
            k += 1
        # two words at least: a single one after the verb is as often who or what the learning
        # is for ("is X needed for beginners") as a name
        if k - j >= 2 and (k == len(toks) or not same(k, s) or k in masked):
            return (j, k)
    return None


def _unknown_cue_object(
    text: Text,
    toks: Sequence[str],
    masked: frozenset[int],
    cues: Sequence[tuple[int, int, Cue]],
    sentence: Sequence[int] = (),
) -> tuple[int, int] | None:
    """The object of a relation word ("depends on <words>,", "a requirement for <words>?", "ready
    for <words>.") when it is two or more words no vocabulary here explains, ending the clause, and
    the clause names a known concept: a topic the graph lacks in the relation's other place. Only
    learning-order words count; an indefinite article before the words ("underpins a great
    deal") makes them no name."""
    spans = text.spans

    def ends_clause(k: int) -> bool:
        if k >= len(toks) or k >= len(spans):
            return True
        if sentence and sentence[k] != sentence[k - 1]:
            return True
        return any(c in ",;:?.!()" for c in text.raw[spans[k - 1][1] : spans[k][0]])

    for s, e, cue in cues:
        if cue.family not in (LEARN, PREREQ, BUILD) or ends_clause(e):
            continue  # learning order only ("fit in the grand scheme" is a part-of idiom)
        j = e
        if j < len(toks) and toks[j] in PREPOSITIONS and toks[e - 1] not in PREPOSITIONS and j not in masked:
            j += 1  # "a requirement for <words>"
        while j < len(toks) and toks[j] in DETERMINERS and j not in masked and toks[j] not in ("a", "an"):
            j += 1
        if j < len(toks) and toks[j] in ("a", "an"):
            continue
        k = j
        while k < len(toks) and k not in masked and nameless(toks[k]) and not (k > j and ends_clause(k)):
            k += 1
        same = [i for i in masked if not sentence or sentence[i] == sentence[s]]
        if k - j >= 2 and ends_clause(k) and same:
            return (j, k)
    return None


def _skip_back(toks: Sequence[str], i: int, masked: frozenset[int]) -> int:
    """Index just after the last meaningful token before ``i`` (determiners skipped)."""
    j = i
    while j > 0 and toks[j - 1] in DETERMINERS and j - 1 not in masked:
        j -= 1
    return j


# The cue of a role read from a condition on what the learner knows ("once I know X").
KNOWN_CONDITION: Final = "once I know"
# The cue of a reading of what is left before a goal, given what the learner knows.
WHAT_IS_LEFT: Final = "what is left"


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


@dataclass(frozen=True)
class _Site:
    """Where one named concept stands in a question's tokens, with what lies before it, for the
    role rules (``_ROLE_RULES``)."""

    toks: Sequence[str]
    start: int
    end: int
    masked: frozenset[int]
    verbs: Sequence[tuple[int, int, Cue]]
    nouns: Sequence[tuple[int, int, Cue]]
    relational: bool
    b: int  # where the name's phrase begins (articles, possessives skipped back)
    before: tuple[str, ...]  # the four tokens before it
    k: int  # where a purpose clause before it begins ("before (they) study X")
    lead: tuple[str, ...]  # the four tokens before that clause
    leads: tuple[tuple[str, ...], ...]  # ... before each place that clause may begin
    clause: tuple[str, ...]  # the four tokens before the name's own clause

    @classmethod
    def at(
        cls,
        toks: Sequence[str],
        start: int,
        end: int,
        masked: frozenset[int],
        verbs: Sequence[tuple[int, int, Cue]],
        nouns: Sequence[tuple[int, int, Cue]],
        relational: bool,
    ) -> _Site:
        b = _skip_back(toks, start, masked)
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
        c = _clause_start(toks, b, masked)
        return cls(
            toks,
            start,
            end,
            masked,
            verbs,
            nouns,
            relational,
            b=b,
            before=tuple(toks[max(0, b - 4) : b]),
            k=k,
            lead=tuple(toks[max(0, k - 4) : k]),
            leads=tuple(tuple(toks[max(0, s - 4) : s]) for s in stops if s < b),
            clause=tuple(toks[max(0, c - 4) : c]) if c < b else (),
        )

    def marked(self, m: tuple[str, ...]) -> bool:
        """``m`` ends right before the name, its purpose clause, or its own clause."""
        n = len(m)
        return self.before[-n:] == m or any(ld[-n:] == m for ld in self.leads) or self.clause[-n:] == m


def _by_marker(s: _Site) -> _Role | None:
    """Prepositions right before the concept: "before X", "after X", "prior to starting X"."""
    for m in BEFORE_MARKERS:
        if s.marked(m):
            if any(cue.family == PREREQ for _, _, cue in s.nouns):
                # "Before X, which concepts are prerequisites?": X's prerequisites.
                return _Role(PREREQ, DEP, False, " ".join(m), 3)
            return _Role(LEARN, DEP, True, " ".join(m), 3)
    for m in AFTER_MARKERS:
        if s.marked(m) and not _after_clause(s):
            return _Role(LEARN, FOUND, True, " ".join(m), 3)
    return None


def _after_clause(s: _Site) -> bool:
    """Is the "after" before the concept a clause's ("after I pass X": a condition on what the
    learner knows, :func:`_by_condition`), not a preposition placing X?"""
    window = s.toks[max(0, s.b - 5) : s.b]
    return any(w == "after" and window[i + 1] in {"i", "we", "you"} for i, w in enumerate(window[:-1]))


def _by_condition(s: _Site) -> _Role | None:
    """ "once I know X", "if I learn X", "were I to complete X": X is known, a foundation."""
    window = s.toks[max(0, s.b - 7) : s.b]  # "once my year 6 pupils finish X": the subject may be long
    if (
        tuple(window[-2:-1]) == ("to",)
        and tuple(window[-3:-2]) not in (("get",), ("got",))  # "once I get to know X"
        and tuple(window[-4:-3]) != ("were",)  # "were I to complete X": the inverted conditional
    ):
        return None  # "if I want to learn X": an infinitive of purpose (X the goal), not the condition's verb
    triggers = [i for i, w in enumerate(window) if w in {"once", "since", "having", "if", "when"}]
    # "after I pass X": a clause (not "after X", which places X)
    triggers += [i for i, w in enumerate(window[:-1]) if w == "after" and window[i + 1] in {"i", "we", "you"}]
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
        return _Role(LEARN, FOUND, False, KNOWN_CONDITION, 3)
    return None


# Conditions that say the learner has already done it ("having passed X", "since I finished X",
# "now that I know X", "had I learned X"), not one still to come ("once I pass X", "if I take X").
_DONE_TRIGGERS: Final = frozenset({"having", "since", "had"})


def condition_done(toks: Sequence[str], start: int) -> bool:
    """Does the condition before the name at ``start`` (``_by_condition``) say it is done already,
    rather than that it will be ("once I pass X": what X itself then opens is as likely meant as
    everything open to the learner)?"""
    window = toks[max(0, start - 7) : start]
    return any(w in _DONE_TRIGGERS for w in window) or any(
        window[i : i + 2] == ("now", "that") for i in range(len(window) - 1)
    )


def _by_purpose(s: _Site) -> _Role | None:
    """ "to learn X", "to get to X", "I want X": X is the goal, a dependent."""
    toks, before = s.toks, s.before
    if (
        len(before) >= 2
        and before[-1] in PURPOSE_VERBS
        and (
            before[-2] == "to" or (before[-2] == "for" and not before[-1].endswith("ing"))  # "For learn X"
        )
    ):
        return _Role(LEARN, DEP, True, f"to {before[-1]}", 3)
    j = s.b
    if (
        j > 1
        and toks[j - 1] in {"to", "into", "on", "up", "till", "until", "upto"}
        and toks[j - 2] in PURPOSE_VERBS
    ):
        j -= 1  # "to get to X", "to move on to X"
    if j > 1 and toks[j - 1] in PURPOSE_VERBS and j - 1 not in s.masked:
        v = j - 1
        while v > 0 and toks[v - 1] in ADVERBS:
            v -= 1
        if v > 0 and toks[v - 1] == "to" and (v < 2 or toks[v - 2] not in BEFORE_WORDS):
            return _Role(LEARN, DEP, True, f"to {toks[j - 1]}", 3)
    if before[-1:] == ("want",) or before[-2:] == ("aim", "for"):
        return _Role(LEARN, DEP, True, "want", 3)
    return None


def _by_agent(s: _Site) -> _Role | None:
    """ "required by X": a passive verb's agent."""
    if s.before[-1:] != ("by",):
        return None
    for v, e, cue in s.verbs:
        if e <= s.b - 1 and s.b - 1 - e <= 1 and s.toks[e - 1] in PASSIVE_FLIP:
            return _Role(
                cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(s.toks[v:e]) + " by", 3
            )
    return None


def _by_preposition(s: _Site) -> _Role | None:
    """ "<noun> of/for X", "<verb> of X" ("part of X"), "needed for X", "For learning X, ..."."""
    toks, before = s.toks, s.before
    if before[-1:] in (("of",), ("for",), ("to",), ("in",), ("on",), ("into",), ("from",)) or (
        before and before[-1] in PLACE
    ):
        p = s.b - 1
        for v, e, cue in (*s.nouns, *s.verbs):
            if before[-1] == "from" and not (cue.noun and cue.family == LEARN and e == p):
                continue  # "downstream from X", "upstream from X": a direction, as "of X"
            gap_ok = all(t in NOUN_GAP or t in CONTAINER or t in LIGHT_VERBS for t in toks[e:p]) or (
                # "the components that live inside X": a relative clause of one verb of position
                before[-1] in PLACE
                and cue.noun
                and p - e in (2, 3)
                and toks[e] in RELATIVE_WORDS
                and not any(k in s.masked or toks[k] in WH for k in range(e, p))
            )
            near = e == p or (cue.noun and e < p and p - e <= 4 and gap_ok)
            if near or (e == p + 1 and cue.words and toks[e - 1] == before[-1]):
                if cue.noun:
                    return _Role(
                        cue.family, cue.right, cue.transitive, " ".join(toks[v:e]) + f" {before[-1]}", 2
                    )
                if (toks[e - 1] in PASSIVE_FLIP or toks[e - 1] in NEEDED_FOR) and before[-1] != "by":
                    # "what is needed for X": X is what the thing is needed for.
                    role = DEP if cue.family != PART else WHOLE
                    return _Role(cue.family, role, cue.transitive, " ".join(toks[v:e]) + f" {before[-1]}", 2)
        if before[-1] == "for" and s.relational:
            return _for_role(toks, s.nouns)
    if s.k < s.b and s.lead[-1:] == ("for",) and s.relational:
        for v, e, cue in s.verbs:  # "X is necessary for learning Y": Y is what X is needed for
            if (
                e == s.k - 1
                and (toks[e - 1] in PASSIVE_FLIP or toks[e - 1] in NEEDED_FOR)
                and cue.family != PART
            ):
                return _Role(cue.family, DEP, cue.transitive, " ".join(toks[v:e]) + " for", 2)
        return _for_role(toks, s.nouns)  # "For learning X, what is the direct prerequisite topic?"
    return None


def _by_keyword_noun(s: _Site) -> _Role | None:
    """ "direct prerequisites mlops": a keyword query puts the noun right before the name."""
    for _, e, cue in s.nouns:
        if e == s.b and cue.noun and s.toks[e - 1 : e] != ("s",):
            return _Role(cue.family, cue.right, cue.transitive, " ".join(s.toks[e - 1 : e]) + " X", 2)
    return None


def _by_having(s: _Site) -> _Role | None:
    """ "which prerequisites does X have", "which prerequisites do X and Y share", "what do X and Y
    have in common as prerequisites", "X has its own components": the noun is X's (and its
    fellows')."""
    toks, start, end = s.toks, s.start, s.end
    verb = end
    while verb < len(toks) and (verb in s.masked or toks[verb] in _FELLOWS):
        verb += 1  # past the names listed with X ("do X and Y share")
    if verb < len(toks) and toks[verb] in _HAVING_VERBS:
        after = verb + 1 + (toks[verb + 1 : verb + 3] == ("in", "common")) * 2
        for v, e, cue in s.nouns:
            if v == after + 1 and toks[after : after + 1] == (
                "as",
            ):  # "share / have in common as prerequisites"
                return _Role(
                    cue.family, cue.right, cue.transitive, "X have in common as " + " ".join(toks[v:e]), 2
                )
            if e <= start and all(
                t in _FELLOWS or t in {"doe", "do", "did", "the", "a", "an"} or i in s.masked
                for i, t in enumerate(toks[e:start], start=e)
            ):
                return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[v:e]) + " does X have", 2)
    if end < len(toks) and toks[end] in {"have", "has", "had"}:
        k = end + 1
        while k < len(toks) and k not in s.masked and (toks[k] in OWNERS or toks[k] in _HAVE_QUANTIFIERS):
            k += 1
        for v, e, cue in s.nouns:
            if v == k and cue.noun:
                return _Role(cue.family, cue.right, cue.transitive, "X has " + " ".join(toks[v:e]), 2)
    return None


# Verbs whose subject owns the relational noun asked before it ("which prerequisites do X and Y
# share"); words that list names with X.
_HAVING_VERBS: Final = frozenset(normalise("have has had need require share"))
_FELLOWS: Final = frozenset(normalise("and or both"))


def _by_possessive(s: _Site) -> _Role | None:
    """ "X's prerequisites", "X prerequisites", "X's list of immediate prerequisites"."""
    toks, masked = s.toks, s.masked
    after_tok = s.end
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
    for v, e, cue in s.nouns:
        if v == after_tok and toks[e : e + 1] != ("of",):
            return _Role(cue.family, cue.right, cue.transitive, " ".join(toks[v:e]), 2)
    return None


def _by_place_as(s: _Site) -> _Role | None:
    """ "which topics sit under X as prerequisites": X is a place preposition's object, so "as a
    <noun>" describes the clause's (wh-) subject, and X takes the noun's other role."""
    toks, before, end = s.toks, s.before, s.end
    if before and before[-1] in PLACE and any(t in WH for t in toks[: s.start]):
        for v, e, cue in s.nouns:
            if v >= end and v - end <= 4 and "as" in toks[end:v] and all(g in NOUN_GAP for g in toks[end:v]):
                return _Role(
                    cue.family, cue.right, cue.transitive, f"{before[-1]} X as {' '.join(toks[v:e])}", 2
                )
    return None


def _by_predicate_noun(s: _Site) -> _Role | None:
    """ "X is a prerequisite (for ...)", "X as a prerequisite" (not "topics under X as
    prerequisites"), "have X somewhere in their prerequisite chain"."""
    toks, start, end, masked = s.toks, s.start, s.end, s.masked
    if s.before and s.before[-1] in PLACE:
        return None
    for v, e, cue in s.nouns:
        if not (v >= end and v - end <= 10):  # "X (written right there) as one of their own direct <noun>"
            continue
        gap = toks[end:v]
        if (
            "as" in gap
            and all(g in NOUN_GAP for g in gap[gap.index("as") :])
            and gap.index("as") <= 3
            and end < len(toks)
            and toks[end] not in NOUN_GAP
            and not any(g in WH or g in RELATIVE_WORDS or g in PERSONS for g in gap)
            and not any(k in masked for k in range(end, v))
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
                return _Role(cue.family, cue.right, cue.transitive, f"X ... as its {' '.join(toks[v:e])}", 2)
            return _Role(cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[v:e]), 2)
        if not all(g in NOUN_GAP or g in ADVERBS or g in HOLDERS or g in LIGHT_VERBS for g in gap):
            continue
        held = "as" not in gap and ("in" in gap or "among" in gap) and any(g in POSSESSIVE for g in gap)
        if held:
            # "have X somewhere in their prerequisite chain": X is among their prerequisites.
            return _Role(cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[v:e]), 2, e)
        if "as" not in gap and any(g in HOLDERS for g in gap):
            continue
        copula_before = start > 0 and toks[_skip_back(toks, start, masked) - 1 : start][:1] in (
            ("is",),
            ("was",),
            ("are",),
        )
        if "as" in gap or any(g in COPULA for g in gap) or copula_before:
            return _Role(cue.family, cue.left, cue.transitive and cue.left == DEP, " ".join(toks[v:e]), 2)
    return None


def _by_nearest_verb(s: _Site) -> _Role | None:
    """The nearest verb cue: left of it takes the left role, right of it the right role; the
    passive ("X is required for what") swaps them."""
    toks, start, end, masked = s.toks, s.start, s.end, s.masked
    best: tuple[int, _Role] | None = None
    for v, e, cue in s.verbs:
        k = v
        while k > 0 and toks[k - 1] in VERB_LEADERS:
            k -= 1
        if k > 0 and toks[k - 1] in PERSONS:
            continue  # "I need the subtopics inside X": the learner's need, not X's relation
        if e <= start:
            dist = start - e
            passive = toks[e - 1] in PASSIVE_FLIP and any(t in COPULA for t in toks[max(0, v - 3) : v])
            if (
                not passive
                and toks[v] in _NEED_WORDS
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
        elif v >= end:
            if any(t in WH or t in RELATIVE or t in OTHER_SUBJECTS for t in toks[end:v]):
                # "X: what builds on it?", "how far X reaches: every concept that requires it":
                # X is the topic, not the verb's subject.
                continue
            dist = v - end
            passive = (
                toks[e - 1] in PASSIVE_FLIP and any(t in COPULA for t in toks[max(0, start - 3) : v])
            ) or _agent_after(toks, e, masked)
            role = cue.right if passive else cue.left
        else:
            continue
        candidate = _Role(cue.family, role, cue.transitive and role == DEP, " ".join(toks[v:e]), 1)
        if best is None or dist < best[0]:
            best = (dist, candidate)
    return best[1] if best is not None else None


# How a named concept's role is found: the first rule that places it wins, strongest
# constructions first (a preposition right before the name, then nouns, then the nearest verb).
_ROLE_RULES: Final[tuple[Callable[[_Site], _Role | None], ...]] = (
    _by_marker,
    _by_condition,
    _by_purpose,
    _by_agent,
    _by_preposition,
    _by_keyword_noun,
    _by_having,
    _by_possessive,
    _by_place_as,
    _by_predicate_noun,
    _by_nearest_verb,
)


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
    site = _Site.at(toks, start, end, masked, verbs, nouns, relational)
    for rule in _ROLE_RULES:
        role = rule(site)
        if role is not None:
            return role
    return None


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
            return ("needed_before", LEARNING) if role.transitive else ("prerequisites", (PREREQUISITE,))
        return "dependents", ((PREREQUISITE,) if not role.transitive else LEARNING)
    return ("needed_before" if role.role == DEP else "dependents"), LEARNING


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
    if set(asked) <= set(LEARNING):
        learning = tuple(r for r in LEARNING if counts.get(r, 0) > 0)
        if learning:
            missing = " or ".join(asked)
            used = " and ".join(learning)
            return learning, f"this graph has no {missing} edges, so {used} edges were used", False
    return asked, f"this graph has no {' or '.join(asked)} edges", True


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


# Verbs that report what someone says or thinks ("my teacher says X comes before Y").
REPORTING_VERBS: Final = frozenset(
    normalise("say says said tell tells told think thinks thought claim claims claimed believe believes "
              "believed reckon reckons reckoned insist insists insisted suggest suggests suggested mention "
              "mentions mentioned")
)  # fmt: skip

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


def _verb_before_name(text: Text, toks: Sequence[str], i: int, m: Mention) -> bool:
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
    if toks[i] in REPORTING_VERBS:
        return True  # "my tutor said X comes before Y": reported speech
    name, word = text.surface(m.start, m.end), text.surface(i, i + 1)
    return name[:1].isupper() and not name.isupper() and word.islower()


def _quoted(text: Text, m: Mention) -> bool:
    """Is the name ``m`` written between quotation marks?"""
    spans = text.spans
    if m.end > len(spans):
        return False
    lo, hi = spans[m.start][0], spans[m.end - 1][1]
    return text.raw[lo - 1 : lo] in _QUOTES and text.raw[hi : hi + 1] in _QUOTES


_QUOTES: Final = frozenset("\"'“”‘’«»")


def _between(toks: Sequence[str], a: Mention, b: Mention) -> bool:
    """ "the steps between A and B": the two names are the two places of "between ... and"."""
    first, last = sorted((a, b), key=lambda m: m.start)
    return toks[first.start - 1 : first.start] == ("between",) and toks[first.end : last.start] == ("and",)


def _name_as_verb(text: Text, toks: Sequence[str], m: Mention, sentence: Sequence[int]) -> bool:
    """A one-word name written in lower case right after a personal subject that an auxiliary
    inverts or that opens the clause ("what should we benchmark X against", "we benchmark X") is
    that subject's verb, not the concept."""
    i = m.start
    if m.end - i != 1 or i == 0 or toks[i - 1] not in PERSONS - {"m"} or not text.surface(i, i + 1).islower():
        return False
    clause_start = i == 1 or (len(sentence) == len(toks) and sentence[i - 2] != sentence[i - 1])
    return clause_start or toks[i - 2] in INVERTING_AUX


def _names_unknown(text: Text, span: tuple[int, int], when: TimePoint | None) -> Reading:
    """The reading of a question that names ``span``, a longer name this graph does not have."""
    return Reading(
        text.raw,
        "unknown",
        time=when,
        problem=f"the question names {text.surface(*span)!r}, which is not a concept in this graph",
        read_by="none",
    )


def _capitalised_compound(
    text: Text,
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
    capital = [text.raw[a].isupper() for a, _ in spans]
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
