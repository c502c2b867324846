"""Data-plane benchmark: bundle import throughput and neighbourhood latency by graph size.

Run ``python -m evals.bench_dataplane [--sizes 1000,10000,100000,1000000] [--db URL]
[--out out/bench]``. For each size (edges) it generates a synthetic bundle (``evals.graphgen``,
seeded), imports it into a fresh SQLite file through :func:`data_plane.bundle.import_bundle`
(edges/s over the whole import: parse, validate, one transaction), then times
:meth:`GraphReader.neighbourhood` for 1-12 random concept ids as of now (warm-up, then
``--samples`` timed calls: p50/p99 in ms), and records the peak RSS and the engine's query plan.
Each size runs in its own child process so its peak RSS is its own. It prints a Markdown table
and writes ``dataplane.json`` into ``--out``.

``--db URL`` imports into that database instead (it must be empty; e.g. a fresh PostgreSQL
database): every size then goes into the same database, so use it with one size at a time.
This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from evals.graphgen import generate, write_bundle

__all__ = ["bench_one", "machine", "main", "table"]

WARMUP = 30


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def bench_one(edges: int, *, db: str | None, samples: int, seed: int, workdir: Path) -> dict[str, Any]:
    """Generate, import and query one graph of ``edges`` edges; return the measurements."""
    t0 = time.perf_counter()
    graph = generate(edges, seed=seed)
    bundle = write_bundle(graph, workdir / f"bundle-{edges}")
    generate_s = time.perf_counter() - t0

    url = db or f"sqlite:///{workdir}/bench-{edges}.sqlite3"
    engine = connect(url)
    migrate(engine)
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    cpu0 = time.process_time()
    report = import_bundle(gateway, bundle, reader=reader)
    import_cpu_s = time.process_time() - cpu0
    import_s = report.elapsed_s
    counts = report.to_dict()["counts"]

    rng = random.Random(seed)
    ids = [c[0] for c in graph.concepts]
    as_of = reader.as_of()
    sizes: list[int] = []
    timings: list[float] = []
    for i in range(WARMUP + samples):
        chosen = rng.sample(ids, rng.randint(1, 12))
        t = time.perf_counter()
        found = reader.neighbourhood(chosen, as_of=as_of)
        elapsed = (time.perf_counter() - t) * 1000
        if i >= WARMUP:
            timings.append(elapsed)
            sizes.append(len(found))
    plan = reader.explain_neighbourhood(ids[:3], as_of)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT count(*) FROM concept_edges")).scalar_one()
    db_bytes = Path(url.removeprefix("sqlite:///")).stat().st_size if url.startswith("sqlite:///") else None
    engine.dispose()
    return {
        "edges": len(graph.edges),
        "concepts": len(graph.concepts),
        "edge_rows": rows,
        "generate_s": round(generate_s, 3),
        "import_s": round(import_s, 3),
        "import_edges_per_s": round(len(graph.edges) / import_s),
        "import_cpu_s": round(import_cpu_s, 3),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "import_counts": counts,
        "neighbourhood_samples": samples,
        "neighbourhood_p50_ms": round(statistics.median(timings), 3),
        "neighbourhood_p99_ms": round(_percentile(timings, 0.99), 3),
        "neighbourhood_mean_rows": round(statistics.fmean(sizes), 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "db_mb": None if db_bytes is None else round(db_bytes / 2**20, 1),
        "query_plan": plan,
    }


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = "unknown"
    mem_kb = 0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpu": cpu,
        "nproc": os.cpu_count(),
        "ram_gb": round(mem_kb / 2**20, 1),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": sa.__version__,
        "platform": platform.platform(),
    }


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| edges | concepts | import s | import edges/s | nbhd p50 ms | nbhd p99 ms | rows/query | peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['edges']:,} | {r['concepts']:,} | {r['import_s']:.2f} | {r['import_edges_per_s']:,} "
            f"| {r['neighbourhood_p50_ms']:.3f} | {r['neighbourhood_p99_ms']:.3f} "
            f"| {r['neighbourhood_mean_rows']} | {r['peak_rss_mb']:,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_dataplane", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="edge counts, comma-separated")
    parser.add_argument("--db", default=None, help="database URL (default: a fresh SQLite file per size)")
    parser.add_argument("--out", default="out/bench", help="folder for dataplane.json")
    parser.add_argument("--samples", type=int, default=400, help="timed neighbourhood queries per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # child process mode
    args = parser.parse_args(argv)

    if args.one is not None:
        with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
            result = bench_one(args.one, db=args.db, samples=args.samples, seed=args.seed, workdir=Path(tmp))
        print(json.dumps(result))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = []
    for size in sizes:
        cmd = [sys.executable, "-m", "evals.bench_dataplane", "--one", str(size)]
        cmd += ["--samples", str(args.samples), "--seed", str(args.seed)]
        if args.db:
            cmd += ["--db", args.db]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(result)
        print(
            f"{size:>9,} edges: import {result['import_edges_per_s']:,} edges/s, "
            f"p50 {result['neighbourhood_p50_ms']} ms",
            file=sys.stderr,
        )
    report = {
        "command": "python -m evals.bench_dataplane " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "dataplane.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(results))
    print()
    print("Query plan (largest size):")
    for line in results[-1]["query_plan"]:
        print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
