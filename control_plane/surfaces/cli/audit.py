"""``kg audit``: history, snapshots, diffs, recorded answers, set-aside rows, replay."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

from control_plane.surfaces.cli.options import DataFormat, DataFormatOpt, SinceOpt
from control_plane.surfaces.cli.shell import (
    commands,
    console,
    edge_parts,
    group,
    option_time,
    print_json,
    runtime,
)
from data_plane.clock import format_time

if TYPE_CHECKING:
    from data_plane.records import Version

__all__ = ["app"]

app = commands()
audit_app = group("History, snapshots, diffs, answers, replay.")
app.add_typer(audit_app, name="audit")


@audit_app.command("history")
def audit_history(
    ctx: typer.Context,
    key: Annotated[
        str,
        typer.Argument(
            help="A concept id, an edge as source>relation>target, or a group id (--requirement)."
        ),
    ],
    requirement: Annotated[
        bool, typer.Option("--requirement", help="KEY is a requirement group: its versions and its members'.")
    ] = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Every version of a concept, edge or requirement group (with its members), oldest first,
    with grounding and stamps."""
    parts = edge_parts(key) if ">" in key and not requirement else None
    with runtime(ctx, concepts=[] if requirement else [key] if parts is None else parts[:2]) as rt:
        if requirement:
            versions = rt.reader.requirement_history(key)
        elif parts is not None:
            versions = rt.reader.history("concept_edges", parts)
        else:
            versions = rt.reader.history("concepts", (key,))
    if fmt is DataFormat.json:
        print_json([v.to_dict() for v in versions])
        return
    out = console()
    if out.width < HISTORY_TABLE_WIDTH:
        # A table this narrow would cut its timestamps ("2024-01-0…"): one block per version.
        for line in history_lines(versions):
            typer.echo(line)
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"History of {escape(key)}")
    for col in ("version", "op", "valid", "recorded", "conf", "reason", "source"):
        table.add_column(col)
    for v in versions:
        st = v.stamp
        member = f" {v.key_text}" if v.table == "requirement_members" else ""
        table.add_row(
            f"{st.version_id}{escape(member)}",
            st.op,
            f"{format_time(st.valid_at)} .. {format_time(st.invalid_at) or 'open'}",
            f"{format_time(st.recorded_at)} .. {format_time(st.expired_at) or 'current'}",
            f"{v.grounding.confidence:.2f}",
            escape(v.grounding.reason),
            escape(v.grounding.source),
        )
    out.print(table)


# The narrowest terminal on which the history table shows every timestamp whole.
HISTORY_TABLE_WIDTH: Final = 132


def history_lines(versions: Iterable[Version]) -> Iterator[str]:
    """The history as blocks of whole lines (pure): a version's number, operation and confidence,
    then its valid and recorded intervals, each timestamp whole, then reason and source."""
    for v in versions:
        st = v.stamp
        yield f"version {st.version_id}  {st.op}  confidence {v.grounding.confidence:.2f}"
        yield f"  valid     {format_time(st.valid_at)} .. {format_time(st.invalid_at) or 'open'}"
        yield f"  recorded  {format_time(st.recorded_at)} .. {format_time(st.expired_at) or 'current'}"
        yield f"  reason    {v.grounding.reason}"
        yield f"  source    {v.grounding.source}"


@audit_app.command("snapshot")
def audit_snapshot(
    ctx: typer.Context,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Valid time. Default: now.")] = None,
    known_at: Annotated[str | None, typer.Option("--known-at", help="Recorded time. Default: now.")] = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """The whole graph as of (valid time, recorded time), streamed as it is read."""
    from control_plane.surfaces.streaming import write_json_object

    with runtime(ctx) as rt:
        r = rt.reader
        point = r.as_of(option_time(as_of, "as_of"), option_time(known_at, "known_at"))
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
                    "requirement_groups": (
                        v.to_dict() for v in r.stream_versions("requirement_groups", point)
                    ),
                    "requirement_members": (
                        v.to_dict() for v in r.stream_versions("requirement_members", point)
                    ),
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
        n_groups = sum(1 for _ in r.stream_versions("requirement_groups", point))
    from control_plane.surfaces.wording import counted

    groups = f", {counted(n_groups, 'requirement group')}" if n_groups else ""
    typer.echo(
        f"snapshot as of {format_time(point.valid_at)} (known at {format_time(point.recorded_at)}): "
        f"{counted(n_concepts, 'concept')}, {counted(sum(counts.values()), 'edge')}, "
        f"{counted(n_lessons, 'lesson')}, {counted(n_links, 'lesson link')}{groups}"
    )
    for rel in sorted(counts):
        typer.echo(f"  {rel}: {counts[rel]}")


@audit_app.command("diff")
def audit_diff(
    ctx: typer.Context,
    since: Annotated[str, typer.Option("--from", help="Recorded time to diff from (exclusive).")],
    until: Annotated[str | None, typer.Option("--to", help="Recorded time to diff to. Default: now.")] = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """What the system learned between two recorded times: asserted, revised, invalidated,
    retracted; streamed as it is read."""
    from control_plane.surfaces.streaming import write_json_object
    from data_plane.clock import ensure_utc, utc_now
    from data_plane.reads import DIFF_TABLES

    t0 = option_time(since, "from")
    assert t0 is not None
    t1 = option_time(until, "to") or utc_now()
    t0, t1 = ensure_utc(t0, field="from"), ensure_utc(t1, field="to")
    groups = (
        ("asserted", "assert"),
        ("revised", "revise"),
        ("invalidated", "invalidate"),
        ("retracted", "retract"),
    )
    with runtime(ctx) as rt:
        r = rt.reader
        t1 = r.known_at(t1)  # no later than the latest committed write: a repeatable diff

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
        typer.echo(f"diff of recorded knowledge ({format_time(t0)}, {format_time(t1)}]:")
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
    since: SinceOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="Most answers to list.")] = 20,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Recorded answers and abstentions, newest first."""
    with runtime(ctx) as rt:
        versions = rt.reader.answers(since=option_time(since, "since"), limit=limit)
    if fmt is DataFormat.json:
        print_json([v.content["payload"] for v in versions])
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
        typer.echo(
            f"{v.key_text}  {format_time(v.stamp.recorded_at)}  {verdict}  {usage}  {p.get('question')}"
        )


@audit_app.command("set-aside")
def audit_set_aside(
    ctx: typer.Context,
    since: SinceOpt = None,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Rows imports set aside (cycles, unknown concepts, mutual prerequisites): when and why."""
    from data_plane.bundle import set_aside_records

    with runtime(ctx) as rt:
        versions = set_aside_records(rt.reader, since=option_time(since, "since"))
    if fmt is DataFormat.json:
        print_json([v.to_dict() for v in versions])
        return
    if not versions:
        typer.echo("no set-aside rows")
    for v in versions:
        ev = v.grounding.evidence
        state = "" if v.stamp.expired_at is None else f" (superseded {format_time(v.stamp.expired_at)})"
        typer.echo(
            f"{format_time(v.stamp.recorded_at)}  {v.key_text}  {ev.get('bundle')} {ev.get('file')}:{ev.get('line')}"
            f"{state}\n    {v.grounding.reason}"
        )


@audit_app.command("replay")
def audit_replay(
    ctx: typer.Context,
    answer_id: Annotated[str, typer.Argument(help="A recorded answer id (see `kg audit answers`).")],
    fmt: Annotated[
        DataFormat, typer.Option("--format", help="json (the default) for programs, text for people.")
    ] = DataFormat.json,
) -> None:
    """Re-run a recorded answer and report what changed since (JSON)."""
    with runtime(ctx) as rt:
        report = rt.replay(answer_id)
    if fmt is DataFormat.json:
        print_json(report)
        return
    changed = report["changes"]["answer_changed"]
    typer.echo(
        f"answer {report['answer_id']}: "
        + ("reproduced as it was known" if report["reproduced"] else "NOT reproduced as it was known")
        + ("; asked now, the answer changed" if changed else "; asked now, the same answer")
    )


@audit_app.command("impact")
def audit_impact(
    ctx: typer.Context,
    key: Annotated[
        str,
        typer.Argument(help="A concept id, an edge source>relation>target, a lesson link LESSON/CONCEPT."),
    ],
    replay: Annotated[
        bool,
        typer.Option(
            "--replay", help="Replay them (as known then, and asked now) and group by how they changed."
        ),
    ] = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Recorded answers that cited or read any version of a fact; with --replay, which of them
    answer differently now."""
    from control_plane.planning.impact import fact, impact

    with runtime(ctx) as rt:
        found = impact(
            rt.reader, [fact(key)], synthesizer=rt.planner.synthesizer if replay else None, clock=rt.clock
        )
    if fmt is DataFormat.json:
        print_json(found.to_dict())
        return
    for line in found.lines():
        typer.echo(line)


@audit_app.command("restore-periods")
def audit_restore_periods(
    ctx: typer.Context,
    check: Annotated[bool, typer.Option("--check", help="Only list them; write nothing.")] = False,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Restore the valid periods that revisions under the old rule dropped (before migration
    0004), as versions recorded now with a reason that says so. Running it again restores
    nothing more."""
    from data_plane.restore import find_dropped, restore_dropped

    with runtime(ctx) as rt:
        dropped = find_dropped(rt.engine)
        counts = restore_dropped(rt.gateway, dropped) if not check else None
    if fmt is DataFormat.json:
        print_json({"dropped": [d.to_dict() for d in dropped], "restored": counts})
        return
    verb = "would restore" if check else "restored"
    typer.echo(f"{verb} {len(dropped)} dropped valid period{'s' * (len(dropped) != 1)}")
    for d in dropped:
        key = f"{d.key[0]}>{d.key[2]}>{d.key[1]}" if d.table == "concept_edges" else "/".join(d.key)
        typer.echo(
            f"  {d.table} {key}: valid {format_time(d.period.start)}..{format_time(d.period.end) or 'open'}"
            f" (version {d.version_id}, dropped by version {d.dropped_by})"
        )
