"""Seeding: which known concepts does a question name?

Pure core: :func:`normalise` turns text into lowercase, singular tokens (hyphens and punctuation
become spaces); :class:`NameIndex` maps the token sequences of every concept's name and aliases
to concept ids, and :meth:`NameIndex.find` returns the concepts named in a question, most specific
first (at most three):

1. every occurrence of a known token sequence is a match;
2. a match whose token span lies inside a longer match is dropped
   ("agent orchestration" beats "agent");
3. the remaining concepts are ordered by degree (fewer active edges = more specific), then by
   the position of their first appearance, then by id.

A qualified name ("Linear algebra for ML") is also found by its head ("linear algebra") unless
the head is another concept's name or alias. A name is also found in its classical or irregular
plural ("Fisher information matrices" for "Fisher information matrix", "criteria", "analyses"):
:func:`normalise` undoes the regular "-s" on both sides, and the index holds the other plural (or
singular) of each name's last word, from :data:`PLURAL_ENDINGS`, unless that phrase names another
concept. :meth:`NameIndex.suggest` finds the names closest to words that name nothing
("embedings", "Retrieval Augmented Genration"), with ``rapidfuzz``. The index is built from ``GraphReader.all_concepts`` by the planner, which caches it (see
``control_plane.planning.loop``); nothing here touches the database.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.understanding.text import Text
from data_plane.names import ARROW, Token, normalise, singular, tokenize
from data_plane.records import Concept

__all__ = [
    "ARROW",
    "MAX_SEEDS",
    "Match",
    "NameIndex",
    "PhraseTable",
    "Suggestion",
    "Token",
    "normalise",
    "singular",
    "token_spans",
    "tokenize",
]

MAX_SEEDS: Final = 3
# "<head> for <audience>": the head alone names the concept too.
_QUALIFIER: Final = "for"
# Singular and plural endings that are not the regular "-s" (classical and irregular English
# plurals): a name ending in one is also indexed with the other.
PLURAL_ENDINGS: Final = (
    ("ix", "ices"), ("ex", "ices"), ("is", "es"), ("on", "a"), ("um", "a"), ("us", "i"), ("a", "ae"),
    ("f", "ves"), ("fe", "ves"), ("man", "men"), ("child", "children"), ("person", "people"),
    ("mouse", "mice"), ("foot", "feet"), ("tooth", "teeth"), ("goose", "geese"),
)  # fmt: skip
# How close (rapidfuzz ratio, 0-100) words must be to a name to suggest it; a short word closer.
SUGGEST_SCORE: Final = 86.0
SHORT_WORD_SCORE: Final = 92.0
# ... and each of its words close to the name's word in the same place.
WORD_SCORE: Final = 75.0
# A name that starts with the words asked ("attention" -> "Attention mechanism"): suggested above a
# name that merely holds them or is spelt alike, below a name the words are exactly.
HEADED_SCORE: Final = 95.0
# Punctuation a name never runs across in a text, unless the name itself has it there.
BREAKS: Final = re.compile(r"[,;:()\[\]{}\n]|[.!?](?=\s|$)")
# A parenthetical ("Motion (physics)", "Expectation-Maximization (EM) Algorithm"); an
# abbreviation in one ("(EM)", "(RNN)") names the concept too.
_PARENTHETICAL: Final = re.compile(r"\s*\(([^()]*)\)")
_ABBREVIATION: Final = re.compile(r"[A-Z][A-Z0-9]{1,5}s?")


def token_spans(text: str) -> list[tuple[int, int]]:
    """Where each normalised word of ``text`` stands in it (characters), in order."""
    return [(t.start, t.end) for t in tokenize(text)]


def _number_variants(text: str) -> Iterator[tuple[str, ...]]:
    """The name ``text`` (normalised) with its last word in the other number, where normalising
    does not undo it: a classical or irregular plural ("matrix" / "matrices", "criterion" /
    "criteria"), and a regular one the conservative singular misreads ("cache" / "caches")."""
    tokens = tokenize(text)
    if not tokens:
        return
    last = text[tokens[-1].start : tokens[-1].end].lower()
    if len(last) < 4 or not last.isascii() or not last.isalpha():
        return
    stem = tuple(t.text for t in tokens[:-1])
    seen = {singular(last)}
    regular = last + ("es" if last.endswith(("s", "x", "z", "ch", "sh")) else "s")
    if singular(regular) not in seen:  # "caches" normalises to "cach", not "cache"
        seen.add(singular(regular))
        yield (*stem, singular(regular))
    for one, many in PLURAL_ENDINGS:
        for a, b in ((one, many), (many, one)):
            if last.endswith(a) and len(last) > len(a) + 2 and not (a == "on" and last.endswith("ion")):
                other = singular(last[: -len(a)] + b)
                if other not in seen:
                    seen.add(other)
                    yield (*stem, other)


# Roman numerals a course or a part is numbered with ("Quantum Mechanics II", "Japanese III") and
# their numbers: a learner writes either ("quantum mechanics 2", "japanese iii").
ROMAN: Final = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x")
_NUMBERED: Final = {
    **{r: str(n) for n, r in enumerate(ROMAN, 1)},
    **{str(n): r for n, r in enumerate(ROMAN, 1)},
}
# Words a title shortens as learners do ("Intro to Optimization" for "Introduction to
# Optimization"), both ways.
_SHORTENED: Final = {("introduction", "to"): ("intro", "to"), ("intro", "to"): ("introduction", "to")}


def _renumbered(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``words`` (normalised) with a numeral numbering it written the other way: "quantum
    mechanics i" / "quantum mechanics 1", "japanese 2" / "japanese ii". Only a numeral after at
    least one word, so a name that is a numeral ("V", "X") is not renamed."""
    for i in range(1, len(words)):
        other = _NUMBERED.get(words[i])
        if other is not None:
            yield (*words[:i], other, *words[i + 1 :])


def _shortened(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """``words`` with its title words written short or long ("intro to" / "introduction to")."""
    for i in range(len(words) - 1):
        other = _SHORTENED.get((words[i], words[i + 1]))
        if other is not None:
            yield (*words[:i], *other, *words[i + 2 :])


def _spellings(text: str) -> Iterator[tuple[str, ...]]:
    """Other ways a learner writes the name ``text``: without a parenthetical ("motion" for
    "Motion (physics)") or a subtitle ("information theory" for "Information Theory: coding"),
    by the abbreviation in one ("EM"), its hyphened words joined ("kmeans"
    for "k-means"), its qualified head ("linear algebra" for "Linear algebra for ML"), its last
    word in the other number, its numeral written the other way ("quantum mechanics 1" for
    "Quantum Mechanics I", "japanese ii" for "Japanese 2"), its title words short or long ("intro
    to optimization"). The caller keeps those that name no other concept."""
    head, colon, _ = text.partition(":")
    if colon and head.strip():  # "Information Theory: coding": its title before the subtitle
        yield normalise(head)
    bare = _PARENTHETICAL.sub(" ", text).strip()
    if bare and bare != text:
        yield normalise(bare)
        for found in _PARENTHETICAL.finditer(text):
            inner = found.group(1)
            if _ABBREVIATION.fullmatch(inner.strip()):
                yield normalise(inner)
                rest = text[found.end() :].strip()
                if rest:  # "Expectation-Maximization (EM) Algorithm": "EM algorithm"
                    yield normalise(f"{inner} {rest}")
    for base in dict.fromkeys((text, bare)):
        if re.search(r"\w-\w", base):
            yield normalise(re.sub(r"(?<=\w)-(?=\w)", "", base))
        toks = normalise(base)
        if _QUALIFIER in toks[1:-1]:
            yield toks[: toks.index(_QUALIFIER, 1)]
        yield from _number_variants(base)
        renumbered = list(_renumbered(toks))
        yield from renumbered
        for words in (toks, *renumbered):  # "intro to quantum mechanics 1" too
            yield from _shortened(words)


def _break_gaps(text: str, tokens: tuple[Token, ...]) -> frozenset[int]:
    """The gaps (``i``: between word ``i`` and ``i + 1``) where ``text`` has break punctuation."""
    return frozenset(
        i for i in range(len(tokens) - 1) if BREAKS.search(text[tokens[i].end : tokens[i + 1].start])
    )


@dataclass(frozen=True)
class Suggestion:
    """A concept whose name (``phrase``, normalised) is close to words that name none."""

    concept_id: str
    score: float
    phrase: str


@dataclass(frozen=True)
class Match:
    """One occurrence of a concept's name or alias in the question: tokens ``[start, end)``."""

    concept_id: str
    start: int
    end: int

    def inside(self, other: Match) -> bool:
        """Strictly contained in ``other``'s span (same span does not count)."""
        return (
            other.start <= self.start
            and self.end <= other.end
            and (other.end - other.start) > (self.end - self.start)
        )


class PhraseTable(Mapping[str, "str | tuple[str, ...]"]):
    """A mapping phrase → concept id(s), packed into flat arrays (phrases are added, never removed).

    A dict of 400,000 short strings costs ~190 bytes a phrase (key object, hash slot, entry, the id
    string); here a phrase costs its UTF-8 bytes plus ~20 (its hash, offset, value and an
    open-addressing slot), so the name index of a 10^6-edge graph takes ~15 MB instead of ~75 MB,
    and building it creates no object per phrase that outlives the phrase (the peak is the
    table). A lookup probes the slots from the phrase's hash and compares bytes, so a hash
    collision is never a false match. Hashes are Python's own ``hash`` by default: stable within
    the process that built the table, which is the only one that reads it.
    """

    __slots__ = (
        "_hash", "_hashes", "_id_starts", "_id_text", "_key_starts", "_key_text", "_last", "_multi",
        "_slots", "_values",
    )  # fmt: skip

    def __init__(
        self, entries: Iterable[tuple[str, str]] = (), *, hasher: Callable[[str], int] = hash
    ) -> None:
        """From ``(phrase, concept id)`` pairs, streamed. ``hasher`` (any integer hash; tests pass a
        colliding one) places the phrases."""
        self._hash = hasher
        self._hashes, self._values = array("q"), array("i")
        self._key_text, self._key_starts = bytearray(), array("I", [0])
        self._id_text, self._id_starts = bytearray(), array("I", [0])
        self._multi: list[tuple[str, ...]] = []
        self._slots = array("i", [-1]) * 8
        self._last: str | None = None  # the id of the last id entry
        for phrase, cid in entries:
            self.add(phrase, cid)

    def add(self, phrase: str, cid: str) -> None:
        """``phrase`` names ``cid`` (too, when it names others already)."""
        if cid != self._last:  # a concept's phrases come together: one id entry per run
            self._id_text += cid.encode()
            self._id_starts.append(len(self._id_text))
            self._last = cid
        n = len(self._id_starts) - 2
        h = self._hash(phrase)
        encoded = phrase.encode()
        slot = self._probe(h, encoded)
        found = self._slots[slot]
        if found >= 0:
            self._merge(found, n)
            return
        self._slots[slot] = len(self._hashes)
        self._hashes.append(h)
        self._values.append(n)
        self._key_text += encoded
        self._key_starts.append(len(self._key_text))
        if 3 * len(self._hashes) > 2 * len(self._slots):
            self._grow()

    def _probe(self, h: int, encoded: bytes) -> int:
        """The slot holding ``encoded`` (hash ``h``), or the empty slot where it would go."""
        slots, hashes, starts, text = self._slots, self._hashes, self._key_starts, self._key_text
        mask = len(slots) - 1
        i = h & mask
        while (e := slots[i]) >= 0:
            if hashes[e] == h and text[starts[e] : starts[e + 1]] == encoded:
                return i
            i = (i + 1) & mask
        return i

    def _grow(self) -> None:
        self._slots = array("i", [-1]) * (2 * len(self._slots))
        mask = len(self._slots) - 1
        for e, h in enumerate(self._hashes):
            i = h & mask
            while self._slots[i] >= 0:
                i = (i + 1) & mask
            self._slots[i] = e

    def _key(self, e: int) -> bytes:
        return bytes(self._key_text[self._key_starts[e] : self._key_starts[e + 1]])

    def _id(self, n: int) -> str:
        return self._id_text[self._id_starts[n] : self._id_starts[n + 1]].decode()

    def _merge(self, e: int, n: int) -> None:
        have = self._value(e)
        cid = self._id(n)
        ids = (have,) if isinstance(have, str) else have
        if cid in ids:
            return
        self._multi.append(tuple(sorted((*ids, cid))))
        self._values[e] = -len(self._multi)

    def _value(self, e: int) -> str | tuple[str, ...]:
        v = self._values[e]
        return self._id(v) if v >= 0 else self._multi[-v - 1]

    def _entry(self, phrase: str) -> int:
        """The entry number of ``phrase``, or -1."""
        return self._slots[self._probe(self._hash(phrase), phrase.encode())]

    def add_missing(self, phrase: str, cid: str) -> None:
        """Add ``phrase`` for ``cid`` unless the table has it (the derived spellings, added after
        the names: held as compactly as they are)."""
        if phrase not in self:
            self.add(phrase, cid)

    def __getitem__(self, phrase: str) -> str | tuple[str, ...]:
        e = self._entry(phrase)
        if e < 0:
            raise KeyError(phrase)
        return self._value(e)

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, str) and self._entry(phrase) >= 0

    def get(self, phrase: str, default: Any = None) -> Any:  # the hot path: no exception
        e = self._entry(phrase)
        return self._value(e) if e >= 0 else default

    def __iter__(self) -> Iterator[str]:
        for e in range(len(self._hashes)):
            yield self._key(e).decode()

    def entries(self) -> Iterator[tuple[str, str | tuple[str, ...]]]:
        """``(phrase, what it names)`` in the order the phrases were first added."""
        for e in range(len(self._hashes)):
            yield self._key(e).decode(), self._value(e)

    def __len__(self) -> int:
        return len(self._hashes)


@dataclass(frozen=True)
class NameIndex:
    """Normalised names and aliases (tokens joined by spaces) → the concept id(s) they name.

    Kept lean because it is the one per-graph structure the planner holds in memory: a 10^6-edge
    graph has ~200,000 concepts and ~400,000 phrases, held in a :class:`PhraseTable`. A phrase
    almost always names one concept, so the value is that id itself, and a sorted tuple only when
    several concepts share the phrase. ``ambiguous`` holds the spellings several concepts could
    be written as ("motion" for "Motion (physics)" and "Motion (biology)"): they name none, and
    :meth:`suggest` offers their concepts. ``breaks`` holds the phrases whose names run across
    punctuation ("Multiple integrals: change of variables"), with where.
    """

    phrases: Mapping[str, str | tuple[str, ...]]
    longest: int = 0
    ambiguous: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    breaks: Mapping[str, frozenset[int]] = field(default_factory=dict)

    @classmethod
    def build(cls, concepts: Iterable[Concept]) -> NameIndex:
        return cls.from_names((c.concept_id, c.name, c.aliases) for c in concepts)

    @classmethod
    def from_names(cls, entries: Iterable[tuple[str, str, Iterable[str]]]) -> NameIndex:
        """From ``(concept id, name, aliases)``; the id with underscores as spaces is a name too,
        and so is each other spelling of a name or alias (:func:`_spellings`) that no other
        concept could be written as."""
        # The other spellings, with the concept(s) each spells, held as compactly as the names (a
        # dict of sets here doubled the index's peak memory).
        derived = PhraseTable()
        breaks: dict[str, frozenset[int]] = {}
        longest = 0

        def pairs() -> Iterator[tuple[str, str]]:
            nonlocal longest
            for cid, name, aliases in entries:
                for text in (name, *aliases):
                    tokens = tokenize(text)
                    if not tokens:
                        continue
                    phrase = " ".join(t.text for t in tokens)
                    yield phrase, cid
                    longest = max(longest, len(tokens))
                    if len(tokens) > 1 and (gaps := _break_gaps(text, tokens)):
                        breaks[phrase] = breaks.get(phrase, frozenset()) | gaps
                    for variant in _spellings(text):
                        if variant:
                            derived.add(" ".join(variant), cid)
                toks = normalise(cid.replace("_", " "))
                if toks:
                    yield " ".join(toks), cid
                    longest = max(longest, len(toks))

        phrases = PhraseTable(pairs())
        ambiguous: dict[str, tuple[str, ...]] = {}
        for phrase, ids in derived.entries():
            if phrase in phrases:
                continue
            if isinstance(ids, str):
                phrases.add_missing(phrase, ids)
                longest = max(longest, phrase.count(" ") + 1)
            else:
                ambiguous[phrase] = ids
        return cls(phrases, longest, ambiguous, breaks)

    def matches(self, question: str | Text, *, breaks: bool = False) -> list[Match]:
        """Every occurrence of every known phrase in ``question`` (a text, or a question's
        :class:`Text`, tokenised already). With ``breaks``, a phrase never runs across list or
        clause punctuation unless its name has that punctuation there (for texts that list names:
        "Embeddings, Vector search" is not "embedding vector")."""
        text = Text.of(question)
        tokens, toks = text.tokens, text.words
        gaps = _break_gaps(text.raw, tokens) if breaks else frozenset()
        out: list[Match] = []
        for start in range(len(toks)):
            for n in range(1, min(self.longest, len(toks) - start) + 1):
                phrase = " ".join(toks[start : start + n])
                ids = self.phrases.get(phrase)
                if ids is None:
                    continue
                if gaps and any(
                    g in gaps and g - start not in self.breaks.get(phrase, ())
                    for g in range(start, start + n - 1)
                ):
                    continue
                for cid in (ids,) if isinstance(ids, str) else ids:
                    out.append(Match(cid, start, start + n))
        return out

    def find(
        self, question: str | Text, degrees: Mapping[str, int] | None = None, *, limit: int = MAX_SEEDS
    ) -> list[str]:
        """The concepts named in ``question``, most specific first (see the module docstring).

        ``degrees`` (active edge counts) break ties; missing ids count as degree 0.
        """
        found = self.matches(question)
        kept = [m for m in found if not any(m.inside(o) for o in found)]
        first: dict[str, int] = {}
        for m in kept:
            first[m.concept_id] = min(first.get(m.concept_id, m.start), m.start)
        deg = degrees or {}
        ordered = sorted(first, key=lambda cid: (deg.get(cid, 0), first[cid], cid))
        return ordered[:limit]

    def suggest(self, words: str, *, limit: int = 3, score: float = SUGGEST_SCORE) -> list[Suggestion]:
        """The concepts whose name or alias is closest to ``words`` (which name none), best first,
        at most ``limit``: "embedings" → Embeddings. Similarity is ``rapidfuzz``'s ratio (0-100) on
        normalised words, at least ``score``, and higher still for a word of five letters or fewer
        (one letter is a larger share of it: "madam" is not "adam"). Names far shorter or longer
        than the words are not compared. Words several concepts could be written as ("motion"
        for "Motion (physics)" and "Motion (biology)") suggest each of them, and so do words
        that stand whole in longer names ("attention" for "Attention mechanism", "regression"
        for "Linear regression" and "Logistic regression")."""
        from rapidfuzz import fuzz, process

        query = " ".join(normalise(words))
        if not query:
            return []
        best: dict[str, Suggestion] = {}
        for cid in self.ambiguous.get(query, ()):
            best[cid] = Suggestion(cid, 100.0, query)
        for phrase, ids in self._headed_by(query):
            for cid in (ids,) if isinstance(ids, str) else ids:
                # a name that starts with the words ("attention" -> "attention mechanism", "html" ->
                # "html basics") before one that only holds them or is merely spelt alike
                similarity = HEADED_SCORE if phrase.startswith(query + " ") else fuzz.ratio(query, phrase)
                if cid not in best or best[cid].score < similarity:
                    best[cid] = Suggestion(cid, similarity, phrase)
        if len(query) < 4:
            return sorted(best.values(), key=lambda s: (-s.score, s.concept_id))[:limit]
        cutoff = max(score, SHORT_WORD_SCORE) if len(query) <= 5 else score
        lo, hi = len(query) * 0.7, len(query) / 0.7
        choices = [phrase for phrase in self._phrase_list() if lo <= len(phrase) <= hi]
        words_asked = query.split()
        for phrase, similarity, _ in process.extract(
            query, choices, scorer=fuzz.ratio, score_cutoff=cutoff, limit=limit * 4
        ):
            # A slip changes letters inside words, not the words: "retrieval augmented genration"
            # is "retrieval augmented generation", "agent evaluation" is not "RAG evaluation".
            named = phrase.split()
            if len(named) != len(words_asked) or any(
                fuzz.ratio(a, b) < WORD_SCORE for a, b in zip(words_asked, named, strict=True)
            ):
                continue
            ids = self.phrases[phrase]
            for cid in (ids,) if isinstance(ids, str) else ids:
                if cid not in best or best[cid].score < similarity:
                    best[cid] = Suggestion(cid, similarity, phrase)
        return sorted(best.values(), key=lambda s: (-s.score, s.concept_id))[:limit]

    def _headed_by(self, query: str) -> list[tuple[str, str | tuple[str, ...]]]:
        """The longer phrases that hold the words ``query`` as whole words ("attention" →
        "attention mechanism", "regression" → "linear regression", "logistic regression"), for a
        query of letters (words of the name, not a slip of them)."""
        if not query.replace(" ", "").isalpha() or len(query) < 3:
            return []
        words = query.split()
        found = self._by_word().get(words[0], ())
        out = []
        for phrase in found:
            toks = phrase.split()
            if len(toks) > len(words) and any(
                toks[i : i + len(words)] == words for i in range(len(toks) - len(words) + 1)
            ):
                out.append((phrase, self.phrases[phrase]))
        return out

    def _by_word(self) -> dict[str, list[str]]:
        """Word → the phrases holding it, built once per index (only a question that names
        nothing needs it)."""
        cached: dict[str, list[str]] | None = getattr(self, "_words_listed", None)
        if cached is None:
            cached = {}
            for phrase in self._phrase_list():
                for word in dict.fromkeys(phrase.split()):
                    cached.setdefault(word, []).append(phrase)
            object.__setattr__(self, "_words_listed", cached)
        return cached

    def _phrase_list(self) -> list[str]:
        """Every phrase, listed once per index (only a question that names nothing needs them)."""
        cached: list[str] | None = getattr(self, "_phrases_listed", None)
        if cached is None:
            cached = list(self.phrases)
            object.__setattr__(self, "_phrases_listed", cached)
        return cached

    def numbered(self) -> frozenset[str]:
        """The words this graph's names write a number after: "math" of "MATH 20C", "llama" of
        "Llama 2", "japanese" of "Japanese II" (spelt "japanese 2"). Such a word with a number
        is the shape of a name here, so one the graph does not hold is a name it lacks. Built once
        per index, by a question that writes a word and a number outside every name."""
        cached: frozenset[str] | None = getattr(self, "_numbered", None)
        if cached is None:
            out: set[str] = set()
            for phrase in self._phrase_list():
                words = phrase.split(" ", 2)
                if len(words) > 1 and words[1][:1].isdigit() and words[0].isalpha():
                    out.add(words[0])
            cached = frozenset(out)
            object.__setattr__(self, "_numbered", cached)
        return cached

    def candidates(self, question: str | Text) -> list[str]:
        """Concepts that survive the containment rule, before the degree tie-break (for degrees)."""
        found = self.matches(question)
        return sorted({m.concept_id for m in found if not any(m.inside(o) for o in found)})
