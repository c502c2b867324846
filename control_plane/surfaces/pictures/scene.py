"""What a picture shows, before anything is laid out: pure functions from the answer JSON to scenes.

A :class:`Scene` is a set of concept boxes and relation edges, each marked cited or not, in a
*learning order*: every directed edge names a foundation (learned first) and a dependent, and
every picture format draws its arrow **from the foundation to what needs it**, one convention
for all relations. ``prerequisite`` (source before target) and ``part_of`` (the part before the
whole) keep their stored direction; ``builds_on`` (source builds on target) turns round, since its
*target* is the foundation. Symmetric relations do not order anything and have no arrow.
:data:`ARROW_WORDS` says what an edge means read along its arrow ("Embeddings - built on by ->
RAG"); the page writes no words on prerequisite and builds_on arrows (their line says which, in
the legend), only on the others.

Large scenes collapse by *stage*: stage 0 holds the concepts with no foundation in the scene,
stage k those whose deepest foundation is in stage k - 1 (a longest-path layering, the same
layers a study plan has). :func:`stage_members` and :func:`stage_links` summarise the stages;
:func:`stage_scene` is one stage with its direct foundations as faded context.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED, SYMMETRIC

__all__ = [
    "ARROW_WORDS",
    "LARGE",
    "UNLABELLED",
    "Abstention",
    "Answer",
    "Edge",
    "Node",
    "Scene",
    "abstention",
    "cited_scene",
    "evidence_scene",
    "grounding_text",
    "kinds",
    "learning_order",
    "stage_links",
    "stage_members",
    "stage_scene",
    "stages",
]

Answer = Mapping[str, Any]

# A picture with more concepts than this collapses by stage (an overview plus one picture per stage).
LARGE: Final = 40
# An edge read along its drawn arrow (foundation -> what needs it; symmetric: either way).
ARROW_WORDS: Final[dict[str, str]] = {
    PREREQUISITE: "prerequisite of",
    BUILDS_ON: "built on by",
    PART_OF: "part of",
    RELATED: "related",
    CONTRASTS_WITH: "contrasts with",
}
# Relations whose arrows carry no words on the page: the line's style says which (the legend).
UNLABELLED: Final = frozenset({PREREQUISITE, BUILDS_ON})
# Names wrap at 14 characters (a long word stays whole), at most 4 lines: narrow boxes keep a
# learning-order picture of some 30 concepts within a 1280 px page.
_WRAP: Final = 14
_MAX_LINES: Final = 4


@dataclass(frozen=True)
class Node:
    """A box: ``kind`` is seed, cited, evidence (or stage in an overview); ``faded`` is context;
    ``lines`` the name wrapped for the box, ``name`` the name as written (lists, text formats)."""

    id: str
    lines: tuple[str, ...]
    kind: str
    faded: bool
    title: str
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or " ".join(self.lines)


@dataclass(frozen=True)
class Edge:
    """A relation stored from ``source`` to ``target``, drawn from its foundation to what needs it
    (:func:`learning_order`); ``label`` is printed on it (empty for prerequisite and builds_on)."""

    id: str
    source: str
    target: str
    relation: str
    label: str
    cited: bool
    faded: bool
    title: str


@dataclass(frozen=True)
class Scene:
    """Concept boxes and relation edges; ``name`` prefixes the element ids of its picture."""

    name: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


@dataclass(frozen=True)
class Abstention:
    """What an abstention says to help: why, how the question was read, the concepts offered for a
    name that matched nothing (``(id, name)``) and phrasings the reader does understand."""

    reason: str
    read_as: str
    did_you_mean: tuple[tuple[str, str], ...]
    phrasings: tuple[str, ...]

    def lines(self) -> list[str]:
        """The same as plain lines (for the text formats), empty parts left out."""
        offered = ", ".join(f"{name} ({cid})" for cid, name in self.did_you_mean)
        return [
            f"Abstained: {self.reason}",
            *([f"read as: {self.read_as}"] if self.read_as else []),
            *([f"did you mean: {offered}?"] if offered else []),
            *([f"try asking: {' | '.join(self.phrasings)}"] if self.phrasings else []),
        ]


def abstention(answer: Answer) -> Abstention | None:
    """The abstention an answer is (None when it answered)."""
    if not answer.get("abstained"):
        return None
    reading = answer.get("reading") or {}
    offered = tuple((str(d["id"]), str(d["name"])) for d in answer.get("did_you_mean") or ())
    return Abstention(
        str(answer.get("abstain_reason") or "no reason given"),
        str(reading.get("read_as") or ""),
        offered,
        tuple(str(s) for s in reading.get("suggestions") or ()),
    )


def _concepts(answer: Answer) -> dict[str, Mapping[str, Any]]:
    return {c["concept_id"]: c for c in answer.get("evidence", {}).get("concepts", [])}


def _edges(answer: Answer) -> list[Mapping[str, Any]]:
    return list(answer.get("evidence", {}).get("edges", []))


def _seeds(answer: Answer) -> set[str]:
    return set(answer.get("seeds", []) or answer.get("evidence", {}).get("seeds", []))


def kinds(answer: Answer) -> dict[str, str]:
    """Each concept's kind: seed (the question names it), cited (the answer names it) or evidence.

    A seed that is also cited is drawn as a seed; the endpoints of a cited edge count as cited.
    """
    seeds = _seeds(answer)
    cited = {c["id"] for c in answer.get("cited_concepts", [])}
    cited_edges = set(answer.get("cited_edges", []))
    ids = set(_concepts(answer)) | seeds
    for e in _edges(answer):
        ids.update((e["source_id"], e["target_id"]))
        if e.get("edge_id") in cited_edges:
            cited.update((e["source_id"], e["target_id"]))
    return {cid: "seed" if cid in seeds else "cited" if cid in cited else "evidence" for cid in ids}


def learning_order(source: str, target: str, relation: str) -> tuple[str, str] | None:
    """(foundation, dependent) of a stored edge, or None for a symmetric relation."""
    if relation in SYMMETRIC:
        return None
    return (target, source) if relation == BUILDS_ON else (source, target)


def grounding_text(item: Mapping[str, Any]) -> str:
    """An edge's or concept's grounding and validity as plain lines (for tooltips)."""
    g = item.get("grounding", {})
    evidence = json.dumps(g.get("evidence"), ensure_ascii=False, sort_keys=True)
    return "\n".join(
        [
            f"confidence: {g.get('confidence')}",
            f"reason: {g.get('reason')}",
            f"source: {g.get('source')}",
            f"evidence: {evidence}",
            f"valid: {item.get('valid_at')} .. {item.get('invalid_at') or 'open'}",
            f"recorded: {item.get('recorded_at')} .. {item.get('expired_at') or 'current'}",
            f"version: {item.get('version_id')} ({item.get('op')})",
        ]
    )


def _wrap(text: str) -> tuple[str, ...]:
    lines = textwrap.wrap(text, _WRAP, break_long_words=False) or [text]
    if len(lines) > _MAX_LINES:
        rest = " ".join(lines[_MAX_LINES - 1 :])
        width = max(_WRAP, len(rest.split()[0]) + 1)
        lines = [*lines[: _MAX_LINES - 1], textwrap.shorten(rest, width, placeholder="…")]
    return tuple(lines)


def _label(relation: str) -> str:
    return "" if relation in UNLABELLED else ARROW_WORDS.get(relation, relation.replace("_", " "))


def evidence_scene(answer: Answer, *, name: str = "evidence") -> Scene:
    """Every gathered concept and edge; what the answer does not cite is faded."""
    concepts = _concepts(answer)
    kind = kinds(answer)
    cited_edges = set(answer.get("cited_edges", []))
    nodes = []
    for cid in sorted(kind):
        c = concepts.get(cid)
        label = str(c["name"]) if c else cid
        tip = grounding_text(c) if c else "(not in the evidence concepts)"
        nodes.append(
            Node(cid, _wrap(label), kind[cid], kind[cid] == "evidence", f"{label} ({cid})\n{tip}", label)
        )
    edges = []
    for i, e in enumerate(_edges(answer)):
        s, t, r = str(e["source_id"]), str(e["target_id"]), str(e["relation"])
        eid = str(e.get("edge_id") or f"edge{i}")
        names = (concepts[s]["name"] if s in concepts else s, concepts[t]["name"] if t in concepts else t)
        cited = eid in cited_edges
        tip = f"{names[0]} {r} {names[1]}\n{grounding_text(e)}"
        edges.append(Edge(eid, s, t, r, _label(r), cited, not cited, tip))
    more_nodes, more_edges = _requirements(answer, concepts)
    nodes += more_nodes
    edges += more_edges
    return Scene(
        name, tuple(nodes), tuple(sorted(edges, key=lambda e: (e.source, e.target, e.relation, e.id)))
    )


# A requirement group's drawing: its options' concepts point into one box ("one of"), which points
# to the concept that needs it; an option of several concepts labels its arrows with its number.
OPTION: Final = "option"
REQUIRES: Final = "requirement"
_COUNT_WORDS: Final = ("", "one of", "two of", "three of", "four of", "five of")


def _requirements(answer: Answer, concepts: Mapping[str, Mapping[str, Any]]) -> tuple[list[Node], list[Edge]]:
    """Each requirement group in the evidence as one box and its arrows, faded unless cited."""
    cited = set(answer.get("cited_requirements", []))
    nodes: list[Node] = []
    edges: list[Edge] = []
    for g in answer["evidence"].get("requirements", []):
        ref, target, k = str(g["ref"]), str(g["target_id"]), int(g["needs"])
        lit = g["group_id"] in cited
        word = _COUNT_WORDS[k] if k < len(_COUNT_WORDS) else f"{k} of"
        name = str(concepts.get(target, {}).get("name", target))
        tip = f"{name} needs {word} its options ({g['group_id']})\n{grounding_text(g)}"
        nodes.append(Node(ref, (word,), "requirement", not lit, tip, f"{word} ({g['group_id']})"))
        numbered = any(len(o) > 1 for o in g["options"])
        for n, option in enumerate(g["options"], 1):
            for c in option:
                label = f"option {n}" if numbered else ""
                edges.append(
                    Edge(
                        f"{ref}-{n}-{c}",
                        str(c),
                        ref,
                        OPTION,
                        label,
                        lit,
                        not lit,
                        f"{c}: option {n} of {g['group_id']}",
                    )
                )
        edges.append(Edge(f"{ref}-needs", ref, target, REQUIRES, "", lit, not lit, tip))
    return nodes, edges


def cited_scene(answer: Answer, *, name: str = "cited") -> Scene:
    """What the answer rests on: the seeds, the cited concepts and the cited edges, none faded."""
    full = evidence_scene(answer)
    edges = tuple(replace(e, faded=False) for e in full.edges if e.cited)
    keep = {
        n.id for n in full.nodes if n.kind in ("seed", "cited") or (n.kind == "requirement" and not n.faded)
    }
    return Scene(name, tuple(replace(n, faded=False) for n in full.nodes if n.id in keep), edges)


def stages(scene: Scene) -> dict[str, int]:
    """Each concept's stage: 0 without a foundation in the scene, else 1 + its deepest foundation's.

    Edges that would close a circle (possible between different relations) are ignored, the
    first one met in id order, so every scene has stages and the same scene the same ones.
    """
    foundations: dict[str, set[str]] = {n.id: set() for n in scene.nodes}
    for e in scene.edges:
        order = learning_order(e.source, e.target, e.relation)
        if order and order[0] != order[1] and order[0] in foundations and order[1] in foundations:
            foundations[order[1]].add(order[0])
    stage: dict[str, int] = {}
    visiting: set[str] = set()
    for root in sorted(foundations):
        if root in stage:
            continue
        # Iterative depth-first search: a 100-concept chain must not hit the recursion limit.
        work: list[tuple[str, list[str]]] = [(root, sorted(foundations[root]))]
        visiting.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop(0)
                if nxt not in stage and nxt not in visiting:
                    visiting.add(nxt)
                    work.append((nxt, sorted(foundations[nxt])))
                continue
            work.pop()
            visiting.discard(node)
            done = [stage[f] for f in foundations[node] if f in stage]
            stage[node] = 1 + max(done) if done else 0
    return stage


def stage_members(scene: Scene, stage: Mapping[str, int]) -> dict[int, list[Node]]:
    """Each stage's nodes, asked and cited first, then by name."""
    rank = {"seed": 0, "cited": 1, "evidence": 2}
    out: dict[int, list[Node]] = {}
    for n in sorted(scene.nodes, key=lambda n: (rank.get(n.kind, 3), n.label.lower(), n.id)):
        out.setdefault(stage[n.id], []).append(n)
    return dict(sorted(out.items()))


def stage_links(scene: Scene, stage: Mapping[str, int]) -> dict[int, dict[int, int]]:
    """For each stage, how many learning-order edges reach it from each earlier stage."""
    out: dict[int, dict[int, int]] = {}
    for e in scene.edges:
        order = learning_order(e.source, e.target, e.relation)
        if order:
            a, b = stage[order[0]], stage[order[1]]
            if a < b:
                out.setdefault(b, {}).setdefault(a, 0)
                out[b][a] += 1
    return out


def stage_scene(scene: Scene, stage: Mapping[str, int], k: int) -> Scene:
    """Stage ``k``'s concepts, the edges that reach them, and those edges' other ends faded and
    marked with their own stage."""
    members = {n.id for n in scene.nodes if stage[n.id] == k}
    edges = []
    for e in scene.edges:
        order = learning_order(e.source, e.target, e.relation)
        into_stage = order[1] in members if order else (e.source in members and e.target in members)
        if into_stage:
            edges.append(e)
    ends = members | {x for e in edges for x in (e.source, e.target)}
    nodes = tuple(
        n if n.id in members else replace(n, faded=True, lines=(*n.lines, f"(stage {stage[n.id] + 1})"))
        for n in scene.nodes
        if n.id in ends
    )
    return Scene(f"{scene.name}-stage{k + 1}", nodes, tuple(edges))
