"""Plain prerequisite lists: a two-column CSV of prerequisite pairs by name, made into a bundle.

The simplest real-world format: one pair per row, ``PREREQUISITE,CONCEPT`` ("learn the first
before the second"), names rather than ids. The first row is a header (and skipped) if its first
cell is one of ``prerequisite``, ``source``, ``from`` or ``before`` (any case). Blank rows are
ignored; a row with more than two cells keeps its first two.

An optional names file lists concepts (``name`` and optionally ``summary``; header if its first
cell is ``name``), so topics without pairs are imported too and summaries can be given.

Ids are slugs of the names: lower case, every run of characters other than ``a-z0-9`` becomes one
``_`` (``"Retrieval-augmented generation"`` -> ``retrieval_augmented_generation``). Names are
matched after collapsing white space, ignoring case; the first spelling seen is the display name.
Two different names with the same slug get ``_2``, ``_3`` ... in order of first appearance; a
name with no letters or digits becomes ``concept_<n>``.

Grounding defaults (the manifest's; override with the arguments): ``source`` =
``pairs:<file name>``, ``reason`` = ``prerequisite pair listed in <file name>``, ``confidence`` =
1.0, no ``valid_at`` (valid from the time of the first import). Each edge row's evidence names
the pairs file and its line (``{"file": ..., "line": ...}``), each concept's the line that first
named it, so every imported fact points back at the row it came from.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from data_plane.bundle_check import SetAside
from data_plane.bundle_rows import BUNDLE_FORMAT, CONCEPTS, EDGES, MANIFEST, csv_writer
from data_plane.errors import BundleError, Problem

__all__ = ["PairsBundle", "bundle_from_pairs", "slugify"]

_PAIR_HEADERS: Final = frozenset({"prerequisite", "source", "from", "before"})
_NON_SLUG: Final = re.compile(r"[^a-z0-9]+")
# "line 4", "lines 3, 4, 2" in a message about the generated edges file.
_LINES: Final = re.compile(r"(\blines? )(\d+(?:, \d+)*)")


def slugify(name: str) -> str:
    """The id a name gets (before collisions are resolved); empty if it has no letters or digits."""
    return _NON_SLUG.sub("_", name.lower()).strip("_")


@dataclass
class PairsBundle:
    """A bundle written from a pairs file, and how its rows map back to the files the user wrote:
    every problem and set-aside row is named by the pairs (or names) file, its line and its
    column's header, never by the generated ``concept_edges.csv`` / ``source_id``."""

    folder: Path
    pairs_file: str
    concepts: int
    pairs: int
    # Line of concept_edges.csv -> line of the pairs file.
    edge_lines: dict[int, int] = field(default_factory=dict)
    # Line of concepts.csv -> (file, line) that first named the concept.
    concept_lines: dict[int, tuple[str, int]] = field(default_factory=dict)
    # The pairs file's two column headers (as written, or "column 1", "column 2").
    headers: tuple[str, str] = ("column 1", "column 2")

    def _where(self, file: str | None, line: int | None) -> tuple[str | None, int | None]:
        if file == EDGES:
            return self.pairs_file, self.edge_lines.get(line, line) if line else None
        if file == CONCEPTS and line in self.concept_lines:
            return self.concept_lines[line]
        return file, line

    def _text(self, file: str | None, message: str) -> str:
        """``message`` in the user's terms: their file, its lines, its columns."""
        if file == EDGES:

            def lines(m: re.Match[str]) -> str:
                return m.group(1) + ", ".join(
                    str(self.edge_lines.get(int(n), n)) for n in m.group(2).split(", ")
                )

            message = _LINES.sub(lines, message)
            message = message.replace(EDGES, self.pairs_file)
        for internal, header in zip(("source_id", "target_id"), self.headers, strict=True):
            message = re.sub(rf"\b{internal}\b", repr(header), message)
        return message

    def remap(self, problem: Problem) -> Problem:
        """A problem in the generated bundle, named by the user's file, line and column."""
        if problem.file not in (EDGES, CONCEPTS):
            return problem
        file, line = self._where(problem.file, problem.line)
        lines = tuple(self._where(problem.file, n)[1] or n for n in problem.lines)
        column = dict(zip(("source_id", "target_id"), self.headers, strict=True)).get(problem.column or "")
        message = self._text(problem.file, problem.message)
        return Problem(problem.kind, file or problem.file, line, column, message, lines)

    def located(self, aside: SetAside) -> SetAside:
        """A set-aside row named by the pairs file's line (its reason too)."""
        file, line = self._where(aside.file, aside.line)
        why = self._text(aside.file, aside.why)
        return replace(aside, file=file or aside.file, line=line or aside.line, why=why)

    def to_dict(self) -> dict[str, Any]:
        return {"bundle": str(self.folder), "concepts": self.concepts, "pairs": self.pairs}


class _Names:
    """Names to ids: matching, slugs and collisions, in order of first appearance."""

    def __init__(self) -> None:
        self.by_key: dict[str, str] = {}
        self.taken: set[str] = set()
        self.rows: dict[str, dict[str, Any]] = {}

    def id_for(self, name: str, file: str, line: int, summary: str = "") -> str:
        display = " ".join(name.split())
        key = display.casefold()
        cid = self.by_key.get(key)
        if cid is None:
            base = slugify(display) or f"concept_{len(self.by_key) + 1}"
            cid, n = base, 1
            while cid in self.taken:
                n += 1
                cid = f"{base}_{n}"
            self.by_key[key] = cid
            self.taken.add(cid)
            self.rows[cid] = {"name": display, "summary": summary, "evidence": {"file": file, "line": line}}
        elif summary and not self.rows[cid]["summary"]:
            self.rows[cid]["summary"] = summary
        return cid


def _records(path: Path, headers: frozenset[str]) -> Iterator[tuple[int, list[str]]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            last = 0
            for cells in reader:
                line, last = last + 1, reader.line_num
                if not cells or all(not c.strip() for c in cells):
                    continue
                if line == 1 and cells[0].strip().lower() in headers:
                    continue
                yield line, cells
    except UnicodeDecodeError as exc:
        raise BundleError(f"is not UTF-8 ({exc.reason}); save it as UTF-8", file=path.name) from exc
    except csv.Error as exc:
        raise BundleError(f"malformed CSV: {exc}", file=path.name) from exc


def _header(path: Path, headers: frozenset[str]) -> tuple[str, str] | None:
    """The first two cells of the file's header row, if its first row is one."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            first = next(csv.reader(fh), [])
    except (UnicodeDecodeError, csv.Error):
        return None  # _records says what is wrong with the file
    if first and first[0].strip().lower() in headers:
        return first[0].strip(), (first[1].strip() if len(first) > 1 else "column 2")
    return None


def bundle_from_pairs(
    pairs: str | Path,
    out: str | Path,
    *,
    names: str | Path | None = None,
    bundle_name: str | None = None,
    source: str | None = None,
    reason: str | None = None,
    confidence: float = 1.0,
) -> PairsBundle:
    """Write a ``kg-bundle/1`` folder at ``out`` from a pairs file (and optional names file)."""
    pairs_path, folder = Path(pairs), Path(out)
    if not pairs_path.is_file():
        raise BundleError("no such pairs file", file=str(pairs_path))
    known = _Names()
    if names is not None:
        names_path = Path(names)
        if not names_path.is_file():
            raise BundleError("no such names file", file=str(names_path))
        for line, cells in _records(names_path, frozenset({"name"})):
            if cells[0].strip():
                known.id_for(cells[0], names_path.name, line, cells[1].strip() if len(cells) > 1 else "")
    edge_rows: list[tuple[str, str, str, str]] = []
    edge_lines: dict[int, int] = {}
    for line, cells in _records(pairs_path, _PAIR_HEADERS):
        first = cells[0] if cells else ""
        second = cells[1] if len(cells) > 1 else ""
        ids = [known.id_for(c, pairs_path.name, line) if c.strip() else "" for c in (first, second)]
        evidence = json.dumps({"file": pairs_path.name, "line": line}, ensure_ascii=False)
        edge_rows.append((ids[0], ids[1], "prerequisite", evidence))
        edge_lines[len(edge_rows) + 1] = line
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": BUNDLE_FORMAT,
        "name": bundle_name or pairs_path.stem,
        "description": f"prerequisite pairs from {pairs_path.name}",
        "defaults": {
            "source": source or f"pairs:{pairs_path.name}",
            "reason": reason or f"prerequisite pair listed in {pairs_path.name}",
            "confidence": confidence,
        },
    }
    (folder / MANIFEST).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with (folder / CONCEPTS).open("w", encoding="utf-8", newline="") as fh:
        writer = csv_writer(fh)
        writer.writerow(("id", "name", "summary", "evidence"))
        for cid, row in known.rows.items():
            writer.writerow(
                (cid, row["name"], row["summary"], json.dumps(row["evidence"], ensure_ascii=False))
            )
    with (folder / EDGES).open("w", encoding="utf-8", newline="") as fh:
        writer = csv_writer(fh)
        writer.writerow(("source_id", "target_id", "relation", "evidence"))
        writer.writerows(edge_rows)
    concept_lines = {
        i + 2: (str(row["evidence"]["file"]), int(row["evidence"]["line"]))
        for i, row in enumerate(known.rows.values())
    }
    headers = _header(pairs_path, _PAIR_HEADERS) or ("column 1", "column 2")
    return PairsBundle(
        folder, pairs_path.name, len(known.rows), len(edge_rows), edge_lines, concept_lines, headers
    )
