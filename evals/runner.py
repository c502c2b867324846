"""``kg eval``: run a question set against the planning loop and the baselines, score, report.

    kg eval [--questions FILE] [--db URL | --bundle DIR] [--synthesizer offline|deepseek]
            [--baseline NAME ...] [--out DIR] [--limit N] [--record]

Without ``--db`` a fresh temporary SQLite database is migrated and loaded with the bundled
curriculum, or with ``--bundle DIR`` (a ``kg-bundle/1`` folder, e.g. ``evals/bundles/prereqmap``)
instead; with ``--db`` any migrated database works (its own concepts; its questions file must
name them). The report has a per-intent table and the failing phrasings (:mod:`evals.report`).
``--baseline`` picks systems among ``loop``, ``seed-only``, ``graphrag`` and ``whole-graph``
(default: all four; ``whole-graph`` is skipped with a note above 2,000 edges). Every system sees
the same questions and the same synthesizer. Scoring rules: :mod:`evals.metrics`; output files:
:mod:`evals.report`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from data_plane.database import connect
from data_plane.errors import InputError, KGError
from data_plane.reads import GraphReader
from evals.baselines import BASELINES, build_systems
from evals.metrics import Response, Score, score, summarise
from evals.questions import Question, load_questions
from evals.report import (
    failure_table,
    intent_table,
    markdown_table,
    plot_calibration,
    plot_f1_by_type,
    write_report,
)

__all__ = ["MULTI_HOP", "default_questions", "main", "run_eval"]

# Question types that need more than one hop from the seeds.
MULTI_HOP = ("needed_before", "path", "combined")


def default_questions() -> Path:
    """The bundled curriculum question set."""
    return Path(str(resources.files("evals") / "questions" / "curriculum.jsonl"))


@contextmanager
def _database(url: str | None, bundle: Path | None = None) -> Iterator[str]:
    """``url`` as given, or a fresh temporary SQLite loaded with ``bundle`` (default: the bundled
    curriculum) through the real importer."""
    if url:
        yield url
        return
    from control_plane.surfaces.runtime import ensure_initialised

    with tempfile.TemporaryDirectory(prefix="kg-eval-") as tmp:
        fresh = f"sqlite:///{tmp}/eval.sqlite3"
        ensure_initialised(fresh, load_curriculum=bundle is None)
        if bundle is not None:
            from data_plane.bundle import import_bundle
            from data_plane.gateway import WriteGateway

            engine = connect(fresh)
            try:
                import_bundle(WriteGateway(engine), bundle)
            finally:
                engine.dispose()
        yield fresh


def _quiet_logs() -> None:
    """Per-round loop events are noise in a batch run: show warnings and errors only."""
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


def _synthesizer(name: str) -> Any:
    from control_plane.settings import Settings
    from control_plane.surfaces.runtime import build_synthesizer

    # The one place the environment is read: the command's edge.
    return build_synthesizer(Settings.from_env(os.environ, synthesizer=name))


def run_eval(
    questions: Sequence[Question],
    *,
    url: str,
    synthesizer: Any,
    systems: Sequence[str] = BASELINES,
    record: bool = False,
) -> dict[str, Any]:
    """Run every question through every system; return the report dict (see :mod:`evals.report`)."""
    from control_plane.planning.loop import Planner
    from data_plane.gateway import WriteGateway

    engine = connect(url)
    try:
        reader = GraphReader(engine)

        def planner(**options: Any) -> Any:
            return Planner(reader, synthesizer, gateway=WriteGateway(engine) if record else None, **options)

        built, notes = build_systems(list(systems), reader, synthesizer, planner_factory=planner)
        if record:
            for s in built:
                if s.name == "loop":
                    s.record = True  # type: ignore[attr-defined]
        scores: dict[str, list[Score]] = {s.name: [] for s in built}
        rows: list[dict[str, Any]] = []
        started = time.perf_counter()
        for q in questions:
            results: dict[str, Any] = {}
            for system in built:
                try:
                    resp = system.run(q)
                except KGError as exc:  # one bad question must not sink the run
                    resp = Response(abstained=True, error=f"{type(exc).__name__}: {exc}")
                except Exception as exc:  # a traceback: scored as a wrong answer (evals.metrics)
                    resp = Response(abstained=False, error=f"{type(exc).__name__}: {exc}", crashed=True)
                sc = score(
                    q.id,
                    q.type,
                    q.concepts,
                    q.abstain,
                    resp,
                    intent=q.asks,
                    gold_lessons=q.lessons,
                    match=q.match,
                    time_window=q.time_window,
                )
                scores[system.name].append(sc)
                results[system.name] = {
                    **sc.to_dict(),
                    "cited": list(resp.cited),
                    "evidence_size": len(resp.evidence),
                    "text": resp.text,
                    "abstain_reason": resp.abstain_reason,
                    "error": resp.error,
                    "cited_lessons": list(resp.lessons),
                    "as_of_valid": resp.as_of_valid,
                    **resp.extra,
                }
            rows.append({**q.to_dict(), "results": results})
        wall = time.perf_counter() - started
    finally:
        engine.dispose()
    types = sorted({q.type for q in questions})
    intents = sorted({q.asks for q in questions})
    summary = {
        "overall": {name: summarise(sc) for name, sc in scores.items()},
        "answerable": {
            name: summarise([s for s in sc if not s.expect_abstain]) for name, sc in scores.items()
        },
        "multi_hop": {name: summarise([s for s in sc if s.type in MULTI_HOP]) for name, sc in scores.items()},
        "by_type": {
            t: {name: summarise([s for s in sc if s.type == t]) for name, sc in scores.items()} for t in types
        },
        "by_intent": {
            i: {name: summarise([s for s in sc if s.intent == i]) for name, sc in scores.items()}
            for i in intents
        },
    }
    info = getattr(synthesizer, "info", None)
    return {
        "meta": {
            "questions": len(questions),
            "systems": [s.name for s in built],
            "skipped": notes,
            "synthesizer": info.to_dict() if info is not None else str(synthesizer),
            "database": engine.url.render_as_string(hide_password=True),
            "wall_s": round(wall, 3),
            "multi_hop_types": list(MULTI_HOP),
        },
        "summary": summary,
        "questions": rows,
    }


def _markdown(report: dict[str, Any]) -> str:
    meta, summary = report["meta"], report["summary"]
    systems = meta["systems"]
    lines = [
        "# Eval report",
        "",
        f"{meta['questions']} questions; synthesizer `{meta['synthesizer']}`; database `{meta['database']}`; "
        f"wall time {meta['wall_s']} s.",
        "",
    ]
    for name, note in meta["skipped"].items():
        lines.append(f"- **{name}**: {note}")
    for title, key in (
        ("All questions", "overall"),
        ("Answerable questions", "answerable"),
        (f"Multi-hop questions ({', '.join(meta['multi_hop_types'])})", "multi_hop"),
    ):
        lines += ["", f"## {title}", "", markdown_table([(s, summary[key][s]) for s in systems])]
    lines += ["", "## F1 by question type (abstention recall for `unanswerable`)", ""]
    lines.append("| type | n | " + " | ".join(systems) + " |")
    lines.append("|---|---|" + "---|" * len(systems))
    for t, per in summary["by_type"].items():
        cells = []
        for s in systems:
            v = per[s]["f1"] if per[s]["f1"] is not None else per[s]["abstention_recall"]
            cells.append("n/a" if v is None else f"{v:.2f}")
        n = per[systems[0]]["n"] if systems else 0
        lines.append(f"| {t} | {n} | " + " | ".join(cells) + " |")
    for s in systems:
        lines += ["", f"## Per type: {s}", ""]
        lines.append(
            markdown_table([(t, per[s]) for t, per in summary["by_type"].items()]).replace(
                "| system |", "| type |", 1
            )
        )
    for s in systems:
        lines += ["", f"## Per intent: {s}", "", intent_table(summary["by_intent"], summary["overall"], s)]
    if "loop" in systems:
        n, table = failure_table(report["questions"], "loop")
        lines += ["", f"## Loop misses ({n} failing phrasings)", "", table]
    return "\n".join(lines) + "\n"


def _plots(report: dict[str, Any], out: Path) -> list[str]:
    made = [plot_f1_by_type(report["summary"]["by_type"], out / "f1_by_type.png").name]
    for system in report["meta"]["systems"]:
        confs: list[float] = []
        correct: list[bool] = []
        for q in report["questions"]:
            r = q["results"][system]
            if not r["abstained"]:
                confs.append(float(r["confidence"]))
                correct.append(bool(r["exact_match"]))
        ece = report["summary"]["overall"][system]["ece"]
        title = (
            f"{system}: ECE {ece:.3f} over {len(confs)} answers"
            if ece is not None
            else f"{system}: no answers"
        )
        made.append(plot_calibration(confs, correct, out / f"calibration_{system}.png", title=title).name)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="kg eval", description="Score the loop and baselines on a question set."
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=None,
        help="JSON Lines question set (default: bundled curriculum set)",
    )
    parser.add_argument(
        "--db", default=None, help="database URL (default: a fresh temp SQLite with the bundled curriculum)"
    )
    parser.add_argument(
        "--bundle", type=Path, default=None, help="kg-bundle/1 folder to load into the fresh temp SQLite"
    )
    parser.add_argument("--synthesizer", choices=("offline", "deepseek"), default="offline")
    parser.add_argument(
        "--baseline", action="append", choices=BASELINES, help="system to run (repeatable; default: all)"
    )
    parser.add_argument("--out", type=Path, default=Path("eval-report"), help="output directory")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    parser.add_argument("--record", action="store_true", help="record the loop's answers in the database")
    parser.add_argument("--verbose", action="store_true", help="keep the loop's per-round log events")
    args = parser.parse_args(argv)
    if not args.verbose:
        _quiet_logs()
    try:
        questions = load_questions(args.questions or default_questions())
        if args.limit is not None:
            questions = questions[: args.limit]
        synthesizer = _synthesizer(args.synthesizer)
        if args.db and args.bundle:
            raise InputError("give --db or --bundle, not both", field="bundle")
        with _database(args.db, args.bundle) as url:
            report = run_eval(
                questions,
                url=url,
                synthesizer=synthesizer,
                systems=args.baseline or BASELINES,
                record=args.record,
            )
    except KGError as exc:
        print(f"kg eval: {exc}", file=sys.stderr)
        return 2
    report["meta"]["questions_file"] = str(args.questions or default_questions())
    report["meta"]["bundle"] = None if args.bundle is None else str(args.bundle)
    args.out.mkdir(parents=True, exist_ok=True)
    report["meta"]["plots"] = _plots(report, args.out)
    write_report(args.out, report, markdown=_markdown(report))
    overall = report["summary"]["overall"]
    for name in report["meta"]["systems"]:
        s = overall[name]
        print(
            f"{name:12s} F1 {s['f1'] if s['f1'] is not None else float('nan'):.3f}  EM {s['exact_match']:.3f}  "
            f"abstain P/R {s['abstention_precision']}/{s['abstention_recall']}  LLM calls {s['mean_llm_calls']:.2f}"
        )
    print(
        f"wrote {args.out / 'report.json'}, {args.out / 'report.md'} and {len(report['meta']['plots'])} plots"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
