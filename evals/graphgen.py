"""A deterministic, curriculum-like synthetic graph for benchmarks.

``generate(edges, seed=...)`` builds ``n = max(20, edges // 5)`` concepts (ids ``c0000000`` ...)
spread over layers ordered like a syllabus, and about ``edges`` typed edges:

* ``prerequisite`` (30 %): from a concept to one up to three layers later (so always acyclic);
* ``builds_on`` (35 %): from a concept to one up to three layers earlier (the foundation);
* ``part_of`` (15 %): from a concept to one of the "module" concepts (every 25th id) after it;
* ``related`` (12 %) and ``contrasts_with`` (8 %): between concepts of the same or adjacent layer.

Every edge has its own reason, like the hand-written curriculum; confidence, source, evidence and
valid_at come from the manifest defaults. Each concept is linked to one lesson (25 per lesson).
The same ``(edges, seed)`` always gives the same graph, byte for byte.

:func:`write_bundle` writes it as a ``kg-bundle/1`` folder, so an import is measured through the
real parser; :func:`writes` yields the same graph as gateway :class:`Write` objects.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from data_plane.bundle import BUNDLE_FORMAT
from data_plane.clock import parse_time
from data_plane.gateway import Write
from data_plane.records import Grounding
from data_plane.relations import canonical_edge

__all__ = ["SyntheticGraph", "generate", "groups", "topic_map", "write_bundle", "write_groups", "writes"]

_MIX: Final = (
    ("prerequisite", 0.30),
    ("builds_on", 0.35),
    ("part_of", 0.15),
    ("related", 0.12),
    ("contrasts_with", 0.08),
)
_WORDS: Final = [
    "attention",
    "gradient",
    "retrieval",
    "embedding",
    "token",
    "vector",
    "agent",
    "memory",
    "prompt",
    "decoding",
    "sampling",
    "cache",
    "index",
    "graph",
    "loss",
    "optimizer",
    "layer",
    "head",
    "batch",
    "router",
    "tool",
    "planner",
    "evaluator",
    "reranker",
    "chunk",
    "encoder",
    "decoder",
    "adapter",
    "reward",
    "policy",
]
_KINDS: Final = ("basics", "theory", "methods", "systems", "patterns", "metrics", "tuning", "design")
_MODULE_EVERY: Final = 25
_LESSON_SIZE: Final = 25
DEFAULTS: Final = {
    "source": "evals.graphgen",
    "reason": "synthetic benchmark concept",
    "confidence": 0.9,
    "evidence": {"generator": "evals.graphgen"},
    "valid_at": "2024-01-01T00:00:00Z",
}


@dataclass(frozen=True)
class SyntheticGraph:
    """Concepts ``(id, name, alias, summary)`` and edges ``(source, target, relation, reason)``."""

    seed: int
    concepts: tuple[tuple[str, str, str, str], ...]
    edges: tuple[tuple[str, str, str, str], ...]

    def lesson_of(self, index: int) -> str:
        return f"L{index // _LESSON_SIZE:06d}"


def generate(edges: int, *, seed: int = 7) -> SyntheticGraph:
    """A graph of about ``edges`` edges (exactly, unless the concept set is too small to hold them)."""
    rng = random.Random(seed)
    n = max(20, edges // 5)
    layers = max(3, int(n**0.5 / 2))
    width = max(1, n // layers)

    def layer(i: int) -> int:
        return min(i // width, layers - 1)

    ids = [f"c{i:07d}" for i in range(n)]
    concepts = []
    for i, cid in enumerate(ids):
        word = _WORDS[i % len(_WORDS)]
        kind = _KINDS[(i // len(_WORDS)) % len(_KINDS)]
        name = f"{word.capitalize()} {kind} {i}"
        concepts.append(
            (cid, name, f"{word}-{kind}-{i}", f"{name}: layer {layer(i)} of the synthetic syllabus.")
        )

    cum: list[tuple[str, float]] = []
    total = 0.0
    for rel, share in _MIX:
        total += share
        cum.append((rel, total))
    seen: set[tuple[str, str, str]] = set()
    out: list[tuple[str, str, str, str]] = []
    attempts = 0
    while len(out) < edges and attempts < edges * 20:
        attempts += 1
        r = rng.random()
        rel = next(name for name, bound in cum if r <= bound)
        j = rng.randrange(n)
        if rel in ("prerequisite", "builds_on"):
            i = j - rng.randint(1, 3 * width)
            if i < 0 or layer(i) == layer(j):
                continue
            s, t = (i, j) if rel == "prerequisite" else (j, i)
        elif rel == "part_of":
            module = (j // _MODULE_EVERY + 1) * _MODULE_EVERY + rng.randrange(4) * _MODULE_EVERY
            if module >= n:
                continue
            s, t = j, module
        else:
            i = j + rng.randint(1, 2 * width)
            if i >= n:
                continue
            s, t = j, i
        key = canonical_edge(ids[s], ids[t], rel)
        if key in seen:
            continue
        seen.add(key)
        out.append((*key, f"synthetic {rel} edge #{len(out)} (seed {seed})"))
    return SyntheticGraph(seed, tuple(concepts), tuple(out))


def topic_map(topics: int, *, window: int = 50, prerequisites: int = 2, seed: int = 7) -> SyntheticGraph:
    """A map of ``topics`` topics ("Topic 0" ...), each after ``prerequisites`` of the ``window``
    topics before it (``prerequisite`` edges only): the closure of the last topic holds nearly
    every topic, over chains about ``topics / window * 2`` steps deep (docs/benchmarks.md,
    "Closures of any size")."""
    rng = random.Random(seed)
    ids = [f"t{i:07d}" for i in range(topics)]
    concepts = tuple((cid, f"Topic {i}", "", f"Topic {i} of the generated map.") for i, cid in enumerate(ids))
    edges = []
    for j in range(1, topics):
        before = range(max(0, j - window), j)
        for i in sorted(rng.sample(before, min(prerequisites, len(before)))):
            edges.append((ids[i], ids[j], "prerequisite", f"topic map edge {i}>{j} (seed {seed})"))
    return SyntheticGraph(seed, concepts, tuple(edges))


def write_bundle(graph: SyntheticGraph, path: str | Path) -> Path:
    """Write ``graph`` as a ``kg-bundle/1`` folder at ``path``; return the folder."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": BUNDLE_FORMAT,
        "name": f"synthetic-{len(graph.edges)}-seed{graph.seed}",
        "description": "Synthetic curriculum-like graph (evals.graphgen).",
        "defaults": DEFAULTS,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with (folder / "concepts.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("id", "name", "aliases", "summary"))
        w.writerows(graph.concepts)
    with (folder / "concept_edges.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("source_id", "target_id", "relation", "reason"))
        w.writerows(graph.edges)
    with (folder / "lesson_concepts.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("lesson_id", "lesson_title", "concept_id"))
        for i, (cid, *_) in enumerate(graph.concepts):
            lesson = graph.lesson_of(i)
            w.writerow((lesson, f"Lesson {lesson}", cid))
    return folder


def groups(
    graph: SyntheticGraph, *, share: float = 0.2, seed: int = 7
) -> list[tuple[str, str, int, list[str]]]:
    """Requirement groups for ``graph``: about ``share`` of the concepts (past the first layer)
    get one group ``(group id, target, needs, options)``, one of 2-4 single-concept options drawn
    from earlier layers as prerequisites are (needs 2 of 4 now and then), so every concept stays
    learnable (members always lie in earlier layers)."""
    rng = random.Random(seed * 31 + 1)
    n = len(graph.concepts)
    layers = max(3, int(n**0.5 / 2))
    width = max(1, n // layers)
    ids = [c[0] for c in graph.concepts]
    out: list[tuple[str, str, int, list[str]]] = []
    for j in range(width, n):
        if rng.random() >= share:
            continue
        first = (j // width) * width  # the first concept of j's layer
        choices = sorted(
            {rng.randint(max(0, first - 3 * width), first - 1) for _ in range(rng.randint(2, 4))}
        )
        if len(choices) < 2:
            continue
        needs = 2 if len(choices) == 4 and rng.random() < 0.25 else 1
        out.append((f"{ids[j]}.1", ids[j], needs, [ids[i] for i in choices]))
    return out


def write_groups(found: list[tuple[str, str, int, list[str]]], path: str | Path) -> Path:
    """Write ``found`` (from :func:`groups`) as the bundle's requirement_groups.csv and
    requirement_members.csv (grounding from the manifest's defaults)."""
    folder = Path(path)
    with (folder / "requirement_groups.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("group_id", "target_id", "needs"))
        w.writerows((gid, target, needs) for gid, target, needs, _ in found)
    with (folder / "requirement_members.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("group_id", "option", "concept_id"))
        for gid, _, _, options in found:
            w.writerows((gid, i, cid) for i, cid in enumerate(options, 1))
    return folder


def writes(graph: SyntheticGraph) -> Iterator[Write]:
    """The same graph as gateway writes (concepts, then edges; lessons are left out)."""
    valid_at = parse_time(str(DEFAULTS["valid_at"]))
    base = Grounding(0.9, str(DEFAULTS["reason"]), str(DEFAULTS["source"]), DEFAULTS["evidence"])
    for cid, name, alias, summary in graph.concepts:
        yield Write.concept(
            cid, grounding=base, name=name, aliases=[alias], summary=summary, valid_at=valid_at
        )
    for s, t, rel, reason in graph.edges:
        g = Grounding(0.9, reason, base.source, base.evidence)
        yield Write.edge(s, t, rel, grounding=g, valid_at=valid_at)
