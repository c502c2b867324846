"""``kg init`` and ``kg ask``: set up the database, and answer a question with its evidence."""

from __future__ import annotations

import dataclasses
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from control_plane.surfaces.cli.options import (
    AskFormat,
    AsOfOpt,
    DataFormat,
    DataFormatOpt,
    EvidenceShown,
    KnownAtOpt,
    SynthChoice,
)
from control_plane.surfaces.cli.shell import (
    EXIT_MODEL_UNAVAILABLE,
    commands,
    console,
    option_time,
    print_json,
    say_waiting,
    settings,
)
from control_plane.surfaces.messages import abstention_said

__all__ = ["app", "first_run"]

app = commands()
# The width of the text format written to a file (--out); a terminal's own width otherwise.
FILE_WIDTH = 100


@app.command()
def init(
    ctx: typer.Context,
    no_curriculum: Annotated[
        bool, typer.Option("--no-curriculum", help="Only create/upgrade the schema.")
    ] = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Create or upgrade the database (Alembic) and load the bundled curriculum. Idempotent."""
    from control_plane.surfaces.runtime import default_database_url, ensure_initialised

    report = ensure_initialised(
        settings(ctx).database_url or default_database_url(), load_curriculum=not no_curriculum
    )
    if fmt is DataFormat.json:
        print_json(
            {
                "database": report.database,
                "revision_before": report.revision_before,
                "revision_after": report.revision_after,
                "migrated": report.migrated,
                "curriculum": report.curriculum,
            }
        )
        return
    print_init(report)


def print_init(report: Any, *, err: bool = False) -> None:
    out = console(err)
    if report.migrated:
        out.print(
            f"schema: upgraded {report.revision_before or 'empty'} -> {report.revision_after} ({report.database})"
        )
    else:
        out.print(f"schema: already at {report.revision_after} ({report.database})")
    if report.curriculum is None:
        out.print("curriculum: not loaded (--no-curriculum)")
    else:
        summary = ", ".join(f"{k}={v}" for k, v in report.curriculum.items() if isinstance(v, int | str))
        out.print(f"curriculum: {summary}")


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The learner's question.")],
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    fmt: Annotated[AskFormat, typer.Option("--format", help="Output format.")] = AskFormat.text,
    out: Annotated[Path | None, typer.Option("--out", help="Write the output to FILE.")] = None,
    evidence: Annotated[
        EvidenceShown,
        typer.Option(
            "--evidence",
            help="Text format: none; a summary (what is cited, one line an edge); the grounding of what "
            "is cited; or of all that was gathered.",
        ),
    ] = EvidenceShown.summary,
    synthesizer: Annotated[
        SynthChoice | None,
        typer.Option(
            "--synthesizer",
            help="Default: KG_SYNTHESIZER, else deepseek if DEEPSEEK_API_KEY is set, else offline.",
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Answer afresh: do not reuse a recorded answer to the same question."),
    ] = False,
) -> None:
    """Answer a question with its evidence sub-graph, or abstain (and say why). A recorded answer
    to the same question is reused, at no model call, when nothing it read has changed since.

    When the model stays unavailable, the question is answered offline (the deterministic
    synthesizer, from the graph), which it says, and the command exits 3."""
    from control_plane.planning.loop import MODEL_UNAVAILABLE
    from control_plane.surfaces.runtime import Runtime, default_database_url

    valid_at, recorded_at = option_time(as_of, "as_of"), option_time(known_at, "known_at")
    chosen = settings(ctx, synthesizer=synthesizer.value if synthesizer else None)
    url = chosen.database_url or default_database_url()
    first_run(url)
    # The output file is opened before the question is asked (as a shell redirection would be):
    # an unwritable --out fails with nothing recorded, instead of after the answer was written.
    with ExitStack() as stack:
        sink = stack.enter_context(out.open("w", encoding="utf-8")) if out is not None else None
        rt = Runtime.build(chosen, on_wait=say_waiting)
        try:
            answer = rt.planner.reply(question, as_of=valid_at, known_at=recorded_at, fresh=fresh).to_dict()
        finally:
            rt.close()
        outage = answer["abstained"] and str(answer["abstain_reason"]).startswith(MODEL_UNAVAILABLE)
        if outage and chosen.synthesizer != "offline":
            # The graph answers without the model; say so, and still exit 3 (the model is down).
            typer.echo(
                f"answered offline (from the graph, no model): {answer['abstain_reason']}; "
                f"the abstention is recorded as answer {answer['answer_id']}",
                err=True,
            )
            rt = Runtime.build(dataclasses.replace(chosen, synthesizer="offline"), on_wait=say_waiting)
            try:
                answer = rt.planner.reply(
                    question, as_of=valid_at, known_at=recorded_at, fresh=fresh
                ).to_dict()
            finally:
                rt.close()
        emit_answer(answer, fmt, sink, evidence)
    if out is not None:
        typer.echo(f"wrote {fmt.value} for answer {answer['answer_id']} to {out}", err=True)
    if outage:
        raise typer.Exit(EXIT_MODEL_UNAVAILABLE)


def first_run(url: str) -> None:
    """A new SQLite file (``--db`` or the default) is set up with the bundled curriculum on first
    use (``kg ask``, ``kg mcp``), saying so on stderr; any other database is left as it is."""
    from control_plane.surfaces.runtime import database_missing, ensure_initialised

    if database_missing(url) is not None:
        typer.echo(f"first run: initialising {url} with the bundled curriculum", err=True)
        print_init(ensure_initialised(url), err=True)


def emit_answer(
    answer: dict[str, Any],
    fmt: AskFormat,
    sink: TextIO | None,
    evidence: EvidenceShown = EvidenceShown.summary,
) -> None:
    """Render ``answer`` as ``fmt`` to ``sink`` (an open file), or to stdout."""
    if fmt is AskFormat.text:
        if sink is not None:
            from rich.console import Console

            print_answer(answer, Console(file=sink, width=FILE_WIDTH, highlight=False), evidence)
        else:
            print_answer(answer, console(), evidence)
        return
    from control_plane.surfaces import pictures  # only the picture formats need it

    renderers = {
        AskFormat.json: lambda a: json.dumps(abstention_said(a), indent=2, ensure_ascii=False) + "\n",
        AskFormat.mermaid: pictures.to_mermaid,
        AskFormat.dot: pictures.to_dot,
        AskFormat.html: pictures.to_html,
    }
    (sink or sys.stdout).write(renderers[fmt](answer))


def print_answer(
    answer: dict[str, Any], screen: Any, evidence: EvidenceShown = EvidenceShown.summary
) -> None:
    """The answer (or abstention), how it was read, a meta line and its evidence
    (``cli.answer_text``), wrapped to the screen's width."""
    from rich.text import Text

    from control_plane.planning.answer import model_calls
    from control_plane.surfaces.cli.answer_text import answer_lines

    lines = answer_lines(answer, width=screen.width, evidence=evidence, model_calls=model_calls(answer))
    for i, line in enumerate(lines):
        text = Text(line)
        if i == 0:
            label = line.split(":", 1)[0]
            text.stylize("bold red" if answer["abstained"] else "bold", 0, len(label))
        screen.print(text, soft_wrap=True)
