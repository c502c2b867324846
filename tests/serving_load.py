"""Load run: many learners asking the same questions of several worker processes (not a test).

    PYTHONPATH=. python tests/serving_load.py --db URL [--workers 4] [--requests 1000] [--clients 16]
        [--ask-rate 20] [--model-calls 12] [--out DIR]

Initialises ``--db`` (the bundled curriculum; default a temporary SQLite file), gives each of
``--clients`` clients its own read token, starts ``uvicorn --workers N`` over it with the fake
DeepSeek server as the model gateway (``tests/serving_harness.py``), and has every client send its
share of ``--requests`` ``POST /ask`` back to back, each picking one of the 30 questions of
``evals.reuse_mix`` at random (so most are repeats, answered by reuse). It reports status counts,
transport errors, latency percentiles, and two exactness checks of the shared limits:

* **model budget**: every model call the gateway saw belongs to a 200 answer (the sum of their
  ``llm_calls`` equals the gateway's count: none made for a refused request, none unaccounted), and
  the count is within what ``--model-calls`` per minute allows over the run (burst + rate x time);
* **per-client limit**: each client's 200s are within the GCRA bound for its own span of time
  (burst + rate x (last reply - first send)), which a limit kept per worker process would overrun
  N-fold, and (for a client no other limit refused) at least that bound less two: a client that
  sends back to back drains its bucket, so it gets everything the limit allows.

Exits 1 when any request failed (5xx or transport) or a check does not hold.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog
from fake_deepseek import FakeDeepSeek, honest_model
from serving_harness import served

from control_plane.surfaces.runtime import ensure_initialised
from data_plane import connect
from data_plane.tokens import TokenStore
from evals.reuse_mix import pick_questions


@dataclass
class Client:
    secret: str
    sent: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    refused_by: dict[str, int] = field(default_factory=dict)
    reused: int = 0
    errors: list[str] = field(default_factory=list)


def run_client(base: str, client: Client, count: int, questions: list[str], seed: int) -> None:
    rng = random.Random(seed)
    auth = {"Authorization": f"Bearer {client.secret}"}
    with httpx.Client(base_url=base, timeout=120) as http:
        for _ in range(count):
            client.sent.append(time.perf_counter())
            try:
                r = http.post("/ask", json={"question": rng.choice(questions)}, headers=auth)
            except httpx.HTTPError as exc:
                client.errors.append(type(exc).__name__)
                client.done.append(time.perf_counter())
                client.codes.append(0)
                continue
            client.done.append(time.perf_counter())
            client.codes.append(r.status_code)
            if r.status_code == 429:
                limit = "model_calls" if "KG_API_MODEL_CALLS_PER_MIN" in r.json()["detail"] else "ask"
                client.refused_by[limit] = client.refused_by.get(limit, 0) + 1
            if r.status_code == 200:
                body = r.json()
                client.calls.append(int(body["llm_calls"]))
                client.reused += body.get("reused_from") is not None


def _pct(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile in milliseconds (nearest rank), or None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1)] * 1000.0, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--ask-rate", type=float, default=20.0, help="KG_API_ASK_RATE_PER_MIN")
    parser.add_argument("--model-calls", type=float, default=60.0, help="KG_API_MODEL_CALLS_PER_MIN")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory(prefix="kg-load-") as tmp:
        url = args.db or f"sqlite:///{tmp}/kg.sqlite3"
        report = run(url, args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "serving-load.json").write_text(text + "\n", encoding="utf-8")
    return 0 if report["ok"] else 1


def run(url: str, args: argparse.Namespace) -> dict[str, Any]:
    ensure_initialised(url)
    engine = connect(url)
    try:
        store = TokenStore(engine)
        clients = [Client(store.create(f"load-{i}", "read")[1]) for i in range(args.clients)]
    finally:
        engine.dispose()
    questions = pick_questions(30)
    shares = [args.requests // args.clients + (i < args.requests % args.clients) for i in range(args.clients)]
    with FakeDeepSeek(responder=honest_model) as fake:
        env = {
            "KG_SYNTHESIZER": "deepseek",
            "DEEPSEEK_API_KEY": "sk-load",
            "KG_LLM_BASE_URL": fake.url,
            "KG_API_ASK_RATE_PER_MIN": str(args.ask_rate),
            "KG_API_MODEL_CALLS_PER_MIN": str(args.model_calls),
            "KG_LOG_LEVEL": "warning",
        }
        with served(url, workers=args.workers, env=env) as server:
            started = time.perf_counter()
            threads = [
                threading.Thread(target=run_client, args=(server.url, c, n, questions, args.seed + i))
                for i, (c, n) in enumerate(zip(clients, shares, strict=True))
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - started
            pids = len(server.worker_pids())
        gateway_calls = sum(1 for r in fake.requests if r.path.endswith("/chat/completions"))
    return _report(args, clients, elapsed, gateway_calls, pids)


def _report(
    args: argparse.Namespace, clients: list[Client], elapsed: float, gateway_calls: int, pids: int
) -> dict[str, Any]:
    codes = [c for cl in clients for c in cl.codes]
    latency = {
        kind: [d - s for cl in clients for s, d, c in zip(cl.sent, cl.done, cl.codes, strict=True) if want(c)]
        for kind, want in {
            "all": lambda c: c > 0,
            "200": lambda c: c == 200,
            "429": lambda c: c == 429,
        }.items()
    }
    burst = max(1, math.ceil(args.ask_rate))
    per_client = []
    for cl in clients:
        span = cl.done[-1] - cl.sent[0]
        upper = burst + math.floor(span * args.ask_rate / 60.0)
        ok = cl.codes.count(200)
        per_client.append(
            {
                "admitted": ok,
                "sent": len(cl.codes),
                "bound": upper,
                "span_s": round(span, 2),
                "refused_by_budget": cl.refused_by.get("model_calls", 0),
            }
        )
    answered_calls = sum(sum(cl.calls) for cl in clients)
    budget_bound = max(1, math.ceil(args.model_calls)) + math.floor(elapsed * args.model_calls / 60.0)
    failures = sum(1 for c in codes if c == 0 or c >= 500)
    checks = {
        "every gateway call belongs to a 200 answer": answered_calls == gateway_calls,
        "gateway calls within the budget": gateway_calls <= budget_bound,
        "every client within its GCRA bound": all(p["admitted"] <= p["bound"] for p in per_client),
        # A client that only its own limit refused kept its bucket drained: it got all it could.
        "every client near its GCRA bound (saturated)": all(
            p["admitted"] >= min(p["sent"], p["bound"] - 2) for p in per_client if not p["refused_by_budget"]
        ),
    }
    return {
        "workers": args.workers,
        "worker_processes_seen": pids,
        "clients": args.clients,
        "requests": len(codes),
        "status": {str(k): codes.count(k) for k in sorted(set(codes))},
        "failures": failures,
        "refused_by": {
            limit: sum(cl.refused_by.get(limit, 0) for cl in clients) for limit in ("ask", "model_calls")
        },
        "seconds": round(elapsed, 1),
        "requests_per_s": round(len(codes) / elapsed, 1),
        "latency_ms": {
            kind: {
                "p50": _pct(v, 50),
                "p99": _pct(v, 99),
                "mean": round(statistics.fmean(v) * 1000, 1) if v else None,
            }
            for kind, v in latency.items()
        },
        "reused_answers": sum(cl.reused for cl in clients),
        "gateway_calls": gateway_calls,
        "answered_calls": answered_calls,
        "budget_bound": budget_bound,
        "per_client": per_client,
        "checks": checks,
        "ok": failures == 0 and all(checks.values()),
    }


if __name__ == "__main__":
    sys.exit(main())
