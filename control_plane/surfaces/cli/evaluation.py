"""``kg eval`` and ``kg bench``: score the loop on question sets, time it on synthetic graphs.

Both delegate to the ``evals`` package (``evals.runner``, ``evals.bench``), which an installation
may lack; they then say so in one line (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from control_plane.surfaces.cli.options import DataFormat, DataFormatOpt, SynthChoice
from control_plane.surfaces.cli.shell import commands, fail, print_json, root_db

__all__ = ["app"]

app = commands()


def _evals(module: str) -> Any:
    """``evals.<module>``, or a one-line error (exit 2) when this installation lacks it."""
    import importlib
    import importlib.util

    name = f"evals.{module}"
    try:
        found = importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        fail(f"{name} is not available yet in this installation", code=2)
    return importlib.import_module(name)


def _evals_db(ctx: typer.Context, db: str | None) -> str | None:
    """``--db`` given to the command, else ``kg --db``; never KG_DATABASE_URL (evals need a known
    graph, benchmarks an empty database, so they default to fresh temporary SQLite files)."""
    return db or root_db(ctx)


EvalsDbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL (same as `kg --db`). Default: a fresh temporary SQLite database.",
        show_default=False,
    ),
]


@app.command("eval")
def eval_(
    ctx: typer.Context,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help="JSON Lines question set (gzip if named *.gz). Default: the bundled curriculum set.",
        ),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help="Only the questions of this corpus (paraphrase, forms)."),
    ] = None,
    round_: Annotated[
        int | None,
        typer.Option("--round", min=1, help="Only the questions of this blind holdout round."),
    ] = None,
    db: EvalsDbOpt = None,
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle",
            help="A kg-bundle/1 folder (e.g. evals/bundles/prereqmap) loaded into the fresh temporary "
            "database instead of the bundled curriculum. Not with --db.",
        ),
    ] = None,
    set_aside: Annotated[
        bool,
        typer.Option(
            "--set-aside",
            help="With --bundle: import it as `kg import --set-aside` does (rows closing prerequisite "
            "cycles are set aside).",
        ),
    ] = False,
    synthesizer: Annotated[
        SynthChoice, typer.Option("--synthesizer", help="Who answers.")
    ] = SynthChoice.offline,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline",
            help="System to run (repeatable): loop, seed-only, graphrag, whole-graph. Default: all.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Report directory.")] = Path("out/eval"),
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N questions.")] = None,
    record: Annotated[
        bool, typer.Option("--record", help="Record the loop's answers in the database.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Keep the loop's per-round log events.")] = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Score the loop and the baselines on a question set; write report.json, report.md and plots."""
    runner = _evals("runner")
    from evals.baselines import BASELINES

    unknown = sorted(set(baseline or ()) - set(BASELINES))
    if unknown:
        fail(f"--baseline {unknown[0]!r} is not one of {', '.join(BASELINES)}", code=2)
    from control_plane.surfaces.progress import progress_bar

    with progress_bar("eval") as advance:
        report = runner.evaluate(
            out=out,
            questions=questions,
            db=_evals_db(ctx, db),
            bundle=bundle,
            synthesizer=synthesizer.value,
            baselines=baseline,
            limit=limit,
            record=record,
            verbose=verbose,
            progress=advance,
            corpus=corpus,
            round=round_,
            set_aside=set_aside,
        )
    if fmt is DataFormat.json:
        print_json(report)
        return
    for line in runner.summary_lines(report, out):
        typer.echo(line)


@app.command("bench")
def bench(
    ctx: typer.Context,
    sizes: Annotated[
        str, typer.Option("--sizes", help="Graph sizes in edges, comma-separated.")
    ] = "1000,10000,100000,1000000",
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="An EMPTY database URL (same as `kg --db`; one size at a time). "
            "Default: a fresh SQLite file per size.",
            show_default=False,
        ),
    ] = None,
    questions: Annotated[int, typer.Option("--questions", min=1, help="Timed questions per size.")] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Graph generator seed.")] = 7,
    inmemory_max: Annotated[
        int, typer.Option("--inmemory-max", min=0, help="Largest size for the in-memory comparators.")
    ] = 100_000,
    out: Annotated[Path, typer.Option("--out", help="Report directory.")] = Path("out/bench"),
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Keep the imported SQLite files here and reuse them on later runs (10^6 edges take minutes).",
        ),
    ] = None,
    postgres_max: Annotated[
        int,
        typer.Option(
            "--postgres-max",
            min=0,
            help="Largest size also run on PostgreSQL when KG_TEST_POSTGRES_URL is set.",
        ),
    ] = 100_000,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Time import, the whole loop (without the model) and export on synthetic graphs of each size,
    each beside the raw driver in the same run; write bench.json, bench.md and plots."""
    module = _evals("bench")
    try:
        edges = [int(part) for part in sizes.split(",") if part.strip()]
    except ValueError:
        fail(f"--sizes must be comma-separated edge counts, got {sizes!r}", code=2)
    if not edges or min(edges) < 1:
        fail(f"--sizes must be comma-separated positive edge counts, got {sizes!r}", code=2)
    from control_plane.surfaces.progress import progress_bar

    with progress_bar("bench") as advance:
        report = module.bench(
            out=out,
            sizes=edges,
            db=_evals_db(ctx, db),
            questions=questions,
            seed=seed,
            inmemory_max=inmemory_max,
            cache=cache,
            postgres_max=postgres_max,
            # What was run, for the report; a --db URL may carry a password, so it is not repeated.
            command=f"kg bench --sizes {sizes} --questions {questions} --seed {seed} --inmemory-max {inmemory_max}",
            progress=advance,
        )
    for res in report["results"]:
        typer.echo(module.result_line(res), err=True)
    if fmt is DataFormat.json:
        print_json(report)
        return
    typer.echo(report["table"])
