"""Looking concepts up, for curators: list them with their degrees, show one with everything it
touches, find them by a (misspelt, partial) name, alias or summary, and say which concepts are
near an id that names none.

The ranking of :func:`search` is pure (rapidfuzz over the texts it is given); :func:`listing`,
:func:`profile` and :func:`unknown_hint` read through a :class:`~data_plane.reads.GraphReader` as
of one point in time. :func:`unknown_hint` offers names the way the question reader does
(``NameIndex.suggest``): "embedings" is near "embeddings".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from data_plane.errors import InactiveEndpoint, NotFound
from data_plane.names import normalise
from data_plane.reads import GraphReader
from data_plane.records import Concept, Edge, RequirementGroup, Version
from data_plane.relations import SYMMETRIC
from data_plane.temporal import AsOf

__all__ = [
    "Hit",
    "Listed",
    "Profile",
    "hinted",
    "kg_search",
    "listing",
    "profile",
    "requirement_line",
    "search",
    "unknown_hint",
]

# A summary matches more loosely than a name (its words are scattered through a sentence), and a
# query found inside a longer name less surely than the whole name: both count for a little less.
_SUMMARY_WEIGHT: Final = 0.9
_PARTIAL_WEIGHT: Final = 0.95
_SCAN: Final = 500


@dataclass(frozen=True)
class Listed:
    """A concept in force, with how many edges touch it, per relation."""

    concept: Concept
    relations: dict[str, int]

    @property
    def degree(self) -> int:
        return sum(self.relations.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.concept.to_dict(),
            "degree": self.degree,
            "relations": dict(sorted(self.relations.items())),
        }


def listing(
    reader: GraphReader,
    as_of: AsOf,
    *,
    after: str | None = None,
    limit: int = 50,
    relation: str | None = None,
    min_degree: int = 0,
    max_degree: int | None = None,
) -> tuple[list[Listed], str | None]:
    """A page of concepts in force, by id after ``after``, that have an edge of ``relation`` (if
    given) and a degree within ``[min_degree, max_degree]``; and the id to continue after (None on
    the last page)."""
    page: list[Listed] = []
    cursor = after
    while True:
        chunk = list(reader.stream_concepts(as_of, after=cursor, limit=_SCAN))
        if not chunk:
            return page, None
        degrees = reader.relation_degrees([c.concept_id for c in chunk], as_of=as_of)
        for c in chunk:
            item = Listed(c, degrees[c.concept_id])
            if relation is not None and not item.relations.get(relation):
                continue
            if item.degree < min_degree or (max_degree is not None and item.degree > max_degree):
                continue
            if len(page) == limit:
                return page, page[-1].concept.concept_id
            page.append(item)
        cursor = chunk[-1].concept_id


@dataclass(frozen=True)
class Profile:
    """One concept as of a point: its version, the edges out of it and into it, its lessons, its
    requirement groups (``requirements``) and the groups it is an option of (``option_of``)."""

    concept: Concept
    outgoing: list[Edge]
    incoming: list[Edge]
    lessons: list[tuple[Version, str]]
    requirements: tuple[RequirementGroup, ...] = ()
    option_of: tuple[RequirementGroup, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "concept": self.concept.to_dict(),
            "outgoing": [e.to_dict() for e in self.outgoing],
            "incoming": [e.to_dict() for e in self.incoming],
            "lessons": [{"lesson_id": v.key[0], "title": title, **v.to_dict()} for v, title in self.lessons],
            "requirements": [g.to_dict() for g in self.requirements],
            "option_of": [g.to_dict() for g in self.option_of],
        }


def profile(reader: GraphReader, concept_id: str, as_of: AsOf) -> Profile:
    """``concept_id`` as of ``as_of`` (``NotFound`` when it is not in force then), with its edges
    (a symmetric edge counts as outgoing from both ends) and lesson links, with their grounding."""
    concept = reader.concept(concept_id, as_of=as_of)
    rows = reader.neighbourhood([concept_id], as_of=as_of)
    edges, _ = reader.records(edge_versions=[n.edge.version_id for n in rows])
    outgoing = sorted(
        (e for e in edges.values() if e.source_id == concept_id or e.relation in SYMMETRIC),
        key=lambda e: e.key,
    )
    incoming = sorted(
        (e for e in edges.values() if e.target_id == concept_id and e.relation not in SYMMETRIC),
        key=lambda e: e.key,
    )
    return Profile(
        concept,
        outgoing,
        incoming,
        reader.lesson_links([concept_id], as_of=as_of),
        reader.requirements([concept_id], as_of=as_of).get(concept_id, ()),
        reader.requirements_naming([concept_id], as_of=as_of).get(concept_id, ()),
    )


def requirement_line(group: RequirementGroup) -> str:
    """A group in one line: ``cse_101.1 -> cse_101 needs 1 of: cse_21 | math_154`` (an option of
    several concepts joined with ``+``)."""
    options = " | ".join(" + ".join(o) for o in group.options)
    return (
        f"{group.group_id} -> {group.target_id} needs {group.needs} of: {options}  ({group.grounding.reason})"
    )


@dataclass(frozen=True)
class Hit:
    """A concept that matches a search: its best-matching field, that text, and the score (0-100)."""

    concept_id: str
    name: str
    field: str
    text: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "concept_id": self.concept_id,
            "name": self.name,
            "field": self.field,
            "text": self.text,
            "score": round(self.score, 1),
        }


def search(query: str, concepts: Iterable[Concept], *, limit: int = 10, cutoff: float = 75.0) -> list[Hit]:
    """The concepts whose name, an alias or summary best match ``query``, best first (ties by id).

    Texts are compared as the question reader compares names (``data_plane.names.normalise``:
    "hookes law" is "Hooke's law", "C++" is not "C").
    A name or alias scores its whole-string similarity (``ratio``), its similarity ignoring word
    order (``token_sort_ratio``), or, when the query is the shorter, how well the query matches its
    best-aligned part (``partial_ratio``, x0.95), whichever is highest: "graph rag" finds
    "GraphRAG", "retreival augmented" finds "Retrieval-augmented generation", while a short alias
    ("CoT") does not match a longer query ("cosine"). A summary scores how well each query word
    is found among its words (the mean over the query's words of the best ``ratio``), x0.9, since
    a sentence mentions what a name means. A concept scores its best field; below ``cutoff``
    (0-100) it is not a hit."""
    from rapidfuzz import fuzz, process

    def key(text: str) -> str:
        return " ".join(normalise(text))

    q = key(query)
    words = q.split()
    if not words:
        return []
    hits: list[Hit] = []
    for c in concepts:
        best: Hit | None = None
        for fld, text in (("name", c.name), *(("alias", a) for a in c.aliases)):
            t = key(text)
            score = max(fuzz.ratio(q, t), fuzz.token_sort_ratio(q, t))
            if len(t) >= len(q):
                score = max(score, _PARTIAL_WEIGHT * fuzz.partial_ratio(q, t))
            if best is None or score > best.score:
                best = Hit(c.concept_id, c.name, fld, text, score)
        tokens = key(c.summary).split()
        if tokens:
            found = [process.extractOne(w, tokens, scorer=fuzz.ratio) for w in words]
            score = _SUMMARY_WEIGHT * sum(f[1] if f else 0.0 for f in found) / len(words)
            if best is None or score > best.score:
                best = Hit(c.concept_id, c.name, "summary", c.summary, score)
        if best is not None and best.score >= cutoff:
            hits.append(best)
    return sorted(hits, key=lambda h: (-h.score, h.concept_id))[:limit]


# An id longer than this is not repeated in a hint: the message names it once already.
ECHO_MAX: Final = 60


def kg_search(word: str) -> str:
    """Where the command line finds concepts by name (a long id is not echoed again)."""
    shown = _shell_word(word) if len(word) <= ECHO_MAX else "WORDS"
    return f"`kg concept search {shown}` finds concepts by name"


def unknown_hint(
    reader: GraphReader,
    concept_ids: Sequence[str],
    as_of: AsOf | None = None,
    *,
    searching: Callable[[str], str] = kg_search,
) -> str | None:
    """For the ids among ``concept_ids`` that name no concept in force (now, or as of ``as_of``):
    the concepts near each, as the question reader finds them, and where to search (``searching``:
    the command line's, by default; the HTTP API names its route); None when every id names a
    concept."""
    from control_plane.understanding.names import NameIndex

    point = as_of or reader.as_of()
    known = reader.concepts(concept_ids, as_of=point)
    unknown = [cid for cid in dict.fromkeys(concept_ids) if cid not in known]
    if not unknown:
        return None
    index = NameIndex.from_names(reader.concept_labels(as_of=point))
    parts = []
    for cid in unknown:
        near = [s.concept_id for s in index.suggest(cid)]
        names = reader.concepts(near, as_of=point)
        offered = " or ".join(f"{n} ({names[n].name})" for n in near if n in names)
        said = f"did you mean {offered}?" if offered else "no concept's name is near it"
        named = repr(cid) if len(cid) <= ECHO_MAX else f"{cid[:20]!r}... ({len(cid):,} characters)"
        parts.append(said if len(unknown) == 1 else f"{named}: {said}")
    return f"{'; '.join(parts)} ({searching(unknown[0])})"


def hinted(
    exc: NotFound | InactiveEndpoint, reader: GraphReader, concept_ids: Sequence[str]
) -> NotFound | InactiveEndpoint:
    """``exc`` (a refusal for want of a concept) saying which concepts are near the ids among
    ``concept_ids`` that name none (:func:`unknown_hint`); ``exc`` itself when every id names a
    concept. The CLI and the MCP tools refuse with it alike."""
    hint = unknown_hint(reader, concept_ids) if concept_ids else None
    if hint is None:
        return exc
    if isinstance(exc, NotFound):
        return NotFound(f"{exc}; {hint}", key=exc.key)
    return InactiveEndpoint(f"{exc}; {hint}", field=exc.field, value=exc.value)


def _shell_word(text: str) -> str:
    """``text`` as one word of a shell command (quoted when it needs to be)."""
    import shlex

    return shlex.quote(text.replace("_", " "))
