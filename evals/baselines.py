"""The systems an eval compares, behind one small interface: ``run(question) -> Response``.

* ``loop`` — the planning loop (:class:`control_plane.planning.loop.Planner`), up to four rounds.
* ``seed-only`` — the seeds' direct neighbourhood (one SQL read), one synthesizer call.
* ``graphrag`` — one-shot GraphRAG: LlamaIndex ``PropertyGraphIndex`` retrieval over our
  :class:`~control_plane.planning.graph_store.SQLPropertyGraphStore`, a depth-2 rel map (the seeds'
  neighbourhood, then one needed-before step), at most ``GRAPHRAG_LIMIT``
  triplets (comparable to the loop's 12-24 concepts of evidence), one synthesizer call.
* ``whole-graph`` — the whole graph as of the question's time in context, one synthesizer call;
  skipped (with a note) above ``WHOLE_GRAPH_MAX_EDGES`` edges.

Every one-shot baseline seeds exactly like the loop (:class:`control_plane.understanding.names.NameIndex`
over the concepts in force, degree tie-break), builds an :class:`EvidenceGraph`, makes exactly one
``synthesize`` call with the same synthesizer, and applies the same verification
(:func:`control_plane.planning.verify.verify`, threshold 0.80) — below it, the baseline abstains. The
``unexpanded`` set handed to the synthesizer is computed honestly: a concept counts as expanded
only if every one of its active edges is in the evidence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from control_plane.evidence import EvidenceGraph
from control_plane.planning.verify import verify
from control_plane.synthesizers.base import Focus, SynthesisRequest, Synthesizer
from control_plane.synthesizers.offline import read_request
from control_plane.understanding.names import NameIndex
from data_plane.reads import GraphReader
from data_plane.records import EdgeLike, EdgeRow
from data_plane.temporal import AsOf
from evals.coverage import quoted_records
from evals.metrics import Response
from evals.questions import Question

__all__ = [
    "BASELINES",
    "GRAPHRAG_DEPTH",
    "GRAPHRAG_LIMIT",
    "WHOLE_GRAPH_MAX_EDGES",
    "GraphRAGBaseline",
    "LoopSystem",
    "SeedOnlyBaseline",
    "Skipped",
    "System",
    "WholeGraphBaseline",
    "answer_result",
    "build_systems",
    "cited_lessons",
    "did_you_mean",
    "set_aside_parts",
]

THRESHOLD: Final = 0.80
GRAPHRAG_DEPTH: Final = 2
GRAPHRAG_LIMIT: Final = 24
WHOLE_GRAPH_MAX_EDGES: Final = 2_000
BASELINES: Final = ("loop", "seed-only", "graphrag", "whole-graph", "loop-onehop")
# "loop-onehop" is the loop with its recursive walks switched off (one-hop expansion for every
# question): the before-walks loop, kept to show what the walks change.


class Skipped(Exception):
    """A system cannot run on this graph (e.g. the whole graph is too large); ``str`` says why."""


class System(Protocol):
    name: str

    def run(self, question: Question) -> Response: ...


def _as_of(reader: GraphReader, question: Question) -> AsOf:
    return reader.as_of(question.as_of_time, question.known_at_time)


@dataclass
class _Seeder:
    """Seeds exactly as the planner does: concept names in the question, most specific first."""

    reader: GraphReader
    _indexes: dict[tuple[Any, Any], NameIndex] = field(default_factory=dict)

    def seeds(self, question: Question, as_of: AsOf) -> list[str]:
        # Index per question time: concepts added later must not be found for a past question.
        key = (question.as_of, question.known_at)
        if key not in self._indexes:
            self._indexes[key] = NameIndex.build(self.reader.all_concepts(as_of=as_of))
        index = self._indexes[key]
        candidates = index.candidates(question.question)
        return index.find(question.question, self.reader.degrees(candidates, as_of=as_of))


class _OneShot:
    """Shared one-call machinery: retrieve evidence, synthesize once, verify, abstain below 0.80."""

    name = "one-shot"

    def __init__(
        self, reader: GraphReader, synthesizer: Synthesizer, *, threshold: float = THRESHOLD
    ) -> None:
        self.reader = reader
        self.synthesizer = synthesizer
        self.threshold = threshold
        self._seeder = _Seeder(reader)

    def retrieve(self, question: Question, seeds: list[str], as_of: AsOf) -> EvidenceGraph[Any, Any]:
        raise NotImplementedError

    def _unexpanded(self, evidence: EvidenceGraph[Any, Any], as_of: AsOf) -> frozenset[str]:
        touching: dict[str, int] = dict.fromkeys(evidence.concepts, 0)
        for e in evidence.edges.values():
            for end in (e.source_id, e.target_id):
                if end in touching:
                    touching[end] += 1
        degrees = self.reader.degrees(evidence.concepts, as_of=as_of)
        return frozenset(c for c, n in touching.items() if n < degrees.get(c, 0))

    def run(self, question: Question) -> Response:
        started = time.perf_counter()
        as_of = _as_of(self.reader, question)
        seeds = self._seeder.seeds(question, as_of)
        evidence = self.retrieve(question, seeds, as_of)
        request = SynthesisRequest(
            question=question.question,
            focus=Focus(),
            evidence=evidence,
            round_no=1,
            max_rounds=1,
            as_of=as_of,
            unexpanded=self._unexpanded(evidence, as_of),
        )
        # read the way the offline synthesizer reads a request without one, and checked by it
        request = replace(request, reading=read_request(request))
        assert request.reading is not None
        draft = self.synthesizer.synthesize(request)
        verdict = verify(draft, request, reading=request.reading, threshold=self.threshold)
        if verdict.accepted and verdict.draft is not None:
            draft = verdict.draft
        result = draft.result if verdict.accepted else None
        return Response(
            abstained=not verdict.accepted,
            cited=tuple(draft.concept_ids) if verdict.accepted else (),
            result=None if result is None else result.to_dict(),
            evidence=tuple(sorted(evidence.concepts)),
            confidence=verdict.confidence,
            rounds=1,
            llm_calls=draft.usage.calls,
            syntheses=1,
            prompt_tokens=draft.usage.prompt_tokens,
            completion_tokens=draft.usage.completion_tokens,
            reasoning_tokens=draft.usage.reasoning_tokens,
            cache_hit_tokens=draft.usage.cache_hit_tokens,
            cost_usd=draft.usage.cost_usd,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            text=draft.answer if verdict.accepted else "",
            abstain_reason=None if verdict.accepted else verdict.reason,
            error=draft.error,
            extra={"seeds": seeds, "evidence_edges": len(evidence.edges)},
            named=_named_spans([n.to_dict() for n in draft.names] if draft.names is not None else None)
            if verdict.accepted
            else None,
            quoted=(
                quoted_records(evidence, draft.concept_ids, draft.lesson_refs, draft.edge_ids)
                if verdict.accepted
                else ()
            ),
        )


def _evidence(
    seeds: list[str], concepts: dict[str, Any], edges: Sequence[EdgeLike]
) -> EvidenceGraph[Any, Any]:
    ev: EvidenceGraph[Any, Any] = EvidenceGraph(seeds=tuple(s for s in seeds if s in concepts))
    for cid in sorted(concepts):
        ev.add_concept(concepts[cid])
    for e in edges:
        if e.source_id in ev.concepts and e.target_id in ev.concepts:
            ev.add_edge(e)
    return ev


class SeedOnlyBaseline(_OneShot):
    """The seeds and their direct neighbourhood, one read."""

    name = "seed-only"

    def retrieve(self, question: Question, seeds: list[str], as_of: AsOf) -> EvidenceGraph[Any, Any]:
        concepts: dict[str, Any] = dict(self.reader.concepts(seeds, as_of=as_of))
        edges: list[EdgeRow] = []
        for n in self.reader.neighbourhood(seeds, as_of=as_of):
            concepts.setdefault(n.concept.concept_id, n.concept)
            edges.append(n.edge)
        return _evidence(seeds, concepts, edges)


class WholeGraphBaseline(_OneShot):
    """Everything in force as of the question's time, in one prompt (small graphs only)."""

    name = "whole-graph"

    def __init__(
        self,
        reader: GraphReader,
        synthesizer: Synthesizer,
        *,
        threshold: float = THRESHOLD,
        max_edges: int = WHOLE_GRAPH_MAX_EDGES,
    ) -> None:
        super().__init__(reader, synthesizer, threshold=threshold)
        self.max_edges = max_edges

    def check_size(self) -> None:
        """Raise :class:`Skipped` when the current graph has more than ``max_edges`` edges."""
        n = sum(self.reader.degrees([c.concept_id for c in self.reader.all_concepts()]).values()) // 2
        if n > self.max_edges:
            raise Skipped(f"whole-graph skipped: {n} edges > {self.max_edges} (does not fit one prompt)")

    def retrieve(self, question: Question, seeds: list[str], as_of: AsOf) -> EvidenceGraph[Any, Any]:
        snap = self.reader.snapshot(as_of)
        return _evidence(seeds, {c.concept_id: c for c in snap.concepts}, list(snap.edges))


class GraphRAGBaseline(_OneShot):
    """One-shot GraphRAG through LlamaIndex: ``PropertyGraphIndex.from_existing(store)`` and
    ``as_retriever(sub_retrievers=[...])`` whose sub-retriever walks ``get_rel_map`` (2 hops,
    ``limit`` triplets) from the seeds; the retrieved triplets become the evidence."""

    name = "graphrag"

    def __init__(
        self,
        reader: GraphReader,
        synthesizer: Synthesizer,
        *,
        threshold: float = THRESHOLD,
        depth: int = GRAPHRAG_DEPTH,
        limit: int = GRAPHRAG_LIMIT,
    ) -> None:
        super().__init__(reader, synthesizer, threshold=threshold)
        self.depth = depth
        self.limit = limit

    def retrieve(self, question: Question, seeds: list[str], as_of: AsOf) -> EvidenceGraph[Any, Any]:
        retriever = _llama_retriever(self.reader, as_of, seeds, depth=self.depth, limit=self.limit)
        version_ids: list[int] = []
        for node in retriever.retrieve(question.question):
            vid = node.node.metadata.get("edge_version_id")
            if isinstance(vid, int):
                version_ids.append(vid)
        edges = list(self.reader.edges_by_version(version_ids).values())
        ends = {i for e in edges for i in (e.source_id, e.target_id)} | set(seeds)
        return _evidence(seeds, dict(self.reader.concepts(ends, as_of=as_of)), edges)


def _llama_retriever(reader: GraphReader, as_of: AsOf, seeds: list[str], *, depth: int, limit: int) -> Any:
    # Imported here: LlamaIndex is slow to import and only this baseline needs it.
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.indices.property_graph import PropertyGraphIndex
    from llama_index.core.indices.property_graph.sub_retrievers.custom import (
        CUSTOM_RETRIEVE_TYPE,
        CustomPGRetriever,
    )
    from llama_index.core.llms import MockLLM
    from llama_index.core.schema import NodeWithScore, TextNode

    from control_plane.planning.graph_store import SQLPropertyGraphStore

    class _SeededRelMap(CustomPGRetriever):
        """Seeds (chosen like the loop's) → ``get_rel_map(depth, limit)`` → one node per triplet,
        carrying the edge's version id so the evidence pins exactly what was read."""

        def init(self, **kwargs: Any) -> None:
            self._seeds: list[str] = kwargs["seeds"]
            self._depth: int = kwargs["depth"]
            self._limit: int = kwargs["limit"]

        def custom_retrieve(self, query_str: str) -> CUSTOM_RETRIEVE_TYPE:
            if not self._seeds:
                return []
            store = self.graph_store
            triplets = store.get_rel_map(store.get(ids=self._seeds), depth=self._depth, limit=self._limit)
            out: list[NodeWithScore] = []
            for s, r, t in triplets:
                text = f"{s.id} -{r.label}-> {t.id}"
                meta = {"edge_version_id": r.properties.get("version_id"), "key": r.properties.get("key")}
                out.append(NodeWithScore(node=TextNode(text=text, metadata=meta), score=1.0))
            return out

    store = SQLPropertyGraphStore(reader, as_of=as_of)
    index = PropertyGraphIndex.from_existing(
        property_graph_store=store,
        llm=MockLLM(),
        embed_model=MockEmbedding(embed_dim=8),
        embed_kg_nodes=False,
        use_async=False,
    )
    sub = _SeededRelMap(store, seeds=seeds, depth=depth, limit=limit)
    return index.as_retriever(sub_retrievers=[sub])


class LoopSystem:
    """The planning loop, adapted to the eval interface (answers are not recorded by default)."""

    def __init__(self, planner: Any, *, record: bool = False, name: str = "loop") -> None:
        self.planner = planner
        self.record = record
        self.name = name

    def run(self, question: Question) -> Response:
        started = time.perf_counter()
        answer = self.planner.ask(
            question.question, as_of=question.as_of_time, known_at=question.known_at_time, record=self.record
        )
        wall = (time.perf_counter() - started) * 1000.0
        answer_dict = answer.to_dict()
        return Response(
            abstained=answer.abstained,
            cited=tuple(answer.cited_concept_ids),
            evidence=tuple(sorted(answer.evidence.concepts)),
            confidence=answer.confidence,
            rounds=len(answer.rounds),
            llm_calls=answer.llm_calls,
            syntheses=answer.syntheses,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            reasoning_tokens=answer.reasoning_tokens,
            cache_hit_tokens=answer.cache_hit_tokens,
            cost_usd=answer.cost_usd,
            latency_ms=answer.latency_ms or wall,
            text=answer.text,
            abstain_reason=answer.abstain_reason,
            extra={"seeds": list(answer.seeds), "evidence_edges": len(answer.evidence.edges)},
            lessons=cited_lessons(answer_dict),
            as_of_valid=answer.as_of.to_dict()["valid_at"],
            result=answer_result(answer_dict),
            did_you_mean=did_you_mean(answer_dict),
            set_aside=set_aside_parts(answer_dict),
            named=_named_spans(answer_dict.get("names")),
            quoted=quoted_records(
                answer.evidence,
                answer.cited_concept_ids,
                answer.extra.get("cited_lesson_links", ()),
                answer.cited_edges,
            ),
        )


def _named_spans(spans: Any) -> tuple[str, ...] | None:
    """The concepts an answer's text names, from the spans its synthesizer gave (None: free text,
    which the runner reads for names)."""
    return None if spans is None else tuple(sorted({s["id"] for s in spans}))


def _ids(items: Any) -> tuple[str, ...]:
    """Ids from a list of ids or of objects with an ``id``, in order, once each."""
    out: list[str] = []
    for item in items or ():
        cid = item.get("id") if isinstance(item, dict) else item
        if isinstance(cid, str) and cid:
            out.append(cid)
    return tuple(dict.fromkeys(out))


def cited_lessons(answer: dict[str, Any]) -> tuple[str, ...]:
    """The lesson ids an ``answer/1`` dict cites, from its ``cited_lessons`` key (ids, or objects
    with an ``id``); empty when the answer names no lessons (see docs/evals.md)."""
    return _ids(answer.get("cited_lessons"))


def answer_result(answer: dict[str, Any]) -> dict[str, Any] | None:
    """An answer dict's ``result`` (what it found: intent, members, holds, count, first, how ...),
    or None when it has none (abstained, or an answer written before results)."""
    result = answer.get("result")
    return dict(result) if isinstance(result, dict) else None


def did_you_mean(answer: dict[str, Any]) -> tuple[str, ...]:
    """The concept ids an answer dict offers for a name that matched nothing (``did_you_mean``:
    objects with an ``id``, or ids)."""
    return _ids(answer.get("did_you_mean"))


def set_aside_parts(answer: dict[str, Any]) -> tuple[str, ...]:
    """The parts of the question an answer dict says it did not answer (its top-level
    ``set_aside`` list of strings); empty when it has none."""
    parts = answer.get("set_aside")
    if not isinstance(parts, list):
        return ()
    return tuple(p for p in parts if isinstance(p, str) and p.strip())


def build_systems(
    names: list[str],
    reader: GraphReader,
    synthesizer: Synthesizer,
    *,
    planner_factory: Callable[..., Any],
    whole_graph_max_edges: int = WHOLE_GRAPH_MAX_EDGES,
) -> tuple[list[System], dict[str, str]]:
    """The named systems, in order, and notes for the ones skipped."""
    systems: list[System] = []
    notes: dict[str, str] = {}
    for name in names:
        if name == "loop":
            systems.append(LoopSystem(planner_factory()))
        elif name == "loop-onehop":
            systems.append(LoopSystem(planner_factory(walks=False), name=name))
        elif name == "seed-only":
            systems.append(SeedOnlyBaseline(reader, synthesizer))
        elif name == "graphrag":
            systems.append(GraphRAGBaseline(reader, synthesizer))
        elif name == "whole-graph":
            whole = WholeGraphBaseline(reader, synthesizer, max_edges=whole_graph_max_edges)
            try:
                whole.check_size()
            except Skipped as exc:
                notes[name] = str(exc)
                continue
            systems.append(whole)
        else:
            raise ValueError(f"unknown system {name!r}; choose from {', '.join(BASELINES)}")
    return systems, notes
