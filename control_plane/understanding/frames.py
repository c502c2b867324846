"""Frames: one small, named reading rule per question shape, tried in order over a :class:`Parse`.

A frame looks at the analysed question (``analysis.Parse``: words, cues, the concepts it names and
their roles) and either returns the :class:`Reading` of its shape or ``None`` to let the next frame
try. :data:`FRAMES` is the table the reader runs, most specific shape first; the last frame always
reads something (an intent from the subject's role, or an unsure "about"). The words a frame
reads are data in ``lexicon``; the token helpers are in ``grammar``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Final

from control_plane.understanding.analysis import Parse
from control_plane.understanding.grammar import (
    _ABOUT_TAIL,
    _NEED_WORDS,
    _affirmed,
    _any,
    _bare_lesson_for,
    _between,
    _contrasted,
    _ends_with,
    _find_all,
    _hops,
    _intent_of,
    _orphan_role,
    _Role,
    _skip_back,
    _split_by_name,
    _unexplained_anywhere,
    _unknown_cue_object,
    _unknown_known,
    _unknown_object,
    _unknown_slot,
    _unknown_subject,
)
from control_plane.understanding.lexicon import (
    ABOUT,
    ABOUT_COPULAS,
    ADVERBS,
    BARE,
    BEFORE_MARKERS,
    BETWEEN_PROFORMS,
    BOTH,
    CONTRAST,
    DEMONSTRATIVES,
    DEP,
    EXACT,
    FIRST_WORDS,
    FOUND,
    GOAL_REACH,
    LEARN,
    NEIGHBOUR,
    PART,
    PATH,
    PATH_END,
    PATH_START,
    PERSONS,
    PLAN,
    PLAN_NAMED,
    POLITE,
    PREPOSITIONS,
    PREREQ,
    RELATED_WORDS,
)
from control_plane.understanding.names import ARROW
from control_plane.understanding.reading import LEARNING, Mention, Reading
from data_plane.relations import RELATED

__all__ = ["FRAMES", "Frame", "read_frames"]

Frame = Callable[[Parse], "Reading | None"]


def _other_place_unknown(p: Parse) -> Reading | None:
    """ "the path from <something the graph lacks> to X": words stand in a concept's place but name
    none, so an answer about X alone would answer another question."""
    toks, masked = p.toks, p.masked
    if p.second is not None:
        return None
    unknown = (
        _unknown_slot(toks, masked, p.sentence)
        or _unknown_subject(toks, masked, p.verbs)
        or _unknown_object(toks, masked, p.verbs, p.sentence)
        or _unknown_cue_object(p.text, toks, masked, [*p.verbs, *p.nouns], p.sentence)
    )
    # A plan or a path that leaves out what the learner knows needs to know what that is; other
    # questions ("I studied philosophy; what does X rest on?") are answered the same either way.
    ordering = _any(toks, (*PATH, *PLAN, *PATH_END, *GOAL_REACH, *BEFORE_MARKERS), masked) or bool(
        _NEED_WORDS.intersection(toks)
    )
    if unknown is None and ordering and (span := _unknown_known(toks, masked)) is not None:
        unknown = span
    if unknown is None and ARROW in toks:
        unknown = _unexplained_anywhere(toks, masked)  # "<words the graph lacks> -> X"
    if unknown is None:
        return None
    unknown_words = p.text.surface(*unknown)
    return replace(
        p.build(
            "path" if _any(toks, PATH, masked) else "about",
            [p.sub(p.main)],
            sureness=0.0,
            read_by="fallback",
        ),
        problem=f"the question also names {unknown_words!r}, which is not a concept in this graph",
    )


def _between_pair(p: Parse) -> bool:
    """ "the steps between them": a path unless the words ask how the two differ or relate."""
    return _any(p.toks, BETWEEN_PROFORMS, p.masked) and not _any(
        p.toks, (*CONTRAST, *RELATED_WORDS, *NEIGHBOUR), p.masked
    )


def _path_from_known(p: Parse) -> Reading | None:
    """ "I know A; my goal is B, what's in between?", "comfortable with A, what's the route to get to
    B?": where the learner stands is where the path starts. A plan asked for by name ("a study
    plan for B, I already know A") leaves A out instead (``_plan``)."""
    toks, masked, main = p.toks, p.masked, p.main
    if p.second is not None or len(p.known) != 1:
        return None
    goal_role = p.roles.get(main.concept_id)
    goal = (goal_role is not None and goal_role.purpose) or _ends_with(
        toks, _skip_back(toks, main.start, masked), (*PATH_END, *GOAL_REACH), masked
    )
    if (goal or _between_pair(p) or _affirmed(toks, PATH, masked | p.context)) and not _affirmed(
        toks, PLAN_NAMED, masked | p.context
    ):
        return p.build(
            "path",
            [replace(p.known[0], role="subject"), p.sub(main, "target")],
            transitive=True,
            cue="path",
        )
    return None


# Words after which "from" says unlike, not where a path starts.
_UNLIKE: Final = frozenset({"different", "differ", "differs", "distinct", "distinguished", "apart", "away"})


def _path_between(p: Parse) -> Reading | None:
    """A path: "from A to B", "how does A lead to B", "what connects A to B", "A -> B"."""
    toks, masked, main, second, subjects = p.toks, p.masked, p.main, p.second, p.subjects
    if second is None:
        return None
    if any(t == "from" and toks[k - 1 : k] and toks[k - 1] in _UNLIKE for k, t in enumerate(toks)):
        return None  # "how is A different from B?": a contrast, not a way from B
    ends_marked = any(
        _ends_with(toks, _skip_back(toks, m.start, masked), [q], masked)
        for m in subjects
        for q in (*PATH_START, *PATH_END)
    )
    if not (
        _any(toks, PATH, masked)
        or ("from" in toks and "to" in toks)
        or (
            (
                _between(toks, main, second) or _between_pair(p)
            )  # not "the difference / the link between A and B"
            and not _any(toks, (*CONTRAST, *RELATED_WORDS, *NEIGHBOUR), masked)
        )
        or ends_marked
        or ARROW in toks
    ):
        return None
    # unmarked, a path runs in the question's order ("what connects A to B", "how does A lead to
    # B"), whichever of the two a cue governs
    a, b2 = sorted((main, second), key=lambda m: m.start)
    for m in subjects:
        bb = _skip_back(toks, m.start, masked)
        other = next(x for x in subjects if x is not m)
        if _ends_with(toks, bb, PATH_START, masked) or toks[m.end : m.end + 1] == (ARROW,):
            a, b2 = m, other
        elif _ends_with(toks, bb, PATH_END, masked):
            a, b2 = other, m
    return p.build("path", [p.sub(a), p.sub(b2, "target")], transitive=True, cue="path")


def _contrast(p: Parse) -> Reading | None:
    """ "What does X contrast with?", "X versus Y", "an alternative to X"."""
    quiet = p.masked | p.context  # context sentences name no relation of the question
    if not (_contrasted(p.toks, quiet, p.masked) or _split_by_name(p.toks, CONTRAST, p.masked, p.context)):
        return None
    subs = [p.sub(p.main)] + ([p.sub(p.second, "other")] if p.second is not None else [])
    return p.build("contrasts", subs, cue="contrast")


def _neighbourhood(p: Parse) -> Reading | None:
    """ "What is connected to X?", "within 2 hops of X", "linked to both A and B"."""
    toks, masked, main, second, counts = p.toks, p.masked, p.main, p.second, p.counts
    quiet = masked | p.context
    named = p.roles.get(main.concept_id)
    # "before I touch X": a person's act, not a link between concepts
    acts = frozenset(i for i in range(1, len(toks)) if toks[i - 1] in PERSONS and (toks[i],) in NEIGHBOUR)
    one_hop = _hops(toks) == 1 and not _any(toks, [q for q in NEIGHBOUR if q != ("hop",)], quiet | acts)
    # "topics linked to X? no particular type, just related": the word that names one of the
    # graph's relations outranks the generic "linked".
    related_named = (
        _affirmed(toks, RELATED_WORDS, quiet) and not p.verbs and (counts or {}).get(RELATED, 0) > 0
    )
    # "which links come straight after X": the noun after the question word names the items asked
    # for; the verb names the relation
    link_items = frozenset(
        i
        for q in NEIGHBOUR
        for i, _ in _find_all(toks, q, quiet | acts)
        if i > 0 and toks[i - 1] in {"which", "what"} and named is not None and named.strength >= 2
    )
    # "Lessons on X? Links pls.": with lessons asked for, the noun "links" with no preposition
    # after it asks for the lessons' links, not for what X links to
    lesson_links = frozenset(
        i
        for i, t in enumerate(toks)
        if p.lesson
        and t == "link"
        and toks[i + 1 : i + 2] not in (("to",), ("with",), ("between",), ("from",))
    )
    if not (
        _any(toks, NEIGHBOUR, quiet | acts | link_items | lesson_links)
        and not related_named
        and not (
            # "which modules have X as an immediate prereq (one hop forward only)", "immediate
            # downstream of X, one hop": the relation is named, "one hop" says how far along it.
            one_hop
            and (
                (named is not None and (named.strength >= 2 or named.cue != "for"))
                # "For X: list only the immediately preceding prerequisites. One hop back."
                or ((named is None or named.cue == "for") and any(c.noun for _, _, c in p.nouns))
            )
        )
    ):
        return None
    if second is None and not p.excluded and "hop" not in toks and (counts or {}).get(RELATED, 0) > 0:
        # "anything connected to X?", "topics linked to X": a link of no named kind and no
        # distance is the graph's own association relation when it has one (every blind
        # writer who asked this way meant `related`, not every relation). A distance ("within
        # 2 hops") or a second concept ("to both A and B", "to A but not to B") still reads
        # the structure.
        return p.build("related", [p.sub(main)], cue="connected")
    subs = [p.sub(main)] + ([p.sub(second, "other")] if second is not None else [])
    return p.build("neighbours", subs, combine="both" if second is not None else "", cue="connected")


def _related(p: Parse) -> Reading | None:
    """ "What is related to X?" (the graph's ``related`` relation)."""
    if not (_any(p.toks, RELATED_WORDS, p.masked | p.context) and not p.verbs):
        return None
    subs = [p.sub(p.main)] + ([p.sub(p.second, "other")] if p.second is not None else [])
    return p.build("related", subs, combine="both" if p.second is not None else "", cue="related")


def _asked_role(p: Parse) -> _Role | None:
    """The subject's role, unless it comes from a purpose in a sentence that only sets the scene:
    "I want to study X piece by piece. What smaller topics is it divided into?" (the question is
    the second sentence, and nothing in it was read; "to study X" is background)."""
    role = p.roles.get(p.main.concept_id)
    if (
        role is not None
        and p.asking_only
        and role.purpose
        and not any(s in p.asking_only for s, _, _ in (*p.verbs, *p.nouns))
        and not p.pronoun_roles  # "... What comes right before it?" reads the asking sentence
    ):
        return None
    return role


def _conflict(p: Parse) -> Reading | None:
    """Cues that give the subject different roles: unsure, with the readings they suggest."""
    if len(p.conflicts) <= 1:
        return None
    role = _asked_role(p)
    readings = sorted({_intent_of(r)[0] for r in p.agreeing})
    return p.build(
        _intent_of(role)[0] if role else "about",
        [p.sub(p.main)],
        sureness=0.4,
        read_by="conflict",
        alternatives=tuple(readings),
    )


def _two_with_lesson_or_plan(p: Parse) -> Reading | None:
    """ "start at A and finish at B, step by step" read as a plan for A would drop B: unsure."""
    if p.second is None or not (p.lesson or p.plan):
        return None
    return p.build(
        "study_plan" if p.plan else "lessons_covering",
        [p.sub(p.main)],
        sureness=0.4,
        read_by="conflict",
        alternatives=("path", "study_plan" if p.plan else "lessons_covering"),
    )


def _lessons(p: Parse) -> Reading | None:
    """Lesson questions: lessons covering X, or lessons to take before X."""
    if not p.lesson:
        return None
    toks, masked, main = p.toks, p.masked, p.main
    role = _asked_role(p)
    # "which lesson should I read to learn X" names what the lesson is for: X itself. Only an
    # ordering word ("before X", "X's prerequisites", "prepare for X") asks for earlier lessons.
    purpose = role is not None and role.purpose
    # "my daughter wants to do X: what lessons must she finish before that?": an ordering
    # word elsewhere (a pronoun's role) outranks the purpose.
    ordering_word = any(r.role == DEP and not r.purpose for r in p.pronoun_roles)
    purpose = purpose and not ordering_word
    before = (
        role is not None
        and role.role == DEP
        and role.family in (LEARN, PREREQ)
        and not purpose
        and not (role.cue == "for" and _bare_lesson_for(toks, _skip_back(toks, main.start, masked) - 1))
    )
    if (role is None or purpose) and _affirmed(toks, FIRST_WORDS, masked | p.context):
        # "X: lessons to do first?", "I'm about to start X: which lessons first, to be ready?"
        return p.build("lessons_before", [p.sub(main)], transitive=not p.direct, cue="first")
    if before:
        # Lessons to take before X prepare for all X needs ("lessons that teach the
        # prerequisites of X"), unless the question says "direct".
        return p.build(
            "lessons_before", [p.sub(main)], transitive=not p.direct, cue=role.cue if role else "lesson"
        )
    if role is not None and not purpose and role.strength >= 2 and role.family != PART and role.role == FOUND:
        # "which modules have X as a prerequisite": what comes after X, asked of lessons (or
        # of topics called modules); lessons covering X would answer another question.
        return p.build(
            "lessons_covering",
            [p.sub(main)],
            sureness=0.4,
            read_by="conflict",
            alternatives=("lessons_covering", _intent_of(role)[0]),
        )
    return p.build("lessons_covering", [p.sub(main)], cue="lesson")


def _plan(p: Parse) -> Reading | None:
    """A study plan reaches X ("a study plan for X"); "after X" is no plan."""
    role = _asked_role(p)
    if not (p.plan and (role is None or role.role == DEP)):
        return None
    return p.build("study_plan", [p.sub(p.main, "target")], transitive=True, cue="plan")


def _beforehand(p: Parse) -> Reading | None:
    """ "I'm aiming for X. What should I study beforehand?": an ordering adverb points back at X
    (lesson and plan questions were read above)."""
    role = _asked_role(p)
    if not ((role is None or role.purpose) and _affirmed(p.toks, FIRST_WORDS, p.masked | p.context)):
        return None
    return p.build("needed_before", [p.sub(p.main)], transitive=not p.direct, cue="beforehand")


def _path_to_one(p: Parse) -> Reading | None:
    """ "the learning path that ends at X" with one concept: what leads up to X (not "not the whole
    chain", not "learning path <words the graph lacks> -> X")."""
    if not (
        _asked_role(p) is None
        and _affirmed(p.toks, PATH, p.masked | p.context)
        and _unexplained_anywhere(p.toks, p.masked) is None
    ):
        return None
    return p.build("needed_before", [p.sub(p.main)], transitive=True, cue="path")


def _role_or_orphan(p: Parse) -> _Role | None:
    """The subject's role; with none, the role of a relational noun attached to no name ("I'm
    building a module on X. What's the full chain of prerequisites?" is said of X)."""
    role = _asked_role(p)
    if role is None and p.second is None:
        return _orphan_role(p.toks, [n for n in p.nouns if n[0] not in p.context], p.masked, p.sentence)
    return role


def _about(p: Parse) -> Reading | None:
    """No relation read: "RAG?", "what's RAG", "tell me about RAG" is about X; anything else is an
    unsure guess."""
    if _role_or_orphan(p) is not None:
        return None
    toks, masked, main, sentence, asks = p.toks, p.masked, p.main, p.sentence, p.asks
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
        and not (len(sentence) == len(toks) and sentence[i] > sentence[main.start] and not asks[sentence[i]])
    )
    b0 = _skip_back(toks, main.start, masked)
    # "what's X" ("in simple words"), not "what's the opposite of X" or "whats X based off of"
    rest = [
        t
        for k, t in enumerate(toks[main.end :], main.end)
        if t not in POLITE and (len(sentence) != len(toks) or sentence[k] == sentence[main.start])
    ]  # "what exactly is X? heard it a lot at work": the next sentence is a remark
    copula_about = any(_ends_with(toks, b0, [q]) for q in ABOUT_COPULAS) and (
        not rest or _any(rest, [q for q in ABOUT if q not in ABOUT_COPULAS])
    )
    # "RAG?? never heard of it, whats that": the copula's subject points back at the name
    pointed_about = any(
        j < len(toks)
        and j > main.end
        and toks[j] in DEMONSTRATIVES | {"it"}
        and all(t in POLITE or t in ADVERBS or t in EXACT for t in toks[j + 1 :])
        for q in ABOUT_COPULAS
        for _, j in _find_all(toks, q, masked)
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
        or p.briefing
        or _any(toks, [q for q in ABOUT if q not in ABOUT_COPULAS], masked)
    )
    # "For a label I need a plain-language explanation of X": the learner's need is no relation
    own_needs = all(
        toks[vs] in _NEED_WORDS and any(t in PERSONS for t in toks[max(0, vs - 3) : vs])
        for vs, _, _ in p.verbs
    )
    if about and (not p.relational or (own_needs and p.verbs and not (p.nouns or p.lesson or p.plan))):
        return p.build("about", [p.sub(main)], cue="about")
    return p.build(
        "about",
        [p.sub(main)],
        sureness=0.3,
        read_by="fallback",
        alternatives=("prerequisites", "dependents", "about"),
    )


def _each_of_two(p: Parse, a: Mention, b: Mention) -> bool:
    """ "needed for A and also for B": the relation asked of each concept on its own (the
    preposition said again after "and also"), so the answer is what stands in it to both."""
    first, second = sorted((a, b), key=lambda m: m.start)
    gap = p.toks[first.end : second.start]
    lead = p.toks[first.start - 1] if first.start > 0 else ""
    return len(gap) == 3 and gap[:2] == ("and", "also") and gap[2] == lead and lead in PREPOSITIONS


# Words that ask for what either of two concepts has (the union).
_EITHER: Final = tuple(
    (w,) for w in ("either", "any", "or", "combined", "together", "all", "altogether", "whole", "union")
)


def _relational(p: Parse) -> Reading | None:
    """The intent the subject's role gives ("what does X need", "what builds on X"), combined with
    a second concept ("both", "either", "before X ... that Y builds on")."""
    role = _role_or_orphan(p)
    if role is None:
        return None
    main, second = p.main, p.second
    intent, asked = _intent_of(role)
    is_transitive = p.trans(role, False)
    if intent == "prerequisites" and is_transitive:
        intent, asked = "needed_before", LEARNING
    if intent == "dependents" and is_transitive:
        asked = LEARNING  # everything after X: the mirror of everything needed before X
    if p.excluded:
        return p.build(intent, [p.sub(main)], transitive=is_transitive, cue=role.cue, asked=asked)
    if second is None:
        return p.build(intent, [p.sub(main)], transitive=is_transitive, cue=role.cue, asked=asked,
                       sureness=0.95 if role.strength >= 2 else 0.9)  # fmt: skip
    r2 = p.roles.get(second.concept_id)
    if r2 is None:
        return p.build(
            intent, [p.sub(main)], transitive=is_transitive, cue=role.cue, asked=asked, sureness=0.85
        )
    intent2, asked2 = _intent_of(r2)
    if (
        (intent2, asked2) == (intent, asked)
        or (intent2 == "prerequisites" and intent == "needed_before")
        or (intent == "prerequisites" and intent2 == "needed_before")
    ):
        both = _any(p.toks, BOTH, p.masked) or _each_of_two(p, main, second)
        reading = p.build(intent, [p.sub(main), p.sub(second, "other")], transitive=is_transitive,
                          combine="both" if both else "either", cue=role.cue, asked=asked)  # fmt: skip
        if both or _any(p.toks, _EITHER, p.masked) or r2 is not p.roles.get(main.concept_id):
            return reading  # (two names with roles of their own: two clauses, read on as such)
        # "the topics that A and also B need": what both need, or what either needs? The words
        # do not say, and the two answers differ
        return replace(
            reading,
            sureness=min(reading.sureness, 0.5),
            problem=f"the question names {p.words_of[main.concept_id]} and {p.words_of[second.concept_id]} "
            "but not whether it asks for what both have in common or for what either has",
            suggestions=(
                f"What do {p.words_of[main.concept_id]} and {p.words_of[second.concept_id]} both need?",
                f"What does either {p.words_of[main.concept_id]} or {p.words_of[second.concept_id]} need?",
            ),
        )
    learn_first = {intent, intent2} & {"needed_before", "prerequisites"}
    if learn_first and {intent, intent2} & {"builds_on"}:
        x, y = (main, second) if intent in learn_first else (second, main)
        return p.build("before_uses", [p.sub(x), p.sub(y, "other")], transitive=True, cue=role.cue)
    return p.build(intent, [p.sub(main)], transitive=is_transitive, cue=role.cue, asked=asked, sureness=0.4,
                   read_by="conflict", alternatives=(intent, intent2))  # fmt: skip


# The reader's frames, most specific first; ``_about`` and ``_relational`` between them read
# every question that reaches them.
FRAMES: Final[tuple[tuple[str, Frame], ...]] = (
    ("other place unknown", _other_place_unknown),
    ("path from what is known", _path_from_known),
    ("path between two", _path_between),
    ("contrast", _contrast),
    ("neighbourhood", _neighbourhood),
    ("related", _related),
    ("conflicting cues", _conflict),
    ("two concepts with lessons or a plan", _two_with_lesson_or_plan),
    ("lessons", _lessons),
    ("study plan", _plan),
    ("beforehand", _beforehand),
    ("path to one concept", _path_to_one),
    ("about", _about),
    ("relational", _relational),
)


def read_frames(p: Parse, frames: tuple[tuple[str, Frame], ...] = FRAMES) -> Reading:
    """The reading of the first frame that reads ``p``."""
    for _, frame in frames:
        reading = frame(p)
        if reading is not None:
            return reading
    raise AssertionError("the last frame reads every parse")  # pragma: no cover
