"""``kg eval``: run a question set against the planning loop and the baselines, score, report.

    kg [--db URL] eval [--questions FILE] [--corpus NAME] [--round N] [--bundle DIR [--set-aside]]
                       [--synthesizer offline|deepseek] [--baseline NAME ...] [--out DIR]
                       [--limit N] [--record]

The command line lives in :mod:`control_plane.surfaces.cli`; this module is what it calls
(:func:`evaluate`, :func:`summary_lines`), callable from Python as well. Without ``--db`` a fresh
temporary SQLite database is migrated and loaded with the bundled curriculum, or with ``--bundle
DIR`` (a ``kg-bundle/1`` folder, e.g. ``evals/bundles/prereqmap``) instead; with ``--db`` any
migrated database works (its own concepts; its questions file must name them). A bundle with
prerequisite cycles is refused as ``kg import`` refuses it; ``--set-aside`` imports it as ``kg
import --set-aside`` does (each cycle's breaking row set aside, deterministically), for real maps
such as LectureBank whose questions are written so that their gold does not depend on which row
that is (``evals/questions/build_lecturebank.py``). The report has a
per-intent table and the failing phrasings (:mod:`evals.report`). ``--baseline`` picks systems
among ``loop``, ``seed-only``, ``graphrag`` and ``whole-graph`` (default: all four;
``whole-graph`` is skipped with a note above 2,000 edges). Every system sees the same questions
and the same synthesizer. Scoring rules: :mod:`evals.metrics`; output files: :mod:`evals.report`.

``--corpus`` and ``--round`` score only the questions of one corpus (``paraphrase``, ``forms``) or
one blind round of a file that holds several (``evals/questions/{graph}_{split}.jsonl.gz``), e.g.
``--questions evals/questions/curriculum_holdout.jsonl.gz --corpus paraphrase --round 26``.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from control_plane.understanding.names import NameIndex
from data_plane.clock import parse_time
from data_plane.database import connect
from data_plane.errors import InputError, KGError
from data_plane.reads import GraphReader
from evals.baselines import BASELINES, build_systems
from evals.coverage import named_concepts
from evals.metrics import GroupsExpected, Response, Score, score, summarise
from evals.questions import Question, load_questions, select
from evals.report import (
    failure_table,
    intent_table,
    markdown_table,
    plot_calibration,
    plot_f1_by_type,
    write_report,
)

__all__ = ["MULTI_HOP", "Progress", "default_questions", "evaluate", "run_eval", "summary_lines"]

# Told (done, total, what) as work advances; the command line draws a progress bar with it.
Progress = Callable[[int, int, str], None]

# Question types that need more than one hop from the seeds.
MULTI_HOP = ("needed_before", "path", "combined")


def default_questions() -> Path:
    """The bundled curriculum question set."""
    return Path(str(resources.files("evals") / "questions" / "curriculum.jsonl"))


@contextmanager
def _database(url: str | None, bundle: Path | None = None, *, set_aside: bool = False) -> Iterator[str]:
    """``url`` as given, or a fresh temporary SQLite loaded with ``bundle`` (default: the bundled
    curriculum) through the real importer (``set_aside``: with the import's set-aside policy)."""
    if url:
        yield url
        return
    from control_plane.surfaces.runtime import ensure_initialised

    with tempfile.TemporaryDirectory(prefix="kg-eval-") as tmp:
        fresh = f"sqlite:///{tmp}/eval.sqlite3"
        ensure_initialised(fresh, load_curriculum=bundle is None)
        if bundle is not None:
            from data_plane.bundle import ImportPolicy, import_bundle
            from data_plane.gateway import WriteGateway

            engine = connect(fresh)
            try:
                import_bundle(WriteGateway(engine), bundle, policy=ImportPolicy(set_aside=set_aside))
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


@dataclass
class _Namer:
    """Which concepts an answer's text names, by the names in force when it was answered (the
    valid time the system reports, else the question's), one index per distinct time."""

    reader: GraphReader
    _indexes: dict[tuple[str | None, str | None], NameIndex] = field(default_factory=dict)

    def named(self, question: Question, response: Response) -> tuple[str, ...] | None:
        if response.abstained or not response.text:
            return None
        key = (response.as_of_valid or question.as_of, question.known_at)
        if key not in self._indexes:
            valid = parse_time(key[0], field="as_of") if key[0] else None
            as_of = self.reader.as_of(valid, question.known_at_time)
            self._indexes[key] = NameIndex.build(self.reader.all_concepts(as_of=as_of))
        return tuple(sorted(named_concepts(response.text, self._indexes[key], quoted=response.quoted)))


def run_eval(
    questions: Sequence[Question],
    *,
    url: str,
    synthesizer: Any,
    systems: Sequence[str] = BASELINES,
    record: bool = False,
    progress: Progress | None = None,
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
        namer = _Namer(reader)
        rows: list[dict[str, Any]] = []
        started = time.perf_counter()
        for done, q in enumerate(questions):
            if progress is not None:
                progress(done, len(questions), q.id)
            results: dict[str, Any] = {}
            for system in built:
                try:
                    resp = system.run(q)
                except KGError as exc:  # one bad question must not sink the run
                    resp = Response(abstained=True, error=f"{type(exc).__name__}: {exc}")
                except Exception as exc:  # a traceback: scored as a wrong answer (evals.metrics)
                    resp = Response(abstained=False, error=f"{type(exc).__name__}: {exc}", crashed=True)
                if resp.named is None:
                    resp = replace(resp, named=namer.named(q, resp))
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
                    finding=q.findings,
                    suggest=q.suggest,
                    set_aside=q.set_aside,
                    groups=GroupsExpected(q.one_of, q.unmet, q.requirements),
                )
                scores[system.name].append(sc)
                results[system.name] = {
                    **sc.to_dict(),
                    "cited": list(resp.cited),
                    "named": None if resp.named is None else list(resp.named),
                    "evidence_size": len(resp.evidence),
                    "text": resp.text,
                    "abstain_reason": resp.abstain_reason,
                    "error": resp.error,
                    "cited_lessons": list(resp.lessons),
                    "as_of_valid": resp.as_of_valid,
                    "result": None if resp.result is None else dict(resp.result),
                    "did_you_mean": list(resp.did_you_mean),
                    "set_aside": list(resp.set_aside),
                    **resp.extra,
                }
            rows.append({**q.to_dict(), "results": results})
        wall = time.perf_counter() - started
        if progress is not None:
            progress(len(questions), len(questions), "scored")
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


def evaluate(
    *,
    out: Path,
    questions: Path | None = None,
    db: str | None = None,
    bundle: Path | None = None,
    synthesizer: str = "offline",
    baselines: Sequence[str] | None = None,
    limit: int | None = None,
    record: bool = False,
    verbose: bool = False,
    progress: Progress | None = None,
    corpus: str | None = None,
    round: int | None = None,
    set_aside: bool = False,
) -> dict[str, Any]:
    """``kg eval``: score ``questions`` (default: the bundled set; those of ``corpus`` and blind
    ``round`` when given; the first ``limit``) on database ``db`` (default: a fresh temporary
    SQLite with the bundled curriculum, or ``bundle``, its cycles' breaking rows set aside with
    ``set_aside``), write ``report.json``, ``report.md`` and the plots into
    ``out``, and return the report."""
    if not verbose:
        _quiet_logs()
    path = questions or default_questions()
    chosen = select(load_questions(path), corpus=corpus, round=round)
    wanted = " ".join(f"--{k} {v}" for k, v in (("corpus", corpus), ("round", round)) if v is not None)
    if wanted and not chosen:
        raise InputError(f"no question of {path} matches {wanted}", field="questions")
    if limit is not None:
        chosen = chosen[:limit]
    synth = _synthesizer(synthesizer)
    if db and bundle:
        raise InputError("give --db or --bundle, not both", field="bundle")
    if set_aside and bundle is None:
        raise InputError(
            "--set-aside applies to the --bundle an eval imports; give --bundle", field="set_aside"
        )
    with _database(db, bundle, set_aside=set_aside) as url:
        report = run_eval(
            chosen,
            url=url,
            synthesizer=synth,
            systems=baselines or BASELINES,
            record=record,
            progress=progress,
        )
    report["meta"]["questions_file"] = str(path)
    report["meta"]["selected"] = {"corpus": corpus, "round": round}
    report["meta"]["bundle"] = None if bundle is None else str(bundle)
    report["meta"]["set_aside"] = set_aside
    out.mkdir(parents=True, exist_ok=True)
    report["meta"]["plots"] = _plots(report, out)
    write_report(out, report, markdown=_markdown(report))
    return report


def summary_lines(report: dict[str, Any], out: Path) -> list[str]:
    """One line per system (F1, exact match, abstention precision/recall, model calls and synthesis
    steps per question, citation coverage; ``n/a`` where undefined), and where the report was written."""
    overall = report["summary"]["overall"]
    lines = []
    for name in report["meta"]["systems"]:
        s = overall[name]
        # A ratio with nothing to count (no abstention expected or made) is "n/a", not "None".
        lines.append(
            f"{name:12s} F1 {_shown(s['f1'], 3)}  EM {_shown(s['exact_match'], 3)}  "
            f"abstain P/R {_shown(s['abstention_precision'], 2)}/{_shown(s['abstention_recall'], 2)}  "
            f"model calls {_shown(s['mean_llm_calls'], 2)}  syntheses {_shown(s.get('mean_syntheses'), 2)}  "
            f"citation coverage {_shown(s['citation_coverage'], 3)}"
        )
    lines.append(f"wrote {out / 'report.json'}, {out / 'report.md'} and {len(report['meta']['plots'])} plots")
    return lines


def _shown(value: float | None, digits: int) -> str:
    """A metric for a summary line: ``n/a`` when there was nothing to measure."""
    return "n/a" if value is None or value != value else f"{value:.{digits}f}"
