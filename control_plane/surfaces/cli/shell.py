"""What every ``kg`` command shares: the error edge, settings and runtime from the root's ``--db``,
times, consoles and JSON output.

Every error the backend raises on purpose (``KGError``) ends the command with one line,
``error: ...`` on stderr, and exit code 1 (under ``--format json``, the line is a JSON object:
``{"error": "...", "exit_code": 1}``); usage errors exit with 2; ``kg ask`` exits with
:data:`EXIT_MODEL_UNAVAILABLE` (3) when it abstained because the model stayed unavailable. This module imports only
Typer at the top: what a command needs (SQLAlchemy, the planner, Rich tables) is imported inside
the command, so ``kg --help`` and usage errors never load it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from data_plane.clock import parse_time
from data_plane.errors import ConfigurationError, InactiveEndpoint, InputError, KGError, NotFound
from data_plane.relations import parse_edge_key

if TYPE_CHECKING:
    from control_plane.settings import Settings
    from control_plane.surfaces.runtime import Runtime

__all__ = [
    "EXIT_MODEL_UNAVAILABLE",
    "Command",
    "Group",
    "commands",
    "configure_logging",
    "console",
    "edge_parts",
    "fail",
    "group",
    "option_time",
    "print_json",
    "require_database",
    "root_db",
    "runtime",
    "say_waiting",
    "settings",
]


CommandFunction = TypeVar("CommandFunction", bound=Callable[..., Any])
# `kg ask` abstained because the model stayed unavailable after its retries: the answer is printed
# (and recorded), but a script must not take it for a real abstention.
EXIT_MODEL_UNAVAILABLE = 3


# Whether the command being run was asked for ``--format json``: its errors are JSON then too.
_JSON_ERRORS: ContextVar[bool] = ContextVar("kg_json_errors", default=False)


def fail(message: str, code: int = 1) -> NoReturn:
    """End the command with ``error: <first line of message>`` on stderr and exit ``code``; under
    ``--format json``, with the JSON object ``{"error": <that line>, "exit_code": code}`` instead."""
    from control_plane.surfaces.messages import first_line

    first = first_line(message)
    if _JSON_ERRORS.get():
        typer.echo(json.dumps({"error": first, "exit_code": code}, ensure_ascii=False), err=True)
    else:
        typer.echo(f"error: {first}", err=True)
    raise typer.Exit(code)


def _asks_for_json(args: list[str]) -> bool:
    """Whether the command line (what follows ``kg``'s own options) says ``--format json``."""
    return "--format=json" in args or any(
        a == "--format" and b == "json" for a, b in itertools.pairwise(args)
    )


class Group(TyperGroup):
    """Translates every error at the edge into one line on stderr and a non-zero exit code (a JSON
    object under ``--format json``, usage errors included)."""

    def invoke(self, ctx: Any) -> Any:
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]
        token = _JSON_ERRORS.set(True) if _asks_for_json(args) else None
        try:
            return self._invoke(ctx)
        finally:
            if token is not None:
                _JSON_ERRORS.reset(token)

    def _invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KGError as exc:
            fail(str(exc))
        except BrokenPipeError:
            # The reader went away (`kg audit snapshot | head`): stop quietly, as SIGPIPE would.
            _silence_stdout()
            raise typer.Exit(141) from None
        except OSError as exc:
            fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        except UnicodeEncodeError as exc:
            # Undecodable bytes in argv arrive as lone surrogates (PEP 383); no database stores them.
            fail(f"an argument is not valid UTF-8 text: {exc.object[exc.start : exc.end]!r}")
        except Exception as exc:
            # Typer's (vendored click's) own exits and usage errors carry their own exit codes.
            message = getattr(exc, "format_message", None)
            if _JSON_ERRORS.get() and callable(message):
                fail(str(message()), code=int(getattr(exc, "exit_code", 2)))
            if os.environ.get("KG_DEBUG") == "1" or type(exc).__module__.startswith(("typer", "click")):
                raise
            from sqlalchemy.exc import SQLAlchemyError

            if isinstance(exc, SQLAlchemyError):
                from control_plane.surfaces.messages import database_error

                fail(database_error(exc))
            fail(f"internal error ({type(exc).__name__}): {exc} (set KG_DEBUG=1 for a traceback)")


class Command(TyperCommand):
    """A command whose arguments parsed: it sets up logging, then runs. (Logging is not set up
    for ``--help`` or a usage error, which never load structlog.)"""

    def invoke(self, ctx: Any) -> Any:
        _refuse_unstorable(ctx)
        configure_logging()
        return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        # Arguments as the usage line of every Unix tool writes them: QUESTION, [BUNDLE], FILE...
        # (Typer writes {question} for a required one).
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = (param.metavar or param.name or "").upper()
                name += "..." if param.nargs != 1 else ""
                pieces.append(name if param.required else f"[{name}]")
        return pieces


def _refuse_unstorable(ctx: Any) -> None:
    """Every command refuses, before it runs, text arguments no database stores: a lone surrogate
    (what undecodable bytes in argv become, PEP 383) or a NUL, naming the argument, whether or
    not the command would have reached a database with it (``kg concept search`` would not)."""
    from data_plane.records import text_fault

    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        for text in value if isinstance(value, list | tuple) else [value]:
            fault = text_fault(text) if isinstance(text, str) else None
            if fault is not None:
                name = (
                    param.opts[0]
                    if param.opts and param.opts[0].startswith("-")
                    else (param.name or "").upper()
                )
                raise InputError(f"{name} {fault}", field=param.name or "argument", value=text[:200])


class _Typer(typer.Typer):
    """A Typer whose commands are ``Command``s."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[CommandFunction], CommandFunction]:
        return super().command(name, cls=cls or Command, **kwargs)


def commands(**options: Any) -> typer.Typer:
    """A set of ``kg`` commands with the shared error edge (``Group``) and ``Command`` class. Help
    is plain text (click's layout): flags without a value type, nothing to load but Typer."""
    return _Typer(cls=Group, rich_markup_mode=None, **options)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into the closed pipe is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. under a test runner)
        pass


def group(help: str) -> typer.Typer:
    """A command group (``kg concept``, ``kg audit`` ...): ``kg GROUP`` alone shows its help."""
    return commands(no_args_is_help=True, help=help)


def configure_logging(*, json_events: bool = False) -> None:
    """Logs go to stderr, so stdout stays clean for answers and JSON. The CLI shows warnings and
    errors (``KG_LOG_LEVEL=info`` for everything); ``kg serve`` logs JSON events at info."""
    from control_plane.surfaces.logs import configure_logging as configure

    configure(os.environ, json_events=json_events)


def root_db(ctx: typer.Context) -> str | None:
    """The ``kg --db`` URL of this invocation, if one was given."""
    db: str | None = (ctx.find_root().obj or {}).get("db")
    return db


def settings(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings read once from the environment, with ``kg --db`` and ``overrides`` on top; a
    relative SQLite path is made absolute, so every message names the file used."""
    from control_plane.settings import Settings
    from control_plane.surfaces.runtime import absolute_url

    chosen = Settings.from_env(os.environ, database_url=root_db(ctx), **overrides)
    if chosen.database_url is None:
        return chosen
    return dataclasses.replace(chosen, database_url=absolute_url(chosen.database_url))


def require_database(chosen: Settings) -> str:
    """The database URL to open; a SQLite file that does not exist is an error naming it (a read
    must not leave an empty file behind), with the command that creates it."""
    from control_plane.surfaces.runtime import database_missing, default_database_url

    url = chosen.database_url or default_database_url()
    missing = database_missing(url)
    if missing is not None:
        how = "kg init" if chosen.database_url is None else f"kg --db {url} init"
        raise ConfigurationError(f"no database at {missing}: create it with `{how}`")
    return url


@contextmanager
def runtime(ctx: typer.Context, *, concepts: Sequence[str] = (), **overrides: Any) -> Iterator[Runtime]:
    """A runtime bound to this invocation's database (which must exist), closed when the block
    ends. ``concepts``: the concept ids the command was given; when one names no concept, a
    refusal for want of it also says which concepts are near (as ``kg ask`` does)."""
    from control_plane.surfaces.runtime import Runtime

    chosen = settings(ctx, **overrides)
    require_database(chosen)
    rt = Runtime.build(chosen, on_wait=say_waiting)
    try:
        yield rt
    except (NotFound, InactiveEndpoint) as exc:
        from control_plane.surfaces.lookup import hinted

        found = hinted(exc, rt.reader, concepts)
        if found is exc:
            raise
        raise found from exc
    finally:
        rt.close()


def say_waiting(seconds: float) -> None:
    """On a terminal, a write that has to wait for another writer says so (and for how long)."""
    screen = console(err=True)
    if screen.is_terminal:
        screen.print(
            f"waiting for the database's write lock: another writer (an import?) holds it; "
            f"waiting up to {seconds:g} s (KG_WRITE_WAIT_S) ..."
        )


def option_time(text: str | None, field: str) -> datetime | None:
    """An option's ISO 8601 time (None when not given); naive datetimes are refused."""
    return None if text is None else parse_time(text, field=field)


def edge_parts(key: str) -> tuple[str, str, str]:
    """``source>relation>target`` as ``(source, target, relation)``; a malformed key is an
    ``InputError``."""
    try:
        return parse_edge_key(key)
    except ValueError as exc:
        raise InputError(str(exc), field="edge", value=key) from exc


def console(err: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=err, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
