"""Requirements with alternatives: the one meaning every learning-order form gives a requirement
group ("one of A or B"), over the evidence (docs/control-plane.md, "Requirements with
alternatives"). Pure: no I/O.

For a concept X: its *plain needs* are the concepts with a learning-order edge to it (all of
them); its *groups* (``EvidenceGraph.groups_of``) each need k of their options, an option's
concepts all needed; its *required* concepts (:func:`required`) are everything reached backwards
from X over plain needs only: what every way to X passes through; its *choices*
(:func:`choices`) are the groups of X and of every concept it requires. A learner who knows K is
credited with K and everything K requires (:func:`credited`).

:func:`requirement` is the requirement sentence ("CSE 101 requires: CSE 12; one of CSE 21, MATH
154 or MATH 184"): the names of the plain needs, sorted, then one phrase per group, sorted by its
text, joined by "; "; names in an option and options in a phrase are sorted by their casefolded
text (parentheses aside), an option of several concepts is written in parentheses ("(PHYS 4A and
PHYS 4B)").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from control_plane.evidence import EvidenceGraph
from control_plane.semantics.findings import Name, Piece
from control_plane.understanding.relating import adjacency, walk
from data_plane.records import RequirementGroup

__all__ = [
    "Pick",
    "choices",
    "chosen",
    "credited",
    "group_facts",
    "on_some_way",
    "phrase",
    "pick_pieces",
    "plain_needs",
    "required",
    "requirement",
    "ways_after",
]

_COUNTS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _text(ev: EvidenceGraph[Any, Any], cid: str) -> str:
    return ev.name(cid).casefold()


def _listed(items: Sequence[tuple[Piece, ...]], last: str) -> tuple[Piece, ...]:
    """``items`` joined "a, b <last> c"."""
    out: list[Piece] = []
    for i, item in enumerate(items):
        if i:
            out.append(f" {last} " if i == len(items) - 1 else ", ")
        out.extend(item)
    return tuple(out)


def _option(ev: EvidenceGraph[Any, Any], option: Collection[str]) -> tuple[Piece, ...]:
    names = [(Name(c),) for c in sorted(option, key=lambda c: (_text(ev, c), c))]
    body = _listed(names, "and")
    return ("(", *body, ")") if len(names) > 1 else body


def _plain(pieces: Iterable[Piece], ev: EvidenceGraph[Any, Any]) -> str:
    """The pieces' text (names by name, parentheses aside), casefolded: what options and phrases
    are sorted by."""
    text = "".join(ev.name(p.id) if isinstance(p, Name) else str(p) for p in pieces)
    return text.replace("(", "").replace(")", "").casefold()


def phrase(ev: EvidenceGraph[Any, Any], g: RequirementGroup) -> tuple[Piece, ...]:
    """ "one of A, B or C" ("two of ..."): the group's options, sorted by their text."""
    options = sorted((_option(ev, o) for o in g.options), key=lambda p: _plain(p, ev))
    count = _COUNTS[g.needs] if g.needs < len(_COUNTS) else str(g.needs)
    return (f"{count} of ", *_listed(options, "or"))


def plain_needs(ev: EvidenceGraph[Any, Any], x: str, relations: Sequence[str]) -> list[str]:
    """X's plain needs in the evidence, by name."""
    return sorted(
        {c for c, _ in adjacency(ev, relations, "before").get(x, [])}, key=lambda c: (_text(ev, c), c)
    )


def requirement(ev: EvidenceGraph[Any, Any], x: str, relations: Sequence[str]) -> tuple[Piece, ...]:
    """The requirement sentence of ``x``, without its closing period (module docstring)."""
    parts: list[tuple[Piece, ...]] = [(Name(c),) for c in plain_needs(ev, x, relations)]
    parts += sorted((phrase(ev, g) for g in ev.groups_of(x)), key=lambda p: _plain(p, ev))
    out: list[Piece] = [Name(x), " requires: "]
    for i, part in enumerate(parts):
        out += [*(["; "] if i else []), *part]
    return tuple(out)


def required(ev: EvidenceGraph[Any, Any], x: str, relations: Sequence[str]) -> set[str]:
    """Everything every way to ``x`` passes through: its plain needs, transitively (not ``x``)."""
    return set(walk(x, adjacency(ev, relations, "before")).parent) - {x}


def credited(ev: EvidenceGraph[Any, Any], known: Iterable[str], relations: Sequence[str]) -> set[str]:
    """What a learner who knows ``known`` is credited with: those and everything they require."""
    adj = adjacency(ev, relations, "before")
    return set().union(*(set(walk(k, adj).parent) for k in known))


def choices(ev: EvidenceGraph[Any, Any], concepts: Iterable[str]) -> list[RequirementGroup]:
    """The groups of ``concepts``, by group id."""
    wanted = set(concepts)
    return sorted((g for g in ev.groups.values() if g.target_id in wanted), key=lambda g: g.group_id)


def on_some_way(
    ev: EvidenceGraph[Any, Any], a: str, y: str, relations: Sequence[str]
) -> tuple[RequirementGroup, str] | None:
    """The first choice of ``y`` (by group id) that ``a`` lies on some ways through, with the
    option's concept it lies on: the concept is ``a``, or ``a`` lies on some way to it (required
    by it, or further on through options: :func:`ways_after`). None when ``a`` lies on no way to
    ``y`` through a choice."""
    reached = ways_after(ev, a, relations)
    for g in choices(ev, {y, *required(ev, y, relations)}):
        for option in g.options:
            for m in sorted(option):
                if m == a or m in reached:
                    return g, m
    return None


def ways_after(ev: EvidenceGraph[Any, Any], x: str, relations: Sequence[str]) -> set[str]:
    """Every concept ``x`` lies on some way to: forward over plain edges and through the options
    it is in (not ``x``)."""
    after = adjacency(ev, relations, "after")
    seen, todo = {x}, [x]
    while todo:
        c = todo.pop()
        nexts = [n for n, _ in after.get(c, [])] + [g.target_id for g in ev.groups_naming(c)]
        for n in nexts:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen - {x}


@dataclass(frozen=True)
class Pick:
    """The options a plan takes for a group (k of them), and the others that would do."""

    group: RequirementGroup
    options: tuple[tuple[str, ...], ...]
    others: tuple[tuple[str, ...], ...]


def chosen(
    ev: EvidenceGraph[Any, Any], x: str, known: Iterable[str], relations: Sequence[str]
) -> tuple[dict[str, set[str]], list[Pick]]:
    """A plan's way to ``x`` through its choices: each group of ``x`` and of what the plan holds
    (not credited) takes the options the learner already has (inside what they are credited
    with), then those that bring the fewest concepts not credited (it and what it requires; ties:
    its text), as many as it needs; what
    the option requires joins the plan, and so do its own groups, until none is left. Returns the
    plan's needs (the plain needs, and each target's chosen option) and the picks, by group id."""
    before = adjacency(ev, relations, "before")
    needs: dict[str, set[str]] = {c: {n for n, _ in steps} for c, steps in before.items()}
    credit = credited(ev, known, relations)
    plan = {x, *required(ev, x, relations)}
    picks: dict[str, Pick] = {}
    while True:
        # (a concept the learner is credited with needs no option taken: they met it)
        todo = [g for g in choices(ev, plan - credit) if g.group_id not in picks]
        if not todo:
            break
        for g in todo:

            def cost(option: tuple[str, ...]) -> tuple[int, str]:
                brings = set(option).union(*(required(ev, m, relations) for m in option)) - credit
                text = _plain(_option(ev, option), ev)
                return (0 if set(option) <= credit else 1 + len(brings), text)

            ranked = sorted(g.options, key=cost)
            taken, others = tuple(ranked[: g.needs]), tuple(ranked[g.needs :])
            picks[g.group_id] = Pick(g, taken, others)
            for option in taken:
                needs.setdefault(g.target_id, set()).update(option)
                plan |= set(option).union(*(required(ev, m, relations) for m in option))
    return needs, [picks[k] for k in sorted(picks)]


def pick_pieces(ev: EvidenceGraph[Any, Any], picks: Sequence[Pick]) -> tuple[Piece, ...]:
    """ "Choices: for X, A (B would also do); ..." for a plan's picks."""
    out: list[Piece] = [" Choices: "]
    for i, p in enumerate(picks):
        others = sorted((_option(ev, o) for o in p.others), key=lambda q: _plain(q, ev))
        taken = _listed([_option(ev, o) for o in p.options], "and")
        out += [*(["; "] if i else []), "for ", Name(p.group.target_id), ", ", *taken]
        if others:
            out += [" (", *_listed(others, "or"), " would also do)"]
    out.append(".")
    return tuple(out)


def group_facts(groups: Iterable[RequirementGroup]) -> list[dict[str, Any]]:
    """The groups as an answer's result lists them (``requirements``)."""
    return [
        {
            "group_id": g.group_id,
            "target": g.target_id,
            "needs": g.needs,
            "options": [list(o) for o in g.options],
        }
        for g in groups
    ]
