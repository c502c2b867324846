"""Graph bundles: move a whole curriculum graph in and out as a folder of CSV files.

Format ``kg-bundle/1``
======================

A bundle is a folder holding:

``manifest.json`` (required)
    ``{"format": "kg-bundle/1", "name": str, "description"?: str,
    "defaults"?: {"source", "reason", "confidence", "evidence", "valid_at"},
    "formula_escape"?: bool}``. Every default is optional; a default fills the cell of a row that
    leaves the column out or empty. ``evidence`` is any non-empty JSON value, ``valid_at`` an ISO
    8601 text. An export adds ``"exported_as_of": {"valid_at", "recorded_at"}`` and, unless told
    not to, ``"formula_escape": true``: every cell that begins with ``=``, ``+``, ``-``, ``@``,
    tab, CR or an apostrophe was written with one more leading apostrophe (so a spreadsheet shows
    it as text), which reading removes.

``concepts.csv`` (required)
    ``id,name`` and optionally ``aliases`` (separated by ``|``), ``summary``.

``concept_edges.csv`` (optional)
    ``source_id,target_id,relation`` (see :mod:`data_plane.relations` for directions).
    Symmetric relations are one key whichever way round they are written.

``lesson_concepts.csv`` (optional)
    ``lesson_id,concept_id`` and optionally ``lesson_title`` (default: the lesson id). Each
    distinct lesson becomes one lesson version, grounded like its first row and valid from the
    earliest ``valid_at`` of its rows.

Every CSV may also carry the grounding columns ``confidence,reason,source,evidence`` (evidence is
a JSON text cell), ``valid_at`` and ``invalid_at`` (ISO 8601; a bare date means midnight UTC; a
datetime needs ``Z`` or an offset). After defaults are applied every row must have a complete
grounding; ``valid_at`` may stay empty (the gateway then uses the time of the first import and
keeps it on re-imports). Unknown columns are ignored; files are UTF-8, a BOM is tolerated. A
bundle's rows are authoritative for their keys: an empty ``aliases``/``summary`` cell means none.

Import
======

:func:`import_bundle` works in two streaming passes, so memory stays flat as the bundle grows:

1. **check** (:func:`data_plane.bundle_check.check`, also ``kg import --check`` on its own):
   every row is parsed and validated against the graph as it stands, and *every* problem is
   collected (file, line -- 1-based, the header is line 1, a quoted multi-line row is named by
   its first line -- column, kind, why), including prerequisite cycles over the bundle and the
   stored graph and edges to unknown concepts. Only compact int indexes are kept, never rows.
   Any problem refuses the import with one :class:`~data_plane.errors.BundleRejected` carrying
   them all; nothing is written.
2. **write**: the files are read again and their writes go through :meth:`WriteGateway.bulk` in
   bounded batches inside ONE transaction, in ``upsert`` mode: an identical row creates no
   version (reported *unchanged*); a changed row is authoritative from its ``valid_at`` on (the
   whole period when the cell is empty): it supersedes the versions in force from then on, and
   a version that began earlier keeps its earlier part as a version of its own (*kept*).
   What only the gateway can see (an edge that would hold before its concept does, a writer that
   changed the graph since the check, ...) is mapped back to the file and line of the row.

An :class:`~data_plane.bundle_check.ImportPolicy` may set rows aside instead of refusing (see
:mod:`data_plane.bundle_check`); each set-aside row is written as a ``retract`` version of its
own key (never in force, so the graph does not change) whose grounding says why, from which
bundle file and line, with the row's own reason and evidence -- ``kg audit set-aside`` lists
them. With ``invalidate_missing`` every active concept, edge and lesson link absent from the
bundle is closed in the same transaction (retracted instead when it would only become valid
later).

Export
======

:func:`export_bundle` writes every version in force as of an :class:`AsOf` (default now) in the
same format, each row with its full grounding and times. Importing that export into an empty
database reproduces the snapshot's ids, names, aliases, summaries, edges, link grounding and
valid/invalid times (lesson titles too; a lesson's own grounding is taken from its first link).
An alias containing ``|`` cannot be written in this format and is refused.
"""

from __future__ import annotations

import csv
import gc
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa

from data_plane import schema
from data_plane.bundle_check import ImportPolicy, Plan, SetAside, check
from data_plane.bundle_rows import (
    BUNDLE_FORMAT,
    CONCEPT_COLUMNS,
    CONCEPTS,
    EDGE_COLUMNS,
    EDGES,
    GROUNDING_COLUMNS,
    GROUP_COLUMNS,
    GROUPS,
    LINK_COLUMNS,
    LINKS,
    MANIFEST,
    MEMBER_COLUMNS,
    MEMBERS,
    Cells,
    RowFault,
    concept_write,
    csv_writer,
    edge_write,
    escape_cell,
    group_write,
    link_write,
    member_write,
    read_rows,
)
from data_plane.errors import (
    BundleError,
    BundleRejected,
    InactiveEndpoint,
    InputError,
    KGError,
    NotFound,
    PrerequisiteCycle,
    Problem,
    WriteRejected,
)
from data_plane.gateway import KEEP, BatchResult, BulkWriter, RequirementWrite, Write, WriteGateway
from data_plane.reads import DIFF_TABLES, GraphReader
from data_plane.records import Grounding, Version
from data_plane.relations import RELATED, edge_key
from data_plane.rows import version_from_row
from data_plane.temporal import AsOf

__all__ = [
    "BUNDLE_FORMAT",
    "ImportPolicy",
    "ImportReport",
    "TableCounts",
    "check_bundle",
    "export_bundle",
    "import_bundle",
    "set_aside_records",
]

TABLES: Final = DIFF_TABLES  # the graph tables, in the order a report lists them
_IMPORT_SOURCE: Final = "kg import"
BATCH: Final = 5_000
"""Writes per gateway batch: bounds the import's memory whatever the bundle's size."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stages are ``"parse"`` (the check pass) and ``"apply"``
(``done`` writes so far; ``total`` is the number of rows read by the check)."""


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class TableCounts:
    """What an import did to one table."""

    asserted: int = 0
    revised: int = 0
    unchanged: int = 0
    invalidated: int = 0
    set_aside: int = 0
    # Earlier parts of revised versions that a row's period does not cover, recorded again.
    kept: int = 0

    def to_dict(self) -> dict[str, int]:
        out = {
            "asserted": self.asserted,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "invalidated": self.invalidated,
        }
        if self.kept:
            out["kept"] = self.kept
        if self.set_aside:
            out["set_aside"] = self.set_aside
        return out


@dataclass(frozen=True)
class ImportReport:
    """Counts per table of what one import wrote, the rows it set aside, and how long it took."""

    bundle: str
    counts: Mapping[str, TableCounts]
    elapsed_s: float
    set_aside: tuple[SetAside, ...] = ()

    @property
    def new_versions(self) -> int:
        """Versions the import created (0 for a re-import of an unchanged bundle); set-aside
        records are versions too."""
        return sum(
            c.asserted + c.revised + c.kept + c.invalidated + c.set_aside for c in self.counts.values()
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "counts": {t: self.counts[t].to_dict() for t in TABLES if t in self.counts},
            "new_versions": self.new_versions,
            "set_aside": [s.to_dict() for s in self.set_aside],
            "elapsed_s": round(self.elapsed_s, 6),
        }


# ---------------------------------------------------------------------------------------------
# Check and import


def check_bundle(reader: GraphReader, path: str | Path, *, policy: ImportPolicy | None = None) -> Plan:
    """The dry run: check the bundle against the graph ``reader`` sees and write nothing.

    ``plan.ok`` says whether :func:`import_bundle` with the same policy would succeed (unless
    the graph changes first); ``plan.problems`` and ``plan.set_aside`` say what it found.
    """
    return check(path, reader, policy)


def import_bundle(
    gateway: WriteGateway,
    path: str | Path,
    *,
    reader: GraphReader | None = None,
    invalidate_missing: bool = False,
    reason: str | None = None,
    source: str | None = None,
    progress: Progress | None = None,
    policy: ImportPolicy | None = None,
    batch_size: int = BATCH,
) -> ImportReport:
    """Import the bundle at ``path`` in one all-or-nothing transaction (see the module docstring).

    Raises :class:`~data_plane.errors.BundleRejected` listing every problem when the bundle (under
    ``policy``, default: refuse every contradiction) cannot be imported; nothing is written then.
    ``reader`` (default: ``gateway.reader()``, the same database and clock) is what the bundle is
    checked against and, with ``invalidate_missing``, finds what is active but absent from the
    bundle; ``reason`` (required then) and ``source`` (default ``"kg import"``) ground those
    invalidations.
    """
    started = time.perf_counter()
    if invalidate_missing and (reason is None or not reason.strip()):
        raise InputError("invalidate_missing needs a non-empty reason", field="reason", value=reason)
    reader = reader or gateway.reader()
    with _collector_skips_older_objects():
        if progress:
            progress("parse", 0, 1)
        plan = check(path, reader, policy)
        if not plan.ok:
            raise BundleRejected(plan.sorted_problems())
        if progress:
            progress("parse", 1, 1)
        missing: Grounding | None = None
        if invalidate_missing:
            assert reason is not None
            missing = Grounding(
                1.0,
                reason,
                source if source and source.strip() else _IMPORT_SOURCE,
                {"bundle": plan.name, "invalidated_missing": True},
            )
        if not invalidate_missing:
            plan.release_keys()  # only --invalidate-missing needs the bundle's keys from here on
        counts = _Counts()
        total = sum(plan.rows.values())
        with gateway.bulk() as bulk:
            sink = _Batches(bulk, counts, batch_size, progress, total)
            try:
                _write(plan, sink, reader if missing else None, missing, bulk.now)
                sink.flush()
                if progress:
                    progress("apply", sink.done, sink.done)
            except PrerequisiteCycle as exc:
                raise _located_cycle(exc) from exc
        return ImportReport(
            plan.name, counts.tables(), time.perf_counter() - started, tuple(plan.set_asides())
        )


@contextmanager
def _collector_skips_older_objects() -> Iterator[None]:
    """Keep the cyclic garbage collector off the objects that existed before the import.

    An import allocates several container objects per row that live for a batch, so Python's
    full collections run every few batches, and each walked every object of the process (the
    loaded modules alone are ~75,000): 7-15 % of an import's time. Frozen objects are only
    skipped, never freed early or lost; they are handed back to the collector at the end.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _Counts:
    def __init__(self) -> None:
        self.by: dict[str, dict[str, int]] = {
            t: dict.fromkeys(("asserted", "revised", "kept", "unchanged", "invalidated", "set_aside"), 0)
            for t in TABLES
        }

    def add(self, result: BatchResult, set_aside: set[tuple[str, tuple[str, ...]]]) -> None:
        bucket = {
            "assert": "asserted",
            "revise": "revised",
            "invalidate": "invalidated",
            "retract": "invalidated",
        }
        for (table, op), n in result.counts().items():
            self.by[table][bucket.get(op, op)] += n
        # A set-aside record is written as a retraction; count it apart from real invalidations.
        if set_aside:
            for v in result.written:
                if (v.table, v.key) in set_aside and v.stamp.op == "retract":
                    self.by[v.table]["invalidated"] -= 1
                    self.by[v.table]["set_aside"] += 1

    def tables(self) -> dict[str, TableCounts]:
        return {t: TableCounts(**c) for t, c in self.by.items()}


@dataclass
class _Batches:
    """Collects writes with the bundle row each came from, and applies them in bounded batches."""

    bulk: BulkWriter
    counts: _Counts
    size: int
    progress: Progress | None
    total: int
    done: int = 0
    writes: list[Write | RequirementWrite] = field(default_factory=list)
    origins: list[tuple[str, int] | None] = field(default_factory=list)
    set_aside: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)

    def add(
        self, write: Write | RequirementWrite, origin: tuple[str, int] | None, *, set_aside: bool = False
    ) -> None:
        self.writes.append(write)
        self.origins.append(origin)
        if set_aside:
            self.set_aside.add((write.table, write.key))
        if len(self.writes) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.writes:
            return
        if self.progress:
            self.progress("apply", self.done, self.total)
        try:
            result = self.bulk.apply(self.writes)
        except (WriteRejected, NotFound, InputError) as exc:
            raise _locate(exc, self.writes, self.origins) from exc
        self.counts.add(result, self.set_aside)
        self.done += len(self.writes)
        self.writes, self.origins, self.set_aside = [], [], set()


def _write(
    plan: Plan, sink: _Batches, reader: GraphReader | None, missing: Grounding | None, now: Any
) -> None:
    """The second pass: every row's write (or set-aside record), in the order the gateway needs
    (concepts, lessons, edges, lesson links), then the invalidations of what the bundle lacks."""
    cells = Cells(plan.manifest)

    def rows(file: str) -> Iterator[Any]:
        if (plan.folder / file).is_file():
            yield from read_rows(plan.folder, file, _changed, unescape=plan.manifest.formula_escape)

    for row in rows(CONCEPTS):
        sink.add(_parsed(concept_write, row, cells), (CONCEPTS, row.line))
    for lesson_id, lesson in plan.lessons_to_write().items():
        sink.add(lesson.write(lesson_id), None)
    for file, parse in ((EDGES, edge_write), (LINKS, lambda r, c: link_write(r, c)[0])):
        for row in rows(file):
            w = _parsed(parse, row, cells)
            aside = plan.set_aside.get((file, row.line))
            if aside is None:
                sink.add(w, (file, row.line))
                continue
            record = SetAside.record(plan.located(aside), plan.name, w.grounding)
            sink.add(
                Write(w.table, w.key, "set_aside", record, {}, w.valid_at, w.invalid_at),
                (file, row.line),
                set_aside=True,
            )
            pair = plan.related.get(row.line) if file == EDGES else None
            if pair is not None:
                g = w.grounding
                kept = Grounding(
                    g.confidence,
                    f"kept as related: {aside.why.split(';')[0]}; {g.reason}",
                    g.source,
                    g.evidence,
                )
                sink.add(
                    Write.edge(*pair, RELATED, grounding=kept, mode="upsert", valid_at=w.valid_at),
                    (file, row.line),
                )
    for group, line in _requirement_writes(plan, rows, cells):
        sink.add(group, (GROUPS, line))
    if reader is not None and missing is not None:
        for w in _missing_writes(reader, plan, missing, now):
            sink.add(w, None)


def _requirement_writes(
    plan: Plan, rows: Callable[[str], Iterator[Any]], cells: Cells
) -> Iterator[tuple[RequirementWrite, int]]:
    """Each group of ``requirement_groups.csv`` with its rows of ``requirement_members.csv``, as
    one upsert (the group is one statement: a bundle restating it is authoritative for its
    members too). The members are held by group (the groups file is read after them)."""
    members: dict[str, list[Write]] = {}
    for row in rows(MEMBERS):
        m = _parsed(member_write, row, cells)
        members.setdefault(m.key[0], []).append(m)
    for row in rows(GROUPS):
        g = _parsed(group_write, row, cells)
        gid = g.key[0]
        yield (
            RequirementWrite(
                gid,
                g.grounding,
                "upsert",
                target_id=g.content["target_id"],
                needs=g.content["needs"],
                valid_at=g.valid_at,
                invalid_at=g.invalid_at if isinstance(g.invalid_at, datetime) else None,
                members=tuple(members.pop(gid, ())),
            ),
            row.line,
        )


def _changed(problem: Problem) -> None:
    raise BundleRejected(
        [
            Problem(
                problem.kind,
                problem.file,
                problem.line,
                problem.column,
                problem.message + " (the bundle changed during the import)",
            )
        ]
    )


def _parsed(parse: Callable[[Any, Cells], Write], row: Any, cells: Cells) -> Write:
    try:
        return parse(row, cells)
    except RowFault as fault:
        p = row.problem(fault)
        raise BundleRejected(
            [Problem(p.kind, p.file, p.line, p.column, p.message + " (the bundle changed during the import)")]
        ) from fault


def _missing_writes(reader: GraphReader, plan: Plan, g: Grounding, now: Any) -> Iterator[Write]:
    """Close, from now on, every concept, edge and lesson link in force now or later that the
    bundle does not name.

    A key that would only become valid later is retracted instead, since it never held.
    """
    with reader.engine.connect() as conn:
        for name in ("concepts", "concept_edges", "lesson_concepts", "requirement_groups"):
            table = schema.metadata.tables[name]
            keys = [table.c[k] for k in schema.KEY_COLUMNS[name]]
            # Every current version in force (a key may hold over several periods), by key.
            stmt = (
                sa.select(*keys, table.c.valid_at, table.c.invalid_at)
                .where(table.c.expired_at.is_(None), table.c.op != "retract")
                .order_by(*keys)
            )
            found = conn.execution_options(stream_results=True, yield_per=20_000).execute(stmt)
            for k, periods in itertools.groupby(found, key=lambda r: tuple(r[: len(keys)])):
                spans = [(r[-2], r[-1]) for r in periods]
                if all(end is not None and end <= now for _, end in spans) or _in_bundle(plan, name, k):
                    continue
                if min(start for start, _ in spans) < now:
                    yield Write(name, k, "invalidate", g, {}, None, now)
                else:
                    yield Write(name, k, "retract", g, {}, None, KEEP)


def _in_bundle(plan: Plan, table: str, key: tuple[str, ...]) -> bool:
    if table == "requirement_groups":
        return key[0] in plan.group_keys
    if table == "concepts":
        i = plan.ids.get(key[0])
        return i is not None and i in plan.concept_keys
    if table == "concept_edges":
        packed = plan.edge_packed(*key)
        return packed is not None and packed in plan.edge_keys
    packed = plan.link_packed(*key)
    return packed is not None and packed in plan.link_keys


def _describe(table: str, key: tuple[str, ...]) -> str:
    """How the gateway names a key at the start of its messages."""
    if table == "concept_edges":
        return f"edge {edge_key(*key)!r}"
    noun = {
        "concepts": "concept",
        "lessons": "lesson",
        "lesson_concepts": "lesson link",
        "requirement_groups": "requirement",
        "requirement_members": "requirement member",
    }[table]
    return f"{noun} {'/'.join(key)!r}"


def _locate(
    exc: KGError, writes: Sequence[Write | RequirementWrite], origins: Sequence[tuple[str, int] | None]
) -> BundleRejected:
    """Name the bundle row behind a gateway refusal of one batch."""
    message = str(exc)
    for w, origin in zip(writes, origins, strict=True):
        if origin is None or not message.startswith(_describe(w.table, w.key)):
            continue
        column = getattr(exc, "field", None)
        if isinstance(exc, InactiveEndpoint) and w.table == "concept_edges":
            column = "source_id" if w.key[0] == getattr(exc, "value", None) else "target_id"
        return BundleRejected([Problem("refused", origin[0], origin[1], column, message)])
    return BundleRejected([Problem("refused", "bundle", None, None, message)])


def _located_cycle(exc: PrerequisiteCycle) -> BundleRejected:
    """The final cycle check found a cycle the check pass did not: the graph changed in between."""
    return BundleRejected(
        [
            Problem(
                "cycle", EDGES, None, None, f"{exc} (the graph changed since the check; run the import again)"
            )
        ]
    )


# ---------------------------------------------------------------------------------------------
# Audit


def set_aside_records(reader: GraphReader, *, since: datetime | None = None) -> list[Version]:
    """Every set-aside record an import wrote (edges and lesson links), oldest first.

    A record stays listed after a later import supersedes it (its ``expired_at`` says when).
    """
    out: list[Version] = []
    with reader.engine.connect() as conn:
        for name in ("concept_edges", "lesson_concepts"):
            table = schema.metadata.tables[name]
            stmt = sa.select(table).where(table.c.op == "retract")
            if since is not None:
                stmt = stmt.where(table.c.recorded_at >= since)
            for row in conn.execute(stmt).mappings():
                evidence = row["evidence"]
                if isinstance(evidence, dict) and "set_aside" in evidence:
                    out.append(version_from_row(name, row))
    return sorted(out, key=lambda v: (v.stamp.recorded_at, v.table, v.stamp.version_id))


# ---------------------------------------------------------------------------------------------
# Export


def export_bundle(
    reader: GraphReader,
    path: str | Path,
    *,
    as_of: AsOf | None = None,
    name: str = "kg-export",
    description: str | None = None,
    formula_escape: bool = True,
) -> dict[str, int]:
    """Write everything in force as of ``as_of`` (default now) as a bundle folder; return row counts.

    Rows are streamed from the database straight into the CSV files, so memory does not grow
    with the graph (only lesson titles are held: one per lesson). With ``formula_escape`` (the
    default) a cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first)
    is written with a leading apostrophe, and the manifest says so, so that an import reads every
    cell back unchanged (see :func:`~data_plane.bundle_rows.escape_cell`). A cell longer than the
    CSV field limit could not be read back, so it is refused (nothing is left behind)."""
    as_of = as_of or reader.as_of()
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"format": BUNDLE_FORMAT, "name": name}
    if description is not None:
        manifest["description"] = description
    manifest["defaults"] = {}
    manifest["exported_as_of"] = as_of.to_dict()
    if formula_escape:
        manifest["formula_escape"] = True

    g = GROUNDING_COLUMNS

    def concept_rows() -> Iterator[Sequence[Any]]:
        for cid, cname, aliases, summary, *cells in reader.stream_rows(
            "concepts", ("concept_id", "name", "aliases", "summary", *g), as_of
        ):
            bad = [a for a in aliases or () if "|" in a]
            if bad:
                raise BundleError(
                    f"concept {cid!r}: alias {bad[0]!r} contains '|', which the format uses as separator",
                    file=CONCEPTS,
                    column="aliases",
                )
            yield (cid, cname, "|".join(aliases or ()), summary, *_grounding_cells(*cells))

    titles = {lid: str(title) for lid, title in reader.stream_rows("lessons", ("lesson_id", "title"), as_of)}
    lessons: set[str] = set()

    def link_rows() -> Iterator[Sequence[Any]]:
        for lid, cid, *cells in reader.stream_rows("lesson_concepts", ("lesson_id", "concept_id", *g), as_of):
            lessons.add(lid)
            yield (lid, titles.get(lid, lid), cid, *_grounding_cells(*cells))

    spans: dict[str, tuple[datetime, datetime | None]] = {}

    def group_rows() -> Iterator[Sequence[Any]]:
        for gid, target, needs, *cells in reader.stream_rows(
            "requirement_groups", ("group_id", "target_id", "needs", *g), as_of
        ):
            spans[gid] = (cells[4], cells[5])
            yield (gid, target, str(needs), *_grounding_cells(*cells))

    def member_rows() -> Iterator[Sequence[Any]]:
        # A member is written within its group's version in force (a member kept across a
        # revision of the group began before it): the export is a snapshot, and the bundle it
        # makes imports with every member inside its group.
        for gid, option, cid, *cells in reader.stream_rows(
            "requirement_members", ("group_id", "option", "concept_id", *g), as_of
        ):
            start, end = spans[gid]
            cells[4] = max(cells[4], start)
            cells[5] = end if cells[5] is None else cells[5] if end is None else min(cells[5], end)
            yield (gid, option, cid, *_grounding_cells(*cells))

    # Each file is written under a temporary name and renamed once all are complete: a
    # refusal half-way (an alias the format cannot hold) leaves no partial bundle behind. The
    # requirement files are written only when the graph holds a group.
    files = (MANIFEST, CONCEPTS, EDGES, LINKS, GROUPS, MEMBERS)
    partial = {f: folder / f"{f}.partial" for f in files}
    try:
        partial[MANIFEST].write_text(
            json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        counts = {
            "concepts": _write_csv(partial[CONCEPTS], CONCEPT_COLUMNS, concept_rows(), formula_escape),
            "concept_edges": _write_csv(
                partial[EDGES],
                EDGE_COLUMNS,
                (
                    (s, t, r, *_grounding_cells(*cells))
                    for s, t, r, *cells in reader.stream_rows(
                        "concept_edges", ("source_id", "target_id", "relation", *g), as_of
                    )
                ),
                formula_escape,
            ),
            "lesson_concepts": _write_csv(partial[LINKS], LINK_COLUMNS, link_rows(), formula_escape),
            "requirement_groups": _write_csv(partial[GROUPS], GROUP_COLUMNS, group_rows(), formula_escape),
            "requirement_members": _write_csv(
                partial[MEMBERS], MEMBER_COLUMNS, member_rows(), formula_escape
            ),
        }
    except BaseException:
        for written in partial.values():
            written.unlink(missing_ok=True)
        raise
    grouped = counts["requirement_groups"] > 0
    for fname in files:
        if fname in (GROUPS, MEMBERS) and not grouped:
            partial[fname].unlink()
            (folder / fname).unlink(missing_ok=True)
            continue
        partial[fname].replace(folder / fname)
    out = {
        "concepts": counts["concepts"],
        "concept_edges": counts["concept_edges"],
        "lessons": len(lessons),
        "lesson_concepts": counts["lesson_concepts"],
    }
    if grouped:
        out["requirement_groups"] = counts["requirement_groups"]
        out["requirement_members"] = counts["requirement_members"]
    return out


def _grounding_cells(
    confidence: float,
    reason: str,
    source: str,
    evidence: Any,
    valid_at: datetime,
    invalid_at: datetime | None,
) -> tuple[str, ...]:
    return (
        repr(float(confidence)),
        reason,
        source,
        json.dumps(evidence, ensure_ascii=False),
        _cell_time(valid_at),
        _cell_time(invalid_at),
    )


def _cell_time(t: datetime | None) -> str:
    # format_time's text for the aware-UTC stamps the database returns, without re-checking them.
    return "" if t is None else t.isoformat().replace("+00:00", "Z")


def _write_csv(file: Path, header: Sequence[str], rows: Iterable[Sequence[Any]], escape: bool) -> int:
    """Write ``rows`` as they come (cells escaped with ``escape``); return how many were written."""
    n = 0
    limit = csv.field_size_limit()
    with file.open("w", encoding="utf-8", newline="") as fh:
        writer = csv_writer(fh)
        writer.writerow(header)
        for row in rows:
            cells = [escape_cell(c) if escape else c for c in row]
            for column, cell in zip(header, cells, strict=False):
                if len(cell) > limit:
                    raise BundleError(
                        f"{row[0]!r}: the {column} is {len(cell):,} characters long, over the CSV field "
                        f"limit of {limit:,}; a bundle could not be read back",
                        file=file.name.removesuffix(".partial"),
                        column=column,
                    )
            writer.writerow(cells)
            n += 1
    return n
