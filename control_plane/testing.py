"""Test doubles shared by tests, evals and reliability checks: a scripted synthesizer and
in-memory records.

``ScriptedSynthesizer`` implements the ``Synthesizer`` protocol from a list of drafts (one per
call; the last repeats) or from a function of the request, and records every request it saw.
A draft is a claim (``draft(claim=...)``); ``truthful(confidence)`` is a script that claims what
the evidence gives (the offline meaning's claim) at a confidence of its own, for tests of the
loop's mechanics; ``cite_all`` claims every evidence concept as the answer set.
``make_evidence`` builds an ``EvidenceGraph`` from ids and ``(source, target, relation)`` triples
without a database, for pure tests of synthesizers, ranking and verification.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from control_plane.evidence import EvidenceGraph, LessonLink
from control_plane.synthesizers.base import Claim, Draft, Focus, SynthesisRequest, SynthesizerInfo, Usage
from data_plane.records import Concept, Edge, Grounding, Neighbour, Stamp, Version
from data_plane.temporal import AsOf
from data_plane.walks import Walk

if TYPE_CHECKING:
    from control_plane.planning.expansion import Expander

__all__ = [
    "RecordingExpander",
    "ScriptedSynthesizer",
    "cite_all",
    "draft",
    "make_concept",
    "make_edge",
    "make_evidence",
    "make_lesson_link",
    "make_neighbour",
    "make_request",
    "truthful",
]

_T0 = datetime(2025, 1, 1, tzinfo=UTC)
_version = iter(range(1, 10**9))


def _stamp() -> Stamp:
    return Stamp(next(_version), "assert", _T0, None, _T0, None, None)


def _grounding(confidence: float = 0.9) -> Grounding:
    return Grounding(
        confidence=confidence, reason="in-memory fixture", source="tests", evidence={"fixture": True}
    )


def make_concept(
    concept_id: str, name: str | None = None, summary: str = "", aliases: tuple[str, ...] = ()
) -> Concept:
    """An in-memory concept version (unique version id)."""
    name = name or concept_id.replace("_", " ")
    return Concept(concept_id, name, aliases, summary or f"{name}.", _grounding(), _stamp())


def make_edge(source_id: str, target_id: str, relation: str, confidence: float = 0.9) -> Edge:
    """An in-memory edge version (unique version id, so a unique ``e<id>`` reference)."""
    return Edge(source_id, target_id, relation, _grounding(confidence), _stamp())


def make_neighbour(
    from_id: str, concept: Concept | str, relation: str, *, direction: str = "out", confidence: float = 0.9
) -> Neighbour:
    """``concept`` reached from ``from_id`` (thin rows, as a neighbourhood read returns them);
    ``direction="out"``: from_id is the edge's source."""
    c = make_concept(concept) if isinstance(concept, str) else concept
    s, t = (from_id, c.concept_id) if direction == "out" else (c.concept_id, from_id)
    return Neighbour(make_edge(s, t, relation, confidence).row(), c.row(), from_id, direction)


def make_lesson_link(lesson_id: str, concept_id: str, title: str = "") -> LessonLink:
    """An in-memory active link: lesson ``lesson_id`` covers ``concept_id`` (unique ``l`` ref)."""
    version = Version("lesson_concepts", (lesson_id, concept_id), {}, _grounding(), _stamp())
    return LessonLink(lesson_id, title or lesson_id, concept_id, version)


def make_evidence(
    concepts: Iterable[str | Concept],
    edges: Iterable[tuple[str, str, str]] = (),
    *,
    seeds: Sequence[str] = (),
    lessons: Iterable[tuple[str, str]] = (),
) -> EvidenceGraph[Concept, Edge]:
    """An evidence graph from ids (or concepts), ``(source, target, relation)`` triples and
    ``(lesson id, concept id)`` links."""
    ev: EvidenceGraph[Concept, Edge] = EvidenceGraph(seeds=tuple(seeds))
    for c in concepts:
        ev.add_concept(make_concept(c) if isinstance(c, str) else c)
    for s, t, r in edges:
        ev.add_edge(make_edge(s, t, r))
    for lesson, concept in lessons:
        ev.add_lesson_link(make_lesson_link(lesson, concept))
    return ev


def make_request(
    question: str,
    evidence: EvidenceGraph[Any, Any],
    *,
    unexpanded: Iterable[str] = (),
    focus: Focus | None = None,
    round_no: int = 1,
) -> SynthesisRequest:
    """A synthesis request over ``evidence`` as of 2025-01-01."""
    return SynthesisRequest(
        question=question,
        focus=focus or Focus(),
        evidence=evidence,
        round_no=round_no,
        max_rounds=4,
        as_of=AsOf(_T0, _T0),
        unexpanded=frozenset(unexpanded),
    )


def draft(
    confidence: float,
    *,
    answer: str = "scripted answer",
    concept_ids: Sequence[str] = (),
    edge_ids: Sequence[str] = (),
    missing: str = "",
    next_focus: Focus | None = None,
    error: str | None = None,
    claim: Claim | None = None,
) -> Draft:
    """A draft with sensible defaults (one call, no tokens); without a ``claim`` it states none
    (and is never an answer)."""
    return Draft(
        answer=answer,
        confidence=confidence,
        concept_ids=tuple(concept_ids),
        edge_ids=tuple(edge_ids),
        missing=missing,
        next_focus=next_focus or Focus(),
        usage=Usage(calls=1),
        error=error,
        claim=claim,
    )


def cite_all(confidence: float) -> Callable[[SynthesisRequest], Draft]:
    """A script that claims every concept of the evidence as a complete answer set (citing every
    edge) with ``confidence``: right only when that is the answer."""

    def script(request: SynthesisRequest) -> Draft:
        ev = request.evidence
        members = tuple(sorted(ev.concepts))
        return draft(
            confidence,
            concept_ids=members,
            edge_ids=sorted(ev.edges),
            claim=Claim("set", True, members=members),
        )

    return script


def truthful(confidence: float, *, missing: str = "") -> Callable[[SynthesisRequest], Draft]:
    """A script that claims what the evidence gives (the claim of the one meaning the offline
    synthesizer answers with, complete or not as the evidence is) at ``confidence``."""
    from control_plane.synthesizers.offline import OfflineSynthesizer

    offline = OfflineSynthesizer()

    def script(request: SynthesisRequest) -> Draft:
        d = offline.synthesize(request)
        return replace(d, confidence=confidence, usage=Usage(calls=1), missing=missing or d.missing)

    return script


class ScriptedSynthesizer:
    """Returns scripted drafts and counts calls; ``requests`` keeps what each call was shown
    (``keep_requests=False``: nothing is kept, so a long benchmark's memory is the loop's own)."""

    def __init__(
        self,
        script: Sequence[Draft] | Callable[[SynthesisRequest], Draft],
        *,
        info: SynthesizerInfo | None = None,
        keep_requests: bool = True,
    ) -> None:
        if not callable(script) and not script:
            raise ValueError("a scripted synthesizer needs at least one draft")
        self._script = script
        self._info = info or SynthesizerInfo("scripted", "script", "test", offline=True)
        self._keep = keep_requests
        self._calls = 0
        self.requests: list[SynthesisRequest] = []

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    @property
    def calls(self) -> int:
        return self._calls

    def synthesize(self, request: SynthesisRequest) -> Draft:
        self._calls += 1
        if self._keep:
            self.requests.append(request)
        if callable(self._script):
            out = self._script(request)
        else:
            out = self._script[min(self._calls, len(self._script)) - 1]
        return out if out.usage.calls else replace(out, usage=replace(out.usage, calls=1))


class RecordingExpander:
    """Wraps an expander and records every one-hop expansion call as ``(ids, exclude)`` and
    every walk as ``(ids, direction, exclude)``."""

    def __init__(self, inner: Expander) -> None:
        self.inner = inner
        self.calls: list[tuple[frozenset[str], frozenset[str]]] = []
        self.walks: list[tuple[frozenset[str], str, frozenset[str]]] = []

    def neighbours(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        exclude: Collection[str] = (),
        relations: Collection[str] | None = None,
    ) -> list[Neighbour]:
        self.calls.append((frozenset(ids), frozenset(exclude)))
        return self.inner.neighbours(ids, as_of=as_of, exclude=exclude, relations=relations)

    def walk(
        self,
        ids: Collection[str],
        *,
        as_of: AsOf,
        direction: str,
        relations: Collection[str],
        max_depth: int | None,
        budget: int,
        exclude: Collection[str] = (),
    ) -> Walk:
        self.walks.append((frozenset(ids), direction, frozenset(exclude)))
        return self.inner.walk(
            ids,
            as_of=as_of,
            direction=direction,
            relations=relations,
            max_depth=max_depth,
            budget=budget,
            exclude=exclude,
        )
