"""A stand-in DeepSeek that answers from the prompt alone, honestly or with one lie, and what it gets through.

The production path sends a model the question's reading, its claim contract and the evidence
(``control_plane.synthesizers.prompts``), and the verifier checks the claim that comes back. To
test that check with a model that lies, this module plays the model:

* :func:`read_prompt` reads a chat request the way a model must: the reading (JSON), the
  contract, the evidence (either prompt form: the full list or the compact closure layers) and
  the concepts not expanded yet;
* :func:`honest_claim` answers it **independently of the backend**: networkx over the prompt's
  edges, by the semantics the docs state (docs/control-plane.md), never by calling the offline
  synthesizer or the verifier;
* :data:`LIES` turns the honest claim into a lie of one kind (a flipped yes/no, half a set called
  complete, a wrong count, a path with a gap or the wrong edge, a step reversed, an invented id,
  a lesson of another concept, a closure claimed complete from an incomplete walk ...);
* :class:`Liar` is the model: an ``httpx.MockTransport`` handler (no network) or, through
  :meth:`Liar.reply`, a responder for the tests' loopback fake server.

``python -m evals.liar [--questions FILE] [--bundle DIR] [--modes ...] [--out DIR]`` runs a question
set through the loop with each kind of lie and the honest model, and reports, per mode, how many
answers were emitted, how many of those are wrong against the gold (networkx over the bundle,
``evals.gold``), and the model calls per question (docs/llm.md, "A model that lies").
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import networkx as nx

__all__ = ["LIES", "Liar", "PromptView", "honest_claim", "main", "read_prompt"]

LEARNING: Final = ("prerequisite", "builds_on")
SYMMETRIC: Final = ("related", "contrasts_with")
INVENTED: Final = "entropic_context_weaving"
READ_REQUEST: Final = "You read a learner's question"

Edge = tuple[str, str, str]  # source, relation, target


@dataclass
class PromptView:
    """What a chat request tells the model (module docstring)."""

    reading: dict[str, Any]
    contract: str
    edges: dict[str, Edge] = field(default_factory=dict)  # ref -> (source, relation, target)
    concepts: set[str] = field(default_factory=set)
    lessons: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref -> (lesson id, concept id)
    unexpanded: set[str] = field(default_factory=set)
    unexpanded_more: bool = False  # the prompt counted more unexpanded concepts than it listed
    rejected: str = ""
    waits_on: set[str] = field(default_factory=set)  # unexpanded concepts the honest claim depends on

    def ids(self, *roles: str) -> list[str]:
        return [s["concept_id"] for s in self.reading.get("subjects", []) if not roles or s["role"] in roles]

    @property
    def subject(self) -> str | None:
        found = self.ids("subject") or self.ids("target")
        return found[0] if found else None

    @property
    def other(self) -> str | None:
        found = self.ids("target") if self.reading["intent"] == "path" else self.ids("other", "excluded")
        return found[0] if found else None

    @property
    def candidate(self) -> str | None:
        found = self.ids("candidate")
        return found[0] if found else None


_CONTRACT: Final = re.compile(r"^Claim contract for this question: (\w+)")
_FENCED: Final = re.compile(r"<<<(EVIDENCE-[0-9a-f]+)\n(.*?)\n\1>>>", re.DOTALL)
_FULL_EDGE: Final = re.compile(r"^- (e\d+) \| (\S+) -(\w+)-> (\S+) \|")
_FULL_CONCEPT: Final = re.compile(r"^- (\S+)(?: \[seed\])? \|")
_FULL_LESSON: Final = re.compile(r"^- (l\d+) \| (\S+) \| .* \| (\S+)$")
_COMPACT_NEED: Final = re.compile(r"^(\S+?)([=/])(e\d+)\??$")
_OTHER_EDGE: Final = re.compile(r"^(e\d+) (\S+)>(\w+)>(\S+)$")
_COMPACT_LESSON: Final = re.compile(r"^(l\d+) (\S+) (\S+)$")


def read_prompt(messages: Sequence[dict[str, Any]]) -> PromptView:
    """The reading, contract, evidence and boundary of a synthesis request's messages."""
    user = next(str(m["content"]) for m in messages if m.get("role") == "user")
    lines = user.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("How the question was read"))
    reading = json.loads(lines[at + 1])
    contract = next(m.group(1) for line in lines if (m := _CONTRACT.match(line)))
    view = PromptView(reading, contract)
    fenced = _FENCED.search(user)
    body = fenced.group(2) if fenced else ""
    if body.startswith("LEARNING ORDER"):
        _compact(body, view)
    else:
        _full(body, view)
    for line in lines:
        if line.startswith("Concepts whose neighbourhoods are not expanded yet"):
            listed = line.split("): ", 1)[1]
            if " and " in listed and listed.endswith(" more"):
                listed, view.unexpanded_more = listed.rsplit(" and ", 1)[0], True
            view.unexpanded = {c.strip() for c in listed.split(",") if c.strip()}
        elif line.startswith("Your previous claim was refused: "):
            view.rejected = line.split(": ", 1)[1]
    return view


def _full(body: str, view: PromptView) -> None:
    for line in body.splitlines():
        if m := _FULL_EDGE.match(line):
            view.edges[m.group(1)] = (m.group(2), m.group(3), m.group(4))
        elif m := _FULL_LESSON.match(line):
            view.lessons[m.group(1)] = (m.group(2), m.group(3))
        elif m := _FULL_CONCEPT.match(line):
            view.concepts.add(m.group(1))


def _compact(body: str, view: PromptView) -> None:
    section = "order"
    for line in body.splitlines():
        if line.startswith("OTHER EDGES"):
            section = "other"
        elif line.startswith("LESSON LINKS"):
            section = "lessons"
        elif line.startswith("seeds: "):
            view.concepts |= {c.strip() for c in line[len("seeds: ") :].split(",") if c.strip()}
        elif section == "order" and re.match(r"^L\d+: ", line):
            for item in line.split(": ", 1)[1].split("; "):
                concept, _, needs = item.partition(": ")
                view.concepts.add(concept)
                for need in needs.split():
                    m = _COMPACT_NEED.match(need)
                    if m is None:
                        continue
                    earlier, mark, ref = m.groups()
                    view.concepts.add(earlier)
                    view.edges[ref] = (
                        (earlier, "prerequisite", concept) if mark == "=" else (concept, "builds_on", earlier)
                    )
        elif section == "other" and (m := _OTHER_EDGE.match(line)):
            view.edges[m.group(1)] = (m.group(2), m.group(3), m.group(4))
            view.concepts |= {m.group(2), m.group(4)}
        elif section == "lessons" and (m := _COMPACT_LESSON.match(line)):
            view.lessons[m.group(1)] = (m.group(2), m.group(3))


# -- the honest model: networkx over the prompt's evidence --------------------------------------


def _order_graph(view: PromptView, relations: Iterable[str]) -> nx.DiGraph:
    """``u -> v`` (edge attribute ``ref``) when u comes before v: prerequisite u -> v, v builds_on u."""
    g = nx.DiGraph()
    g.add_nodes_from(view.concepts)
    wanted = set(relations)
    for ref, (s, r, t) in sorted(view.edges.items(), key=lambda kv: int(kv[0][1:])):
        if r not in wanted:
            continue
        u, v = (s, t) if r == "prerequisite" else (t, s) if r == "builds_on" else (None, None)
        if u is not None and not g.has_edge(u, v):
            g.add_edge(u, v, ref=ref)
    return g


def _mode(reading: dict[str, Any]) -> str | None:
    intent = reading["intent"]
    if intent in ("parts", "wholes"):
        return str(intent)
    if intent in ("contrasts", "related", "neighbours"):
        return "either"
    if reading.get("direction") == "after":
        return "after"
    if reading.get("direction") in ("before", "forward"):
        return "before"
    return None


def _step_graph(view: PromptView) -> nx.DiGraph:
    """``x -> y`` (attribute ``ref``) when y is one step from x in the reading's mode."""
    reading = view.reading
    mode = _mode(reading) or "before"
    relations = set(reading.get("relations") or ()) if reading["intent"] != "neighbours" else None
    g = nx.DiGraph()
    g.add_nodes_from(view.concepts)
    for ref, (s, r, t) in sorted(view.edges.items(), key=lambda kv: int(kv[0][1:])):
        if relations and r not in relations:
            continue
        if mode == "either":
            pairs = [(s, t), (t, s)]
        elif r == "prerequisite":
            pairs = [(t, s)] if mode == "before" else [(s, t)] if mode == "after" else []
        elif r == "builds_on":
            pairs = [(s, t)] if mode == "before" else [(t, s)] if mode == "after" else []
        elif r == "part_of":
            pairs = [(t, s)] if mode == "parts" else [(s, t)] if mode == "wholes" else []
        else:
            pairs = []
        for a, b in pairs:
            if not g.has_edge(a, b):
                g.add_edge(a, b, ref=ref)
    return g


def _reach(g: nx.DiGraph, x: str, depth: int | None) -> dict[str, int]:
    if x not in g:
        return {}
    return dict(nx.single_source_shortest_path_length(g, x, cutoff=depth))


def _path_refs(g: nx.DiGraph, nodes: Sequence[str]) -> list[str]:
    return [str(g.edges[a, b]["ref"]) for a, b in itertools.pairwise(nodes)]


def _set_of(view: PromptView, x: str) -> tuple[set[str], set[str]]:
    """(answer set of the reading for subject ``x``, the concepts it depends on)."""
    reading = view.reading
    if _mode(reading) is None:  # about: every neighbour
        hits = {t if s == x else s for s, _, t in view.edges.values() if x in (s, t)}
        return hits - {x}, {x}
    g = _step_graph(view)
    if reading["intent"] == "neighbours":
        hops = int(reading.get("hops") or 1)
        dist = _reach(g, x, hops)
        members = {c for c, d in dist.items() if c != x and (d == hops if reading.get("exact") else d >= 1)}
        return members, {c for c, d in dist.items() if d < hops}
    depth = None if reading.get("transitive") else 1
    members = set(_reach(g, x, depth)) - {x}
    return members, ({x} | members) if reading.get("transitive") else {x}


def _known_closure(view: PromptView, known: Iterable[str]) -> set[str]:
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    out: set[str] = set()
    for k in known:
        if k in g:
            out |= {k} | set(nx.ancestors(g, k))
    return out


def _complete(view: PromptView, depends: set[str]) -> bool:
    """Whether nothing ``depends`` holds is unexpanded (what is, the next focus asks for)."""
    view.waits_on |= depends & view.unexpanded
    return not (depends & view.unexpanded) and not view.unexpanded_more


def _sets(view: PromptView) -> tuple[set[str], set[str]]:
    """(members, depends on) of a set reading, with combinations and what is known."""
    reading, x, y = view.reading, view.subject, view.other
    assert x is not None
    intent = reading["intent"]
    if intent == "before_uses" and y is not None:
        g = _order_graph(view, reading.get("relations") or LEARNING)
        closure = set(nx.ancestors(g, x)) if x in g else set()
        uses = {t for s, r, t in view.edges.values() if s == y and r == "builds_on" and t != y}
        # Decided without the whole closure when every foundation of y off the closure found so
        # far has nothing unexpanded after it: no path from it to x can be out of view.
        off = {y} | {d for u in uses - closure for d in {u, *nx.descendants(g, u)}}
        if not (off & view.unexpanded) and not view.unexpanded_more:
            return closure & uses, off
        return closure & uses, {x, y} | closure | uses
    if intent == "study_plan":
        g = _order_graph(view, reading.get("relations") or LEARNING)
        closure = set(nx.ancestors(g, x)) if x in g else set()
        return closure - _known_closure(view, view.ids("known")), {x} | closure
    members, depends = _set_of(view, x)
    combine = reading.get("combine") or ""
    if combine and y is not None:
        other, more = _set_of(view, y)
        depends |= more
        members = (
            members & other
            if combine == "both"
            else members | other
            if combine == "either"
            else members - other - {y}
        )
    elif intent == "contrasts" and y is not None:
        members &= {y}
    known = view.ids("known")
    if known and _mode(reading) == "before" and reading.get("transitive"):
        rests = _known_closure(view, known)
        members -= rests
        depends |= rests
    elif known:
        members -= set(known)
    return members, depends


def _lessons(view: PromptView) -> tuple[set[str], set[str]]:
    reading, x = view.reading, view.subject
    assert x is not None
    if reading["intent"] == "lessons_covering":
        return {r for r, (_, c) in view.lessons.items() if c == x}, {x}
    g = _order_graph(view, reading.get("relations") or LEARNING)
    before = (
        (set(nx.ancestors(g, x)) if reading.get("transitive") else set(g.predecessors(x)))
        if x in g
        else set()
    )
    own = {lesson for lesson, c in view.lessons.values() if c == x}
    return {r for r, (lesson, c) in view.lessons.items() if c in before and lesson not in own}, {x} | before


def _check(view: PromptView) -> dict[str, Any]:
    y, x = view.subject, view.candidate
    assert y is not None and x is not None
    g = _step_graph(view)
    depth = None if view.reading.get("transitive") else 1
    dist = _reach(g, y, depth)
    if x in dist:
        nodes = nx.shortest_path(g, y, x)
        return {"holds": True, "path": _path_refs(g, nodes), "complete": True}
    depends = set(dist) if depth is None else {y}
    done = _complete(view, depends)
    return {"holds": False if done else None, "path": [], "complete": done}


def _why(view: PromptView) -> dict[str, Any]:
    y, x = view.subject, view.candidate
    assert y is not None and x is not None
    g = _step_graph(view)
    dist = _reach(g, y, None)
    if x not in dist:
        done = _complete(view, set(dist))
        return {"holds": False if done else None, "steps": [], "complete": done}
    steps: dict[str, dict[str, str]] = {}
    for nodes in nx.all_shortest_paths(g, y, x):
        for ref in _path_refs(g, nodes):
            s, r, t = view.edges[ref]
            steps[ref] = {"source": s, "relation": r, "target": t, "edge_id": ref}
    nearer = {c for c, d in dist.items() if d < dist[x]}
    return {"holds": True, "steps": list(steps.values()), "complete": _complete(view, nearer)}


def _order(view: PromptView) -> dict[str, Any]:
    a, b = view.subject, view.other
    assert a is not None and b is not None
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    for first, then in ((a, b), (b, a)):
        if first in g and then in g and nx.has_path(g, first, then):
            return {"first": first, "path": _path_refs(g, nx.shortest_path(g, first, then)), "complete": True}
    depends = {a, b} | {c for z in (a, b) if z in g for c in nx.ancestors(g, z)}
    return {"first": None, "path": [], "complete": _complete(view, depends)}


def _path(view: PromptView) -> dict[str, Any]:
    a, b = view.subject, view.other
    assert a is not None and b is not None
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    if a in g and b in g and nx.has_path(g, a, b):
        nodes = nx.shortest_path(g, a, b)
        back = dict(nx.single_source_shortest_path_length(g.reverse(copy=False), b))
        nearer = {c for c, d in back.items() if d < back[a]}
        return {"path": _path_refs(g, nodes), "complete": _complete(view, nearer)}
    depends = {b} | (set(nx.ancestors(g, b)) if b in g else set())
    return {"path": [], "complete": _complete(view, depends)}


def _relate(view: PromptView) -> dict[str, Any]:
    a, b = view.subject, view.other
    assert a is not None and b is not None
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    anc = {z: set(nx.ancestors(g, z)) if z in g else set() for z in (a, b)}
    for first, then in ((a, b), (b, a)):
        if first in anc[then]:
            nodes = {n for p in nx.all_shortest_paths(g, first, then) for n in p}
            return {"how": "path", "members": sorted(nodes), "complete": True}
    depends = {a, b} | anc[a] | anc[b]
    shared = anc[a] & anc[b] - {a, b}
    nearest = {s for s in shared if not any(s != t and s in nx.ancestors(g, t) for t in shared)}
    if nearest:
        return {"how": "shared_foundations", "members": sorted(nearest), "complete": _complete(view, depends)}
    direct = any({s, t} == {a, b} and r not in LEARNING for s, r, t in view.edges.values())
    how = "direct" if direct else "none"
    return {"how": how, "members": sorted({a, b}), "complete": _complete(view, depends)}


def _next(view: PromptView) -> dict[str, Any]:
    known = view.ids("known")
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    have = _known_closure(view, known)
    ready = {c for c in g if c not in have and (pred := set(g.predecessors(c))) and pred <= have}
    candidates = {c for k in have if k in g for c in g.successors(k) if c not in have}
    return {"members": sorted(ready), "complete": _complete(view, have | candidates)}


def _opens(view: PromptView) -> dict[str, Any]:
    x = view.subject
    assert x is not None
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    have = {x} | (set(nx.ancestors(g, x)) if x in g else set())
    candidates = {c for c in g.successors(x) if c not in have} if x in g else set()
    ready = {c for c in candidates if set(g.predecessors(c)) <= have}
    return {"members": sorted(ready), "complete": _complete(view, have | candidates)}


def _start(view: PromptView) -> dict[str, Any]:
    x = view.subject
    assert x is not None
    g = _order_graph(view, view.reading.get("relations") or LEARNING)
    before = set(nx.ancestors(g, x)) if x in g else set()
    roots = {c for c in before if not set(g.predecessors(c))}
    return {"members": sorted(roots), "complete": _complete(view, {x} | before)}


def honest_claim(view: PromptView) -> dict[str, Any]:
    """The claim the prompt's evidence gives for its reading, in its contract (module docstring)."""
    contract, reading = view.contract, view.reading
    if reading["intent"] == "next":
        return _next(view)
    if view.subject is None or view.subject not in view.concepts:
        return _empty(contract)
    if reading["intent"] in ("opens", "start"):
        return _opens(view) if reading["intent"] == "opens" else _start(view)
    forms: dict[str, Callable[[PromptView], dict[str, Any]]] = {
        "check": _check,
        "why": _why,
        "order": _order,
        "path": _path,
        "relate": _relate,
    }
    if contract in forms:
        if contract in ("check", "why") and view.candidate is None:
            return _empty(contract)
        if contract in ("order", "path", "relate") and view.other is None:
            return _empty(contract)
        return forms[contract](view)
    if contract == "lessons":
        links, depends = _lessons(view)
        return {"lesson_link_ids": sorted(links), "complete": _complete(view, depends)}
    members, depends = _sets(view)
    claim: dict[str, Any] = {"members": sorted(members), "complete": _complete(view, depends)}
    if contract == "count":
        claim = {"count": len(members), **claim}
    if contract == "ready":
        claim = {"holds": (not members) if claim["complete"] else None, **claim}
    return claim


def _empty(contract: str) -> dict[str, Any]:
    empty: dict[str, dict[str, Any]] = {
        "set": {"members": []},
        "count": {"count": 0, "members": []},
        "ready": {"holds": None, "members": []},
        "check": {"holds": None, "path": []},
        "why": {"holds": None, "steps": []},
        "order": {"first": None, "path": []},
        "path": {"path": []},
        "relate": {"how": "none", "members": []},
        "next": {"members": []},
        "lessons": {"lesson_link_ids": []},
    }
    return {**empty[contract], "complete": False}


# -- the lies: each changes the honest claim in one way (None: this claim offers no such lie) ---------


def _flip(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    if isinstance(c.get("holds"), bool):
        return {**c, "holds": not c["holds"], "complete": True}  # the real proof path stays cited
    if "first" in c and c["first"] is not None:
        other = view.other if c["first"] == view.subject else view.subject
        return {**c, "first": other}
    if "how" in c:
        return {**c, "how": "none" if c["how"] != "none" else "path"}
    return None


def _omit(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    key = "lesson_link_ids" if "lesson_link_ids" in c else "members"
    items = list(c.get(key) or [])
    if len(items) < 1 or key not in c:
        return None
    kept = items[: len(items) // 2]
    out = {**c, key: kept, "complete": True}
    if "count" in c:
        out["count"] = len(kept)
    return out


def _add(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    if "members" not in c:
        return None
    outside = sorted(view.concepts - set(c["members"]) - set(view.ids()))
    if not outside:
        return None
    out = {**c, "members": [*c["members"], outside[0]], "complete": True}
    if "count" in c:
        out["count"] = len(out["members"])
    return out


def _count(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    return {**c, "count": c["count"] + 1} if "count" in c else None


def _gap(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    path = list(c.get("path") or [])
    if len(path) < 2:
        return None
    return {**c, "path": path[:1] + path[2:]} if len(path) > 2 else {**c, "path": path[:1]}


def _wrong_edge(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    """A path or step that cites an edge which does not connect what it is said to."""
    if c.get("steps"):
        s = dict(c["steps"][0])
        s["source"], s["target"] = s["target"], s["source"]  # the step reversed
        return {**c, "steps": [s, *c["steps"][1:]]}
    path = list(c.get("path") or [])
    unused = sorted((r for r in view.edges if r not in path), key=lambda r: int(r[1:]))
    if not path or not unused:
        return None
    return {**c, "path": [unused[0], *path[1:]]}


def _reverse(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    """The answer in the other direction: a set of the concepts on the subject's other side, a
    path listed as if it ran the other way round between the other ends."""
    if "members" in c and view.subject is not None:
        sub = view.subject
        before = {s for s, r, t in view.edges.values() if t == sub and r == "prerequisite"}
        after = {t for s, r, t in view.edges.values() if s == sub and r == "prerequisite"}
        side = after if set(c["members"]) & before or not c["members"] else before
        if not side:
            return None
        out = {**c, "members": sorted(side), "complete": True}
        if "count" in c:
            out["count"] = len(side)
        return out
    if c.get("holds") is True and "path" in c:  # "no, it is the other way round", citing the proof
        return {**c, "holds": False, "path": c["path"][::-1]}
    if c.get("holds") is True and c.get("steps"):
        steps = [{**s, "source": s["target"], "target": s["source"]} for s in c["steps"]]
        return {**c, "steps": steps}
    return None


def _invent(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    if "members" in c:
        out = {**c, "members": [*c["members"], INVENTED], "complete": True}
        if "count" in c:
            out["count"] = len(out["members"])
        return out
    if "first" in c:
        return {**c, "first": INVENTED}
    if "path" in c:
        return {**c, "path": [*c["path"], "e999999999"]}
    if "lesson_link_ids" in c:
        return {**c, "lesson_link_ids": [*c["lesson_link_ids"], "l999999999"]}
    return None


def _overclaim(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    """Complete where the evidence is not: a closure from a partial walk, a "no" before the walk."""
    if c.get("complete"):
        return None
    out = {**c, "complete": True}
    if "holds" in c and c["holds"] is None:
        out["holds"] = False
    return out


def _other_lesson(c: dict[str, Any], view: PromptView) -> dict[str, Any] | None:
    if "lesson_link_ids" not in c:
        return None
    wrong = sorted((r for r in view.lessons if r not in c["lesson_link_ids"]), key=lambda r: int(r[1:]))
    return {**c, "lesson_link_ids": [*c["lesson_link_ids"], wrong[0]], "complete": True} if wrong else None


LIES: Final[dict[str, Callable[[dict[str, Any], PromptView], dict[str, Any] | None]]] = {
    "flip": _flip,
    "omit": _omit,
    "add": _add,
    "count": _count,
    "gap": _gap,
    "wrong_edge": _wrong_edge,
    "reverse": _reverse,
    "invent": _invent,
    "overclaim": _overclaim,
    "other_lesson": _other_lesson,
}


@dataclass
class Liar:
    """The stand-in model: honest (``mode="honest"``) or telling the lie ``mode`` whenever the
    claim offers one (else the truth), at ``confidence``. ``told`` counts the lies told, ``calls``
    the synthesis calls."""

    mode: str = "honest"
    confidence: float = 0.95
    calls: int = 0
    told: int = 0

    def answer(self, body: dict[str, Any]) -> str:
        """The reply content for a chat request body."""
        messages = body["messages"]
        if any(READ_REQUEST in str(m.get("content")) for m in messages if m.get("role") == "system"):
            refusal = {"understood": False, "intent": "", "form": "", "transitive": False, "subjects": []}
            return json.dumps(refusal)  # the grammar's reading stands
        self.calls += 1
        view = read_prompt(messages)
        claim = honest_claim(view)
        if self.mode != "honest":
            lie = LIES[self.mode](claim, view)
            if lie is not None and lie != claim:
                claim, self.told = lie, self.told + 1
        reply = {
            "claim": claim,
            "confidence": self.confidence,
            "missing": "" if claim.get("complete") else "more of the graph",
            "next_focus": {
                "relations": list(view.reading.get("relations") or ()),
                "concept_ids": sorted(view.waits_on)[:12],
                "text": "",
            },
        }
        return json.dumps(reply)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "chatcmpl-liar",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "deepseek-flash"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": self.answer(body)},
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }

    def handler(self, request: Any) -> Any:
        """An ``httpx.MockTransport`` handler."""
        import httpx

        return httpx.Response(200, json=self.completion(json.loads(request.content)))


# -- the measurement -----------------------------------------------------------------------------------

MODES: Final = ("honest", *LIES)


def score_modes(
    questions: Sequence[Any],
    url: str,
    modes: Sequence[str] = MODES,
    *,
    systems: Sequence[str] = ("loop", "loop-onehop"),
) -> list[dict[str, Any]]:
    """Per model (the offline synthesizer first, for reference; then each mode of :class:`Liar`)
    and loop configuration (``loop``: walks; ``loop-onehop``: one hop a round, so drafts meet
    incomplete evidence): questions, lies told, answered, wrong answers emitted, of those the ones
    the offline synthesizer does not also get wrong (``new_wrong``: what a lie got through), and
    model calls per question, over the database at ``url``."""
    import httpx

    from control_plane.settings import LLMSettings, Secret
    from control_plane.synthesizers.deepseek import DeepSeekSynthesizer
    from control_plane.synthesizers.offline import OfflineSynthesizer
    from evals.runner import run_eval

    rows: list[dict[str, Any]] = []
    offline_wrong: dict[str, set[str]] = {}
    for mode in ("offline", *modes):
        liar = Liar(mode if mode != "offline" else "honest")
        if mode == "offline":
            synth: Any = OfflineSynthesizer()
        else:
            client = httpx.Client(transport=httpx.MockTransport(liar.handler))
            settings = LLMSettings(api_key=Secret("sk-liar-0123456789"), base_url="http://127.0.0.1:9")
            synth = DeepSeekSynthesizer(settings, http_client=client, sleep=lambda _: None)
        report = run_eval(questions, url=url, synthesizer=synth, systems=systems)
        for system in systems:
            results = {q["id"]: q["results"][system] for q in report["questions"]}
            answered = {i for i, r in results.items() if not r["abstained"]}
            wrong = {i for i in answered if not results[i]["exact_match"]}
            if mode == "offline":
                offline_wrong[system] = wrong
            calls = sum(r["llm_calls"] for r in results.values())
            rows.append(
                {
                    "mode": mode,
                    "system": system,
                    "questions": len(results),
                    "lies": liar.told,
                    "answered": sorted(answered),
                    "wrong": sorted(wrong),
                    "new_wrong": sorted(wrong - offline_wrong[system]),
                    "calls_per_question": round(calls / max(1, len(results)), 2),
                }
            )
    return rows


def measure(
    questions_file: Path,
    bundle: Path | None,
    modes: Sequence[str] = MODES,
    *,
    set_aside: bool = False,
    corpus: str | None = None,
    systems: Sequence[str] = ("loop", "loop-onehop"),
) -> list[dict[str, Any]]:
    """:func:`score_modes` over a question file, on a fresh SQLite database holding ``bundle``
    (None: the bundled curriculum)."""
    from evals.questions import load_questions, select
    from evals.runner import _database, _quiet_logs

    _quiet_logs()
    questions = select(load_questions(questions_file), corpus=corpus)
    with _database(None, bundle, set_aside=set_aside) as url:
        return score_modes(questions, url, modes, systems=systems)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.liar", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--questions", type=Path, default=None, help="a question file (default: curriculum.jsonl)"
    )
    parser.add_argument(
        "--bundle", type=Path, default=None, help="a kg-bundle/1 folder (default: the curriculum)"
    )
    parser.add_argument("--set-aside", action="store_true", help="import the bundle with --set-aside")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    parser.add_argument("--corpus", default=None, help="only this corpus of the file (forms, paraphrase ...)")
    parser.add_argument("--out", type=Path, default=None, help="write liar.json here")
    args = parser.parse_args(argv)
    from evals.runner import default_questions

    questions = args.questions or default_questions()
    rows = measure(questions, args.bundle, args.modes, set_aside=args.set_aside, corpus=args.corpus)
    print(
        "| model | loop | questions | lies told (both loops) | answered | wrong | wrong the offline "
        "synthesizer gets right | model calls / question |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['system']} | {r['questions']} | {r['lies']} | {len(r['answered'])} "
            f"| {len(r['wrong'])} | {len(r['new_wrong'])} | {r['calls_per_question']} |"
        )
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "liar.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
