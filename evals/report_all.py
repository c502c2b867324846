"""Rebuild every evaluation and benchmark report, and the summary tables the docs quote.

    python -m evals.report_all [--out out/reports] [--quick] [--only STEP ...] [--update-docs] [--list]
    python -m evals.report_all --docs-from out/reports/summary.json

Each step runs the same commands a person would (``kg eval``, ``kg bench``, ``python -m
evals...``), each in its own process, into its own folder under ``--out``: the full reports
(``report.json``, ``report.md``, plots, benchmark JSON). Then ``SUMMARY.md`` (and
``summary.json``) gathers one summary table per step, headed by the commit, the machine and the
time, each table with the command that rebuilds it, its wall time and the load average around it.
Nothing generated is committed: ``--update-docs`` (or ``--docs-from out/reports/summary.json``, which
runs nothing) rewrites the tables the docs quote, each between ``<!-- summary: TITLE -->`` and
``<!-- /summary -->``, with the command, commit, machine and load of the run it came from.

``--quick`` runs smaller sizes where a step is long (benchmarks up to 10^4 edges, GraphWalk at 100
and 200 concepts, a shorter serving load); without it every figure the docs quote is rebuilt
(about half an hour on a 2-core machine, most of it at 10^6 edges). With ``KG_TEST_POSTGRES_URL``
set, the benchmarks and the serving and reuse runs also run on PostgreSQL (in scratch databases
they drop afterwards). Exits 1 if any step failed; the others still run and are summarised.

Besides Python it needs ``hyperfine`` and ``perf`` for the start-up step (:data:`NEEDS`); it says so
as it starts, and a step whose programs are missing is skipped with a note (in ``SUMMARY.md``, under
"Steps skipped") instead of failing the run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.bench_dataplane import machine
from evals.dev_graphs import dev_graphs_folder
from evals.summary_tables import (
    breakdown_table,
    corpus_row,
    corpus_table,
    group_shares,
    import_table,
    machine_line,
    reuse_table,
    serving_table,
    systems_table,
)

__all__ = ["STEPS", "main"]

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "evals" / "questions"
# The graphs question files are written for, and the bundle each is loaded from (None: the
# bundled curriculum that `kg eval` loads by default).
GRAPHS: dict[str, str | None] = {
    "curriculum": None,
    "prereqmap": "evals/bundles/prereqmap",
    "musicstats": "evals/bundles/musicstats",
}
SPLITS = ("dev", "test", "holdout")


# The serving load's runs: (name, the limits it sets); the first alone with --quick.
SERVING_PLANS: tuple[tuple[str, list[str]], ...] = (
    ("default limits", ["--ask-rate", "10", "--model-calls", "60"]),
    ("limits off", ["--ask-rate", "100000", "--model-calls", "100000"]),
)


class StepFailed(Exception):
    """A command of a step exited non-zero and left no report to summarise."""


@dataclass(frozen=True)
class Context:
    out: Path  # this step's folder
    quick: bool
    postgres: str | None  # KG_TEST_POSTGRES_URL
    notes: list[str] = field(default_factory=list)  # commands that exited non-zero but reported
    dev_graphs: Path | None = None  # the real development graphs (evals.dev_graphs), if there


@dataclass
class Section:
    """One summary table and how to rebuild it."""

    title: str
    commands: list[str]
    table: str
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)


# -- running commands --------------------------------------------------------------------------


def _shown(argv: Sequence[str]) -> str:
    """A command as a person types it: ``kg`` for the CLI, paths under the checkout relative."""
    words = ["kg" if a == "control_plane.surfaces.cli" else a for a in argv]
    if words[:2] == [sys.executable, "-m"] and words[2] == "kg":
        words = words[2:]
    elif words[0] == sys.executable:
        words[0] = "python"
    shown = []
    for w in words:
        path = Path(w)
        if path.is_absolute():
            for base in (Path.cwd(), ROOT):
                if path.is_relative_to(base):
                    w = str(path.relative_to(base)) or "."
                    break
        shown.append(w)
    return shlex.join(shown)


def _env() -> dict[str, str]:
    """The children import this checkout's code, whatever is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _run(argv: Sequence[str], log: Path) -> tuple[int, float]:
    """Run ``argv`` in the checkout, its output appended to ``log``; (exit code, peak RSS in MB of
    that process alone)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {_shown(argv)}\n")
        fh.flush()
        proc = subprocess.Popen(list(argv), cwd=ROOT, env=_env(), stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, round(usage.ru_maxrss / 1024, 1)


def _kg(*args: str) -> list[str]:
    return [sys.executable, "-m", "control_plane.surfaces.cli", *args]


def _py(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def _must(ctx: Context, argv: Sequence[str], made: Path, *, shown: str | None = None) -> None:
    """Run ``argv`` (output in the step's ``run.log``); it must leave ``made`` behind. A non-zero
    exit that still wrote ``made`` (a run saying a target was missed) is kept, and noted.
    ``shown``: how to name the command (a database URL left out)."""
    log = ctx.out / "run.log"
    code, _ = _run(argv, log)
    shown = shown or _shown(argv)
    if not made.exists():
        raise StepFailed(f"{shown} exited {code} and wrote no {made.name} (log: {log})")
    if code != 0:
        where = made.relative_to(ctx.out)
        ctx.notes.append(f"`{shown}` exited {code}: see {where} and {log.name}.")


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@contextmanager
def _scratch_postgres(server: str, name: str) -> Iterator[str]:
    """A fresh database on the PostgreSQL server, dropped afterwards."""
    from evals.bench import _on_server
    from evals.bench import _scratch_postgres as create

    try:
        yield create(server, name)
    finally:
        _on_server(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- the steps ---------------------------------------------------------------------------------


def curriculum(ctx: Context) -> list[Section]:
    argv = _kg("eval", "--out", str(ctx.out))
    _must(ctx, argv, ctx.out / "report.json")
    return [
        Section(
            "Curriculum question set, every system",
            [_shown(argv)],
            systems_table(_read(ctx.out / "report.json")),
        )
    ]


def prompt_sizes(ctx: Context) -> list[Section]:
    from evals.prompt_sizes import table

    argv = _py("evals.prompt_sizes", "--out", str(ctx.out))
    _must(ctx, argv, ctx.out / "prompt_sizes.json")
    return [Section("Prompt sizes per round", [_shown(argv)], table(_read(ctx.out / "prompt_sizes.json")))]


def closure_sweep(ctx: Context) -> list[Section]:
    from evals.closure_sweep import table

    sections = []
    for graph in ("curriculum", "prereqmap"):
        bundle = GRAPHS[graph]
        argv = _py("evals.closure_sweep", "--out", str(ctx.out), "--name", graph)
        argv += ["--bundle", bundle] if bundle else []
        _must(ctx, argv, ctx.out / f"{graph}.json")
        sections.append(
            Section(f"Closure sweep: {graph}", [_shown(argv)], table(_read(ctx.out / f"{graph}.json")))
        )
    return sections


def graphwalk(ctx: Context) -> list[Section]:
    from evals.graphwalk import summary_table

    sizes = "100,200" if ctx.quick else "100,150,200,500"
    argv = _py("evals.graphwalk", "--sizes", sizes, "--out", str(ctx.out))
    _must(ctx, argv, ctx.out / "graphwalk.json")
    table = summary_table(_read(ctx.out / "graphwalk.json")["results"])
    return [Section("GraphWalk-style structural benchmark (loop, offline)", [_shown(argv)], table)]


def _question_files(corpus: str) -> list[tuple[str, str, Path, int]]:
    """(graph, split, file, blind rounds) for every ``{graph}_{split}.jsonl.gz`` of a known graph
    that holds questions of ``corpus``, in graph and split order. A holdout file's blind rounds
    are scored together (each was measured once, blind, when it was written; docs/evals.md keeps
    those figures); ``rounds`` is how many there are (0 outside holdouts)."""
    from evals.questions import load_questions

    found: list[tuple[str, str, Path, int]] = []
    for path in sorted(QUESTIONS.glob("*_*.jsonl.gz")):
        graph, _, split = path.name.removesuffix(".jsonl.gz").partition("_")
        if graph not in GRAPHS or split not in SPLITS:
            continue
        rounds = {q.round for q in load_questions(path) if q.corpus == corpus}
        if rounds:
            found.append((graph, split, path, len(rounds - {None}) if split == "holdout" else 0))
    order = {g: i for i, g in enumerate(GRAPHS)}
    return sorted(found, key=lambda f: (order[f[0]], SPLITS.index(f[1])))


def _corpus(ctx: Context, corpus: str, title: str) -> list[Section]:
    rows = []
    example = ""
    for graph, split, path, rounds in _question_files(corpus):
        folder = ctx.out / f"{graph}_{split}"
        argv = _kg(
            "eval", "--questions", str(path), "--corpus", corpus, "--baseline", "loop", "--out", str(folder)
        )
        bundle = GRAPHS[graph]
        argv += ["--bundle", bundle] if bundle else []
        _must(ctx, argv, folder / "report.json")
        label = f"{split} ({rounds} rounds)" if rounds > 1 else split
        rows.append((graph, label, corpus_row(_read(folder / "report.json"))))
        example = example or _shown(argv)
    if not rows:
        raise StepFailed(f"no {corpus} questions in {QUESTIONS}/<graph>_<split>.jsonl.gz")
    only = f"python -m evals.report_all --only {ctx.out.name}"
    notes = [
        f"One `kg eval` per graph and split, e.g. `{example}` (`--round N`: one blind round); each "
        "report.md has the per-intent table."
    ]
    return [Section(title, [only], corpus_table(rows), notes)]


def reader(ctx: Context) -> list[Section]:
    return _corpus(
        ctx, "paraphrase", "Question reader: the phrasing corpus, per graph and split (loop, offline)"
    )


def forms(ctx: Context) -> list[Section]:
    return _corpus(ctx, "forms", "Question forms corpus, per graph and split (loop, offline)")


LECTUREBANK = "lecturebank"


def lecturebank(ctx: Context) -> list[Section]:
    """Both LectureBank splits on the real map (``../shared/dev-graphs``; skipped with a note when
    it is not there): one row per split, and per question type and per name style (coverage /
    selective accuracy; the style of a question whose names are all as stored or in lower case is
    that, else the variant it uses)."""
    only = f"python -m evals.report_all --only {ctx.out.name}"
    folder = ctx.dev_graphs or dev_graphs_folder({})
    bundle = folder / LECTUREBANK
    if not (bundle / "manifest.json").is_file():
        note = f"_Skipped: no LectureBank graph in {folder} (../shared/dev-graphs; set KG_DEV_GRAPHS)._"
        return [Section("LectureBank question sets (skipped)", [only], note)]
    from evals.corpus import load_builder

    builder = load_builder("build_lecturebank")
    styles = {m.question.id: builder.style_of(m) for m in builder.build(builder.load_graph(bundle))}
    rows, by_type, by_style, example = [], [], [], ""
    for split in ("dev", "test"):
        out = ctx.out / f"{LECTUREBANK}_{split}"
        argv = _kg(
            "eval",
            "--questions",
            str(QUESTIONS / f"{LECTUREBANK}_{split}.jsonl.gz"),
            "--bundle",
            os.path.relpath(bundle, ROOT),
            "--set-aside",
            "--baseline",
            "loop",
            "--out",
            str(out),
        )
        _must(ctx, argv, out / "report.json")
        report = _read(out / "report.json")
        rows.append((LECTUREBANK, split, corpus_row(report)))
        by_type.append((split, {t: s["loop"] for t, s in report["summary"]["by_type"].items()}))
        by_style.append((split, group_shares(report, styles)))
        example = example or _shown(argv)
    notes = [f"One `kg eval` per split, e.g. `{example}`; each report.md has the per-intent table."]
    return [
        Section("LectureBank question sets, per split (loop, offline)", [only], corpus_table(rows), notes),
        Section(
            "LectureBank question sets, per question type (loop, offline)",
            [only],
            breakdown_table("type", by_type),
        ),
        Section(
            "LectureBank question sets, answerable questions per name style (loop, offline)",
            [only],
            breakdown_table("names written", by_style),
        ),
    ]


def _each_engine(
    ctx: Context, name: str, build: Callable[[list[str], Path], list[str]], made: str
) -> tuple[list[tuple[str, Any]], list[str]]:
    """Run the command ``build(database arguments, folder)`` makes on SQLite (a temporary file of
    its own) and, when configured, on a scratch PostgreSQL database: (engine, report) runs and the
    commands run."""
    runs, commands = [], []
    engines = [("SQLite", None)] + ([("PostgreSQL", ctx.postgres)] if ctx.postgres else [])
    for label, server in engines:
        folder = ctx.out / f"{name}-{label.lower()}"
        scratch = _scratch_postgres(server, f"kg_{name}_{os.getpid()}") if server else nullcontext(None)
        with scratch as url:
            argv = build(["--db", url] if url else [], folder)
            shown = _shown(argv).replace(url, "$EMPTY_POSTGRES_DB") if url else _shown(argv)
            _must(ctx, argv, folder / made, shown=shown)
        runs.append((label, _read(folder / made)))
        commands.append(shown)
    return runs, commands


def reuse(ctx: Context) -> list[Section]:
    runs, commands = _each_engine(
        ctx, "reuse", lambda db, folder: _py("evals.reuse_mix", *db, "--out", str(folder)), "reuse-mix.json"
    )
    title = "Answer reuse: 30 questions asked 20 times, a curation change halfway"
    return [Section(title, commands, reuse_table(runs))]


def serving(ctx: Context) -> list[Section]:
    script = ROOT / "tests" / "serving_load.py"
    if not script.exists():
        raise StepFailed("tests/serving_load.py is not in this checkout")
    size = ["--requests", "200", "--clients", "8", "--workers", "2"] if ctx.quick else []
    plans = list(SERVING_PLANS[:1] if ctx.quick else SERVING_PLANS)
    runs, commands = [], []
    for i, (plan, limits) in enumerate(plans):
        done, run = _each_engine(
            ctx,
            f"load{i}",
            lambda db, folder: [sys.executable, str(script), *db, *size, *limits, "--out", str(folder)],  # noqa: B023
            "serving-load.json",
        )
        runs += [(f"{engine}, {plan}", report) for engine, report in done]
        commands += run
    title = "Serving: many clients against several workers (fake model gateway)"
    return [Section(title, commands, serving_table(runs))]


def bench(ctx: Context) -> list[Section]:
    sizes = "1000,10000" if ctx.quick else "1000,10000,100000,1000000"
    questions = "40" if ctx.quick else "200"
    argv = _kg(
        "bench", "--sizes", sizes, "--questions", questions, "--inmemory-max", "10000", "--out", str(ctx.out)
    )
    _must(ctx, argv, ctx.out / "bench.md")
    notes = ["PostgreSQL rows up to 10^5 edges when KG_TEST_POSTGRES_URL is set."] if ctx.postgres else []
    table = (ctx.out / "bench.md").read_text(encoding="utf-8").strip()
    return [Section("Side by side with the raw driver (`kg bench`)", [_shown(argv)], table, notes)]


def walks(ctx: Context) -> list[Section]:
    from evals.bench_walks import table

    sizes = "1000,10000" if ctx.quick else "1000,10000,100000,1000000"
    argv = _py("evals.bench_walks", "--sizes", sizes, "--samples", "30" if ctx.quick else "100")
    argv += ["--out", str(ctx.out)]
    _must(ctx, argv, ctx.out / "walks.json")
    return [
        Section("Recursive walks (closures)", [_shown(argv)], table(_read(ctx.out / "walks.json")["results"]))
    ]


def graph_store(ctx: Context) -> list[Section]:
    from evals.bench_graph_store import table

    argv = _py("evals.bench_graph_store", "--sizes", "10000" if ctx.quick else "100000")
    argv += ["--samples", "30" if ctx.quick else "100", "--out", str(ctx.out)]
    _must(ctx, argv, ctx.out / "graph_store.json")
    return [
        Section(
            "The LlamaIndex store's rel map beside the planner's statements",
            [_shown(argv)],
            table(_read(ctx.out / "graph_store.json")["results"]),
        )
    ]


def dataplane(ctx: Context) -> list[Section]:
    from evals.bench_dataplane import table

    sizes = "1000,10000" if ctx.quick else "1000,10000,100000,1000000"
    argv = _py("evals.bench_dataplane", "--sizes", sizes, "--out", str(ctx.out))
    _must(ctx, argv, ctx.out / "dataplane.json")
    return [
        Section(
            "Data plane: import and neighbourhood reads",
            [_shown(argv)],
            table(_read(ctx.out / "dataplane.json")["results"]),
        )
    ]


def imports(ctx: Context) -> list[Section]:
    rows, commands = [], []
    for edges in (10_000,) if ctx.quick else (100_000, 1_000_000):
        folder = ctx.out / str(edges)
        bundle = folder / "bundle"
        row: dict[str, Any] = {"edges": edges}
        steps = [("make", [str(edges), str(bundle)])]
        steps += [(step, [str(bundle), f"sqlite:///{folder}/{step}.sqlite3"]) for step in ("raw", "import")]
        for step, args in steps:
            argv = _py("evals.bench_import", step, *args)
            code, rss = _run(argv, folder / f"{step}.log")
            if code != 0:
                raise StepFailed(f"{_shown(argv)} exited {code} (log: {folder / f'{step}.log'})")
            if step != "make":
                line = (folder / f"{step}.log").read_text(encoding="utf-8").strip().splitlines()[-1]
                row[step] = {**json.loads(line), "peak_rss_mb": rss}
                row["rows"] = row[step]["rows"]
            commands.append(_shown(argv))
        shutil.rmtree(bundle, ignore_errors=True)
        rows.append(row)
    (ctx.out / "import.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return [Section("Import (streaming, all-or-nothing) against a raw insert", commands, import_table(rows))]


def startup(ctx: Context) -> list[Section]:
    argv = ["bash", str(ROOT / "evals" / "startup.sh"), "5" if ctx.quick else "20"]
    code, _ = _run(argv, ctx.out / "startup.txt")
    if code != 0:
        raise StepFailed(f"{_shown(argv)} exited {code} (log: {ctx.out / 'startup.txt'})")
    text = (ctx.out / "startup.txt").read_text(encoding="utf-8").split("\n", 1)[1].rstrip()
    return [
        Section("Start-up (`kg --help`, a usage error, `kg ask`)", [_shown(argv)], f"```text\n{text}\n```")
    ]


def _met(ok: bool | None) -> str:
    return "-" if ok is None else ("yes" if ok else "**no**")


def target_rows(reports: Path) -> list[tuple[str, str, str, bool | None]]:
    """(target, where it comes from, the figure, met) for every target the issues set that the
    reports under ``reports`` (one run's ``--out``) measure; a report not there gives no row."""
    rows: list[tuple[str, str, str, bool | None]] = []

    def read(name: str) -> Any:
        path = reports / name
        return _read(path) if path.exists() else None

    bench = read("bench/bench.json")
    if bench:
        by = [(r.get("database", "sqlite"), r) for r in bench["results"]]
        ratios = [r["expansion_to_raw"] for _, r in by if r.get("expansion_to_raw") is not None]
        if ratios:
            rows.append(
                (
                    "expansion p50 ≤ 3x raw, every size",
                    "bench",
                    f"{min(ratios):.2f}-{max(ratios):.2f}x",
                    max(ratios) <= 3,
                )
            )
        rates = [
            (db, r["edges"], r["import_to_raw_insert"])
            for db, r in by
            if r.get("import_to_raw_insert") is not None
        ]
        if rates:
            low = [f"{rate:.2f} at {edges:,} ({db})" for db, edges, rate in rates if rate < 0.2]
            span = f"{min(r for *_, r in rates):.2f}-{max(r for *_, r in rates):.2f}"
            rows.append(
                (
                    "import rate ≥ 1/5 of a raw insert, every size",
                    "bench",
                    span + (f"; below: {', '.join(low)}" if low else ""),
                    not low,
                )
            )
        for db, r in by:
            if r["edges"] != 1_000_000:
                continue
            rows.append(
                (
                    f"loop ≤ 12 raw expansions + 2 ms at 10^6 ({db})",
                    "bench",
                    f"{r['loop_p50_ms']:.2f} ms = {r['loop_to_target']:.2f}x its target",
                    r["loop_to_target"] <= 1,
                )
            )
            rows.append(
                (
                    f"loop peak RSS ≤ 150 MB at 10^6 ({db})",
                    "bench",
                    f"{r['loop_peak_rss_mb']:.1f} MB",
                    r["loop_peak_rss_mb"] <= 150,
                )
            )
            if r.get("export_to_raw") is not None:
                rows.append(
                    (
                        f"export ≤ 3x a raw SELECT to CSV at 10^6 ({db})",
                        "bench",
                        f"{r['export_to_raw']:.2f}x",
                        r["export_to_raw"] <= 3,
                    )
                )
    imports = read("import/import.json")
    for row in imports or []:
        limit = {100_000: 300, 1_000_000: 400}.get(row["edges"])
        if limit is not None and "import" in row:
            rss = row["import"]["peak_rss_mb"]
            rows.append(
                (
                    f"import peak RSS ≤ {limit} MB at {row['edges']:,} edges",
                    "import",
                    f"{rss:.0f} MB",
                    rss <= limit,
                )
            )
    walks = read("walks/walks.json")
    for size in (walks or {}).get("results", []):
        for engine in size["engines"]:
            if size["edges"] >= 1_000_000 and engine["engine"] == "sqlite":
                p50 = engine["walk_p50_ms"]
                rows.append(
                    (
                        "a ~100-concept closure walk p50 ≤ 5 ms at 10^6 (SQLite)",
                        "walks",
                        f"{p50:.2f} ms (networkx {size['networkx_p50_ms']:.2f} ms)",
                        p50 <= 5,
                    )
                )
    for engine in ("sqlite", "postgresql"):
        reuse = read(f"reuse/reuse-{engine}/reuse-mix.json")
        if reuse:
            rows.append(
                (
                    f"reuse: model calls ≤ 2 x 30 x rounds, 0 stale ({engine})",
                    "reuse",
                    f"{reuse['model_calls']} calls (bound {reuse['target']:.0f}), {reuse['stale']} stale",
                    bool(reuse["met"]),
                )
            )
        for i, plan in enumerate(SERVING_PLANS):
            load = read(f"serving/load{i}-{engine}/serving-load.json")
            if load:
                what = f"{load['requests']:,} /ask, {load['clients']} clients, {load['workers']} workers, {plan[0]} ({engine})"
                rows.append(
                    (
                        f"serving: 0 errors, limits exact: {what}",
                        "serving",
                        f"{load['failures']} errors, checks {'all true' if load['ok'] else 'failed'}",
                        load["failures"] == 0 and bool(load["ok"]),
                    )
                )
    return rows


def targets(ctx: Context) -> list[Section]:
    rows = target_rows(ctx.out.parent)
    if not rows:
        raise StepFailed(
            f"no benchmark report under {ctx.out.parent} to check targets against (run the others first)"
        )
    table = "\n".join(
        ["| target | from | this run | met |", "|---|---|---|---|"]
        + [f"| {what} | {step} | {figure} | {_met(ok)} |" for what, step, figure, ok in rows]
    )
    only = "python -m evals.report_all --only bench --only walks --only import --only reuse --only serving --only targets"
    return [Section("Targets (issues 10, 12, 26)", [only], table)]


# Name -> (what it measures, step). In this order; `--only` picks some.
STEPS: dict[str, tuple[str, Callable[[Context], list[Section]]]] = {
    "curriculum": ("kg eval on the curriculum set, every system", curriculum),
    "prompt-sizes": ("tokens each loop round would send", prompt_sizes),
    "closure-sweep": ("every closure asked both ways, two graphs", closure_sweep),
    "graphwalk": ("GraphWalk-style templates on random graphs", graphwalk),
    "reader": ("the phrasing corpus, every graph and split", reader),
    "forms": ("the question forms corpus, every graph and split", forms),
    "lecturebank": ("the LectureBank sets on the real map in ../shared (skipped when absent)", lecturebank),
    "reuse": ("answer reuse with a curation change", reuse),
    "serving": ("load against several worker processes", serving),
    "bench": ("kg bench: import, loop, export beside the raw driver", bench),
    "walks": ("recursive walks beside networkx", walks),
    "graph-store": ("the LlamaIndex store's rel map beside the planner's statements", graph_store),
    "dataplane": ("import rate and neighbourhood reads", dataplane),
    "import": ("streaming import beside a raw insert", imports),
    "startup": ("how fast kg starts", startup),
    "targets": ("the issues' targets, checked against this run's reports", targets),
}


# Programs a step runs besides this checkout's Python, and how to install each (Debian/Ubuntu). A
# step whose programs are missing is skipped, with a note saying what to install; the rest run.
NEEDS: dict[str, tuple[str, ...]] = {"startup": ("hyperfine", "perf")}
INSTALL: dict[str, str] = {
    "hyperfine": "apt-get install hyperfine",
    "perf": "apt-get install linux-perf (Ubuntu: linux-tools-generic)",
}


def missing_programs(step: str, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """The programs ``step`` needs that are not on PATH."""
    return [program for program in NEEDS.get(step, ()) if which(program) is None]


def needs_line() -> str:
    """What a run needs besides Python, said before it starts."""
    steps = ", ".join(f"{step}: {' and '.join(programs)}" for step, programs in NEEDS.items())
    return (
        f"needs, besides Python: {steps} (a step whose programs are missing is skipped with a note); "
        "PostgreSQL runs too when KG_TEST_POSTGRES_URL is set"
    )


# -- the summary -------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return done.stdout.strip()


def provenance(command: str) -> dict[str, Any]:
    """The commit (and whether the tree had uncommitted changes), the machine and the time."""
    return {
        "commit": _git("rev-parse", "--short", "HEAD") or "unknown (not a git checkout)",
        "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "machine": machine(),
        "kernel": platform.release(),
    }


def render(
    head: dict[str, Any],
    sections: Sequence[Section],
    failed: dict[str, str],
    skipped: Mapping[str, str] | None = None,
) -> str:
    """``SUMMARY.md``: where and when, then one table per section with how to rebuild it."""
    dirty = " (with uncommitted changes)" if head["uncommitted_changes"] else ""
    lines = [
        "# Summary of every report",
        "",
        f"Commit `{head['commit']}`{dirty}, {head['started']}, `{head['command']}`, "
        f"{head['seconds'] / 60:.1f} min.",
        "",
        f"Machine: {machine_line(head['machine'], head['load'])}.",
    ]
    for s in sections:
        lines += ["", f"## {s.title}", ""]
        lines += [f"`{c}`  " for c in s.commands]
        lines += [f"{s.seconds:.0f} s, load average {s.load[0]:.1f} → {s.load[1]:.1f}.", ""]
        lines += [*s.notes, ""] if s.notes else []
        lines.append(s.table)
    if failed:
        lines += ["", "## Steps that failed", ""]
        lines += [f"- **{name}**: {why}" for name, why in failed.items()]
    if skipped:
        lines += ["", "## Steps skipped", ""]
        lines += [f"- **{name}**: {why}" for name, why in skipped.items()]
    return "\n".join(lines) + "\n"


DOCS = ROOT / "docs"
# A docs table that report_all keeps current: the lines between these markers are replaced by the
# section of that title (its run, then its table).
BLOCK = re.compile(r"(<!-- summary: (?P<title>.+?) -->\n).*?(<!-- /summary -->)", re.S)


def doc_block(section: Mapping[str, Any], head: Mapping[str, Any]) -> str:
    """What a docs page shows of one section: how and where it ran, then its table."""
    m = head["machine"]
    dirty = ", with uncommitted changes" if head["uncommitted_changes"] else ""
    # Commands as run from the checkout's root (a run's absolute paths say nothing to a reader).
    commands = "; ".join(f"`{c.replace(str(ROOT) + '/', '')}`" for c in section["commands"])
    return (
        f"_{commands} at `{head['commit']}`{dirty}, {head['started']}, {m['nproc']} CPUs ({m['cpu']}), "
        f"load average {section['load'][0]:.1f} → {section['load'][1]:.1f}, {section['seconds']:.0f} s._\n\n"
        f"{section['table']}\n"
    )


def fill(text: str, blocks: Mapping[str, str]) -> tuple[str, set[str]]:
    """``text`` with every marked block whose title is in ``blocks`` replaced; and those titles."""
    used: set[str] = set()

    def swap(match: re.Match[str]) -> str:
        title = match["title"]
        if title not in blocks:
            return match[0]
        used.add(title)
        return match[1] + blocks[title] + match[3]

    return BLOCK.sub(swap, text), used


def update_docs(summary: Mapping[str, Any], docs: Path = DOCS) -> list[str]:
    """Rewrite the marked tables of every docs page from ``summary`` (``summary.json``); the
    titles no page marks, which stay only in ``SUMMARY.md``."""
    blocks = {s["title"]: doc_block(s, summary) for s in summary["sections"]}
    used: set[str] = set()
    for page in sorted(docs.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        new, found = fill(text, blocks)
        used |= found
        if new != text:
            page.write_text(new, encoding="utf-8")
    return sorted(set(blocks) - used)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.report_all", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/reports"), help="folder for every report")
    parser.add_argument(
        "--quick", action="store_true", help="smaller sizes and fewer files where a step is long"
    )
    parser.add_argument(
        "--only", action="append", choices=list(STEPS), metavar="STEP", help="run only this step"
    )
    parser.add_argument("--list", action="store_true", help="list the steps and exit")
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="also rewrite the docs tables marked <!-- summary: TITLE --> from this run",
    )
    parser.add_argument(
        "--docs-from",
        type=Path,
        metavar="SUMMARY_JSON",
        help="run nothing: rewrite the marked docs tables from an earlier run's summary.json",
    )
    args = parser.parse_args(argv)
    if args.list:
        for name, (what, _) in STEPS.items():
            print(f"{name:14s} {what}")
        return 0
    if args.docs_from is not None:
        unused = update_docs(json.loads(args.docs_from.read_text(encoding="utf-8")))
        print(f"updated docs/ from {args.docs_from}; not in any page: {unused or 'none'}", file=sys.stderr)
        return 0
    out = args.out.resolve()
    shown = "python -m evals.report_all " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    head = provenance(shown.strip())
    postgres = os.environ.get("KG_TEST_POSTGRES_URL") or None
    dev_graphs = dev_graphs_folder(os.environ)
    started, load0 = time.perf_counter(), os.getloadavg()[0]
    sections: list[Section] = []
    failed: dict[str, str] = {}
    skipped: dict[str, str] = {}
    print(needs_line(), file=sys.stderr, flush=True)
    for name, (_, step) in STEPS.items():
        if args.only and name not in args.only:
            continue
        missing = missing_programs(name)
        if missing:
            how = "; ".join(INSTALL.get(program, program) for program in missing)
            skipped[name] = f"needs {' and '.join(missing)}, not found on PATH ({how}); not run"
            print(f"== {name}: skipped: {skipped[name]}", file=sys.stderr, flush=True)
            continue
        folder = out / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        t0, before = time.perf_counter(), os.getloadavg()[0]
        print(f"== {name} ...", file=sys.stderr, flush=True)
        ctx = Context(folder, args.quick, postgres, dev_graphs=dev_graphs)
        try:
            made = step(ctx)
        except StepFailed as exc:
            failed[name] = str(exc)
            print(f"   failed: {exc}", file=sys.stderr)
            continue
        made[0].notes += ctx.notes
        for s in made:
            s.seconds, s.load = time.perf_counter() - t0, (before, os.getloadavg()[0])
        sections += made
        print(f"   {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    head["seconds"], head["load"] = time.perf_counter() - started, (load0, os.getloadavg()[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "SUMMARY.md").write_text(render(head, sections, failed, skipped), encoding="utf-8")
    data = {**head, "sections": [asdict(s) for s in sections], "failed": failed, "skipped": skipped}
    (out / "summary.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'SUMMARY.md'}", file=sys.stderr)
    if args.update_docs:
        unused = update_docs(json.loads(json.dumps(data)))
        print(f"updated docs/; not in any page: {unused or 'none'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
