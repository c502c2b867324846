"""The LlamaIndex store's rel map beside the planner's own statements, per depth.

Run ``python -m evals.bench_graph_store [--sizes 100000] [--postgres URL] [--out out/bench]``.
For each size (edges) it generates the seeded synthetic curriculum (``evals.graphgen``), imports
it into a fresh SQLite file (and, with ``--postgres``, a fresh database on that server), draws
``--samples`` sets of 12 random concepts, and for each set, depth (1, 2, 3) and limit (30,
LlamaIndex's default, and one that keeps every triplet) times back to back, alternating which
goes first:

* ``rel map``: ``SQLPropertyGraphStore.get_rel_map(nodes, depth, limit)`` (the seeds' nodes are
  read before the clock starts, as a retriever's ``get`` would have);
* ``statements``: the planner's own reads of the same rows: ``GraphReader.neighbourhood`` of the
  12, and for depth 2 and 3, when those edges are fewer than the limit (as in the rel map), also
  the needed-before walk (``data_plane.walks.walk``, ``detail=True``, the same depth, and the
  limit as its budget) from them.

``rel map / statements`` is the median of the per-set ratios (a loaded machine moves both sides of
one pair alike); ``walk`` is the walk alone, and ``concepts`` the distinct concepts in the rel map
(mean over the sets). This is a benchmark, not a test: nothing asserts a timing. Writes
``graph_store.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import structlog

from control_plane.planning.graph_store import SQLPropertyGraphStore
from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from data_plane.walks import NEEDED_BEFORE, learning_steps, walk
from evals.bench import _on_server, _scratch_postgres
from evals.bench_dataplane import machine
from evals.graphgen import generate, write_bundle

__all__ = ["DEPTHS", "bench_engine", "main", "table"]

DEPTHS = (1, 2, 3)
SEEDS = 12
WARMUP = 10
# LlamaIndex's default (what its retrievers pass), and one that keeps every triplet.
LIMITS = (30, 100_000)
TARGET = 1.5


def _p50(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def _pair(first: Callable[[], Any], second: Callable[[], Any], flip: bool) -> tuple[float, float]:
    """Wall milliseconds of ``first`` and ``second`` run back to back (``second`` first if ``flip``)."""
    times = [0.0, 0.0]
    for i in (1, 0) if flip else (0, 1):
        t0 = time.perf_counter()
        (first, second)[i]()
        times[i] = (time.perf_counter() - t0) * 1000
    return times[0], times[1]


def _measure(
    store: SQLPropertyGraphStore, sets: list[list[str]], nodes: list[list[Any]], depth: int, limit: int
) -> dict[str, Any]:
    """The rel map and the planner's statements on every set, at one depth and limit."""
    reader = store.client
    as_of = store.as_of()
    steps = learning_steps(NEEDED_BEFORE)

    def the_walk(s: list[str]) -> None:
        walk(reader.engine, s, as_of=as_of, steps=steps, max_depth=depth, budget=limit, detail=True)

    def statements(s: list[str]) -> None:
        rows = reader.neighbourhood(s, as_of=as_of)
        if depth > 1 and len({n.edge.version_id for n in rows}) < limit:  # as the rel map does
            the_walk(s)

    def rel_map(n: list[Any]) -> None:
        store.get_rel_map(n, depth=depth, limit=limit)

    ours: list[float] = []
    theirs: list[float] = []
    ratios: list[float] = []
    walks: list[float] = []
    sizes: list[int] = []
    for i, (s, n) in enumerate(zip(sets, nodes, strict=True)):
        a, b = _pair(partial(rel_map, n), partial(statements, s), flip=i % 2 == 1)
        w, _ = _pair(partial(the_walk, s), lambda: None, flip=False)
        if i < WARMUP:
            continue
        ours.append(a)
        theirs.append(b)
        ratios.append(a / b)
        walks.append(w)
        triplets = store.get_rel_map(n, depth=depth, limit=limit)
        sizes.append(len({x.id for t in triplets for x in (t[0], t[2])}))
    return {
        "engine": reader.engine.dialect.name,
        "depth": depth,
        "limit": limit,
        "rel_map_p50_ms": _p50(ours),
        "statements_p50_ms": _p50(theirs),
        "ratio_p50": round(statistics.median(ratios), 2),
        "walk_p50_ms": _p50(walks) if depth > 1 else None,
        "concepts_mean": round(statistics.fmean(sizes), 1),
    }


def bench_engine(url: str, samples: int, seed: int) -> list[dict[str, Any]]:
    """Per depth and limit: the rel map and the planner's statements on ``samples`` sets of 12
    concepts."""
    engine = connect(url)
    reader = GraphReader(engine)
    store = SQLPropertyGraphStore(reader, as_of=reader.as_of())
    ids = sorted(cid for cid, _, _ in reader.concept_labels(as_of=store.as_of()))
    rnd = random.Random(seed)
    sets = [sorted(rnd.sample(ids, SEEDS)) for _ in range(samples + WARMUP)]
    nodes = [store.get(ids=s) for s in sets]
    rows = [_measure(store, sets, nodes, depth, limit) for depth in DEPTHS for limit in LIMITS]
    engine.dispose()
    return rows


def bench_size(edges: int, *, samples: int, seed: int, postgres: str | None, workdir: Path) -> dict[str, Any]:
    bundle = write_bundle(generate(edges, seed=seed), workdir / f"bundle-{edges}")
    urls = [f"sqlite:///{workdir}/graph-store-{edges}.sqlite3"]
    name = f"kg_bench_graph_store_{uuid.uuid4().hex[:8]}"
    if postgres:
        urls.append(_scratch_postgres(postgres, name))
    result: dict[str, Any] = {"edges": edges, "samples": samples, "engines": []}
    try:
        for url in urls:
            engine = connect(url)
            migrate(engine)
            import_bundle(WriteGateway(engine), bundle, reader=GraphReader(engine))
            if engine.dialect.name == "postgresql":
                with engine.begin() as conn:
                    conn.execute(sa.text("ANALYZE"))
            engine.dispose()
            result["engines"] += bench_engine(url, samples, seed)
    finally:
        if postgres:
            _on_server(postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    result["load_avg_1m"] = round(os.getloadavg()[0], 2)
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| edges | engine | depth | limit | rel map p50 ms | statements p50 ms | rel map / statements "
        f"| ≤ {TARGET}x | walk alone p50 ms | concepts | load |",
        "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in results:
        for m in r["engines"]:
            walk_ms = "-" if m["walk_p50_ms"] is None else m["walk_p50_ms"]
            lines.append(
                f"| {r['edges']:,} | {m['engine']} | {m['depth']} | {m['limit'] if m['limit'] < 1000 else 'all'} "
                f"| {m['rel_map_p50_ms']} "
                f"| {m['statements_p50_ms']} | {m['ratio_p50']}x | {'yes' if m['ratio_p50'] <= TARGET else '**no**'} "
                f"| {walk_ms} | {m['concepts_mean']} | {r['load_avg_1m']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_graph_store", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", default="100000", help="edge counts, comma-separated")
    parser.add_argument("--postgres", default=os.environ.get("KG_TEST_POSTGRES_URL"), help="server URL")
    parser.add_argument("--out", default="out/bench", help="folder for graph_store.json")
    parser.add_argument(
        "--samples", type=int, default=100, help="sets of 12 concepts per depth, limit and engine"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    results = []
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        with tempfile.TemporaryDirectory(prefix="kg-graph-store-") as tmp:
            results.append(
                bench_size(
                    size, samples=args.samples, seed=args.seed, postgres=args.postgres, workdir=Path(tmp)
                )
            )
        print(table(results[-1:]), file=sys.stderr)
    report = {
        "command": "python -m evals.bench_graph_store " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "graph_store.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
