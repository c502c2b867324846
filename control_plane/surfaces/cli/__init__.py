"""The ``kg`` command line: ask, curate, audit, move bundles, manage API tokens, serve, evaluate.

One module per command group, sharing one set of option types (``options``) and one error edge
(``shell``)::

    ask          kg init, kg ask
    curation     kg concept, kg edge, kg lesson
    bundles      kg import, kg export, kg bundle
    audit        kg audit
    serve        kg serve, kg token, kg doctor
    evaluation   kg eval, kg bench

Configuration is read from the environment once, at the edge, into ``Settings`` and passed down.
Every error the backend raises on purpose ends the command with one line, ``error: ...`` on
stderr, and exit code 1; usage errors exit with 2; ``kg ask`` exits 3 when it abstained because
the model stayed unavailable. Command bodies import what they need, so that
``kg --help`` and usage errors load neither SQLAlchemy nor the question reader.
"""

from __future__ import annotations

from typing import Annotated

import typer

from control_plane.surfaces.cli import ask, audit, bundles, curation, evaluation, serve
from control_plane.surfaces.cli.shell import commands

__all__ = ["app"]

app = commands(
    no_args_is_help=True,
    # Typer's own shell completion: kg --install-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    pretty_exceptions_enable=False,
    help="A bi-temporal curriculum knowledge graph: grounded answers with their evidence, or an abstention.",
)
for module in (ask, bundles, serve, evaluation, curation, audit):
    app.add_typer(module.app)


def _version(shown: bool) -> None:
    """``kg --version``: the installed distribution's version, and nothing else is run."""
    if shown:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"kg (curriculum-kg) {version('curriculum-kg')}")
        except PackageNotFoundError:
            typer.echo("kg (curriculum-kg): version unknown (not installed; run from a checkout)")
        raise typer.Exit()


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
    _shown_version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_version),
    ] = False,
) -> None:
    ctx.obj = {"db": db}
