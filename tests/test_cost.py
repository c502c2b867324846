"""Cost you can see: the price table's estimate, and where tokens and dollars are shown
(`kg audit answers`, the eval summary and its Markdown table)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_deepseek import FakeDeepSeek, Reply, completion
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from control_plane.surfaces.cli import app
from control_plane.synthesizers.pricing import DEFAULT_PRICES, ModelPrice, estimate_cost_usd, parse_prices
from evals.metrics import Response, score, summarise
from evals.report import markdown_table

KEY = "sk-cost-SECRET-0f9e8d"
tokens = st.integers(min_value=0, max_value=10_000_000)


@given(prompt=tokens, hit=tokens, completion=tokens)
def test_the_estimate_never_undercounts_the_prompt(prompt: int, hit: int, completion: int) -> None:
    """Whatever split the gateway reports, prompt tokens not reported as hits are priced as misses,
    so the estimate is at least the all-hit price and at most the all-miss price (plus output)."""
    hit = min(hit, prompt)
    price = DEFAULT_PRICES["deepseek-flash"]
    cost = estimate_cost_usd(
        price, prompt_tokens=prompt, cache_hit_tokens=hit, cache_miss_tokens=0, completion_tokens=completion
    )
    output = completion * price.output / 1e6
    assert (
        prompt * price.cache_hit / 1e6 + output - 1e-9
        <= cost
        <= prompt * price.cache_miss / 1e6 + output + 1e-9
    )


def test_price_overrides_merge_over_the_built_in_table() -> None:
    """KG_DEEPSEEK_PRICES replaces or adds models; the rest of the table stays."""
    table = parse_prices('{"deepseek-flash": {"cache_hit": 0, "cache_miss": 0.1, "output": 0.2}}')
    assert table["deepseek-flash"] == ModelPrice(0.0, 0.1, 0.2)
    assert table["deepseek-v4-pro"] == DEFAULT_PRICES["deepseek-v4-pro"]


def test_eval_summary_and_table_show_reasoning_cache_and_cost() -> None:
    """The eval summary aggregates reasoning tokens, the cache hit rate and the cost; the table prints them."""
    responses = [
        Response(
            abstained=True, prompt_tokens=1000, cache_hit_tokens=900, reasoning_tokens=10, cost_usd=0.0002
        ),
        Response(
            abstained=True, prompt_tokens=1000, cache_hit_tokens=100, reasoning_tokens=30, cost_usd=0.0004
        ),
    ]
    scores = [score(f"q{i}", "abstain", (), True, r) for i, r in enumerate(responses)]
    summary = summarise(scores)
    assert summary["cache_hit_rate"] == pytest.approx(0.5)
    assert summary["mean_reasoning_tokens"] == pytest.approx(20.0)
    assert summary["total_cost_usd"] == pytest.approx(0.0006)
    assert scores[0].to_dict()["cost_usd"] == pytest.approx(0.0002)
    table = markdown_table([("loop", summary)])
    assert "cost USD" in table and "0.000600" in table and "cache hit" in table


def test_audit_answers_shows_tokens_and_cost_of_a_deepseek_answer(tmp_path: Path) -> None:
    """`kg ask` through DeepSeek (the fake on loopback) records usage; `kg audit answers` prints it."""
    url = f"sqlite:///{tmp_path}/kg.sqlite3"
    body = {
        "answer": "Nothing is known.",
        "confidence": 0.1,
        "concept_ids": [],
        "edge_ids": [],
        "missing": "everything",
        "next_focus": {"relations": [], "concept_ids": [], "text": ""},
    }
    with FakeDeepSeek(prefix_cache=True) as fake:
        fake.enqueue(*[Reply(body=completion(json.dumps(body), completion_tokens=40))] * 8)
        env = {
            "DEEPSEEK_API_KEY": KEY,
            "KG_LLM_BASE_URL": fake.url,
            "KG_LLM_MAX_RETRIES": "0",
            "KG_DATABASE_URL": "",
            "COLUMNS": "200",
        }
        assert CliRunner().invoke(app, ["--db", url, "init"], env=env).exit_code == 0
        asked = CliRunner().invoke(
            app, ["--db", url, "ask", "What does RAG build on?", "--format", "json"], env=env
        )
        assert asked.exit_code == 0, asked.output
        listed = CliRunner().invoke(app, ["--db", url, "audit", "answers"], env=env)
        as_json = CliRunner().invoke(app, ["--db", url, "audit", "answers", "--format", "json"], env=env)
    assert listed.exit_code == 0, listed.output
    (payload,) = json.loads(as_json.stdout)
    assert payload["prompt_tokens"] > 0 and payload["cost_usd"] > 0
    assert payload["cache_hit_tokens"] + payload["cache_miss_tokens"] == payload["prompt_tokens"]
    line = listed.stdout.strip().splitlines()[-1]
    assert f"tokens {payload['prompt_tokens']}+{payload['completion_tokens']}" in line
    assert f"cache hit {payload['cache_hit_tokens']}" in line and f"${payload['cost_usd']:.6f}" in line
    assert KEY not in listed.output + asked.output
