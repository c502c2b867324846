"""Safe serving defaults: /ask is rate-limited per caller by default, the whole server has a cap on
model calls per minute, and `kg serve` will not open reads and /ask to the network by accident."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import structlog
from fake_deepseek import closed_port
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from control_plane.errors import LLMUnavailable, ModelBudgetSpent
from control_plane.settings import ServingSettings, Settings, exposure_problem, is_loopback
from control_plane.surfaces.cli import app as cli_app
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.ratelimit import CappedSynthesizer, ModelCallCap, RateLimiter, cap_synthesizer
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from control_plane.synthesizers.base import SynthesizerInfo, Usage
from control_plane.testing import ScriptedSynthesizer, draft, make_evidence, make_request
from data_plane import connect
from data_plane.errors import ConfigurationError

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What must I master before rag?"
ONLINE = SynthesizerInfo("scripted", "online-script", "test", offline=False)
REQUEST = make_request(QUESTION, make_evidence(["rag"]))


class Ticker:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- the pure parts ----------------------------------------------------------------------------


def test_serving_defaults_are_on() -> None:
    """With nothing configured, /ask is limited to 10/min per caller and the server to 60 model calls/min."""
    assert ServingSettings.from_env({}) == ServingSettings(10.0, 60.0, False)
    cfg = ApiConfig.from_env({})
    assert (cfg.ask_rate_per_min, cfg.model_calls_per_min, cfg.reads_require_token) == (10.0, 60.0, False)
    assert (ApiConfig().ask_rate_per_min, ApiConfig().model_calls_per_min) == (10.0, 60.0)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KG_API_ASK_RATE_PER_MIN": "fast"}, "KG_API_ASK_RATE_PER_MIN must be a number"),
        ({"KG_API_ASK_RATE_PER_MIN": "-1"}, "KG_API_ASK_RATE_PER_MIN must be a number of requests"),
        ({"KG_API_MODEL_CALLS_PER_MIN": "inf"}, "KG_API_MODEL_CALLS_PER_MIN must be"),
        ({"KG_API_READS_REQUIRE_TOKEN": "maybe"}, "KG_API_READS_REQUIRE_TOKEN must be 0 or 1"),
    ],
)
def test_bad_serving_settings_are_refused(env: dict[str, str], message: str) -> None:
    """Each bad value is refused at start-up, naming the variable."""
    with pytest.raises(ConfigurationError, match=message):
        ServingSettings.from_env(env)


def test_zero_turns_a_limit_off() -> None:
    """0 means unlimited, and says so when printed."""
    serving = ServingSettings.from_env({"KG_API_ASK_RATE_PER_MIN": "0", "KG_API_MODEL_CALLS_PER_MIN": "0"})
    assert (serving.ask_rate_per_min, serving.model_calls_per_min) == (0.0, 0.0)
    assert sum("UNLIMITED" in line for line in serving.describe("127.0.0.1", 8000)) == 2


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("example.org", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    """Only loopback addresses (and localhost) keep the server on this machine."""
    assert is_loopback(host) is loopback


def test_exposure_needs_tokens_or_an_explicit_flag() -> None:
    """A non-loopback bind with open reads is refused unless reads need tokens or --expose is given."""
    open_reads, tokens = ServingSettings(), ServingSettings(reads_require_token=True)
    problem = exposure_problem("0.0.0.0", open_reads, expose=False)
    assert problem is not None and "--expose" in problem and "KG_API_READS_REQUIRE_TOKEN=1" in problem
    assert exposure_problem("0.0.0.0", open_reads, expose=True) is None
    assert exposure_problem("0.0.0.0", tokens, expose=False) is None
    assert exposure_problem("127.0.0.1", open_reads, expose=False) is None
    lines = open_reads.describe("0.0.0.0", 8000)
    assert "reachable from the network" in lines[0] and "open to anyone" in lines[1]


def test_wait_spends_nothing_and_charge_can_go_into_debt() -> None:
    """``wait`` only looks; ``charge`` spends after the fact and later callers wait off the debt."""
    clock = Ticker()
    limiter = RateLimiter(60, burst=2, clock=clock)
    assert limiter.wait("k") == 0.0 and limiter.wait("k") == 0.0
    limiter.charge("k", 4)  # 2 - 4 = -2 tokens
    assert limiter.wait("k") == pytest.approx(3.0)  # back to 1 token at 1 per second
    clock.now += 3.0
    assert limiter.check("k") == 0.0


@given(
    rate=st.floats(min_value=1, max_value=600),
    burst=st.integers(min_value=1, max_value=20),
    gaps=st.lists(st.floats(min_value=0, max_value=5), min_size=1, max_size=60),
)
def test_a_bucket_never_admits_more_than_burst_plus_rate(rate: float, burst: int, gaps: list[float]) -> None:
    """Over any run of requests, admitted ≤ burst + rate × elapsed time (the limit really limits)."""
    clock = Ticker()
    limiter = RateLimiter(rate, burst=burst, clock=clock)
    start, admitted = clock.now, 0
    for gap in gaps:
        clock.now += gap
        admitted += limiter.check("k") == 0.0
    assert admitted <= burst + (clock.now - start) * rate / 60.0 + 1e-6


def test_the_cap_counts_every_model_call_and_refuses_when_spent() -> None:
    """A synthesis needs one call in the bucket; a repair call is charged too; then ModelBudgetSpent."""
    clock = Ticker()
    repaired = replace(draft(0.5), usage=Usage(calls=2))
    inner = ScriptedSynthesizer([repaired, draft(0.5)], info=ONLINE)
    capped = cap_synthesizer(inner, ModelCallCap(3, clock=clock))
    assert isinstance(capped, CappedSynthesizer) and capped.info == ONLINE
    capped.synthesize(REQUEST)  # 2 calls of 3
    capped.synthesize(REQUEST)  # 3 of 3
    with pytest.raises(ModelBudgetSpent, match="KG_API_MODEL_CALLS_PER_MIN") as caught:
        capped.synthesize(REQUEST)
    assert isinstance(caught.value, LLMUnavailable) and caught.value.retry_after == pytest.approx(20.0)
    assert inner.calls == 2  # the refused synthesis never reached the model
    clock.now += 20.0
    capped.synthesize(REQUEST)


def test_offline_synthesizers_are_not_capped() -> None:
    """The offline synthesizer makes no model calls, so it is never put behind the cap."""
    offline = ScriptedSynthesizer([draft(0.9)])
    assert cap_synthesizer(offline, ModelCallCap(1)) is offline
    assert cap_synthesizer(offline, None) is offline


# --- against the app -----------------------------------------------------------------------------


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Runtime]:
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    rt = Runtime(Settings(database_url=url, synthesizer="offline"), connect(url))
    yield rt
    rt.close()


def test_a_burst_against_the_default_app_gets_429s(runtime: Runtime) -> None:
    """With default settings, 15 /ask from one client at once: the first 10 answer, the rest are 429 + Retry-After."""
    structlog.reset_defaults()
    clock = Ticker()
    app = create_app(runtime.settings, runtime=runtime, config=ApiConfig(rate_clock=clock))
    with TestClient(app) as client:
        statuses = [client.post("/ask", json={"question": QUESTION}) for _ in range(15)]
        assert [r.status_code for r in statuses] == [200] * 10 + [429] * 5
        refused = statuses[-1]
        assert refused.headers["Retry-After"] == "6" and refused.json()["status"] == 429
        clock.now += 6.0
        assert client.post("/ask", json={"question": QUESTION}).status_code == 200


def test_many_clients_together_are_held_to_the_server_model_budget(runtime: Runtime) -> None:
    """Per-caller limits off, 3 model calls a minute for the server: once spent, /ask is 429 for everyone."""
    structlog.reset_defaults()
    clock = Ticker()
    # One call per question: the subject itself always stands in the question's relation, so the
    # verifier accepts the first draft (citing every gathered concept would cite some after rag).
    runtime.synthesizer = ScriptedSynthesizer(
        lambda r: draft(0.95, concept_ids=r.evidence.seeds), info=ONLINE
    )
    cfg = ApiConfig(ask_rate_per_min=0, model_calls_per_min=3, rate_clock=clock)
    with TestClient(create_app(runtime.settings, runtime=runtime, config=cfg)) as client:
        # fresh: a repeated question would otherwise reuse the first answer at no model call.
        ask = {"question": QUESTION, "fresh": True}
        codes = [client.post("/ask", json=ask).status_code for _ in range(5)]
        refused = client.post("/ask", json=ask)
    assert codes == [200, 200, 200, 429, 429]
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) == 20
    assert "KG_API_MODEL_CALLS_PER_MIN" in refused.json()["detail"]


def test_kg_serve_refuses_a_network_bind_with_open_reads(tmp_path: Path) -> None:
    """`kg serve --host 0.0.0.0` without read tokens or --expose exits 2 with the reason and the ways out."""
    env = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_API_READS_REQUIRE_TOKEN": ""}
    result = CliRunner().invoke(
        cli_app, ["--db", f"sqlite:///{tmp_path}/kg.sqlite3", "serve", "--host", "0.0.0.0"], env=env
    )
    assert result.exit_code == 2
    assert "refusing to serve on 0.0.0.0" in result.output and "--expose" in result.output


def test_a_burst_against_kg_serve_with_defaults_gets_429s(tmp_path: Path) -> None:
    """The real server (uvicorn on 127.0.0.1, default settings): a burst of 14 /ask yields 429s with Retry-After."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    port = closed_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KG_SYNTHESIZER": "offline",
        "DEEPSEEK_API_KEY": "",
        "KG_API_ASK_RATE_PER_MIN": "",
        "KG_API_MODEL_CALLS_PER_MIN": "",
        "KG_API_READS_REQUIRE_TOKEN": "",
    }
    code = "from control_plane.surfaces.cli import app; app()"
    argv = [sys.executable, "-c", code, "--db", url, "serve", "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "kg serve did not start"
                time.sleep(0.2)
        with httpx.Client(base_url=base, timeout=30) as client:
            replies = [client.post("/ask", json={"question": QUESTION}) for _ in range(14)]
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    codes = [r.status_code for r in replies]
    assert codes.count(429) >= 4 and set(codes) == {200, 429}, codes
    assert all(int(r.headers["Retry-After"]) >= 1 for r in replies if r.status_code == 429)
    assert b"/ask limit: 10 per minute" in stderr  # what is exposed is printed at start


def test_a_budget_spent_mid_question_is_an_abstention_naming_it(runtime: Runtime) -> None:
    """When the server budget runs out between rounds, the question abstains with the reason (no 500)."""
    structlog.reset_defaults()
    script = ScriptedSynthesizer([draft(0.5)], info=ONLINE)  # never good enough: keeps going
    runtime.synthesizer = script
    cfg = ApiConfig(ask_rate_per_min=0, model_calls_per_min=2, rate_clock=Ticker())
    # A one-hop question, so it runs round after round (a learning-order walk would end sooner).
    with TestClient(create_app(runtime.settings, runtime=runtime, config=cfg)) as client:
        body = client.post("/ask", json={"question": "Which concepts are connected to rag?"}).json()
    assert body["abstained"] and "model budget" in body["abstain_reason"]
    assert script.calls == 2
