"""How long an import holds the write lock: ``python -m evals.import_lock EDGES``.

Imports a synthetic bundle of about EDGES edges (:mod:`evals.graphgen`) into a fresh SQLite file
and prints the time spent checking (before the write lock is taken) and writing (with it held),
as the import's own progress stages mark them. What ``docs/import.md`` quotes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


def measure(edges: int) -> dict[str, float]:
    """Seconds: ``check`` (no lock held), ``write`` (the write lock held), ``total``."""
    from data_plane import WriteGateway, connect, import_bundle, migrate
    from evals.graphgen import generate, write_bundle

    with tempfile.TemporaryDirectory(prefix="kg-import-lock-") as tmp:
        bundle = write_bundle(generate(edges), Path(tmp) / "bundle")
        engine = connect(f"sqlite:///{tmp}/kg.sqlite3")
        migrate(engine)
        marks: dict[str, float] = {}

        def mark(stage: str, _done: int, _total: int) -> None:
            marks.setdefault(stage, time.perf_counter())

        started = time.perf_counter()
        import_bundle(WriteGateway(engine), bundle, progress=mark)
        ended = time.perf_counter()
        engine.dispose()
    return {"check": marks["apply"] - started, "write": ended - marks["apply"], "total": ended - started}


def main(argv: list[str]) -> None:
    edges = int(argv[0]) if argv else 100_000
    t = measure(edges)
    print(
        f"{edges} edges: check {t['check']:.2f} s (no lock), write {t['write']:.2f} s (write lock held), "
        f"total {t['total']:.2f} s; lock held {t['write'] / t['total']:.0%} of the import"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
