"""The curl walk-through of docs/serving.md runs: against a fresh database and a live server, every
request prints what the page shows (``doc_examples``, as ``test_readme`` runs the README).

The page's ``kg serve`` runs here as one server process in this test, on a free port, with its
limiter's clock standing still: the page's rate-limit lines (the 7th request refused, the counts
in ``/metrics``) then do not depend on how fast the machine runs the requests. Needs ``curl`` and
``jq``, as the page does.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import structlog
import uvicorn
from doc_examples import ROOT, Session, check, examples
from fake_deepseek import closed_port

from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app

SERVING = ROOT / "docs" / "serving.md"
ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "80"}
PAGE_PORT = "8727"

pytestmark = pytest.mark.skipif(
    not (shutil.which("curl") and shutil.which("jq")), reason="the walk-through needs curl and jq"
)


def walkthrough() -> str:
    text = SERVING.read_text(encoding="utf-8")
    return text[text.index("## Walk-through (curl)") :]


@contextmanager
def serving(session: Session, port: int) -> Iterator[None]:
    """The page's server: its settings from the session's environment, on ``port``, the limiter's
    clock held still; stopped when the block ends."""
    settings = Settings.from_env(session.env)
    config = dataclasses.replace(ApiConfig.from_env(session.env), rate_clock=lambda: 1_000_000.0)
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, config=config), host="127.0.0.1", port=port, log_config=None)
    )
    thread = threading.Thread(target=server.run, name="walkthrough-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        structlog.reset_defaults()


def test_the_serving_walkthrough_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request of the walk-through, in order, prints what docs/serving.md shows: health,
    readiness (without the database's path), answers and their reuse, paging, a token, two
    grounded writes (concepts the bundled curriculum lacks), the refusals and /metrics."""
    found = examples(walkthrough())
    assert [e.command for e in found[:3]] == [
        "export KG_DATABASE_URL=sqlite:////tmp/kg-walk/kg.sqlite3",
        "kg init",
        f"kg serve --port {PAGE_PORT} --workers 2",
    ]
    monkeypatch.chdir(tmp_path)
    port = closed_port()
    session = Session(tmp_path, ENV, swaps={f"127.0.0.1:{PAGE_PORT}": f"127.0.0.1:{port}"})
    for example in found[:2]:
        check(session, example)
    with serving(session, port):
        for example in found[3:]:
            check(session, example)
