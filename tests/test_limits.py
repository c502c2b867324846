"""Shared rate limits: GCRA arithmetic (pure), and its state in the ``rate_limits`` table, exact under
concurrent updates on both engines and bounded by its sweep."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.engine import Engine

from control_plane.surfaces.ratelimit import (
    MemoryStore,
    ModelCallCap,
    RateLimiter,
    Rule,
    admit,
    debit,
    wait_of,
)
from data_plane import connect
from data_plane.limits import LimitTable


class Ticker:
    """Seconds that move only when told to."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def table(engine: Engine) -> LimitTable:
    return LimitTable(engine)


# --- the pure arithmetic --------------------------------------------------------------------------


@given(
    rate=st.floats(min_value=0.5, max_value=600),
    burst=st.integers(min_value=1, max_value=30),
    gaps=st.lists(st.floats(min_value=0, max_value=10), min_size=1, max_size=80),
)
def test_gcra_is_a_token_bucket(rate: float, burst: int, gaps: list[float]) -> None:
    """GCRA admits exactly what a token bucket of ``burst`` refilled at ``rate``/min admits."""
    rule, now, tat = Rule(rate, burst), 0.0, None
    tokens, at = float(burst), 0.0
    for gap in gaps:
        now += gap
        tokens, at = min(float(burst), tokens + (now - at) * rate / 60.0), now
        bucket_says = tokens >= 1.0 - 1e-9
        new, wait = admit(tat, now, rule)
        assert (new is not None) == bucket_says
        if new is not None:
            tat, tokens = new, tokens - 1.0
        else:
            assert wait > 0 and wait == pytest.approx((1.0 - tokens) * 60.0 / rate, abs=1e-6)


def test_a_debt_is_waited_off_and_an_old_state_is_a_full_bucket() -> None:
    """Charging past the burst makes later callers wait; a tat in the past allows the whole burst."""
    rule = Rule(60, 2)
    assert wait_of(debit(None, 0.0, rule, 4), 0.0, rule) == pytest.approx(3.0)
    assert wait_of(5.0, 100.0, rule) == 0.0 and admit(5.0, 100.0, rule) == (101.0, 0.0)


# --- the table ----------------------------------------------------------------------------------------


def test_the_table_decides_like_memory(table: LimitTable) -> None:
    """The same requests against the table and against memory get the same answers, waits included."""
    clock = Ticker()
    shared = RateLimiter(10, clock=clock, store=table)
    local = RateLimiter(10, clock=clock, store=MemoryStore())
    for step in [0, 0, 1, 0, 5, 0.5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 30, 0]:
        clock.now += step
        assert shared.check("ask:addr:a") == pytest.approx(local.check("ask:addr:a"))
    shared.charge("ask:addr:a", 3)
    local.charge("ask:addr:a", 3)
    assert shared.wait("ask:addr:a") == pytest.approx(local.wait("ask:addr:a"))


def test_a_key_longer_than_its_column_is_limited_like_any_other(table: LimitTable) -> None:
    """A key of 300 characters is stored bounded (no overflow of the key column, on either
    engine), and two long keys that differ only at their end are limited apart."""
    limiter = RateLimiter(1, clock=Ticker(), store=table)
    one, other = "ask:addr:" + "x" * 300, "ask:addr:" + "x" * 299 + "y"
    assert limiter.check(one) == 0.0
    assert limiter.check(one) > 0
    assert limiter.check(other) == 0.0


@pytest.mark.parametrize("threads", [2, 8])
def test_concurrent_checks_admit_exactly_the_burst(database_url: str, threads: int) -> None:
    """Many threads, each with its own engine (as separate processes would be), checking one key at
    one instant: exactly ``burst`` are admitted in all."""
    clock = Ticker()
    engines = [connect(database_url) for _ in range(threads)]
    admitted: list[bool] = []
    failures: list[BaseException] = []
    lock = threading.Lock()
    # A timeout, so that one client failing before the barrier fails the test instead of
    # leaving the others waiting for ever (and the interpreter with them, at exit).
    start = threading.Barrier(threads, timeout=60)

    def client(engine: Engine) -> None:
        try:
            limiter = RateLimiter(10, clock=clock, store=LimitTable(engine))
            start.wait()
            for _ in range(30 // threads + 1):
                ok = limiter.check("ask:token:t1") == 0.0
                with lock:
                    admitted.append(ok)
        except BaseException as exc:
            start.abort()
            failures.append(exc)

    workers = [threading.Thread(target=client, args=(e,), daemon=True) for e in engines]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
    finally:
        for e in engines:
            e.dispose()
    assert not failures, failures
    assert len(admitted) >= 30 and sum(admitted) == 10


def test_the_model_budget_is_one_for_every_process(database_url: str) -> None:
    """Two caps on two engines (two processes) share one budget of calls."""
    clock = Ticker()
    engines = [connect(database_url) for _ in range(2)]
    try:
        caps = [ModelCallCap(5, clock=clock, store=LimitTable(e)) for e in engines]
        taken = [caps[i % 2].take() == 0.0 for i in range(8)]
        assert sum(taken) == 5 and caps[0].wait() == pytest.approx(12.0) == caps[1].wait()
        caps[1].charge(2)  # a repair call made elsewhere counts here too
        assert caps[0].wait() == pytest.approx(36.0)
    finally:
        for e in engines:
            e.dispose()


def test_the_sweep_keeps_only_keys_limited_now(table: LimitTable) -> None:
    """Rows whose tat has passed (full buckets) go when a new key arrives; limited keys stay."""
    clock = Ticker()
    limiter = RateLimiter(60, burst=2, clock=clock, store=table)
    for i in range(50):
        limiter.check(f"ask:addr:10.0.0.{i}")
    assert table.size() == 50  # each one second ahead: none has passed yet
    limiter.check("ask:addr:busy")
    limiter.check("ask:addr:busy")
    clock.now += 1.5
    limiter.check("ask:addr:newcomer")  # a new row: the sweep runs
    assert table.size() == 2  # "busy" is still ahead of now (its tat is now + 0.5), and the newcomer
    assert table.peek("ask:addr:10.0.0.1") is None and table.peek("ask:addr:busy") is not None
    assert table.sweep(clock.now + 100) == 2 and table.size() == 0


@pytest.fixture
def two_tables(database_url: str) -> Iterator[tuple[LimitTable, LimitTable]]:
    a, b = connect(database_url), connect(database_url)
    yield LimitTable(a), LimitTable(b)
    a.dispose()
    b.dispose()


def test_a_row_swept_under_an_update_is_recreated(two_tables: tuple[LimitTable, LimitTable]) -> None:
    """A key whose row another process swept away is simply inserted again, and the limit holds."""
    first, second = two_tables
    clock = Ticker()
    limiter = RateLimiter(60, burst=1, clock=clock, store=first)
    assert limiter.check("k") == 0.0
    clock.now += 10
    assert second.sweep(clock.now) == 1
    assert limiter.check("k") == 0.0 and limiter.check("k") == pytest.approx(1.0)
