"""Closure sweep: every concept of the curriculum asked "what comes before" and "what does it unlock".

Run ``python -m evals.closure_sweep [--out out/eval] [--bundle evals/bundles/prereqmap --name
closure_sweep_prereqmap]``. On a fresh copy of the bundled curriculum (or ``--bundle``), for every concept with a non-empty needed-before (or unlocks) closure, the loop (offline
synthesizer) answers "What do I need to learn before <name>?" (or "What does <name> unlock, directly or
indirectly?" — a bare "unlock" reads as the direct step, as "unlock next" does);
gold is networkx's ancestors (descendants) over the learning edges in force (prerequisite
source→target, builds_on target→source). Reports per direction: questions, mean F1 (an
abstention scores 0), mean rounds, mean synthesis calls, closure sizes; writes
``closure_sweep.json``. The question set of ``kg eval`` has no unlocks questions; this sweep is
where that direction is measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import networkx as nx

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane.database import connect
from data_plane.reads import GraphReader
from evals.runner import _database

__all__ = ["main", "sweep", "table"]


def _f1(got: set[str], gold: set[str]) -> float:
    if not got or not gold:
        return float(got == gold)
    tp = len(got & gold)
    return 0.0 if tp == 0 else 2 * tp / (len(got) + len(gold))


def sweep(reader: GraphReader) -> dict[str, Any]:
    """Ask both directions for every concept with a non-empty closure; score against networkx."""
    snap = reader.snapshot()
    g = nx.DiGraph()
    g.add_nodes_from(c.concept_id for c in snap.concepts)
    for e in snap.edges:
        if e.relation == "prerequisite":
            g.add_edge(e.source_id, e.target_id)
        elif e.relation == "builds_on":
            g.add_edge(e.target_id, e.source_id)
    planner = Planner(reader, OfflineSynthesizer())
    out: dict[str, Any] = {}
    for direction, template, gold_of in (
        ("needed_before", "What do I need to learn before {}?", nx.ancestors),
        ("unlocks", "What does {} unlock, directly or indirectly?", nx.descendants),
    ):
        f1s: list[float] = []
        rounds: list[int] = []
        calls: list[int] = []
        sizes: list[int] = []
        for c in snap.concepts:
            gold = gold_of(g, c.concept_id)
            if not gold:
                continue
            answer = planner.ask(template.format(c.name), record=False)
            # The answer set its text states (it also cites the asked concept and the paths to it).
            stated = answer.cited_concept_ids if answer.result is None else answer.result.members
            got = set() if answer.abstained else set(stated)
            f1s.append(_f1(got, gold))
            rounds.append(len(answer.rounds))
            calls.append(answer.syntheses)
            sizes.append(len(gold))
        out[direction] = {
            "questions": len(f1s),
            "f1": round(statistics.fmean(f1s), 3),
            "exact": sum(f == 1.0 for f in f1s),
            "mean_rounds": round(statistics.fmean(rounds), 2),
            "mean_syntheses": round(statistics.fmean(calls), 2),
            "closure_p50": statistics.median_low(sizes),
            "closure_max": max(sizes),
        }
    return out


def table(result: dict[str, Any]) -> str:
    """The sweep as a Markdown table, one row per direction."""
    lines = [
        "| direction | questions | F1 | exact | mean rounds | mean synthesis calls | closure p50 | closure max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for d, r in result.items():
        lines.append(
            f"| {d} | {r['questions']} | {r['f1']:.3f} | {r['exact']} | {r['mean_rounds']} "
            f"| {r['mean_syntheses']} | {r['closure_p50']} | {r['closure_max']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.closure_sweep", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("out/eval"))
    parser.add_argument(
        "--bundle", type=Path, default=None, help="a kg-bundle/1 folder instead of the curriculum"
    )
    parser.add_argument("--name", default="closure_sweep", help="output file stem")
    args = parser.parse_args(argv)
    with _database(None, args.bundle) as url:
        engine = connect(url)
        result = sweep(GraphReader(engine))
        engine.dispose()
    print(table(result))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
