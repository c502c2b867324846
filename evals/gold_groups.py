"""Gold answers on a graph with requirement groups, computed independently of the backend.

The meaning is docs/control-plane.md, "Requirements with alternatives"; this module implements it
again from that text, over networkx and a bundle's CSV files (``concept_edges.csv`` for the plain
learning order, ``requirement_groups.csv`` and ``requirement_members.csv`` for the groups), and
never imports the control plane: it is the oracle the answers are checked against.

For a concept X: P(X), its **plain needs** (a learning-order edge into X); G(X), its **groups**
(each needs k of its options, an option a set of concepts all needed); R(X), its **required**
concepts (everything reached backwards from X over plain needs only); its **choices**, the groups
of X and of every concept of R(X). A learner who knows K is credited with K* = K and R of each.

Per form (:data:`FORMS`; each returns a :class:`GroupGold`):

=============  ==========================================================================
form           gold
=============  ==========================================================================
prerequisites  members P(X); ``requirements`` G(X)
needed_before  members R(X); ``requirements`` the choices of X
check (a, X)   ``holds``: a in R(X); else, when a lies on some ways only (in an option of a
               choice of X, or on some way to a member of one: forward over plain edges and
               options), ``one_of`` the first such choice by group id
ready (K, X)   members M = R(X) - K*; ``unmet``: the groups of X and of each of M with fewer
               than k options inside K*; ``holds``: both empty
remaining      as ready, without ``holds``
count          the size of a form's members (``of``: needed_before R(X), prerequisites
               P(X), dependents); for 0 the answer must be about X
dependents     plain dependents and the targets of groups with X in an option
comes_after    forward from X over plain edges and option membership
next (K)       c outside K* with something before it, P(c) inside K* and each group of c
               with k options inside K*
opens (X)      as next for K = {X}, and X among P(c) or in one of c's options
shared (a, b)  R(a) & R(b)
start (X)      the concepts of R(X) with no plain need and no group
=============  ==========================================================================

:func:`requirement_sentence` is E(X), the text every answer about X's requirement carries.
:func:`ways` lists every choice a concept lies on the ways through. :meth:`GroupGraph.without_groups` and
:meth:`GroupGraph.flat` (every alternative read as required) are the two readings a question
set's gold is compared with to say whether the groups touch it.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from evals import gold

__all__ = [
    "FORMS",
    "Group",
    "GroupGold",
    "GroupGraph",
    "form_gold",
    "group_phrase",
    "load_group_bundle",
    "option_text",
    "requirement_sentence",
    "ways",
]

Option = frozenset[str]
Subject = tuple[str, ...]
_COUNT_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


@dataclass(frozen=True)
class Group:
    """A requirement group: ``target`` needs ``needs`` of ``options`` (each all needed)."""

    group_id: str
    target: str
    needs: int
    options: tuple[Option, ...]

    def met_by(self, have: AbstractSet[str]) -> bool:
        """At least ``needs`` options wholly inside ``have``."""
        return sum(1 for o in self.options if o <= have) >= self.needs

    @property
    def members(self) -> frozenset[str]:
        return frozenset().union(*self.options)


@dataclass(frozen=True)
class GroupGold:
    """A form's gold with groups: the ``result`` finding, the member set and how it is matched,
    and what the answer's result must say about groups (None: nothing asked)."""

    finding: Mapping[str, Any] = field(default_factory=dict)
    concepts: frozenset[str] = frozenset()
    match: str = "exact"
    one_of: str | None = None
    unmet: tuple[str, ...] | None = None
    requirements: tuple[str, ...] | None = None

    @property
    def group_ids(self) -> frozenset[str]:
        """Every group the gold names."""
        named = (*(self.unmet or ()), *(self.requirements or ()))
        return frozenset(named) | ({self.one_of} if self.one_of else frozenset())


class GroupGraph:
    """The plain learning order ``g`` (``u -> v``: u before v), the groups and the names, with
    what is required before each concept cached."""

    def __init__(self, g: nx.DiGraph, groups: Iterable[Group], names: Mapping[str, str]) -> None:
        self.g = g
        self.groups = {grp.group_id: grp for grp in sorted(groups, key=lambda grp: grp.group_id)}
        self.names = dict(names)
        self._of: dict[str, list[Group]] = {}
        self._naming: dict[str, list[Group]] = {}
        for grp in self.groups.values():
            self._of.setdefault(grp.target, []).append(grp)
            for c in sorted(grp.members):
                self._naming.setdefault(c, []).append(grp)
        self._required: dict[str, frozenset[str]] = {}
        self._forward: nx.DiGraph | None = None

    def plain_needs(self, x: str) -> frozenset[str]:
        """P(x)."""
        return frozenset(self.g.predecessors(x)) if x in self.g else frozenset()

    def groups_of(self, x: str) -> tuple[Group, ...]:
        """G(x), by group id."""
        return tuple(self._of.get(x, ()))

    def naming(self, x: str) -> tuple[Group, ...]:
        """The groups with ``x`` in one of their options."""
        return tuple(self._naming.get(x, ()))

    def required(self, x: str) -> frozenset[str]:
        """R(x): everything before ``x`` over plain needs only."""
        if x not in self._required:
            self._required[x] = frozenset(nx.ancestors(self.g, x)) if x in self.g else frozenset()
        return self._required[x]

    def choices(self, x: str) -> tuple[Group, ...]:
        """The groups of ``x`` and of every concept ``x`` requires, by group id."""
        found = {grp.group_id: grp for c in {x} | self.required(x) for grp in self.groups_of(c)}
        return tuple(found[gid] for gid in sorted(found))

    def credited(self, known: Iterable[str]) -> frozenset[str]:
        """K*: the knowns and everything each requires."""
        out: set[str] = set()
        for k in known:
            out |= {k} | self.required(k)
        return frozenset(out)

    def available(self, c: str, have: frozenset[str]) -> bool:
        """``c`` needs something, its plain needs are all in ``have`` and each of its groups is met."""
        needs, groups = self.plain_needs(c), self.groups_of(c)
        return bool(needs or groups) and needs <= have and all(grp.met_by(have) for grp in groups)

    def forward(self) -> nx.DiGraph:
        """The plain order with an edge from each option member to its group's target."""
        if self._forward is None:
            h = self.g.copy()
            h.add_edges_from((m, grp.target) for grp in self.groups.values() for m in sorted(grp.members))
            self._forward = h
        return self._forward

    def without_groups(self) -> GroupGraph:
        """The same plain order with no group at all."""
        return GroupGraph(self.g, (), self.names)

    def flat(self) -> GroupGraph:
        """Every alternative read as required: each option member a plain need of its target."""
        return GroupGraph(self.forward(), (), self.names)


def ways(gg: GroupGraph, a: str, x: str) -> frozenset[str]:
    """The choices of ``x`` that ``a`` lies on some ways through: ``a`` is in one of their options,
    or on some way to a member of one, forward over plain edges and options (empty when ``a`` is
    required for ``x``)."""
    if a in gg.required(x):
        return frozenset()
    h = gg.forward()
    after = frozenset(nx.descendants(h, a)) if a in h else frozenset()
    return frozenset(grp.group_id for grp in gg.choices(x) if grp.members & (after | {a}))


# -- the requirement sentence ----------------------------------------------------------------------


def _key(text: str) -> tuple[str, str]:
    return text.casefold(), text


def _by_text(texts: Iterable[str]) -> list[str]:
    return sorted(texts, key=_key)


def _listed(items: Sequence[str], last: str) -> str:
    """``A``, ``A or B``, ``A, B or C`` (``last``: the word before the last item)."""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def _inside(gg: GroupGraph, option: Option) -> str:
    return _listed(_by_text(gg.names[c] for c in option), "and")


def option_text(gg: GroupGraph, option: Option, *, bare: bool = False) -> str:
    """One option: its name, or its names sorted and in parentheses, ``(PHYS 4A and PHYS 4B)``
    (``bare``: without them, as it sorts)."""
    return _inside(gg, option) if len(option) == 1 or bare else f"({_inside(gg, option)})"


def group_phrase(gg: GroupGraph, group: Group, *, bare: bool = False) -> str:
    """``one of A, B or C`` (``two of`` for k = 2), the options sorted by their casefolded text,
    parentheses aside (``(PHYS 4D and PHYS 4E)`` sorts as ``phys 4d and phys 4e``; ``bare``: the
    phrase without them, as it sorts)."""
    count = _COUNT_WORDS.get(group.needs, str(group.needs))
    options = sorted(group.options, key=lambda o: _key(_inside(gg, o)))
    return f"{count} of {_listed([option_text(gg, o, bare=bare) for o in options], 'or')}"


def requirement_sentence(gg: GroupGraph, x: str) -> str | None:
    """E(x): ``X requires: <plain names>; <group phrases>.``, names and phrases each sorted by
    their casefolded text, parentheses aside; None when ``x`` needs nothing."""
    plain = _by_text(gg.names[c] for c in gg.plain_needs(x))
    groups = sorted(gg.groups_of(x), key=lambda grp: _key(group_phrase(gg, grp, bare=True)))
    phrases = [group_phrase(gg, grp) for grp in groups]
    if not plain and not phrases:
        return None
    return f"{gg.names[x]} requires: {'; '.join([*plain, *phrases])}."


# -- the forms ---------------------------------------------------------------------------------------


def _ids(groups: Iterable[Group]) -> tuple[str, ...]:
    return tuple(sorted(grp.group_id for grp in groups))


def _about(*ends: str) -> frozenset[str]:
    return frozenset(ends)


def _dependents(gg: GroupGraph, x: str) -> frozenset[str]:
    plain = frozenset(gg.g.successors(x)) if x in gg.g else frozenset()
    return plain | {grp.target for grp in gg.naming(x)}


def _unmet(gg: GroupGraph, have: frozenset[str], x: str, missing: Iterable[str]) -> tuple[str, ...]:
    return _ids(grp for c in {x, *missing} for grp in gg.groups_of(c) if not grp.met_by(have))


def _next(gg: GroupGraph, known: Iterable[str], *, opened_by: str | None = None) -> frozenset[str]:
    """What is available to a learner crediting ``known`` (and, ``opened_by``, needs that concept
    as a plain need or in an option). Only the concepts after K* can be, so only those are tried."""
    have = gg.credited(known)
    h = gg.forward()
    after = {c for k in have if k in h for c in h.successors(k)} - have
    out = {c for c in after if gg.available(c, have)}
    if opened_by is not None:
        out = {
            c
            for c in out
            if opened_by in gg.plain_needs(c) or any(opened_by in grp.members for grp in gg.groups_of(c))
        }
    return frozenset(out)


def prerequisites_gold(gg: GroupGraph, x: str) -> GroupGold:
    return GroupGold(concepts=gg.plain_needs(x), requirements=_ids(gg.groups_of(x)))


def needed_before_gold(gg: GroupGraph, x: str) -> GroupGold:
    return GroupGold(concepts=gg.required(x), requirements=_ids(gg.choices(x)))


def check_gold(gg: GroupGraph, a: str, x: str) -> GroupGold:
    """``holds`` when ``a`` is required; else ``one_of`` the first choice by group id that ``a``
    lies on some ways through (None: on none)."""
    if a in gg.required(x):
        return GroupGold({"holds": True}, _about(a, x), "contains")
    through = sorted(ways(gg, a, x))
    return GroupGold({"holds": False}, _about(a, x), "contains", one_of=through[0] if through else None)


def _readiness(gg: GroupGraph, known: Sequence[str], x: str) -> tuple[frozenset[str], tuple[str, ...]]:
    have = gg.credited(known)
    missing = gg.required(x) - have
    return missing, _unmet(gg, have, x, missing)


def ready_gold(gg: GroupGraph, known: Sequence[str], x: str) -> GroupGold:
    missing, unmet = _readiness(gg, known, x)
    return GroupGold({"holds": not missing and not unmet}, missing, unmet=unmet)


def remaining_gold(gg: GroupGraph, known: Sequence[str], x: str) -> GroupGold:
    missing, unmet = _readiness(gg, known, x)
    return GroupGold(concepts=missing, unmet=unmet)


COUNTED: Mapping[str, Callable[[GroupGraph, str], frozenset[str]]] = {
    "needed_before": lambda gg, x: gg.required(x),
    "prerequisites": lambda gg, x: gg.plain_needs(x),
    "dependents": _dependents,
}
"""What a count counts, per ``of``: the members of that form."""


def count_gold(gg: GroupGraph, x: str, of: str) -> GroupGold:
    counted = COUNTED[of](gg, x)
    if not counted:
        return GroupGold({"count": 0}, _about(x), "contains")
    return GroupGold({"count": len(counted)}, counted)


def dependents_gold(gg: GroupGraph, x: str) -> GroupGold:
    return GroupGold(concepts=_dependents(gg, x))


def comes_after_gold(gg: GroupGraph, x: str) -> GroupGold:
    h = gg.forward()
    return GroupGold(concepts=frozenset(nx.descendants(h, x)) if x in h else frozenset())


def next_gold(gg: GroupGraph, known: Sequence[str]) -> GroupGold:
    return GroupGold(concepts=_next(gg, known))


def opens_gold(gg: GroupGraph, x: str) -> GroupGold:
    return GroupGold(concepts=_next(gg, (x,), opened_by=x))


def shared_gold(gg: GroupGraph, a: str, b: str) -> GroupGold:
    return GroupGold(concepts=gg.required(a) & gg.required(b))


def start_gold(gg: GroupGraph, x: str) -> GroupGold:
    return GroupGold(
        concepts=frozenset(c for c in gg.required(x) if not gg.plain_needs(c) and not gg.groups_of(c))
    )


FORMS: Mapping[str, Callable[[GroupGraph, Subject], GroupGold]] = {
    "prerequisites": lambda gg, s: prerequisites_gold(gg, s[0]),
    "needed_before": lambda gg, s: needed_before_gold(gg, s[0]),
    "dependents": lambda gg, s: dependents_gold(gg, s[0]),
    "comes_after": lambda gg, s: comes_after_gold(gg, s[0]),
    "check": lambda gg, s: check_gold(gg, s[0], s[1]),
    "ready": lambda gg, s: ready_gold(gg, s[:-1], s[-1]),
    "remaining": lambda gg, s: remaining_gold(gg, s[:-1], s[-1]),
    "next": lambda gg, s: next_gold(gg, s),
    "opens": lambda gg, s: opens_gold(gg, s[0]),
    "shared": lambda gg, s: shared_gold(gg, s[0], s[1]),
    "start": lambda gg, s: start_gold(gg, s[0]),
}
"""Each form's gold from its subject, in the slot order of the catalogue templates (check: a, x;
ready and remaining: the knowns, then x; next: the knowns; shared: a, b)."""


def form_gold(gg: GroupGraph, form: str, subject: Subject, *, of: str | None = None) -> GroupGold:
    """The gold of ``form`` about ``subject`` (``of``: what a count counts)."""
    if form == "count":
        if of is None:
            raise ValueError("a count says what it counts (of)")
        return count_gold(gg, subject[0], of)
    if form not in FORMS:
        raise ValueError(f"no gold with groups for form {form!r}")
    return FORMS[form](gg, subject)


# -- reading a bundle ----------------------------------------------------------------------------------


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return [r for r in csv.DictReader(fh) if not (r.get("invalid_at") or "")]


def load_group_bundle(directory: str | Path) -> GroupGraph:
    """A ``kg-bundle/1`` folder's learning order, groups and names as they hold now (rows without
    an ``invalid_at``), read from its CSV files, not through the backend."""
    directory = Path(directory)
    g = gold.before_graph(gold.load_bundle_view(directory))
    names = {r["id"]: r["name"] for r in _rows(directory / "concepts.csv") if r["id"] in g}
    options: dict[str, dict[str, set[str]]] = {}
    for r in _rows(directory / "requirement_members.csv"):
        options.setdefault(r["group_id"], {}).setdefault(r["option"], set()).add(r["concept_id"])
    groups = [
        Group(
            r["group_id"],
            r["target_id"],
            int(r["needs"]),
            tuple(frozenset(o) for _, o in sorted(options.get(r["group_id"], {}).items())),
        )
        for r in _rows(directory / "requirement_groups.csv")
    ]
    return GroupGraph(g, groups, names)
