"""What stepping through requirement groups costs a walk: the same starts walked without and with
groups, on the UC San Diego catalogue and on synthetic graphs with groups.

Run ``python -m evals.bench_walk_groups [--sizes 100000] [--catalogue DIR] [--postgres URL]
[--samples 100] [--out out/bench]``:

* **synthetic**: for each size (edges) the seeded graph of ``evals.graphgen`` plus its groups
  (``graphgen.groups``: a fifth of the concepts needs one of 2-4 concepts of earlier layers),
  imported into a fresh SQLite file (and PostgreSQL with ``--postgres``); starts whose plain
  needed-before closure holds 70-130 concepts; per start one walk without groups
  (``learning_steps(NEEDED_BEFORE)``, what every caller gets unless it asks) and one with
  (``... + REQUIREMENT``), each checked outside the timings against networkx (ancestors over the
  learning edges, and over the edges plus member -> target arcs);
* **catalogue** (``--catalogue``, default ``../shared/dev-graphs/ucsd-catalogue`` when present):
  the catalogue converted with its groups (``evals.catalogue_groups``), the same two walks from
  every course that has a requirement (closures of a few to a few dozen courses).

p50/p99 over the samples after a warm-up. A benchmark, not a test: nothing asserts a timing.
Writes ``walk_groups.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import networkx as nx
import sqlalchemy as sa

from data_plane import GraphReader, WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from data_plane.walks import NEEDED_BEFORE, REQUIREMENT, learning_steps, walk
from evals.bench_dataplane import machine
from evals.bench_walks import WARMUP, _learning_graph, _pct, _starts, _time
from evals.catalogue_groups import convert
from evals.dev_graphs import dev_graph
from evals.graphgen import generate, groups, write_bundle, write_groups

__all__ = ["main", "table"]

PLAIN = learning_steps(NEEDED_BEFORE)
GROUPED = learning_steps(NEEDED_BEFORE, ("prerequisite", "builds_on", REQUIREMENT))


@contextmanager
def _databases(workdir: Path, tag: str, postgres: str | None) -> Iterator[list[str]]:
    urls = [f"sqlite:///{workdir}/{tag}.sqlite3"]
    admin, name = None, f"kg_bench_groups_{uuid.uuid4().hex[:8]}"
    if postgres:
        admin = sa.create_engine(postgres, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        urls.append(sa.make_url(postgres).set(database=name).render_as_string(hide_password=False))
    try:
        yield urls
    finally:
        if admin is not None:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.dispose()


def _measure(
    url: str, bundle: Path, starts: list[str], plain: nx.DiGraph, grouped: nx.DiGraph
) -> dict[str, Any]:
    engine = connect(url)
    migrate(engine)
    reader = GraphReader(engine)
    import_bundle(WriteGateway(engine), bundle, reader=reader)
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    as_of = reader.as_of()
    out: dict[str, Any] = {"engine": engine.dialect.name}
    for label, steps, g in (("without", PLAIN, plain), ("with", GROUPED, grouped)):

        def one(s: str, steps: Any = steps) -> None:
            walk(engine, [s], as_of=as_of, steps=steps, max_depth=None, budget=20_000)

        ms = _time(one, starts)
        sizes, wrong = [], 0
        for s in starts:
            w = walk(engine, [s], as_of=as_of, steps=steps, max_depth=None, budget=20_000)
            sizes.append(len(w.reached))
            wrong += w.reached != (nx.ancestors(g, s) if s in g else set()) or not w.complete
        out[label] = {
            "p50_ms": _pct(ms, 0.5),
            "p99_ms": _pct(ms, 0.99),
            "closure": round(statistics.fmean(sizes), 1),
            "mismatches_vs_networkx": wrong,
        }
    engine.dispose()
    out["with_over_without"] = round(out["with"]["p50_ms"] / max(out["without"]["p50_ms"], 1e-6), 2)
    return out


def _with_members(g: nx.DiGraph, arcs: list[tuple[str, str]]) -> nx.DiGraph:
    both = g.copy()
    both.add_edges_from(arcs)
    return both


def synthetic(edges: int, *, samples: int, seed: int, postgres: str | None, workdir: Path) -> dict[str, Any]:
    graph = generate(edges, seed=seed)
    bundle = write_bundle(graph, workdir / f"bundle-{edges}")
    found = groups(graph, seed=seed)
    write_groups(found, bundle)
    plain = _learning_graph(graph.edges)
    grouped = _with_members(plain, [(m, t) for _, t, _, options in found for m in options])
    starts = _starts(plain, samples + WARMUP, seed)
    result: dict[str, Any] = {
        "graph": f"synthetic {len(graph.edges):,} edges",
        "groups": len(found),
        "members": sum(len(o) for *_, o in found),
        "samples": len(starts) - WARMUP,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "engines": [],
    }
    with _databases(workdir, f"groups-{edges}", postgres) as urls:
        result["engines"] = [_measure(url, bundle, starts, plain, grouped) for url in urls]
    return result


def catalogue(
    folder: Path, *, samples: int, seed: int, postgres: str | None, workdir: Path
) -> dict[str, Any]:
    bundle = workdir / "ucsd-groups"
    convert(folder, bundle)
    expressions = json.loads((folder / "requirements.json").read_text(encoding="utf-8"))["requirements"]
    plain = nx.DiGraph()
    plain.add_edges_from(
        (r["source_id"], r["target_id"])
        for r in _csv(bundle / "concept_edges.csv")
        if r["relation"] == "prerequisite"
    )
    targets = {r["group_id"]: r["target_id"] for r in _csv(bundle / "requirement_groups.csv")}
    members = [(r["concept_id"], targets[r["group_id"]]) for r in _csv(bundle / "requirement_members.csv")]
    groups_of = targets
    grouped = _with_members(plain, members)
    courses = sorted(expressions)
    starts = random.Random(seed).choices(courses, k=samples + WARMUP)
    result: dict[str, Any] = {
        "graph": "ucsd-catalogue",
        "groups": len(groups_of),
        "members": len(members),
        "samples": samples,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    with _databases(workdir, "ucsd", postgres) as urls:
        result["engines"] = [_measure(url, bundle, starts, plain, grouped) for url in urls]
    return result


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| graph | groups | engine | closure without / with | p50 ms without | p50 ms with | p99 ms without "
        "| p99 ms with | with / without | = networkx | load |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results:
        for m in r["engines"]:
            a, b = m["without"], m["with"]
            ok = a["mismatches_vs_networkx"] + b["mismatches_vs_networkx"]
            lines.append(
                f"| {r['graph']} | {r['groups']:,} | {m['engine']} | {a['closure']} / {b['closure']} "
                f"| {a['p50_ms']} | {b['p50_ms']} | {a['p99_ms']} | {b['p99_ms']} | {m['with_over_without']}x "
                f"| {'yes' if ok == 0 else ok} | {r['load_avg_1m']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_walk_groups", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", default="100000", help="synthetic edge counts, comma-separated")
    parser.add_argument("--catalogue", type=Path, default=dev_graph("ucsd-catalogue", os.environ))
    parser.add_argument("--postgres", default=os.environ.get("KG_TEST_POSTGRES_URL"), help="server URL")
    parser.add_argument("--out", default="out/bench", help="folder for walk_groups.json")
    parser.add_argument("--samples", type=int, default=100, help="timed walks per graph, engine and kind")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="kg-walk-groups-") as tmp:
        if args.catalogue is not None and (args.catalogue / "requirements.json").is_file():
            results.append(
                catalogue(
                    args.catalogue,
                    samples=args.samples,
                    seed=args.seed,
                    postgres=args.postgres,
                    workdir=Path(tmp),
                )
            )
            print(table(results[-1:]), file=sys.stderr)
        for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
            results.append(
                synthetic(
                    size, samples=args.samples, seed=args.seed, postgres=args.postgres, workdir=Path(tmp)
                )
            )
            print(table(results[-1:]).splitlines()[-1], file=sys.stderr)
    report = {
        "command": "python -m evals.bench_walk_groups " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine(),
        "results": results,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "walk_groups.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
