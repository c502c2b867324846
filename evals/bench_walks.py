"""Walk benchmark: one recursive walk gathering a ~100-concept closure, beside networkx.

Run ``python -m evals.bench_walks [--sizes 1000,10000,100000,1000000] [--postgres URL]
[--out out/bench]``. For each size (edges) it generates the seeded synthetic curriculum
(``evals.graphgen``), imports it into a fresh SQLite file (and, with ``--postgres``, a fresh
database on that server), then picks start concepts whose needed-before closure holds 70-130
concepts (found by a bounded breadth-first count on the generated edges) and times, on the same
starts in the same process:

* ``walk``: :func:`data_plane.walks.walk` (thin rows: the data-plane statement alone), without a
  depth bound (each concept expanded once) and a budget large enough to finish, checked (outside
  the timings) to equal networkx's answer;
* ``walk+detail``: the same walk with full edge and concept records (what the planner reads);
* ``networkx``: ``nx.ancestors`` on an in-memory ``DiGraph`` of the learning edges (earlier →
  later), built once per size (its build time and the walk/networkx ratio are reported).

p50/p99 over ``--samples`` starts after a warm-up. Each size runs in its own child process. This
is a benchmark, not a test: nothing asserts a timing. Writes ``walks.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

import networkx as nx
import sqlalchemy as sa

from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from data_plane.walks import NEEDED_BEFORE, explain_walk, learning_steps, walk
from evals.bench_dataplane import machine
from evals.graphgen import generate, write_bundle

__all__ = ["bench_size", "main", "table"]

WARMUP = 10
LOW, HIGH = 70, 130


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))], 3)


def _learning_graph(edges: Any) -> nx.DiGraph:
    """earlier -> later for every learning edge (prerequisite source->target, builds_on target->source)."""
    g = nx.DiGraph()
    for s, t, rel, _ in edges:
        if rel == "prerequisite":
            g.add_edge(s, t)
        elif rel == "builds_on":
            g.add_edge(t, s)
    return g


def _bounded_count(g: nx.DiGraph, start: str, limit: int) -> int:
    """Size of start's ancestor set, or limit + 1 once it exceeds limit."""
    seen = {start}
    queue = deque([start])
    while queue:
        for p in g.predecessors(queue.popleft()):
            if p not in seen:
                seen.add(p)
                if len(seen) > limit + 1:
                    return limit + 1
                queue.append(p)
    return len(seen) - 1


def _starts(g: nx.DiGraph, want: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    nodes = sorted(g.nodes)
    found: list[str] = []
    for _ in range(200_000):
        c = rnd.choice(nodes)
        if LOW <= _bounded_count(g, c, HIGH) <= HIGH:
            found.append(c)
            if len(found) >= want:
                break
    return found


def _time(fn: Any, starts: list[str], cpu: list[float] | None = None) -> list[float]:
    """Wall milliseconds per call after the warm-up; process CPU milliseconds into ``cpu``."""
    out = []
    for i, s in enumerate(starts):
        c0, t0 = time.process_time(), time.perf_counter()
        fn(s)
        if i >= WARMUP:
            out.append((time.perf_counter() - t0) * 1000)
            if cpu is not None:
                cpu.append((time.process_time() - c0) * 1000)
    return out


def _measure(url: str, bundle: Path, starts: list[str], g: nx.DiGraph) -> dict[str, Any]:
    engine = connect(url)
    migrate(engine)
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    t0 = time.perf_counter()
    import_bundle(gateway, bundle, reader=reader)
    import_s = time.perf_counter() - t0
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    as_of = reader.as_of()
    steps = learning_steps(NEEDED_BEFORE)
    sizes: list[int] = []
    mismatches = 0

    def thin(s: str) -> None:
        walk(engine, [s], as_of=as_of, steps=steps, max_depth=None, budget=20_000)

    def detail(s: str) -> None:
        walk(engine, [s], as_of=as_of, steps=steps, max_depth=None, budget=20_000, detail=True)

    thin_cpu: list[float] = []
    thin_ms = _time(thin, starts, thin_cpu)
    detail_ms = _time(detail, starts)
    for s in starts:  # correctness, outside the timings
        w = walk(engine, [s], as_of=as_of, steps=steps, max_depth=None, budget=20_000)
        sizes.append(len(w.reached))
        mismatches += w.reached != nx.ancestors(g, s) or not w.complete
    plan = explain_walk(engine, starts[:1], as_of, max_depth=None)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT count(*) FROM concept_edges")).scalar_one()
    engine.dispose()
    return {
        "engine": engine.dialect.name,
        "edge_rows": rows,
        "import_s": round(import_s, 2),
        "walk_p50_ms": _pct(thin_ms, 0.5),
        "walk_p99_ms": _pct(thin_ms, 0.99),
        # CPU time of this process: on SQLite it includes the SQL (in-process), so it is the
        # work of one walk even when other jobs share the cores; on PostgreSQL it is client only.
        "walk_cpu_p50_ms": _pct(thin_cpu, 0.5),
        "walk_detail_p50_ms": _pct(detail_ms, 0.5),
        "walk_detail_p99_ms": _pct(detail_ms, 0.99),
        "mean_closure": round(statistics.fmean(sizes), 1),
        "mismatches_vs_networkx": mismatches,
        "query_plan": plan,
    }


def bench_size(edges: int, *, samples: int, seed: int, postgres: str | None, workdir: Path) -> dict[str, Any]:
    graph = generate(edges, seed=seed)
    bundle = write_bundle(graph, workdir / f"bundle-{edges}")
    t0 = time.perf_counter()
    g = _learning_graph(graph.edges)
    nx_build_s = time.perf_counter() - t0
    starts = _starts(g, samples + WARMUP, seed)
    nx_cpu: list[float] = []
    nx_ms = _time(lambda s: nx.ancestors(g, s), starts, nx_cpu)
    result: dict[str, Any] = {
        "edges": len(graph.edges),
        "concepts": len(graph.concepts),
        "samples": len(starts) - WARMUP,
        "networkx_build_s": round(nx_build_s, 2),
        "networkx_p50_ms": _pct(nx_ms, 0.5),
        "networkx_cpu_p50_ms": _pct(nx_cpu, 0.5),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "engines": [],
    }
    urls = [f"sqlite:///{workdir}/walks-{edges}.sqlite3"]
    admin = None
    name = f"kg_bench_walks_{uuid.uuid4().hex[:8]}"
    if postgres:
        admin = sa.create_engine(postgres, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        urls.append(sa.make_url(postgres).set(database=name).render_as_string(hide_password=False))
    try:
        for url in urls:
            m = _measure(url, bundle, starts, g)
            m["ratio_walk_to_networkx"] = round(m["walk_p50_ms"] / max(result["networkx_p50_ms"], 1e-6), 1)
            result["engines"].append(m)
    finally:
        if admin is not None:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.dispose()
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| edges | engine | closure | walk p50 ms | walk p99 ms | walk+detail p50 ms | networkx p50 ms "
        "| walk / networkx | walk CPU p50 ms | = networkx | load |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results:
        for m in r["engines"]:
            lines.append(
                f"| {r['edges']:,} | {m['engine']} | {m['mean_closure']} | {m['walk_p50_ms']} | {m['walk_p99_ms']} "
                f"| {m['walk_detail_p50_ms']} | {r['networkx_p50_ms']} | {m['ratio_walk_to_networkx']}x "
                f"| {m['walk_cpu_p50_ms']} "
                f"| {'yes' if m['mismatches_vs_networkx'] == 0 else m['mismatches_vs_networkx']} "
                f"| {r['load_avg_1m']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench_walks", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="edge counts, comma-separated")
    parser.add_argument("--postgres", default=os.environ.get("KG_TEST_POSTGRES_URL"), help="server URL")
    parser.add_argument("--out", default="out/bench", help="folder for walks.json")
    parser.add_argument("--samples", type=int, default=100, help="timed walks per size and engine")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # child process mode
    args = parser.parse_args(argv)
    if args.one is not None:
        with tempfile.TemporaryDirectory(prefix="kg-walks-") as tmp:
            result = bench_size(
                args.one, samples=args.samples, seed=args.seed, postgres=args.postgres, workdir=Path(tmp)
            )
        print(json.dumps(result))
        return 0
    results = []
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        cmd = [sys.executable, "-m", "evals.bench_walks", "--one", str(size), "--samples", str(args.samples)]
        cmd += ["--seed", str(args.seed)] + (["--postgres", args.postgres] if args.postgres else [])
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(table(results[-1:]).splitlines()[-1], file=sys.stderr)
    report = {
        "command": "python -m evals.bench_walks " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "walks.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
