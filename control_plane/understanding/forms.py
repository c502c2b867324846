"""Question forms: frames for the shape of a question around its relation.

"Is X a prerequisite for Y?" asks the same relation as "What are Y's prerequisites?" in another
form: whether X is in the answer. The frames here recognise the form from the grammar of the
asking sentence, not from the relation's words, and leave the relation to the role grammar
(``analysis``): each concept's role says which one the relation's answer is computed for (the
*subject*) and which one is asked about (the *candidate*).

==========  ===================================================  ==================================
form        recognised by                                        reading
==========  ===================================================  ==================================
order       two concepts joined by "or" and an ordering word     intent ``order`` (A, B)
            ("which first, A or B?", "A or B first?", "start
            with A or B?", "A before B or B before A?", "in what
            order, A and B?")
relate      "how" with a word of relation ("how are A and B      intent ``relate`` (A, B)
            related / connected / different"), a relation noun
            before "between" ("the connection between A and
            B"), "have to do with", or a yes/no "are A and B
            related?"
why         "why" (or "how come", "what makes", "the reason")    form ``why``: the subject's
            opening the asking sentence, two concepts           relation, the candidate's chain
count       "how many", "number of", "count"                    form ``count`` of the reading of
                                                                 the rest of the question
next        every concept named is one the learner knows, and   intent ``next`` (the knowns)
            the question asks what to learn ("what can I learn
            next?", "what now?")
yes_no      an auxiliary opens the asking sentence ("is",        form ``yes_no``: the subject's
            "does", "should", "can", ...), not a request ("can   relation, with the candidate
            you list ...") or an embedded question ("do you
            know what ..."), two concepts
==========  ===================================================  ==================================

Which concept is the subject: the one whose role is the dependent (or the whole) of the relation
("Y" in "does Y depend on X", "is X needed to learn Y", "is X part of Y"); the other one is the
candidate. A yes/no or why question is transitive unless it says "directly" / "immediately".
A form whose parts cannot be placed (one concept for "why", no role to tell subject from
candidate) is not guessed: the reading is a *problem* saying what was understood.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from control_plane.understanding.analysis import Parse
from control_plane.understanding.frames import FRAMES, read_frames
from control_plane.understanding.grammar import (
    _TOPIC_WORDS,
    KNOWN_CONDITION,
    WHAT_IS_LEFT,
    _any,
    _between,
    _ends_with,
    _find_all,
    _intent_of,
    _negated,
    _Role,
    _said_goal,
    condition_done,
)
from control_plane.understanding.lexicon import (
    ABOUT,
    ADVERBS,
    AFTER_MARKERS,
    ASKED,
    BEFORE_MARKERS,
    BOTH,
    BUILD,
    CAUSAL,
    COMPLETING,
    CONTRAST,
    COUNT_WORDS,
    DEMONSTRATIVES,
    DEP,
    EARLIER,
    EXACT,
    EXISTENTIAL,
    FIRST_PERSON,
    FIRST_WORDS,
    FOUND,
    HOW_FOLLOWERS,
    KNOWN_AFTER,
    LEARN,
    NEIGHBOUR,
    NEXT_WORDS,
    OPENS,
    ORDER_WORDS,
    PART,
    PATH,
    PEOPLE_OR_DATES,
    PERSONS,
    PLACE_PROFORMS,
    POLITE,
    PREREQ,
    PRONOUNS,
    READINESS,
    RELATED_WORDS,
    RELATION_NOUNS,
    RELATION_PHRASES,
    RELATION_WORDS,
    REMAINING,
    REQUEST_AUX,
    STARTS,
    SYMMETRIC,
    THERE,
    VOCABULARY,
    WH,
    WHOLE,
    WHY_OPENERS,
    YES_NO_AUX,
    nameless,
)
from control_plane.understanding.names import normalise
from control_plane.understanding.reading import LEARNING, Mention, Reading, Subject

__all__ = ["FORM_FRAMES"]


def _asking(p: Parse) -> list[int]:
    """Token positions of the asking sentences (every sentence when none is marked as asking),
    context left out."""
    toks, sentence, asks = p.toks, p.sentence, p.asks
    if len(sentence) != len(toks) or not any(asks):
        return [i for i in range(len(toks)) if i not in p.context]
    return [i for i in range(len(toks)) if asks[sentence[i]] and i not in p.context]


def _opening(p: Parse) -> tuple[int, ...]:
    """The asking sentence's own words from its first one that is not a greeting or filler (the
    first asking sentence that names a concept, else the first one)."""
    asking = _asking(p)
    if not asking or len(p.sentence) != len(p.toks):
        words = [i for i in asking if p.toks[i] not in POLITE]
        return tuple(words)
    named = {p.sentence[i] for i in p.masked}
    sids = list(dict.fromkeys(p.sentence[i] for i in asking))
    sid = next((s for s in sids if s in named), sids[0])
    words = [i for i in asking if p.sentence[i] == sid and p.toks[i] not in POLITE]
    return tuple(words[_label_end(p, words) :])


def _label_end(p: Parse, words: Sequence[int]) -> int:
    """How many of ``words`` are a short label before a colon that opens the sentence ("quick q:
    do I need A before B?", "question: ..."), naming no concept: 0 when there is none."""
    spans = p.text.spans
    for k, i in enumerate(words[:_LABEL_WORDS]):
        if i in p.masked:
            return 0
        if i + 1 < len(spans) and p.question[spans[i][1] : spans[i + 1][0]].strip() == ":":
            return k + 1 if k + 1 < len(words) else 0
    return 0


# At most this many words make a label before a colon ("quick question:").
_LABEL_WORDS: Final = 3


def _has(p: Parse, positions: Sequence[int], phrases: Sequence[tuple[str, ...]]) -> bool:
    toks = [p.toks[i] for i in positions if i not in p.masked]
    return any(tuple(toks[k : k + len(q)]) == q for q in phrases for k in range(len(toks)))


def _starts(p: Parse, positions: Sequence[int], phrases: Sequence[tuple[str, ...]]) -> bool:
    """Do ``positions`` open with one of ``phrases`` (a concept's name never does)?"""
    toks = tuple(p.toks[i] if i not in p.masked else "" for i in positions)
    return any(toks[: len(q)] == q for q in phrases)


def _pair(p: Parse) -> tuple[Mention, Mention] | None:
    """The two concepts a two-concept form is about, in the order the question names them."""
    distinct = [m for m in p.ordered if p.tags.get(m.concept_id) != "example"]
    if len(distinct) != 2:
        return None
    return distinct[0], distinct[1]


_MAY: Final = frozenset(normalise("can could may"))


def _yes_no(p: Parse) -> bool:
    """Does an auxiliary open the asking sentence as a yes/no question (or is it a statement put
    up for confirmation, :func:`_put_to_confirm`)?"""
    words = _opening(p)
    if _confirmed_before(p, words):
        return True
    words = _after_a_dislocated_name(p, words) or words
    fronted = _after_a_fronted_clause(p, words)
    if fronted:
        # "before I can start on X, do I have to get Y done?": the yes/no question follows the
        # clause put in front of it, whose names it asks about
        if not any(i in p.masked for i in words):
            return False
        words = fronted
    if words and p.toks[words[0]] not in YES_NO_AUX:
        return _put_to_confirm(p, words)
    if not words:
        return False
    toks = [p.toks[i] for i in words]
    if toks[1:2] and toks[1] in ASKED and toks[0] in REQUEST_AUX | frozenset(normalise("do")):
        return False  # "can you list ...", "can someone describe ...", "do you know what ...": a request
    if toks[2:3] and toks[0] in _MAY and toks[1] == "i" and toks[2] in frozenset(normalise("get have see")):
        return False  # "can I get the list of ...": a request (not "must I have X down")
    if toks[1:2] == ["not"]:
        return False  # "do not include ...": an instruction
    if not any(i in p.masked or p.toks[i] in PRONOUNS for i in words):
        return False  # the yes/no sentence asks about no concept
    if toks[1:2] and toks[1] in THERE:
        return False  # "are there prerequisites for X?": asks for them
    return not any(t in WH for t in toks[1:] if t not in {"anything", "something"})


def _after_a_dislocated_name(p: Parse, words: Sequence[int]) -> tuple[int, ...]:
    """The words of the question after a name put in front of it and picked up by "that" / "this"
    / "it" ("Number bases - is that something directed graphs is built on?"), or ()."""
    if not words or words[0] not in p.masked or len(p.text.spans) != len(p.toks):
        return ()
    k = next((k for k, i in enumerate(words) if i not in p.masked), None)
    if k is None or k + 1 >= len(words):
        return ()
    spans = p.text.spans
    gap = p.question[spans[words[k] - 1][1] : spans[words[k]][0]]
    if not any(c in gap for c in "-–—:,") or p.toks[words[k]] not in YES_NO_AUX:
        return ()
    return tuple(words[k:]) if p.toks[words[k + 1]] in ("that", "this", "it") else ()


# What opens a clause put in front of the question ("before I can start on X, ...", "if I'm aiming
# for X, ...", "to get to X, ...").
_FRONTING: Final = frozenset(normalise("before if once since when after to for"))


def _after_a_fronted_clause(p: Parse, words: Sequence[int]) -> tuple[int, ...]:
    """The words of the question after a clause put in front of it and ended by a comma, when an
    auxiliary opens them ("before I can start on X, do I ..."); () when there is none."""
    if not words or p.toks[words[0]] not in _FRONTING:
        return ()
    spans = p.text.spans
    for k in range(1, len(words)):
        i = words[k]
        if "," in p.question[spans[i - 1][1] : spans[i][0]] and i not in p.masked:
            return tuple(words[k:]) if p.toks[i] in YES_NO_AUX else ()
    return ()


# A statement put up for confirmation: "A depends on B, yes or no?", "pls confirm: A is needed
# for B, correct?", "tell me whether A is required on the way to B".
_CONFIRM_TAGS: Final = tuple(
    normalise(t) for t in ("yes or no", "true or false", "correct", "right", "y n", "yeah", "yes")
)
_CONFIRM_OPENERS: Final = tuple(
    normalise(t) for t in ("tell me whether", "tell me if", "confirm", "confirm that", "is it true that")
)


def _put_to_confirm(p: Parse, words: Sequence[int]) -> bool:
    """The asking sentence states a relation between named concepts and asks for it to be
    confirmed: it ends with a tag or opens with a request to confirm, has no question word, and
    a relation word stands in it."""
    toks = [p.toks[i] for i in words if i not in p.masked]
    # "... yes or no?", and "<word> or not" closing it ("A before B, needed or not?")
    tagged = any(tuple(toks[-len(t) :]) == t for t in _CONFIRM_TAGS) or (
        len(toks) >= 3 and toks[-2:] == ["or", "not"] and toks[-3] in VOCABULARY
    )
    opened = any(tuple(toks[: len(t)]) == t for t in _CONFIRM_OPENERS)
    if not (tagged or opened) or any(t in WH for t in toks):
        return False
    return sum(i in p.masked for i in words) > 0 and _cued(p)


# A sentence that only asks for the one before it to be confirmed ("My professor said A needs B.
# Is that true?").
_CONFIRMATIONS: Final = frozenset(
    normalise(t)
    for t in ("is that true", "is this true", "is it true", "is that right", "is this right", "is that correct",
              "is this correct", "am i right", "true", "right", "correct", "true or not", "is that so")
)  # fmt: skip


def _confirmed_before(p: Parse, words: Sequence[int]) -> bool:
    """Do ``words`` only ask for the sentence before them to be confirmed ("My professor said A
    needs B. Is that true?"), a statement that names a concept and a relation and asks nothing?"""
    if not words or len(p.sentence) != len(p.toks):
        return False
    if tuple(p.toks[i] for i in words if p.toks[i] not in POLITE) not in _CONFIRMATIONS:
        return False
    before = [i for i in range(words[0]) if p.sentence[i] == p.sentence[words[0]] - 1]
    return (
        any(i in p.masked for i in before)
        and not any(p.toks[i] in WH for i in before if i not in p.masked)
        and _cued(p)
    )


def _cued(p: Parse) -> bool:
    """Does a word of some relation (a relational verb or noun, a lesson or plan word, a marker
    such as "before", "versus", "related", "path") stand in the question?"""
    asking = set(_asking(p))
    if p.lesson or p.plan or any(start in asking for start, _, _ in (*p.verbs, *p.nouns)):
        return True
    return _any(
        p.toks, (*BEFORE_MARKERS, *AFTER_MARKERS, *PATH, *CONTRAST, *RELATED_WORDS, *NEIGHBOUR), p.masked
    )


def _unsupported(p: Parse) -> Reading | None:
    """ "How long does it take to learn X?", "who invented X?", "when was X added?": a degree,
    a person or a date, which the graph does not record, asked with no relation word."""
    if _cued(p):
        return None
    words = _opening(p)
    toks = [p.toks[i] for i in words]
    asked = ""
    if toks[1:] and toks[0] in PEOPLE_OR_DATES and (toks[0] != "when" or toks[1] in YES_NO_AUX):
        asked = toks[0]  # "who invented X", "when was X added" (not "when lecturers introduce X, ...")
    elif (
        toks[1:]
        and toks[0] in {"what", "which"}
        and words[1] not in p.masked
        and toks[1].isalpha()
        and toks[1] not in VOCABULARY
        and toks[1] not in EXACT
        and not toks[1].endswith("ly")  # "what exactly", "what precisely": an adverb, not a thing
        and not (toks[2:] and toks[2] in _TOPIC_WORDS)  # "which new topics": an adjective on "topics"
    ):
        asked = f"{toks[0]} {toks[1]}"  # "what salary can I expect if I know X": not a concept
    for k, i in enumerate(words[:-1]):
        nxt = words[k + 1]
        if p.toks[i] == "how" and nxt not in p.masked and p.toks[nxt] not in HOW_FOLLOWERS:
            asked = f"how {p.toks[nxt]}"
    if not asked:
        return None
    names = " and ".join(p.words_of[m.concept_id] for m in p.ordered)
    return replace(
        p.build("about", [p.sub(p.main)], sureness=0.0, read_by="none"),
        problem=f"the question asks {asked!r} about {names}; the graph records how concepts depend on "
        "each other, not that",
        suggestions=_suggestions_for(p),
    )


def _suggestions_for(p: Parse) -> tuple[str, ...]:
    x = p.words_of[p.main.concept_id]
    return (f"What do I need before {x}?", f"What comes after {x}?", f"What is {x}?")


def _order(p: Parse) -> Reading | None:
    """ "Which should I learn first, A or B?", "A or B first?", "do I learn A before B or B before
    A?", "is it A first and then B, or the other way round?", "A, B: which is earlier?", "in what
    order should I learn A and B?"."""
    asking = _asking(p)
    ordered = _has(p, asking, ORDER_WORDS)
    # "A before B or B before A", "..., or the other way round": both orders offered
    symmetric = _has(p, asking, SYMMETRIC) or any(
        m.start > n.start
        and m.concept_id != n.concept_id
        and "or" in p.toks[n.end : m.start]
        and any(o.concept_id == m.concept_id and o.start < n.start for o in p.mentions)
        for m in p.mentions
        for n in p.mentions
    )
    words = [p.toks[i] for i in asking if i not in p.masked]
    pair = _pair(p)
    if pair is None:
        # "which first, tensor decompositions or X?": one of the two names nothing the graph has
        if ordered and _joined_to_unknown(p, commas="which" in words or "what" in words):
            return _one_of_two_unknown(p, "which comes first")
        return None
    a, b = pair
    raw = list(p.toks[a.end : b.start])
    if raw[:2] == ["or", "with"]:
        raw = raw[:1] + raw[2:]  # "start with A or with B"
    between = [t for t in raw if t not in _BETWEEN_FILLER]
    # "A or B", "A or with B", and "A and B" when a question word asks which of them
    if between in (["vs"], ["versus"]):
        between = []  # "A vs B: which comes first?": the two put side by side, as with "or"
    alternatives = (between == [] and any(t in ("or", "vs", "versus") for t in p.toks[a.end : b.start])) or (
        between == [] and ("which" in words or "what" in words)
    )
    # "A and B ... which goes first?": a question word standing for one of them, not asking for
    # concepts ("which concepts should I pass through, and in what order") nor the steps "between
    # A and B"
    alternatives = alternatives or (
        between == ["and"]
        and (_wh_pronoun(p, asking) in ("which", "what") or _one_of(p, asking))
        and (not _between(p.toks, a, b) or _has(p, asking, EARLIER))  # "between A and B, which is earlier?"
    )
    in_order = between == ["and"] and _has(p, asking, (normalise("what order"), normalise("which order")))
    # "between A and B, where should I begin?", "A or B: where do I start?": the starting point of
    # the two is the one that comes first
    start_where = _wh_pronoun(p, asking) == "where" and any(t in ("begin", "start") for t in words)
    alternatives = alternatives or (between in (["and"], ["or"]) and start_where)
    if (
        not ((alternatives and (ordered or start_where)) or symmetric or in_order)
        or _has(p, asking, BOTH)
        or p.said_known
    ):
        return None
    governed = any(
        (r := p.roles.get(m.concept_id)) is not None and r.strength == 3 and not r.purpose for m in pair
    )
    if governed and not symmetric:
        return None  # "what do I need before A or B?": the concepts are what "before" governs
    return p.build("order", [_sub(p, a), _sub(p, b, "other")], transitive=True, cue="which first")


def _one_of(p: Parse, asking: Sequence[int]) -> bool:
    """Does "which" ask for one of the two, before a singular noun for a concept ("which class
    comes earlier", "which one")? (Normalised words are singular: the noun is read as written.)"""
    spans = p.text.spans
    for i in asking:
        if i in p.masked or p.toks[i] != "which" or i + 1 >= len(p.toks) or len(spans) != len(p.toks):
            continue
        if p.toks[i + 1] in _TOPIC_WORDS or p.toks[i + 1] == "one":
            written = p.question[spans[i + 1][0] : spans[i + 1][1]].lower()
            return normalise(written) == (written,)  # "class", "one"; not "classes", "concepts"
    return False


def _joined_to_unknown(
    p: Parse, joiners: frozenset[str] = frozenset({"or"}), *, commas: bool = False
) -> bool:
    """Is a joining word (or, with ``commas``, a comma) next to both a known name and words that
    name nothing ("X or <words>", "<words> and X", "X, <words>")?"""
    spans = p.text.spans
    if commas and len(spans) == len(p.toks):
        for i in range(len(p.toks) - 1):
            if p.question[spans[i][1] : spans[i + 1][0]].strip() != ",":
                continue
            sides = (i, i + 1)
            named = [k in p.masked for k in sides]
            unknown = [nameless(p.toks[k]) and k not in p.masked for k in sides]
            if (named[0] and unknown[1]) or (named[1] and unknown[0]):
                return True
    for i, t in enumerate(p.toks):
        if t not in joiners or i in p.masked or not 0 < i < len(p.toks) - 1:
            continue
        sides = (i - 1, i + 1)
        named = [k in p.masked for k in sides]
        unknown = [nameless(p.toks[k]) and k not in p.masked for k in sides]
        if (named[0] and unknown[1]) or (named[1] and unknown[0]):
            return True
    return False


# What may stand between the two names of a which-first question ("A first or B", "A, then B").
_BETWEEN_FILLER: Final = frozenset(
    normalise("the a an first then or earlier later before after starting start learning studying does do go")
)


def _one_of_two_unknown(p: Parse, form: str) -> Reading:
    """A two-concept form that names only one known concept: the other words name something the
    graph lacks, and an answer about the one concept would answer another question."""
    words = _unexplained_words(p)
    named = p.words_of[p.main.concept_id]
    other = (
        f"{words!r}, which is not a concept in this graph" if words else "a second concept it does not name"
    )
    return replace(
        p.build("about", [p.sub(p.main)], sureness=0.0, read_by="none"),
        problem=f"the question asks {form} of {named} and {other}",
        suggestions=_suggestions_for(p),
    )


def _unexplained_words(p: Parse) -> str:
    """The first run of words in the asking sentences that no vocabulary here explains and that
    names no concept ("tensor decompositions")."""
    asking = set(_asking(p))
    run: list[int] = []
    for i, t in enumerate(p.toks):
        if i in asking and i not in p.masked and nameless(t):
            if run and run[-1] != i - 1:
                break
            run.append(i)
    return p.text.surface(run[0], run[-1] + 1) if run else ""


_DIFFERENT: Final = frozenset(normalise("different differently differences distinguishes distinguish"))


def _relate(p: Parse) -> Reading | None:
    """ "How are A and B related?", "could you explain how A relates to B?", "what's the connection
    between A and B?", "what does A have to do with B?", "are A and B connected?"."""
    asking = _asking(p)
    toks = [p.toks[i] for i in asking if i not in p.masked]
    relation_word = any(t in RELATION_WORDS or t in RELATION_NOUNS for t in toks) or _has(
        p, asking, RELATION_PHRASES
    )
    # "how", "in what way", and "where does A stand in relation to B", "what links A with B":
    # a question word asking about the relation itself
    how = (
        "how" in toks
        or _has(p, asking, (normalise("in what way"), normalise("in which way")))
        or (_wh_pronoun(p, asking) in ("where", "what") and _pair(p) is not None)
    )
    noun_between = any(
        p.toks[i] in RELATION_NOUNS and p.toks[i + 1 : i + 2] == ("between",)
        for i in asking
        if i + 1 < len(p.toks)
    )
    to_do_with = _has(p, asking, (normalise("to do with"),))
    yes_no = _yes_no(p) and relation_word and "to" not in toks  # "are A and B related?"
    asker = "how" in toks or _wh_pronoun(p, asking) in ("where", "what")
    if not ((how and relation_word) or noun_between or to_do_with or yes_no or (asker and relation_word)):
        return None
    if _has(p, asking, WHAT_IS_RELATED):
        return None  # "what is related to both A and B?": concepts, not how the two relate
    if not any(i in p.masked for i in asking) and _why_told_before(p):
        return None  # "... asking why A has to come before B. What's the chain that links them?"
    if _has(p, asking, CONTRAST) or any(t in _DIFFERENT for t in toks):
        return None  # "how do A and B differ?", "what's different between them?": a contrast
    if any(s > 0 and p.toks[s - 1] == "as" for s, _, _ in p.nouns):
        return None  # "what do A and B have in common as prerequisites?": the shared ones
    pair = _pair(p)
    if pair is None:
        if (how or noun_between or to_do_with) and _joined_to_unknown(p, frozenset({"and", "to", "with"})):
            return _one_of_two_unknown(p, "how it relates")  # "how are <words> and X related?"
        # "how is <words> connected to X?", "where does <words> stand in relation to X?": the
        # words the graph lacks stand in the place of the first concept, before the relation word
        if asker and relation_word and _unexplained_before_the_name(p, asking):
            return _one_of_two_unknown(p, "how it relates")
        return None
    a, b = pair
    return p.build("relate", [_sub(p, a), _sub(p, b, "other")], transitive=True, cue="how related")


def _unexplained_before_the_name(p: Parse, asking: Sequence[int]) -> bool:
    """Two or more words no vocabulary explains, together, before the one name the asking part
    has, and after its question word: where a first concept would stand."""
    named = [i for i in asking if i in p.masked]
    if not named:
        return False
    run = longest = 0
    for i in asking:
        if i >= named[0]:
            break
        run = run + 1 if nameless(p.toks[i]) else 0
        longest = max(longest, run)
    return longest >= 2


def _wh_pronoun(p: Parse, asking: Sequence[int]) -> str:
    """The asking part's first question word when it stands alone ("what links A with B", "where
    does A stand"), not before a noun it asks for ("what prerequisites do A and B have in common":
    concepts); "" otherwise."""
    for i in asking:
        if i in p.masked or p.toks[i] not in WH:
            continue
        starts_noun = any(s == i + 1 for s, _, _ in p.nouns) or p.toks[i + 1 : i + 2] in _TOPIC_NOUNS
        return "" if starts_noun else p.toks[i]
    return ""


_TOPIC_NOUNS: Final = tuple((w,) for w in _TOPIC_WORDS)


# "What is / which concepts are related to ...": asks for concepts, not how two relate.
WHAT_IS_RELATED: Final = tuple(
    normalise(m) for m in ("what is related", "what s related", "which are related", "what else is related",
                           "what concepts are related", "which concepts are related", "what topics are related")
)  # fmt: skip


def _sub(p: Parse, m: Mention, role: str = "subject") -> Subject:
    return Subject(m.concept_id, role, p.words_of[m.concept_id])


# Which role of a relation is the subject (the concept whose answer set is computed).
_SUBJECT_ROLES: Final = frozenset({DEP, WHOLE})


def _subject_and_candidate(p: Parse, a: Mention, b: Mention) -> tuple[Mention, Mention, _Role] | None:
    """(subject, candidate, the role that makes the subject one) for a two-concept form, from the
    roles the grammar gave them; None when the roles do not tell them apart."""
    ra, rb = p.roles.get(a.concept_id), p.roles.get(b.concept_id)
    for x, y, rx, ry in ((a, b, ra, rb), (b, a, rb, ra)):
        if (
            rx is not None
            and rx.purpose
            and ry is None
            and (_first_after(p, x) or _said_goal(p.toks, y.start))
        ):
            # "why would someone aiming for Y have to study X beforehand?": an obligation ("have
            # to study X"), not a purpose, when an ordering adverb follows it or the other is the
            # learner's stated goal: X comes first, the other is what it is needed for
            return y, x, rx
    if ra is not None and rb is not None and ra.role == rb.role == DEP and ra.purpose != rb.purpose:
        # "why do I have to learn X before Y": the learner's purpose ("to learn X") names the
        # candidate; the ordering word ("before Y") the subject
        return (b, a, rb) if ra.purpose else (a, b, ra)
    if (
        ra is not None
        and rb is not None
        and ra.role == rb.role == DEP
        and {ra.strength, rb.strength} == {1, 3}
    ):
        # "A before B, needed or not?": the preposition placing one ("before B") outweighs the verb
        # found nearest the other; the other is the candidate
        return (a, b, ra) if ra.strength == 3 else (b, a, rb)
    if ra is not None and ra.role in _SUBJECT_ROLES and (rb is None or rb.role not in _SUBJECT_ROLES):
        return a, b, ra
    if rb is not None and rb.role in _SUBJECT_ROLES and (ra is None or ra.role not in _SUBJECT_ROLES):
        return b, a, rb
    # the candidate's role alone: "X is a prerequisite ..." (X the foundation) with Y unplaced
    if ra is not None and rb is None and ra.role not in _SUBJECT_ROLES:
        return b, a, replace(ra, role=DEP if ra.family != PART else WHOLE)
    if rb is not None and ra is None and rb.role not in _SUBJECT_ROLES:
        return a, b, replace(rb, role=DEP if rb.family != PART else WHOLE)
    return None


def _first_after(p: Parse, m: Mention) -> bool:
    """Does an ordering adverb ("first", "beforehand", "in advance") follow ``m`` at once (or
    after an adverb: "study X really first"), not negated? Not "to study X you first need Y",
    where the adverb is the next verb's."""
    return any(
        (s == m.end or (s == m.end + 1 and p.toks[m.end] in ADVERBS)) and not _negated(p.toks, s)
        for phrase in FIRST_WORDS
        for s, _ in _find_all(p.toks, phrase, p.masked | p.context)
    )


def _candidate_reading(p: Parse, form: str) -> Reading | None:
    """The reading of a yes/no or why question about two concepts: the subject's relation, the
    candidate asked about. Transitive unless the words say directly."""
    pair = _pair(p)
    if pair is None:
        return None
    placed = _subject_and_candidate(p, *pair)
    if placed is None:
        a, b = pair
        return replace(
            p.build(
                "needed_before",
                [_sub(p, b), _sub(p, a, "candidate")],
                transitive=True,
                sureness=0.3,
                read_by="fallback",
            ),
            form=form,
            problem=f"the question asks {'why' if form == 'why' else 'whether'} {p.words_of[a.concept_id]} and "
            f"{p.words_of[b.concept_id]} are linked, but not which one depends on the other",
        )
    subject, candidate, role = placed
    transitive = not p.direct
    asked: tuple[str, ...]
    if role.family in (LEARN, PREREQ):
        intent, asked = "needed_before", LEARNING
    elif role.family == BUILD:
        intent, asked = "builds_on", _intent_of(role)[1]
    elif role.family == PART:
        intent, asked = "parts", _intent_of(replace(role, role=WHOLE))[1]
        transitive = False
    else:
        return None
    if form == "why" and intent != "needed_before":
        intent, asked = "needed_before", LEARNING  # the chain is read in learning order
    return p.build(
        intent,
        [_sub(p, subject), _sub(p, candidate, "candidate")],
        transitive=transitive,
        cue=f"{form}: {role.cue}",
        asked=asked,
        form=form,
    )


def _why(p: Parse) -> Reading | None:
    """ "Why do I need X to learn Y?", "why is X a prerequisite for Y?", "what's the reason X is
    needed before Y", "... walk me through why it's needed". A why question about one concept
    ("why is X important?") or with words the graph lacks in the other place is not guessed;
    "what is X and why does it matter?" is about X."""
    opens = _starts(p, _opening(p), WHY_OPENERS)
    whys = [i for i in _asking(p) if p.toks[i] == "why" and i not in p.masked]
    anywhere = bool(whys)
    pair = _pair(p)
    named = [i for i in _asking(p) if i in p.masked]
    if pair is not None and (opens or anywhere or (not named and _why_told_before(p))):
        return _candidate_reading(p, "why")
    # "tell me why <words> is a must before X": a why that comes before the names governs them
    # (unlike "..., so I can show them why it matters")
    leads = any(p.toks[i] == "why" for i in _asking(p) if named and i < named[0])
    # (not a why of the asker's purpose: "..., so I can show them why it matters")
    purpose = anywhere and any(p.toks[i] in _PURPOSE for i in _asking(p) if i < whys[0])
    if pair is None and anywhere and not named and not purpose and p.ordered and _cued(p):
        # "My lecturer insists <words> has to come before X. Is there a chain that explains
        # why?": the why asks about the claim the asking points back at, which names one concept
        return _one_of_two_unknown(p, "why one is needed for the other")
    if pair is None and (opens or leads) and _cued(p) and _unexplained_words(p):
        # "why do I need <words the graph lacks> to learn X?", "tell me why <words> is a must
        # before X": the other place holds a topic the graph lacks
        return _one_of_two_unknown(p, "why one is needed for the other")
    if pair is not None or not opens:
        return None
    names = ", ".join(p.words_of[m.concept_id] for m in p.ordered)
    return replace(
        p.build("needed_before", [p.sub(p.main)], sureness=0.0, read_by="fallback"),
        form="why",
        problem=f"the question asks why about {names}, and the graph answers why one concept is needed "
        "for another",
        suggestions=_two_concept_suggestions(p),
    )


def _why_told_before(p: Parse) -> bool:
    """Is "why" said before the first name, in the sentence that holds it ("My students keep asking
    why X has to come before Y. What's the chain that links them?"): the asking points back at a
    why question about the names?"""
    if not p.ordered or len(p.sentence) != len(p.toks):
        return False
    first = p.ordered[0].start
    sid = p.sentence[first]
    return any(p.toks[i] == "why" and p.sentence[i] == sid and i not in p.masked for i in range(first))


# What opens a clause of the asker's purpose or reason.
_PURPOSE: Final = frozenset(normalise("so because since"))


def _two_concept_suggestions(p: Parse) -> tuple[str, ...]:
    x = p.words_of[p.main.concept_id]
    return (
        f"Why do I need <another concept> to learn {x}?",
        f"What does {x} need?",
        f"What comes after {x}?",
    )


# Units a learner may count that are no concepts: time, money, credit.
_MEASURES: Final = frozenset(
    normalise("""
    second seconds minute minutes hour hours day days week weeks month months year years semester
    semesters quarter quarters term terms credit credits unit units dollar dollars euro euros
    page pages hr hrs min mins
    """)
)


def _measure_counted(p: Parse) -> str | None:
    """The unit "how many" counts when it is a measure ("how many weeks"), or None."""
    toks = p.toks
    for i in _asking(p):
        after = i + 1
        if (
            toks[i] in ("many", "much")
            and i > 0
            and toks[i - 1] == "how"
            and after < len(toks)
            and after not in p.masked
            and toks[after] in _MEASURES
        ):
            return p.text.surface(after, after + 1)
    return None


def _count_noun_ends(p: Parse) -> bool:
    """Does "count" stand after the relation as a search query puts it ("X total prereqs count",
    "X prerequisites count incl indirect"): right after a relational noun, not negated?"""
    ends = {end for _, end, _ in p.nouns}
    return any(p.toks[i] == "count" and i in ends and not _negated(p.toks, i) for i in _asking(p))


def _count(p: Parse) -> Reading | None:
    """ "How many direct prerequisites does Y have?": the count of the rest of the question."""
    # "how many ...", "number of ...", and the imperative "count the direct prerequisites of X"
    if not (
        _has(p, _asking(p), COUNT_WORDS)
        or _starts(p, _opening(p), (("number", "of"), ("count",)))
        or _count_noun_ends(p)
    ):
        return None
    measured = _measure_counted(p)
    if measured is not None:
        # "how many weeks does it take to learn X?": a duration (or a price, a credit load), not
        # a number of concepts
        return replace(
            p.build("about", [p.sub(p.main)], sureness=0.0, read_by="none"),
            form="count",
            problem=f"the question asks how many {measured}, which the graph does not record; it "
            "counts concepts (how many prerequisites, how many topics before X)",
        )
    reading = read_frames(p, FRAMES)
    if reading.intent in ("about", "unknown") or reading.form:
        return replace(
            reading,
            form="count",
            sureness=min(reading.sureness, 0.3),
            problem=reading.problem or "the question asks how many, but not of which relation",
        )
    return replace(reading, form="count")


def _next(p: Parse) -> Reading | None:
    """ "I know A, B and C, what can I learn next?", "having learned A, what can I move on to?",
    "just wrapped up A. what's unlocked for me now?": every concept named is known (said so, or
    the condition of a question about the learner's own next step)."""
    named = {m.concept_id for m in p.ordered}
    asking = _asking(p)
    # a relation asked of the known concepts ("What opens up next?", "what does it unlock?"),
    # unless the learner asks it of themselves ("what's unlocked for me now?")
    relation = [v for v in p.verbs if v[0] in asking and v[2].left != v[2].right and not _says_known(p, v[0])]
    own = any(p.toks[i] in FIRST_PERSON for i in asking if i not in p.masked)
    conditions = {cid for cid, r in p.roles.items() if r is not None and r.cue == KNOWN_CONDITION}
    knows = p.said_known | (conditions if own and not relation and not p.nouns else frozenset())
    # "I have learned X already. What can I learn after it now?": what the learner can take up
    # now, not everything after X
    now = own and any(p.toks[i] == "now" for i in asking if i not in p.masked) and _modal_asked(p, asking)
    if not named or not named <= knows or (p.pronoun_roles and not now) or p.transitive_word:
        return None  # "I finished X. What does it unlock?" asks what comes after X
    if relation and not own:
        return None  # "I finished X. What opens up next?": what X unlocks
    if any(s in asking and cue.family != LEARN for s, _, cue in p.nouns):
        return None  # "... its parts": another relation
    if not any(p.toks[i] in NEXT_WORDS for i in asking if i not in p.masked):
        return None
    known = [Subject(m.concept_id, "known", p.words_of[m.concept_id]) for m in p.ordered]
    reading = p.build("next", known, transitive=True, cue="next")
    # one concept known only as a condition still to come ("once I pass X, which courses am I then
    # eligible for?"): what X itself opens is as likely a meaning as everything then open
    by_condition = len(named) == 1 and not named <= p.said_known
    agree = ("opens",) if by_condition and not condition_done(p.toks, p.ordered[0].start) else ()
    return replace(reading, subjects=tuple(known), agree=agree)


# What may stand between the names the learner knows and the word that says so ("A and B have
# been covered", "A is now done").
_TO_THE_KNOWN_WORD: Final = frozenset(
    normalise("and or have has had been is are was were already all now got")
)


def _says_known(p: Parse, at: int) -> bool:
    """Is the verb at ``at`` the word that says the names before it are known ("now that A and B
    have been covered": not "covered" as in "A is covered in B")?"""
    if (p.toks[at],) not in KNOWN_AFTER:
        return False
    k = at - 1
    while k >= 0 and k not in p.masked and p.toks[k] in _TO_THE_KNOWN_WORD:
        k -= 1
    return (
        k >= 0
        and k in p.masked
        and any(m.start <= k < m.end and m.concept_id in p.said_known for m in p.ordered)
    )


def _modal_asked(p: Parse, asking: Sequence[int]) -> bool:
    """Does the learner ask what they can do ("can I", "could I", "what I can")?"""
    toks = p.toks
    return any(
        toks[i] in ("can", "could") and (toks[i + 1 : i + 2] == ("i",) or toks[i - 1 : i] == ("i",))
        for i in asking
        if 0 < i < len(toks) - 1
    )


def _opens(p: Parse) -> Reading | None:
    """ "What does finishing X unlock for me?", "which courses does passing X make possible?",
    "what opens up once I know X?": one concept the learner has (said so, the condition "once I
    know X", or finishing it) and what it makes possible: what X itself opens, ready now, not
    everything after X nor everything the learner's background opens."""
    if len({m.concept_id for m in p.ordered}) != 1:
        return None
    x = p.main
    role = p.roles.get(x.concept_id)
    finishing = x.start > 0 and p.toks[x.start - 1] in COMPLETING
    because = any(_ends_with(p.toks, x.start, [c]) for c in CAUSAL)  # "available to me because of X"
    has = (
        x.concept_id in p.said_known
        or (role is not None and role.cue == KNOWN_CONDITION)
        or finishing
        or because
    )
    if not has:
        return None
    if p.transitive_word or p.direct:
        return None  # "what can it eventually lead to?", "what does it directly unlock?": after X
    asking = _asking(p)
    # X itself opens: the agent of a forward cue ("what does finishing X unlock"), or the
    # condition of "open up" / "make possible"; not "what's unlocked for me now" (what the
    # learner's whole background opens: what next)
    agent = (
        role is not None
        and role.family == LEARN
        and role.role == FOUND
        and role.cue != KNOWN_CONDITION
        and role.strength < 3  # a verb's agent ("X unlocks"), not a preposition ("right after X")
    )
    # finishing X, as the agent of the cue ("what does finishing X unlock"; "I finished X. What
    # does it unlock?" asks what comes after X), or what "opens up" once the learner has X
    if not ((finishing and agent) or _has(p, asking, OPENS)):
        return None
    reading = p.build("opens", [p.sub(x)], transitive=False, cue="opens")
    # X only a condition still to come ("which topics open up once you know X?"): everything then
    # open is as likely a meaning as what X itself opens (the mirror of ``_next``)
    condition = role is not None and role.cue == KNOWN_CONDITION and not (finishing or because)
    if condition and not condition_done(p.toks, x.start):
        return replace(reading, agree=("next",))
    return reading


def _start(p: Parse) -> Reading | None:
    """ "Where do I start if I want to take X?", "where should I begin for X?": the concepts X
    rests on that need nothing first (the starting points of X's closure)."""
    if len({m.concept_id for m in p.ordered}) != 1 or p.known or p.lesson:
        return None
    asking = [i for i in _asking(p) if i not in p.masked or i == p.main.start]
    words = [p.toks[i] if i not in p.masked else "" for i in asking]
    begins = [k for k, w in enumerate(words) if w in STARTS]
    # "where do I start (for X)", "which courses should I begin with (to take X)"; not "before I
    # begin with X" (X is what is begun)
    with_what = any(words[k + 1 : k + 2] == ["with"] and words[k + 2 : k + 3] != [""] for k in begins)
    if not begins or not ("where" in words or with_what):
        return None
    return p.build("start", [p.sub(p.main)], transitive=True, cue="where to start")


_IN_COMMON: Final = (normalise("in common"), normalise("common"))


def _in_common(p: Parse) -> Reading | None:
    """ "What do A and B have in common?", "what do A and B share?": with no relation named, the
    foundations both rest on: everything needed before each of them (transitively, unless the
    words say directly), never what either needs alone."""
    pair = _pair(p)
    if pair is None or p.verbs or p.nouns or p.known:
        return None
    asking = _asking(p)
    if not _has(p, asking, _IN_COMMON) or _wh_pronoun(p, asking) not in ("what", "which", ""):
        return None
    a, b = pair
    return p.build(
        "needed_before",
        [_sub(p, a), _sub(p, b, "other")],
        transitive=not p.direct,
        combine="both",
        cue="in common",
    )


def _remaining(p: Parse) -> Reading | None:
    """ "I already know A and B, what's left before Y?", "Goal: Y. Known: A. Remaining?", "what do
    I still have to learn to reach Y?": what Y needs, less what the learner knows and what that
    rests on (a goal with what is known and what is left, not the path from one to the other)."""
    if not p.known or p.second is not None or p.main.concept_id in {k.concept_id for k in p.known}:
        return None
    asking = _asking(p)
    if not any(p.toks[i] in REMAINING for i in asking if i not in p.masked):
        return None
    role = p.roles.get(p.main.concept_id)
    if role is not None and role.role != DEP:
        return None  # "what's left that builds on X"
    if _asks_of_a_subject(p) and _yes_no(p):
        # "does that cover everything Y needs, or is a course still missing?": whether it is
        # covered, and what is left (not "have A, B; target Y. outstanding prereqs?", whose
        # "have" says what the learner has)
        return p.build("needed_before", [p.sub(p.main)], transitive=True, cue=READY, form="ready")
    return p.build("needed_before", [p.sub(p.main)], transitive=True, cue=WHAT_IS_LEFT)


def _asks_of_a_subject(p: Parse) -> bool:
    """Does the asking sentence open with an auxiliary and its subject ("does that", "is there",
    "am I"), asking no question word: a yes/no question, not a terse "have A" or "which ... left"?"""
    words = _opening(p)
    subjects = PERSONS | DEMONSTRATIVES | PRONOUNS | PLACE_PROFORMS
    return (
        len(words) > 1
        and p.toks[words[0]] in YES_NO_AUX
        and words[1] not in p.masked
        and p.toks[words[1]] in subjects
        and not any(p.toks[i] in WH for i in _asking(p) if i not in p.masked)
    )


# The cue of a readiness reading (what the learner knows, held to what the goal needs).
READY: Final = "ready for"


def _ready(p: Parse) -> Reading | None:
    """ "Can I take Y if I've done A?", "am I ready for Y having taken A and B?", "do I have what I
    need for Y? I've completed A", "would I be cleared for Y?": a question the learner asks of
    themselves (an auxiliary and "I" open it) about one goal, with what they say they know: whether
    that, and what it rests on, covers everything the goal needs (not whether one of them is
    needed for it)."""
    words = _opening(p)
    toks = [p.toks[i] for i in words]
    # the auxiliary and "I" open it, or follow what the learner has done ("Having finished A, am I
    # allowed to take Y?"); or it asks whether it is possible for the learner ("is it possible for
    # me to take Y after finishing A?", "would it be ok for me to ...")
    k = next((k for k in range(len(toks) - 1) if toks[k] in _ABLE and toks[k + 1] in _LEARNER), None)
    if k is None:
        k = next(
            (
                k
                for k in range(len(toks) - 3)
                if toks[k] in _ABLE and toks[k + 1] == "it" and _for_the_learner(toks[k + 2 : k + 6])
            ),
            None,
        )
    conditions = {cid for cid, r in p.roles.items() if r is not None and r.cue == KNOWN_CONDITION}
    # "after finishing A", "after completing A": done before the learner asks
    done_after = {
        m.concept_id
        for m in p.ordered
        if m.start >= 2 and p.toks[m.start - 2] == "after" and p.toks[m.start - 1] in _DONE_VERBS
    }
    known = {kk.concept_id for kk in p.known} | conditions | done_after
    if k is None:
        return _enough(p, words, known)
    # "can I take Y after A?": asked of the learner, what they take Y after is what they have
    # done (not "should I take A before Y", which asks about A)
    first = p.ordered[0].start if p.ordered else 0
    after = [m for m in p.ordered if m.start > first and p.toks[m.start - 1] == "after"]
    # ... and the names listed with it ("would I be ready for Y after A and B?")
    after += [m for m in p.ordered if after and m.start > after[0].start and _listed_after(p, after[0], m)]
    known |= {m.concept_id for m in after}
    # the goal may head the question as its label ("Y: am I allowed in with only A behind me?")
    label = set(words[: _name_label(p, words)])
    if k is None or any(i in p.masked and not _named_known(p, i, known) for i in words[:k] if i not in label):
        return None
    # a yes/no question: no question word asks ("how can I get to Y" asks for a way), unless it
    # opens what the learner has ("do I have what I need for Y")
    asks = WH - {"anything", "something"}
    if any(t in asks for t in toks[:k]) or any(
        t in asks and toks[j - 1] != "have" for j, t in enumerate(toks) if j > k
    ):
        return None
    goals = [m for m in p.ordered if m.concept_id not in known and p.tags.get(m.concept_id) != "example"]
    if not known or len({m.concept_id for m in goals}) != 1:
        return None
    reading = p.build("needed_before", [p.sub(goals[0])], transitive=True, cue=READY, form="ready")
    said = {s.concept_id for s in reading.subjects}
    extra = tuple(Subject(c, "known", p.words_of[c]) for c in sorted(known - said) if c in p.words_of)
    return replace(reading, subjects=(*reading.subjects, *extra))


def _name_label(p: Parse, words: Sequence[int]) -> int:
    """How many of ``words`` are one concept's name opening the sentence before a colon ("ECON
    260: am I ...?"): 0 when they are not."""
    m = next((m for m in p.ordered if words and m.start == words[0]), None)
    spans = p.text.spans
    if m is None or m.end >= len(spans) or p.question[spans[m.end - 1][1] : spans[m.end][0]].strip() != ":":
        return 0
    return sum(1 for i in words if i < m.end)


def _listed_after(p: Parse, first: Mention, m: Mention) -> bool:
    """Is ``m`` listed with ``first``: only names, commas and "and" between them?"""
    return all(i in p.masked or p.toks[i] in ("and", "plus", "also") for i in range(first.end, m.start))


def _for_the_learner(toks: Sequence[str]) -> bool:
    """ "(be) possible for me", "(be) ok for me", "allowed for us": a possibility for the learner."""
    rest = [t for t in toks if t not in ("be", "really", "still")]
    if len(rest) >= 2 and rest[0] in _POSSIBLE and rest[1] == "to":
        return True  # "is it possible to enroll in Y with A done?": asked by the learner, of themselves
    return len(rest) >= 3 and rest[0] in READINESS | _POSSIBLE and rest[1] == "for" and rest[2] in _ME


def _enough(p: Parse, words: Sequence[int], known: set[str]) -> Reading | None:
    """ "Is A enough for Y?", "will A and B be sufficient to take Y?": whether what is named before
    the word of sufficiency covers everything the one concept named after it needs (readiness);
    never one concept said needed for the other."""
    at = next((j for j, i in enumerate(words) if p.toks[i] in _SUFFICIENT), None)
    if at is None or not _yes_no(p):
        return None
    cut = words[at]
    before = {m.concept_id for m in p.ordered if m.end <= cut} | (known & {m.concept_id for m in p.ordered})
    after = [m for m in p.ordered if m.start > cut and m.concept_id not in before]
    if not before or len({m.concept_id for m in after}) != 1:
        return None
    reading = p.build("needed_before", [p.sub(after[0])], transitive=True, cue=READY, form="ready")
    extra = tuple(Subject(c, "known", p.words_of[c]) for c in sorted(before) if c in p.words_of)
    return replace(reading, subjects=(*reading.subjects, *extra))


_POSSIBLE: Final = frozenset(normalise("possible ok okay fine alright"))
_DONE_VERBS: Final = frozenset(normalise("finishing completing passing clearing doing taking"))
_ME: Final = frozenset(normalise("me us"))
# Words that ask whether what the learner has is enough.
_SUFFICIENT: Final = frozenset(normalise("enough sufficient suffice suffices adequate"))


def _named_known(p: Parse, i: int, known: set[str]) -> bool:
    """Is token ``i`` part of the name of a concept the learner knows?"""
    return any(m.start <= i < m.end and m.concept_id in known for m in p.mentions)


_LEARNER: Final = frozenset(normalise("i we"))
# Auxiliaries that ask whether the learner may or can ("can I", "am I", "would I be"), not whether
# they must ("must I have A down before B?" asks whether A is needed).
_ABLE: Final = YES_NO_AUX - frozenset(normalise("must should shall"))


def _check(p: Parse) -> Reading | None:
    """ "Is X a prerequisite for Y?", "do I need X before I start Y?", "does Y depend on X?". With
    one concept, only a question whether a set is empty ("does X have prerequisites?", "do I need
    anything before X?") is read, as that set; "do I need a GPU for X?" names something the graph
    lacks. Two questions in one ("is A needed for B and is B needed for A?") are not guessed."""
    if not _yes_no(p):
        return None
    if _two_questions(p):
        return replace(
            p.build("about", [p.sub(p.main)], sureness=0.0, read_by="none"),
            problem="the question asks two yes/no questions at once; ask them one at a time",
            suggestions=_suggestions_for(p),
        )
    if _pair(p) is None:
        asking = _asking(p)
        if _unknown_candidate(p):
            # "Is glacier dynamics a prerequisite of X?", "do I need a GPU for X?"
            return _one_of_two_unknown(p, "whether one is needed for the other")
        if p.nouns or any(p.toks[i] in EXISTENTIAL for i in asking) or _any(p.toks, ABOUT, p.masked):
            return None  # whether a set is empty (the set answers it), or a request to describe X
        return replace(
            p.build("about", [p.sub(p.main)], sureness=0.0, read_by="none"),
            problem=f"the question asks a yes/no question about {p.words_of[p.main.concept_id]} "
            "alone; the graph answers whether one concept is needed for another",
            suggestions=_suggestions_for(p),
        )
    reading = _candidate_reading(p, "yes_no")
    if reading is not None and reading.problem is not None:
        # no learning role told the two apart: a symmetric relation ("does A contrast with B?",
        # "is A related to B?") asks whether the other concept is among the first one's
        base = read_frames(p, FRAMES)
        if base.sure and base.intent in ("contrasts", "related") and base.other is not None:
            a, b = base.subject, base.other
            subs = tuple(
                replace(s, role="candidate") if s.concept_id == b else s
                for s in base.subjects
                if s.concept_id in (a, b)
            )
            return replace(base, subjects=subs, combine="", form="yes_no")
    return reading


def _two_questions(p: Parse) -> bool:
    """Does a second yes/no question follow the first in the asking sentence ("..., and is B ...",
    "... and also is B ...")?"""
    words = _opening(p)
    toks = [p.toks[i] for i in words]
    for k in range(1, len(toks) - 2):
        if toks[k] not in {"and", "or"}:
            continue
        j = k + 1
        while j < len(toks) and toks[j] in ADVERBS:
            j += 1
        if j + 1 < len(toks) and toks[j] in YES_NO_AUX and words[j + 1] in p.masked:
            return True
    return False


def _unknown_candidate(p: Parse) -> bool:
    """In "AUX [I] [need] [a] <words> ...", do the words where the candidate stands name nothing?"""
    words = _opening(p)
    k = 1
    while k < len(words) and (p.toks[words[k]] in PERSONS or p.toks[words[k]] in _CANDIDATE_LEAD):
        k += 1
    return (
        k < len(words)
        and words[k] not in p.masked
        and p.toks[words[k]] not in VOCABULARY
        and p.toks[words[k]].isalpha()
    )


# What may stand between a yes/no question's auxiliary and its candidate ("do I need a ...").
_CANDIDATE_LEAD: Final = frozenset(normalise("need have know learn study take the a an any some to"))


# The form frames, tried before the relation frames (``frames.FRAMES``).
FORM_FRAMES: Final = (
    ("what it opens", _opens),
    ("not recorded in the graph", _unsupported),
    ("which first", _order),
    ("how related", _relate),
    ("in common", _in_common),
    ("why", _why),
    ("how many", _count),
    ("where to start", _start),
    ("what next", _next),
    ("ready for", _ready),
    ("what is left", _remaining),
    ("yes or no", _check),
)
