"""The whole question accounted for: which words of a question no part of its reading explains.

A reading answers the question only if it explains every content word the learner asked with
(``interpretation._accounted`` makes a reading with unexplained words a problem, so the planner
abstains and says which words). A word is accounted for when it is

* part of a concept's name (masked), or of the time the question names ("in 2016");
* in a sentence that does not ask, when another does (the learner's background, what they know:
  "I'm a data analyst. How many topics ...?"), or in a context sentence or an aside the reading
  sets aside and says;
* a word of a table the reader reads with (every module-level table of words or phrases of the
  reader's modules: its cues, its forms' phrases, its scope and filler words), a closed-class word
  (``lexicon.FUNCTION_WORDS``), a word that frames the asking (``lexicon.FRAMING``: "I was
  wondering ...", "quick q:"), an adverb in -ly, or not a word (a number, a symbol).

Anything else ("midterm" in "before the CSE 280A midterm", "careers" in "which careers use X",
"cogs" in "I'm fine with cogs 108") is a word the reading does not explain: answering anyway
would answer part of the question as if it were the whole.
"""

from __future__ import annotations

import difflib
import importlib
import itertools
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

from control_plane.understanding.analysis import Parse
from control_plane.understanding.grammar import _said_known
from control_plane.understanding.lexicon import (
    CALENDAR,
    DEMONSTRATIVES,
    FIRST_PERSON,
    FRAMING,
    FUNCTION_WORDS,
    LINKERS,
    NEXT_WORDS,
    PRONOUNS,
    READINESS,
    REMAINING,
    VOCABULARY,
    WH,
    respelt,
)
from control_plane.understanding.names import normalise

__all__ = ["Account", "account", "known", "runs"]

# The reader's modules, whose module-level tables of words and phrases are what it reads with.
READER_MODULES: Final = (
    "lexicon",
    "forms",
    "frames",
    "grammar",
    "analysis",
    "interpretation",
    "relating",
    "timewords",
)


def known(word: str) -> bool:
    """Does a word (normalised) account for itself: a word of the reader's tables, closed-class,
    framing, the calendar's, an adverb in -ly, or not alphabetic; or a slip of one ("breif",
    "prerequisits": the reader's respelling, or the same first letter and a difflib ratio of at
    least 0.85, or the same letters swapped)?"""
    if not word.isalpha() or word.endswith("ly") or word in _accounted_words():
        return True
    return respelt(word) in _accounted_words() or _slip_of_a_known_word(word)


@lru_cache(maxsize=8192)
def _slip_of_a_known_word(word: str) -> bool:
    if len(word) < 4:
        return False
    # not a known word with more letters at its end: a derivation ("difficulty" is no slip of
    # "difficult", "teacher" none of "teach"), which means something else
    targets = [
        w
        for w in _accounted_words()
        if w[:1] == word[0]
        and abs(len(w) - len(word)) <= 2
        and not (word.startswith(w) and len(word) > len(w))
    ]
    if difflib.get_close_matches(word, targets, n=1, cutoff=0.85):
        return True
    return len(word) >= 5 and any(sorted(w) == sorted(word) for w in targets)


@cache
def _accounted_words() -> frozenset[str]:
    return VOCABULARY | LINKERS | FUNCTION_WORDS | FRAMING | CALENDAR | _reader_words()


@dataclass(frozen=True)
class Account:
    """How a reading accounts for its question's words: the runs of words it does not explain,
    and the runs it leaves as the learner's own words beside the question (their background, the
    framing of a request: ``Reading.background``), each as token spans (runs of words no table
    explains; the known words around them need no account)."""

    unexplained: tuple[tuple[int, int], ...]
    background: tuple[tuple[int, int], ...]


def account(p: Parse, set_aside: Collection[int] = ()) -> Account:
    """The account of ``p``'s words (module docstring); ``set_aside``: the positions of a part
    the reading sets aside."""
    beside = _framed(p) | (_beside(p) if len(p.sentence) == len(p.toks) else set(p.context))
    named = set(p.masked) | set(set_aside) | _time_positions(p)
    loose = [i for i, tok in enumerate(p.toks) if i not in named and not known(tok)]
    background = runs(i for i in loose if i in beside)
    # what the learner says they know is part of the question, wherever it is said ("What's
    # left before X? I'm fine with COGS 108."): words in its place are not background
    known_slot = (
        {span for span in background if _said_known(p.toks, span[0])} if _asks_from_known(p) else set()
    )
    return Account(
        unexplained=tuple(sorted((*runs(i for i in loose if i not in beside), *known_slot))),
        background=tuple(span for span in background if span not in known_slot),
    )


def _asks_from_known(p: Parse) -> bool:
    """Does the answer depend on what the learner says they know: a concept said known, or a word
    asking what is left, what comes next, or whether they are ready?"""
    return bool(p.known) or any(tok in _FROM_KNOWN for tok in p.toks)


_FROM_KNOWN: Final = REMAINING | NEXT_WORDS | READINESS


def runs(positions: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Maximal runs of consecutive token positions (in order), as ``[lo, hi)`` spans."""
    spans: list[tuple[int, int]] = []
    for i in positions:
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return tuple(spans)


def _beside(p: Parse) -> set[int]:
    """The tokens of what the learner says beside the question: context sentences and asides, the
    sentences that do not ask when one does, and statements about the learner that name no
    concept ("I'm a DSC major. Trace ..."). When the asking sentence points back at one that names
    concepts ("I want to study A and photosynthesis side by side. Which prerequisites do they
    share?"), what is listed with those names is part of the question."""
    sentences = range(max(p.sentence, default=-1) + 1)
    asking = {sid for sid in sentences if p.asks[sid]}
    named = {p.sentence[i] for i in p.masked}
    words = {sid: {tok for i, tok in enumerate(p.toks) if p.sentence[i] == sid} for sid in sentences}
    context = {p.sentence[i] for i in p.context}
    beside = {
        sid
        for sid in sentences
        if sid in context
        or (asking and sid not in asking)
        or (len(sentences) > 1 and sid not in named and words[sid] & FIRST_PERSON and not words[sid] & WH)
    }
    out = {i for i, sid in enumerate(p.sentence) if sid in beside}
    # the asking sentence points back at what the others name, in a word ("which prerequisites
    # do they share?") or by naming nothing itself ("A, B. Which is earlier?")
    if any(words[sid] & _POINTING for sid in asking) or (asking and not asking & named):
        out -= {i for i in out if p.sentence[i] in named and _listed_with_a_name(p, i)}
    return out


def _framed(p: Parse) -> set[int]:
    """The words the question's shape explains, whatever they are: the verb of a request to be
    briefed ("Fill me in on X", "catch me up on X"), the learner's own things ("in my bootcamp"),
    a label before a colon opening a sentence
    ("Request 1: ...", "For worksheet entry "X": ..."), and a clause about the learner that names
    no concept and asks nothing ("I studied history at uni and love theory: what does X build
    on?", "I'm a beginner, what ...")."""
    toks, spans, raw = p.toks, p.text.spans, p.text.raw
    out: set[int] = set()
    for i in range(len(toks) - 2):
        # "<verb> me (in|up) on ...": whatever the verb, a request to be told
        k = i + 2 + (toks[i + 2] in ("in", "up"))
        if toks[i + 1] == "me" and toks[k : k + 1] == ("on",):
            out.add(i)
    for i in range(len(toks) - 1):
        # the learner's own things: "in my bootcamp", "for our team's course"
        if toks[i] in _POSSESSIVE_FIRST:
            j = i + 1
            while j < len(toks) and j not in p.masked and not known(toks[j]):
                out.add(j)
                j += 1
    # clauses: cut after a token followed by a colon, a semicolon, a dash or a comma
    cuts = [
        i + 1
        for i in range(len(toks) - 1)
        if _CLAUSE_END.search(raw[spans[i][1] : spans[i + 1][0]])
        and not (i in p.masked and i + 1 in p.masked)  # inside a name ("Integrals: change of variables")
    ]
    starts = {0} | {i for i in range(len(toks)) if i == 0 or p.sentence[i] != p.sentence[i - 1]}
    bounds = sorted(set(cuts) | starts | {len(toks)})
    for lo, hi in itertools.pairwise(bounds):
        clause = range(lo, hi)
        words = {toks[i] for i in clause}
        gap = raw[spans[hi - 1][1] : spans[hi][0]] if hi < len(toks) else ""
        label = lo in starts and ":" in gap and hi - lo <= _LABEL_WORDS + len(set(clause) & p.masked)
        # (a purpose or a reason, "..., so I can show them why it matters", asks nothing either)
        reason = toks[lo] in _REASONS and toks[lo + 1 : lo + 2] in _SUBJECTS
        personal = bool(words & FIRST_PERSON) and (reason or not words & WH) and p.masked.isdisjoint(clause)
        if label or (personal and (hi < len(toks) or reason)):
            out |= {i for i in clause if i not in p.masked}
    return out


# What ends a clause inside a sentence, and how long a label before a colon may be.
_CLAUSE_END: Final = re.compile(r"[:;,]|\s[-–—]+\s|—")
_LABEL_WORDS: Final = 4
# What opens a clause of purpose or reason about the learner ("so I can", "because we").
_REASONS: Final = frozenset({"so", "because", "since", "as"})
_POSSESSIVE_FIRST: Final = frozenset({"my", "our"})
_SUBJECTS: Final = tuple((w,) for w in ("i", "we"))


def _listed_with_a_name(p: Parse, i: int) -> bool:
    """Is token ``i`` listed with a concept's name ("A and <i>", "<i> or A", "A, <i>")?"""
    toks, masked = p.toks, p.masked
    j = i
    while j > 0 and j - 1 not in masked and not known(toks[j - 1]):
        j -= 1  # the start of the words <i> is one of
    k = i
    while k + 1 < len(toks) and k + 1 not in masked and not known(toks[k + 1]):
        k += 1
    spans, raw = p.text.spans, p.text.raw
    # a comma lists too: "Motion (physics), quantum error correction"
    after_name = (j >= 2 and toks[j - 1] in _JOINERS and j - 2 in masked) or (
        j >= 1 and j - 1 in masked and "," in raw[spans[j - 1][1] : spans[j][0]]
    )
    before_name = (k + 2 < len(toks) and toks[k + 1] in _JOINERS and k + 2 in masked) or (
        k + 1 < len(toks) and k + 1 in masked and "," in raw[spans[k][1] : spans[k + 1][0]]
    )
    return after_name or before_name


# What points back from the asking sentence at the sentences before it, and what lists names.
_POINTING: Final = PRONOUNS | DEMONSTRATIVES | frozenset({"they", "them", "both"})
_JOINERS: Final = frozenset({"and", "or", "vs", "versus", "plus"})


def _time_positions(p: Parse) -> set[int]:
    """The tokens of the time the question names ("in 2016", "as of last June")."""
    if p.when is None:
        return set()
    words = normalise(p.when.words)
    n = len(words)
    for i in range(len(p.toks) - n + 1):
        if p.toks[i : i + n] == words:
            return set(range(i, i + n))
    return {i for i, tok in enumerate(p.toks) if tok in words}


@cache
def _reader_words() -> frozenset[str]:
    """Every word of every module-level table of the reader's modules (a set or tuple of words,
    of phrases, or of tuples of words), read once, after the modules are loaded."""
    out: set[str] = set()
    for name in READER_MODULES:
        module = importlib.import_module(f"control_plane.understanding.{name}")
        for attr, value in vars(module).items():
            if attr.lstrip("_").isupper():
                out.update(_words_of(value))
    return frozenset(out)


def _words_of(value: object, depth: int = 0) -> Iterator[str]:
    if isinstance(value, str):
        if depth:
            yield from value.split()
    elif isinstance(value, frozenset | set | tuple | list) and depth < 3:
        for item in value:
            yield from _words_of(item, depth + 1)
