"""Hostile input at the two edges users touch: `kg` argument vectors and HTTP request bodies.

Hypothesis builds argument vectors from the CLI's real command and option vocabulary, and request
bodies for POST /ask and the curation endpoints, mixing plausible values with hostile ones (empty,
huge, control characters, mixed scripts, SQL metacharacters, quote storms, impossible or naive
times, broken JSON, NaN). Whatever comes in, the edge answers cleanly: the CLI exits 0, or with one
``error: ...`` line (or Click's usage error, exit 2) and no traceback; the API never answers 5xx and
every 4xx is a problem+json body. A request or command that failed wrote nothing.

Input handling is engine-agnostic (argument parsing, body validation and error translation sit
above the gateway), so this runs on SQLite only.
"""

from __future__ import annotations

import itertools
import json
import shutil
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_workers import record_figures
from typer.testing import CliRunner

from control_plane.settings import Settings
from control_plane.surfaces.cli import app
from control_plane.surfaces.http import ApiConfig, create_app
from control_plane.surfaces.runtime import Runtime
from data_plane import GraphReader, WriteGateway, connect, migrate, schema
from data_plane.testing import build_graph, grounding

# Slow (Hypothesis over every command line and HTTP body): left out by default, run by .ci/run (-m slow).
pytestmark = pytest.mark.slow

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}
COUNTED = (*schema.VERSIONED_TABLES, schema.api_tokens)
FIGURES: dict[str, Counter[str]] = {"cli": Counter(), "http": Counter()}


class Huge(str):
    """A long hostile string that Hypothesis reports by its length, not its content."""

    def __repr__(self) -> str:
        return f"Huge({len(self)} x {self[:8]!r})"


class HugeBytes(bytes):
    """A long hostile body that Hypothesis reports by its length, not its content."""

    def __repr__(self) -> str:
        return f"HugeBytes({len(self)} x {self[:8]!r})"


HOSTILE = [
    "",
    " ",
    "\t\n",
    "\x00",
    "\x1b[31mred\x1b[0m\x07",
    "\x01\x02\x7f",
    "rag\nrag",
    "rag'; DROP TABLE concepts; --",
    '" OR 1=1 --',
    "%s %(x)s {0} {{}}",
    Huge('"' * 2000),
    Huge("'" * 2000),
    Huge("x" * 100_000),
    "RAG 检索增强 это поиск ساخت \u202erag\u202c ✓ 🧠",
    "\udcff\udcfe",  # what undecodable bytes in argv become (surrogateescape)
    "../../etc/passwd",
    "null",
    "NaN",
    "-",
]
TIMES = [
    "2025-06-01",
    "2025-06-01T12:00:00Z",
    "2025-13-40",
    "2025-02-30",
    "2025-01-01T00:00:00",
    "2025-01-01T00:00:00+25:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "now",
    "1e308",
]
CONFIDENCES = ["0.5", "1", "0", "nan", "-1", "2", "abc", "inf", "-inf", "1e309", " 0.7 ", "0x1p-2"]
EVIDENCE = [
    '{"doc": "fuzz"}',
    "{bad",
    "null",
    "{}",
    "[]",
    '""',
    "0",
    "NaN",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1e400}',
    '{"a": 123456789012345678901234567890}',
    '{"a": "\\ud800"}',
    Huge("[" * 50_000 + "]" * 50_000),
]
EDGES = [
    "rag>builds_on>llm",
    "embeddings>prerequisite>rag",
    "llm>prerequisite>embeddings",
    "rag>prerequisite>embeddings",
    "rag>prerequisite>rag",
    "rag>likes>llm",
    "llm>related>rag",
    ">>",
    "a>b",
]
CONCEPT_IDS = ["rag", "embeddings", "llm", "vector_search", "fresh_concept"]


# ---------------------------------------------------------------------------------------------
# Shared helpers


def _counts(engine: sa.Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()) for t in COUNTED
        }


def _counts_at(url: str) -> dict[str, int]:
    engine = sa.create_engine(url)
    try:
        return _counts(engine)
    finally:
        engine.dispose()


def _small_graph(url: str) -> tuple[str, str]:
    """Migrate ``url`` and write a small graph, a lesson link, one answer and one token; return
    the answer id and token id."""
    engine = connect(url)
    migrate(engine)
    gateway = WriteGateway(engine)
    build_graph(
        gateway,
        ["rag", "embeddings", "vector_search", "llm"],
        [
            ("embeddings", "rag", "prerequisite"),
            ("vector_search", "rag", "prerequisite"),
            ("rag", "llm", "builds_on"),
        ],
    )
    gateway.link_lesson("L1", "rag", grounding=grounding("lesson"), title="Lesson one")
    runtime = Runtime(Settings(database_url=url, synthesizer="offline"), engine)
    answer_id = runtime.planner.ask("What must I know before rag?").answer_id
    token_id, _ = runtime.tokens.create("fuzz", "read")
    assert GraphReader(engine).concept("rag")
    engine.dispose()
    return answer_id, token_id


def _chance(draw: st.DrawFn, twentieths: int) -> bool:
    """True with probability twentieths/20 (sampled, so Hypothesis does not favour either side)."""
    return bool(draw(st.sampled_from([True] * twentieths + [False] * (20 - twentieths))))


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module", autouse=True)
def _figures() -> Iterator[None]:
    """After the module: write the examples run and their outcomes for docs/reliability.md."""
    yield
    record_figures("fuzz", {k: dict(sorted(v.items())) for k, v in FIGURES.items()})


# ---------------------------------------------------------------------------------------------
# 1. CLI argument vectors


class CliWorld:
    """A template database with a small graph, an exported bundle, and a fresh copy per example."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.template = root / "template.sqlite3"
        self.answer_id, self.token_id = _small_graph(f"sqlite:///{self.template}")
        self.bundle = root / "bundle"
        result = CliRunner().invoke(app, ["--db", f"sqlite:///{self.template}", "export", str(self.bundle)])
        assert result.exit_code == 0, result.output
        (root / "not-a-bundle").mkdir()
        (root / "not-a-bundle" / "manifest.json").write_text("{nope")
        (root / "plain.txt").write_text("hello")
        self._n = itertools.count()

    def fresh(self) -> str:
        """A private copy of the template database for one example."""
        folder = self.root / f"ex{next(self._n)}"
        folder.mkdir()
        shutil.copyfile(self.template, folder / "kg.sqlite3")
        return f"sqlite:///{folder / 'kg.sqlite3'}"


@pytest.fixture(scope="module")
def cli_world(tmp_path_factory: pytest.TempPathFactory) -> CliWorld:
    world = CliWorld(tmp_path_factory.mktemp("fuzz-cli"))
    structlog.reset_defaults()
    return world


def _mixed(good: list[str], weight: int = 2) -> st.SearchStrategy[str]:
    """Plausible values (``weight`` parts), hostile ones and arbitrary text (one part each)."""
    return st.one_of(*[st.sampled_from(good)] * weight, st.sampled_from(HOSTILE), st.text(max_size=40))


def _values(world: CliWorld) -> dict[str, st.SearchStrategy[str]]:
    # Paths the CLI may write to stay inside the per-module temporary directory.
    out_names = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=20)).map(
        lambda s: str(world.root / ("out-" + s.replace("/", "_")))
    )
    return {
        "text": _mixed(["fuzz", "A reason", "RAG"]),
        "id": _mixed(CONCEPT_IDS),
        "lesson": _mixed(["L1", "L2"]),
        "edge": _mixed(EDGES),
        "time": _mixed(TIMES),
        "confidence": _mixed(CONFIDENCES),
        "evidence": _mixed(EVIDENCE),
        "question": _mixed(["What must I know before rag?", "rag"]),
        "ask_format": _mixed(["text", "json", "mermaid", "dot", "html"], 8),
        "data_format": _mixed(["text", "json"], 8),
        "synth": _mixed(["offline", "deepseek"], 8),
        "scope": _mixed(["read", "write", "admin"], 8),
        "limit": _mixed(["1", "20", "0", "-5", "1001", "99999999999999999999", "abc"]),
        "answer": _mixed([world.answer_id, "nope"]),
        "token": _mixed([world.token_id, "nope"]),
        "bundle_in": _mixed(
            [str(world.bundle), *(str(world.root / n) for n in ("missing", "not-a-bundle", "plain.txt"))]
        ),
        "bundle_out": out_names,
        "out": out_names,
    }


GROUNDED = {"--reason": "text", "--evidence": "evidence", "--source": "text", "--confidence": "confidence"}
# (command words, positional kinds, {option: kind, or None for a flag}, required options)
COMMANDS: list[tuple[tuple[str, ...], tuple[str, ...], dict[str, str | None], frozenset[str]]] = [
    (
        ("ask",),
        ("question",),
        {
            "--as-of": "time",
            "--known-at": "time",
            "--format": "ask_format",
            "--out": "out",
            "--synthesizer": "synth",
        },
        frozenset(),
    ),
    (
        ("concept", "add"),
        ("id",),
        {"--name": "text", "--alias": "text", "--summary": "text", "--valid-at": "time", **GROUNDED},
        frozenset({"--name", "--reason", "--evidence"}),
    ),
    (
        ("concept", "revise"),
        ("id",),
        {"--name": "text", "--alias": "text", "--summary": "text", "--valid-at": "time", **GROUNDED},
        frozenset({"--reason", "--evidence"}),
    ),
    (
        ("concept", "invalidate"),
        ("id",),
        {"--invalid-at": "time", "--retract": None, **GROUNDED},
        frozenset({"--reason", "--evidence"}),
    ),
    (("edge", "add"), ("edge",), {"--valid-at": "time", **GROUNDED}, frozenset({"--reason", "--evidence"})),
    (
        ("edge", "invalidate"),
        ("edge",),
        {"--invalid-at": "time", "--retract": None, **GROUNDED},
        frozenset({"--reason", "--evidence"}),
    ),
    (
        ("lesson", "link"),
        ("lesson", "id"),
        {"--title": "text", **GROUNDED},
        frozenset({"--reason", "--evidence"}),
    ),
    (("lesson", "unlink"), ("lesson", "id"), dict(GROUNDED), frozenset({"--reason", "--evidence"})),
    (("audit", "history"), ("edge",), {"--format": "data_format"}, frozenset()),
    (("audit", "history"), ("id",), {"--format": "data_format"}, frozenset()),
    (
        ("audit", "snapshot"),
        (),
        {"--as-of": "time", "--known-at": "time", "--format": "data_format"},
        frozenset(),
    ),
    (
        ("audit", "diff"),
        (),
        {"--from": "time", "--to": "time", "--format": "data_format"},
        frozenset({"--from"}),
    ),
    (
        ("audit", "answers"),
        (),
        {"--since": "time", "--limit": "limit", "--format": "data_format"},
        frozenset(),
    ),
    (("audit", "replay"), ("answer",), {}, frozenset()),
    (("import",), ("bundle_in",), {"--invalidate-missing": None, "--reason": "text"}, frozenset()),
    (("export",), ("bundle_out",), {"--as-of": "time", "--known-at": "time"}, frozenset()),
    (("token", "create"), ("text",), {"--scope": "scope"}, frozenset({"--scope"})),
    (("token", "revoke"), ("token",), {}, frozenset()),
]
VOCABULARY = sorted({w for c in COMMANDS for w in (*c[0], *c[2])} | {"--help", "--db", "serve"})


@st.composite
def argv(draw: st.DrawFn, world: CliWorld) -> list[str]:
    """An argument vector: a real command with plausible or hostile values, options in any order,
    sometimes a missing required option or positional, a stray option, or pure junk."""
    values = _values(world)
    if _chance(draw, 1):
        junk = st.one_of(st.sampled_from(VOCABULARY), st.sampled_from(HOSTILE), st.text(max_size=20))
        return draw(st.lists(junk, max_size=6))
    words, positionals, options, required = draw(st.sampled_from(COMMANDS))
    args = [draw(values[kind]) for kind in positionals if _chance(draw, 19)]
    pairs: list[list[str]] = []
    for name, kind in options.items():
        if _chance(draw, 18 if name in required else 8):
            pairs.append([name] if kind is None else [name, draw(values[kind])])
    if _chance(draw, 2):
        pairs.append([draw(st.sampled_from(VOCABULARY)), draw(st.sampled_from(HOSTILE))])
    ordered = draw(st.permutations(pairs))
    return [*words, *args, *itertools.chain.from_iterable(ordered)]


def _cli_outcome(exit_code: int, stderr: str) -> str:
    if exit_code == 0:
        return "exit 0"
    if exit_code == 2:
        return "exit 2 (usage)"
    line = stderr.strip()
    for kind in ("internal error", "database error"):
        if line.startswith(f"error: {kind}"):
            return f"exit 1 ({kind})"
    return "exit 1 (KGError or OS error)"


@FUZZ
@given(data=st.data())
def test_any_argument_vector_exits_cleanly_and_failures_write_nothing(
    cli_world: CliWorld, data: st.DataObject
) -> None:
    """Any argument vector exits 0, or 1 with one `error:` line, or 2 (usage); no traceback; a failure writes no row."""
    args = data.draw(argv(cli_world), label="argv")
    url = cli_world.fresh()
    before = _counts_at(url)
    result = CliRunner().invoke(app, ["--db", url, *args], env=ENV)
    structlog.reset_defaults()
    FIGURES["cli"]["examples"] += 1
    FIGURES["cli"][_cli_outcome(result.exit_code, result.stderr)] += 1
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code in (1, 2) and _asks_json(args):
        # under --format json an error is one JSON object with its message and exit code
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, result.stderr
        error = json.loads(lines[0])
        assert error["exit_code"] == result.exit_code and error["error"], error
        assert not error["error"].startswith("internal error"), error
    elif result.exit_code == 1:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert not lines[0].startswith("error: internal error"), lines[0]
    elif result.exit_code == 2:
        assert "Usage:" in result.output, result.output  # usage error, or help for a bare group
    if result.exit_code != 0:
        assert _counts_at(url) == before


def _asks_json(args: Sequence[str]) -> bool:
    """Does the argument vector ask for JSON output (``--format json``, ``--format=json``)?"""
    return "--format=json" in args or any(
        a == "--format" and b == "json" for a, b in itertools.pairwise(args)
    )


# ---------------------------------------------------------------------------------------------
# 2. HTTP bodies


class HttpWorld:
    """One app over a small graph, a write token, and the row counts before each request."""

    def __init__(self, root: Path) -> None:
        self.url = f"sqlite:///{root / 'kg.sqlite3'}"
        _small_graph(self.url)
        self.runtime = Runtime(Settings(database_url=self.url, synthesizer="offline"), connect(self.url))
        _, secret = self.runtime.tokens.create("fuzz-writer", "write")
        self.auth = {"Authorization": f"Bearer {secret}"}


@pytest.fixture(scope="module")
def http_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpWorld]:
    world = HttpWorld(tmp_path_factory.mktemp("fuzz-http"))
    yield world
    world.runtime.close()


@pytest.fixture(scope="module")
def http_client(http_world: HttpWorld) -> Iterator[TestClient]:
    structlog.reset_defaults()
    rt = http_world.runtime
    with TestClient(
        create_app(rt.settings, runtime=rt, config=ApiConfig()), raise_server_exceptions=False
    ) as c:
        yield c


G = {"reason": "fuzz", "evidence": {"doc": "fuzz"}, "confidence": 0.9}
ENDPOINTS: list[tuple[str, dict[str, Any]]] = [
    ("/ask", {"question": "What must I know before rag?"}),
    ("/concepts", {"concept_id": "fuzz_concept", "name": "Fuzz", "grounding": G}),
    ("/concepts/rag/revise", {"summary": "Revised.", "grounding": G}),
    ("/concepts/vector_search/invalidate", {"grounding": G}),
    ("/edges", {"source_id": "llm", "target_id": "embeddings", "relation": "prerequisite", "grounding": G}),
    ("/edges/revise", {"source_id": "rag", "target_id": "llm", "relation": "builds_on", "grounding": G}),
    (
        "/edges/invalidate",
        {"source_id": "embeddings", "target_id": "rag", "relation": "prerequisite", "grounding": G},
    ),
    ("/lessons/L2/concepts", {"concept_id": "rag", "title": "Two", "grounding": G}),
    ("/lessons/L1/concepts/unlink", {"concept_id": "rag", "grounding": G}),
]
JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(),
    st.text(max_size=40),
    st.sampled_from([*HOSTILE, Huge("y" * 5000), *TIMES]),
)
JUNK = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
RAW_BODIES = [
    b"",
    b"not json",
    b"{",
    b'{"question": NaN}',
    b'{"question": "rag", "as_of": "2025-13-40T00:00:00Z"}',
    b'{"concept_id": "nan_c", "name": "N", "grounding": {"reason": "r", "evidence": {"a": NaN}, "confidence": 0.5}}',
    b'{"concept_id": "nan_c", "name": "N", "grounding": {"reason": "r", "evidence": {"a": 1}, "confidence": NaN}}',
    b'{"concept_id": "inf_c", "name": "N", "grounding": {"reason": "r", "evidence": [Infinity], "confidence": 1}}',
    b'{"question": "\xff\xfe rag"}',
    b"\xff\xfe\x00{",
    b'{"question": "\\ud800 rag"}',
    b'{"concept_id": "s\\ud800", "name": "S", "grounding": {"reason": "r", "evidence": {"a": 1}}}',
    HugeBytes(b"[" * 60_000),
    HugeBytes(b"[" * 30_000 + b"]" * 30_000),
    HugeBytes(b'{"a": ' * 5_000 + b"1" + b"}" * 5_000),
    b"question=rag",
    b"--x\r\nContent-Disposition: form-data; name=question\r\n\r\nrag\r\n--x--\r\n",
    b"\x00" * 100,
    HugeBytes(b"x" * 70_000),
]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=latin-1",
    "application/problem+json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    None,
]


def _mutate(base: Any, draw: st.DrawFn) -> Any:
    """Delete, replace or add fields of a valid body (recursively into objects)."""
    if not isinstance(base, dict):
        return draw(JUNK) if draw(st.booleans()) else base
    out: dict[str, Any] = {}
    for key, value in base.items():
        action = draw(st.sampled_from(["keep", "keep", "drop", "junk", "recurse"]))
        if action == "keep":
            out[key] = value
        elif action == "junk":
            out[key] = draw(JUNK)
        elif action == "recurse":
            out[key] = _mutate(value, draw)
    if _chance(draw, 4):
        out[draw(st.text(max_size=10))] = draw(JUNK)
    return out


@st.composite
def http_request(draw: st.DrawFn) -> tuple[str, bytes, str | None, bool]:
    """(path, body bytes, content type, authorised) for a POST."""
    path, base = draw(st.sampled_from(ENDPOINTS))
    kind = draw(st.sampled_from(["mutated", "mutated", "junk", "raw"]))
    if kind == "raw":
        body = draw(st.sampled_from(RAW_BODIES) | st.binary(max_size=200))
    else:
        value = _mutate(base, draw) if kind == "mutated" else draw(JUNK)
        body = json.dumps(value, allow_nan=True, ensure_ascii=draw(st.booleans())).encode(
            "utf-8", "surrogatepass"
        )
    content_type = draw(st.sampled_from(CONTENT_TYPES[:2]) | st.sampled_from(CONTENT_TYPES))
    return path, body, content_type, _chance(draw, 18)


@FUZZ
@given(data=st.data())
def test_any_body_gets_a_problem_or_success_and_failures_write_nothing(
    http_world: HttpWorld, http_client: TestClient, data: st.DataObject
) -> None:
    """Any POST body is answered without 5xx, every 4xx is problem+json, and a refused write changes no row."""
    path, body, content_type, authorised = data.draw(http_request(), label="request")
    headers = dict(http_world.auth) if authorised else {}
    if content_type is not None:
        headers["Content-Type"] = content_type
    before = _counts(http_world.runtime.engine)
    r = http_client.post(path, content=body, headers=headers)
    FIGURES["http"]["examples"] += 1
    FIGURES["http"][f"status {r.status_code}"] += 1
    assert r.status_code < 500, r.text[:300]
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json"), r.text[:300]
        problem = r.json()
        assert {"title", "status", "detail"} <= set(problem) and problem["status"] == r.status_code
    if r.status_code >= 300:
        assert _counts(http_world.runtime.engine) == before
    else:
        # What was accepted can be read back: one stored value must not break the graph's reads.
        assert http_client.get("/snapshot").status_code == 200


# ---------------------------------------------------------------------------------------------
# The inputs that found bugs, pinned (the fuzz targets above may not draw them on every run)


@pytest.mark.parametrize(
    "args",
    [
        [
            "concept",
            "add",
            "x",
            "--name",
            "X",
            "--reason",
            "r",
            "--evidence",
            "1",
            "--valid-at",
            "9999-12-31T23:59:59-14:00",
        ],
        ["concept", "add", "x", "--name", "X", "--reason", "r", "--evidence", Huge("[" * 50_000)],
        ["concept", "add", "x", "--name", "X", "--reason", "r", "--evidence", '{"a": "\\ud800"}'],
        ["ask", "rag\udcff"],
    ],
    ids=["utc-overflow", "deep-evidence", "surrogate-evidence", "undecodable-argv"],
)
def test_pinned_hostile_argument_is_a_one_line_input_error(cli_world: CliWorld, args: list[str]) -> None:
    """Each argument that once ended in `internal error` is now a one-line input error that writes nothing."""
    url = cli_world.fresh()
    before = _counts_at(url)
    result = CliRunner().invoke(app, ["--db", url, *args], env=ENV)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and "internal error" not in lines[0]
    assert _counts_at(url) == before


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/ask", HugeBytes(b"[" * 60_000)),
        ("/ask", b'{"question": "rag", "as_of": "9999-12-31T23:59:59-14:00"}'),
        (
            "/concepts",
            b'{"concept_id": "t", "name": "T", "valid_at": "0001-01-01T00:00:00+14:00", "grounding": {"reason": "r", "evidence": 1}}',
        ),
        (
            "/concepts",
            b'{"concept_id": "s", "name": "S", "grounding": {"reason": "r", "evidence": {"a": "\\ud800"}}}',
        ),
    ],
    ids=["deep-json", "ask-utc-overflow", "write-utc-overflow", "surrogate-evidence"],
)
def test_pinned_hostile_body_is_a_4xx_problem(
    http_world: HttpWorld, http_client: TestClient, path: str, body: bytes
) -> None:
    """Each body that once got a plain-JSON 400 or a 500 is now a 4xx problem+json that writes nothing."""
    before = _counts(http_world.runtime.engine)
    r = http_client.post(path, content=body, headers={**http_world.auth, "Content-Type": "application/json"})
    assert 400 <= r.status_code < 500, r.text[:300]
    assert r.headers["content-type"].startswith("application/problem+json")
    assert _counts(http_world.runtime.engine) == before
