"""``kg concept``, ``kg edge`` and ``kg lesson``: grounded writes, one version each, printed."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from control_plane.surfaces.cli.options import (
    AllowDuplicateNameOpt,
    AsOfOpt,
    ConfidenceOpt,
    DataFormat,
    DataFormatOpt,
    EdgeArg,
    EvidenceOpt,
    InvalidAtOpt,
    KnownAtOpt,
    ReasonOpt,
    RetractOpt,
    SourceOpt,
    ValidAtOpt,
)
from control_plane.surfaces.cli.shell import (
    commands,
    edge_parts,
    group,
    option_time,
    print_json,
    runtime,
)
from data_plane.clock import format_time
from data_plane.errors import InputError

if TYPE_CHECKING:
    from control_plane.surfaces.runtime import Runtime
    from data_plane.gateway import Write
    from data_plane.records import Grounding, Version

__all__ = ["app"]

app = commands()
concept_app = group("Look concepts up and curate them (every write is grounded).")
edge_app = group("Curate edges: source>relation>target.")
lesson_app = group("Link lessons to concepts.")
app.add_typer(concept_app, name="concept")
app.add_typer(edge_app, name="edge")
app.add_typer(lesson_app, name="lesson")


def grounding(reason: str, source: str | None, evidence: str, confidence: float) -> Grounding:
    """The grounding of a write from its options; ``--evidence`` must be storable JSON."""
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
    return Grounding(
        confidence=confidence, reason=reason, source=source or f"cli:{login_name()}", evidence=parsed
    )


def login_name() -> str:
    """Who runs the command: $LOGNAME, $USER, $LNAME or $USERNAME, else the account's name in the
    system's password database; a write with no --source and no name anywhere is refused."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError) as exc:
        raise InputError(
            "no user name to record as the source (no $USER, and none for this account): pass --source",
            field="source",
        ) from exc


UntilOpt = Annotated[
    str | None,
    typer.Option(
        "--until",
        help="End of the valid period the write covers (ISO 8601; default: open). Outside it the "
        "versions in force keep what they say.",
    ),
]
CorrectOpt = Annotated[
    bool,
    typer.Option(
        "--correct",
        help="Correct the whole period instead: one version from --valid-at (default: the first "
        "start) to --until (default: the last end) replaces every version in force.",
    ),
]
# A revision's start: unlike an assertion's, it defaults to the whole validity, not to now.
ReviseFromOpt = Annotated[
    str | None,
    typer.Option(
        "--valid-at",
        help="Start of the revised period (ISO 8601). Default: all of its validity, from where it "
        "first holds (with --correct: the first start).",
    ),
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Show what would be written and which recorded answers it would change; write nothing.",
    ),
]


def apply_writes(
    rt: Runtime,
    writes: Sequence[Write],
    *,
    dry_run: bool,
    allow_duplicate_name: bool = False,
    fmt: DataFormat = DataFormat.text,
) -> None:
    """Apply ``writes`` and print every version written (or, with ``dry_run``, what would be
    written and which recorded answers it would change, writing nothing); ``fmt`` json prints
    ``{"written": [...]}`` as the HTTP API answers (with ``dry_run``, also ``"answers"``)."""
    from control_plane.surfaces.writes import curate

    outcome = curate(rt, writes, dry_run=dry_run, allow_duplicate_names=allow_duplicate_name)
    if fmt is DataFormat.json:
        print_json(outcome.to_dict())
        return
    if outcome.answers is None:
        print_versions(outcome.versions)
        return
    typer.echo("dry run, nothing was written; it would write:")
    print_versions(outcome.versions, indent="  ")
    for line in outcome.answers.lines():
        typer.echo(line)


def show_versions(versions: Sequence[Version], fmt: DataFormat) -> None:
    """Versions written, one line each, or as ``{"written": [...]}`` (the HTTP API's shape)."""
    if fmt is DataFormat.json:
        print_json({"written": [v.to_dict() for v in versions]})
    else:
        print_versions(versions)


def print_versions(versions: Sequence[Version], *, indent: str = "") -> None:
    for v in versions:
        st = v.stamp
        typer.echo(
            f"{indent}{v.table} {v.key_text}: version {st.version_id} op={st.op} "
            f"valid {format_time(st.valid_at)}..{format_time(st.invalid_at) or 'open'} "
            f"recorded {format_time(st.recorded_at)}"
            + (f" supersedes {st.supersedes_id}" if st.supersedes_id else "")
        )


@concept_app.command("add")
def concept_add(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument(help="Stable id, e.g. rag.")],
    name: Annotated[str, typer.Option("--name", help="Display name.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    alias: Annotated[list[str] | None, typer.Option("--alias", help="An alias (repeatable).")] = None,
    summary: Annotated[str, typer.Option("--summary", help="One-paragraph summary.")] = "",
    valid_at: ValidAtOpt = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    allow_duplicate_name: AllowDuplicateNameOpt = False,
    until: UntilOpt = None,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Assert a new concept, or again one that was invalidated, over [--valid-at, --until) where
    it does not hold. A name or alias another concept already goes by (as questions are read)
    is refused unless --allow-duplicate-name."""
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=grounding(reason, source, evidence, confidence),
        name=name,
        aliases=alias or [],
        summary=summary,
        valid_at=option_time(valid_at, "valid_at"),
        invalid_at=option_time(until, "until"),
    )
    with runtime(ctx) as rt:
        apply_writes(rt, [w], dry_run=dry_run, allow_duplicate_name=allow_duplicate_name, fmt=fmt)


@concept_app.command("revise")
def concept_revise(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument(help="The concept's id.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    name: Annotated[str | None, typer.Option("--name", help="New display name.")] = None,
    alias: Annotated[
        list[str] | None, typer.Option("--alias", help="Replaces the aliases (repeatable).")
    ] = None,
    summary: Annotated[str | None, typer.Option("--summary", help="New one-paragraph summary.")] = None,
    valid_at: ReviseFromOpt = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    allow_duplicate_name: AllowDuplicateNameOpt = False,
    until: UntilOpt = None,
    correct: CorrectOpt = False,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Revise a concept from --valid-at (default: all of its validity) until --until (default:
    open); fields not given are kept. Before and after that period, it stays as it was."""
    from control_plane.surfaces.writes import revision
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=grounding(reason, source, evidence, confidence),
        name=name,
        aliases=alias,
        summary=summary,
        **revision(option_time(valid_at, "valid_at"), option_time(until, "until"), correct=correct),
    )
    with runtime(ctx, concepts=[concept_id]) as rt:
        apply_writes(rt, [w], dry_run=dry_run, allow_duplicate_name=allow_duplicate_name, fmt=fmt)


@concept_app.command("invalidate")
def concept_invalidate(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument(help="The concept's id.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    invalid_at: InvalidAtOpt = None,
    retract: RetractOpt = False,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    until: UntilOpt = None,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Close a concept's validity from --invalid-at (default now) until --until (default: for
    good); its edges and lesson links are closed with it over the same period."""
    from control_plane.surfaces.writes import invalidation
    from data_plane.gateway import Write

    w = Write.concept(
        concept_id,
        grounding=grounding(reason, source, evidence, confidence),
        **invalidation(option_time(invalid_at, "invalid_at"), option_time(until, "until"), retract=retract),
    )
    with runtime(ctx, concepts=[concept_id]) as rt:
        apply_writes(rt, [w], dry_run=dry_run, fmt=fmt)


@edge_app.command("add")
def edge_add(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    valid_at: ValidAtOpt = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    until: UntilOpt = None,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Assert an edge between two active concepts (a new one, or again one that was invalidated)
    over [--valid-at, --until) where it does not hold."""
    from data_plane.gateway import Write

    s, t, r = edge_parts(edge)
    w = Write.edge(
        s,
        t,
        r,
        grounding=grounding(reason, source, evidence, confidence),
        valid_at=option_time(valid_at, "valid_at"),
        invalid_at=option_time(until, "until"),
    )
    with runtime(ctx, concepts=[s, t]) as rt:
        apply_writes(rt, [w], dry_run=dry_run, fmt=fmt)


@edge_app.command("revise")
def edge_revise(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    valid_at: ReviseFromOpt = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    until: UntilOpt = None,
    correct: CorrectOpt = False,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Re-ground an edge from --valid-at (default: all of its validity) until --until (default:
    open); before and after that period it stays as it was."""
    from control_plane.surfaces.writes import revision
    from data_plane.gateway import Write

    s, t, r = edge_parts(edge)
    w = Write.edge(
        s,
        t,
        r,
        grounding=grounding(reason, source, evidence, confidence),
        **revision(option_time(valid_at, "valid_at"), option_time(until, "until"), correct=correct),
    )
    with runtime(ctx, concepts=[s, t]) as rt:
        apply_writes(rt, [w], dry_run=dry_run, fmt=fmt)


@edge_app.command("invalidate")
def edge_invalidate(
    ctx: typer.Context,
    edge: EdgeArg,
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    invalid_at: InvalidAtOpt = None,
    retract: RetractOpt = False,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    until: UntilOpt = None,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Close an edge's validity from --invalid-at (default now) until --until (default: for
    good), or retract it."""
    from control_plane.surfaces.writes import invalidation
    from data_plane.gateway import Write

    s, t, r = edge_parts(edge)
    w = Write.edge(
        s,
        t,
        r,
        grounding=grounding(reason, source, evidence, confidence),
        **invalidation(option_time(invalid_at, "invalid_at"), option_time(until, "until"), retract=retract),
    )
    with runtime(ctx, concepts=[s, t]) as rt:
        apply_writes(rt, [w], dry_run=dry_run, fmt=fmt)


@lesson_app.command("link")
def lesson_link(
    ctx: typer.Context,
    lesson_id: Annotated[str, typer.Argument()],
    concept_id: Annotated[str, typer.Argument(help="The concept's id.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    title: Annotated[str | None, typer.Option("--title", help="Lesson title (creates or retitles).")] = None,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Link a lesson to an active concept (again, after an unlink)."""
    from data_plane.gateway import Write

    g = grounding(reason, source, evidence, confidence)
    with runtime(ctx, concepts=[concept_id]) as rt:
        if dry_run:
            writes = [
                Write.lesson(lesson_id, grounding=g, title=title),
                Write.lesson_link(lesson_id, concept_id, grounding=g),
            ]
            apply_writes(rt, writes, dry_run=True, fmt=fmt)
            return
        v = rt.gateway.link_lesson(lesson_id, concept_id, grounding=g, title=title)
    show_versions([v], fmt)


@lesson_app.command("unlink")
def lesson_unlink(
    ctx: typer.Context,
    lesson_id: Annotated[str, typer.Argument()],
    concept_id: Annotated[str, typer.Argument(help="The concept's id.")],
    reason: ReasonOpt,
    evidence: EvidenceOpt,
    source: SourceOpt = None,
    confidence: ConfidenceOpt = 1.0,
    dry_run: DryRunOpt = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Close a lesson link from now on."""
    from data_plane.gateway import Write

    g = grounding(reason, source, evidence, confidence)
    with runtime(ctx, concepts=[concept_id]) as rt:
        if dry_run:
            apply_writes(
                rt,
                [Write.lesson_link(lesson_id, concept_id, grounding=g, mode="invalidate")],
                dry_run=True,
                fmt=fmt,
            )
            return
        v = rt.gateway.unlink_lesson(lesson_id, concept_id, grounding=g)
    show_versions([v], fmt)


# -- look-ups ---------------------------------------------------------------------------------


@concept_app.command("list")
def concept_list(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Concepts per page.")] = 50,
    after: Annotated[
        str | None, typer.Option("--after", help="Continue after this id (printed at the end of a page).")
    ] = None,
    relation: Annotated[
        str | None, typer.Option("--relation", help="Only concepts with an edge of this relation.")
    ] = None,
    min_degree: Annotated[
        int, typer.Option("--min-degree", min=0, help="Only concepts with at least N edges.")
    ] = 0,
    max_degree: Annotated[
        int | None, typer.Option("--max-degree", min=0, help="Only concepts with at most N edges.")
    ] = None,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Concepts in force, by id, a page at a time, with their edges per relation."""
    from control_plane.surfaces.lookup import listing
    from data_plane.relations import RELATIONS

    if relation is not None and relation not in RELATIONS:
        raise InputError(f"--relation {relation!r} is not one of {', '.join(RELATIONS)}", field="relation")
    with runtime(ctx) as rt:
        point = rt.reader.as_of(option_time(as_of, "as_of"), option_time(known_at, "known_at"))
        page, nxt = listing(
            rt.reader,
            point,
            after=after,
            limit=limit,
            relation=relation,
            min_degree=min_degree,
            max_degree=max_degree,
        )
    if fmt is DataFormat.json:
        print_json({"concepts": [item.to_dict() for item in page], "next_after": nxt})
        return
    if not page:
        typer.echo("no concepts")
    for item in page:
        rels = ", ".join(f"{r} {n}" for r, n in sorted(item.relations.items())) or "no edges"
        typer.echo(f"{item.concept.concept_id}  {item.concept.name}  (degree {item.degree}: {rels})")
    if nxt is not None:
        typer.echo(f"more: kg concept list --after {nxt}", err=True)


@concept_app.command("show")
def concept_show(
    ctx: typer.Context,
    concept_id: Annotated[str, typer.Argument(metavar="CONCEPT_ID", help="The concept's id.")],
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """One concept: its current version and grounding, its edges out and in, its lessons, its
    requirement groups and the groups it is an option of."""
    from control_plane.surfaces.lookup import profile, requirement_line

    with runtime(ctx, concepts=[concept_id]) as rt:
        point = rt.reader.as_of(option_time(as_of, "as_of"), option_time(known_at, "known_at"))
        found = profile(rt.reader, concept_id, point)
    if fmt is DataFormat.json:
        print_json(found.to_dict())
        return
    c, g, st = found.concept, found.concept.grounding, found.concept.stamp
    lines = [
        f"{c.concept_id}: {c.name}",
        f"  aliases: {', '.join(c.aliases) or '-'}",
        f"  summary: {c.summary or '-'}",
        f"  version {st.version_id} op={st.op} valid {format_time(st.valid_at)}..{format_time(st.invalid_at) or 'open'}"
        f" recorded {format_time(st.recorded_at)}",
        f"  grounding: confidence {g.confidence:.2f}, source {g.source}, reason {g.reason}",
        f"  evidence: {json.dumps(g.evidence, ensure_ascii=False)}",
    ]
    for title, edges in (("out", found.outgoing), ("in", found.incoming)):
        lines.append(f"edges {title} ({len(edges)}):")
        lines += [f"  {e.key}  {e.grounding.confidence:.2f}  {e.grounding.reason}" for e in edges]
    lines.append(f"lessons ({len(found.lessons)}):")
    lines += [f"  {v.key[0]}  {title or '-'}" for v, title in found.lessons]
    for title, groups in (("requirements", found.requirements), ("option of", found.option_of)):
        if groups:
            lines.append(f"{title} ({len(groups)}):")
            lines += [f"  {requirement_line(g)}" for g in groups]
    for line in lines:
        typer.echo(line)


def _score(value: float) -> float:
    """A score from 0 to 100 (NaN and infinities are not scores)."""
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise typer.BadParameter(f"must be a number from 0 to 100, got {value:g}")
    return value


@concept_app.command("search")
def concept_search(
    ctx: typer.Context,
    text: Annotated[
        str, typer.Argument(metavar="TEXT", help="Words to find (typos and partial names are fine).")
    ],
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Most hits to show.")] = 10,
    cutoff: Annotated[
        float,
        typer.Option("--min-score", callback=_score, help="Lowest score (0-100) shown."),
    ] = 75.0,
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Concepts whose name, an alias or summary match TEXT (fuzzy), best first."""
    from control_plane.surfaces.lookup import search

    with runtime(ctx) as rt:
        point = rt.reader.as_of(option_time(as_of, "as_of"), option_time(known_at, "known_at"))
        hits = search(text, rt.reader.stream_concepts(point), limit=limit, cutoff=cutoff)
    if fmt is DataFormat.json:
        print_json([h.to_dict() for h in hits])
        return
    if not hits:
        typer.echo(f"no concept matches {text!r} (score >= {cutoff:g})")
    for h in hits:
        shown = h.text if len(h.text) <= 80 else h.text[:79] + "…"
        typer.echo(f"{h.score:5.1f}  {h.concept_id}  {h.name}  ({h.field}: {shown})")
