"""Checking a whole bundle in one streaming pass: every problem, and the import's plan.

:func:`check` reads the bundle row by row (never a whole file) against the graph as it stands
and returns a :class:`Plan`: every :class:`~data_plane.errors.Problem` found, the rows an
:class:`ImportPolicy` sets aside and why, the mutual prerequisites kept as ``related`` edges, the
lessons gathered from the link rows, and compact key indexes (ints, not row objects) that the
import needs afterwards. Nothing is written; ``kg import --check`` is this pass alone.

What is checked, per row: structure (header, encoding, CSV syntax, cell count), ids, names,
grounding (confidence, reason, source, evidence, with the manifest's defaults), times, relation,
self-loops, duplicates (symmetric edges are one key whichever way round), lesson titles; across
rows: edges and links to concepts neither in the bundle nor active in the graph, and prerequisite
cycles over the bundle's open prerequisite rows together with the stored active ones (see
:mod:`data_plane.cycles` for how cycles are found and which row breaks each).

Contradictions and what a policy does with them:

* default: every problem refuses the import (nothing is written);
* ``set_aside``: rows pointing at unknown concepts, and the row chosen to break each cycle, are
  set aside (recorded, not imported); every other problem still refuses the import;
* ``mutual_as_related``: two bundle rows ``A prerequisite B`` and ``B prerequisite A`` (neither
  already stored in force) become one ``A related B`` edge, and both rows are set aside as
  ``mutual``; the related edge is written (upsert) with the grounding of the higher-confidence
  row (ties: the earlier line), unless the bundle has its own ``A related B`` row.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from data_plane import schema
from data_plane.bundle_rows import (
    CONCEPTS,
    EDGES,
    GROUPS,
    LINKS,
    MANIFEST,
    MEMBERS,
    Cells,
    Manifest,
    Row,
    RowFault,
    concept_write,
    edge_write,
    group_write,
    link_write,
    member_write,
    read_manifest,
    read_rows,
)
from data_plane.cycles import Arc, break_cycles
from data_plane.duplicates import NameBook, NameKey
from data_plane.errors import Problem
from data_plane.gateway import Write
from data_plane.reads import GraphReader
from data_plane.records import Grounding
from data_plane.relations import PREREQUISITE, RELATED, RELATIONS, edge_key
from data_plane.requirements import unlearnable
from data_plane.temporal import find_cycle

__all__ = ["ImportPolicy", "LessonPlan", "Plan", "SetAside", "check", "format_problems"]

KIND_ORDER: Final = (
    "file",
    "manifest",
    "encoding",
    "text",
    "csv",
    "missing",
    "grounding",
    "confidence",
    "evidence",
    "time",
    "relation",
    "needs",
    "option",
    "self_loop",
    "duplicate",
    "duplicate_name",
    "confusable_name",
    "lesson_title",
    "unknown_concept",
    "requirement",
    "cycle",
    "refused",
)
_FILES: Final = (MANIFEST, CONCEPTS, EDGES, LINKS, GROUPS, MEMBERS)
_REL_INDEX: Final = {r: i for i, r in enumerate(RELATIONS)}


@dataclass(frozen=True)
class ImportPolicy:
    """What an import does with contradictions (default: refuse, write nothing).

    ``name_key`` is how concept names are compared (the question reader's normaliser): with it,
    a concept whose name or alias reads the same as another concept's, in the bundle or active
    in the graph, is a ``duplicate_name`` problem. None: names are not compared."""

    set_aside: bool = False
    mutual_as_related: bool = False
    name_key: NameKey | None = None
    # How a set-aside row is named to the user and in its record: as it is, or (a pairs import)
    # by the file and line the user wrote (``PairsBundle.located``).
    located: Callable[[SetAside], SetAside] | None = None


@dataclass(frozen=True)
class SetAside:
    """A row an import did not apply, and why (``kind``: unknown_concept, cycle or mutual; or
    ``lesson``, a lesson not created because every link row of it was set aside)."""

    kind: str
    file: str
    line: int
    key: str
    why: str
    cycle: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "why": self.why,
        }
        if self.cycle:
            out["cycle"] = list(self.cycle)
        return out

    def record(self, bundle: str, row: Grounding) -> Grounding:
        """The grounding of the set-aside record: the row's own confidence and source, this
        import's reason, and the row's reason and evidence kept in the evidence."""
        evidence: dict[str, Any] = {
            "set_aside": self.kind,
            "bundle": bundle,
            "file": self.file,
            "line": self.line,
            "row_reason": row.reason,
            "row_evidence": row.evidence,
        }
        if self.cycle:
            evidence["cycle"] = list(self.cycle)
        return Grounding(row.confidence, f"set aside by kg import: {self.why}", row.source, evidence)


@dataclass
class LessonPlan:
    """A lesson gathered from its link rows: its title, and the grounding and valid_at of its
    earliest-valid link (ties: smallest concept id), so it does not depend on row order."""

    title: str | None = None
    title_line: int = 0
    grounding: Grounding | None = None
    rank: tuple[datetime, str] | None = None
    valid_at: datetime | None = None
    all_timed: bool = True
    first_line: int = 0
    # Link rows that will be written (not set aside): a lesson none of whose links is written is
    # not created either.
    kept: int = 0

    def add(
        self, title: str, line: int, concept_id: str, g: Grounding, valid_at: datetime | None
    ) -> str | None:
        """Fold one link row in; return a problem message if its title contradicts an earlier one."""
        self.first_line = self.first_line or line
        if title.strip():
            if self.title is None:
                self.title, self.title_line = title, line
            elif self.title != title:
                return f"the lesson has title {self.title!r} on line {self.title_line}, {title!r} here"
        rank = (valid_at or datetime.max.replace(tzinfo=UTC), concept_id)
        if self.rank is None or rank < self.rank:
            self.rank, self.grounding = rank, g
        if valid_at is None:
            self.all_timed = False
        elif self.valid_at is None or valid_at < self.valid_at:
            self.valid_at = valid_at
        return None

    def write(self, lesson_id: str) -> Write:
        assert self.grounding is not None
        return Write.lesson(
            lesson_id,
            grounding=self.grounding,
            title=lesson_id if self.title is None else self.title,
            mode="upsert",
            valid_at=self.valid_at if self.all_timed else None,
        )


@dataclass
class Plan:
    """What one checking pass found and decided (see the module docstring)."""

    folder: Path
    manifest: Manifest
    policy: ImportPolicy
    problems: list[Problem] = field(default_factory=list)
    set_aside: dict[tuple[str, int], SetAside] = field(default_factory=dict)
    # Line of the row whose grounding a mutual pair's related edge takes -> (source, target).
    related: dict[int, tuple[str, str]] = field(default_factory=dict)
    lessons: dict[str, LessonPlan] = field(default_factory=dict)
    rows: Counter[str] = field(default_factory=Counter)
    # Compact key indexes: every id seen -> int; the bundle's keys as packed ints.
    ids: dict[str, int] = field(default_factory=dict, repr=False)
    names: list[str] = field(default_factory=list, repr=False)
    concept_keys: set[int] = field(default_factory=set, repr=False)
    edge_keys: set[int] = field(default_factory=set, repr=False)
    link_keys: set[int] = field(default_factory=set, repr=False)
    group_keys: set[str] = field(default_factory=set, repr=False)

    def located(self, aside: SetAside) -> SetAside:
        """``aside`` as the user is told of it (the policy's ``located``; as it is by default)."""
        return aside if self.policy.located is None else self.policy.located(aside)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def ok(self) -> bool:
        """Would an import under this plan's policy succeed (as far as a check can tell)?"""
        return not self.problems

    def release_keys(self) -> None:
        """Drop the key indexes (the write pass needs them only for ``invalidate_missing``)."""
        self.ids, self.names = {}, []
        self.concept_keys, self.edge_keys, self.link_keys = set(), set(), set()
        self.group_keys = set()

    def index(self, ident: str) -> int:
        i = self.ids.get(ident)
        if i is None:
            i = self.ids[ident] = len(self.names)
            self.names.append(ident)
        return i

    def edge_packed(self, source_id: str, target_id: str, relation: str) -> int | None:
        """The packed key of an edge, or None if an id never appeared in the bundle."""
        s, t = self.ids.get(source_id), self.ids.get(target_id)
        if s is None or t is None:
            return None
        return _pack_edge(s, t, _REL_INDEX[relation])

    def link_packed(self, lesson_id: str, concept_id: str) -> int | None:
        lesson, concept = self.ids.get("\x00" + lesson_id), self.ids.get(concept_id)
        if lesson is None or concept is None:
            return None
        return (lesson << 32) | concept

    def sorted_problems(self) -> list[Problem]:
        rank = {k: i for i, k in enumerate(KIND_ORDER)}
        files = {f: i for i, f in enumerate(_FILES)}
        return sorted(
            self.problems,
            key=lambda p: (rank.get(p.kind, len(rank)), files.get(p.file, 9), p.line or 0, p.lines),
        )

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        problems = self.sorted_problems()
        return {
            "bundle": self.name,
            "ok": self.ok,
            "rows": dict(self.rows),
            "problems": len(problems),
            "problems_by_kind": dict(Counter(p.kind for p in problems)),
            "problem_list": [p.to_dict() for p in problems[:limit]],
            "set_aside": [s.to_dict() for s in self.set_asides()],
        }

    def lessons_to_write(self) -> dict[str, LessonPlan]:
        """The lessons with at least one link row that is not set aside."""
        return {lid: lesson for lid, lesson in self.lessons.items() if lesson.kept}

    def set_asides(self) -> list[SetAside]:
        """The rows set aside, in file and line order, and after them the lessons left without a
        link (every link row set aside), which are not created."""
        files = {f: i for i, f in enumerate(_FILES)}
        rows = sorted(self.set_aside.values(), key=lambda s: (files.get(s.file, 9), s.line))
        rows = [self.located(s) for s in rows]
        empty = [
            SetAside(
                "lesson",
                LINKS,
                lesson.first_line,
                lid,
                "every link row of the lesson was set aside, so the lesson is not created",
            )
            for lid, lesson in sorted(self.lessons.items())
            if not lesson.kept
        ]
        return rows + empty


def _pack_edge(s: int, t: int, r: int) -> int:
    return (((s << 32) | t) << 3) | r


# ---------------------------------------------------------------------------------------------
# The pass


def check(folder: str | Path, reader: GraphReader, policy: ImportPolicy | None = None) -> Plan:
    """Check the bundle at ``folder`` against the graph ``reader`` sees now; write nothing."""
    path = Path(folder)
    policy = policy or ImportPolicy()
    if not path.is_dir():
        plan = Plan(path, Manifest(str(path), {}, complete=False), policy)
        plan.problems.append(Problem("file", str(path), None, None, "not a bundle folder"))
        return plan
    plan = Plan(path, read_manifest(path, plan_sink := _Sink()), policy)
    plan.problems = plan_sink.problems
    now = reader.as_of().valid_at
    cells = Cells(plan.manifest)
    with reader.engine.connect() as conn:
        active = _active_concepts(conn, now)
        book: NameBook[tuple[int, str]] | None = NameBook(policy.name_key) if policy.name_key else None
        declared = _check_concepts(plan, cells, book)
        if book is not None:
            _stored_name_clashes(conn, plan, declared, book, now)
        known = _Either(declared, active)
        arcs: list[Arc] = []
        arc_keys: dict[int, int] = {}
        closed: set[int] = set()
        if (path / EDGES).is_file():
            _check_edges(plan, cells, known, now, arcs, arc_keys, closed)
        if (path / LINKS).is_file():
            _check_links(plan, cells, known)
        _stored_prerequisites(conn, plan, now, arcs, arc_keys, closed)
        if policy.mutual_as_related:
            _mutual_pairs(plan, arcs, arc_keys)
        _cycles(plan, arcs)
        pairs = _check_requirements(plan, cells, known) if (path / GROUPS).is_file() else []
        # learning order is read off sound groups only (a group already refused would count as unmeetable)
        if pairs and not any(p.kind == "cycle" or p.file in (GROUPS, MEMBERS) for p in plan.problems):
            _group_cycles(conn, plan, arcs, pairs, now)
    return plan


class _Either:
    """Membership in either of two sets, without building their union."""

    def __init__(self, a: set[str], b: set[str]) -> None:
        self.a, self.b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self.a or item in self.b


class _Sink:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def __call__(self, problem: Problem) -> None:
        self.problems.append(problem)


def _rows(plan: Plan, file: str, *, keep_bad: bool = False) -> Iterator[Row]:
    unescape = plan.manifest.formula_escape
    for row in read_rows(plan.folder, file, plan.problems.append, keep_bad=keep_bad, unescape=unescape):
        plan.rows[file] += 1
        yield row


def _check_concepts(plan: Plan, cells: Cells, book: NameBook[tuple[int, str]] | None) -> set[str]:
    if not (plan.folder / CONCEPTS).is_file():
        plan.problems.append(
            Problem("file", CONCEPTS, None, None, f"required file is missing from {plan.folder}")
        )
        return set()
    declared: set[str] = set()
    firsts: dict[int, int] = {}
    for row in _rows(plan, CONCEPTS, keep_bad=True):
        ident = row.get("id").strip()
        if ident and (not row.bad or ident.isascii()):
            declared.add(ident)  # so edges to a concept with a faulty row are not also "unknown"
        if row.bad:
            continue
        try:
            w = concept_write(row, cells)
        except RowFault as fault:
            plan.problems.append(row.problem(fault))
            continue
        i = plan.index(w.key[0])
        first = firsts.setdefault(i, row.line)
        if first != row.line:
            plan.problems.append(
                Problem(
                    "duplicate",
                    CONCEPTS,
                    row.line,
                    "id",
                    f"duplicate concept id {w.key[0]!r}; first given on line {first}",
                )
            )
        elif book is not None:
            _claim_names(plan, book, w.key[0], w.content, row.line)
        plan.concept_keys.add(i)
    return declared


_SAME_NAME: Final = "names are compared as questions are read"
_ALLOW_NAMES: Final = "--allow-duplicate-names to import it anyway"


def _claim_names(
    plan: Plan, book: NameBook[tuple[int, str]], cid: str, content: Mapping[str, Any], line: int
) -> None:
    """Claim a bundle concept's name and aliases; one that reads the same as an earlier row's is a
    ``duplicate_name`` problem naming that row."""
    for column, name in (("name", content["name"]), *(("aliases", a) for a in content["aliases"])):
        other = book.claim(cid, name, (line, column))
        if other is not None:
            clash = f"concept {other.concept_id!r} ({other.name!r}, line {other.where[0]}"
            plan.problems.append(_name_problem(line, column, cid, name, clash))


def _stored_name_clashes(
    conn: Connection, plan: Plan, declared: set[str], book: NameBook[tuple[int, str]], now: datetime
) -> None:
    """Bundle concepts whose name or alias an active concept outside the bundle goes by."""
    c = schema.concepts
    stmt = sa.select(c.c.concept_id, c.c.name, c.c.aliases).where(_open(c, now))
    reported: set[tuple[int, str, str]] = set()
    for cid, name, aliases in _stream(conn, stmt):
        if cid in declared:
            continue  # the bundle restates this concept: its rows are authoritative for it
        for stored in (name, *(aliases or ())):
            claim = book.owner(stored)
            if claim is None or claim.concept_id == cid or (*claim.where, cid) in reported:
                continue
            reported.add((*claim.where, cid))
            line, column = claim.where
            clash = f"concept {cid!r} in the graph ({stored!r}"
            plan.problems.append(_name_problem(line, column, claim.concept_id, claim.name, clash))


def _name_problem(line: int, column: str, cid: str, name: str, clash: str) -> Problem:
    """Concept ``cid``'s name or alias (``column``) on ``line`` reads the same as ``clash`` says."""
    what = "name" if column == "name" else "alias"
    return Problem(
        "duplicate_name",
        CONCEPTS,
        line,
        column,
        f"concept {cid!r}: {what} {name!r} is already {clash}; {_SAME_NAME}); {_ALLOW_NAMES}",
    )


def _check_edges(
    plan: Plan,
    cells: Cells,
    known: _Either,
    now: datetime,
    arcs: list[Arc],
    arc_keys: dict[int, int],
    closed: set[int],
) -> None:
    dups: list[tuple[int, int, str]] = []
    for row in _rows(plan, EDGES):
        try:
            w = edge_write(row, cells)
        except RowFault as fault:
            plan.problems.append(row.problem(fault))
            continue
        source_id, target_id, relation = w.key
        s, t = plan.index(source_id), plan.index(target_id)
        packed = _pack_edge(s, t, _REL_INDEX[relation])
        if packed in plan.edge_keys:
            dups.append((packed, row.line, f"duplicate edge {edge_key(*w.key)!r}"))
            continue
        plan.edge_keys.add(packed)
        unknown = [c for c in (source_id, target_id) if c not in known]
        if unknown:
            column = "source_id" if row.get("source_id").strip() == unknown[0] else "target_id"
            _unknown(plan, row, column, unknown, edge_key(*w.key))
            continue
        if relation != PREREQUISITE:
            continue
        pair = (s << 32) | t
        if isinstance(w.invalid_at, datetime) and w.invalid_at <= now:
            closed.add(pair)
            continue
        arc_keys[pair] = len(arcs)
        arcs.append(Arc(s, t, row.line, w.grounding.confidence, True))
    _duplicates(plan, cells, EDGES, "target_id", dups)


def _duplicates(plan: Plan, cells: Cells, file: str, column: str, dups: list[tuple[int, int, str]]) -> None:
    """Report duplicate rows with the line of their first occurrence.

    The keys seen are kept as a set of packed ints (no line per row, to stay small), so the first
    lines of the few duplicated keys are found by reading the file once more, only when needed."""
    if not dups:
        return
    wanted = {packed for packed, _, _ in dups}
    first: dict[int, int] = {}
    for row in read_rows(plan.folder, file, lambda _p: None, unescape=plan.manifest.formula_escape):
        try:
            if file == EDGES:
                packed = plan.edge_packed(*edge_write(row, cells).key)
            else:
                packed = plan.link_packed(*link_write(row, cells)[0].key)
        except RowFault:
            continue
        if packed in wanted and packed not in first:
            first[packed] = row.line
    for packed, line, what in dups:
        plan.problems.append(
            Problem("duplicate", file, line, column, f"{what}; first given on line {first.get(packed, '?')}")
        )


def _unknown(plan: Plan, row: Row, column: str, unknown: list[str], key: str) -> None:
    names = " and ".join(repr(u) for u in unknown)
    noun = "concepts" if len(unknown) > 1 else "concept"
    if plan.policy.set_aside:
        why = f"points at unknown {noun} {names} (not in the bundle, not active in the graph)"
        plan.set_aside[(row.file, row.line)] = SetAside("unknown_concept", row.file, row.line, key, why)
    else:
        plan.problems.append(
            Problem(
                "unknown_concept",
                row.file,
                row.line,
                column,
                f"{key}: unknown {noun} {names}: not in concepts.csv and not active in the graph",
            )
        )


def _check_links(plan: Plan, cells: Cells, known: _Either) -> None:
    dups: list[tuple[int, int, str]] = []
    for row in _rows(plan, LINKS):
        try:
            w, title = link_write(row, cells)
        except RowFault as fault:
            plan.problems.append(row.problem(fault))
            continue
        lesson_id, concept_id = w.key
        packed = (plan.index("\x00" + lesson_id) << 32) | plan.index(concept_id)
        if packed in plan.link_keys:
            dups.append((packed, row.line, f"duplicate lesson link {lesson_id}/{concept_id}"))
            continue
        plan.link_keys.add(packed)
        lesson = plan.lessons.setdefault(lesson_id, LessonPlan())
        clash = lesson.add(title, row.line, concept_id, w.grounding, w.valid_at)
        if clash is not None:
            plan.problems.append(Problem("lesson_title", LINKS, row.line, "lesson_title", clash))
        if concept_id not in known:
            _unknown(plan, row, "concept_id", [concept_id], f"lesson link {lesson_id}/{concept_id}")
        else:
            lesson.kept += 1


_Member = tuple[str, str, int, str, str, int]  # group, target, needs, option, concept, line


def _check_requirements(plan: Plan, cells: Cells, known: _Either) -> list[_Member]:
    """``requirement_groups.csv`` and ``requirement_members.csv``: every row, every group's k
    against its number of options, members naming their own target or a group the bundle does
    not have; returns each member (group, target, needs, option, concept, line) for the
    learning-order check."""
    groups: dict[str, tuple[str, int, int]] = {}
    faulty: set[str] = set()  # groups whose row is reported already: their members are not blamed
    for row in _rows(plan, GROUPS):
        try:
            w = group_write(row, cells)
        except RowFault as fault:
            plan.problems.append(row.problem(fault))
            faulty.add(row.get("group_id").strip())
            continue
        gid, target = w.key[0], w.content["target_id"]
        if gid in groups:
            first = groups[gid][2]
            plan.problems.append(
                Problem(
                    "duplicate",
                    GROUPS,
                    row.line,
                    "group_id",
                    f"duplicate group {gid!r}; first given on line {first}",
                )
            )
            continue
        groups[gid] = (target, w.content["needs"], row.line)
        plan.group_keys.add(gid)
        if target not in known:
            _unknown_member(plan, GROUPS, row.line, "target_id", f"requirement {gid!r}", target)
    options: dict[str, set[str]] = {}
    seen: dict[tuple[str, ...], int] = {}
    pairs: list[_Member] = []
    rows = _rows(plan, MEMBERS) if (plan.folder / MEMBERS).is_file() else iter(())
    for row in rows:
        try:
            w = member_write(row, cells)
        except RowFault as fault:
            plan.problems.append(row.problem(fault))
            continue
        gid, option, concept = w.key
        what = f"requirement {gid!r} option {option}"
        if w.key in seen:
            plan.problems.append(
                Problem(
                    "duplicate",
                    MEMBERS,
                    row.line,
                    "concept_id",
                    f"{what}: {concept!r} again; first given on line {seen[w.key]}",
                )
            )
            continue
        seen[w.key] = row.line
        group = groups.get(gid)
        if group is None and gid in faulty:
            continue
        if group is None:
            plan.problems.append(
                Problem("requirement", MEMBERS, row.line, "group_id", f"{what}: no such group in {GROUPS}")
            )
            continue
        if concept == group[0]:
            plan.problems.append(
                Problem(
                    "self_loop",
                    MEMBERS,
                    row.line,
                    "concept_id",
                    f"{what}: {concept!r} is the group's own target",
                )
            )
            continue
        if concept not in known:
            _unknown_member(plan, MEMBERS, row.line, "concept_id", what, concept)
            continue
        options.setdefault(gid, set()).add(option)
        pairs.append((gid, group[0], group[1], option, concept, row.line))
    for gid, (_, needs, line) in groups.items():
        n = len(options.get(gid, ()))
        if needs > n:
            have = f"has {n} option(s) in {MEMBERS}" if n else f"has no member in {MEMBERS}"
            plan.problems.append(
                Problem(
                    "requirement",
                    GROUPS,
                    line,
                    "needs",
                    f"requirement {gid!r} needs {needs} of its options but {have}",
                )
            )
    return pairs


def _unknown_member(plan: Plan, file: str, line: int, column: str, what: str, concept: str) -> None:
    plan.problems.append(
        Problem(
            "unknown_concept",
            file,
            line,
            column,
            f"{what}: unknown concept {concept!r}: not in concepts.csv and not active in the graph",
        )
    )


def _group_cycles(
    conn: Connection, plan: Plan, arcs: list[Arc], members: list[_Member], now: datetime
) -> None:
    """Every concept stays learnable in some order (``data_plane.requirements.unlearnable``) over
    the bundle's and the stored prerequisites, the bundle's groups and the stored groups the
    bundle does not restate; else a ``cycle`` problem on the member rows of a cycle no order can
    enter."""
    plain = [(plan.names[a.source], plan.names[a.target]) for a in arcs if a.source >= 0]
    g, m = schema.requirement_groups, schema.requirement_members
    stored = (
        sa.select(g.c.group_id, g.c.target_id, g.c.needs, m.c.option, m.c.concept_id)
        .select_from(m.join(g, g.c.group_id == m.c.group_id))
        .where(_open(m, now), _open(g, now))
    )
    groups = [
        (gid, t, int(k), o, c) for gid, t, k, o, c in _stream(conn, stored) if gid not in plan.group_keys
    ]
    groups += [member[:5] for member in members]
    nodes = {n for pair in plain for n in pair} | {r[1] for r in groups} | {r[4] for r in groups}
    bad = unlearnable(nodes, plain, groups)
    if not bad:
        return
    pairs = [(s, t) for s, t in plain if s in bad and t in bad] + [
        (c, t) for _, t, _, _, c in groups if c in bad and t in bad
    ]
    cycle = find_cycle([], sorted(set(pairs))) or sorted(bad)
    on = set(itertools.pairwise(cycle))
    lines = tuple(sorted({line for _, t, _, _, c, line in members if (c, t) in on}))
    plan.problems.append(
        Problem(
            "cycle", MEMBERS, lines[0] if lines else None, "concept_id",
            f"learning-order cycle no order can enter: {' -> '.join(cycle)} (each of these needs the "
            "next one before it, through a requirement group or an edge)",
            lines,
        )
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Reading the graph (compactly)


def _open(table: sa.Table, now: datetime) -> sa.ColumnElement[bool]:
    return sa.and_(
        table.c.expired_at.is_(None),
        table.c.op != "retract",
        sa.or_(table.c.invalid_at.is_(None), table.c.invalid_at > now),
    )


def _stream(conn: Connection, stmt: sa.Select[Any]) -> Iterable[Any]:
    return conn.execution_options(stream_results=True, yield_per=20_000).execute(stmt)


def _active_concepts(conn: Connection, now: datetime) -> set[str]:
    c = schema.concepts
    return {cid for (cid,) in _stream(conn, sa.select(c.c.concept_id).where(_open(c, now)))}


def _stored_prerequisites(
    conn: Connection, plan: Plan, now: datetime, arcs: list[Arc], arc_keys: dict[int, int], closed: set[int]
) -> int:
    """Add the stored open prerequisite edges to ``arcs`` (not removable); return how many.

    A stored edge the bundle restates is the same arc (and so not removable); one the bundle
    closes is left out, as the import will close it.
    """
    e = schema.concept_edges
    # Distinct: an edge may hold over several periods, one current version each.
    stmt = (
        sa.select(e.c.source_id, e.c.target_id).where(e.c.relation == PREREQUISITE, _open(e, now)).distinct()
    )
    n = 0
    for source_id, target_id in _stream(conn, stmt):
        s, t = plan.index(source_id), plan.index(target_id)
        pair = (s << 32) | t
        if pair in closed:
            continue
        i = arc_keys.get(pair)
        if i is not None:
            a = arcs[i]
            arcs[i] = Arc(a.source, a.target, a.line, a.confidence, False)
            continue
        arcs.append(Arc(s, t, 0, 1.0, False))
        n += 1
    return n


def _mutual_pairs(plan: Plan, arcs: list[Arc], arc_keys: dict[int, int]) -> None:
    """Turn each mutual pair of new bundle prerequisite rows into one planned related edge."""
    done: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for i in sorted(arc_keys.values(), key=lambda i: arcs[i].line):
        a = arcs[i]
        back = arc_keys.get((a.target << 32) | a.source)
        if back is None or i in done or not (a.removable and arcs[back].removable):
            continue
        done.update((i, back))
        pairs.append((i, back))
    for i, j in pairs:
        a, b = arcs[i], arcs[j]
        x, y = sorted((plan.names[a.source], plan.names[a.target]))
        keep = a if (a.confidence, -a.line) >= (b.confidence, -b.line) else b
        already = plan.edge_packed(x, y, RELATED) in plan.edge_keys
        result = "the bundle relates them already" if already else f"kept as {x}>{RELATED}>{y}"
        for arc, other in ((a, b), (b, a)):
            key = edge_key(plan.names[arc.source], plan.names[arc.target], PREREQUISITE)
            why = f"mutual prerequisite with line {other.line} (each said to come before the other); {result}"
            plan.set_aside[(EDGES, arc.line)] = SetAside("mutual", EDGES, arc.line, key, why)
        if not already:
            plan.related[keep.line] = (x, y)
        arcs[i] = arcs[j] = Arc(-1, -1, 0, 0.0, False)  # gone from the graph


def _cycles(plan: Plan, arcs: list[Arc]) -> None:
    live = [a for a in arcs if a.source >= 0]
    for cycle in break_cycles(live):
        path = [live[i] for i in cycle.arcs]
        # Shown from its smallest id, so the text does not depend on where the search started
        # (a re-import then records the same reason and writes nothing new).
        first = min(range(len(path)), key=lambda k: plan.names[path[k].source])
        path = path[first:] + path[:first]
        ids = [plan.names[path[0].source], *(plan.names[a.target] for a in path)]
        victim = live[cycle.removed]
        shown = " -> ".join(ids)
        lines = tuple(a.line for a in path if a.line)
        stored = sum(1 for a in path if not a.line)
        stored_note = f" (stored edges on it: {stored})" if stored else ""
        if plan.policy.set_aside:
            why = (
                f"closes prerequisite cycle {shown} ({EDGES} lines {', '.join(map(str, lines))}); "
                f"lowest confidence on it ({victim.confidence:g}), latest line on ties"
            )
            key = edge_key(plan.names[victim.source], plan.names[victim.target], PREREQUISITE)
            plan.set_aside[(EDGES, victim.line)] = SetAside("cycle", EDGES, victim.line, key, why, tuple(ids))
        else:
            plan.problems.append(
                Problem(
                    "cycle",
                    EDGES,
                    victim.line,
                    "target_id",
                    f"prerequisite cycle {shown}{stored_note}; --set-aside would set aside line "
                    f"{victim.line} (confidence {victim.confidence:g}, the lowest on the cycle)",
                    lines,
                )
            )


# ---------------------------------------------------------------------------------------------
# The report


def format_problems(problems: Sequence[Problem], *, limit: int = 50, bundle: str | None = None) -> str:
    """A report of ``problems`` grouped by kind with a summary count; at most ``limit`` are
    printed in all, the rest of each kind counted."""
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    counts = Counter(p.kind for p in problems)
    kinds = sorted(counts, key=lambda k: rank.get(k, len(rank)))
    n = len(problems)
    head = f"bundle {bundle!r} refused: " if bundle else "refused: "
    out = [f"{head}{n} problem{'s' * (n != 1)}, nothing was written"]
    out.append("  by kind: " + ", ".join(f"{k} {counts[k]}" for k in kinds))
    budget = limit
    for kind in kinds:
        group = [p for p in problems if p.kind == kind]
        if budget <= 0:
            out.append(f"{kind} ({len(group)}): not shown")
            continue
        out.append(f"{kind} ({len(group)}):")
        out += [f"  {p}" for p in group[:budget]]
        if len(group) > budget:
            out.append(f"  ... and {len(group) - budget} more not shown")
        budget -= len(group)
    if n > limit:
        out.append(f"{n - limit} of {n} problems not shown (--max-problems N, or --format json for all)")
    return "\n".join(out)
