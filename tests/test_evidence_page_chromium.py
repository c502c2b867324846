"""The evidence page renders in a real headless browser with the worked example's nodes and edges."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.engine import Engine

from control_plane.settings import Settings
from control_plane.surfaces.pictures import to_html
from control_plane.surfaces.runtime import Runtime, ensure_initialised

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
QUESTION = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)


def test_rendered_svg_dom_has_the_worked_example_nodes_and_edges(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """Chromium's rendered DOM holds an SVG group per evidence concept and per evidence edge."""
    if CHROMIUM is None:
        pytest.skip(
            "chromium is not installed (/usr/bin/chromium missing); the evidence page was not rendered"
        )
    url = sqlite_engine.url.render_as_string(hide_password=False)
    ensure_initialised(url, engine=sqlite_engine)
    answer = (
        Runtime(Settings(database_url=url, synthesizer="offline"), sqlite_engine)
        .planner.ask(QUESTION)
        .to_dict()
    )
    page = tmp_path / "evidence.html"
    page.write_text(to_html(answer), encoding="utf-8")
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<svg" in dom
    for cid in ("agent_orchestration", "function_calling", "rag", "embeddings"):
        assert f'data-id="{cid}"' in dom
    for edge in answer["evidence"]["edges"]:
        assert f'data-id="{edge["edge_id"]}"' in dom
