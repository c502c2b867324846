"""Claims: what an answer asserts, in its question form's contract, and how a claim is checked.

An answer is a claim (:class:`~control_plane.synthesizers.base.Claim`), not prose. A reading's
contract (:func:`contract_of`) fixes which fields its claim has (:data:`CONTRACTS`):

========  ==========================  ==================================================================
contract  fields                      what it states
========  ==========================  ==================================================================
set       members, complete           the answer set (prerequisites, what is needed before, what comes
                                      after, builds on, parts, contrasts, related, within N hops, what is
                                      left, shared, before+uses: only what Y builds on, study plan, about)
count     count, members, complete    how many, and which
ready     holds, members, complete    whether what the learner knows covers the subject's needs, and
                                      what is still missing
check     holds, path, complete       whether the candidate X is in the subject Y's answer set, with the
                                      proof path between them (or, for "no, the other way round", Y to X)
why       holds, steps, complete      why X is among Y's needs: each step ``source -relation-> target``
                                      with its edge
order     first, path, complete       which of A and B comes first (null: neither needs the other), with
                                      the path from the first to the other
path      path, complete              the shortest learning path from A to B, its edges in order
relate    how, members, complete      how A and B relate (``path``, ``shared_foundations``, ``direct``,
                                      ``none``) and the concepts that show it
next      members, complete           what can be learned next
lessons   lessons, complete           the lesson links that answer a lesson question
========  ==========================  ==================================================================

``complete`` says the claim is the whole answer the evidence gives; a claim that is not complete
is never an answer, only a step towards one.

:func:`claim_of` is the claim of a finding (what the offline synthesizer states). :func:`judge`
holds any claim to the claim the evidence itself gives (the finding of the same reading over the
same evidence, computed by the one meaning both use, ``semantics.meaning``), and names the first
contradiction it finds (a *fault*):

* every id it names is in the evidence; every step's edge is exactly that edge (endpoints,
  relation, direction); a path is a chain of evidence edges from its start to its end in the
  asked relation (in either listed order);
* a claim said to be complete, when the evidence is not (something it depends on is unread), is
  a fault ("no" before the walk is complete, a closure from a partial walk);
* a complete claim must equal the evidence's: the same set (nothing left out, nothing added), the
  same polarity (a "yes" with a path from the candidate to the subject, a "no" only where the
  evidence's walk is complete and finds none), the same first concept, the same count as its own
  list and as the evidence's, a shortest path, the same kind of relation;
* a partial claim may say less, never something else: its members are among the evidence's, its
  "no" is not contradicted by a path, its first concept is not the other one.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.semantics.findings import Finding
from control_plane.synthesizers.base import Claim, Step
from control_plane.understanding.interpretation import Reading
from control_plane.understanding.relating import Adjacency, adjacency, asked_adjacency, walk

__all__ = ["CONTRACTS", "HOWS", "Contract", "claim_of", "contract_of", "judge"]

# How two concepts can relate (a relate claim's ``how``), in the order the meaning tries them.
HOWS: Final = ("path", "shared_foundations", "direct", "none")


@dataclass(frozen=True)
class Contract:
    """One form's claim: the JSON fields a claim of it has (``complete`` last), what each says
    (for the model's prompt), and the rule a complete claim must meet."""

    name: str
    fields: tuple[str, ...]
    says: str
    same: Callable[[Claim, Claim, _Context], str | None]  # a complete claim's fault, or None
    partial: Callable[[Claim, Claim, _Context], str | None]  # a partial claim's fault, or None


@dataclass(frozen=True)
class _Context:
    """What a check reads: the evidence, the reading, and the evidence's own finding."""

    ev: EvidenceGraph[Any, Any]
    reading: Reading
    finding: Finding

    def name(self, cid: str) -> str:
        return self.ev.name(cid) if cid in self.ev.concepts else cid

    def names(self, ids: Collection[str]) -> str:
        return ", ".join(sorted(self.name(c) for c in ids))


def contract_of(reading: Reading) -> str:
    """The contract a reading's answer is claimed in."""
    if reading.form == "yes_no":
        return "check"
    if reading.form in ("count", "why", "ready"):
        return reading.form
    return _BY_INTENT.get(reading.intent, "set")


_BY_INTENT: Final = {
    "order": "order",
    "path": "path",
    "relate": "relate",
    "next": "next",
    "lessons_covering": "lessons",
    "lessons_before": "lessons",
}


def claim_of(finding: Finding, reading: Reading, ev: EvidenceGraph[Any, Any]) -> Claim:
    """The claim ``finding`` states, in the reading's contract."""
    name, facts, done = contract_of(reading), finding.facts, finding.complete
    if name == "check":
        return Claim(name, done, holds=facts.get("holds") if done else None, path=finding.path)
    if name == "why":
        steps = tuple(
            Step(ev.edges[r].source_id, ev.edges[r].relation, ev.edges[r].target_id, r) for r in finding.edges
        )
        return Claim(name, done, holds=facts.get("holds") if done else None, steps=steps)
    if name == "count":
        return Claim(name, done, members=finding.members, count=facts.get("count"))
    if name == "ready":
        return Claim(name, done, members=finding.members, holds=facts.get("holds") if done else None)
    if name == "order":
        return Claim(name, done, first=facts.get("first"), path=finding.path)
    if name == "path":
        return Claim(name, done, path=finding.path)
    if name == "relate":
        return Claim(name, done, members=finding.members, how=facts.get("how"))
    if name == "lessons":
        return Claim(name, done, lessons=finding.lessons)
    return Claim(name, done, members=finding.members)


def judge(
    claim: Claim, truth: Claim, ev: EvidenceGraph[Any, Any], reading: Reading, finding: Finding
) -> str | None:
    """The first way ``claim`` contradicts ``truth`` (the evidence's own claim, of ``finding``), or
    None when it does not (module docstring). Both are in the reading's contract."""
    ctx = _Context(ev, reading, finding)
    fault = _outside(claim, ev) or _bad_steps(claim, ev)
    if fault:
        return fault
    contract = CONTRACTS[claim.contract]
    if not claim.complete:
        return contract.partial(claim, truth, ctx)
    if not truth.complete:
        what = finding.missing or "part of what it depends on is not read yet"
        return f"claims a complete answer, but the evidence is not complete ({what})"
    return contract.same(claim, truth, ctx)


# -- what every claim must meet -----------------------------------------------------------------


def _outside(claim: Claim, ev: EvidenceGraph[Any, Any]) -> str | None:
    concepts = sorted(c for c in claim.concept_ids() if c not in ev.concepts)
    edges = sorted(e for e in claim.edge_ids() if e not in ev.edges)
    lessons = sorted(r for r in claim.lessons if r not in ev.lessons)
    unknown = [*concepts, *edges, *lessons]
    return f"cites ids outside the evidence: {', '.join(unknown)}" if unknown else None


def _bad_steps(claim: Claim, ev: EvidenceGraph[Any, Any]) -> str | None:
    for s in claim.steps:
        e = ev.edges[s.edge]
        if (e.source_id, e.relation, e.target_id) != (s.source, s.relation, s.target):
            return (
                f"says {s.edge} is {s.source} -{s.relation}-> {s.target}, "
                f"but {s.edge} is {e.source_id} -{e.relation}-> {e.target_id}"
            )
    return None


def _adjacency(ctx: _Context) -> tuple[Adjacency, str]:
    return asked_adjacency(ctx.reading, ctx.ev)


def _leads(path: Sequence[str], start: str, goal: str, adj: Adjacency) -> bool:
    """Whether the edges of ``path``, in the order listed or reversed, step along ``adj`` from
    ``start`` to ``goal``."""
    for order in (list(path), list(reversed(path))):
        node = start
        for ref in order:
            nxt = next((b for b, r in adj.get(node, []) if r == ref), None)
            if nxt is None:
                break
            node = nxt
        else:
            if node == goal:
                return True
    return False


def _chain(ctx: _Context, path: Sequence[str], start: str | None, goal: str | None) -> str | None:
    """Why ``path`` is no chain of the asked relation between ``goal`` and ``start``, or None."""
    if start is None or goal is None:
        return "names a path for a question without both its ends"
    adj, _ = _adjacency(ctx)
    if path and _leads(path, start, goal, adj):
        return None
    shown = ", ".join(path) or "no edges"
    return f"its path ({shown}) does not lead between {ctx.name(goal)} and {ctx.name(start)} in the asked relation"


def _set_difference(claim: Sequence[str], truth: Sequence[str], ctx: _Context) -> str | None:
    said, true = set(claim), set(truth)
    if said == true:
        return None
    left, added = true - said, said - true
    parts = []
    if left:
        parts.append(f"leaves out {len(left)} of the {len(true)} the evidence gives ({ctx.names(left)})")
    if added:
        parts.append(f"states {len(added)} the evidence does not give ({ctx.names(added)})")
    return "; ".join(parts)


def _more_than(claim: Sequence[str], truth: Sequence[str], ctx: _Context) -> str | None:
    added = set(claim) - set(truth)
    return f"states {len(added)} the evidence does not give ({ctx.names(added)})" if added else None


# -- the contracts ------------------------------------------------------------------------------


def _same_set(c: Claim, t: Claim, ctx: _Context) -> str | None:
    return _set_difference(c.members, t.members, ctx)


def _partial_set(c: Claim, t: Claim, ctx: _Context) -> str | None:
    return _more_than(c.members, t.members, ctx)


def _same_count(c: Claim, t: Claim, ctx: _Context) -> str | None:
    listed = len(set(c.members))
    if c.count != listed:
        return f"says {c.count} but lists {listed}"
    if c.count != t.count:
        return f"says {c.count}, but the evidence gives {t.count}"
    return _set_difference(c.members, t.members, ctx)


def _partial_count(c: Claim, t: Claim, ctx: _Context) -> str | None:
    return _more_than(c.members, t.members, ctx)


def _same_ready(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.holds is None:
        return "claims a complete answer without saying whether what is known covers it"
    if c.holds != t.holds:
        return (
            f"says {'yes' if c.holds else 'not yet'}, but the evidence says {'yes' if t.holds else 'not yet'}"
        )
    return _set_difference(c.members, t.members, ctx)


def _partial_ready(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.holds and t.members:
        return f"says yes, but the evidence already shows what is missing ({ctx.names(t.members)})"
    return _more_than(c.members, t.members, ctx)


def _polarity(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.holds is None:
        return "claims a complete answer without saying whether it holds"
    if c.holds != t.holds:
        says, proof = ("yes", "no") if c.holds else ("no", "yes")
        shown = f" ({', '.join(t.path or t.edge_ids())})" if t.holds else ""
        return f"says {says}, but the evidence says {proof}{shown}"
    return None


def _check_path(c: Claim, ctx: _Context) -> str | None:
    """A check's path: from the candidate to the subject for "yes" (one step for a direct
    question); for "no", none, or the path the other way round."""
    r = ctx.reading
    if c.holds:
        fault = _chain(ctx, c.path, r.subject, r.candidate)
        if fault is None and not r.transitive and len(c.path) != 1:
            return "says yes to a direct question with a path of more than one step"
        return fault
    if c.holds is False and c.path:
        return _chain(ctx, c.path, r.candidate, r.subject)
    return None


def _same_check(c: Claim, t: Claim, ctx: _Context) -> str | None:
    return _polarity(c, t, ctx) or _check_path(c, ctx)


def _partial_check(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.holds is False and t.holds:
        return _polarity(c, t, ctx)
    return _check_path(c, ctx)


def _steps_chain(c: Claim, ctx: _Context) -> str | None:
    """A "yes" why: its steps hold a shortest chain from the candidate to the subject."""
    r = ctx.reading
    y, x = r.subject, r.candidate
    if y is None or x is None:
        return "explains a question without both its concepts"
    full, mode = _adjacency(ctx)
    shortest = walk(y, full).dist.get(x)
    steps_only = adjacency(
        EvidenceGraph(ctx.ev.concepts, {s.edge: ctx.ev.edges[s.edge] for s in c.steps}, ctx.ev.seeds),
        (),
        mode,
    )
    got = walk(y, steps_only).dist.get(x)
    if got is None:
        return f"its steps do not lead from {ctx.name(x)} to {ctx.name(y)}"
    if shortest is not None and got > shortest:
        return f"its steps take {got} steps where the evidence's shortest chain takes {shortest}"
    return None


def _same_why(c: Claim, t: Claim, ctx: _Context) -> str | None:
    fault = _polarity(c, t, ctx)
    if fault or not c.holds:
        return fault
    return _steps_chain(c, ctx)


def _partial_why(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.holds is False and t.holds:
        return _polarity(c, t, ctx)
    return _steps_chain(c, ctx) if c.holds else None


def _order_path(c: Claim, ctx: _Context) -> str | None:
    r = ctx.reading
    if c.first is None:
        return None
    if c.first not in (r.subject, r.other):
        return f"puts {ctx.name(c.first)} first, which is neither of the two concepts asked about"
    then = r.other if c.first == r.subject else r.subject
    return _chain(ctx, c.path, then, c.first)


def _same_order(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.first != t.first:
        said = f"puts {ctx.name(c.first)} first" if c.first else "says neither needs the other"
        true = f"{ctx.name(t.first)} comes first" if t.first else "neither needs the other"
        return f"{said}, but in the evidence {true}"
    if c.first is not None and not c.path and not t.path:
        return None  # first on some ways only, through a requirement group's option: no edge path
    return _order_path(c, ctx)


def _partial_order(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.first is not None and t.first is not None and c.first != t.first:
        return _same_order(c, t, ctx)
    return _order_path(c, ctx)


def _path_chain(c: Claim, ctx: _Context) -> str | None:
    r = ctx.reading
    return _chain(ctx, c.path, r.other, r.subject) if c.path else None


def _same_path(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if not t.path:
        return "names a learning path where the evidence has none" if c.path else None
    if not c.path:
        return "says there is no learning path, but the evidence has one"
    if len(c.path) != len(t.path):
        return f"its path takes {len(c.path)} steps where the shortest takes {len(t.path)}"
    return _path_chain(c, ctx)


def _same_relate(c: Claim, t: Claim, ctx: _Context) -> str | None:
    if c.how not in HOWS:
        return f"says they relate by {c.how!r}, which is not one of {', '.join(HOWS)}"
    if c.how != t.how:
        return f"says they relate by {c.how}, but the evidence shows {t.how}"
    return _set_difference(c.members, t.members, ctx)


def _no_fault(c: Claim, t: Claim, ctx: _Context) -> str | None:
    return None


def _same_lessons(c: Claim, t: Claim, ctx: _Context) -> str | None:
    said, true = set(c.lessons), set(t.lessons)
    if said == true:
        return None
    left, added = sorted(true - said), sorted(said - true)
    parts = []
    if left:
        parts.append(f"leaves out lesson links {', '.join(left)}")
    if added:
        parts.append(f"cites lesson links that do not answer it ({', '.join(added)})")
    return "; ".join(parts)


def _partial_lessons(c: Claim, t: Claim, ctx: _Context) -> str | None:
    added = sorted(set(c.lessons) - set(t.lessons))
    return f"cites lesson links that do not answer it ({', '.join(added)})" if added else None


_ANSWER_SET: Final = "the concept ids that ARE the answer"
CONTRACTS: Final[dict[str, Contract]] = {
    c.name: c
    for c in (
        Contract("set", ("members", "complete"), f'"members": {_ANSWER_SET}', _same_set, _partial_set),
        Contract(
            "count",
            ("count", "members", "complete"),
            '"count": how many; "members": the concept ids counted, as many as "count"',
            _same_count,
            _partial_count,
        ),
        Contract(
            "ready",
            ("holds", "members", "complete"),
            '"holds": whether what the learner knows, and what it rests on, covers everything the '
            'subject needs (null while undecided); "members": what is still missing (the needs less '
            "the known concepts and what they rest on)",
            _same_ready,
            _partial_ready,
        ),
        Contract(
            "check",
            ("holds", "path", "complete"),
            '"holds": whether the candidate is in the subject\'s answer (true/false; null while '
            'undecided); "path": for true, the edge ids leading from the candidate to the subject '
            "in the asked relation, in order (one edge for a direct question); for false, [] or the "
            "path the other way round",
            _same_check,
            _partial_check,
        ),
        Contract(
            "why",
            ("holds", "steps", "complete"),
            '"holds": whether the candidate is needed for the subject (null while undecided); '
            '"steps": the shortest chain(s) from the candidate to the subject, each step '
            '{"source": id, "relation": type, "target": id, "edge_id": id} exactly as the edge reads',
            _same_why,
            _partial_why,
        ),
        Contract(
            "order",
            ("first", "path", "complete"),
            '"first": the id of the one of the two concepts that must come first, null when neither '
            'needs the other; "path": the edge ids from the first to the other, in order',
            _same_order,
            _partial_order,
        ),
        Contract(
            "path",
            ("path", "complete"),
            '"path": the edge ids of the shortest learning path from the subject to the target, in '
            "order ([] when there is none)",
            _same_path,
            lambda c, t, ctx: _path_chain(c, ctx),
        ),
        Contract(
            "relate",
            ("how", "members", "complete"),
            '"how": "path" (one comes before the other: members = the concepts of every shortest '
            'path, both ends included), else "shared_foundations" (members = the nearest concepts '
            'both need), else "direct" (another relation links them: members = the two), else '
            '"none" (members = the two)',
            _same_relate,
            _no_fault,
        ),
        Contract(
            "next",
            ("members", "complete"),
            '"members": the concepts ready now: not known nor needed before something known, '
            "with at least one need, and every need known or needed before something known",
            _same_set,
            _partial_set,
        ),
        Contract(
            "lessons",
            ("lesson_link_ids", "complete"),
            '"lesson_link_ids": the lesson link ids (from LESSONS) that answer the question',
            _same_lessons,
            _partial_lessons,
        ),
    )
}
