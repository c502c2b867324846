"""Requirements with alternatives, pure: what a requirement group means, how a nested all / one /
two expression becomes plain prerequisites and groups, and the rules a stored group keeps.

A **requirement group** says: its target needs ``needs`` (k >= 1) of its *options*, and an option
is a set of concepts that are **all** needed ("one of CSE 21, MATH 154; and one of CSE 12 or both
of DSC 20 and DSC 30"). A plain prerequisite edge is the degenerate case (one option of one
concept), and stays an edge. :meth:`GroupSpec.satisfied_by` is the one meaning of a group: at
least ``needs`` options all of whose concepts are known.

:func:`normalise` turns an expression (a concept id, or ``{"type": "all" | "one" | "two",
"courses": [...]}``, nested to any depth) into :class:`Normalised`: the plain prerequisites (the
top-level conjunction of single concepts, as edges have always held them) and a conjunction of
groups. The rules, exact (``tests/test_requirements.py`` checks with Hypothesis that a normalised
expression is satisfied by exactly the sets of concepts that satisfy the expression):

* ``all`` at the top, or inside ``all`` at the top, is flattened: its single concepts are plain,
  its other parts are groups of their own;
* a ``one`` is a group with k = 1 whose options are the expression's alternatives (its
  disjunctive normal form): an ``all`` inside it becomes one option, a ``one`` nested inside an
  option expands into several options (``one[all[X, one[Y, Z]]]`` is the options {X, Y}, {X, Z});
  identical options are kept once;
* a ``two`` (any k >= 2) whose parts are each a concept or an ``all`` of concepts is a group with
  that k over one option per part. When a part itself holds alternatives, "k of" cannot count
  options one per part, so the group becomes the exact k = 1 group over every way of meeting k
  parts (each choice of k parts, each alternative of each);
* a group with a single option is that option's concepts as plain prerequisites (all of them are
  needed), and so is a k-of-k group; a k-of-n group with k > n cannot be met and is refused.

:func:`unlearnable` is the learning-order rule with groups: every concept must be learnable in
some order (its plain prerequisites learnt, and k options of each of its groups); for plain
edges alone that is "no cycle". A cycle through alternatives is allowed when it can be entered
(MATH 10C needs MATH 10B or MATH 20B, MATH 20B needs MATH 20A, MATH 10B or MATH 10C: learn MATH 10B
first); one that cannot is refused like a prerequisite cycle.

:func:`label_options` numbers a group's options (the ``option`` key column of
``requirement_members``), keeping the number of an option a revision leaves as it was;
:func:`check_group` refuses a malformed group; :func:`period_fault` is the rule every stored group
keeps at every valid time.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from data_plane.clock import format_time
from data_plane.errors import InputError, RequirementRejected
from data_plane.periods import Period, covers, overlaps

__all__ = [
    "KINDS",
    "MAX_OPTIONS",
    "GroupSpec",
    "Normalised",
    "alternatives",
    "check_group",
    "label_options",
    "normalise",
    "period_fault",
    "unlearnable",
]

KINDS: Final[Mapping[str, int | None]] = {"all": None, "one": 1, "two": 2}
"""The expression types and the k each means (``all``: every part)."""

MAX_OPTIONS: Final = 64
"""A group has at most this many options (an expansion past it is refused, not truncated)."""

Option = frozenset[str]


@dataclass(frozen=True)
class GroupSpec:
    """A group's meaning without its stamps: ``needs`` of ``options`` (each all needed)."""

    needs: int
    options: tuple[Option, ...]

    def satisfied_by(self, known: Collection[str]) -> bool:
        """Are at least ``needs`` options wholly in ``known``?"""
        have = known if isinstance(known, set | frozenset) else set(known)
        return sum(1 for o in self.options if o <= have) >= self.needs

    def canonical(self) -> tuple[int, tuple[tuple[str, ...], ...]]:
        """The group in one comparable form: k and the sorted options, each sorted."""
        return self.needs, tuple(sorted(tuple(sorted(o)) for o in self.options))


@dataclass(frozen=True)
class Normalised:
    """An expression as plain prerequisites (all needed) and a conjunction of groups."""

    plain: frozenset[str]
    groups: tuple[GroupSpec, ...]

    def satisfied_by(self, known: Collection[str]) -> bool:
        have = set(known)
        return self.plain <= have and all(g.satisfied_by(have) for g in self.groups)

    def canonical(self) -> tuple[tuple[str, ...], tuple[tuple[int, tuple[tuple[str, ...], ...]], ...]]:
        """Plain ids sorted and groups in one comparable form, sorted: two expressions that
        normalise alike compare equal here whatever the order they were written in."""
        return tuple(sorted(self.plain)), tuple(sorted(g.canonical() for g in self.groups))


def _parts(expression: Any, path: str) -> tuple[int | None, list[Any]]:
    """The k and the parts of a compound expression (refused with the path when malformed)."""
    if not isinstance(expression, Mapping):
        raise InputError(
            f"requirement {path or 'expression'}: expected a concept id or an object with type and "
            f"courses, got {type(expression).__name__}",
            field="type",
            value=path,
        )
    kind = expression.get("type")
    if not isinstance(kind, str) or kind not in KINDS:
        raise InputError(
            f"requirement {path or 'expression'}: unknown type {kind!r}; expected one of {', '.join(KINDS)}",
            field="type",
            value=kind,
        )
    parts = expression.get("courses")
    if not isinstance(parts, list) or not parts:
        raise InputError(
            f"requirement {path or 'expression'}: {kind} needs a non-empty list of courses",
            field="courses",
            value=path,
        )
    return KINDS[kind], parts


def _dedupe(options: Iterable[Option]) -> list[Option]:
    seen: dict[Option, None] = {}
    for o in options:
        seen.setdefault(o, None)
    return list(seen)


def _bounded(options: list[Option], path: str) -> list[Option]:
    if len(options) > MAX_OPTIONS:
        raise InputError(
            f"requirement {path or 'expression'}: expands into {len(options)} options, more than "
            f"{MAX_OPTIONS}; state it as several groups",
            field="courses",
            value=path,
        )
    return options


def _product(choices: Sequence[list[Option]], path: str) -> list[Option]:
    out: list[Option] = [frozenset()]
    for alts in choices:
        out = _bounded(_dedupe(a | b for a in out for b in alts), path)
    return out


def alternatives(expression: Any, path: str = "") -> list[Option]:
    """The expression's ways of being met (its disjunctive normal form), in the order written,
    each once: every set here meets it, and every set that meets it holds one of them."""
    if isinstance(expression, str):
        return [frozenset((expression,))]
    k, parts = _parts(expression, path)
    each = [alternatives(p, f"{path}[{i}]") for i, p in enumerate(parts)]
    if k is None:
        return _product(each, path)
    if k > len(parts):
        raise InputError(
            f"requirement {path or 'expression'}: {k} of {len(parts)} course(s) can never be met",
            field="courses",
            value=path,
        )
    ways: list[Option] = []
    for chosen in itertools.combinations(each, k):
        ways = _bounded(_dedupe([*ways, *_product(chosen, path)]), path)
    return ways


def _group(expression: Any, path: str) -> tuple[frozenset[str], GroupSpec | None]:
    """A compound part of the top-level conjunction as plain concepts or one group."""
    k, parts = _parts(expression, path)
    if k is None:  # an all nested in the top-level all: flattened by the caller
        raise AssertionError("unreachable")
    each = [alternatives(p, f"{path}[{i}]") for i, p in enumerate(parts)]
    if k > 1 and all(len(alts) == 1 for alts in each):
        options = [alts[0] for alts in each]
        if k > len(options):
            raise InputError(
                f"requirement {path or 'expression'}: {k} of {len(options)} course(s) can never be met",
                field="courses",
                value=path,
            )
        if k == len(options):
            return frozenset().union(*options), None
        return frozenset(), GroupSpec(k, tuple(_bounded(options, path)))
    options = alternatives(expression, path)
    if len(options) == 1:
        return options[0], None
    return frozenset(), GroupSpec(1, tuple(options))


def normalise(expression: Any) -> Normalised:
    """Plain prerequisites and groups meaning exactly ``expression`` (module docstring)."""
    plain: set[str] = set()
    groups: list[GroupSpec] = []

    def conjunct(part: Any, path: str) -> None:
        if isinstance(part, str):
            plain.add(part)
            return
        k, parts = _parts(part, path)
        if k is None:
            for i, p in enumerate(parts):
                conjunct(p, f"{path}[{i}]")
            return
        more, group = _group(part, path)
        plain.update(more)
        if group is not None:
            groups.append(group)

    conjunct(expression, "")
    return Normalised(frozenset(plain), tuple(groups))


def label_options(old: Mapping[str, Option], new: Sequence[Collection[str]]) -> dict[str, Option]:
    """Number ``new`` options: an option equal to one of ``old`` (label -> concepts) keeps its
    label, so a revision leaves the history of unchanged options alone; the others take the
    smallest positive numbers not in use, in the order given. Ordered by number."""
    free = dict(old)
    out: dict[str, Option] = {}
    rest: list[Option] = []
    for option in (frozenset(o) for o in new):
        label = next((lbl for lbl, o in free.items() if o == option), None)
        if label is None:
            rest.append(option)
            continue
        out[label] = option
        del free[label]
    numbers = (str(n) for n in itertools.count(1) if str(n) not in out)
    for option in rest:
        out[next(numbers)] = option
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def check_group(
    group_id: str, target_id: str, needs: Any, options: Sequence[Collection[str]]
) -> tuple[Option, ...]:
    """The options of a well-formed group, or :class:`RequirementRejected` naming what is wrong:
    ``needs`` not an integer in 1..len(options), no option, an empty option, a member equal to
    the target, more than :data:`MAX_OPTIONS` options."""
    what = f"requirement {group_id!r}"
    if isinstance(needs, bool) or not isinstance(needs, int):
        raise RequirementRejected(
            f"{what}: needs must be an integer, got {needs!r}", field="needs", value=needs
        )
    if isinstance(options, str) or not options:
        raise RequirementRejected(f"{what}: needs at least one option", field="options", value=options)
    out = tuple(frozenset(o) for o in options)
    for i, o in enumerate(out, 1):
        if not o:
            raise RequirementRejected(f"{what}: option {i} is empty", field="options", value=i)
        bad = sorted(c for c in o if not isinstance(c, str))
        if bad:
            raise RequirementRejected(
                f"{what}: option {i} holds {bad[0]!r}, not a concept id", field="options"
            )
        if target_id in o:
            raise RequirementRejected(
                f"{what}: {target_id!r} cannot be an option of its own requirement (option {i})",
                field="concept_id",
                value=target_id,
            )
    if len(out) > MAX_OPTIONS:
        raise RequirementRejected(
            f"{what}: {len(out)} options, more than {MAX_OPTIONS}", field="options", value=len(out)
        )
    if not 1 <= needs <= len(out):
        raise RequirementRejected(
            f"{what}: needs {needs} of {len(out)} option(s); it must be between 1 and {len(out)}",
            field="needs",
            value=needs,
        )
    return out


def period_fault(
    group_id: str,
    versions: Sequence[tuple[Period, str, int]],
    members: Sequence[tuple[Period, str, str]],
) -> RequirementRejected | None:
    """What is wrong with a group's rows in force as now known (None if nothing): ``versions``
    are its (period, target, needs), ``members`` its (period, option, concept). Every member
    holds only while the group does, never names the target, and at every valid time the
    group holds it has at least ``needs`` options."""
    what = f"requirement {group_id!r}"
    spans = [p for p, _, _ in versions]
    for period, option, concept in members:
        if not covers(spans, period):
            return RequirementRejected(
                f"{what}: {concept!r} (option {option}) would hold over {_span(period)}, where the "
                "requirement does not",
                field="valid_at",
                value=format_time(period.start),
            )
        for p, target, _ in versions:
            if target == concept and overlaps(p, period):
                return RequirementRejected(
                    f"{what}: {concept!r} cannot be an option of its own requirement",
                    field="concept_id",
                    value=concept,
                )
    cuts = sorted(
        {t for p, *_ in versions for t in p if t is not None}
        | {t for p, *_ in members for t in p if t is not None}
    )
    for p, _, needs in versions:
        for start, end in _pieces(p, cuts):
            piece = Period(start, end)
            options = {o for q, o, _ in members if covers([q], piece)}
            if len(options) < needs:
                return RequirementRejected(
                    f"{what}: needs {needs} of its options but would have {len(options)} over {_span(piece)}",
                    field="needs",
                    value=needs,
                )
    return None


def _pieces(p: Period, cuts: Sequence[datetime]) -> Iterable[tuple[datetime | None, datetime | None]]:
    """``p`` split at every cut inside it."""
    inner = [t for t in cuts if (p.start is None or t > p.start) and (p.end is None or t < p.end)]
    bounds: list[datetime | None] = [p.start, *inner, p.end]
    return itertools.pairwise(bounds)


def _span(period: Period) -> str:
    return f"{format_time(period.start) or 'always'}..{format_time(period.end) or 'open'}"


def unlearnable(
    nodes: Collection[str],
    plain: Iterable[tuple[str, str]],
    groups: Iterable[tuple[str, str, int, str, str]],
) -> set[str]:
    """The concepts of ``nodes`` that no order of learning reaches: a concept is learnable once
    all its plain prerequisites (``(before, after)`` pairs) are, and, for each of its groups
    (rows ``(group id, target, needs, option, member)``), ``needs`` options all of whose members
    are. Concepts outside ``nodes`` count as learnable (the caller's invariant: they were before
    the change). A group listed with several ``needs`` (versions at different valid times) needs
    the most of them. Linear in the pairs and members (a worklist, as Kahn's topological sort)."""
    inside = set(nodes)
    waiting: dict[str, int] = dict.fromkeys(inside, 0)  # plain needs and unmet groups per node
    then: dict[str, list[tuple[str, Any]]] = {}  # concept -> what its learning advances
    for before, after in set(plain):
        if after in inside and before in inside:
            waiting[after] += 1
            then.setdefault(before, []).append(("node", after))
    options: dict[tuple[str, str], set[str]] = {}
    needs: dict[str, tuple[str, int]] = {}
    for gid, target, k, option, member in groups:
        if target not in inside:
            continue
        needs[gid] = (target, max(k, needs.get(gid, (target, k))[1]))
        options.setdefault((gid, option), set())
        if member in inside:
            options[(gid, option)].add(member)
    met: dict[str, int] = dict.fromkeys(needs, 0)
    left: dict[tuple[str, str], int] = {}
    for (gid, option), members in options.items():
        left[(gid, option)] = len(members)
        met[gid] += not members  # an option wholly outside ``nodes`` is met already
        for m in members:
            then.setdefault(m, []).append(("option", (gid, option)))
    for gid, (target, k) in needs.items():
        if met[gid] < k:
            waiting[target] += 1
    ready = [n for n, w in waiting.items() if w == 0]
    learnt: set[str] = set()
    while ready:
        n = ready.pop()
        learnt.add(n)
        for kind, what in then.get(n, ()):
            if kind == "node":
                waiting[what] -= 1
                if waiting[what] == 0:
                    ready.append(what)
                continue
            left[what] -= 1
            if left[what] == 0:
                gid = what[0]
                target, k = needs[gid]
                met[gid] += 1
                if met[gid] == k:
                    waiting[target] -= 1
                    if waiting[target] == 0:
                        ready.append(target)
    return inside - learnt
