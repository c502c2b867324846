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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from types import EllipsisType
from typing import Final

from control_plane.understanding.accounting import account
from control_plane.understanding.analysis import Parse, analyse
from control_plane.understanding.forms import FORM_FRAMES
from control_plane.understanding.frames import FRAMES, read_frames
from control_plane.understanding.grammar import _any
from control_plane.understanding.intent_model import IntentModel, default_model
from control_plane.understanding.lexicon import (
    ANSWER_WORDS,
    BOTH,
    BUILD,
    DEP,
    DETERMINERS,
    FOUND,
    LEARN,
    POLITE,
    PREREQ,
    PRONOUNS,
    REQUESTS,
    WH,
    YES_NO_AUX,
    nameless,
)
from control_plane.understanding.names import normalise
from control_plane.understanding.reading import SURE, Mention, Reading, Subject, mentions_in
from control_plane.understanding.text import Text

__all__ = ["SURE", "Mention", "Reading", "Subject", "interpret", "mentions_in"]


def interpret(
    question: str | Text,
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
    ``intent_model.json.gz``; None: no check)."""
    checker = default_model() if model is ... else model
    try:
        # a text that is not a string reads as empty (the first rule says so)
        text = Text.of(question) if isinstance(question, str | Text) else Text("", ())
        return _interpret(text, mentions, now, relations, checker)
    except Exception as exc:  # a reading must never take the question down
        raw = question.raw if isinstance(question, Text) else question
        return Reading(
            raw if isinstance(raw, str) else "",
            "unknown",
            problem=f"could not read the question ({type(exc).__name__})",
            read_by="none",
        )


# The frames in the order they are tried: words standing where a concept stands but naming none
# first (so an unknown concept is named as such), then the question forms, then the relations.
READING_ORDER: Final = (*FRAMES[:1], *FORM_FRAMES, *FRAMES[1:])
# The role families that place a concept in learning order.
LEARNING_FAMILIES: Final = frozenset({LEARN, PREREQ, BUILD})


def _interpret(
    text: Text,
    mentions: Sequence[Mention],
    now: datetime,
    counts: Mapping[str, int] | None,
    model: IntentModel | None,
) -> Reading:
    parsed = analyse(text, mentions, now, counts, model)
    if isinstance(parsed, Reading):
        return parsed
    reading = _accounted(parsed, read_frames(parsed, READING_ORDER))
    return replace(reading, placed=_placed(parsed))


def _placed(p: Parse) -> tuple[tuple[str, str, int], ...]:
    """Where the question's words put each concept in learning order (``Reading.placed``): the
    role rules' learning-family roles, and what the learner says they know (a foundation)."""
    out = [(k.concept_id, FOUND, 3) for k in p.known]
    for cid, role in p.roles.items():
        if role is not None and role.family in LEARNING_FAMILIES and role.role in (DEP, FOUND):
            out.append((cid, role.role, role.strength))
    return tuple(dict.fromkeys(out))


def _accounted(p: Parse, reading: Reading) -> Reading:
    """``reading``, or a problem when it leaves out a concept the question asks with: an answer
    that drops one of the names ("which goes first, A or B?" answered about A) answers another
    question. Names in context sentences, and names used as words ("I'm planning to ..."), were
    set aside before the frames read the question and do not count."""
    if not reading.sure:
        return reading
    slot = _unknown_in_a_slot(p)
    if slot is not None:
        return replace(
            reading,
            problem=f"the question also names {p.text.surface(*slot)!r}, which is not a concept in this graph",
        )
    emptied = _leaves_out_everything(p)
    if emptied is not None:
        return replace(
            reading,
            problem=f"the question asks for {reading.describe()} and also to leave out "
            f"{p.text.surface(*emptied)!r}, which would leave nothing to answer",
        )
    if len(set(reading.ids())) == 1 and _any(p.toks, BOTH, p.masked):
        # "Next and Build: what do they share?" read with "Next" as a word: sharing takes two
        return replace(reading, problem="the question asks what is shared, but the reading names one concept")
    pair = _two_owned_relations(p)
    if pair is not None:
        return replace(reading, problem="the message asks two questions at once; ask them one at a time")
    none = _none_of_a_relation(p)
    if none is not None and reading.intent != "start" and reading.form != "yes_no":
        return replace(
            reading,
            problem=f"the question asks for concepts with {p.text.surface(*none)!r}, which this reading "
            f"({reading.describe()}) does not answer",
        )
    own = _answers_own_relation(p)
    if own is not None and reading.intent != "next":
        return replace(
            reading,
            problem=f"the question asks about {p.text.surface(*own)!r} of the concepts it asks for, "
            f"which this reading ({reading.describe()}) does not answer",
        )
    second = _second_question(p)
    if second is not None and second[0]:
        return replace(reading, problem="the message asks two questions at once; ask them one at a time")
    words = account(p, second[1] if second is not None else ())
    if words.unexplained:
        said = " and ".join(repr(p.text.surface(lo, hi)) for lo, hi in words.unexplained)
        return replace(
            reading,
            problem=f"the question also says {said}, which this reading ({reading.describe()}) does not explain",
        )
    reading = replace(reading, background=tuple(p.text.surface(lo, hi) for lo, hi in words.background))
    if second is not None:
        # "..., and also which laptop should I buy?": a request about nothing the graph holds,
        # set aside, and the answer says so
        lo, hi = second[1][0], second[1][-1] + 1
        while lo < hi and p.toks[lo] in _CLAUSE_JOINERS:
            lo += 1
        part = p.text.surface(lo, hi)
        time = reading.time
        if time is not None and time.words.casefold() in part.casefold():
            time = None  # "... and who was president of France in 2016?": the aside's time
        reading = replace(reading, set_aside=(*reading.set_aside, part), time=time)
    used = set(reading.ids())
    left = [m for m in p.ordered if m.concept_id not in used and p.tags.get(m.concept_id) != "example"]
    # a name in what the learner says of themselves that the reading does not read ("I have pass
    # X already. Is it enough for Y?"): what they did with it may be what the question turns on
    left += [
        m for m in p.unread if m.concept_id not in used and m.concept_id not in {n.concept_id for n in left}
    ]
    if not left:
        return reading
    names = " and ".join(repr(p.words_of.get(m.concept_id) or p.text.surface(m.start, m.end)) for m in left)
    return replace(
        reading,
        problem=f"the question also names {names}, which this reading ({reading.describe()}) leaves out",
    )


_LEAVE_VERBS: Final = frozenset(
    normalise("leave leaving omit omitting exclude excluding skip skipping drop ignore")
)
# What stands for the whole answer ("all of them", "everything", "them all", "each one").
_THE_WHOLE: Final = frozenset(normalise("all of them everything every each one it those these the whole lot"))


_OWNED: Final = frozenset(normalise("any its their of"))


def _leaves_out_everything(p: Parse) -> tuple[int, int] | None:
    """The span of what a leaving-out verb leaves out when that is the whole answer ("list
    everything before X but leave all of them out"), or None: such a question asks for nothing."""
    toks = p.toks
    nouns = {k for start, end, _ in p.nouns for k in range(start, end)}
    for i, tok in enumerate(toks):
        if i in p.masked:
            continue
        if tok in REQUESTS | {"include"} and toks[i - 2 : i] in (("don", "t"), ("do", "not")):
            # "..., except don't give me any of its prerequisites": the answer itself refused
            j = i + 1 + (toks[i + 1 : i + 2] in (("me",), ("us",)))
            k = j
            while k < len(toks) and k not in p.masked and (toks[k] in _THE_WHOLE | _OWNED or k in nouns):
                k += 1
            if k == len(toks) and any(t in ("any", "all", "every", "everything") for t in toks[j:k]):
                return j, k
            continue
        if tok not in _LEAVE_VERBS or i in p.context:
            continue
        j = i + 1 + (toks[i + 1 : i + 2] == ("out",))
        k = j
        while k < len(toks) and toks[k] in _THE_WHOLE and k not in p.masked:
            k += 1
        whole = k > j and any(t in ("all", "everything", "every", "each", "whole") for t in toks[j:k])
        if whole and (k == len(toks) or toks[k] in ("out", "off") or toks[j - 1] == "out"):
            return j, k
    return None


def _two_owned_relations(p: Parse) -> tuple[int, int] | None:
    """Two relational nouns each put right after a different name ("A prereqs + B dependents"):
    two questions in search-box form. The positions of the two nouns, or None."""
    owner = {m.end: m.concept_id for m in p.mentions}
    owned = [(s, owner[s], cue.words[0]) for s, _, cue in p.nouns if s in owner]
    for (s1, o1, c1), (s2, o2, c2) in itertools.pairwise(owned):
        if o1 != o2 and c1 != c2:
            return s1, s2
    return None


def _none_of_a_relation(p: Parse) -> tuple[int, int] | None:
    """ "the ones with no prerequisites of their own": a relational noun the question says the
    answer lacks ("no", "without"), or None."""
    for s, e, _ in p.nouns:
        if s > 0 and p.toks[s - 1] in ("no", "without") and s - 1 not in p.masked:
            return s - 1, e
    return None


_HAVE: Final = frozenset(normalise("have has had"))
_QUANTIFIERS: Final = frozenset(normalise("all any every each of some"))


def _answers_own_relation(p: Parse) -> tuple[int, int] | None:
    """The span of a relational noun the question predicates of its own answer ("which concepts
    have all their prerequisites covered by that?": "their" is the concepts asked for, not the
    ones named), or None. Not "which concepts have X as their prerequisite" (a name between)."""
    toks = p.toks
    for start, end, _ in p.nouns:
        k = start - 1
        if k >= 0 and toks[k] == "own":
            k -= 1
        if k < 0 or toks[k] not in ("their", "its"):
            continue
        k -= 1
        while k >= 0 and toks[k] in _QUANTIFIERS:
            k -= 1
        if k < 0 or toks[k] not in _HAVE:
            continue
        wh = next((i for i in range(k - 1, -1, -1) if toks[i] in ("which", "what")), None)
        if wh is not None and not any(i in p.masked for i in range(wh, k)):
            return start, end
    return None


# What opens a verb's object ("and keep seeing it", "and read the docs"), unlike a time phrase
# after a name ("A and jazz harmony this semester").
_OBJECT_WORDS: Final = frozenset(normalise("it them him her me us the a an"))
# Coordination: "A and <words>", "<words> or A", "A vs <words>".
_JOINERS: Final = frozenset(normalise("and or vs versus"))


def _unknown_in_a_slot(p: Parse) -> tuple[int, int] | None:
    """Two or more words no vocabulary here explains (one, ending the list), coordinated with a
    concept the question names ("A and <words>", "<words> or A", "A and orchestration, ..."): a
    topic the graph lacks, which an answer about the named concepts alone would drop."""
    toks, masked = p.toks, p.masked
    i = 0
    while i < len(toks):
        if i in masked or i in p.context or not nameless(toks[i]):
            i += 1
            continue
        j = i
        while j < len(toks) and j not in masked and j not in p.context and nameless(toks[j]):
            j += 1
        b = i
        while b > 0 and toks[b - 1] in DETERMINERS and b - 1 not in masked:
            b -= 1
        after_name = b > 1 and toks[b - 1] in _JOINERS and b - 2 in masked
        before_name = j + 1 < len(toks) and toks[j] in _JOINERS and j + 1 in masked
        # "X and keep seeing it": a verb and its object, not a name
        verb_phrase = j < len(toks) and toks[j] in _OBJECT_WORDS
        # one such word ends a list item too when the list ends with it ("A and orchestration,
        # which first?"): the gap after it is punctuation or the end
        one_ends = j - i == 1 and len(toks[i]) >= 4 and after_name and _list_ends(p, j)
        if (j - i >= 2 or one_ends) and (after_name or before_name) and not verb_phrase:
            return (i, j)
        i = j
    return None


def _list_ends(p: Parse, j: int) -> bool:
    """Does the list item ending before token ``j`` end at a comma, a question mark or the end?"""
    spans = p.text.spans
    if j >= len(spans):
        return True
    return p.question[spans[j - 1][1] : spans[j][0]].strip()[:1] in (",", "?", ";", ".")


def _second_question(p: Parse) -> tuple[bool, list[int]] | None:
    """A second question in one message, which one reading would answer by half: two asking
    clauses (sentences, or clauses joined by "and" / "also" / ";" where the second opens with a
    question word, an auxiliary or a request: "what do I need before A, and what do I need before
    B?", "list the prerequisites of A and tell me the price of bitcoin"). ``(True, clause)`` when
    the second asks of the graph: it names concepts the first does not, or asks its own relation of
    one ("which comes first, A or B? and how many topics depend on A?"). ``(False, clause)`` when
    it asks about something else entirely, in words no vocabulary here explains and no relation's
    word ("..., and also which laptop should I buy?", "... and tell me the price of bitcoin in
    2021"): a part to set aside, not a question to read. A follow-up that only points back ("... I
    mean all of them?"), and an aside in a sentence of its own about nothing in the graph ("Also,
    any tips for staying awake?", set aside with the context), are no second question. None: one
    question."""
    clauses = _asking_clauses(p)
    if len(clauses) < 2:
        return None
    named = {i: m.concept_id for m in p.mentions for i in range(m.start, m.end)}
    # the first clause that asks about a concept; clauses before it naming none are its preamble
    k = next((k for k, c in enumerate(clauses) if {named[i] for i in c if i in named} - p.said_known), None)
    if k is None:
        return None
    first, rest = clauses[k], clauses[k + 1 :]
    before = {named[i] for i in first if i in named}
    spans = p.text.spans
    for later in rest:
        if any(p.toks[i] in _BACK_REFERENCES for i in later if i not in p.masked):
            continue  # "..., and which of those does B build on?": one question, built on the first
        if not _opens_a_question(p, later, spans):
            continue  # "how does A ? lead to B ?": a stray mark cuts one question, it asks no second
        if _opener(p, later) in _PERSON_WH and not any(i in named for i in later):
            # "what do I need before A, and who teaches it?": a person, which no graph here holds
            # (a question about A's people, not about what A needs): set aside and said
            return False, later
        names = {named[i] for i in later if i in named} - p.said_known  # "I already know A?": said, not asked
        cues = _cue_words(p, later)
        # words no vocabulary here explains, or a number ("the 2020 Olympics"): another topic
        other = [
            i
            for i in later
            if i not in p.masked
            and ((nameless(p.toks[i]) and p.toks[i] not in ANSWER_WORDS) or p.toks[i].isdigit())
        ]
        pointing = any(p.toks[i] in PRONOUNS for i in later if i not in p.masked)  # "contrast it with"
        if names and (names - before or (cues and cues != _cue_words(p, first))):
            return True, later
        if (names or pointing) and _opener(p, first) in YES_NO_AUX and _opener(p, later) in WH:
            # "Is A needed for B? Also, what should I learn after B?": a yes/no, then a question
            # for a set about a concept it names: two questions, whatever their words
            return True, later
        aside = later[0] in p.context and p.sentence[later[0]] != p.sentence[first[-1]]
        if not names and not pointing and other and not aside:
            # "..., and which laptop should I buy": another topic, set aside unless it names a
            # relation of the graph's (then a second question about something the graph lacks)
            return bool(cues), later
    return None


def _opener(p: Parse, clause: Sequence[int]) -> str:
    """The clause's first word after joiners, greetings and requests ("" for a name)."""
    i = next((i for i in clause if p.toks[i] not in _BEFORE_THE_ASKING), None)
    return "" if i is None or i in p.masked else p.toks[i]


def _cue_words(p: Parse, positions: Sequence[int]) -> frozenset[tuple[str, ...]]:
    """The relation cues (verbs and nouns) that start in ``positions``."""
    inside = set(positions)
    return frozenset(cue.words[0] for s, _, cue in (*p.verbs, *p.nouns) if s in inside)


# What opens a clause that asks ("what ...", "how many ...", "is ...", "tell me ..."), after "and",
# "also" or a comma.
_CLAUSE_OPENERS: Final = WH | YES_NO_AUX | REQUESTS | frozenset(normalise("when why whose"))
_CLAUSE_JOINERS: Final = frozenset(normalise("and also plus then"))
# What stands before a clause's question word ("and also tell me who ...").
_BEFORE_THE_ASKING: Final = _CLAUSE_JOINERS | REQUESTS | POLITE | frozenset(normalise("me us"))
# The question words that ask for a person.
_PERSON_WH: Final = frozenset(normalise("who whom"))
# Words that point back at the first clause's answer: a clause with one asks about that answer.
_BACK_REFERENCES: Final = frozenset(normalise("those these them they"))


def _asking_clauses(p: Parse) -> list[list[int]]:
    """The asking clauses of the message, as token positions, in order: each asking sentence (a
    context sentence too, when it ends with a question mark), split again where "and" / "also" /
    ";" joins a clause that opens with a question word, an auxiliary or a request."""
    toks = p.toks
    if len(p.sentence) != len(toks):
        return []
    spans = p.text.spans
    clauses: list[list[int]] = []
    last = None
    for i in range(len(toks)):
        # a sentence set aside as context still counts when it asks ("Also, when were ...?")
        if (
            (i in p.context or not p.asks[p.sentence[i]])
            and not _ends_asking(p, i, spans)
            and not _opens_a_request(p, p.sentence[i])
        ):
            continue
        joined = (
            i > 0
            and toks[i] in _CLAUSE_OPENERS
            and i not in p.masked
            and (toks[i - 1] in _CLAUSE_JOINERS or ";" in p.question[spans[i - 1][1] : spans[i][0]])
            and last is not None
            and any(k in p.masked for k in clauses[-1])
        )
        if last is None or p.sentence[i] != p.sentence[last] or joined:
            clauses.append([])
        clauses[-1].append(i)
        last = i
    return [c for c in clauses if c and (_opens_a_question(p, c, spans) or _ends_asking(p, c[-1], spans))]


def _opens_a_request(p: Parse, sid: int) -> bool:
    """Does sentence ``sid`` open (after "and", "also", greetings) with a request ("... Please
    tell me who teaches it.")? It asks, whatever its last mark."""
    for i, k in enumerate(p.sentence):
        if k != sid:
            continue
        t = p.toks[i]
        if t in _CLAUSE_JOINERS or t in POLITE:
            continue
        return t in REQUESTS and i not in p.masked
    return False


def _ends_asking(p: Parse, i: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Does the sentence of token ``i`` end with a question mark?"""
    last = max(k for k, sid in enumerate(p.sentence) if sid == p.sentence[i])
    return p.question[spans[last][1] :].lstrip(" )]\"'”’").startswith("?")  # "... (physics)?"


def _opens_a_question(p: Parse, clause: Sequence[int], spans: Sequence[tuple[int, int]]) -> bool:
    """Does the clause open (after "and", "also", "so", greetings) with a question word or a
    request, or with an auxiliary and end with a question mark ("have A and B" is a statement)?"""
    for i in clause:
        t = p.toks[i]
        if t in _CLAUSE_JOINERS or t in POLITE or (t.endswith("ly") and i not in p.masked):
            continue  # "and separately, how is ...", "additionally, what ..."
        if i in p.masked or t not in _CLAUSE_OPENERS:
            return False
        return t not in YES_NO_AUX or _ends_asking(p, clause[-1], spans)
    return False
