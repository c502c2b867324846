"""Prometheus metrics of the HTTP app (``GET /metrics``, text exposition format).

What is counted (counters end in ``_total`` on the wire):

* ``kg_http_requests_total{route, method, status}`` and ``kg_http_request_duration_seconds{route,
  method}`` (histogram): every request, by route template (``/concepts/{concept_id}``, never the
  raw path, so the label set stays bounded; ``unmatched`` for unknown paths);
* ``kg_answers_total{outcome}``: ``answered`` or ``abstained``, and ``kg_answer_reuse_hits_total``:
  answers given by reusing a recorded one (no model call);
* ``kg_answer_rounds_total``, ``kg_model_calls_total``, ``kg_model_tokens_total{kind}`` (``prompt``,
  ``completion``, ``reasoning``, ``cache_hit``, ``cache_miss``) and ``kg_model_cost_usd_total``
  (the configured price table's estimate), summed over the answers given;
* ``kg_limiter_rejections_total{limit}``: 429s of the per-caller /ask limit (``ask``) and of the
  server's model budget (``model_calls``), and MCP calls they refused;
* ``kg_mcp_tool_calls_total{tool, outcome}``: MCP tool calls (``/mcp``) by tool and outcome:
  ``ok``, ``refused`` (a token or a limit), ``error`` (the tool error a client was given). Answers
  given by the ``ask`` tool count in ``kg_answers_total`` and the model counters as ``/ask``'s do.

Several worker processes: ``prometheus_client``'s multiprocess mode. Each process writes its
values to files in ``PROMETHEUS_MULTIPROC_DIR`` (``kg serve --workers N`` makes and sets one; set it
yourself, to an empty directory, for another launcher), and ``/metrics`` in any process sums them
all. The library reads that variable when it is first imported, so it must be set before the
workers start. One process: the metrics live in a registry of their own app.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
# Answer payload key -> token kind label.
_TOKENS: Final = {
    "prompt_tokens": "prompt",
    "completion_tokens": "completion",
    "reasoning_tokens": "reasoning",
    "cache_hit_tokens": "cache_hit",
    "cache_miss_tokens": "cache_miss",
}
# Request latency buckets, seconds: from a cached read to a slow multi-round model answer.
_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    """The app's metrics; ``multiprocess`` when several processes serve (module docstring)."""

    def __init__(self, *, multiprocess: bool = False) -> None:
        self.multiprocess = multiprocess
        # Multiprocess values live in files, not in a registry; /metrics collects them afresh.
        self._registry = None if multiprocess else CollectorRegistry()
        reg: Any = self._registry
        self.requests = Counter(
            "kg_http_requests",
            "HTTP requests by route, method and status.",
            ["route", "method", "status"],
            registry=reg,
        )
        self.latency = Histogram(
            "kg_http_request_duration_seconds",
            "HTTP request latency by route and method.",
            ["route", "method"],
            buckets=_BUCKETS,
            registry=reg,
        )
        self.answers = Counter(
            "kg_answers", "Answers given, by outcome (answered, abstained).", ["outcome"], registry=reg
        )
        self.reused = Counter(
            "kg_answer_reuse_hits", "Answers given by reusing a recorded answer.", registry=reg
        )
        self.rounds = Counter("kg_answer_rounds", "Planning rounds run for the answers given.", registry=reg)
        self.model_calls = Counter("kg_model_calls", "Model calls made for the answers given.", registry=reg)
        self.tokens = Counter("kg_model_tokens", "Model tokens, by kind.", ["kind"], registry=reg)
        self.cost = Counter(
            "kg_model_cost_usd", "Estimated model cost in USD (configured prices).", registry=reg
        )
        self.rejections = Counter(
            "kg_limiter_rejections",
            "Requests refused with 429, by limit (ask, model_calls).",
            ["limit"],
            registry=reg,
        )

        self.tool_calls = Counter(
            "kg_mcp_tool_calls",
            "MCP tool calls by tool and outcome (ok, refused, error).",
            ["tool", "outcome"],
            registry=reg,
        )

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)

    def limited(self, limit: str) -> None:
        self.rejections.labels(limit).inc()

    def tool_call(self, tool: str, outcome: str) -> None:
        self.tool_calls.labels(tool, outcome).inc()

    def answer(self, payload: Mapping[str, Any]) -> None:
        """Count one answer given (its ``answer/1`` payload)."""
        self.answers.labels("abstained" if payload.get("abstained") else "answered").inc()
        if payload.get("reused_from"):
            self.reused.inc()
            return  # a reuse ran no round and made no model call
        self.rounds.inc(len(payload.get("rounds", ())))
        self.model_calls.inc(int(payload.get("llm_calls", 0)))
        for key, kind in _TOKENS.items():
            self.tokens.labels(kind).inc(int(payload.get(key, 0)))
        self.cost.inc(float(payload.get("cost_usd", 0.0)))

    def render(self) -> bytes:
        """The exposition text of every metric (of every process, in multiprocess mode)."""
        if self._registry is not None:
            return generate_latest(self._registry)
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
