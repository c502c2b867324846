"""Reading a bundle's files as a stream of rows, and turning one row into one :class:`Write`.

Nothing here holds a whole file: :func:`read_rows` yields one CSV record at a time (its first
line, its cells), and the row parsers (:func:`concept_write`, :func:`edge_write`,
:func:`link_write`) are pure functions of one row and the manifest's defaults. A fault in a row
is a :class:`RowFault` (kind, column, message); the caller decides whether to collect it (the
validator, which reports every problem) or stop.

Files are read as UTF-8 with ``surrogateescape``, so a byte that is not UTF-8 does not stop the
reader: the cell holding it is reported (file, line, column) and the rest is still checked.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, TextIO

from data_plane.clock import format_time, parse_time
from data_plane.errors import GroundingRejected, InputError, Problem
from data_plane.gateway import Write
from data_plane.names import confusable
from data_plane.records import Grounding, id_fault, name_fault, text_fault
from data_plane.relations import RELATIONS, canonical_edge

__all__ = [
    "BUNDLE_FORMAT",
    "CONCEPTS",
    "EDGES",
    "GROUPS",
    "LINKS",
    "MANIFEST",
    "MEMBERS",
    "Cells",
    "Manifest",
    "Row",
    "RowFault",
    "concept_write",
    "edge_write",
    "escape_cell",
    "group_write",
    "link_write",
    "member_write",
    "read_manifest",
    "read_rows",
    "unescape_cell",
]

BUNDLE_FORMAT: Final = "kg-bundle/1"
MANIFEST: Final = "manifest.json"
CONCEPTS: Final = "concepts.csv"
EDGES: Final = "concept_edges.csv"
LINKS: Final = "lesson_concepts.csv"
GROUPS: Final = "requirement_groups.csv"
MEMBERS: Final = "requirement_members.csv"

GROUNDING_COLUMNS: Final = ("confidence", "reason", "source", "evidence", "valid_at", "invalid_at")
CONCEPT_COLUMNS: Final = ("id", "name", "aliases", "summary", *GROUNDING_COLUMNS)
EDGE_COLUMNS: Final = ("source_id", "target_id", "relation", *GROUNDING_COLUMNS)
LINK_COLUMNS: Final = ("lesson_id", "lesson_title", "concept_id", *GROUNDING_COLUMNS)
GROUP_COLUMNS: Final = ("group_id", "target_id", "needs", *GROUNDING_COLUMNS)
MEMBER_COLUMNS: Final = ("group_id", "option", "concept_id", *GROUNDING_COLUMNS)
REQUIRED: Final = {
    CONCEPTS: ("id", "name"),
    EDGES: ("source_id", "target_id", "relation"),
    LINKS: ("lesson_id", "concept_id"),
    GROUPS: ("group_id", "target_id", "needs"),
    MEMBERS: ("group_id", "option", "concept_id"),
}
_DEFAULT_KEYS: Final = ("source", "reason", "confidence", "evidence", "valid_at")

Sink = Callable[[Problem], None]
_UNSEEN: Final = object()


class RowFault(Exception):
    """One fault in one row (raised by the row parsers, turned into a Problem by the caller)."""

    def __init__(self, kind: str, message: str, column: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.message, self.column = kind, message, column


# ---------------------------------------------------------------------------------------------
# The manifest


@dataclass
class Manifest:
    """A bundle's name and defaults; ``complete`` is False when the manifest itself was faulty
    (then a row missing a grounding cell is not blamed on the row)."""

    name: str
    defaults: dict[str, Any]
    complete: bool = True
    # Cells were written with formula_escape (see escape_cell); reading removes it.
    formula_escape: bool = False


def read_manifest(folder: Path, sink: Sink) -> Manifest:
    """Parse ``manifest.json``, reporting every fault in it to ``sink``."""
    fallback = Manifest(folder.name or "bundle", {}, complete=False)
    file = folder / MANIFEST
    if not file.is_file():
        sink(Problem("file", MANIFEST, None, None, f"required file is missing from {folder}"))
        return fallback
    data = file.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        sink(_encoding_problem(MANIFEST, data.count(b"\n", 0, exc.start) + 1, None, data[exc.start :]))
        return fallback
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        sink(Problem("manifest", MANIFEST, exc.lineno, None, f"not valid JSON: {exc.msg}"))
        return fallback
    if not isinstance(doc, dict):
        sink(Problem("manifest", MANIFEST, 1, None, "must be a JSON object"))
        return fallback
    ok = True

    def bad(column: str, message: str) -> None:
        nonlocal ok
        ok = False
        sink(Problem("manifest", MANIFEST, None, column, message))

    if doc.get("format") != BUNDLE_FORMAT:
        bad("format", f"format must be {BUNDLE_FORMAT!r}, got {doc.get('format')!r}")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        bad("name", "name must be non-empty text")
        name = fallback.name
    elif (fault := text_fault(name)) is not None:
        bad("name", f"name {fault} (it is written into the grounding of what the import records)")
        name = fallback.name
    raw = doc.get("defaults", {})
    if not isinstance(raw, dict):
        bad("defaults", "defaults must be a JSON object")
        raw = {}
    defaults: dict[str, Any] = {}
    for key in _DEFAULT_KEYS:
        if key not in raw or raw[key] is None:
            continue
        value, column = raw[key], f"defaults.{key}"
        if key == "confidence":
            if isinstance(value, bool) or not isinstance(value, int | float):
                bad(column, f"must be a number in [0, 1], got {value!r}")
                continue
            if math.isnan(value) or not 0.0 <= value <= 1.0:
                bad(column, f"confidence must be in [0, 1], got {value!r}")
                continue
            value = float(value)
        elif key in ("reason", "source"):
            if not isinstance(value, str) or not value.strip():
                bad(column, f"must be non-empty text, got {value!r}")
                continue
            if (fault := text_fault(value)) is not None:
                bad(column, fault)
                continue
        elif key == "evidence":
            if not non_empty_json(value):
                bad(column, f"must be non-empty JSON, got {value!r}")
                continue
        else:
            if not isinstance(value, str):
                bad(column, f"must be an ISO 8601 text, got {value!r}")
                continue
            try:
                value = parse_time(value, field=column)
            except InputError as exc:
                bad(column, str(exc))
                continue
        defaults[key] = value
    escaped = doc.get("formula_escape", False)
    if not isinstance(escaped, bool):
        bad("formula_escape", f"must be true or false, got {escaped!r}")
        escaped = False
    return Manifest(name.strip(), defaults, complete=ok, formula_escape=escaped)


# A spreadsheet runs a cell beginning with one of these as a formula (CSV injection).
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(cell: str) -> str:
    """The cell as a bundle with ``formula_escape`` writes it: one apostrophe before a cell that a
    spreadsheet would run as a formula, and before one that already begins with an apostrophe
    (so that :func:`unescape_cell` can always remove exactly one)."""
    return "'" + cell if cell.startswith(FORMULA_STARTS) or cell.startswith("'") else cell


def unescape_cell(cell: str) -> str:
    """The cell :func:`escape_cell` was given."""
    return cell[1:] if cell.startswith("'") else cell


class _LineFeeds:
    """A file the csv writer writes rows ending in CR LF to, which ends them in LF instead.

    The writer quotes a cell holding any character of its line terminator: told "\r\n", it quotes
    a cell holding a bare CR as well as one holding LF (told "\n", it would write the CR bare, and
    a reader takes a bare CR for the end of the row). Rows are written one ``write`` call each."""

    def __init__(self, fh: TextIO) -> None:
        self._fh = fh

    def write(self, row: str) -> int:
        return self._fh.write(row[:-2] + "\n")


def csv_writer(fh: TextIO) -> Any:
    """A csv writer of bundle rows into ``fh``: LF line ends, and every cell holding a CR or an LF
    quoted, so that any text is read back as it was written."""
    return csv.writer(_LineFeeds(fh), lineterminator="\r\n")


def non_empty_json(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return bool(value)
    return True


def _encoding_problem(file: str, line: int, column: str | None, tail: bytes) -> Problem:
    return Problem(
        "encoding",
        file,
        line,
        column,
        f"is not UTF-8 (byte {tail[:1]!r}); save the file as UTF-8",
    )


# ---------------------------------------------------------------------------------------------
# Rows


class Row:
    """One CSV record with its (first) line, read through the header's column positions."""

    __slots__ = ("bad", "cells", "file", "index", "line")

    def __init__(
        self, file: str, line: int, cells: list[str], index: Mapping[str, int], *, bad: bool = False
    ) -> None:
        self.file, self.line, self.cells, self.index, self.bad = file, line, cells, index, bad

    def get(self, column: str) -> str:
        i = self.index.get(column)
        return self.cells[i] if i is not None and i < len(self.cells) else ""

    def ident(self, column: str) -> str:
        value = self.get(column).strip()
        if not value:
            raise RowFault("missing", f"{column} must not be empty", column)
        fault = id_fault(value)
        if fault is not None:
            raise RowFault("missing", f"{column} {value[:60]!r} {fault}", column)
        # Interned: an id repeats on many rows, and every pending write and index shares one copy.
        return sys.intern(value)

    def problem(self, fault: RowFault) -> Problem:
        return Problem(fault.kind, self.file, self.line, fault.column, fault.message)


def _bad_cell(cells: list[str], columns: list[str]) -> tuple[int, str] | None:
    """The first cell holding an undecodable byte (a lone surrogate from surrogateescape)."""
    for i, cell in enumerate(cells):
        if cell.isascii():
            continue
        try:
            cell.encode("utf-8")
        except UnicodeEncodeError as exc:
            return i, cell[exc.start]
    return None


def read_rows(
    folder: Path, file: str, sink: Sink, *, keep_bad: bool = False, unescape: bool = False
) -> Iterator[Row]:
    """Stream the rows of one CSV file; structural faults (header, encoding, malformed CSV, too
    many cells) go to ``sink`` and their rows are skipped, except that with ``keep_bad`` a row
    with an undecodable cell is still yielded, marked ``bad`` (its other cells may be read).
    ``unescape``: the cells were written with ``formula_escape`` (see :func:`escape_cell`)."""
    path = folder / file
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
        reader = csv.reader(fh, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            sink(Problem("csv", file, 1, None, f"malformed CSV header: {exc}"))
            return
        if header is None:
            sink(Problem("csv", file, 1, None, "is empty; it needs a header row"))
            return
        columns = [h.strip() for h in header]
        bad = _bad_cell(columns, columns)
        if bad is not None:
            sink(_encoding_problem(file, 1, None, bytes([ord(bad[1]) - 0xDC00])))
            return
        index: dict[str, int] = {}
        ok = True
        for i, column in enumerate(columns):
            if column in index:
                sink(Problem("csv", file, 1, column, "column appears twice in the header"))
                ok = False
            index[column] = i
        for column in REQUIRED[file]:
            if column not in index:
                sink(Problem("csv", file, 1, column, "required column is missing"))
                ok = False
        if not ok:
            return
        last = reader.line_num
        while True:
            line = last + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                if "field limit" in str(exc):
                    # The reader cannot find the next row reliably inside an over-long quoted cell.
                    sink(Problem("csv", file, line, None, _too_long(file)))
                    return
                sink(Problem("csv", file, line, None, f"malformed CSV: {exc}"))
                if reader.line_num == last:
                    return
                last = reader.line_num
                continue
            last = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if unescape:
                cells = [unescape_cell(c) for c in cells]
            if len(cells) > len(columns):
                sink(
                    Problem(
                        "csv",
                        file,
                        line,
                        None,
                        f"row has {len(cells)} cells but the header has {len(columns)} columns "
                        "(quote cells that contain commas)",
                    )
                )
                continue
            bad = _bad_cell(cells, columns)
            if bad is not None:
                sink(_encoding_problem(file, line, columns[bad[0]], bytes([ord(bad[1]) - 0xDC00])))
                if keep_bad:
                    yield Row(file, line, cells, index, bad=True)
                continue
            nul = _nul_cell(cells)
            if nul is not None:
                sink(Problem("text", file, line, _column(columns, nul), NUL_MESSAGE))
                if keep_bad:
                    yield Row(file, line, cells, index, bad=True)
                continue
            yield Row(file, line, cells, index)


NUL_MESSAGE: Final = "holds a NUL character (U+0000), which PostgreSQL cannot store; remove it"


def _nul_cell(cells: list[str]) -> int | None:
    """The first cell holding a NUL character: SQLite would store it, PostgreSQL refuses it, so a
    bundle holding one is refused on both engines."""
    for i, cell in enumerate(cells):
        if "\x00" in cell:
            return i
    return None


def _column(columns: list[str], i: int) -> str | None:
    return columns[i] if i < len(columns) else None


def _too_long(file: str) -> str:
    limit = csv.field_size_limit()
    return (
        f"a cell is longer than the CSV field limit of {limit:,} characters (Python's csv module); "
        f"shorten it (the rest of {file} was not read)"
    )


# ---------------------------------------------------------------------------------------------
# Pure row parsing


_CACHE_MAX: Final = 4096


@dataclass
class Cells:
    """The manifest's defaults and caches of repeated cell values. The caches are cleared when
    they reach ``_CACHE_MAX`` entries: a bundle whose every row has its own reason must not keep
    one entry per row (memory stays flat), while shared defaults stay cached."""

    manifest: Manifest
    times: dict[str, datetime] = field(default_factory=dict)
    groundings: dict[tuple[str, str, str, str], Grounding] = field(default_factory=dict)
    # Evidence cell text -> its value, validated once (rows often share evidence, not reasons).
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def defaults(self) -> dict[str, Any]:
        return self.manifest.defaults


def _no_default(column: str, cells: Cells) -> RowFault:
    if not cells.manifest.complete:
        return RowFault("grounding", f"{column} is empty (and {MANIFEST} is faulty, see above)", column)
    return RowFault("grounding", f"{column} is empty and {MANIFEST} has no default", column)


def grounding(row: Row, cells: Cells) -> Grounding:
    raw = (row.get("confidence").strip(), row.get("reason"), row.get("source"), row.get("evidence").strip())
    cached = cells.groundings.get(raw)
    if cached is not None:
        return cached
    if len(cells.groundings) >= _CACHE_MAX:
        cells.groundings.clear()
    if len(cells.evidence) >= _CACHE_MAX:
        cells.evidence.clear()
    conf_text, reason, source, evidence_text = raw
    d = cells.defaults
    confidence: float
    if conf_text:
        try:
            confidence = float(conf_text)
        except ValueError:
            raise RowFault(
                "confidence", f"confidence must be a number in [0, 1], got {conf_text!r}", "confidence"
            ) from None
        if math.isnan(confidence) or not 0.0 <= confidence <= 1.0:
            raise RowFault("confidence", f"confidence must be in [0, 1], got {confidence!r}", "confidence")
    elif "confidence" in d:
        confidence = d["confidence"]
    else:
        raise _no_default("confidence", cells)
    texts: dict[str, str] = {}
    for column, value in (("reason", reason), ("source", source)):
        if value.strip():
            texts[column] = value
        elif column in d:
            texts[column] = d[column]
        else:
            raise _no_default(column, cells)
    evidence: Any
    known = cells.evidence.get(evidence_text, _UNSEEN)
    if known is not _UNSEEN:
        # Evidence already validated with an earlier row; every other field was checked above.
        g = Grounding.stored(confidence, texts["reason"], texts["source"], known)
        cells.groundings[raw] = g
        return g
    if evidence_text:
        try:
            evidence = json.loads(evidence_text)
        except json.JSONDecodeError as exc:
            raise RowFault("evidence", f"evidence is not valid JSON ({exc.msg})", "evidence") from None
        except RecursionError:
            raise RowFault("evidence", "evidence is nested too deeply to read", "evidence") from None
        if not non_empty_json(evidence):
            raise RowFault("evidence", f"evidence must be non-empty JSON, got {evidence_text!r}", "evidence")
    elif "evidence" in d:
        evidence = d["evidence"]
    else:
        raise _no_default("evidence", cells)
    try:
        g = Grounding(confidence, texts["reason"], texts["source"], evidence)
    except GroundingRejected as exc:
        raise RowFault("grounding", str(exc), exc.field) from exc
    cells.groundings[raw] = g
    cells.evidence[evidence_text] = evidence
    return g


def times(row: Row, cells: Cells) -> tuple[datetime | None, datetime | None]:
    out: list[datetime | None] = []
    for column in ("valid_at", "invalid_at"):
        text = row.get(column).strip()
        if not text:
            out.append(cells.defaults.get("valid_at") if column == "valid_at" else None)
            continue
        t = cells.times.get(text)
        if t is None:
            if len(cells.times) >= _CACHE_MAX:
                cells.times.clear()
            try:
                t = parse_time(text, field=column)
            except InputError as exc:
                raise RowFault("time", str(exc), column) from exc
            cells.times[text] = t
        out.append(t)
    valid_at, invalid_at = out
    if valid_at is not None and invalid_at is not None and invalid_at <= valid_at:
        raise RowFault(
            "time",
            f"invalid_at {format_time(invalid_at)} must be after valid_at {format_time(valid_at)}",
            "invalid_at",
        )
    return valid_at, invalid_at


def concept_write(row: Row, cells: Cells) -> Write:
    cid = row.ident("id")
    name = row.get("name").strip()
    if not name:
        raise RowFault("missing", "name must not be empty", "name")
    aliases = [a.strip() for a in row.get("aliases").split("|") if a.strip()]
    for column, text in (("name", name), *(("aliases", a) for a in aliases)):
        fault = name_fault(text)
        if fault is not None:
            raise RowFault(
                "missing", f"{'name' if column == 'name' else 'alias'} {text[:60]!r} {fault}", column
            )
        if (why := confusable(text)) is not None:
            raise RowFault("confusable_name", f"{text!r} could pass for another name ({why})", column)
    valid_at, invalid_at = times(row, cells)
    return Write.concept(
        cid,
        grounding=grounding(row, cells),
        mode="upsert",
        name=name,
        aliases=aliases,
        summary=row.get("summary"),
        valid_at=valid_at,
        invalid_at=invalid_at,
    )


def edge_write(row: Row, cells: Cells) -> Write:
    source_id, target_id = row.ident("source_id"), row.ident("target_id")
    relation = row.ident("relation")
    if relation not in RELATIONS:
        raise RowFault(
            "relation", f"unknown relation {relation!r}; expected one of {', '.join(RELATIONS)}", "relation"
        )
    if source_id == target_id:
        raise RowFault("self_loop", f"an edge may not connect {source_id!r} to itself", "target_id")
    valid_at, invalid_at = times(row, cells)
    return Write.edge(
        *canonical_edge(source_id, target_id, relation),
        grounding=grounding(row, cells),
        mode="upsert",
        valid_at=valid_at,
        invalid_at=invalid_at,
    )


def link_write(row: Row, cells: Cells) -> tuple[Write, str]:
    """The link a row writes, and its lesson title cell (lessons are gathered by the caller)."""
    lesson_id, concept_id = row.ident("lesson_id"), row.ident("concept_id")
    valid_at, invalid_at = times(row, cells)
    w = Write.lesson_link(
        lesson_id,
        concept_id,
        grounding=grounding(row, cells),
        mode="upsert",
        valid_at=valid_at,
        invalid_at=invalid_at,
    )
    return w, row.get("lesson_title")


def group_write(row: Row, cells: Cells) -> Write:
    """A ``requirement_groups.csv`` row as the write of its group row (``upsert``): the group's
    members come from ``requirement_members.csv`` and are joined to it by the caller."""
    group_id, target_id = row.ident("group_id"), row.ident("target_id")
    text = row.get("needs").strip()
    if not (text.isascii() and text.isdigit() and int(text) >= 1):
        raise RowFault("needs", f"needs must be a whole number of at least 1, got {text!r}", "needs")
    valid_at, invalid_at = times(row, cells)
    return Write(
        "requirement_groups",
        (group_id,),
        "upsert",
        grounding(row, cells),
        {"target_id": target_id, "needs": int(text)},
        valid_at,
        invalid_at,
    )


def member_write(row: Row, cells: Cells) -> Write:
    """A ``requirement_members.csv`` row as the write of its member (``upsert``)."""
    group_id, concept_id = row.ident("group_id"), row.ident("concept_id")
    option = row.get("option").strip()
    if not (option.isascii() and option.isdigit() and option[0] != "0" and len(option) <= 8):
        raise RowFault("option", f"option must be a positive number (1, 2, ...), got {option!r}", "option")
    valid_at, invalid_at = times(row, cells)
    return Write(
        "requirement_members",
        (group_id, option, concept_id),
        "upsert",
        grounding(row, cells),
        {},
        valid_at,
        invalid_at,
    )
