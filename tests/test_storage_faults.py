"""SQLite files that cannot be written, and answers left queued: every question needs its side file
(``FILE-ops``: its answer, its limits), so an unwritable side file or a full disk is one line naming
the file, its path and what is wrong, readiness and ``kg doctor`` say so first, and answers queued
by an import that died, or after the side file was deleted under a running process, are never lost
from sight (``data_plane.storage``, ``data_plane.sidecar``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from kg_cli import copy_sqlite, ok
from sqlalchemy.engine import Engine

from control_plane.planning.loop import Planner
from control_plane.settings import Settings
from control_plane.surfaces.http import create_app
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, Write, WriteGateway, connect
from data_plane.reuse import AnswerIndex
from data_plane.sidecar import side_path
from data_plane.testing import build_graph, grounding

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

QUESTION = "What does RAG build on?"
ROOT = os.geteuid() == 0
# Root writes any file whatever its mode: the commands under test run without that privilege.
UNPRIVILEGED = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"] if ROOT else []
needs_setpriv = pytest.mark.skipif(
    ROOT and shutil.which("setpriv") is None, reason="as root, these tests need setpriv (util-linux)"
)

HTTP_PROBE = """
import json, sys, warnings
warnings.simplefilter("ignore")
from fastapi.testclient import TestClient
from control_plane.settings import Settings
from control_plane.surfaces.http import ApiConfig, create_app
settings = Settings.from_env({"KG_DATABASE_URL": sys.argv[1], "KG_SYNTHESIZER": "offline"})
out = {}
for rate in (10, 0):
    app = create_app(settings, config=ApiConfig(ask_rate_per_min=rate))
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/ask", json={"question": "What does RAG build on?", "fresh": True})
        out[f"ask_{rate}"] = [r.status_code, r.json()]
        r = client.get("/readyz")
        out["readyz"] = [r.status_code, r.json()]
print(json.dumps(out))
"""


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KG_SYNTHESIZER": "offline", "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([*UNPRIVILEGED, *argv], capture_output=True, text=True, env=env, check=False)


def _kg(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(sys.executable, "-m", "control_plane.surfaces.cli", "--db", url, *args)


@pytest.fixture
def unwritable_side_file(tmp_path: Path, initialised: str) -> Iterator[tuple[str, Path]]:
    """A copy of the curriculum database whose side file exists and may not be written."""
    url = copy_sqlite(initialised, tmp_path)
    ok(url, "ask", QUESTION)  # makes the side file
    side = Path(url.removeprefix("sqlite:///") + "-ops")
    for p in (side, Path(f"{side}-wal"), Path(f"{side}-shm")):
        if p.exists():
            p.chmod(0o444)
    yield url, side
    for p in (side, Path(f"{side}-wal"), Path(f"{side}-shm")):
        if p.exists():
            p.chmod(0o644)


@needs_setpriv
def test_an_unwritable_side_file_is_one_line_naming_it(unwritable_side_file: tuple[str, Path]) -> None:
    """`kg ask` with a side file it may not write ends in one `error:` line naming the side file,
    its path and that it is read-only, never "busy ... retry"."""
    url, side = unwritable_side_file
    done = _kg(url, "ask", QUESTION, "--fresh")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: the side file {side} cannot be written: ")
    assert "read-only" in lines[0] and "retry" not in lines[0]


@needs_setpriv
def test_an_unwritable_side_file_fails_doctor_and_readiness(unwritable_side_file: tuple[str, Path]) -> None:
    """`kg doctor` fails naming the side file and its path; `/readyz` is 503 naming the side file
    (not its folder); `POST /ask` is 503 "Storage unavailable" with the limits on and off, never a 500
    or a 409."""
    url, side = unwritable_side_file
    doctor = _kg(url, "doctor")
    assert doctor.returncode == 1
    assert f"[fail] side file: the side file {side} cannot be written" in doctor.stdout
    probe = _run(sys.executable, "-c", HTTP_PROBE, url)
    out = json.loads(probe.stdout.strip().splitlines()[-1])
    for rate in (10, 0):
        status, body = out[f"ask_{rate}"]
        assert status == 503 and body["title"] == "Storage unavailable", body
        assert f"the side file {side.name} cannot be written" in body["detail"]
        assert str(side.parent) not in body["detail"]
    status, ready = out["readyz"]
    assert status == 503 and not ready["checks"]["storage"]["ok"]
    assert "the side file kg.sqlite3-ops cannot be written" in ready["checks"]["storage"]["detail"]


def test_doctor_and_readiness_check_the_side_file_when_all_is_well(db: str) -> None:
    """On a writable database, `kg doctor` says the database file and its side file can be written."""
    done = ok(db, "doctor")
    assert "[ok] database file:" in done.stdout and "[ok] side file:" in done.stdout


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB file system of its own (tmpfs; needs root), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not ROOT or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(disk)]).returncode:
        pytest.skip("a full disk is made with a small tmpfs, which needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_is_one_line_naming_it(small_disk: Path, initialised: str) -> None:
    """`kg ask` on a database whose disk is full says so in one line naming the disk's file."""
    url = copy_sqlite(initialised, small_disk)
    ok(url, "ask", QUESTION)
    filler = small_disk / "filler"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    done = _kg(url, "ask", QUESTION, "--fresh")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the disk holding the ")
    assert str(small_disk / "kg.sqlite3") in lines[0] and "is full" in lines[0]


def _asker(engine: Engine) -> tuple[WriteGateway, GraphReader, Planner]:
    gateway, reader = WriteGateway(engine), GraphReader(engine)
    planner = Planner(
        reader, OfflineSynthesizer(), gateway=gateway, intent_model=None, reuse=AnswerIndex(reader)
    )
    return gateway, reader, planner


def _small_graph(engine: Engine) -> tuple[WriteGateway, GraphReader, Planner]:
    gateway, reader, planner = _asker(engine)
    build_graph(gateway, [("rag", "RAG"), "embeddings"], [("rag", "embeddings", "builds_on")])
    return gateway, reader, planner


def _asked_while_an_import_dies(gateway: WriteGateway, planner: Planner) -> str:
    """An answer given while an import holds the write lock; the import then dies (its
    transaction rolls back, and nothing moves the queue). Returns the answer's id."""
    with pytest.raises(KeyboardInterrupt), gateway.bulk() as bulk:
        bulk.apply([Write.concept("imported", name="Imported", grounding=grounding("an import"))])
        answer_id = planner.reply(QUESTION, fresh=True).answer_id
        raise KeyboardInterrupt  # the import is killed in its write pass
    return answer_id


def _delete_side_file(engine: Engine) -> None:
    side = side_path(engine)
    assert side is not None and side.exists()
    for p in (side, Path(f"{side}-wal"), Path(f"{side}-shm")):
        p.unlink(missing_ok=True)


def _graph_line(doctor: str) -> str:
    return next(line for line in doctor.splitlines() if line.startswith("[ok] graph:"))


def test_answers_queued_by_a_killed_import_are_listed(db: str) -> None:
    """Answers queued while an import held the lock, the import then killed, are listed by
    `kg audit answers`, `GET /answers` and counted by `kg doctor` at once, before any write."""
    before = _graph_line(ok(db, "doctor").stdout)
    engine = connect(db)
    try:
        gateway, _, planner = _asker(engine)
        answer_id = _asked_while_an_import_dies(gateway, planner)
    finally:
        engine.dispose()
    assert answer_id in ok(db, "audit", "answers", "--limit", "5").stdout
    after = _graph_line(ok(db, "doctor").stdout)
    assert before.endswith(", 0 answers") and after.endswith(", 1 answer"), (before, after)
    settings = Settings.from_env({"KG_DATABASE_URL": db, "KG_SYNTHESIZER": "offline"})
    with TestClient(create_app(settings)) as client:
        assert answer_id in {a["answer_id"] for a in client.get("/answers?limit=5").json()}


def test_a_side_file_deleted_under_a_process_keeps_the_answers_queued_after(sqlite_engine: Engine) -> None:
    """The side file deleted while a process runs: an answer it queues afterwards (the write lock
    held, the process then gone before moving it) is in the file at the path, for every process."""
    url = sqlite_engine.url.render_as_string(hide_password=False)
    engine = connect(url)
    gateway, _, planner = _small_graph(engine)
    planner.reply(QUESTION)  # the side file is made and used
    _delete_side_file(engine)
    answer_id = _asked_while_an_import_dies(gateway, planner)
    engine.dispose()
    other = connect(url)
    try:
        assert GraphReader(other).answer(answer_id).key == (answer_id,)
    finally:
        other.dispose()


def test_answers_queued_before_the_side_file_was_replaced_move_to_the_new_one(sqlite_engine: Engine) -> None:
    """Answers queued in a side file that is then deleted are copied into the file made at the
    path at its next use, and moved from there."""
    engine = connect(sqlite_engine.url.render_as_string(hide_password=False))
    gateway, reader, planner = _small_graph(engine)
    answer_id = _asked_while_an_import_dies(gateway, planner)
    _delete_side_file(engine)
    assert reader.answer(answer_id).stamp.version_id == 0  # still queued: copied into the new file
    assert gateway.move_queued_answers() == 1
    assert reader.answer(answer_id).stamp.version_id > 0
    engine.dispose()
