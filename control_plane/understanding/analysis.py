"""One pass over a question before any frame reads it: the words (normalised, respelt), the
concepts it names, its time words, its sentences and which of them ask, the relational cues, and
the role each named concept takes. The result is a :class:`Parse`; ``frames`` turn it into a
``Reading``. A question that cannot be read at all (empty, not English, a name the graph lacks,
a statement) ends here with a ``Reading`` that says why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from control_plane.understanding.grammar import (
    _CONCEPT_NOUNS,
    _TOPIC_WORDS,
    KNOWN_CONDITION,
    WHAT_IS_LEFT,
    _any,
    _asides,
    _asked_noun,
    _briefing,
    _cannot_without,
    _capitalised_compound,
    _ends_with,
    _find_all,
    _foreign_modifier,
    _hops,
    _in_sentence_of,
    _learners_own_time,
    _made_thing,
    _map_relations,
    _name_as_verb,
    _names_unknown,
    _negated,
    _occurrences,
    _particle_before_pronoun,
    _quoted,
    _Role,
    _role_at,
    _said_goal,
    _said_known,
    _same_sentence,
    _scope,
    _sentences,
    _skip_back,
    _skip_forward,
    _stranded,
    _suggestions,
    _unknown_argument,
    _verb_before_name,
)
from control_plane.understanding.intent_model import (
    BAD_INPUT,
    LABEL_READING,
    IntentModel,
    compatible_labels,
    question_tokens,
    second_opinion,
)
from control_plane.understanding.lexicon import (
    ABOUT,
    ADVERBS,
    AFTER_MARKERS,
    APPOSITIVE,
    AUX_START,
    BEFORE_MARKERS,
    BOTH,
    COMPOUND_SUFFIXES,
    CONTRAST,
    COVERING_VERBS,
    DEMONSTRATIVES,
    DEP,
    DETERMINERS,
    EXACT,
    EXCEPT,
    FIRST_PERSON,
    INVERTING_AUX,
    KNOWN_AFTER,
    KNOWN_BEFORE,
    KNOWN_OPENERS,
    KNOWN_VERBS,
    LEARN,
    LESSON,
    MAP_CONCEPT,
    MAP_NOUNS,
    NEIGHBOUR,
    NOUNS,
    OWN_CLAUSE,
    PART,
    PATH,
    PEOPLE,
    PLAN,
    POLITE,
    PRONOUNS,
    RELATED_WORDS,
    REQUESTS,
    VERB_LIKE,
    VERBS,
    VOCABULARY,
    WH,
    Cue,
    nameless,
    respelt,
    you_respelt,
)
from control_plane.understanding.names import normalise
from control_plane.understanding.reading import (
    DIRECTION,
    INTENT_RELATIONS,
    LESSONS,
    MAX_READ_CHARS,
    Mention,
    Reading,
    Subject,
)
from control_plane.understanding.text import Text
from control_plane.understanding.timewords import TimePoint, find_time

DOUBTED: Final = 0.5


def checked(reading: Reading, tokens: Sequence[str], model: IntentModel | None) -> Reading:
    """``reading``, made unsure when the learnt ``model`` (intent_model) finds another intent far
    more likely than any the reading answers; the reading says which."""
    if (
        reading.form in ("yes_no", "why", "ready")
        or reading.intent in ("order", "relate", "next", "opens", "start")
        or reading.cue == WHAT_IS_LEFT
    ):
        return reading  # the corpus the model learnt from has no label for these forms
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


@dataclass(frozen=True)
class Parse:
    """What every frame reads: the analysed question (module docstring)."""

    text: Text  # the question, tokenised once (``text.Text``)
    counts: Mapping[str, int] | None
    model: IntentModel | None
    toks: tuple[str, ...]
    masked: frozenset[int]
    model_toks: tuple[str, ...]
    when: TimePoint | None
    sentence: list[int]
    asks: list[bool]
    context: frozenset[int]
    asking_only: frozenset[int]
    verbs: list[tuple[int, int, Cue]]
    nouns: list[tuple[int, int, Cue]]
    lesson: bool
    plan: bool
    relational: bool
    briefing: bool
    ordered: list[Mention]
    words_of: dict[str, str]
    tags: dict[str, str]
    roles: dict[str, _Role | None]
    subjects: list[Mention]
    main: Mention
    pronoun_roles: list[_Role]
    conflicts: set[str]
    agreeing: list[_Role]
    direct: bool
    transitive_word: bool
    known: tuple[Subject, ...]
    excluded: list[Mention]
    names: tuple[tuple[str, str], ...]
    mentions: tuple[Mention, ...]  # every name read, repeats included, in order
    said_known: frozenset[str]  # concepts the learner says they know (even when nothing else is named)
    set_aside: tuple[str, ...] = ()  # the asides the reading sets aside, as the learner wrote them
    unread: tuple[Mention, ...] = ()  # names of the learner's own context sentences not read (_Situation)

    @property
    def question(self) -> str:
        """The question as written."""
        return self.text.raw

    @property
    def second(self) -> Mention | None:
        """The second concept the question asks about, if any."""
        return self.subjects[1] if len(self.subjects) > 1 else None

    def sub(self, m: Mention, role: str = "subject") -> Subject:
        return Subject(m.concept_id, role, self.words_of[m.concept_id])

    def trans(self, role: _Role | None, default: bool) -> bool:
        if self.transitive_word:
            return True
        if self.direct:
            return False
        return role.transitive if role is not None else default

    def build(
        self,
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
        form: str = "",
    ) -> Reading:
        """The reading of ``intent`` about ``subs``, with what the parse knows (known and excluded
        concepts, time, relations fitted to the graph), checked by the learnt model when sure."""
        excluded, known, words_of, counts, toks = (
            self.excluded,
            self.known,
            self.words_of,
            self.counts,
            self.toks,
        )
        asked_rel = asked if asked is not None else INTENT_RELATIONS.get(intent, ())
        if excluded and not combine and intent != "path":
            # "connected to A but not to B", "what do I need before A, except B".
            combine, subs = (
                "except",
                [*subs, Subject(excluded[0].concept_id, "excluded", words_of[excluded[0].concept_id])],
            )
        rels, note, missing = _map_relations(asked_rel, counts)
        if intent.startswith("lessons_") and counts is not None and not counts.get(LESSONS, 1):
            note, missing = "this graph maps no lessons", True
        asked_ids = {s.concept_id for s in subs}
        extra = [k for k in known if k.concept_id not in asked_ids]
        if excluded and combine != "except":
            extra += [Subject(m.concept_id, "excluded", words_of[m.concept_id]) for m in excluded]
        reading = Reading(
            question=self.question,
            intent=intent,
            subjects=(*subs, *extra),
            direction=DIRECTION.get(intent, ""),
            transitive=transitive,
            asked_relations=asked_rel,
            relations=rels,
            relation_note=note,
            relations_missing=missing,
            combine=combine,
            hops=_hops(toks) if intent == "neighbours" else 1,
            exact=intent == "neighbours" and EXACT[0] in toks,
            time=self.when,
            sureness=sureness,
            read_by=read_by,
            cue=cue,
            alternatives=alternatives,
            names=self.names,
            form=form,
            set_aside=self.set_aside,
        )
        if reading.sure:
            reading = checked(reading, self.model_toks, self.model)
        if not reading.sure:
            reading = replace(reading, suggestions=_suggestions(words_of[self.main.concept_id], counts))
        return reading


def analyse(
    text: Text,
    mentions: Sequence[Mention],
    now: datetime,
    counts: Mapping[str, int] | None,
    model: IntentModel | None,
) -> Parse | Reading:
    """The parse of ``question``, or the reading that ends it early (module docstring): its words,
    then its sentences, then names the graph lacks, then its cues, then each concept's role."""
    mentions = _appositives_merged(text, mentions)
    words = _words(text, mentions, now, counts)
    if isinstance(words, Reading):
        return words
    situation = _situation(text, words, mentions)
    if isinstance(situation, Reading):
        return situation
    lacking = _longer_name(text, words, situation)
    if lacking is not None:
        return lacking
    cues = _cues(text, words, situation)
    if isinstance(cues, Reading):
        return cues
    return _roles(text, counts, model, words, situation, cues)


def _appositives_merged(text: Text, mentions: Sequence[Mention]) -> list[Mention]:
    """A name with another name of the same concept in brackets right after it ("CSE 100
    (Advanced Data Structures)", "Advanced Data Structures (CSE 100)") is one mention, over both:
    the bracket restates it, it names nothing more."""
    spans, out = text.spans, list(mentions)
    if len(spans) != len(text.words):
        return out
    merged: list[Mention] = []
    for m in sorted(out, key=lambda m: (m.start, m.end)):
        last = merged[-1] if merged else None
        if last is not None and last.concept_id == m.concept_id and last.end <= m.start:
            gap = text.raw[spans[last.end - 1][1] : spans[m.start][0]]
            after = text.raw[spans[m.end - 1][1] :].lstrip()
            if gap.strip() == "(" and m.start == last.end and after.startswith(")"):
                merged[-1] = replace(last, end=m.end)
                continue
        merged.append(m)
    return merged


@dataclass(frozen=True)
class _Words:
    """The question's tokens: respelt, names ``masked``; what the learnt check reads; its time."""

    toks: tuple[str, ...]
    masked: frozenset[int]
    model_toks: tuple[str, ...]
    when: TimePoint | None
    words: list[str]  # tokens outside names, no numbers


def _concept_nouns(
    toks: tuple[str, ...], masked: frozenset[int], counts: Mapping[str, int] | None
) -> tuple[str, ...]:
    """``toks`` with the curriculum's unit nouns read as the reader's word for a concept where the
    graph maps no lessons (``lexicon.MAP_NOUNS``: "courses", "classes", "modules", "units" name a
    catalogue's concepts, not lessons it does not have)."""
    if counts is None or counts.get(LESSONS, 1):
        return toks
    return tuple(MAP_CONCEPT if i not in masked and t in MAP_NOUNS else t for i, t in enumerate(toks))


def _words(
    text: Text, mentions: Sequence[Mention], now: datetime, counts: Mapping[str, int] | None = None
) -> _Words | Reading:
    """Tokens and time words; a text that is empty, too long, not English or names nothing ends here."""
    if not text.raw.strip():
        return Reading("", "unknown", problem="the question is empty", read_by="none")
    if len(text.raw) > MAX_READ_CHARS:
        return Reading(
            text.raw[:80],
            "unknown",
            problem=f"the question is longer than {MAX_READ_CHARS} characters",
            read_by="none",
        )
    masked = frozenset(i for m in mentions for i in range(m.start, m.end))
    toks = you_respelt(tuple(t if i in masked else respelt(t) for i, t in enumerate(text.words)), masked)
    toks = _concept_nouns(toks, masked, counts)
    # what the learnt check reads (the words as written, as its training phrasings are): every
    # name (context ones too) one token
    model_toks = question_tokens(toks, [(m.start, m.end) for m in mentions])
    toks = _particle_before_pronoun(toks, masked)
    when = find_time(text, now, [(m.start, m.end) for m in mentions])
    if when is not None and _learners_own_time(toks, when, masked):
        when = None  # "my study group finished X last week": when they studied, not the graph's time
    words = [t for i, t in enumerate(toks) if i not in masked and not t.isdigit()]
    english = sum(1 for w in words if w in VOCABULARY)
    cue_words = bool(_occurrences(toks, masked, VERBS) or _occurrences(toks, masked, NOUNS))
    if len(words) >= 4 and english < 0.25 * len(words) and not cue_words:
        return Reading(
            text.raw, "unknown", time=when, problem="the question does not read as English", read_by="none"
        )
    named = {i for lo, hi in (text.spans[i] for i in masked) for i in range(lo, hi)}
    if sum(1 for i, ch in enumerate(text.raw) if ch.isalpha() and ord(ch) > 0x24F and i not in named) >= 3:
        return Reading(
            text.raw,
            "unknown",
            time=when,
            problem="the question mixes in text that is not English",
            read_by="none",
        )
    if not mentions:
        return Reading(text.raw, "unknown", time=when, read_by="none")
    return _Words(toks, masked, tuple(model_toks), when, words)


@dataclass(frozen=True)
class _Situation:
    """Per token its sentence; per sentence whether it asks; which tokens are context (the
    learner's background, asides); the asking sentences when they only point back; the
    mentions that are asked about or said known."""

    sentence: list[int]
    asks: list[bool]
    context: frozenset[int]
    asking_only: frozenset[int]
    mentions: Sequence[Mention]
    naming: frozenset[int]  # the sentences that name a concept (before context was set aside)
    asides: frozenset[int] = frozenset()  # sentences that ask something of their own, set aside
    # names in the learner's own context sentences that are not kept ("I have pass X already. Is
    # it enough for Y?"): what they did or plan with X may change the answer
    unread: tuple[Mention, ...] = ()


# The words of having, or having done: a perfect's auxiliary, or "already".
_HAVING: Final = frozenset(normalise("have has had ve already"))


def _situation(text: Text, w: _Words, mentions: Sequence[Mention]) -> _Situation | Reading:
    """Several sentences, some asking: the others are context ("backend dev here, pivoting into
    ML. For X, what are the prerequisites?"). Their concepts are not asked about when the asking
    sentences name one; their lesson and plan words do not make the question about lessons."""
    toks, masked, when = w.toks, w.masked, w.when
    sentence, asks = _sentences(text)
    naming = {sentence[m.start] for m in mentions} if len(sentence) == len(toks) else set()
    context: frozenset[int] = frozenset()
    asking_only: frozenset[int] = frozenset()  # when the asking sentences only point back: theirs
    unread: tuple[Mention, ...] = ()
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
            # Names stay names (masked); what the learner says they know stays known, and so does
            # the goal they state when the question itself names only what they know ("I want to
            # get to X. Already studied Y. What remains?").
            named_here = {m.concept_id for m in inside}
            known_only = all(_said_known(toks, m.start) for m in inside)
            kept: list[Mention] = []
            known_list = False  # the last name kept is said known or listed after one that is
            for m in mentions:
                listed = bool(kept) and known_list and _coordinated(toks, kept[-1], m)
                if m.start not in context or (
                    m.concept_id not in named_here
                    and (_said_known(toks, m.start) or listed or (known_only and _said_goal(toks, m.start)))
                ):
                    kept.append(m)
                    known_list = _said_known(toks, m.start) or listed
            # ... said with what the learner has or has done ("I have pass X already"), not "I'm new
            # to X" or "pivoting into X"
            having = {sentence[i] for i, t in enumerate(toks) if t in _HAVING and i not in masked}
            unread = tuple(
                m
                for m in mentions
                if m not in kept and sentence[m.start] in personal & having and m.concept_id not in named_here
            )
            mentions = kept
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
                    text.raw,
                    "unknown",
                    time=when,
                    problem=f"the question asks about {text.surface(*slot)!r}, which is not a concept in this graph",
                    read_by="none",
                )
    kept_asides = asides if context & {i for i, sid in enumerate(sentence) if sid in asides} else frozenset()
    return _Situation(sentence, asks, context, asking_only, mentions, frozenset(naming), kept_asides, unread)


def _longer_name(text: Text, w: _Words, s: _Situation) -> Reading | None:
    """A request to make something ("write me a poem about X"), or a name inside a longer name the
    graph lacks ("Vector-borne diseases", "support vector machines"): nothing the graph answers."""
    toks, masked, when, sentence, asks, mentions = w.toks, w.masked, w.when, s.sentence, s.asks, s.mentions
    # "write me a poem about X" (in a sentence that asks): a request to make something
    # (no sentence marked as asking: the whole text is the request)
    asking = {sid for sid, a in enumerate(asks) if a or not any(asks)}
    if len(sentence) == len(toks) and (made := _made_thing(toks, masked, sentence, asking)) is not None:
        return Reading(
            text.raw,
            "unknown",
            time=when,
            problem=f"the question asks for {text.surface(*made)!r} to be made, which the graph cannot give",
            read_by="none",
        )

    # "Vector-borne diseases" (where only "vectors" is known): a name joined by a hyphen to a word
    # no vocabulary here explains is part of a longer name the graph lacks.
    spans = text.spans
    for m in mentions if len(spans) == len(toks) else ():
        joined = [
            k
            for k, gap in ((m.end, (spans[m.end - 1][1], spans[m.end][0]) if m.end < len(toks) else None),
                           (m.start - 1, (spans[m.start - 1][1], spans[m.start][0]) if m.start > 0 else None))
            if gap is not None and text.raw[gap[0] : gap[1]] == "-"
        ]  # fmt: skip
        for k in joined:
            if k in masked or toks[k].isdigit():
                continue
            head = k + 1 if k >= m.end else -1  # "RAG-based search": the noun after the adjective
            compound = toks[k] in COMPOUND_SUFFIXES and 0 < head < len(toks) and head not in masked
            if toks[k] not in VOCABULARY or (compound and toks[head] not in VOCABULARY):
                lo, hi = min(k, m.start), max(k + 1 + compound, m.end)
                return _names_unknown(text, (lo, hi), when)
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
            and _spaced(text, lo)  # "pls confirm: X": a label's colon ends the modifiers
            and not _verb_before_name(text, toks, lo - 1, m)
            and not _quoted(text, m)  # 'worksheet entry "X"': the quotes delimit the name
        ):
            lo -= 1
        if lo < m.start:
            return _names_unknown(text, (lo, m.end), when)
    if (span := _capitalised_compound(text, spans, toks, sentence, mentions, masked)) is not None:
        return _names_unknown(text, span, when)
    return None


@dataclass(frozen=True)
class _Cues:
    """The relational words read in the asking sentences: verb and noun cues, whether lessons or a
    plan are asked for, and whether the question asks to be briefed on a concept."""

    verbs: list[tuple[int, int, Cue]]
    nouns: list[tuple[int, int, Cue]]
    lesson: bool
    plan: bool
    relational: bool
    briefing: bool


def _cues(text: Text, w: _Words, s: _Situation) -> _Cues | Reading:
    """The cues; a statement that asks for nothing ends here."""
    toks, masked, when, words = w.toks, w.masked, w.when, w.words
    sentence, asks, context, naming = s.sentence, s.asks, s.context, s.naming
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
            (
                words
                and not relational
                and not markers
                and not briefing
                and toks[0] not in AUX_START
                and not _asks_after_a_clause(text, toks)
                and not any(w in WH for w in words)
                and any(w in VERB_LIKE for w in words)
                # "A student of mine wants X. Can you list everything first?": a later sentence asks
                and not (len(asks) > 1 and any(asks[1:]))
            )
            or (
                # "I finished my RAG course yesterday.": a full stop, nothing asked, no relation named.
                # ("Lessons that teach X." is a query as a noun phrase; "Fill me in on X." asks.)
                text.raw.rstrip().endswith(".")
                and not any(asks)
                and not (verbs or nouns or plan or markers or briefing)
                and not (lesson and set(toks[_skip_forward(toks, 0) :][:1]) & LESSON)  # "Lessons on X."
                and not _any(toks, ABOUT, masked)  # "I would like a brief overview of X." asks
                and not any(w in WH for w in words)
            )
        )
        or _name_soup(text, toks, s.mentions, words, relational or markers or briefing)
    ):
        return Reading(
            text.raw, "unknown", time=when, problem="this does not read as a question", read_by="none"
        )
    return _Cues(verbs, nouns, lesson, plan, relational, briefing)


def _asks_after_a_clause(text: Text, toks: Sequence[str]) -> bool:
    """Does a question open after a comma ("Having learned A, can I take B?"), in a text that
    ends with a question mark?"""
    if not text.raw.rstrip().endswith("?") or len(text.spans) != len(toks):
        return False
    spans = text.spans
    return any(
        toks[i] in AUX_START and "," in text.raw[spans[i - 1][1] : spans[i][0]] for i in range(1, len(toks))
    )


def _roles(
    text: Text,
    counts: Mapping[str, int] | None,
    model: IntentModel | None,
    w: _Words,
    s: _Situation,
    c: _Cues,
) -> Parse | Reading:
    """The subject (the first concept a cue governs) and the roles its pronouns and repeats take;
    the scope words."""
    toks, masked, when = w.toks, w.masked, w.when
    sentence, asks, context, mentions = s.sentence, s.asks, s.context, s.mentions
    verbs, nouns, lesson, relational = c.verbs, c.nouns, c.lesson, c.relational
    if when is not None and _in_an_aside(text, when, sentence, context, masked):
        when = None  # "What does X build on? Also, who won the world cup in 2018?": the aside's time
    ordered, words_of, tags, roles = _tag_mentions(text, w, s, c)
    # "what's left before Y if I know X", "since I know X, what comes before Y": a condition on
    # what the learner knows is what they know, when another concept is what comes after
    if any(r is not None and r.role == DEP and r.cue != KNOWN_CONDITION for r in roles.values()):
        for cid, r in list(roles.items()):
            if r is not None and r.cue == KNOWN_CONDITION and tags.get(cid, "") == "":
                tags[cid], roles[cid] = "known", None
    # Pronouns stand for the first subject: "once I know RAG, what builds on it?".
    subjects = [m for m in ordered if tags.get(m.concept_id, "") == ""]
    said_known = frozenset(cid for cid, tag in tags.items() if tag == "known")
    # "I know cell mitosis, A and B", "what do <words> and A both build on": a list of concepts
    # (what the learner knows, what is shared) with words no vocabulary here explains in it names
    # something the graph lacks.
    knowns = [m for m in ordered if tags.get(m.concept_id) == "known" or _after_opener(toks, masked, m)]
    listed = _listed_unknown(text, toks, masked, knowns, commas=True)
    if listed is None and _any(toks, BOTH, masked):
        listed = _listed_unknown(text, toks, masked, ordered, commas=False, any_start=True)
    if listed is not None:
        return _names_unknown(text, listed, when)
    if not subjects and said_known and (slot := _unknown_goal(toks, masked, context)) is not None:
        # "Got A and B covered. What else before <words>?": every name is known, and the words
        # where the goal stands name nothing the graph has
        return _names_unknown(text, slot, when)
    if not subjects:
        subjects = [m for m in ordered if tags.get(m.concept_id) != "example"]
        if not subjects:  # only an example or a name used as a verb: nothing is asked about
            return Reading(text.raw, "unknown", time=when, read_by="none")
        for m in subjects:
            tags[m.concept_id] = ""
    # The subject is the first concept a cue governs ("I'm planning to study X": not "planning").
    main = next((m for m in subjects if roles.get(m.concept_id) is not None), subjects[0])
    subjects = [main, *(m for m in subjects if m is not main)]
    main_role = roles.get(main.concept_id)
    reach = main_role.reach if main_role is not None else -1
    pronoun_roles = _pronoun_roles(toks, masked, sentence, c, main, reach)
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
    return Parse(
        text=text,
        counts=counts,
        model=model,
        toks=toks,
        masked=masked,
        model_toks=w.model_toks,
        when=when,
        sentence=sentence,
        asks=asks,
        context=context,
        asking_only=s.asking_only,
        verbs=verbs,
        nouns=nouns,
        lesson=lesson,
        plan=c.plan,
        relational=relational,
        briefing=c.briefing,
        ordered=ordered,
        words_of=words_of,
        tags=tags,
        roles=roles,
        subjects=subjects,
        main=main,
        pronoun_roles=pronoun_roles,
        conflicts=conflicts,
        agreeing=agreeing,
        direct=direct,
        transitive_word=transitive_word,
        known=known,
        excluded=excluded,
        names=names,
        mentions=tuple(sorted(mentions, key=lambda m: m.start)),
        said_known=said_known,
        set_aside=_set_aside(text, sentence, s.asides),
        unread=s.unread,
    )


def _set_aside(text: Text, sentence: Sequence[int], asides: frozenset[int]) -> tuple[str, ...]:
    """Each aside sentence as the learner wrote it ("By the way, where's the best coffee?")."""
    out = []
    for sid in sorted(asides):
        idx = [i for i, s in enumerate(sentence) if s == sid]
        if idx:
            out.append(text.surface(idx[0], idx[-1] + 1))
    return tuple(out)


def _in_an_aside(
    text: Text, when: TimePoint, sentence: Sequence[int], context: frozenset[int], masked: frozenset[int]
) -> bool:
    """Are the time words ``when`` came from in a sentence set aside as context that names no
    concept (an aside about something else), while the question names concepts elsewhere? A time
    word counts only in the part of the question it belongs to."""
    at = text.raw.find(when.words)
    if at < 0 or len(sentence) != len(text.spans) or not masked:
        return False
    spans = text.spans
    inside = [i for i, (a, b) in enumerate(spans) if a < at + len(when.words) and b > at]
    sids = {sentence[i] for i in inside}
    aside = {i for i, sid in enumerate(sentence) if sid in sids}
    return bool(inside) and aside <= context and not aside & masked


def _tag_mentions(
    text: Text, w: _Words, s: _Situation, c: _Cues
) -> tuple[list[Mention], dict[str, str], dict[str, str], dict[str, _Role | None]]:
    """Each mention in order: its surface words, its tag (known / excluded / an example, or ""
    for a concept asked about) and the role a cue gives it. A concept coordinated with the one
    before it ("A and B") shares its tag and role."""
    toks, masked, sentence = w.toks, w.masked, s.sentence
    verbs, nouns, relational = c.verbs, c.nouns, c.relational
    first: dict[str, Mention] = {}
    for m in sorted(s.mentions, key=lambda m: m.start):
        first.setdefault(m.concept_id, m)  # a later alias ("X like <alias of X>") does not replace it
    ordered = sorted(first.values(), key=lambda m: m.start)
    words_of = {m.concept_id: text.surface(m.start, m.end) or m.name or m.concept_id for m in ordered}
    tags: dict[str, str] = {}
    roles: dict[str, _Role | None] = {}
    prev: Mention | None = None
    for m in ordered:
        b = _skip_back(toks, m.start, masked)
        window = toks[max(0, b - 6) : b]
        if prev is not None:
            window = toks[max(prev.end, b - 6) : b]
        gap = toks[prev.end : m.start] if prev is not None else ()
        coordinated = prev is not None and (
            (
                gap
                and all(
                    t in {"and", "or", "as", "well", "plus", "also", "both", "the", "a", "an"} for t in gap
                )
            )
            # "I know A, B and C": a comma (or a slash, an ampersand) lists the names
            or (not gap and _listed(text, prev, m))
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
                # "planning a 6 month self-study ...", "Planning next term's scheme", "Limit the
                # list to ...": a sentence opening with a verb (a gerund, an imperative) and its
                # object, the name and the object's determiner apart by one space only
                (opens or _after_colon(text, m.start))
                and m.end - m.start == 1
                and toks[m.end : m.end + 1] in _OBJECT_OPENERS
                and (toks[m.start].endswith("ing") or _spaced(text, m.end))
            )
            or _name_as_verb(text, toks, m, sentence)  # "what should we benchmark X against"
        ):
            tags[m.concept_id] = "example"
        elif any(_ends_with(window, len(window) - k, EXCEPT) for k in range(min(3, len(window)) + 1)) or _any(
            window, EXCEPT
        ):
            tags[m.concept_id] = "excluded"
        elif (
            (
                any(w in KNOWN_VERBS for w in window[-3:])
                and not (len(window) >= 2 and window[-2] == "to")
                and not any(
                    w in {"once", "since", "having", "after", "before", "what", "which", "to", "if", "when"}
                    for w in window[-4:]
                )
                # "I've done X", "an applicant who has finished X": what the learner knows
                and any(w in {"i", "already", "ve", "have", "has", "had", "we", "m", "am"} for w in window)
            )
            or _ends_with(window, len(window), [normalise("familiar with"), normalise("comfortable with")])
            # "given my knowledge of A", "I already have A", "just wrapped up A", "picked up A"
            or _ends_with(window, len(window), [f for f in KNOWN_BEFORE if len(f) > 1])
            or (not coordinated and _known_by_clause(text, toks, masked, sentence, m, b))
        ):
            tags[m.concept_id] = "known"
        elif coordinated and prev is not None:
            tags[m.concept_id] = tags.get(prev.concept_id, "")
            roles[m.concept_id] = roles.get(prev.concept_id)
            prev = m
            continue
        roles[m.concept_id] = _role_at(toks, m.start, m.end, masked, verbs, nouns, relational)
        prev = m
    return ordered, words_of, tags, roles


# What opens a verb's object right after it ("the list", "next term's").
_OBJECT_OPENERS: Final = (("a",), ("an",), ("the",), ("my",), ("our",), ("your",), ("next",), ("this",))


def _spaced(text: Text, end: int) -> bool:
    """The token ending at ``end`` and the next one are apart by one space (no punctuation:
    "Tokenization: the basics" is a name and a heading)."""
    spans = text.spans
    return end < len(spans) and text.raw[spans[end - 1][1] : spans[end][0]] == " "


def _after_colon(text: Text, start: int) -> bool:
    """The token at ``start`` opens a clause after a colon ("Request 2: Limit the list")."""
    spans = text.spans
    return 0 < start < len(spans) and ":" in text.raw[spans[start - 1][1] : spans[start][0]]


def _known_by_clause(
    text: Text, toks: Sequence[str], masked: frozenset[int], sentence: Sequence[int], m: Mention, b: int
) -> bool:
    """Is the name ``m`` (its words start after ``b``) one the learner says they know, in a clause
    of their own with no subject ("have A and B", "finished A", "Known: A", "my background: A"),
    or with a word after the list of names ("got A and B covered", "with A under my belt")?"""
    start = next((k for k in range(b, -1, -1) if k == 0 or sentence_start(sentence, k)), 0) if sentence else 0
    lead = [t for t in toks[start:b] if t not in POLITE and t not in ADVERBS and t != "already"]
    if lead and lead[0] in OWN_CLAUSE and len(lead) <= 2:
        return True  # "have A and B", "Known: A", "already studied A" (as "already" is an adverb)
    if lead[-2:] == ["my", "background"] or lead[-3:] == ["my", "background", "is"]:
        return True
    spans = text.spans
    if (
        0 < b < len(spans)
        and toks[b - 1] in OWN_CLAUSE | {"background"}
        and ":" in text.raw[spans[b - 1][1] : spans[b][0]]
    ):
        return True  # a label: "Known: A", "Background: A"
    end = m.end
    while end < len(toks) and (end in masked or toks[end] in {"and", "or", "plus", "the"}):
        end += 1
    same = [
        k for k in range(end, min(end + 3, len(toks))) if not sentence or sentence[k] == sentence[m.start]
    ]
    after = tuple(toks[k] for k in same)
    if after[:2] in (("have", "been"), ("has", "been"), ("had", "been"), ("got",)):
        # "now that A and B have been covered", "A has been done": the passive perfect
        after = ("are", *after[2 if after[:1] != ("got",) else 1 :])
    if after[:1] in (("is",), ("are",), ("was",), ("were",)):
        # "supervised learning is done", "A and B are behind me", "X is already covered": said of
        # the names themselves, whoever the clause's subject is
        rest = after[1:] if after[1:2] != ("already",) else after[2:]
        if any(rest[: len(q)] == q for q in KNOWN_AFTER if q != ("already",)):
            return True
    if after[:1] == ("i",) and sentence_start(sentence, b) and sentence:
        # "The ANN index I have learned already.": the name put first, then said known, the
        # sentence ending there
        k = end + 1 + (toks[end + 1 : end + 2] in (("have",), ("ve",)))
        trailing = [t for j, t in enumerate(toks) if j > k and sentence[j] == sentence[m.start]]
        last = k + len(trailing)
        spans = text.spans
        stop = text.raw[spans[last][1] :].lstrip()[:1] if last < len(spans) else ""
        if (
            k < len(toks)
            and toks[k] in KNOWN_VERBS
            and all(t in ("already", "well", "now") for t in trailing)
            and stop in (".", "!", "")
        ):
            return True
    if after[:1] and after[0] in KNOWN_VERBS and toks[b - 1 : b] == ("with",):
        return True  # "enroll in Y with A and B completed": the names the learner has done
    if any(after[: len(q)] == q for q in KNOWN_AFTER):
        if _obliged(toks[max(start, m.start - 4) : m.start]):
            return False  # "do I have to have A done before B?", "would I need A under my belt?": asked
        return any(t in {"got", "have", "ve", "with", "i"} for t in toks[max(0, start) : m.start])
    return False


# What makes a name's clause an obligation ("do I have to have A done", "would I need A under my
# belt"): what is asked to be had, not what the learner says they have.
_OBLIGATIONS: Final = tuple(
    normalise(m) for m in ("have to", "has to", "need to", "needs to", "got to", "gotta", "must", "need", "needs", "required to", "supposed to")
)  # fmt: skip


def _obliged(before: Sequence[str]) -> bool:
    """Does an obligation stand in ``before`` (the words right before a name)?"""
    return any(tuple(before[k : k + len(o)]) == o for o in _OBLIGATIONS for k in range(len(before)))


def sentence_start(sentence: Sequence[int], k: int) -> bool:
    """Does token ``k`` open its sentence?"""
    return k < len(sentence) and (k == 0 or sentence[k - 1] != sentence[k])


def _unknown_goal(
    toks: Sequence[str], masked: frozenset[int], context: frozenset[int]
) -> tuple[int, int] | None:
    """With only known concepts named and nothing pointing back at them, words no vocabulary here
    explains where the goal stands ("what else before <words>?", "to reach <words>")."""
    if any(t in PRONOUNS for i, t in enumerate(toks) if i not in masked):
        return None  # "... what ultimately requires it": the question is about a known concept
    for i, t in enumerate(toks):
        if t in {"before", "reach", "towards", "toward"} and i not in masked and i not in context:
            j = i + 1
            while j < len(toks) and toks[j] in DETERMINERS:
                j += 1
            end = j
            while end < len(toks) and end not in masked and nameless(toks[end]):
                end += 1
            if end > j:
                return j, end
    return None


def _name_soup(
    text: Text, toks: Sequence[str], mentions: Sequence[Mention], words: Sequence[str], cued: bool
) -> bool:
    """Names said over and over with nothing that asks ("A B A B A"): no question word, no
    question mark, no relation word, a name repeated."""
    ids = [m.concept_id for m in mentions]
    return (
        len(ids) > len(set(ids))
        and not cued
        and "?" not in text.raw
        and not any(w in WH or w in AUX_START or w in REQUESTS for w in words)
        and not _any(toks, ABOUT, frozenset(i for m in mentions for i in range(m.start, m.end)))
    )


def _after_opener(toks: Sequence[str], masked: frozenset[int], m: Mention) -> bool:
    """Does a word that opens a list of what the learner knows stand a few words before ``m``
    ("have jazz harmony and A")?"""
    return any(toks[k] in KNOWN_OPENERS and k not in masked for k in range(max(0, m.start - 5), m.start))


def _listed_unknown(
    text: Text,
    toks: Sequence[str],
    masked: frozenset[int],
    mentions: Sequence[Mention],
    *,
    commas: bool,
    any_start: bool = False,
) -> tuple[int, int] | None:
    """The span of words no vocabulary here explains that stand as an item of a list with one of
    ``mentions``: joined to it by "and"/"or" (or a comma, with ``commas``), and ending the list or
    followed by its next item ("A and <words>?", "<words>, A and B", "A, <words> and B"), not a
    clause that goes on ("A, bless it", "A and dreams of B")."""
    spans = text.spans
    if len(spans) != len(toks):
        return None

    def gap(a: int, b: int) -> str:  # the text between token a and token b (a name's own brackets aside)
        between = text.raw[spans[a][1] : spans[b][0]].strip()
        return between.lstrip(")]").strip() if a + 1 in masked or a in masked else between

    def unknown(k: int) -> bool:
        return 0 <= k < len(toks) and k not in masked and nameless(toks[k])

    def joins(k: int) -> bool:  # token k is "and"/"or"
        return 0 <= k < len(toks) and toks[k] in {"and", "or"} and k not in masked

    def item_ends(end: int) -> bool:  # the run ending before token ``end`` ends a list item
        return end >= len(toks) or gap(end - 1, end) != "" or joins(end) or end in masked

    def item_starts(start: int) -> bool:  # the run starting at ``start`` starts a list item
        return (
            any_start
            or start == 0
            or gap(start - 1, start) != ""
            or joins(start - 1)
            or toks[start - 1] in KNOWN_OPENERS
        )

    for m in mentions:
        k = (
            m.end + 1
            if joins(m.end)
            else (m.end if commas and m.end < len(toks) and gap(m.end - 1, m.end) == "," else -1)
        )
        if k > 0 and unknown(k):
            end = k + 1
            while unknown(end) and gap(end - 1, end) == "":
                end += 1
            if item_ends(end):
                return k, end
        k = (
            m.start - 2
            if joins(m.start - 1)
            else (m.start - 1 if commas and m.start > 0 and gap(m.start - 1, m.start) == "," else -1)
        )
        if k >= 0 and unknown(k):
            start = k
            while unknown(start - 1) and gap(start - 1, start) == "":
                start -= 1
            if item_starts(start):
                return start, k + 1
    return None


def _coordinated(toks: Sequence[str], a: Mention, b: Mention) -> bool:
    """Is ``b`` the next item of a list that ``a`` is in ("A and B", "A, B")?"""
    return b.start >= a.end and all(t in {"and", "or", "plus", "the"} for t in toks[a.end : b.start])


def _listed(text: Text, a: Mention, b: Mention) -> bool:
    """Are the adjacent names ``a`` and ``b`` items of a list ("A, B and C", "A/B")?"""
    spans = text.spans
    if b.start >= len(spans) or a.end - 1 >= len(spans):
        return False
    # a name's own closing bracket or quote, and the next one's opening one, are not the list's
    gap = text.raw[spans[a.end - 1][1] : spans[b.start][0]]
    return re.fullmatch(r"[)\]\"'”’]*\s*[,;/&+]\s*[(\[\"'“‘]*", gap.strip()) is not None and gap.strip() != ""


def _pronoun_roles(
    toks: tuple[str, ...],
    masked: frozenset[int],
    sentence: list[int],
    c: _Cues,
    main: Mention,
    reach: int,
) -> list[_Role]:
    """The roles pronouns after the subject take ("once I know RAG, what builds on it?")."""
    verbs, nouns, relational = c.verbs, c.nouns, c.relational
    return [
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
