"""Import throughput and memory beside a raw insert of the same rows (docs/benchmarks.md).

Three steps, each its own process so that ``/usr/bin/time -v`` measures one thing:

``python -m evals.bench_import make EDGES DIR``
    writes the ``evals.graphgen`` bundle of EDGES edges (seed 7) to DIR;
``python -m evals.bench_import import DIR URL``
    imports DIR into a fresh, migrated database at URL through :func:`import_bundle`;
``python -m evals.bench_import raw DIR URL``
    inserts the same rows (every column, the same values, the same schema, indexes and guard
    triggers) into a fresh, migrated database at URL with one driver-level ``executemany`` per
    table in one transaction: the floor an import could reach without parsing, validating or
    versioning anything. SQLite only.

Each prints one JSON line: rows, seconds, rows/s.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from data_plane import WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from evals.graphgen import DEFAULTS, generate, write_bundle

__all__ = ["main"]


def _rows(folder: Path, name: str) -> list[list[str]]:
    with (folder / name).open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))[1:]


def _fresh(url: str) -> None:
    engine = connect(url)
    migrate(engine)
    engine.dispose()


def run_import(folder: Path, url: str) -> dict[str, Any]:
    _fresh(url)
    engine = connect(url)
    started = time.perf_counter()
    report = import_bundle(WriteGateway(engine), folder)
    elapsed = time.perf_counter() - started
    engine.dispose()
    rows = report.new_versions
    return {"step": "import", "rows": rows, "seconds": round(elapsed, 3), "rows_per_s": round(rows / elapsed)}


def run_raw(folder: Path, url: str) -> dict[str, Any]:
    assert url.startswith("sqlite:///"), "the raw floor is measured on SQLite"
    _fresh(url)
    now = datetime.now(UTC).replace(tzinfo=None).isoformat(sep=" ")
    valid = "2024-01-01 00:00:00.000000"
    ground = (float(str(DEFAULTS["confidence"])), str(DEFAULTS["source"]), json.dumps(DEFAULTS["evidence"]))
    tail = ("assert", ground[0])

    def stamp(reason: str) -> tuple[Any, ...]:
        return (*tail, reason, ground[1], ground[2], valid, None, now, None, None)

    started = time.perf_counter()
    concepts = [
        (c[0], c[1], json.dumps([c[2]]), c[3], *stamp(str(DEFAULTS["reason"])))
        for c in _rows(folder, "concepts.csv")
    ]
    edges = [(e[0], e[1], e[2], *stamp(e[3])) for e in _rows(folder, "concept_edges.csv")]
    links = _rows(folder, "lesson_concepts.csv")
    lessons = {lesson: title for lesson, title, _ in links}
    cols = "op, confidence, reason, source, evidence, valid_at, invalid_at, recorded_at, expired_at, supersedes_id"
    marks = ", ".join("?" * 10)
    db = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        f"INSERT INTO concepts (concept_id, name, aliases, summary, {cols}) VALUES (?, ?, ?, ?, {marks})",
        concepts,
    )
    db.executemany(
        f"INSERT INTO lessons (lesson_id, title, {cols}) VALUES (?, ?, {marks})",
        [(k, v, *stamp("lesson")) for k, v in lessons.items()],
    )
    db.executemany(
        f"INSERT INTO concept_edges (source_id, target_id, relation, {cols}) VALUES (?, ?, ?, {marks})", edges
    )
    db.executemany(
        f"INSERT INTO lesson_concepts (lesson_id, concept_id, {cols}) VALUES (?, ?, {marks})",
        [(lesson, cid, *stamp("link")) for lesson, _, cid in links],
    )
    db.execute("COMMIT")
    elapsed = time.perf_counter() - started
    db.close()
    rows = len(concepts) + len(lessons) + len(edges) + len(links)
    return {"step": "raw", "rows": rows, "seconds": round(elapsed, 3), "rows_per_s": round(rows / elapsed)}


def main(argv: list[str]) -> None:
    step = argv[0]
    if step == "make":
        write_bundle(generate(int(argv[1]), seed=7), argv[2])
        print(json.dumps({"step": "make", "edges": int(argv[1]), "folder": argv[2]}))
    elif step == "import":
        print(json.dumps(run_import(Path(argv[1]), argv[2])))
    elif step == "raw":
        print(json.dumps(run_raw(Path(argv[1]), argv[2])))
    else:
        raise SystemExit(f"unknown step {step!r}; expected make, import or raw")


if __name__ == "__main__":
    main(sys.argv[1:])
