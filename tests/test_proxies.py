"""A client's address: its connection's, or what a configured proxy forwarded; a client never
picks its own (and with it its own rate-limit key) by sending X-Forwarded-For."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from fake_deepseek import closed_port
from serving_harness import served
from test_workers import _kg_serve

from control_plane.settings import ServingSettings, parse_networks
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.http.proxies import client_address
from control_plane.surfaces.runtime import Runtime, ensure_initialised
from data_plane import ConfigurationError, InputError

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

PROXY = parse_networks("10.0.0.0/8, ::1")
QUESTION = "What does RAG build on?"


def test_without_trusted_proxies_the_header_is_ignored() -> None:
    """With no proxy configured (the default), the connection's address is the client's."""
    assert client_address("127.0.0.1", "1.2.3.4", ()) == "127.0.0.1"


def test_a_trusted_proxy_names_the_client_it_forwarded() -> None:
    """Behind a trusted proxy the client is the rightmost address no trusted proxy has: what a
    client wrote into the header itself, further left, is never read."""
    assert client_address("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.0.0.9", PROXY) == "1.2.3.4"
    assert client_address("10.0.0.2", "junk, 1.2.3.4", PROXY) == "1.2.3.4"
    assert client_address("10.0.0.2", "10.0.0.7, 10.0.0.9", PROXY) == "10.0.0.7"
    assert client_address("::1", "2001:db8::1", PROXY) == "2001:db8::1"


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        ("[2001:DB8:0::1]", "2001:db8::1"),
        ("2001:db8::1%eth0", "2001:db8::1"),
        ("fe80::1%" + "z" * 200, "fe80::1"),
        ("::ffff:1.2.3.4", "1.2.3.4"),
        ("::FFFF:0102:0304", "1.2.3.4"),
    ],
)
def test_every_spelling_of_an_address_is_one_client(forwarded: str, client: str) -> None:
    """An address becomes a rate-limit key in one spelling: compressed, lower-case, without
    brackets or an IPv6 zone, IPv4-mapped IPv6 as IPv4 (from a proxy or as the peer)."""
    assert client_address("10.0.0.2", forwarded, PROXY) == client
    assert client_address(forwarded, None, ()) == client


def test_a_peer_that_is_no_address_is_bounded() -> None:
    """A peer that is no IP address (a Unix socket path) is kept, cut to 64 characters."""
    assert client_address("/run/" + "s" * 300, None, ()) == ("/run/" + "s" * 300)[:64]


def test_an_untrusted_peer_cannot_forward() -> None:
    """A peer outside the trusted proxies is the client, whatever header it sends."""
    assert client_address("192.168.1.9", "1.2.3.4", PROXY) == "192.168.1.9"


@pytest.mark.parametrize("header", ["not-an-ip", "1.2.3.4, ", "x" * 2000, "1.2.3.4\x00"])
def test_a_malformed_forwarded_address_is_refused_naming_the_header(header: str) -> None:
    """What a trusted proxy forwards must be IP addresses: anything else is an InputError naming
    X-Forwarded-For (a 400), never a rate-limit key."""
    with pytest.raises(InputError, match="X-Forwarded-For"):
        client_address("10.0.0.2", header, PROXY)


def test_trusted_proxies_are_validated_at_start() -> None:
    """KG_API_TRUSTED_PROXIES lists addresses or networks; anything else stops the server at
    start, naming the variable."""
    assert ServingSettings.from_env({"KG_API_TRUSTED_PROXIES": "10.0.0.1, 10.1.0.0/16"}).trusted_proxies
    assert ServingSettings.from_env({}).trusted_proxies == ()
    with pytest.raises(ConfigurationError, match="KG_API_TRUSTED_PROXIES"):
        ServingSettings.from_env({"KG_API_TRUSTED_PROXIES": "10.0.0.1, proxy.internal"})


def _client(runtime: Runtime, proxies: str) -> TestClient:
    config = ApiConfig(ask_rate_per_min=2, trusted_proxies=parse_networks(proxies))
    app = create_app(runtime.settings, runtime=runtime, config=config)
    return TestClient(app, client=("10.0.0.5", 40000), raise_server_exceptions=False)


def test_by_default_spoofed_headers_share_the_connections_limit(curriculum_runtime: Runtime) -> None:
    """Without trusted proxies, three /ask with three different X-Forwarded-For values spend one
    limit, the connection's."""
    with _client(curriculum_runtime, "") as client:
        codes = [
            client.post("/ask", json={"question": QUESTION}, headers={"X-Forwarded-For": f"1.2.3.{i}"})
            for i in range(3)
        ]
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert "client address 10.0.0.5" in codes[2].json()["detail"]


def test_behind_a_trusted_proxy_each_client_has_its_own_limit(curriculum_runtime: Runtime) -> None:
    """Behind a trusted proxy, the forwarded client is limited, and another client is not."""
    with _client(curriculum_runtime, "10.0.0.0/8") as client:
        ask = {"json": {"question": QUESTION}}
        first = [client.post("/ask", **ask, headers={"X-Forwarded-For": "1.2.3.4"}) for _ in range(3)]
        other = client.post("/ask", **ask, headers={"X-Forwarded-For": "5.6.7.8"})
        bad = client.post("/ask", **ask, headers={"X-Forwarded-For": "5.6.7.8, evil"})
    assert [r.status_code for r in first] == [200, 200, 429]
    assert "client address 1.2.3.4" in first[2].json()["detail"]
    assert other.status_code == 200
    assert bad.status_code == 400 and "X-Forwarded-For" in bad.json()["detail"]


def test_spellings_of_one_address_share_one_limit_on_every_engine(database_url: str) -> None:
    """Behind a trusted proxy, one client's address forwarded in three spellings (one with a
    200-character IPv6 zone) spends one limit: two answers, then 429, never a 500."""
    from control_plane.settings import Settings
    from data_plane import connect

    runtime = Runtime(Settings(database_url=database_url, synthesizer="offline"), connect(database_url))
    try:
        with _client(runtime, "10.0.0.0/8") as client:
            codes = [
                client.post("/ask", json={"question": QUESTION}, headers={"X-Forwarded-For": spelling})
                for spelling in ("fe80::1%" + "z" * 200, "FE80:0::1", "[fe80::1%eth0]")
            ]
    finally:
        runtime.close()
    assert [r.status_code for r in codes] == [200, 200, 429], [r.text for r in codes]
    assert "client address fe80::1 " in codes[2].json()["detail"]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["kg serve", "uvicorn"])
def test_fifteen_spoofed_addresses_are_held_to_the_limit(tmp_path: Path, command: str) -> None:
    """Served as documented (`kg serve`, or the uvicorn command of docs/serving.md), 15 /ask from
    one loopback client with 15 different X-Forwarded-For values get exactly 10 answers: uvicorn's
    trust in loopback's header is off, and no proxy is trusted by default."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    ensure_initialised(url)
    port = closed_port()
    argv = _kg_serve(url, port) if command == "kg serve" else None
    with served(url, workers=1, port=port, argv=argv) as server:

        def ask(i: int) -> int:
            headers = {"X-Forwarded-For": f"203.0.113.{i}"}
            return httpx.post(
                f"{server.url}/ask", json={"question": QUESTION}, headers=headers, timeout=60
            ).status_code

        with ThreadPoolExecutor(5) as pool:
            codes = list(pool.map(ask, range(15)))
    assert sorted(codes) == [200] * 10 + [429] * 5
