"""`kg doctor`: database, configuration and one authenticated gateway request, diagnosed, never
showing a secret; the exit code is non-zero exactly when a check fails."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from fake_deepseek import FakeDeepSeek
from structlog.testing import capture_logs
from typer.testing import CliRunner

from control_plane.settings import LLMSettings, Secret
from control_plane.surfaces.cli import app
from control_plane.surfaces.doctor import check_database, check_gateway, run_doctor
from data_plane import connect, migrate

KEY = "sk-doctor-SECRET-7a1b2c3d"
CF_TOKEN = "cf-doctor-SECRET-4e5f6a"
CF_URL = "https://gateway.ai.cloudflare.com/v1/0123abcd/my-gateway/deepseek"
MODELS = {"object": "list", "data": [{"id": "deepseek-flash", "object": "model", "owned_by": "deepseek"}]}


def _wire(respond: Callable[[httpx.Request], httpx.Response]) -> tuple[httpx.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return respond(request)

    return httpx.Client(transport=httpx.MockTransport(handler)), seen


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An initialised SQLite database (schema at head, bundled curriculum loaded)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('doctor')}/kg.sqlite3"
    result = CliRunner().invoke(
        app, ["--db", url, "init"], env={"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": ""}
    )
    assert result.exit_code == 0, result.output
    return url


def test_a_healthy_installation_passes_and_shows_no_secret(db: str, caplog: pytest.LogCaptureFixture) -> None:
    """Database at head with counts, DeepSeek configuration, and the key accepted by GET /models."""
    client, seen = _wire(lambda _r: httpx.Response(200, json=MODELS))
    caplog.set_level(logging.DEBUG)
    with capture_logs() as logs:
        report = run_doctor({"DEEPSEEK_API_KEY": KEY}, database_url=db, http_client=client)
    text = "\n".join(report.lines())
    assert report.ok, text
    assert "[ok] schema: at head" in text and "concepts" in text
    assert "model=deepseek-flash thinking=disabled" in text and "https://api.deepseek.com" in text
    assert "key accepted" in text
    (request,) = seen
    assert (request.method, str(request.url)) == ("GET", "https://api.deepseek.com/models")
    assert request.headers["authorization"] == f"Bearer {KEY}"  # the key does go on the wire ...
    assert KEY not in text + repr(logs) + caplog.text  # ... and nowhere else


@pytest.mark.parametrize(
    ("status", "diagnosis"),
    [
        (401, "check DEEPSEEK_API_KEY"),
        (402, "insufficient balance"),
        (404, "check KG_LLM_BASE_URL"),
        (429, "rate-limiting"),
        (503, "failing (503)"),
    ],
)
def test_gateway_refusals_are_diagnosed(db: str, status: int, diagnosis: str) -> None:
    """Each refusal fails the report with a diagnosis saying what to fix, and no secret."""
    client, _ = _wire(lambda _r: httpx.Response(status, json={"error": {"message": f"echo {KEY}"}}))
    env = {"DEEPSEEK_API_KEY": KEY, "KG_LLM_BASE_URL": CF_URL, "CF_AIG_TOKEN": CF_TOKEN}
    report = run_doctor(env, database_url=db, http_client=client)
    text = "\n".join(report.lines())
    assert not report.ok
    assert f"[fail] gateway: GET {CF_URL}/models: " in text and diagnosis in text
    assert KEY not in text and CF_TOKEN not in text


def test_a_timeout_is_diagnosed(db: str) -> None:
    """No answer in time: a failed check naming the wait, not a traceback."""

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    client, _ = _wire(slow)
    check = check_gateway(LLMSettings(api_key=Secret(KEY), timeout_s=3), http_client=client)
    assert check.status == "fail" and "within 3 s" in check.detail


def test_over_a_real_socket_the_fake_checks_the_key() -> None:
    """Against the fake on loopback: the right key lists models, a wrong one is a diagnosed 401."""
    with FakeDeepSeek(api_key=KEY) as fake:
        good = check_gateway(LLMSettings(api_key=Secret(KEY), base_url=fake.url))
        bad = check_gateway(LLMSettings(api_key=Secret("sk-wrong-key-000"), base_url=fake.url))
        paths = [(r.method, r.path) for r in fake.requests]
    assert good.status == "ok" and "deepseek-flash" in good.detail
    assert bad.status == "fail" and "401" in bad.detail and "sk-wrong" not in bad.detail
    assert paths == [("GET", "/models")] * 2


def test_a_model_the_gateway_does_not_list_is_a_warning(db: str) -> None:
    """The key works but the configured model is not listed: a warning, not a failure."""
    client, _ = _wire(lambda _r: httpx.Response(200, json=MODELS))
    check = check_gateway(LLMSettings(api_key=Secret(KEY), model="deepseek-v4-pro"), http_client=client)
    assert check.status == "warn" and "deepseek-v4-pro is not in" in check.detail


def test_connection_refused_is_diagnosed() -> None:
    """Nobody listening: a failed check saying the gateway could not be reached."""
    from fake_deepseek import closed_port

    check = check_gateway(LLMSettings(api_key=Secret(KEY), base_url=f"http://127.0.0.1:{closed_port()}"))
    assert check.status == "fail" and "could not reach" in check.detail and KEY not in check.detail


def test_a_missing_sqlite_file_is_reported_not_created(tmp_path: Path) -> None:
    """Doctor never creates a database: a missing file is a failure that says to run `kg init`."""
    path = tmp_path / "nothing.sqlite3"
    (check,) = check_database(f"sqlite:///{path}")
    assert check.status == "fail" and "kg init" in check.detail
    assert not path.exists()


def test_a_schema_behind_head_is_a_failure(tmp_path: Path) -> None:
    """A database at an older migration fails the schema check, naming both revisions."""
    url = f"sqlite:///{tmp_path}/old.sqlite3"
    engine = connect(url)
    migrate(engine, "0001")
    engine.dispose()
    checks = check_database(url)
    assert [c.status for c in checks] == ["ok", "fail"]
    assert "revision 0001" in checks[1].detail and "kg init" in checks[1].detail


def test_bad_configuration_is_a_failed_check_and_the_rest_still_runs(db: str) -> None:
    """A retired model name fails the configuration check; the database is still checked."""
    report = run_doctor({"KG_DEEPSEEK_MODEL": "deepseek-chat", "KG_DATABASE_URL": db})
    names = {c.name: c.status for c in report.checks}
    assert names["configuration"] == "fail" and names["schema"] == "ok" and not report.ok


def test_kg_doctor_exit_code(db: str, tmp_path: Path) -> None:
    """`kg doctor` exits 0 on a healthy offline install and 1 when the database is missing."""
    env = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": ""}
    healthy = CliRunner().invoke(app, ["--db", db, "doctor"], env=env)
    assert healthy.exit_code == 0, healthy.output
    assert "[ok] synthesizer: offline" in healthy.output and "doctor: all good" in healthy.output
    missing = CliRunner().invoke(app, ["--db", f"sqlite:///{tmp_path}/none.sqlite3", "doctor"], env=env)
    assert missing.exit_code == 1 and "[fail] database" in missing.output


def test_an_unreachable_postgres_is_reported_without_its_password() -> None:
    """A server nobody listens on: 'cannot reach', with the URL's password hidden."""
    from fake_deepseek import closed_port

    (check,) = check_database(
        f"postgresql+psycopg://kg:pw-SECRET-99@127.0.0.1:{closed_port()}/kg?connect_timeout=2"
    )
    assert check.status == "fail" and "cannot reach" in check.detail
    assert "pw-SECRET-99" not in check.detail


def test_the_counts_are_what_is_in_force_as_a_snapshot_counts_them(tmp_path: Path) -> None:
    """After an edge is invalidated and a concept revised, doctor counts what `kg audit snapshot`
    counts (in force now), not every current version; a single answer is "1 answer"."""
    env = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}
    url = f"sqlite:///{tmp_path}/kg.sqlite3"

    def kg(*args: str) -> str:
        result = CliRunner().invoke(app, ["--db", url, *args], env=env)
        assert result.exit_code == 0, result.output
        return result.stdout

    kg("init")
    grounded = ["--reason", "doctor test", "--evidence", '{"test": "doctor"}']
    kg("edge", "invalidate", "rag>builds_on>embeddings", *grounded)
    kg("concept", "revise", "rag", "--summary", "Revised.", *grounded)
    kg("ask", "What does RAG build on?")
    snapshot = kg("audit", "snapshot").splitlines()[0]
    edges = snapshot.split("): ", 1)[1].split(", ")[1]  # "N edges"
    graph = next(line for line in kg("doctor").splitlines() if line.startswith("[ok] graph: "))
    assert f", {edges}, " in graph and graph.endswith(", 1 answer")
