"""The ``kg`` command line: ask, curate, audit, move bundles, manage API tokens, serve.

Configuration is read from the environment once, here, into ``Settings`` and passed down. Every
error the backend raises on purpose (``KGError``) ends the command with one line,
``error: ...`` on stderr, and exit code 1; usage errors exit with 2. Command bodies import what
they need lazily so that ``kg ask`` starts fast.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from typer.core import TyperGroup

from data_plane.errors import InputError, KGError

if TYPE_CHECKING:
    from control_plane.surfaces.runtime import Runtime
    from data_plane.records import Grounding, Version

__all__ = ["app"]


def _fail(message: str, code: int = 1) -> NoReturn:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    typer.echo(f"error: {first}", err=True)
    raise typer.Exit(code)


class _Group(TyperGroup):
    """Translates every error at the edge into one line on stderr and a non-zero exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KGError as exc:
            _fail(str(exc))
        except OSError as exc:
            _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        except UnicodeEncodeError as exc:
            # Undecodable bytes in argv arrive as lone surrogates (PEP 383); no database stores them.
            _fail(f"an argument is not valid UTF-8 text: {exc.object[exc.start : exc.end]!r}")
        except Exception as exc:
            # Typer's (vendored click's) own exits and usage errors carry their own exit codes.
            if os.environ.get("KG_DEBUG") == "1" or type(exc).__module__.startswith(("typer", "click")):
                raise
            from sqlalchemy.exc import SQLAlchemyError

            if isinstance(exc, SQLAlchemyError):
                orig = str(getattr(exc, "orig", exc)).strip().splitlines()
                _fail(f"database error: {orig[0] if orig else type(exc).__name__} (has `kg init` been run?)")
            _fail(f"internal error ({type(exc).__name__}): {exc} (set KG_DEBUG=1 for a traceback)")


app = typer.Typer(
    cls=_Group,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="A bi-temporal curriculum knowledge graph: grounded answers with their evidence, or an abstention.",
)
concept_app = typer.Typer(cls=_Group, no_args_is_help=True, help="Curate concepts (every write is grounded).")
edge_app = typer.Typer(cls=_Group, no_args_is_help=True, help="Curate edges: source>relation>target.")
lesson_app = typer.Typer(cls=_Group, no_args_is_help=True, help="Link lessons to concepts.")
audit_app = typer.Typer(cls=_Group, no_args_is_help=True, help="History, snapshots, diffs, answers, replay.")
token_app = typer.Typer(cls=_Group, no_args_is_help=True, help="API bearer tokens (stored hashed).")
app.add_typer(concept_app, name="concept")
app.add_typer(edge_app, name="edge")
app.add_typer(lesson_app, name="lesson")
app.add_typer(audit_app, name="audit")
app.add_typer(token_app, name="token")


class AskFormat(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    dot = "dot"
    html = "html"


class EvidenceShown(StrEnum):
    cited = "cited"
    all = "all"


class DataFormat(StrEnum):
    text = "text"
    json = "json"


class SynthChoice(StrEnum):
    offline = "offline"
    deepseek = "deepseek"


class Scope(StrEnum):
    read = "read"
    write = "write"


# ---------------------------------------------------------------------------------------------
# Global state: the database URL chosen once per invocation.


@app.callback()
def _main(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database URL (sqlite:///FILE or postgresql+psycopg://...). Default: KG_DATABASE_URL, "
            "else the SQLite file in the user data directory.",
            show_default=False,
        ),
    ] = None,
) -> None:
    ctx.obj = {"db": db}
    _configure_logging()


def _configure_logging(*, json_events: bool = False) -> None:
    """Logs go to stderr, so stdout stays clean for answers and JSON. The CLI shows warnings and
    errors (``KG_LOG_LEVEL=info`` for everything); ``kg serve`` logs JSON events at info."""
    import logging

    import structlog

    level_name = os.environ.get("KG_LOG_LEVEL", "info" if json_events else "warning").upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.WARNING)
    renderer: Any = structlog.processors.JSONRenderer() if json_events else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


def _settings(ctx: typer.Context, **overrides: Any) -> Any:
    from control_plane.settings import Settings

    db = (ctx.find_root().obj or {}).get("db")
    return Settings.from_env(os.environ, database_url=db, **overrides)


@contextmanager
def _runtime(ctx: typer.Context, **overrides: Any) -> Iterator[Runtime]:
    from control_plane.surfaces.runtime import Runtime

    rt = Runtime.build(_settings(ctx, **overrides))
    try:
        yield rt
    finally:
        rt.close()


def _time(text: str | None, field: str) -> datetime | None:
    if text is None:
        return None
    from data_plane.clock import parse_time

    return parse_time(text, field=field)


def _console(err: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=err, highlight=False, soft_wrap=True)


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


# ---------------------------------------------------------------------------------------------
# init, ask


@app.command()
def init(
    ctx: typer.Context,
    no_curriculum: Annotated[
        bool, typer.Option("--no-curriculum", help="Only create/upgrade the schema.")
    ] = False,
) -> None:
    """Create or upgrade the database (Alembic) and load the bundled curriculum. Idempotent."""
    from control_plane.surfaces.runtime import default_database_url, ensure_initialised

    settings = _settings(ctx)
    report = ensure_initialised(
        settings.database_url or default_database_url(), load_curriculum=not no_curriculum
    )
    _print_init(report)


def _print_init(report: Any, *, err: bool = False) -> None:
    out = _console(err)
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
    as_of: Annotated[str | None, typer.Option("--as-of", help="Valid time (ISO 8601).")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="Recorded time (ISO 8601).")] = None,
    fmt: Annotated[AskFormat, typer.Option("--format", help="Output format.")] = AskFormat.text,
    out: Annotated[Path | None, typer.Option("--out", help="Write the output to FILE.")] = None,
    evidence: Annotated[
        EvidenceShown,
        typer.Option("--evidence", help="Text format: the evidence the answer cites, or all it gathered."),
    ] = EvidenceShown.cited,
    synthesizer: Annotated[
        SynthChoice | None,
        typer.Option(
            "--synthesizer",
            help="Default: KG_SYNTHESIZER, else deepseek if DEEPSEEK_API_KEY is set, else offline.",
        ),
    ] = None,
) -> None:
    """Answer a question with its evidence sub-graph, or abstain (and say why)."""
    from control_plane.surfaces.runtime import (
        Runtime,
        default_database_path,
        default_database_url,
        ensure_initialised,
    )

    valid_at, recorded_at = _time(as_of, "as_of"), _time(known_at, "known_at")
    settings = _settings(ctx, synthesizer=synthesizer.value if synthesizer else None)
    if settings.database_url is None and not default_database_path().exists():
        typer.echo(f"first run: initialising {default_database_url()} with the bundled curriculum", err=True)
        _print_init(ensure_initialised(default_database_url()), err=True)
    # The output file is opened before the question is asked (as a shell redirection would be):
    # an unwritable --out fails with nothing recorded, instead of after the answer was written.
    with ExitStack() as stack:
        sink = stack.enter_context(out.open("w", encoding="utf-8")) if out is not None else None
        rt = Runtime.build(settings)
        try:
            answer = rt.planner.ask(question, as_of=valid_at, known_at=recorded_at).to_dict()
        finally:
            rt.close()
        _emit_answer(answer, fmt, sink, evidence)
    if out is not None:
        typer.echo(f"wrote {fmt.value} for answer {answer['answer_id']} to {out}", err=True)


def _emit_answer(
    answer: dict[str, Any], fmt: AskFormat, sink: TextIO | None, evidence: EvidenceShown = EvidenceShown.cited
) -> None:
    """Render ``answer`` as ``fmt`` to ``sink`` (an open file), or to stdout."""
    from control_plane.surfaces import pictures

    if fmt is AskFormat.text:
        if sink is not None:
            from rich.console import Console

            _print_answer(answer, Console(file=sink, width=120, highlight=False), evidence)
        else:
            _print_answer(answer, _console(), evidence)
        return
    renderers = {
        AskFormat.json: lambda a: json.dumps(a, indent=2, ensure_ascii=False) + "\n",
        AskFormat.mermaid: pictures.to_mermaid,
        AskFormat.dot: pictures.to_dot,
        AskFormat.html: pictures.to_html,
    }
    (sink or sys.stdout).write(renderers[fmt](answer))


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_answer(
    answer: dict[str, Any], console: Any, evidence: EvidenceShown = EvidenceShown.cited
) -> None:
    """The answer (or abstention), a line for how it was reached, and a table of the evidence it
    cites: the cited edges and concepts with their grounding (``EvidenceShown.all``: every edge
    gathered, cited ones starred)."""
    from rich.markup import escape

    if answer["abstained"]:
        console.print(f"[bold red]Abstained[/]: {escape(str(answer.get('abstain_reason')))}")
    else:
        console.print(f"[bold]Answer[/]: {escape(answer['text'])}")
    console.print(
        f"confidence {answer['confidence']:.2f} · rounds {len(answer['rounds'])} · LLM calls "
        f"{answer['llm_calls']} · synthesizer {answer['synthesizer']['name']} · answer {answer['answer_id']}"
    )
    edges = answer["evidence"]["edges"]
    if not edges:
        console.print("evidence: none")
        return
    cited = set(answer.get("cited_edges", []))
    if evidence is EvidenceShown.all:
        rows = [(e["edge_id"] + (" *" if e["edge_id"] in cited else ""), _statement(e), e) for e in edges]
        title = f"Evidence ({len(edges)} edges; * = cited)"
    else:
        concepts = {c["concept_id"]: c for c in answer["evidence"]["concepts"]}
        cited_concepts = [concepts[c["id"]] for c in answer.get("cited_concepts", []) if c["id"] in concepts]
        rows = [(e["edge_id"], _statement(e), e) for e in edges if e["edge_id"] in cited]
        rows += [(c["concept_id"], c["name"], c) for c in cited_concepts]
        title = (
            f"Evidence cited ({len(rows) - len(cited_concepts)} edges, {len(cited_concepts)} concepts; "
            f"{len(edges)} edges gathered: --evidence all)"
        )
    if not rows:
        console.print(f"evidence: nothing cited ({len(edges)} edges gathered: --evidence all)")
        return
    console.print(_evidence_table(title, rows))


def _statement(edge: dict[str, Any]) -> str:
    return f"{edge['source_id']} -{edge['relation']}-> {edge['target_id']}"


def _evidence_table(title: str, rows: list[tuple[str, str, dict[str, Any]]]) -> Any:
    """Rows of (reference, statement, grounded record) with the record's grounding."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for column in ("ref", "statement", "conf", "source", "reason"):
        table.add_column(column)
    for ref, statement, record in rows:
        g = record["grounding"]
        table.add_row(
            escape(ref),
            escape(statement),
            f"{g['confidence']:.2f}",
            escape(_short(str(g["source"]), 32)),
            escape(_short(str(g["reason"]), 60)),
        )
    return table


# ---------------------------------------------------------------------------------------------
# bundles


@app.command("import")
def import_(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(help="A bundle directory (manifest.json + CSV files).")],
    invalidate_missing: Annotated[
        bool, typer.Option("--invalidate-missing", help="Invalidate active keys the bundle no longer has.")
    ] = False,
    reason: Annotated[str | None, typer.Option("--reason", help="Reason recorded for invalidations.")] = None,
) -> None:
    """Import a graph bundle (idempotent: unchanged keys write nothing)."""
    from control_plane.surfaces.progress import progress_bar
    from control_plane.surfaces.runtime import report_dict
    from data_plane.bundle import import_bundle

    with _runtime(ctx) as rt, progress_bar(f"importing {bundle}") as advance:
        report = import_bundle(
            rt.gateway,
            bundle,
            invalidate_missing=invalidate_missing,
            reason=reason,
            progress=lambda stage, done, total: advance(done, total, stage),
        )
    _print_json(report_dict(report))


@app.command("export")
def export(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Directory to write the bundle into.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="Valid time (ISO 8601).")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="Recorded time (ISO 8601).")] = None,
) -> None:
    """Export the graph as of (valid time, recorded time) as a bundle."""
    from control_plane.surfaces.progress import progress_bar
    from control_plane.surfaces.runtime import report_dict
    from data_plane.bundle import export_bundle

    with _runtime(ctx) as rt, progress_bar(f"exporting to {directory}"):
        point = rt.reader.as_of(_time(as_of, "as_of"), _time(known_at, "known_at"))
        report = export_bundle(rt.reader, directory, as_of=point)
    _print_json(report_dict(report) if report is not None else {"directory": str(directory)})


# ---------------------------------------------------------------------------------------------
# curation

ReasonOpt = Annotated[str, typer.Option("--reason", help="Why this is true (required).")]
EvidenceOpt = Annotated[
    str, typer.Option("--evidence", help='Evidence as JSON text, e.g. \'{"doc": "..."}\' (required).')
]
SourceOpt = Annotated[str | None, typer.Option("--source", help="Who asserts it. Default: cli:$USER.")]
ConfidenceOpt = Annotated[float, typer.Option("--confidence", help="Confidence in [0, 1].")]


def _grounding(reason: str, source: str | None, evidence: str, confidence: float) -> Grounding:
    from data_plane.records import Grounding

    try:
        parsed = json.loads(evidence)
        # "\ud800" decodes to a lone surrogate that SQLite stores but no reader can encode.
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise InputError(
            f"--evidence is not valid JSON: {exc.msg} at column {exc.colno}", field="evidence"
        ) from exc
    except (RecursionError, UnicodeEncodeError) as exc:
        raise InputError(f"--evidence is not storable JSON: {exc}", field="evidence") from exc
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    return Grounding(confidence=confidence, reason=reason, source=source or f"cli:{user}", evidence=parsed)


def _print_versions(versions: Sequence[Version]) -> None:
    for v in versions:
        st = v.stamp
        typer.echo(
            f"{v.table} {v.key_text}: version {st.version_id} op={st.op} "
            f"valid {_fmt(st.valid_at)}..{_fmt(st.invalid_at) or 'open'} recorded {_fmt(st.recorded_at)}"
            + (f" supersedes {st.supersedes_id}" if st.supersedes_id else "")
        )


def _fmt(t: datetime | None) -> str | None:
    from data_plane.clock import format_time

    return format_time(t)


@concept_app.command("add")
def concept_add(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument(help="Stable id, e.g. rag.")],
    name: Annotated[str, typer.Option("--name", help="Display name.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    alias: Annotated[list[str] | None, typer.Option("--alias", help="An alias (repeatable).")] = None,
    summary: Annotated[str, typer.Option("--summary", help="One-paragraph summary.")] = "",
    valid_at: Annotated[
        str | None, typer.Option("--valid-at", help="True from (ISO 8601). Default: now.")
    ] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Assert a new concept."""
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        c = rt.gateway.assert_concept(
            concept_id,
            name=name,
            aliases=alias or [],
            summary=summary,
            grounding=g,
            valid_at=_time(valid_at, "valid_at"),
        )
    _print_versions([c.as_version()])


@concept_app.command("revise")
def concept_revise(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument()],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    name: Annotated[str | None, typer.Option("--name")] = None,
    alias: Annotated[
        list[str] | None, typer.Option("--alias", help="Replaces the aliases (repeatable).")
    ] = None,
    summary: Annotated[str | None, typer.Option("--summary")] = None,
    valid_at: Annotated[str | None, typer.Option("--valid-at")] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Write a new version of a concept (fields not given are kept)."""
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        c = rt.gateway.revise_concept(
            concept_id,
            name=name,
            aliases=alias,
            summary=summary,
            grounding=g,
            valid_at=_time(valid_at, "valid_at"),
        )
    _print_versions([c.as_version()])


@concept_app.command("invalidate")
def concept_invalidate(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument()],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    invalid_at: Annotated[str | None, typer.Option("--invalid-at", help="Default: now.")] = None,
    retract: Annotated[bool, typer.Option("--retract", help="Withdraw the belief altogether.")] = False,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Close a concept's validity (its edges and lesson links are closed with it)."""
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        result = rt.gateway.invalidate_concept(
            concept_id, grounding=g, invalid_at=_time(invalid_at, "invalid_at"), retract=retract
        )
    _print_versions([*result.written, *result.cascaded])


def _edge_parts(key: str) -> tuple[str, str, str]:
    from data_plane.relations import parse_edge_key

    try:
        return parse_edge_key(key)
    except ValueError as exc:
        raise InputError(str(exc), field="edge", value=key) from exc


EdgeArg = Annotated[str, typer.Argument(help="source>relation>target, e.g. 'rag>builds_on>embeddings'.")]


@edge_app.command("add")
def edge_add(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    valid_at: Annotated[str | None, typer.Option("--valid-at")] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Assert an edge between two active concepts."""
    s, t, r = _edge_parts(edge)
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        e = rt.gateway.assert_edge(s, t, r, grounding=g, valid_at=_time(valid_at, "valid_at"))
    _print_versions([e.as_version()])


@edge_app.command("revise")
def edge_revise(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    valid_at: Annotated[str | None, typer.Option("--valid-at")] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Write a new version of an edge (new grounding and/or valid time)."""
    s, t, r = _edge_parts(edge)
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        e = rt.gateway.revise_edge(s, t, r, grounding=g, valid_at=_time(valid_at, "valid_at"))
    _print_versions([e.as_version()])


@edge_app.command("invalidate")
def edge_invalidate(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    invalid_at: Annotated[str | None, typer.Option("--invalid-at")] = None,
    retract: Annotated[bool, typer.Option("--retract")] = False,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Close an edge's validity (or retract it)."""
    s, t, r = _edge_parts(edge)
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        e = rt.gateway.invalidate_edge(
            s, t, r, grounding=g, invalid_at=_time(invalid_at, "invalid_at"), retract=retract
        )
    _print_versions([e.as_version()])


@lesson_app.command("link")
def lesson_link(
    ctx: typer.Context,
    lesson_id: Annotated[str, typer.Argument()],
    concept_id: Annotated[str, typer.Argument()],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    title: Annotated[str | None, typer.Option("--title", help="Lesson title (creates or retitles).")] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Link a lesson to an active concept."""
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        v = rt.gateway.link_lesson(lesson_id, concept_id, grounding=g, title=title)
    _print_versions([v])


@lesson_app.command("unlink")
def lesson_unlink(
    ctx: typer.Context,
    lesson_id: Annotated[str, typer.Argument()],
    concept_id: Annotated[str, typer.Argument()],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
) -> None:
    """Close a lesson link."""
    g = _grounding(reason, source, evidence, confidence)
    with _runtime(ctx) as rt:
        v = rt.gateway.unlink_lesson(lesson_id, concept_id, grounding=g)
    _print_versions([v])


# ---------------------------------------------------------------------------------------------
# audit


@audit_app.command("history")
def audit_history(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="A concept id, or an edge as source>relation>target.")],
    fmt: Annotated[DataFormat, typer.Option("--format")] = DataFormat.text,
) -> None:
    """Every version of a concept or edge, oldest first, with grounding and stamps."""
    with _runtime(ctx) as rt:
        if ">" in key:
            versions = rt.reader.history("concept_edges", _edge_parts(key))
        else:
            versions = rt.reader.history("concepts", (key,))
    if fmt is DataFormat.json:
        _print_json([v.to_dict() for v in versions])
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"History of {escape(key)}")
    for col in ("version", "op", "valid", "recorded", "conf", "reason", "source"):
        table.add_column(col)
    for v in versions:
        st = v.stamp
        table.add_row(
            str(st.version_id),
            st.op,
            f"{_fmt(st.valid_at)} .. {_fmt(st.invalid_at) or 'open'}",
            f"{_fmt(st.recorded_at)} .. {_fmt(st.expired_at) or 'current'}",
            f"{v.grounding.confidence:.2f}",
            escape(v.grounding.reason),
            escape(v.grounding.source),
        )
    _console().print(table)


@audit_app.command("snapshot")
def audit_snapshot(
    ctx: typer.Context,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Valid time. Default: now.")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="Recorded time. Default: now.")] = None,
    fmt: Annotated[DataFormat, typer.Option("--format")] = DataFormat.text,
) -> None:
    """The whole graph as of (valid time, recorded time), streamed as it is read."""
    from control_plane.surfaces.streaming import write_json_object
    from data_plane.clock import format_time

    with _runtime(ctx) as rt:
        r = rt.reader
        point = r.as_of(_time(as_of, "as_of"), _time(known_at, "known_at"))
        if fmt is DataFormat.json:
            out = typer.get_text_stream("stdout")
            write_json_object(
                out.write,
                {
                    "valid_at": format_time(point.valid_at),
                    "recorded_at": format_time(point.recorded_at),
                    "concepts": (c.to_dict() for c in r.stream_concepts(point)),
                    "edges": (e.to_dict() for e in r.stream_edges(point)),
                    "lessons": (v.to_dict() for v in r.stream_versions("lessons", point)),
                    "lesson_links": (v.to_dict() for v in r.stream_versions("lesson_concepts", point)),
                },
            )
            out.flush()
            return
        # Counting streams: nothing but the per-relation tallies is held in memory.
        counts: dict[str, int] = {}
        for e in r.stream_edges(point):
            counts[e.relation] = counts.get(e.relation, 0) + 1
        n_concepts = sum(1 for _ in r.stream_concepts(point))
        n_lessons = sum(1 for _ in r.stream_versions("lessons", point))
        n_links = sum(1 for _ in r.stream_versions("lesson_concepts", point))
    typer.echo(
        f"snapshot as of {_fmt(point.valid_at)} (known at {_fmt(point.recorded_at)}): "
        f"{n_concepts} concepts, {sum(counts.values())} edges, {n_lessons} lessons, "
        f"{n_links} lesson links"
    )
    for rel in sorted(counts):
        typer.echo(f"  {rel}: {counts[rel]}")


@audit_app.command("diff")
def audit_diff(
    ctx: typer.Context,
    since: Annotated[str, typer.Option("--from", help="Recorded time to diff from (exclusive).")],
    until: Annotated[str | None, typer.Option("--to", help="Recorded time to diff to. Default: now.")] = None,
    fmt: Annotated[DataFormat, typer.Option("--format")] = DataFormat.text,
) -> None:
    """What the system learned between two recorded times: asserted, revised, invalidated,
    retracted; streamed as it is read."""
    from control_plane.surfaces.streaming import write_json_object
    from data_plane.clock import ensure_utc, format_time, utc_now
    from data_plane.reads import DIFF_TABLES

    t0 = _time(since, "from")
    assert t0 is not None
    t1 = _time(until, "to") or utc_now()
    t0, t1 = ensure_utc(t0, field="from"), ensure_utc(t1, field="to")
    groups = (
        ("asserted", "assert"),
        ("revised", "revise"),
        ("invalidated", "invalidate"),
        ("retracted", "retract"),
    )
    with _runtime(ctx) as rt:
        r = rt.reader

        def changes(op: str) -> Iterator[Version]:
            for table in DIFF_TABLES:
                yield from r.stream_changes(table, t0, t1, op=op)

        if fmt is DataFormat.json:
            out = typer.get_text_stream("stdout")
            fields: dict[str, Any] = {"from": format_time(t0), "to": format_time(t1)}
            fields.update({label: (v.to_dict() for v in changes(op)) for label, op in groups})
            write_json_object(out.write, fields)
            out.flush()
            return
        typer.echo(f"diff of recorded knowledge ({_fmt(t0)}, {_fmt(t1)}]:")
        for label, op in groups:
            shown: list[Version] = []
            n = 0
            for v in changes(op):
                n += 1
                if len(shown) < 20:
                    shown.append(v)
            typer.echo(f"  {label}: {n}")
            for v in shown:
                typer.echo(f"    {v.table} {v.key_text} (version {v.stamp.version_id}): {v.grounding.reason}")
            if n > 20:
                typer.echo(f"    ... and {n - 20} more (use --format json)")


@audit_app.command("answers")
def audit_answers(
    ctx: typer.Context,
    since: Annotated[str | None, typer.Option("--since", help="Recorded at or after (ISO 8601).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 20,
    fmt: Annotated[DataFormat, typer.Option("--format")] = DataFormat.text,
) -> None:
    """Recorded answers and abstentions, newest first."""
    with _runtime(ctx) as rt:
        versions = rt.reader.answers(since=_time(since, "since"), limit=limit)
    if fmt is DataFormat.json:
        _print_json([v.content["payload"] for v in versions])
        return
    if not versions:
        typer.echo("no recorded answers")
    for v in versions:
        p = v.content["payload"]
        verdict = "abstained" if p.get("abstained") else f"answered ({p.get('confidence', 0):.2f})"
        # Answers recorded before reasoning/cache/cost were kept read those as 0.
        usage = (
            f"tokens {p.get('prompt_tokens', 0)}+{p.get('completion_tokens', 0)} "
            f"(reasoning {p.get('reasoning_tokens', 0)}, cache hit {p.get('cache_hit_tokens', 0)}) "
            f"${p.get('cost_usd', 0.0):.6f}"
        )
        typer.echo(f"{v.key_text}  {_fmt(v.stamp.recorded_at)}  {verdict}  {usage}  {p.get('question')}")


@audit_app.command("replay")
def audit_replay(
    ctx: typer.Context,
    answer_id: Annotated[str, typer.Argument(help="A recorded answer id (see `kg audit answers`).")],
) -> None:
    """Re-run a recorded answer and report what changed since (JSON)."""
    with _runtime(ctx) as rt:
        report = rt.replay(answer_id)
    _print_json(report)


# ---------------------------------------------------------------------------------------------
# tokens


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Who or what the token is for.")],
    scope: Annotated[Scope, typer.Option("--scope", help="read, or write (write also reads).")],
) -> None:
    """Create an API token; the secret is printed ONCE and never stored."""
    with _runtime(ctx) as rt:
        token_id, secret = rt.tokens.create(name, scope.value)
    typer.echo(f"token_id: {token_id}")
    typer.echo(f"secret:   {secret}")
    typer.echo("store the secret now: only its SHA-256 is kept, it cannot be shown again", err=True)


@token_app.command("revoke")
def token_revoke(ctx: typer.Context, token_id: Annotated[str, typer.Argument()]) -> None:
    """Revoke a token; it is refused from the next request on."""
    with _runtime(ctx) as rt:
        token = rt.tokens.revoke(token_id)
    typer.echo(f"revoked {token.token_id} ({token.name}) at {_fmt(token.revoked_at)}")


@token_app.command("list")
def token_list(ctx: typer.Context) -> None:
    """List tokens (never their secrets)."""
    with _runtime(ctx) as rt:
        tokens = rt.tokens.list()
    if not tokens:
        typer.echo("no tokens")
    for t in tokens:
        state = f"revoked {_fmt(t.revoked_at)}" if t.revoked_at else "active"
        typer.echo(f"{t.token_id}  {t.scope:<5}  {state:<30}  {t.name}")


# ---------------------------------------------------------------------------------------------
# doctor, serve, eval, bench


@app.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """Check the database, the model configuration and, with a key, the gateway (no secrets shown).

    Exits 1 when any check fails."""
    from control_plane.surfaces.doctor import run_doctor

    report = run_doctor(os.environ, database_url=(ctx.find_root().obj or {}).get("db"))
    for line in report.lines():
        typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8000,
    expose: Annotated[
        bool, typer.Option("--expose", help="Serve open reads and /ask on a non-loopback address.")
    ] = False,
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs). A non-loopback --host needs read tokens
    (KG_API_READS_REQUIRE_TOKEN=1) or --expose; what is exposed is printed first."""
    import uvicorn

    from control_plane.settings import ServingSettings, exposure_problem
    from control_plane.surfaces.http import ApiConfig, create_app

    settings = _settings(ctx)
    serving = ServingSettings.from_env(os.environ)
    problem = exposure_problem(host, serving, expose=expose)
    if problem is not None:
        _fail(problem, code=2)
    for line in serving.describe(host, port):
        typer.echo(line, err=True)
    _configure_logging(json_events=True)
    uvicorn.run(
        create_app(settings, config=ApiConfig.from_env(os.environ)), host=host, port=port, log_config=None
    )


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
        _fail(f"{name} is not available yet in this installation", code=2)
    return importlib.import_module(name)


def _evals_db(ctx: typer.Context, db: str | None) -> str | None:
    """``--db`` given to the command, else ``kg --db``; never KG_DATABASE_URL (evals need a known
    graph, benchmarks an empty database, so they default to fresh temporary SQLite files)."""
    return db or (ctx.find_root().obj or {}).get("db")


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
        typer.Option("--questions", help="JSON Lines question set. Default: the bundled curriculum set."),
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
    out: Annotated[Path, typer.Option("--out", help="Report directory.")] = Path("eval-report"),
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Only the first N questions.")] = None,
    record: Annotated[
        bool, typer.Option("--record", help="Record the loop's answers in the database.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Keep the loop's per-round log events.")] = False,
) -> None:
    """Score the loop and the baselines on a question set; write report.json, report.md and plots."""
    runner = _evals("runner")
    from evals.baselines import BASELINES

    unknown = sorted(set(baseline or ()) - set(BASELINES))
    if unknown:
        _fail(f"--baseline {unknown[0]!r} is not one of {', '.join(BASELINES)}", code=2)
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
        )
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
    out: Annotated[Path, typer.Option("--out", help="Report directory.")] = Path("bench-report"),
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
) -> None:
    """Time import, the whole loop (without the model) and export on synthetic graphs of each size,
    each beside the raw driver in the same run; write bench.json, bench.md and plots."""
    module = _evals("bench")
    try:
        edges = [int(part) for part in sizes.split(",") if part.strip()]
    except ValueError:
        _fail(f"--sizes must be comma-separated edge counts, got {sizes!r}", code=2)
    if not edges or min(edges) < 1:
        _fail(f"--sizes must be comma-separated positive edge counts, got {sizes!r}", code=2)
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
    typer.echo(report["table"])


if __name__ == "__main__":
    app()
