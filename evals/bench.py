"""``kg bench``: whole-loop performance on synthetic curriculum-like graphs, by size.

    kg [--db URL] bench [--sizes 1000,10000,100000,1000000] [--questions 40] [--out DIR]
                        [--inmemory-max 100000] [--seed 7] [--cache DIR] [--postgres-max N]

The command line lives in :mod:`control_plane.surfaces.cli`; this module is what it calls
(:func:`bench`), callable from Python as well.

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
Every figure sits beside the raw driver measured in the same run: the recorded expansions
replayed as raw driver statements (ratio ours / raw), a raw insert of the same rows (import as a
share of it), a raw ``SELECT`` written to the same bundle files (export ratio), and the loop
against 12 raw expansions + 2 ms. With ``KG_TEST_POSTGRES_URL`` set, PostgreSQL runs beside SQLite.
This is a benchmark, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

__all__ = ["RecordingExpander", "bench", "measure_export", "measure_import", "measure_loop", "result_line"]

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


def measure_import(
    edges: int, *, url: str, workdir: Path, seed: int, raw_url: str | None = None
) -> dict[str, Any]:
    """Generate and import one graph; throughput and the import's own peak RSS. With
    ``raw_url`` (another empty database of the same engine), the same rows are also inserted
    there by the bare driver (:func:`evals.bench_raw.raw_insert`), for the ratio."""
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
    result: dict[str, Any] = {
        "edges": len(graph.edges),
        "concepts": len(graph.concepts),
        "import_s": round(import_s, 3),
        "import_edges_per_s": round(len(graph.edges) / import_s),
        "import_peak_rss_mb": _rss_mb(),
    }
    if raw_url is not None:
        from evals.bench_raw import raw_insert

        raw_engine = connect(raw_url)
        migrate(raw_engine)
        raw_engine.dispose()
        raw_s = raw_insert(raw_url, _raw_rows(graph, sqlite=raw_url.startswith("sqlite")))
        result["raw_insert_edges_per_s"] = round(len(graph.edges) / raw_s)
        result["import_to_raw_insert"] = round(raw_s / import_s, 3)
    return result


def _raw_rows(graph: Any, *, sqlite: bool) -> dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    """The rows an import of ``graph`` writes, as the bare driver wants them."""
    from data_plane.clock import parse_time, utc_now
    from data_plane.relations import canonical_edge
    from evals.graphgen import DEFAULTS

    now, valid = utc_now(), parse_time(str(DEFAULTS["valid_at"]))

    def stamp(t: Any) -> Any:
        return t.replace(tzinfo=None).isoformat(sep=" ") if sqlite else t

    ev = json.dumps(DEFAULTS["evidence"])
    g = ("assert", 0.9, str(DEFAULTS["reason"]), str(DEFAULTS["source"]), ev, stamp(valid), stamp(now))
    tail = ("op", "confidence", "reason", "source", "evidence", "valid_at", "recorded_at")
    concepts = [(cid, name, json.dumps([alias]), summary, *g) for cid, name, alias, summary in graph.concepts]
    edges = [(*canonical_edge(s, t, r), "assert", 0.9, reason, *g[3:]) for s, t, r, reason in graph.edges]
    lessons = sorted({graph.lesson_of(i) for i in range(len(graph.concepts))})
    return {
        "concepts": (("concept_id", "name", "aliases", "summary", *tail), concepts),
        "concept_edges": (("source_id", "target_id", "relation", *tail), edges),
        "lessons": (("lesson_id", "title", *tail), [(lid, f"Lesson {lid}", *g) for lid in lessons]),
        "lesson_concepts": (
            ("lesson_id", "concept_id", *tail),
            [(graph.lesson_of(i), c[0], *g) for i, c in enumerate(graph.concepts)],
        ),
    }


def measure_loop(edges: int, *, url: str, seed: int, questions: int, inmemory_max: int) -> dict[str, Any]:
    """Run the loop with the scripted synthesizer, then the reads and the comparators."""
    from control_plane.planning.expansion import ReaderExpander
    from control_plane.planning.loop import Planner
    from control_plane.testing import ScriptedSynthesizer, draft
    from data_plane import GraphReader, connect
    from data_plane.clock import parse_time
    from evals.graphgen import generate

    engine = connect(url)
    reader = GraphReader(engine)
    # The offline answer path's expander: LlamaIndex is not imported, as in ``kg ask``. Walks
    # off: this measures four one-hop rounds; evals.bench_walks measures the walk.
    store = RecordingExpander(ReaderExpander(reader))
    # The scripted synthesizer keeps no requests: the peak RSS below is the loop's, not the harness's.
    synthesizer = ScriptedSynthesizer([draft(CONFIDENCE)], keep_requests=False)
    planner = Planner(reader, synthesizer, store=store, walks=False)
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
    raw = _raw_expansions(reader, url, store.calls)

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
        **raw,
        "loop_target_ms": round(12 * raw["raw_expansion_p50_ms"] + 2, 3),
        "loop_to_target": round((_pct(per_question, 0.5) or 0.0) / (12 * raw["raw_expansion_p50_ms"] + 2), 3),
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


def _raw_expansions(
    reader: Any, url: str, calls: list[tuple[list[str], Any, list[str], float, int]], passes: int = 2
) -> dict[str, Any]:
    """The loop's recorded expansions replayed, each ours (``GraphReader.neighbourhood``) and raw
    (:meth:`evals.bench_raw.RawDriver.expansion`) back to back, alternating which goes first, so
    both see the same machine load; the ratio is the median of the per-call ratios."""
    from evals.bench_raw import RawDriver

    driver = RawDriver(url)
    ours: list[float] = []
    raws: list[float] = []
    mismatched = 0
    try:
        for i in range(passes * len(calls)):
            ids, as_of, exclude, _, _ = calls[i % len(calls)]
            timings: dict[str, float] = {}
            for side in ("ours", "raw") if i % 2 == 0 else ("raw", "ours"):
                t0 = time.perf_counter()
                if side == "ours":
                    n_ours = len(reader.neighbourhood(ids, as_of=as_of, exclude=exclude))
                else:
                    n_raw = len(driver.expansion(ids, exclude, as_of.valid_at, as_of.recorded_at))
                timings[side] = _ms(t0)
            mismatched += n_ours != n_raw
            ours.append(timings["ours"])
            raws.append(timings["raw"])
    finally:
        driver.close()
    ratios = [o / r for o, r in zip(ours, raws, strict=True) if r > 0]
    return {
        "raw_expansion_p50_ms": _pct(raws, 0.5) or 0.0,
        "replayed_expansion_p50_ms": _pct(ours, 0.5),
        "expansion_to_raw": round(statistics.median(ratios), 2) if ratios else None,
        "raw_row_mismatches": mismatched,
    }


def measure_export(edges: int, *, url: str, workdir: Path) -> dict[str, Any]:
    """Bundle export of the whole graph (ours, streamed) against the raw driver's SELECTs
    written to the same files; the raw side runs before and after ours, the faster counts."""
    from data_plane import GraphReader, connect
    from data_plane.bundle import export_bundle
    from evals.bench_raw import raw_export

    reader = GraphReader(connect(url))
    as_of = reader.as_of()
    raw_s = []
    t0 = time.perf_counter()
    raw_export(url, as_of.valid_at, as_of.recorded_at, workdir / f"raw-export-{edges}")
    raw_s.append(time.perf_counter() - t0)
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    counts = export_bundle(reader, workdir / f"export-{edges}", as_of=as_of)
    ours_s = time.perf_counter() - t0
    export_rss = _rss_mb()
    t0 = time.perf_counter()
    raw_export(url, as_of.valid_at, as_of.recorded_at, workdir / f"raw-export-{edges}")
    raw_s.append(time.perf_counter() - t0)
    same = all(
        (workdir / f"export-{edges}" / f).read_bytes() == (workdir / f"raw-export-{edges}" / f).read_bytes()
        for f in ("concepts.csv", "concept_edges.csv", "lesson_concepts.csv")
    )
    return {
        "export_s": round(ours_s, 3),
        "export_edges": counts["concept_edges"],
        "raw_export_s": round(min(raw_s), 3),
        "export_to_raw": round(ours_s / min(raw_s), 2),
        "export_same_bytes": same,
        "export_peak_rss_mb": export_rss,
        "export_rss_before_mb": rss_before,
    }


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

    engines = sorted({r.get("database", "sqlite") for r in results})

    def series(engine: str, key: str) -> tuple[list[int], list[float]]:
        rows = [r for r in results if r.get("database", "sqlite") == engine]
        return [r["edges"] for r in rows], [float(r.get(key) or "nan") for r in rows]

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for engine in engines:
        for key, label, style in (
            ("loop_p50_ms", "whole loop p50 (4 rounds)", "o-"),
            ("loop_target_ms", "target: 12 x raw expansion + 2 ms", "k:"),
            ("replayed_expansion_p50_ms", "expansion p50", "s-"),
            ("raw_expansion_p50_ms", "raw sqlite3/psycopg expansion p50", "s--"),
        ):
            ax.plot(*series(engine, key), style, label=f"{label} [{engine}]")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("edges")
    ax.set_ylabel("ms")
    ax.set_title("Latency against graph size, beside the raw driver (LLM excluded)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "bench_latency.png", dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for engine in engines:
        for key, label, style in (
            ("loop_peak_rss_mb", "loop process", "o-"),
            ("export_peak_rss_mb", "export process", "^-"),
            ("import_peak_rss_mb", "import process", "s--"),
        ):
            ax.plot(*series(engine, key), style, label=f"{label} [{engine}]")
    ax.axhline(150, color="grey", linestyle=":", label="loop target 150 MB")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("edges")
    ax.set_ylabel("peak RSS, MB")
    ax.set_title("Peak memory against graph size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "bench_memory.png", dpi=110)
    plt.close(fig)
    return ["bench_latency.png", "bench_memory.png"]


def _table(results: list[dict[str, Any]]) -> str:
    from evals.report import fmt

    cols = (
        ("database", "engine"),
        ("edges", "edges"),
        ("replayed_expansion_p50_ms", "expand p50 ms"),
        ("raw_expansion_p50_ms", "raw expand p50 ms"),
        ("expansion_to_raw", "expand / raw"),
        ("loop_p50_ms", "loop p50 ms"),
        ("loop_target_ms", "12 raw + 2 ms"),
        ("loop_to_target", "loop / target"),
        ("loop_peak_rss_mb", "loop RSS MB"),
        ("export_s", "export s"),
        ("raw_export_s", "raw export s"),
        ("export_to_raw", "export / raw"),
        ("export_peak_rss_mb", "export RSS MB"),
        ("import_edges_per_s", "import edges/s"),
        ("raw_insert_edges_per_s", "raw insert edges/s"),
        ("import_to_raw_insert", "import / raw rate"),
        ("import_peak_rss_mb", "import RSS MB"),
        ("ratio_ours_to_networkx", "ours/networkx"),
    )
    lines = ["| " + " | ".join(t for _, t in cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        lines.append("| " + " | ".join(fmt(r.get(k)) for k, _ in cols) + " |")
    return "\n".join(lines)


def _child(phase: str, size: int, url: str, workdir: Path, job: dict[str, Any]) -> dict[str, Any]:
    """One phase for one size in a fresh process (so its peak RSS is its own)."""
    payload = {**job, "phase": phase, "size": size, "url": url, "workdir": str(workdir)}
    cmd = [sys.executable, "-m", "evals.bench", json.dumps(payload)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _run_child(job: dict[str, Any]) -> dict[str, Any]:
    from evals.runner import _quiet_logs

    _quiet_logs()
    workdir = Path(job["workdir"])
    if job["phase"] == "import":
        return measure_import(
            job["size"], url=job["url"], workdir=workdir, seed=job["seed"], raw_url=job.get("raw_url")
        )
    if job["phase"] == "export":
        return measure_export(job["size"], url=job["url"], workdir=workdir)
    return measure_loop(
        job["size"],
        url=job["url"],
        seed=job["seed"],
        questions=job["questions"],
        inmemory_max=job["inmemory_max"],
    )


def _on_server(server_url: str, *statements: str) -> None:
    import sqlalchemy as sa

    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for sql in statements:
                conn.exec_driver_sql(sql)
    finally:
        admin.dispose()


def _scratch_postgres(server_url: str, name: str) -> str:
    """A fresh, empty PostgreSQL database next to ``server_url``'s (dropped first if left over)."""
    import sqlalchemy as sa

    _on_server(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)


def _one_size(
    size: int, url: str, raw_url: str | None, work: Path, job: dict[str, Any], cache: Path | None
) -> dict[str, Any]:
    """Import (or reuse a cached SQLite import), loop and export children for one size, one engine."""
    cached = None
    if cache is not None and url.startswith("sqlite"):
        cached = cache / f"bench-{size}-seed{job['seed']}.json"
    if cached is not None and cached.exists():
        res: dict[str, Any] = json.loads(cached.read_text(encoding="utf-8"))
        res["import_cached"] = True
    else:
        res = _child("import", size, url, work, {**job, "raw_url": raw_url})
        if cached is not None:
            cached.write_text(json.dumps(res) + "\n", encoding="utf-8")
    res.update(_child("loop", size, url, work, job))
    res.update(_child("export", size, url, work, job))
    res["database"] = "postgresql" if url.startswith("postgresql") else "sqlite"
    return res


def bench(
    *,
    out: Path,
    sizes: Sequence[int] = (1000, 10_000, 100_000, 1_000_000),
    db: str | None = None,
    questions: int = 40,
    seed: int = 7,
    inmemory_max: int = 100_000,
    cache: Path | None = None,
    postgres_max: int = 100_000,
    command: str = "kg bench",
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """``kg bench``: import, time the loop and export at each size, each beside the raw driver in
    the same run (a fresh SQLite file per size, or ``db``, which must be an empty database; with
    ``KG_TEST_POSTGRES_URL`` set and no ``db``, PostgreSQL too up to ``postgres_max`` edges);
    ``cache`` keeps imported SQLite files for later runs. Writes ``bench.json``, ``bench.md`` and
    plots into ``out``; returns the report. ``progress`` is told (done, total, what) per size."""
    from evals.bench_dataplane import machine

    job = {"seed": seed, "questions": questions, "inmemory_max": inmemory_max}
    postgres = os.environ.get("KG_TEST_POSTGRES_URL") if db is None else None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kg-bench-loop-") as tmp:
        for i, size in enumerate(sizes):
            if progress is not None:
                progress(i, len(sizes), f"{size:,} edges")
            work = Path(tmp) / str(size)
            work.mkdir()
            home = cache if cache is not None else work
            url = db or f"sqlite:///{home}/bench-{size}-seed{seed}.sqlite3"
            # A given db is one empty database: the raw insert needs another, so it is skipped.
            raw_url = None if db else f"sqlite:///{work}/raw-insert.sqlite3"
            results.append(_one_size(size, url, raw_url, work, job, cache))
            if postgres and size <= postgres_max:
                names = (f"kg_bench_{size}_{os.getpid()}", f"kg_bench_{size}_{os.getpid()}_raw")
                try:
                    pg_url = _scratch_postgres(postgres, names[0])
                    pg_raw = _scratch_postgres(postgres, names[1])
                    results.append(_one_size(size, pg_url, pg_raw, work, job, None))
                finally:
                    for name in names:
                        _on_server(postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if progress is not None:
            progress(len(sizes), len(sizes), "done")
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"command": command, "machine": machine(), "results": results}
    report["plots"] = _plots(results, out)
    (out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    report["table"] = _table(results)
    (out / "bench.md").write_text(report["table"] + "\n", encoding="utf-8")
    return report


def result_line(res: dict[str, Any]) -> str:
    """One size's headline ratios against the raw driver measured in the same run."""
    return (
        f"{res['edges']:>9,} edges ({res['database']}): expansion {res['expansion_to_raw']}x raw, "
        f"loop {res['loop_to_target']}x target, RSS {res['loop_peak_rss_mb']} MB, "
        f"export {res['export_to_raw']}x raw, import {res.get('import_to_raw_insert')} of raw"
    )


if __name__ == "__main__":  # the child process of :func:`_child`: one phase, JSON in, JSON out
    print(json.dumps(_run_child(json.loads(sys.argv[1]))))
