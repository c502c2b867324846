"""Shared fixtures: real databases (SQLite in tmp_path, PostgreSQL when configured), a manual clock,
a gateway and a reader bound to them.

PostgreSQL tests run when ``KG_TEST_POSTGRES_URL`` points at a server whose user may create
databases (``.ci/run`` starts one on loopback). Each test gets a fresh database copied from a
template migrated once per session. Under CI (``CI=true``) a missing server is an error, not a skip.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
import structlog
from sqlalchemy.engine import Engine

from data_plane import GraphReader, WriteGateway, connect, events, migrate
from data_plane.testing import ManualClock

if TYPE_CHECKING:
    from control_plane.surfaces.runtime import Runtime

POSTGRES_URL = os.environ.get("KG_TEST_POSTGRES_URL")
ENGINES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _admin() -> Engine:
    assert POSTGRES_URL
    return sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")


def _require_postgres() -> str:
    if not POSTGRES_URL:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but KG_TEST_POSTGRES_URL is not set: the PostgreSQL suite must run in CI")
        pytest.skip("PostgreSQL not configured: set KG_TEST_POSTGRES_URL to run the PostgreSQL variant")
    return POSTGRES_URL


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    """Entry points (the CLI, ``kg eval``) configure structlog globally when run in-process;
    restore the defaults after every test so one test's configuration never hides another's logs."""
    yield
    structlog.reset_defaults()
    events.reset()


@pytest.fixture(scope="session")
def pg_template() -> Iterator[str]:
    """Name of a PostgreSQL database migrated to head, used as a template for per-test copies."""
    _require_postgres()
    name = f"kg_template_{os.getpid()}"
    admin = _admin()
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine = connect(str(sa.make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)))
    migrate(engine)
    engine.dispose()
    yield name
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.dispose()


def _pg_database(template: str | None) -> Iterator[str]:
    url = _require_postgres()
    name = f"kg_test_{uuid.uuid4().hex[:12]}"
    admin = _admin()
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    try:
        yield sa.make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=ENGINES)
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """URL of a fresh, migrated database: SQLite, and PostgreSQL when configured."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/kg.sqlite3"
        engine = connect(url)
        migrate(engine)
        engine.dispose()
        yield url
    else:
        yield from _pg_database(request.getfixturevalue("pg_template"))


@pytest.fixture(params=ENGINES)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """URL of a fresh database with no schema at all (for migration tests)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/kg.sqlite3"
    else:
        yield from _pg_database(None)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """A migrated engine on each configured database."""
    eng = connect(database_url)
    yield eng
    eng.dispose()


@pytest.fixture
def sqlite_engine(tmp_path: os.PathLike[str]) -> Iterator[Engine]:
    """A migrated SQLite engine only (for control-plane tests that are engine-agnostic)."""
    eng = connect(f"sqlite:///{tmp_path}/kg.sqlite3")
    migrate(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def curriculum_runtime(tmp_path: os.PathLike[str]) -> Iterator[Runtime]:
    """A runtime (offline synthesizer) over a fresh SQLite file holding the bundled curriculum."""
    from control_plane.settings import Settings
    from control_plane.surfaces.runtime import Runtime, ensure_initialised

    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    rt = Runtime(Settings(database_url=url, synthesizer="offline"), connect(url))
    yield rt
    rt.close()


@pytest.fixture
def clock() -> ManualClock:
    """A clock that starts at 2025-01-01T00:00:00Z and advances one second per read."""
    return ManualClock()


@pytest.fixture
def gateway(engine: Engine, clock: ManualClock) -> WriteGateway:
    return WriteGateway(engine, clock=clock)


@pytest.fixture
def reader(engine: Engine, clock: ManualClock) -> GraphReader:
    return GraphReader(engine, clock=clock)


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite database initialised once per test module with the bundled curriculum, through
    `kg init` (for CLI tests that only read it)."""
    from kg_cli import initialised_sqlite

    return initialised_sqlite(tmp_path_factory.mktemp("curriculum"))


@pytest.fixture
def db(tmp_path: os.PathLike[str], initialised: str) -> str:
    """A private copy of the module's curriculum database, for CLI tests that write."""
    from pathlib import Path

    from kg_cli import copy_sqlite

    return copy_sqlite(initialised, Path(tmp_path))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """One line for every skip, counted by reason (not a line per skipped test), and one for the
    slow tests the default ``-m "not slow"`` left out."""
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if reasons:
        counted = "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common())
        terminalreporter.write_line(f"skipped {sum(reasons.values())}: {counted}")
    slow = [item for item in terminalreporter.stats.get("deselected", []) if item.get_closest_marker("slow")]
    deselected = len(slow)
    if deselected and "not slow" in (config.option.markexpr or ""):
        terminalreporter.write_line(
            f"left out {deselected} slow tests (property, soak, reliability and corpus checks): "
            'run them with -m slow, or everything with -m "slow or not slow" (.ci/run does)'
        )
