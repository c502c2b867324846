"""The runtime: one engine, reader, gateway, token store and planner, built from ``Settings``.

The CLI and the HTTP app build one ``Runtime`` at their edge and hand it down. The planner (and
with it the synthesizer: offline, or DeepSeek through LlamaIndex) is built on first use, so
commands that never ask a question never import a model client.

Where the database lives: ``--db URL`` (CLI), else ``KG_DATABASE_URL``, else
:func:`default_database_url`, an SQLite file in the user's data directory
(``platformdirs.user_data_dir("curriculum-kg")/kg.sqlite3``, e.g.
``~/.local/share/curriculum-kg/kg.sqlite3`` on Linux).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from data_plane.clock import Clock, utc_now
from data_plane.database import (
    WriteWait,
    connect,
    database_missing,
    head_revision,
    migrate,
    schema_revision,
    sqlite_path,
)
from data_plane.gateway import WriteGateway
from data_plane.names import normalise
from data_plane.reads import GraphReader
from data_plane.reuse import AnswerIndex

if TYPE_CHECKING:
    from control_plane.planning.loop import Planner
    from control_plane.settings import Settings
    from control_plane.synthesizers.base import Synthesizer
    from data_plane.tokens import TokenStore

__all__ = [
    "InitReport",
    "Runtime",
    "absolute_url",
    "database_missing",
    "default_database_path",
    "default_database_url",
    "ensure_initialised",
]

APP_NAME = "curriculum-kg"


def default_database_path() -> Path:
    """The default SQLite file: ``<user data dir>/kg.sqlite3`` (XDG-correct on every OS)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / "kg.sqlite3"


def default_database_url() -> str:
    """``sqlite:///`` + :func:`default_database_path`."""
    return f"sqlite:///{default_database_path()}"


def absolute_url(url: str) -> str:
    """``url`` with a relative SQLite path made absolute against the working folder
    (``sqlite:///kg.sqlite3`` -> ``sqlite:////home/me/kg.sqlite3``), so that messages name the
    file actually used; any other URL unchanged."""
    path = sqlite_path(url)
    return url if path is None or path.is_absolute() else f"sqlite:///{path.resolve()}"


@dataclass(frozen=True)
class InitReport:
    """What :func:`ensure_initialised` did."""

    database: str
    revision_before: str | None
    revision_after: str | None
    curriculum: dict[str, Any] | None  # the import report, or None when not loaded

    @property
    def migrated(self) -> bool:
        return self.revision_before != self.revision_after

    def to_dict(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "revision_before": self.revision_before,
            "revision_after": self.revision_after,
            "migrated": self.migrated,
            "curriculum": self.curriculum,
        }


def curriculum_path() -> Path:
    """The bundled curriculum directory (a ``kg-bundle/1`` bundle)."""
    from importlib import resources

    return Path(str(resources.files("data_plane") / "curriculum"))


def report_dict(report: Any) -> dict[str, Any]:
    """A JSON-able view of a bundle import/export report, whatever its exact shape."""
    to_dict = getattr(report, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    if isinstance(report, dict):
        return report
    return {"report": str(report)}


def ensure_initialised(
    url: str, *, load_curriculum: bool = True, clock: Clock = utc_now, engine: Engine | None = None
) -> InitReport:
    """Create or upgrade the schema (Alembic) and load the bundled curriculum.

    Idempotent: on an up-to-date database with the curriculum loaded, nothing is written (the
    bundle import writes no version for a key whose content and grounding are unchanged).
    """
    own = engine is None
    eng = engine or connect(url)
    try:
        before = schema_revision(eng)
        if before != head_revision():
            migrate(eng)
        after = schema_revision(eng)
        curriculum = None
        if load_curriculum:
            from data_plane.bundle import import_bundle

            report = import_bundle(WriteGateway(eng, clock=clock), curriculum_path())
            curriculum = report_dict(report)
        return InitReport(eng.url.render_as_string(hide_password=True), before, after, curriculum)
    finally:
        if own:
            eng.dispose()


def build_synthesizer(settings: Settings) -> Synthesizer:
    """The synthesizer ``settings`` name; DeepSeek's client is imported only when asked for."""
    if settings.synthesizer == "deepseek":
        from control_plane.synthesizers.deepseek import build_synthesizer as build_deepseek

        return build_deepseek(settings)
    from control_plane.synthesizers.offline import OfflineSynthesizer

    return OfflineSynthesizer()


@dataclass
class Runtime:
    """Everything a request or command needs, bound to one database."""

    settings: Settings
    engine: Engine
    clock: Clock = utc_now
    synthesizer: Synthesizer | None = None
    # Called once when a write has to wait for another writer (the CLI tells a person on a terminal).
    on_wait: Callable[[float], None] | None = None
    _planner: Planner | None = field(default=None, init=False, repr=False)

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        clock: Clock = utc_now,
        synthesizer: Synthesizer | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> Runtime:
        url = settings.database_url or default_database_url()
        return cls(settings, connect(url), clock, synthesizer, on_wait)

    @property
    def url(self) -> str:
        """The database URL with any password hidden."""
        return self.engine.url.render_as_string(hide_password=True)

    @property
    def reader(self) -> GraphReader:
        return GraphReader(self.engine, clock=self.clock)

    @property
    def gateway(self) -> WriteGateway:
        """The writer; concept names are compared as the question reader reads them, so a second
        concept under a name the graph already has is refused unless a write allows it."""
        wait = WriteWait(self.settings.write_wait_s, self.on_wait)
        return WriteGateway(self.engine, clock=self.clock, name_key=normalise, wait=wait)

    @property
    def tokens(self) -> TokenStore:
        from data_plane.tokens import TokenStore  # API tokens: the server's and ``kg token``'s

        return TokenStore(self.engine, clock=self.clock)

    @property
    def planner(self) -> Planner:
        """The planning loop, built on first use (this is what imports the synthesizer)."""
        if self._planner is None:
            from control_plane.planning.expansion import Expander, ReaderExpander
            from control_plane.planning.loop import Planner

            synth = self.synthesizer or build_synthesizer(self.settings)
            reader = self.reader
            # DeepSeek already pays for LlamaIndex, so it retrieves through the property-graph
            # store; offline and scripted synthesizers take the direct route (same expansion).
            store: Expander
            if synth.info.name == "deepseek":
                from control_plane.planning.graph_store import SQLPropertyGraphStore

                store = SQLPropertyGraphStore(reader)
            else:
                store = ReaderExpander(reader)
            self._planner = Planner(
                reader, synth, store=store, gateway=self.gateway, clock=self.clock, reuse=AnswerIndex(reader)
            )
        return self._planner

    def replay(self, answer_id: str) -> dict[str, Any]:
        """Re-run a recorded answer as recorded and as of now, and report the difference."""
        from control_plane.planning.replay import replay

        planner = self.planner
        return replay(
            answer_id,
            reader=planner.reader,
            synthesizer=planner.synthesizer,
            store=planner.store,
            clock=self.clock,
        )

    def close(self) -> None:
        self.engine.dispose()
