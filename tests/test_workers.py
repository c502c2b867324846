"""Several worker processes over one database enforce ONE per-client /ask limit and ONE model-call
budget: with 2 and 4 uvicorn workers, on SQLite and PostgreSQL, the counts of 200 and 429 are exact,
and so is the number of calls the model gateway sees."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_deepseek import FakeDeepSeek, closed_port, honest_model
from serving_harness import ROOT, served

from data_plane import WriteGateway, connect, migrate
from data_plane.testing import build_graph
from data_plane.tokens import TokenStore

# Slow (several uvicorn worker processes per test): left out by default, run by .ci/run (-m slow).
pytestmark = pytest.mark.slow

SEEDED = "What must I master before rag?"
UNKNOWN = "What is the capital of France?"  # names no concept: answered (abstained) without the model


def _graph(url: str) -> list[str]:
    """A small curriculum, and five read tokens (five clients)."""
    engine = connect(url)
    try:
        migrate(engine)
        build_graph(
            WriteGateway(engine),
            ["rag", "embeddings", "vector_search", "prompting"],
            [
                ("embeddings", "rag", "prerequisite"),
                ("vector_search", "rag", "prerequisite"),
                ("rag", "prompting", "builds_on"),
            ],
        )
        store = TokenStore(engine)
        return [store.create(f"learner-{i}", "read")[1] for i in range(5)]
    finally:
        engine.dispose()


def _burst(base: str, requests: list[tuple[str, dict[str, Any]]]) -> list[httpx.Response]:
    """Send every request at once (one thread each, released together)."""
    gate = threading.Barrier(len(requests))

    def send(item: tuple[str, dict[str, Any]]) -> httpx.Response:
        secret, body = item
        with httpx.Client(base_url=base, timeout=60) as client:
            gate.wait()
            return client.post("/ask", json=body, headers={"Authorization": f"Bearer {secret}"})

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(send, requests))


def _codes(replies: list[httpx.Response], detail: Callable[[str], bool] = lambda _: True) -> dict[int, int]:
    out: dict[int, int] = {}
    for r in replies:
        if r.status_code != 429 or detail(r.json()["detail"]):
            out[r.status_code] = out.get(r.status_code, 0) + 1
    return out


@pytest.mark.parametrize("workers", [2, 4])
def test_limits_are_exact_across_worker_processes(database_url: str, workers: int) -> None:
    """One client's 30 /ask at once: exactly 10 pass (10/min). Four other clients' 20 fresh questions
    at once under a budget of 5 model calls a minute: exactly 5 answered, 15 refused, and the model
    gateway sees exactly 5 calls, though the requests were served by several processes."""
    secrets = _graph(database_url)
    with FakeDeepSeek(responder=honest_model) as fake:
        env = {
            "KG_SYNTHESIZER": "deepseek",
            "DEEPSEEK_API_KEY": "sk-test",
            "KG_LLM_BASE_URL": fake.url,
            "KG_API_ASK_RATE_PER_MIN": "10",
            "KG_API_MODEL_CALLS_PER_MIN": "5",
        }
        with served(database_url, workers=workers, env=env) as server:
            per_client = _burst(server.url, [(secrets[0], {"question": UNKNOWN})] * 30)
            budget = _burst(
                server.url, [(secrets[1 + i % 4], {"question": SEEDED, "fresh": True}) for i in range(20)]
            )
            metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
            pids = server.worker_pids()
        calls = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert _codes(per_client) == {200: 10, 429: 20}
    assert _codes(per_client, lambda d: "too many /ask requests for token" in d) == {200: 10, 429: 20}
    assert _codes(budget) == {200: 5, 429: 15}
    assert _codes(budget, lambda d: "KG_API_MODEL_CALLS_PER_MIN" in d) == {200: 5, 429: 15}
    assert len(calls) == 5
    assert all(r.json()["llm_calls"] == 1 for r in budget if r.status_code == 200)
    assert len(pids) >= workers  # every worker built the app (and wrote its metric files)
    # /metrics sums every worker's counters.
    assert 'kg_limiter_rejections_total{limit="ask"} 20.0' in metrics
    assert 'kg_limiter_rejections_total{limit="model_calls"} 15.0' in metrics
    assert "kg_model_calls_total 5.0" in metrics


def _kg_serve(url: str, port: int, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "control_plane.surfaces.cli",
        "--db",
        url,
        "serve",
        "--port",
        str(port),
        *extra,
    ]


def test_kg_serve_starts_workers_and_says_so_once_it_answers(tmp_path: Path) -> None:
    """`kg serve --workers 2` runs two worker processes over the --db database, and prints
    "serving on" (after what it exposes) once the server answers."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    _graph(url)
    port = closed_port()
    with served(url, workers=2, port=port, argv=_kg_serve(url, port, "--workers", "2")) as server:
        assert httpx.post(f"{server.url}/ask", json={"question": SEEDED}).status_code == 200
        assert len(server.worker_pids()) >= 2
        deadline = time.monotonic() + 30
        while "serving on" not in server.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        log = server.log.read_text()
    lines = [line for line in log.splitlines() if line.startswith(("address ", "serving on"))]
    assert lines == [
        f"address http://127.0.0.1:{port}: loopback only",
        f"serving on http://127.0.0.1:{port} (2 worker processes); docs at /docs",
    ]


def test_kg_serve_never_says_serving_when_it_cannot_listen(tmp_path: Path) -> None:
    """On a port already taken, `kg serve` exits 1 with one error line saying so (before it
    describes what it would expose) and never prints "serving on"."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    _graph(url)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": ""}
        done = subprocess.run(
            _kg_serve(url, port), env=env, capture_output=True, text=True, timeout=120, cwd=ROOT
        )
    assert done.returncode == 1 and "serving on" not in done.stderr
    assert done.stderr.splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another server?): stop it, or serve on another port "
        "with --port"
    ]
