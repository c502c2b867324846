"""``kg import``, ``kg export`` and ``kg bundle``: move whole graphs as ``kg-bundle/1`` folders."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, NoReturn

import typer

from control_plane.surfaces.cli.options import AsOfOpt, DataFormat, DataFormatOpt, KnownAtOpt
from control_plane.surfaces.cli.shell import commands, fail, group, option_time, print_json, runtime
from control_plane.surfaces.wording import counted
from data_plane.clock import format_time

if TYPE_CHECKING:
    from data_plane.bundle import ImportReport
    from data_plane.errors import Problem

__all__ = ["app"]

app = commands()
bundle_app = group("Make bundles from simpler formats.")
app.add_typer(bundle_app, name="bundle")


@app.command("import")
def import_(
    ctx: typer.Context,
    bundle: Annotated[
        Path | None,
        typer.Argument(help="A bundle directory (manifest.json + CSV files).", show_default=False),
    ] = None,
    invalidate_missing: Annotated[
        bool, typer.Option("--invalidate-missing", help="Invalidate active keys the bundle no longer has.")
    ] = False,
    reason: Annotated[str | None, typer.Option("--reason", help="Reason recorded for invalidations.")] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Check everything against the graph and write nothing.")
    ] = False,
    set_aside: Annotated[
        bool,
        typer.Option(
            "--set-aside",
            help="Import the rest; set aside (and record) rows that close prerequisite cycles or "
            "point at unknown concepts.",
        ),
    ] = False,
    mutual_as_related: Annotated[
        bool,
        typer.Option("--mutual-as-related", help="Keep 'A before B, B before A' as one related edge."),
    ] = False,
    pairs: Annotated[
        Path | None,
        typer.Option("--pairs", help="Import a two-column CSV of prerequisite pairs by name instead."),
    ] = None,
    names: Annotated[Path | None, typer.Option("--names", help="With --pairs: a names file.")] = None,
    allow_duplicate_names: Annotated[
        bool,
        typer.Option(
            "--allow-duplicate-names",
            help="Accept concepts whose name or alias reads the same as another concept's.",
        ),
    ] = False,
    max_problems: Annotated[int, typer.Option("--max-problems", min=1, help="Problems to print.")] = 50,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Import a graph bundle (idempotent: unchanged keys write nothing).

    Every problem is reported in one run (nothing is written); exit code 1 if the bundle was refused.
    """
    import dataclasses
    import tempfile

    from control_plane.surfaces.progress import progress_bar
    from control_plane.surfaces.runtime import report_dict
    from data_plane.bundle import ImportPolicy, check_bundle, import_bundle
    from data_plane.bundle_check import format_problems
    from data_plane.errors import BundleRejected
    from data_plane.pairs import bundle_from_pairs

    if (bundle is None) == (pairs is None):
        raise typer.BadParameter("give a BUNDLE directory or --pairs PAIRS.csv (one of them)")
    from data_plane.names import normalise

    policy = ImportPolicy(
        set_aside=set_aside,
        mutual_as_related=mutual_as_related,
        name_key=None if allow_duplicate_names else normalise,
    )
    with tempfile.TemporaryDirectory(prefix="kg-pairs-") as tmp:
        remap = None
        if pairs is not None:
            # The bundle made from the pairs is a means: what is said names the user's files.
            made = bundle_from_pairs(pairs, Path(tmp) / "bundle", names=names)
            bundle, remap = made.folder, made.remap
            policy = dataclasses.replace(policy, located=made.located)
        assert bundle is not None

        def refused(problems: Sequence[Problem], name: str | None) -> NoReturn:
            # The report is the command's output (stdout); the failure is one `error:` line (stderr).
            shown = [remap(p) for p in problems] if remap else list(problems)
            if fmt is DataFormat.json:
                print_json({"ok": False, "problems": [p.to_dict() for p in shown]})
            else:
                typer.echo(format_problems(shown, limit=max_problems, bundle=name))
            n = len(shown)
            fail(f"bundle {name!r} refused: {counted(n, 'problem')} (listed above); nothing was written")

        with runtime(ctx) as rt:
            if check:
                plan = check_bundle(rt.reader, bundle, policy=policy)
                if not plan.ok:
                    refused(plan.sorted_problems(), str(pairs or bundle))
                if fmt is DataFormat.json:
                    print_json(plan.to_dict())
                else:
                    rows = sum(plan.rows.values())
                    typer.echo(
                        f"bundle {plan.name!r}: {counted(rows, 'row')} checked, no problems; "
                        "an import would succeed"
                    )
                    _echo_set_aside(plan.set_asides(), "would be set aside")
                return
            try:
                with progress_bar(f"importing {pairs or bundle}") as advance:
                    report = import_bundle(
                        rt.gateway,
                        bundle,
                        invalidate_missing=invalidate_missing,
                        reason=reason,
                        policy=policy,
                        progress=lambda stage, done, total: advance(done, total, stage),
                    )
            except BundleRejected as exc:
                refused(exc.problems, str(pairs or bundle))
    if fmt is DataFormat.json:
        print_json(report_dict(report))
    else:
        typer.echo(_import_summary(report))
    _echo_set_aside(report.set_aside, "set aside (see `kg audit set-aside`)", err=True)


_TABLE_NOUNS: Final = {
    "concepts": "concept",
    "concept_edges": "edge",
    "lessons": "lesson",
    "lesson_concepts": "lesson link",
    "requirement_groups": "requirement group",
    "requirement_members": "requirement member",
}


def _import_summary(report: ImportReport) -> str:
    """What an import did, for people: the total, then what each table got."""
    lines = [
        f"imported bundle {report.bundle!r}: {counted(report.new_versions, 'new version')} "
        f"in {report.elapsed_s:.2f} s"
    ]
    for table, noun in _TABLE_NOUNS.items():
        counts = report.counts.get(table)
        if counts is None:
            continue
        done = ", ".join(f"{n} {what}" for what, n in counts.to_dict().items() if n)
        lines.append(f"  {noun}s: {done or 'none'}")
    return "\n".join(lines)


def _echo_set_aside(rows: Any, verb: str, *, err: bool = False) -> None:
    rows = list(rows)
    if rows:
        typer.echo(f"{counted(len(rows), 'row')} {verb}:", err=err)
    for r in rows:
        typer.echo(f"  {r.file}:{r.line} {r.key}: {r.kind}: {r.why}", err=err)


@bundle_app.command("from-pairs")
def bundle_from_pairs_cmd(
    pairs: Annotated[Path, typer.Argument(help="CSV of PREREQUISITE,CONCEPT pairs by name.")],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the bundle into.")],
    names: Annotated[
        Path | None, typer.Option("--names", help="CSV of concept names (name[,summary]).")
    ] = None,
    source: Annotated[str | None, typer.Option("--source", help="Default: pairs:FILE.")] = None,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.0, max=1.0, help="Confidence of every pair, in [0, 1].")
    ] = 1.0,
    fmt: Annotated[
        DataFormat, typer.Option("--format", help="json (the default) for programs, text for people.")
    ] = DataFormat.json,
) -> None:
    """Write a bundle from a two-column list of prerequisite pairs (ids are slugs of the names)."""
    from data_plane.pairs import bundle_from_pairs

    made = bundle_from_pairs(pairs, out, names=names, source=source, confidence=confidence)
    if fmt is DataFormat.json:
        print_json(made.to_dict())
    else:
        typer.echo(
            f"wrote bundle {made.folder}: {counted(made.concepts, 'concept')}, {counted(made.pairs, 'pair')}"
        )


@app.command("export")
def export(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Directory to write the bundle into.")],
    as_of: AsOfOpt = None,
    known_at: KnownAtOpt = None,
    formula_escape: Annotated[
        bool,
        typer.Option(
            "--formula-escape/--no-formula-escape",
            help="Write cells a spreadsheet would run as formulas (=, +, -, @ first) with a leading "
            "apostrophe, which kg import removes.",
        ),
    ] = True,
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Export the graph as of (valid time, recorded time) as a bundle."""
    from control_plane.surfaces.progress import progress_bar
    from control_plane.surfaces.runtime import report_dict
    from data_plane.bundle import export_bundle

    with runtime(ctx) as rt, progress_bar(f"exporting to {directory}"):
        point = rt.reader.as_of(option_time(as_of, "as_of"), option_time(known_at, "known_at"))
        report = export_bundle(rt.reader, directory, as_of=point, formula_escape=formula_escape)
    if fmt is DataFormat.json:
        print_json(report_dict(report))
        return
    written = ", ".join(counted(report[t], noun) for t, noun in _TABLE_NOUNS.items() if t in report)
    typer.echo(f"exported {written} to {directory} (as of {format_time(point.valid_at)})")
