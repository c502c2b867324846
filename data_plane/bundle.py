"""Graph bundles: move a whole curriculum graph in and out as a folder of CSV files.

Format ``kg-bundle/1``
======================

A bundle is a folder holding:

``manifest.json`` (required)
    ``{"format": "kg-bundle/1", "name": str, "description"?: str,
    "defaults"?: {"source", "reason", "confidence", "evidence", "valid_at"}}``. Every default is
    optional; a default fills the cell of a row that leaves the column out or empty. ``evidence``
    is any non-empty JSON value, ``valid_at`` an ISO 8601 text. An export adds
    ``"exported_as_of": {"valid_at", "recorded_at"}``.

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

:func:`import_bundle` first parses and validates everything (pure: texts in, :class:`Write`\\ s
out); every problem is a :class:`~data_plane.errors.BundleError` naming the file, the line
(1-based, the header is line 1, a quoted multi-line row is named by its first line) and the
column. Then all writes go through :meth:`WriteGateway.apply` in ONE transaction, in ``upsert``
mode: an identical row creates no version (reported *unchanged*), a changed row becomes a new
version superseding the old one. What only the gateway can see (an edge to an unknown concept, a
prerequisite cycle, ...) is mapped back to the file and line of the row that caused it. With
``invalidate_missing`` every active concept, edge and lesson link absent from the bundle is closed
in the same transaction (retracted instead when it would only become valid later).

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
import io
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa

from data_plane import schema
from data_plane.clock import format_time, parse_time
from data_plane.errors import (
    BundleError,
    GroundingRejected,
    InactiveEndpoint,
    InputError,
    KGError,
    NotFound,
    PrerequisiteCycle,
    WriteRejected,
)
from data_plane.gateway import KEEP, BatchResult, Write, WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import Grounding
from data_plane.relations import PREREQUISITE, RELATIONS, canonical_edge, edge_key
from data_plane.temporal import AsOf

__all__ = [
    "BUNDLE_FORMAT",
    "ImportReport",
    "ParsedBundle",
    "TableCounts",
    "export_bundle",
    "import_bundle",
    "parse_bundle",
    "read_bundle",
]

BUNDLE_FORMAT: Final = "kg-bundle/1"
MANIFEST: Final = "manifest.json"
CONCEPTS: Final = "concepts.csv"
EDGES: Final = "concept_edges.csv"
LINKS: Final = "lesson_concepts.csv"
TABLES: Final = ("concepts", "concept_edges", "lessons", "lesson_concepts")

GROUNDING_COLUMNS: Final = ("confidence", "reason", "source", "evidence", "valid_at", "invalid_at")
CONCEPT_COLUMNS: Final = ("id", "name", "aliases", "summary", *GROUNDING_COLUMNS)
EDGE_COLUMNS: Final = ("source_id", "target_id", "relation", *GROUNDING_COLUMNS)
LINK_COLUMNS: Final = ("lesson_id", "lesson_title", "concept_id", *GROUNDING_COLUMNS)
_REQUIRED: Final = {
    CONCEPTS: ("id", "name"),
    EDGES: ("source_id", "target_id", "relation"),
    LINKS: ("lesson_id", "concept_id"),
}
_DEFAULT_KEYS: Final = ("source", "reason", "confidence", "evidence", "valid_at")
_IMPORT_SOURCE: Final = "kg import"

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stages are ``"parse"`` (files) and ``"apply"`` (writes)."""

Origin = tuple[str, int]  # (file, line)
WriteKey = tuple[str, tuple[str, ...]]  # (table, key)


# ---------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class TableCounts:
    """What an import did to one table."""

    asserted: int = 0
    revised: int = 0
    unchanged: int = 0
    invalidated: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "asserted": self.asserted,
            "revised": self.revised,
            "unchanged": self.unchanged,
            "invalidated": self.invalidated,
        }


@dataclass(frozen=True)
class ImportReport:
    """Counts per table of what one import wrote, and how long it took."""

    bundle: str
    counts: Mapping[str, TableCounts]
    elapsed_s: float

    @property
    def new_versions(self) -> int:
        """Versions the import created (0 for a re-import of an unchanged bundle)."""
        return sum(c.asserted + c.revised + c.invalidated for c in self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": self.bundle,
            "counts": {t: self.counts[t].to_dict() for t in TABLES if t in self.counts},
            "new_versions": self.new_versions,
            "elapsed_s": round(self.elapsed_s, 6),
        }


@dataclass(frozen=True)
class ParsedBundle:
    """A validated bundle: its writes (concepts, lessons, edges, links) and where each came from."""

    name: str
    writes: tuple[Write, ...]
    origins: Mapping[WriteKey, Origin] = field(repr=False)


# ---------------------------------------------------------------------------------------------
# Reading files (the only I/O of the parser)


def read_bundle(path: str | Path) -> dict[str, str]:
    """The texts of a bundle's files by file name (optional files absent), decoded as UTF-8."""
    folder = Path(path)
    if not folder.is_dir():
        raise BundleError(f"not a bundle folder: {folder}", file=str(folder))
    texts: dict[str, str] = {}
    for name in (MANIFEST, CONCEPTS, EDGES, LINKS):
        file = folder / name
        if not file.is_file():
            if name in (MANIFEST, CONCEPTS):
                raise BundleError(f"required file is missing from {folder}", file=name)
            continue
        texts[name] = _decode(file.read_bytes(), name)
    return texts


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BundleError(
            f"is not UTF-8 (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); save it as UTF-8",
            file=name,
            line=line,
        ) from exc


# ---------------------------------------------------------------------------------------------
# Pure parsing: texts in, writes out


@dataclass
class _Cells:
    """Shared parsing state: manifest defaults and caches of repeated cell values."""

    defaults: dict[str, Any]
    times: dict[str, datetime] = field(default_factory=dict)
    groundings: dict[tuple[str, str, str, str], Grounding] = field(default_factory=dict)


def parse_bundle(texts: Mapping[str, str]) -> ParsedBundle:
    """Validate a bundle's texts (see :func:`read_bundle`) into writes; raise BundleError on any fault."""
    name, defaults = _parse_manifest(texts[MANIFEST])
    cells = _Cells(defaults)
    origins: dict[WriteKey, Origin] = {}
    writes = _parse_concepts(texts[CONCEPTS], cells, origins)
    edges = _parse_edges(texts[EDGES], cells, origins) if EDGES in texts else []
    lessons, links = _parse_links(texts[LINKS], cells, origins) if LINKS in texts else ([], [])
    return ParsedBundle(name, (*writes, *lessons, *edges, *links), origins)


def _parse_manifest(text: str) -> tuple[str, dict[str, Any]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(f"not valid JSON: {exc.msg}", file=MANIFEST, line=exc.lineno) from exc
    if not isinstance(doc, dict):
        raise BundleError("must be a JSON object", file=MANIFEST, line=1)
    if doc.get("format") != BUNDLE_FORMAT:
        raise BundleError(
            f"format must be {BUNDLE_FORMAT!r}, got {doc.get('format')!r}", file=MANIFEST, column="format"
        )
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise BundleError("name must be non-empty text", file=MANIFEST, column="name")
    raw = doc.get("defaults", {})
    if not isinstance(raw, dict):
        raise BundleError("defaults must be a JSON object", file=MANIFEST, column="defaults")
    defaults: dict[str, Any] = {}
    for key in _DEFAULT_KEYS:
        if key not in raw or raw[key] is None:
            continue
        value, column = raw[key], f"defaults.{key}"
        if key == "confidence":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise BundleError(f"must be a number in [0, 1], got {value!r}", file=MANIFEST, column=column)
            _check_confidence(float(value), file=MANIFEST, line=None, column=column)
            value = float(value)
        elif key in ("reason", "source"):
            if not isinstance(value, str) or not value.strip():
                raise BundleError(f"must be non-empty text, got {value!r}", file=MANIFEST, column=column)
        elif key == "evidence":
            if not _non_empty_json(value):
                raise BundleError(f"must be non-empty JSON, got {value!r}", file=MANIFEST, column=column)
        else:
            if not isinstance(value, str):
                raise BundleError(f"must be an ISO 8601 text, got {value!r}", file=MANIFEST, column=column)
            value = _time(value, file=MANIFEST, line=None, column=column)
        defaults[key] = value
    return name.strip(), defaults


def _non_empty_json(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return bool(value)
    return True


def _check_confidence(value: float, *, file: str, line: int | None, column: str) -> None:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise BundleError(f"confidence must be in [0, 1], got {value!r}", file=file, line=line, column=column)


def _time(text: str, *, file: str, line: int | None, column: str) -> datetime:
    try:
        return parse_time(text, field=column)
    except InputError as exc:
        raise BundleError(str(exc), file=file, line=line, column=column) from exc


class _Row:
    """One CSV record with its line, read through the header's column positions."""

    __slots__ = ("cells", "file", "index", "line")

    def __init__(self, file: str, line: int, cells: list[str], index: Mapping[str, int]) -> None:
        self.file, self.line, self.cells, self.index = file, line, cells, index

    def get(self, column: str) -> str:
        i = self.index.get(column)
        return self.cells[i] if i is not None and i < len(self.cells) else ""

    def ident(self, column: str) -> str:
        value = self.get(column).strip()
        if not value:
            raise self.error(f"{column} must not be empty", column)
        return value

    def error(self, message: str, column: str | None = None) -> BundleError:
        return BundleError(message, file=self.file, line=self.line, column=column)


def _rows(text: str, file: str) -> Iterator[_Row]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise BundleError("is empty; it needs a header row", file=file, line=1)
        columns = [h.strip() for h in header]
        index: dict[str, int] = {}
        for i, column in enumerate(columns):
            if column in index:
                raise BundleError("column appears twice in the header", file=file, line=1, column=column)
            index[column] = i
        for column in _REQUIRED[file]:
            if column not in index:
                raise BundleError("required column is missing", file=file, line=1, column=column)
        last = reader.line_num
        for cells in reader:
            line, last = last + 1, reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) > len(columns):
                raise BundleError(
                    f"row has {len(cells)} cells but the header has {len(columns)} columns "
                    "(quote cells that contain commas)",
                    file=file,
                    line=line,
                )
            yield _Row(file, line, cells, index)
    except csv.Error as exc:
        raise BundleError(f"malformed CSV: {exc}", file=file, line=reader.line_num) from exc


def _grounding(row: _Row, cells: _Cells) -> Grounding:
    raw = (
        row.get("confidence").strip(),
        row.get("reason"),
        row.get("source"),
        row.get("evidence").strip(),
    )
    cached = cells.groundings.get(raw)
    if cached is not None:
        return cached
    conf_text, reason, source, evidence_text = raw
    d = cells.defaults
    confidence: float
    if conf_text:
        try:
            confidence = float(conf_text)
        except ValueError:
            raise row.error(
                f"confidence must be a number in [0, 1], got {conf_text!r}", "confidence"
            ) from None
        _check_confidence(confidence, file=row.file, line=row.line, column="confidence")
    elif "confidence" in d:
        confidence = d["confidence"]
    else:
        raise row.error(f"confidence is empty and {MANIFEST} has no default", "confidence")
    texts: dict[str, str] = {}
    for column, value in (("reason", reason), ("source", source)):
        if value.strip():
            texts[column] = value
        elif column in d:
            texts[column] = d[column]
        else:
            raise row.error(f"{column} is empty and {MANIFEST} has no default", column)
    evidence: Any
    if evidence_text:
        try:
            evidence = json.loads(evidence_text)
        except json.JSONDecodeError as exc:
            raise row.error(f"evidence is not valid JSON ({exc.msg})", "evidence") from None
        if not _non_empty_json(evidence):
            raise row.error(f"evidence must be non-empty JSON, got {evidence_text!r}", "evidence")
    elif "evidence" in d:
        evidence = d["evidence"]
    else:
        raise row.error(f"evidence is empty and {MANIFEST} has no default", "evidence")
    try:
        g = Grounding(confidence, texts["reason"], texts["source"], evidence)
    except GroundingRejected as exc:
        raise row.error(str(exc), exc.field) from exc
    cells.groundings[raw] = g
    return g


def _times(row: _Row, cells: _Cells) -> tuple[datetime | None, datetime | None]:
    out: list[datetime | None] = []
    for column in ("valid_at", "invalid_at"):
        text = row.get(column).strip()
        if not text:
            out.append(cells.defaults.get("valid_at") if column == "valid_at" else None)
            continue
        t = cells.times.get(text)
        if t is None:
            t = cells.times[text] = _time(text, file=row.file, line=row.line, column=column)
        out.append(t)
    valid_at, invalid_at = out
    if valid_at is not None and invalid_at is not None and invalid_at <= valid_at:
        raise row.error(
            f"invalid_at {format_time(invalid_at)} must be after valid_at {format_time(valid_at)}",
            "invalid_at",
        )
    return valid_at, invalid_at


def _claim(origins: dict[WriteKey, Origin], key: WriteKey, row: _Row, column: str, what: str) -> None:
    first = origins.get(key)
    if first is not None:
        raise row.error(f"duplicate {what}; first given on line {first[1]}", column)
    origins[key] = (row.file, row.line)


def _parse_concepts(text: str, cells: _Cells, origins: dict[WriteKey, Origin]) -> list[Write]:
    writes: list[Write] = []
    for row in _rows(text, CONCEPTS):
        cid = row.ident("id")
        name = row.get("name")
        if not name.strip():
            raise row.error("name must not be empty", "name")
        aliases = [a.strip() for a in row.get("aliases").split("|") if a.strip()]
        valid_at, invalid_at = _times(row, cells)
        _claim(origins, ("concepts", (cid,)), row, "id", f"concept id {cid!r}")
        writes.append(
            Write.concept(
                cid,
                grounding=_grounding(row, cells),
                mode="upsert",
                name=name,
                aliases=aliases,
                summary=row.get("summary"),
                valid_at=valid_at,
                invalid_at=invalid_at,
            )
        )
    return writes


def _parse_edges(text: str, cells: _Cells, origins: dict[WriteKey, Origin]) -> list[Write]:
    writes: list[Write] = []
    for row in _rows(text, EDGES):
        source_id, target_id = row.ident("source_id"), row.ident("target_id")
        relation = row.ident("relation")
        if relation not in RELATIONS:
            raise row.error(
                f"unknown relation {relation!r}; expected one of {', '.join(RELATIONS)}", "relation"
            )
        if source_id == target_id:
            raise row.error(f"an edge may not connect {source_id!r} to itself", "target_id")
        key = canonical_edge(source_id, target_id, relation)
        valid_at, invalid_at = _times(row, cells)
        _claim(origins, ("concept_edges", key), row, "target_id", f"edge {edge_key(*key)!r}")
        writes.append(
            Write.edge(
                *key,
                grounding=_grounding(row, cells),
                mode="upsert",
                valid_at=valid_at,
                invalid_at=invalid_at,
            )
        )
    return writes


def _parse_links(
    text: str, cells: _Cells, origins: dict[WriteKey, Origin]
) -> tuple[list[Write], list[Write]]:
    links: list[Write] = []
    lessons: dict[str, _Lesson] = {}
    for row in _rows(text, LINKS):
        lesson_id, concept_id = row.ident("lesson_id"), row.ident("concept_id")
        title = row.get("lesson_title")
        valid_at, invalid_at = _times(row, cells)
        g = _grounding(row, cells)
        _claim(origins, ("lesson_concepts", (lesson_id, concept_id)), row, "concept_id", "lesson link")
        lesson = lessons.get(lesson_id)
        if lesson is None:
            lesson = lessons[lesson_id] = _Lesson()
            origins[("lessons", (lesson_id,))] = (row.file, row.line)
        lesson.add(row, title, concept_id, g, valid_at)
        links.append(
            Write.lesson_link(
                lesson_id, concept_id, grounding=g, mode="upsert", valid_at=valid_at, invalid_at=invalid_at
            )
        )
    lesson_writes = [lesson.write(lesson_id) for lesson_id, lesson in lessons.items()]
    return lesson_writes, links


@dataclass
class _Lesson:
    """A lesson gathered from its link rows.

    Its grounding is that of its earliest-valid link (ties: smallest concept id), so it does not
    depend on row order and an export re-imports without change.
    """

    title: str | None = None
    title_line: int = 0
    grounding: Grounding | None = None
    rank: tuple[datetime, str] | None = None
    valid_at: datetime | None = None
    all_timed: bool = True

    def add(self, row: _Row, title: str, concept_id: str, g: Grounding, valid_at: datetime | None) -> None:
        if title.strip():
            if self.title is None:
                self.title, self.title_line = title, row.line
            elif self.title != title:
                raise row.error(
                    f"the lesson has title {self.title!r} on line {self.title_line}, {title!r} here",
                    "lesson_title",
                )
        rank = (valid_at or datetime.max.replace(tzinfo=UTC), concept_id)
        if self.rank is None or rank < self.rank:
            self.rank, self.grounding = rank, g
        if valid_at is None:
            self.all_timed = False
        elif self.valid_at is None or valid_at < self.valid_at:
            self.valid_at = valid_at

    def write(self, lesson_id: str) -> Write:
        assert self.grounding is not None
        return Write.lesson(
            lesson_id,
            grounding=self.grounding,
            title=lesson_id if self.title is None else self.title,
            mode="upsert",
            valid_at=self.valid_at if self.all_timed else None,
        )


# ---------------------------------------------------------------------------------------------
# Import


def import_bundle(
    gateway: WriteGateway,
    path: str | Path,
    *,
    reader: GraphReader | None = None,
    invalidate_missing: bool = False,
    reason: str | None = None,
    source: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import the bundle at ``path`` in one all-or-nothing transaction (see the module docstring).

    With ``invalidate_missing``, ``reader`` (default: ``gateway.reader()``, the same database and
    clock) finds what is active but absent from the bundle; ``reason`` (required then) and
    ``source`` (default ``"kg import"``) ground those invalidations.
    """
    started = time.perf_counter()
    if invalidate_missing and (reason is None or not reason.strip()):
        raise InputError("invalidate_missing needs a non-empty reason", field="reason", value=reason)
    texts = read_bundle(path)
    if progress:
        progress("parse", 0, 1)
    parsed = parse_bundle(texts)
    if progress:
        progress("parse", 1, 1)
    writes = list(parsed.writes)
    if invalidate_missing:
        assert reason is not None
        reader = reader or gateway.reader()
        g = Grounding(
            1.0,
            reason,
            source if source and source.strip() else _IMPORT_SOURCE,
            {"bundle": parsed.name, "invalidated_missing": True},
        )
        writes += _missing_writes(reader, parsed, g)
    if progress:
        progress("apply", 0, len(writes))
    try:
        result = gateway.apply(writes)
    except (WriteRejected, NotFound, InputError) as exc:
        raise _locate(exc, parsed) from exc
    if progress:
        progress("apply", len(writes), len(writes))
    return ImportReport(parsed.name, _count(result), time.perf_counter() - started)


def _missing_writes(reader: GraphReader, parsed: ParsedBundle, g: Grounding) -> list[Write]:
    """Close every active concept, edge and lesson link the bundle does not name.

    Closed as of the reader's now; a version that only becomes valid later is retracted instead,
    since it never held.
    """
    now = reader.as_of().valid_at
    out: list[Write] = []
    with reader.engine.connect() as conn:
        for name in ("concepts", "concept_edges", "lesson_concepts"):
            table = schema.metadata.tables[name]
            keys = [table.c[k] for k in schema.KEY_COLUMNS[name]]
            stmt = (
                sa.select(*keys, table.c.valid_at)
                .where(
                    table.c.expired_at.is_(None),
                    table.c.op != "retract",
                    sa.or_(table.c.invalid_at.is_(None), table.c.invalid_at > now),
                )
                .order_by(*keys)
            )
            for *key, valid_at in conn.execute(stmt):
                k = tuple(key)
                if (name, k) in parsed.origins:
                    continue
                if valid_at < now:
                    out.append(Write(name, k, "invalidate", g, {}, None, now))
                else:
                    out.append(Write(name, k, "retract", g, {}, None, KEEP))
    return out


def _count(result: BatchResult) -> dict[str, TableCounts]:
    counts = {t: dict.fromkeys(("asserted", "revised", "unchanged", "invalidated"), 0) for t in TABLES}
    bucket = {
        "assert": "asserted",
        "revise": "revised",
        "invalidate": "invalidated",
        "retract": "invalidated",
    }
    for (table, op), n in result.counts().items():
        counts[table][bucket.get(op, op)] += n
    return {t: TableCounts(**c) for t, c in counts.items()}


def _describe(table: str, key: tuple[str, ...]) -> str:
    """How the gateway names a key at the start of its messages."""
    if table == "concept_edges":
        return f"edge {edge_key(*key)!r}"
    noun = {"concepts": "concept", "lessons": "lesson", "lesson_concepts": "lesson link"}[table]
    return f"{noun} {'/'.join(key)!r}"


def _locate(exc: KGError, parsed: ParsedBundle) -> BundleError:
    """Name the bundle row behind a gateway refusal (or just the bundle when no row is to blame)."""
    origins = parsed.origins
    if isinstance(exc, PrerequisiteCycle):
        steps = set(zip(exc.cycle, exc.cycle[1:], strict=False))
        on_cycle = [
            origins[("concept_edges", (s, t, PREREQUISITE))]
            for s, t in steps
            if ("concept_edges", (s, t, PREREQUISITE)) in origins
        ]
        if on_cycle:
            file, line = max(on_cycle, key=lambda o: o[1])
            return BundleError(str(exc), file=file, line=line, column="target_id")
    message = str(exc)
    for (table, key), (file, line) in origins.items():
        if not message.startswith(_describe(table, key)):
            continue
        column = getattr(exc, "field", None)
        if isinstance(exc, InactiveEndpoint):
            value = getattr(exc, "value", None)
            if table == "concept_edges":
                column = "source_id" if key[0] == value else "target_id"
        return BundleError(message, file=file, line=line, column=column)
    return BundleError(message, file=str(parsed.name))


# ---------------------------------------------------------------------------------------------
# Export


def export_bundle(
    reader: GraphReader,
    path: str | Path,
    *,
    as_of: AsOf | None = None,
    name: str = "kg-export",
    description: str | None = None,
) -> dict[str, int]:
    """Write everything in force as of ``as_of`` (default now) as a bundle folder; return row counts.

    Rows are streamed from the database straight into the CSV files, so memory does not grow
    with the graph (only lesson titles are held: one per lesson)."""
    as_of = as_of or reader.as_of()
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"format": BUNDLE_FORMAT, "name": name}
    if description is not None:
        manifest["description"] = description
    manifest["defaults"] = {}
    manifest["exported_as_of"] = as_of.to_dict()

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

    # Each file is written under a temporary name and renamed once all are complete: a
    # refusal half-way (an alias the format cannot hold) leaves no partial bundle behind.
    files = (MANIFEST, CONCEPTS, EDGES, LINKS)
    partial = {f: folder / f"{f}.partial" for f in files}
    try:
        partial[MANIFEST].write_text(
            json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        counts = {
            "concepts": _write_csv(partial[CONCEPTS], CONCEPT_COLUMNS, concept_rows()),
            "concept_edges": _write_csv(
                partial[EDGES],
                EDGE_COLUMNS,
                (
                    (s, t, r, *_grounding_cells(*cells))
                    for s, t, r, *cells in reader.stream_rows(
                        "concept_edges", ("source_id", "target_id", "relation", *g), as_of
                    )
                ),
            ),
            "lesson_concepts": _write_csv(partial[LINKS], LINK_COLUMNS, link_rows()),
        }
    except BaseException:
        for written in partial.values():
            written.unlink(missing_ok=True)
        raise
    for fname in files:
        partial[fname].replace(folder / fname)
    return {
        "concepts": counts["concepts"],
        "concept_edges": counts["concept_edges"],
        "lessons": len(lessons),
        "lesson_concepts": counts["lesson_concepts"],
    }


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


def _write_csv(file: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Write ``rows`` as they come; return how many were written."""
    n = 0
    with file.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            n += 1
    return n
