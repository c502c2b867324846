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
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from data_plane.records import Concept

__all__ = [
    "ARROW",
    "MAX_SEEDS",
    "TOKEN_PATTERN",
    "Match",
    "NameIndex",
    "PhraseTable",
    "Suggestion",
    "normalise",
    "singular",
]

MAX_SEEDS: Final = 3
# Words and numbers; an arrow ("A -> B", "A → B") is a token of its own, spelt ARROW.
TOKEN_PATTERN: Final = r"[a-z0-9]+|->|=>|[→⟶➔➜⇒]"
ARROW: Final = "→"
_TOKEN = re.compile(TOKEN_PATTERN)
# Endings that look plural but are not: "loss", "bus", "analysis", "bias".
_NOT_PLURAL: Final = ("ss", "us", "is", "as")
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


def _singular(token: str) -> str:
    if len(token) <= 3 or not token.endswith("s") or token.endswith(_NOT_PLURAL):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses", "zes")):
        return token[:-2]
    return token[:-1]


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_singular(t) if t[0].isalnum() else ARROW for t in _TOKEN.findall(text.lower()))


def _number_variants(text: str) -> Iterator[tuple[str, ...]]:
    """The name ``text`` (normalised) with its last word in the other number, where normalising
    does not undo it: a classical or irregular plural ("matrix" / "matrices", "criterion" /
    "criteria"), and a regular one the conservative singular misreads ("cache" / "caches")."""
    words = _TOKEN.findall(text.lower())
    if not words or not words[-1].isalpha():
        return
    last = words[-1]
    if len(last) < 4:
        return
    stem = _tokens(" ".join(words[:-1]))
    seen = {_singular(last)}
    regular = last + ("es" if last.endswith(("s", "x", "z", "ch", "sh")) else "s")
    if _singular(regular) not in seen:  # "caches" normalises to "cach", not "cache"
        seen.add(_singular(regular))
        yield (*stem, _singular(regular))
    for one, many in PLURAL_ENDINGS:
        for a, b in ((one, many), (many, one)):
            if last.endswith(a) and len(last) > len(a) + 2 and not (a == "on" and last.endswith("ion")):
                other = _singular(last[: -len(a)] + b)
                if other not in seen:
                    seen.add(other)
                    yield (*stem, other)


@lru_cache(maxsize=65_536)
def singular(token: str) -> str:
    """Conservative singular: "embeddings"→"embedding", "queries"→"query", "batches"→"batch";
    tokens of three letters or fewer and "-ss", "-us", "-is", "-as" endings are left alone."""
    return _singular(token)


@lru_cache(maxsize=4096)
def normalise(text: str) -> tuple[str, ...]:
    """Lowercase tokens with hyphens and punctuation as separators, each made singular.

    Memoised: the same names, summaries and cue phrases are normalised on every question, and
    the result is an immutable tuple, so sharing it is safe. (Building a name index reads every
    name once and bypasses both caches: filling them with names would only cost memory.)"""
    return _tokens(text)


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
    """A read-only mapping phrase → concept id(s), packed into flat arrays.

    A dict of 400,000 short strings costs ~190 bytes a phrase (key object, hash slot, entry, the id
    string); here a phrase costs its UTF-8 bytes plus ~20 (its hash, offset, value and an
    open-addressing slot), so the name index of a 10^6-edge graph takes ~15 MB instead of ~75 MB,
    and building it creates no object per phrase that outlives the phrase (the peak is the
    table). A lookup probes the slots from the phrase's hash and compares bytes, so a hash
    collision is never a false match. Hashes are Python's own ``hash`` by default: stable within
    the process that built the table, which is the only one that reads it.
    """

    __slots__ = (
        "_extra", "_hash", "_hashes", "_id_starts", "_id_text", "_key_starts", "_key_text", "_multi",
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
        self._extra: dict[str, str | tuple[str, ...]] = {}
        self._slots = array("i", [-1]) * 8
        last_cid, n = None, -1
        hashes, values, key_text, key_starts = self._hashes, self._values, self._key_text, self._key_starts
        for phrase, cid in entries:
            if cid != last_cid:  # a concept's phrases come together: one id entry per run
                self._id_text += cid.encode()
                self._id_starts.append(len(self._id_text))
                last_cid, n = cid, n + 1
            h = hasher(phrase)
            encoded = phrase.encode()
            slot = self._probe(h, encoded)
            found = self._slots[slot]
            if found >= 0:
                self._merge(found, n)
                continue
            self._slots[slot] = len(hashes)
            hashes.append(h)
            values.append(n)
            key_text += encoded
            key_starts.append(len(key_text))
            if 3 * len(hashes) > 2 * len(self._slots):
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

    def add_missing(self, phrase: str, value: str | tuple[str, ...]) -> None:
        """Add ``phrase`` unless the table has it (for the few derived phrases, such as heads)."""
        if phrase not in self:
            self._extra[phrase] = value

    def __getitem__(self, phrase: str) -> str | tuple[str, ...]:
        e = self._entry(phrase)
        return self._value(e) if e >= 0 else self._extra[phrase]

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, str) and (self._entry(phrase) >= 0 or phrase in self._extra)

    def get(self, phrase: str, default: Any = None) -> Any:  # the hot path: no exception
        e = self._entry(phrase)
        return self._value(e) if e >= 0 else self._extra.get(phrase, default)

    def __iter__(self) -> Iterator[str]:
        for e in range(len(self._hashes)):
            yield self._key(e).decode()
        yield from self._extra

    def __len__(self) -> int:
        return len(self._hashes) + len(self._extra)


@dataclass(frozen=True)
class NameIndex:
    """Normalised names and aliases (tokens joined by spaces) → the concept id(s) they name.

    Kept lean because it is the one per-graph structure the planner holds in memory: a 10^6-edge
    graph has ~200,000 concepts and ~400,000 phrases, held in a :class:`PhraseTable`. A phrase
    almost always names one concept, so the value is that id itself, and a sorted tuple only when
    several concepts share the phrase.
    """

    phrases: Mapping[str, str | tuple[str, ...]]
    longest: int = 0

    @classmethod
    def build(cls, concepts: Iterable[Concept]) -> NameIndex:
        return cls.from_names((c.concept_id, c.name, c.aliases) for c in concepts)

    @classmethod
    def from_names(cls, entries: Iterable[tuple[str, str, Iterable[str]]]) -> NameIndex:
        """From ``(concept id, name, aliases)``; the id with underscores as spaces is a name too,
        and so is the head of a qualified name ("linear algebra" for "Linear algebra for ML")
        unless that head is some concept's own name or alias."""
        derived: dict[str, set[str]] = {}  # heads of qualified names, other plurals
        longest = 0

        def pairs() -> Iterator[tuple[str, str]]:
            nonlocal longest
            for cid, name, aliases in entries:
                for text in (name, *aliases, cid.replace("_", " ")):
                    toks = _tokens(text)
                    if toks:
                        yield " ".join(toks), cid
                        longest = max(longest, len(toks))
                        if _QUALIFIER in toks[1:-1]:
                            derived.setdefault(" ".join(toks[: toks.index(_QUALIFIER, 1)]), set()).add(cid)
                        if text != cid.replace("_", " "):  # names and aliases, not ids
                            for variant in _number_variants(text):
                                derived.setdefault(" ".join(variant), set()).add(cid)

        phrases = PhraseTable(pairs())
        for phrase, ids in derived.items():
            phrases.add_missing(phrase, next(iter(ids)) if len(ids) == 1 else tuple(sorted(ids)))
        return cls(phrases, longest)

    def matches(self, question: str) -> list[Match]:
        """Every occurrence of every known phrase in ``question``."""
        toks = normalise(question)
        out: list[Match] = []
        for start in range(len(toks)):
            for n in range(1, min(self.longest, len(toks) - start) + 1):
                ids = self.phrases.get(" ".join(toks[start : start + n]))
                if ids is None:
                    continue
                for cid in (ids,) if isinstance(ids, str) else ids:
                    out.append(Match(cid, start, start + n))
        return out

    def find(
        self, question: str, degrees: Mapping[str, int] | None = None, *, limit: int = MAX_SEEDS
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
        than the words are not compared."""
        from rapidfuzz import fuzz, process

        query = " ".join(_tokens(words))
        if len(query) < 4:
            return []
        cutoff = max(score, SHORT_WORD_SCORE) if len(query) <= 5 else score
        lo, hi = len(query) * 0.7, len(query) / 0.7
        choices = [phrase for phrase in self._phrase_list() if lo <= len(phrase) <= hi]
        best: dict[str, Suggestion] = {}
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

    def _phrase_list(self) -> list[str]:
        """Every phrase, listed once per index (only a question that names nothing needs them)."""
        cached: list[str] | None = getattr(self, "_phrases_listed", None)
        if cached is None:
            cached = list(self.phrases)
            object.__setattr__(self, "_phrases_listed", cached)
        return cached

    def candidates(self, question: str) -> list[str]:
        """Concepts that survive the containment rule, before the degree tie-break (for degrees)."""
        found = self.matches(question)
        return sorted({m.concept_id for m in found if not any(m.inside(o) for o in found)})
