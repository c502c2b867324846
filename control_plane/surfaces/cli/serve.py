"""``kg serve``, ``kg mcp``, ``kg token`` and ``kg doctor``: run the HTTP API (MCP at ``/mcp`` with
it), serve MCP over stdio, manage API tokens, check the set-up."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from control_plane.surfaces.cli.options import DataFormat, DataFormatOpt, Scope
from control_plane.surfaces.cli.shell import (
    commands,
    configure_logging,
    fail,
    group,
    print_json,
    require_database,
    root_db,
    runtime,
    settings,
)
from data_plane.clock import format_time

if TYPE_CHECKING:
    from control_plane.surfaces.runtime import Runtime

__all__ = ["app"]

app = commands()
token_app = group("API bearer tokens (stored hashed).")
app.add_typer(token_app, name="token")


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Who or what the token is for.")],
    scope: Annotated[Scope, typer.Option("--scope", help="read, or write (write also reads).")],
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Create an API token; the secret is printed ONCE and never stored."""
    with runtime(ctx) as rt:
        token_id, secret = rt.tokens.create(name, scope.value)
    if fmt is DataFormat.json:
        print_json({"token_id": token_id, "name": name, "scope": scope.value, "secret": secret})
        return
    typer.echo(f"token_id: {token_id}")
    typer.echo(f"secret:   {secret}")
    typer.echo("store the secret now: only its SHA-256 is kept, it cannot be shown again", err=True)


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(help="The token's id (see `kg token list`).")],
    fmt: DataFormatOpt = DataFormat.text,
) -> None:
    """Revoke a token; it is refused from the next request on."""
    with runtime(ctx) as rt:
        token = rt.tokens.revoke(token_id)
    if fmt is DataFormat.json:
        print_json(token.to_dict())
        return
    typer.echo(f"revoked {token.token_id} ({token.name}) at {format_time(token.revoked_at)}")


@token_app.command("list")
def token_list(ctx: typer.Context, fmt: DataFormatOpt = DataFormat.text) -> None:
    """List tokens (never their secrets)."""
    with runtime(ctx) as rt:
        tokens = rt.tokens.list()
    if fmt is DataFormat.json:
        print_json([t.to_dict() for t in tokens])
        return
    if not tokens:
        typer.echo("no tokens")
    for t in tokens:
        state = f"revoked {format_time(t.revoked_at)}" if t.revoked_at else "active"
        typer.echo(f"{t.token_id}  {t.scope:<5}  {state:<30}  {t.name}")


@app.command("doctor")
def doctor(ctx: typer.Context, fmt: DataFormatOpt = DataFormat.text) -> None:
    """Check the database, the model configuration and, with a key, the gateway (no secrets shown).

    Exits 1 when any check fails."""
    from control_plane.surfaces.doctor import run_doctor

    report = run_doctor(os.environ, database_url=root_db(ctx))
    if fmt is DataFormat.json:
        print_json(report.to_dict())
    else:
        for line in report.lines():
            typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)


# What ``kg serve --workers N`` (N > 1) hands uvicorn: each worker process builds its own app.
APP_FACTORY = "control_plane.surfaces.http:app_from_env"


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
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Worker processes (uvicorn's). They share the limits, which live in the database.",
        ),
    ] = 1,
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs). A non-loopback --host needs read tokens
    (KG_API_READS_REQUIRE_TOKEN=1) or --expose; what is exposed is printed first, and "serving on"
    once the server answers."""
    import uvicorn

    from control_plane.settings import ServingSettings, exposure_problem
    from control_plane.surfaces.http import ApiConfig, create_app

    chosen = settings(ctx)  # a bad setting fails here, before any worker starts
    serving = ServingSettings.from_env(os.environ)
    problem = exposure_problem(host, serving, expose=expose)
    if problem is not None:
        fail(problem, code=2)
    require_database(chosen)
    taken = port_problem(host, port)
    if taken is not None:
        fail(taken)
    for line in serving.describe(host, port):
        typer.echo(line, err=True)
    configure_logging(json_events=True)
    _announce_when_answering(host, port, workers)
    # uvicorn's own X-Forwarded-For handling (on by default, trusting loopback) would let a client
    # pick its own address; the app reads the header from KG_API_TRUSTED_PROXIES only.
    try:
        if workers == 1:
            app = create_app(chosen, config=ApiConfig.from_env(os.environ))
            uvicorn.run(app, host=host, port=port, log_config=None, proxy_headers=False)
            return
        with _worker_environment(root_db(ctx)):
            uvicorn.run(
                APP_FACTORY,
                factory=True,
                workers=workers,
                host=host,
                port=port,
                log_config=None,
                proxy_headers=False,
            )
    except SystemExit as exc:
        # uvicorn exits 3 when it cannot start (the port was taken after the check above, say):
        # that is this command's error (1), not an abstention (3).
        if exc.code not in (0, None):
            fail(f"the server could not start on {host}:{port} (see the log line above)")
        raise


@app.command("mcp")
def mcp_stdio(ctx: typer.Context) -> None:
    """Serve MCP (the Model Context Protocol) over stdin and stdout, for an AI client that starts
    it (a desktop assistant); over HTTP, kg serve answers MCP at /mcp. Reads need no token unless
    KG_API_READS_REQUIRE_TOKEN=1; writes need KG_MCP_TOKEN, the secret of a write token. Asks
    share the limits of /ask (KG_API_ASK_RATE_PER_MIN). A new SQLite file is set up on first use,
    as kg ask does. Logs go to stderr."""
    import time

    from control_plane.settings import ServingSettings
    from control_plane.surfaces.cli.ask import first_run
    from control_plane.surfaces.mcp import Backend, run_stdio
    from control_plane.surfaces.ratelimit import serving_limits
    from control_plane.surfaces.runtime import Runtime, default_database_url

    chosen = settings(ctx)
    serving = ServingSettings.from_env(os.environ)
    first_run(chosen.database_url or default_database_url())
    configure_logging(json_events=True)
    rt = Runtime.build(chosen)
    try:
        if serving.mcp_token is not None:
            _check_token(rt, serving.mcp_token.reveal())
        limiter = serving_limits(
            rt,
            ask_rate_per_min=serving.ask_rate_per_min,
            model_calls_per_min=serving.model_calls_per_min,
            clock=time.time,
        )
        run_stdio(Backend(rt, serving.reads_require_token, limiter, stdio_secret=serving.mcp_token))
    finally:
        rt.close()


def _check_token(rt: Runtime, secret: str) -> None:
    """``kg mcp`` refuses to start with a token that is unknown or revoked (a call would be
    refused anyway; this says why at once, naming the setting)."""
    from control_plane.errors import Unauthenticated
    from control_plane.surfaces.access import presented
    from data_plane.errors import ConfigurationError

    try:
        presented(rt.tokens, secret)
    except Unauthenticated as exc:
        raise ConfigurationError(
            "KG_MCP_TOKEN is not the secret of an active token (unknown or revoked): create one "
            "with `kg token create NAME --scope write`"
        ) from exc


def port_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (a port in use, an address this machine
    does not have), or None. Binds and closes a socket as uvicorn would (``SO_REUSEADDR``)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is in use (another server?): stop it, or serve on another "
                    "port with --port"
                )
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def _announce_when_answering(host: str, port: int, workers: int) -> None:
    """Print "serving on ..." once ``/healthz`` answers (the socket is listening and a worker
    serves), from a background thread, so it is never printed for a server that failed to bind."""
    import threading
    import time

    import httpx

    probe = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    shown = f"[{probe}]" if ":" in probe else probe
    url = f"http://{shown}:{port}/healthz"
    processes = f"{workers} worker processes" if workers > 1 else "1 process"

    def wait() -> None:
        while True:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    typer.echo(f"serving on http://{host}:{port} ({processes}); docs at /docs", err=True)
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)

    threading.Thread(target=wait, name="kg-serve-announce", daemon=True).start()


@contextmanager
def _worker_environment(db: str | None) -> Iterator[None]:
    """What worker processes read at start: ``--db`` as ``KG_DATABASE_URL``, and a fresh folder for
    the metrics of every worker (``PROMETHEUS_MULTIPROC_DIR``) unless one is set already."""
    import shutil
    import tempfile

    if db is not None:
        os.environ["KG_DATABASE_URL"] = db
    made = None
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip():
        made = tempfile.mkdtemp(prefix="kg-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = made
    try:
        yield
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
