"""What requirement groups cost a whole question: the loop of ``kg bench`` on the same graph
imported without and with its groups, beside its target.

Run ``python -m evals.bench_loop_groups [--sizes 100000] [--catalogue DIR] [--questions 200]
[--out out/bench]``:

* **synthetic**: for each size (edges) the seeded graph of ``evals.graphgen``, imported once as
  it is and once with its groups (``graphgen.groups``: a fifth of the concepts needs one of 2-4
  concepts of earlier layers);
* **catalogue** (default ``../shared/dev-graphs/ucsd-catalogue`` when present): the catalogue as
  it is (plain prerequisites only) and converted with its 366 groups (``evals.catalogue_groups``).

Each graph goes through ``evals.bench.measure_loop`` (the scripted synthesizer below the threshold:
four one-hop rounds, abstaining; on a graph with groups every round also reads the groups of
what it gathered), whose target is 12 raw expansions + 2 ms of the same run; then what a learner
waits for, ``kg ask``'s offline loop (walks) on "What do I need before X?". SQLite files. A
benchmark, not a test: nothing asserts a timing. Writes ``loop_groups.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data_plane import WriteGateway, connect, migrate
from data_plane.bundle import import_bundle
from evals.bench import _pct, measure_loop
from evals.catalogue_groups import convert
from evals.dev_graphs import dev_graph
from evals.graphgen import generate, groups, write_bundle, write_groups

__all__ = ["main"]

GROUP_FILES = ("requirement_groups.csv", "requirement_members.csv")
KEPT = (
    "loop_p50_ms",
    "loop_p99_ms",
    "loop_target_ms",
    "loop_to_target",
    "raw_expansion_p50_ms",
    "loop_peak_rss_mb",
)


def _plain_copy(bundle: Path, out: Path) -> Path:
    """``bundle`` without its requirement group files."""
    shutil.copytree(bundle, out, ignore=shutil.ignore_patterns(*GROUP_FILES))
    return out


def _loop(bundle: Path, workdir: Path, tag: str, *, edges: int, questions: int) -> dict[str, Any]:
    url = f"sqlite:///{workdir}/{tag}.sqlite3"
    engine = connect(url)
    migrate(engine)
    import_bundle(WriteGateway(engine), bundle)
    engine.dispose()
    got = measure_loop(edges, url=url, seed=7, questions=questions, inmemory_max=0)  # no comparators
    return {**{k: got[k] for k in KEPT}, **_asked(url, questions)}


def _asked(url: str, questions: int) -> dict[str, Any]:
    """What a learner waits for: ``kg ask``'s offline loop (walks, the offline synthesizer) on
    "What do I need before X?" for courses drawn at random."""
    from control_plane.planning.loop import Planner
    from control_plane.synthesizers.offline import OfflineSynthesizer
    from data_plane import GraphReader

    engine = connect(url)
    planner = Planner(GraphReader(engine), OfflineSynthesizer())
    with engine.connect() as conn:
        names = [
            n for (n,) in conn.exec_driver_sql("SELECT name FROM concepts ORDER BY version_id LIMIT 5000")
        ]
    rng = random.Random(7)
    planner.ask(f"What do I need before {names[0]}?", record=False)  # warm-up
    times, answered = [], 0
    for _ in range(questions):
        t0 = time.perf_counter()
        answer = planner.ask(f"What do I need before {rng.choice(names)}?", record=False)
        times.append((time.perf_counter() - t0) * 1000)
        answered += not answer.abstained
    engine.dispose()
    return {"ask_p50_ms": _pct(times, 0.5), "ask_p99_ms": _pct(times, 0.99), "ask_answered": answered}


def _pair(bundle: Path, workdir: Path, name: str, *, edges: int, questions: int) -> dict[str, Any]:
    plain = _plain_copy(bundle, workdir / f"{name}-plain")
    return {
        "graph": name,
        "without": _loop(plain, workdir, f"{name}-without", edges=edges, questions=questions),
        "with": _loop(bundle, workdir, f"{name}-with", edges=edges, questions=questions),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_loop_groups", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--catalogue", type=Path, default=dev_graph("ucsd-catalogue", os.environ))
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("out/bench"))
    args = parser.parse_args(argv)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kg-bench-loop-groups-") as tmp:
        work = Path(tmp)
        for edges in (int(s) for s in args.sizes.split(",") if s):
            graph = generate(edges, seed=7)
            bundle = write_bundle(graph, work / f"synthetic-{edges}")
            write_groups(groups(graph, seed=7), bundle)
            results.append(
                _pair(bundle, work, f"synthetic {edges:,} edges", edges=edges, questions=args.questions)
            )
        if args.catalogue is not None:
            bundle = work / "ucsd-groups"
            convert(args.catalogue, bundle)
            results.append(_pair(bundle, work, "ucsd-catalogue", edges=1, questions=args.questions))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "loop_groups.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(
        "| graph | groups | loop p50 ms | loop p99 ms | 12 raw + 2 ms | loop / target | kg ask p50 ms | kg ask p99 ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        for label in ("without", "with"):
            x = r[label]
            print(
                f"| {r['graph']} | {label} | {x['loop_p50_ms']:.2f} | {x['loop_p99_ms']:.2f} | "
                f"{x['loop_target_ms']:.2f} | {x['loop_to_target']:.2f} | {x['ask_p50_ms']:.2f} | {x['ask_p99_ms']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
