"""How long a question waits while an import writes: ``python -m evals.ask_during_import``.

For each engine (SQLite, and PostgreSQL with ``--postgres SERVER_URL``): a fresh database with the
bundled curriculum; then ``POST /ask`` (the in-process app: rate limit, reading, rounds, recording;
offline synthesizer) and ``kg ask`` (a process of its own) are timed with no import running
(idle), and again while another process imports a synthetic bundle of about ``--rows`` rows
(:mod:`evals.graphgen`), from the moment its write pass holds the write lock. Each timed ask also
says whether the import was still uncommitted when it returned, and whether its answer was
recorded (readable by id). The bundle also adds an edge from RAG, which "What does RAG build on?"
reads; once the import has committed, every answer taken during it is replayed as it was known
(``GET /answers/{id}/replay``), and must be reproduced. Prints the table ``docs/reliability.md``
(section 9) quotes.
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

QUESTIONS = (
    "What does RAG build on?",
    "What comes before fine-tuning?",
    "What is retrieval-augmented generation?",
)


def _import(url: str, bundle: str, writing: Any, committed: Any) -> None:
    """The child: import ``bundle``, saying when the write pass holds the lock and when it ends."""
    from data_plane import WriteGateway, connect, import_bundle

    def mark(stage: str, done: int, _total: int) -> None:
        if stage == "apply" and done > 0:
            writing.set()

    from control_plane.surfaces.logs import configure_logging

    configure_logging({"KG_LOG_LEVEL": "warning"})
    engine = connect(url)
    try:
        import_bundle(WriteGateway(engine), bundle, progress=mark)
    finally:
        committed.set()
        engine.dispose()


def _client(url: str) -> Any:
    from control_plane.settings import Settings
    from control_plane.surfaces.http import ApiConfig, create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    settings = Settings.from_env({"KG_DATABASE_URL": url, "KG_SYNTHESIZER": "offline"})
    return TestClient(create_app(settings, config=ApiConfig(ask_rate_per_min=100_000)))


def _post_ask(client: Any, question: str, fresh: bool) -> tuple[float, bool, str]:
    """Seconds for one POST /ask, whether its answer can be read back by id, and the id."""
    started = time.perf_counter()
    response = client.post("/ask", json={"question": question, "fresh": fresh})
    took = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"POST /ask answered {response.status_code}: {response.text}")
    answer_id = str(response.json()["answer_id"])
    return took, client.get(f"/answers/{answer_id}").status_code == 200, answer_id


def _kg_ask(url: str, question: str) -> tuple[float, bool, str]:
    env = {**os.environ, "KG_SYNTHESIZER": "offline", "KG_DATABASE_URL": url, "KG_WRITE_WAIT_S": "600"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "control_plane.surfaces.cli", "ask", question, "--fresh", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    answer_id = str(json.loads(done.stdout)["answer_id"]) if done.returncode == 0 else ""
    return time.perf_counter() - started, done.returncode == 0, answer_id


def _round(url: str, client: Any, asks: int, still_writing: Any) -> dict[str, list[Any]]:
    """``asks`` POST /ask one after another (fresh answers and reuses), while one ``kg ask`` runs."""
    out: dict[str, list[Any]] = {"post_ask": [], "kg_ask": []}

    def cli() -> None:
        took, ok, answer_id = _kg_ask(url, QUESTIONS[0])
        out["kg_ask"].append((took, ok, still_writing(), answer_id))

    beside = threading.Thread(target=cli)
    beside.start()
    for i in range(asks):
        q = QUESTIONS[i % len(QUESTIONS)]
        took, recorded, answer_id = _post_ask(client, q, fresh=i % 2 == 0)
        out["post_ask"].append((took, recorded, still_writing(), answer_id))
    beside.join()
    return out


def measure(url: str, rows: int, asks: int, work: Path) -> dict[str, Any]:
    """Idle and during-import timings on the database at ``url`` (migrated and initialised here)."""
    from control_plane.surfaces.runtime import ensure_initialised
    from evals.graphgen import generate, write_bundle

    ensure_initialised(url)
    edges = max(100, round(rows / 1.408))  # graphgen: 1 edge : 0.2 concepts : 0.2 links : 0.008 lessons
    graph = generate(edges)
    bundle = write_bundle(graph, work / f"bundle-{uuid.uuid4().hex[:6]}")
    with (bundle / "concept_edges.csv").open("a", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerow(
            ("rag", graph.concepts[0][0], "builds_on", "an edge from RAG that the import adds")
        )
    client = _client(url)
    idle = _round(url, client, asks, lambda: False)
    ctx = mp.get_context("spawn")
    writing, committed = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_import, args=(url, str(bundle), writing, committed))
    started = time.perf_counter()
    child.start()
    if not writing.wait(600):
        raise SystemExit("the import never reached its write pass")
    lock_at = time.perf_counter()
    during = _round(url, client, asks, lambda: not committed.is_set())
    child.join()
    ended = time.perf_counter()
    for kind in during:
        during[kind] = [(*ask[:3], _reproduced(client, ask[3])) for ask in during[kind]]
    client.close()
    return {
        "rows": sum(1 for f in bundle.glob("*.csv") for _ in f.open(encoding="utf-8")) - 3,
        "import_s": ended - started,
        "write_pass_s": ended - lock_at,
        "idle": idle,
        "during": during,
    }


def _reproduced(client: Any, answer_id: str) -> bool:
    """Whether the answer replays, as it was known, to itself (after the import committed)."""
    response = client.get(f"/answers/{answer_id}/replay")
    return response.status_code == 200 and bool(response.json()["reproduced"])


def _postgres_database(server: str) -> tuple[str, Any]:
    import sqlalchemy as sa

    name = f"kg_ask_import_{os.getpid()}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()

    return sa.make_url(server).set(database=name).render_as_string(hide_password=False), drop


HEADER = (
    "| engine | rows | write pass (lock held) | ask | idle, median | during the import: median | max "
    "| returned before the commit | recorded | replayed after it: reproduced |"
    "\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
)


def _rows(engine: str, m: dict[str, Any]) -> list[str]:
    """Markdown table rows (see :data:`HEADER`) of one engine's measurement."""
    lines = []
    for kind, label in (("post_ask", "`POST /ask`"), ("kg_ask", "`kg ask`")):
        idle = [ask[0] for ask in m["idle"][kind]]
        during = m["during"][kind]
        times = [ask[0] for ask in during]
        inside = sum(1 for ask in during if ask[2])
        recorded = sum(1 for ask in during if ask[1])
        reproduced = sum(1 for ask in during if ask[3])
        lines.append(
            f"| {engine} | {m['rows']:,} | {m['write_pass_s']:.1f} s | {label} | "
            f"{statistics.median(idle):.3f} s | {statistics.median(times):.3f} s | {max(times):.3f} s | "
            f"{inside}/{len(during)} | {recorded}/{len(during)} | {reproduced}/{len(during)} |"
        )
    return lines


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.ask_during_import", description=__doc__)
    parser.add_argument("--rows", type=int, default=110_000, help="rows of the imported bundle")
    parser.add_argument("--asks", type=int, default=6, help="POST /ask requests per phase")
    parser.add_argument("--postgres", help="a PostgreSQL server URL (a scratch database is made on it)")
    args = parser.parse_args(argv)
    from control_plane.surfaces.logs import configure_logging

    configure_logging({"KG_LOG_LEVEL": "warning"})
    with tempfile.TemporaryDirectory(prefix="kg-ask-import-") as tmp:
        work = Path(tmp)
        print(HEADER, flush=True)
        for line in _rows("SQLite", measure(f"sqlite:///{work}/kg.sqlite3", args.rows, args.asks, work)):
            print(line, flush=True)
        if args.postgres:
            url, drop = _postgres_database(args.postgres)
            try:
                for line in _rows("PostgreSQL", measure(url, args.rows, args.asks, work)):
                    print(line, flush=True)
            finally:
                drop()


if __name__ == "__main__":
    main(sys.argv[1:])
