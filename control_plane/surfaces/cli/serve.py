"""``kg serve``, ``kg token`` and ``kg doctor``: run the HTTP API, manage its tokens, check the set-up."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from control_plane.surfaces.cli.options import Scope
from control_plane.surfaces.cli.shell import (
    commands,
    configure_logging,
    fail,
    group,
    require_database,
    root_db,
    runtime,
    settings,
)
from data_plane.clock import format_time

__all__ = ["app"]

app = commands()
token_app = group("API bearer tokens (stored hashed).")
app.add_typer(token_app, name="token")


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Who or what the token is for.")],
    scope: Annotated[Scope, typer.Option("--scope", help="read, or write (write also reads).")],
) -> None:
    """Create an API token; the secret is printed ONCE and never stored."""
    with runtime(ctx) as rt:
        token_id, secret = rt.tokens.create(name, scope.value)
    typer.echo(f"token_id: {token_id}")
    typer.echo(f"secret:   {secret}")
    typer.echo("store the secret now: only its SHA-256 is kept, it cannot be shown again", err=True)


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context, token_id: Annotated[str, typer.Argument(help="The token's id (see `kg token list`).")]
) -> None:
    """Revoke a token; it is refused from the next request on."""
    with runtime(ctx) as rt:
        token = rt.tokens.revoke(token_id)
    typer.echo(f"revoked {token.token_id} ({token.name}) at {format_time(token.revoked_at)}")


@token_app.command("list")
def token_list(ctx: typer.Context) -> None:
    """List tokens (never their secrets)."""
    with runtime(ctx) as rt:
        tokens = rt.tokens.list()
    if not tokens:
        typer.echo("no tokens")
    for t in tokens:
        state = f"revoked {format_time(t.revoked_at)}" if t.revoked_at else "active"
        typer.echo(f"{t.token_id}  {t.scope:<5}  {state:<30}  {t.name}")


@app.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """Check the database, the model configuration and, with a key, the gateway (no secrets shown).

    Exits 1 when any check fails."""
    from control_plane.surfaces.doctor import run_doctor

    report = run_doctor(os.environ, database_url=root_db(ctx))
    for line in report.lines():
        typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    expose: Annotated[
        bool, typer.Option("--expose", help="Serve open reads and /ask on a non-loopback address.")
    ] = False,
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs). A non-loopback --host needs read tokens
    (KG_API_READS_REQUIRE_TOKEN=1) or --expose; what is exposed is printed first."""
    import uvicorn

    from control_plane.settings import ServingSettings, exposure_problem
    from control_plane.surfaces.http import ApiConfig, create_app

    chosen = settings(ctx)
    serving = ServingSettings.from_env(os.environ)
    problem = exposure_problem(host, serving, expose=expose)
    if problem is not None:
        fail(problem, code=2)
    require_database(chosen)
    for line in serving.describe(host, port):
        typer.echo(line, err=True)
    configure_logging(json_events=True)
    uvicorn.run(
        create_app(chosen, config=ApiConfig.from_env(os.environ)), host=host, port=port, log_config=None
    )
