"""``kg bench``: whole-loop performance on synthetic curriculum-like graphs, by size.

    kg bench [--sizes 1000,10000,100000,1000000] [--db URL] [--questions 40] [--out DIR]
             [--inmemory-max 100000]

For each size (edges) a seeded graph from :mod:`evals.graphgen` is written as a bundle and
imported (:func:`data_plane.bundle.import_bundle`) into a fresh SQLite file (or ``--db``, which
must then be an empty database, e.g. a fresh PostgreSQL database; use one size at a time). Then,
in a separate child process (so peak RSS is the loop's own, not the import's):

* **whole-loop overhead excluding the LLM**: ``Planner.ask`` with a scripted zero-latency
  synthesizer that always answers with confidence 0.5 — below the 0.80 threshold — so every
  question runs all 4 rounds and then abstains (one-hop rounds: the planner's recursive walks
  are switched off here and measured by :mod:`evals.bench_walks`). Per question: p50/p99 of the wall time of ``ask``
  (seeding, 4 expansions, ranking, verification, the answer object; nothing recorded);
* **expansion latency per round**: each ``neighbours`` call the loop makes (one SQL statement per
  round), p50/p99, captured by a recording expander wrapped around the real store;
* **peak RSS** of that process after the loop phase (``ru_maxrss``);
* **as-of snapshot** (``GraphReader.snapshot`` as of the past) and **history**
  (``GraphReader.history`` of random edges) latency;
* **in-memory comparators for the same expansions**: the recorded ``neighbours`` calls replayed
  against a networkx ``MultiDiGraph`` and LlamaIndex's ``SimplePropertyGraphStore.get_rel_map``
  (depth 1), built after the RSS reading; reported as time ratios ours / theirs. Skipped above
  ``--inmemory-max`` edges (building them costs GBs), with a note.

Import throughput (edges/s over parse + validate + one transaction) comes from the import child.
This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

__all__ = ["RecordingExpander", "main", "measure_import", "measure_loop"]

CONFIDENCE = 0.5  # below the 0.80 threshold: the loop runs all four rounds


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[max(0, min(len(s) - 1, round(q * (len(s) - 1))))], 3)


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class RecordingExpander:
    """Wraps the planner's expander; records each call (ids, as_of, exclude) and its latency."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[list[str], Any, list[str], float, int]] = []
        self.walks: list[tuple[list[str], float, int]] = []

    def neighbours(
        self,
        ids: Collection[str],
        *,
        as_of: Any,
        exclude: Collection[str] = (),
        relations: Collection[str] | None = None,
    ) -> list[Any]:
        t0 = time.perf_counter()
        out: list[Any] = self.inner.neighbours(ids, as_of=as_of, exclude=exclude, relations=relations)
        self.calls.append((sorted(ids), as_of, sorted(exclude), _ms(t0), len(out)))
        return out

    def walk(self, ids: Collection[str], *, as_of: Any, exclude: Collection[str] = (), **options: Any) -> Any:
        t0 = time.perf_counter()
        out = self.inner.walk(ids, as_of=as_of, exclude=exclude, **options)
        # Kept apart from the one-hop calls, which the in-memory comparators replay.
        self.walks.append((sorted(ids), _ms(t0), len(out.rows)))
        return out


def measure_import(edges: int, *, url: str, workdir: Path, seed: int) -> dict[str, Any]:
    """Generate and import one graph; throughput and the import's own peak RSS."""
    from data_plane import WriteGateway, connect, migrate
    from data_plane.bundle import import_bundle
    from evals.graphgen import generate, write_bundle

    graph = generate(edges, seed=seed)
    bundle = write_bundle(graph, workdir / f"bundle-{edges}")
    engine = connect(url)
    try:
        migrate(engine)
        t0 = time.perf_counter()
        import_bundle(WriteGateway(engine), bundle)
        import_s = time.perf_counter() - t0
    finally:
        engine.dispose()
    return {
        "edges": len(graph.edges),
        "concepts": len(graph.concepts),
        "import_s": round(import_s, 3),
        "import_edges_per_s": round(len(graph.edges) / import_s),
        "import_peak_rss_mb": _rss_mb(),
    }


def measure_loop(edges: int, *, url: str, seed: int, questions: int, inmemory_max: int) -> dict[str, Any]:
    """Run the loop with the scripted synthesizer, then the reads and the comparators."""
    from control_plane.planning.graph_store import SQLPropertyGraphStore
    from control_plane.planning.loop import Planner
    from control_plane.testing import ScriptedSynthesizer, draft
    from data_plane import GraphReader, connect
    from data_plane.clock import parse_time
    from evals.graphgen import generate

    engine = connect(url)
    reader = GraphReader(engine)
    store = RecordingExpander(SQLPropertyGraphStore(reader))
    # Walks off: this measures four one-hop rounds; evals.bench_walks measures the walk.
    planner = Planner(reader, ScriptedSynthesizer([draft(CONFIDENCE)]), store=store, walks=False)
    rng = random.Random(seed)
    # Question names and history keys come from the database, never from an in-memory copy of
    # the graph: the peak RSS below must be the loop's, not the harness's.
    with engine.connect() as conn:
        names = [
            n for (n,) in conn.exec_driver_sql("SELECT name FROM concepts ORDER BY version_id LIMIT 5000")
        ]
        edge_keys = [
            (s, t, r)
            for s, t, r in conn.exec_driver_sql(
                "SELECT source_id, target_id, relation FROM concept_edges ORDER BY version_id LIMIT 5000"
            )
        ]
    planner.ask(f"What comes before {names[0]}?", record=False)  # warm-up: name index, caches
    store.calls.clear()
    per_question: list[float] = []
    rounds: list[int] = []
    for _ in range(questions):
        name = rng.choice(names)
        t0 = time.perf_counter()
        answer = planner.ask(f"What must I master before {name}?", record=False)
        per_question.append(_ms(t0))
        rounds.append(len(answer.rounds))
    expansion = [c[3] for c in store.calls]
    loop_rss = _rss_mb()

    past = reader.as_of(parse_time("2024-06-01"))
    t0 = time.perf_counter()
    snap = reader.snapshot(past)
    snapshot_ms = _ms(t0)
    keys = rng.sample(edge_keys, min(50, len(edge_keys)))
    history: list[float] = []
    for key in keys:
        t0 = time.perf_counter()
        reader.history("concept_edges", key)
        history.append(_ms(t0))
    engine.dispose()

    result: dict[str, Any] = {
        "questions": questions,
        "synthesizer": f"scripted, confidence {CONFIDENCE} (always below threshold: 4 rounds, abstain)",
        "mean_rounds": statistics.fmean(rounds),
        "loop_p50_ms": _pct(per_question, 0.5),
        "loop_p99_ms": _pct(per_question, 0.99),
        "expansion_calls": len(expansion),
        "expansion_p50_ms": _pct(expansion, 0.5),
        "expansion_p99_ms": _pct(expansion, 0.99),
        "expansion_mean_rows": round(statistics.fmean(c[4] for c in store.calls), 1) if store.calls else None,
        "loop_peak_rss_mb": loop_rss,
        "snapshot_ms": round(snapshot_ms, 3),
        "snapshot_edges": len(snap.edges),
        "history_p50_ms": _pct(history, 0.5),
        "history_p99_ms": _pct(history, 0.99),
    }
    if edges > inmemory_max:
        result["inmemory_note"] = f"in-memory comparators skipped above {inmemory_max:,} edges"
        return result
    graph = generate(edges, seed=seed)  # same seed: the same graph as imported
    result.update(_comparators(graph, store.calls, expansion))
    return result


def _comparators(
    graph: Any, calls: list[tuple[list[str], Any, list[str], float, int]], ours: list[float]
) -> dict[str, Any]:
    """Replay the recorded expansions in memory: networkx and LlamaIndex SimplePropertyGraphStore."""
    import networkx as nx
    from llama_index.core.graph_stores.simple_labelled import SimplePropertyGraphStore
    from llama_index.core.graph_stores.types import EntityNode, Relation

    g = nx.MultiDiGraph()
    g.add_nodes_from(c[0] for c in graph.concepts)
    for s, t, r, _ in graph.edges:
        g.add_edge(s, t, key=r)
    nx_times: list[float] = []
    for ids, _as_of, exclude, _, _ in calls:
        skip = set(exclude)
        t0 = time.perf_counter()
        found = []
        for i in ids:
            found += [(i, v, k) for _, v, k in g.out_edges(i, keys=True) if v not in skip]
            found += [(u, i, k) for u, _, k in g.in_edges(i, keys=True) if u not in skip]
        nx_times.append(_ms(t0))

    store = SimplePropertyGraphStore()
    nodes = {c[0]: EntityNode(name=c[0], label="Concept", properties={"title": c[1]}) for c in graph.concepts}
    store.upsert_nodes(list(nodes.values()))
    store.upsert_relations(
        [Relation(label=r, source_id=nodes[s].id, target_id=nodes[t].id) for s, t, r, _ in graph.edges]
    )
    li_times: list[float] = []
    for ids, _as_of, _exclude, _, _ in calls:
        t0 = time.perf_counter()
        store.get_rel_map([nodes[i] for i in ids], depth=1, limit=10_000)
        li_times.append(_ms(t0))
    p50 = _pct(ours, 0.5) or 0.0
    nx50, li50 = _pct(nx_times, 0.5) or 0.0, _pct(li_times, 0.5) or 0.0
    return {
        "networkx_p50_ms": nx50,
        "llamaindex_simple_p50_ms": li50,
        "ratio_ours_to_networkx": round(p50 / nx50, 1) if nx50 else None,
        "ratio_ours_to_llamaindex": round(p50 / li50, 2) if li50 else None,
    }


def _plots(results: list[dict[str, Any]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["edges"] for r in results]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (
        ("loop_p50_ms", "whole loop p50 (4 rounds)"),
        ("loop_p99_ms", "whole loop p99"),
        ("expansion_p50_ms", "expansion p50 (per round)"),
        ("expansion_p99_ms", "expansion p99"),
        ("history_p50_ms", "history p50"),
    ):
        ax.plot(xs, [float(r.get(key) or "nan") for r in results], "o-", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("edges")
    ax.set_ylabel("ms")
    ax.set_title("Latency against graph size (SQLite, LLM excluded)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "bench_latency.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(
        xs, [float(r.get("loop_peak_rss_mb") or "nan") for r in results], "o-", label="loop process peak RSS"
    )
    ax.plot(
        xs,
        [float(r.get("import_peak_rss_mb") or "nan") for r in results],
        "s--",
        label="import process peak RSS",
    )
    ax.set_xscale("log")
    ax.set_xlabel("edges")
    ax.set_ylabel("MB")
    ax.set_title("Peak memory against graph size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "bench_memory.png", dpi=110)
    plt.close(fig)
    return ["bench_latency.png", "bench_memory.png"]


def _table(results: list[dict[str, Any]]) -> str:
    from evals.report import fmt

    cols = (
        ("edges", "edges"),
        ("import_edges_per_s", "import edges/s"),
        ("loop_p50_ms", "loop p50 ms"),
        ("loop_p99_ms", "loop p99 ms"),
        ("expansion_p50_ms", "expand p50 ms"),
        ("expansion_p99_ms", "expand p99 ms"),
        ("loop_peak_rss_mb", "loop RSS MB"),
        ("import_peak_rss_mb", "import RSS MB"),
        ("snapshot_ms", "snapshot ms"),
        ("history_p50_ms", "history p50 ms"),
        ("ratio_ours_to_networkx", "ours/networkx"),
        ("ratio_ours_to_llamaindex", "ours/LlamaIndex"),
    )
    lines = ["| " + " | ".join(t for _, t in cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        lines.append("| " + " | ".join(fmt(r.get(k)) for k, _ in cols) + " |")
    return "\n".join(lines)


def _child(args: argparse.Namespace, phase: str, size: int, url: str, workdir: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "evals.bench", "--phase", phase, "--sizes", str(size), "--url", url]
    cmd += ["--workdir", str(workdir), "--seed", str(args.seed), "--questions", str(args.questions)]
    cmd += ["--inmemory-max", str(args.inmemory_max)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kg bench", description="Whole-loop performance by graph size.")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="edge counts, comma-separated")
    parser.add_argument(
        "--db", default=None, help="an EMPTY database URL (default: a fresh SQLite file per size)"
    )
    parser.add_argument("--questions", type=int, default=40, help="timed questions per size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--inmemory-max", type=int, default=100_000, help="largest size for in-memory comparators"
    )
    parser.add_argument("--out", type=Path, default=Path("bench-report"))
    parser.add_argument("--phase", choices=("import", "loop"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    from evals.runner import _quiet_logs

    _quiet_logs()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.phase:  # child process: one phase, one size, JSON on stdout
        if args.phase == "import":
            res = measure_import(sizes[0], url=args.url, workdir=args.workdir, seed=args.seed)
        else:
            res = measure_loop(
                sizes[0],
                url=args.url,
                seed=args.seed,
                questions=args.questions,
                inmemory_max=args.inmemory_max,
            )
        print(json.dumps(res))
        return 0

    from evals.bench_dataplane import machine

    results = []
    with tempfile.TemporaryDirectory(prefix="kg-bench-loop-") as tmp:
        for size in sizes:
            url = args.db or f"sqlite:///{tmp}/loop-{size}.sqlite3"
            res = _child(args, "import", size, url, Path(tmp))
            res.update(_child(args, "loop", size, url, Path(tmp)))
            res["database"] = "postgresql" if url.startswith("postgresql") else "sqlite"
            results.append(res)
            print(
                f"{size:>9,} edges: loop p50 {res['loop_p50_ms']} ms, expansion p50 {res['expansion_p50_ms']} ms, "
                f"RSS {res['loop_peak_rss_mb']} MB, import {res['import_edges_per_s']:,} edges/s",
                file=sys.stderr,
            )
    args.out.mkdir(parents=True, exist_ok=True)
    report = {
        "command": "kg bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "results": results,
    }
    report["plots"] = _plots(results, args.out)
    (args.out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = _table(results)
    (args.out / "bench.md").write_text(table + "\n", encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
