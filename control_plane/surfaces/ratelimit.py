"""Rate limits for the HTTP API: a per-caller limit on /ask, and one server-wide budget of model
calls, so neither one client nor many together can run up an unbounded model bill.

**Algorithm** (the same for both): GCRA, the "generic cell rate algorithm", which is a token
bucket kept as one number per key. A key may spend ``burst`` requests at once and regains
``rate_per_min`` per minute; its state is its *theoretical arrival time* ``tat``: the time at which
its bucket would be full again. A request of cost ``n`` at ``now`` is admitted when
``max(tat, now) + n * interval - now <= burst * interval`` (``interval = 60 / rate_per_min``), and
then ``tat`` moves to that sum; otherwise it waits ``max(tat, now) + interval - now - burst *
interval`` seconds (``Retry-After``). A ``tat`` in the past is a full bucket, the same as no state
at all. The arithmetic is pure (:func:`admit`, :func:`debit`, :func:`wait_of`), with ``now``
passed in.

**Where the state lives**: a ``LimitStore``. The HTTP app uses ``data_plane.limits.LimitTable``,
the ``rate_limits`` table of the served database, so every worker process and every host serving
that database enforce one limit (atomic per key on PostgreSQL, serialised on SQLite);
``MemoryStore`` keeps it in this process (tests, and tools that run one process). The clock is
injectable; the default is wall-clock time, which processes and hosts share (keep hosts' clocks in
sync with NTP: a host whose clock is off by *s* seconds shifts a limit by at most *s* seconds' worth
of requests).

``RateLimiter``: ``check(key)`` returns 0.0 when the request may go ahead (and spends one), else
the seconds until it could; ``wait(key)`` says the same without spending; ``charge(key, n)`` spends
``n`` after the fact (the balance may go below zero: later requests then wait longer).

``ModelCallCap`` is one key for the whole server; ``CappedSynthesizer`` puts it in front of a
synthesizer: a synthesis needs one call in the budget to start (else ``ModelBudgetSpent``, which
the HTTP app answers with 429 and ``Retry-After`` when the question had made no call yet) and is
charged every call it made (a repair call included). Questions that need no model call (a reused
answer) are never refused by it. Offline synthesizers cost nothing and are never capped.

:func:`serving_limits` sets both up for a served runtime (the HTTP app, ``kg mcp``), their state
in the served database.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar

from control_plane.errors import ModelBudgetSpent
from control_plane.surfaces.runtime import Runtime, build_synthesizer
from control_plane.synthesizers.base import (
    Draft,
    QuestionReader,
    SynthesisRequest,
    Synthesizer,
    SynthesizerInfo,
    Usage,
)
from data_plane.errors import ConfigurationError
from data_plane.limits import LimitTable

__all__ = [
    "CappedSynthesizer",
    "LimitStore",
    "MemoryStore",
    "ModelCallCap",
    "RateLimiter",
    "Rule",
    "admit",
    "cap_synthesizer",
    "debit",
    "serving_limits",
    "wait_of",
    "whole_seconds",
]

R = TypeVar("R")
# Float sums of ``interval`` drift by a few ulps; a request that fits exactly must not be refused.
_SLACK: Final = 1e-9


@dataclass(frozen=True)
class Rule:
    """A limit: ``per_min`` requests a minute with a burst of ``burst``."""

    per_min: float
    burst: int

    @property
    def interval(self) -> float:
        """Seconds between two requests at the sustained rate."""
        return 60.0 / self.per_min

    @property
    def tolerance(self) -> float:
        """How far ahead of ``now`` a key's ``tat`` may run: the whole burst."""
        return self.burst * self.interval


def admit(tat: float | None, now: float, rule: Rule, cost: float = 1.0) -> tuple[float | None, float]:
    """``(new tat, 0.0)`` when a request of ``cost`` is admitted at ``now``; ``(None, seconds to
    wait)`` when it is not (the state is then left as it was)."""
    after = max(tat if tat is not None else now, now) + cost * rule.interval
    if after - now <= rule.tolerance + _SLACK:
        return after, 0.0
    return None, after - now - rule.tolerance


def debit(tat: float | None, now: float, rule: Rule, cost: float) -> float:
    """The ``tat`` after spending ``cost`` unconditionally (it may run past the burst: a debt)."""
    return max(tat if tat is not None else now, now) + cost * rule.interval


def whole_seconds(seconds: float) -> int:
    """A wait as ``Retry-After`` and messages give it: whole seconds, at least 1."""
    return max(1, math.ceil(seconds))


def wait_of(tat: float | None, now: float, rule: Rule) -> float:
    """Seconds until one request could be admitted (0.0: now)."""
    if tat is None:
        return 0.0
    return max(0.0, max(tat, now) + rule.interval - now - rule.tolerance - _SLACK)


class LimitStore(Protocol):
    """Where the ``tat`` of each key lives (``data_plane.limits.LimitTable`` implements it)."""

    def update(
        self, key: str, step: Callable[[float | None], tuple[float | None, R]], *, sweep_before: float
    ) -> R: ...

    def peek(self, key: str) -> float | None: ...


class MemoryStore:
    """A ``LimitStore`` in this process's memory (thread-safe)."""

    def __init__(self) -> None:
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()

    def update(
        self, key: str, step: Callable[[float | None], tuple[float | None, R]], *, sweep_before: float
    ) -> R:
        with self._lock:
            value, result = step(self._tats.get(key))
            if value is not None:
                self._tats[key] = value
            for stale in [k for k, v in self._tats.items() if v < sweep_before]:
                del self._tats[stale]
            return result

    def peek(self, key: str) -> float | None:
        with self._lock:
            return self._tats.get(key)


class RateLimiter:
    """A GCRA limit per key (see the module docstring), its state in a ``LimitStore``."""

    def __init__(
        self,
        rate_per_min: float,
        *,
        burst: int | None = None,
        clock: Callable[[], float] = time.time,
        name: str = "KG_API_ASK_RATE_PER_MIN",
        store: LimitStore | None = None,
    ) -> None:
        if not math.isfinite(rate_per_min) or rate_per_min <= 0:
            raise ConfigurationError(f"{name} must be a positive number, got {rate_per_min!r}")
        self.rule = Rule(rate_per_min, burst if burst is not None else max(1, math.ceil(rate_per_min)))
        self.rate_per_s = rate_per_min / 60.0
        self.burst = self.rule.burst
        self._clock = clock
        self._store: LimitStore = store if store is not None else MemoryStore()

    def check(self, key: str) -> float:
        """0.0 and one request spent if ``key`` may proceed; otherwise the seconds to wait."""
        now = self._clock()
        return self._store.update(key, lambda tat: admit(tat, now, self.rule), sweep_before=now)

    def wait(self, key: str) -> float:
        """The seconds until ``key`` may proceed (0.0: now), spending nothing."""
        return wait_of(self._store.peek(key), self._clock(), self.rule)

    def charge(self, key: str, n: float) -> None:
        """Spend ``n`` more requests of ``key`` now; the balance may go negative (a debt)."""
        if n <= 0:
            return
        now = self._clock()
        self._store.update(key, lambda tat: (debit(tat, now, self.rule, n), None), sweep_before=now)


class ModelCallCap:
    """One bucket of model calls per minute for the whole server (``KG_API_MODEL_CALLS_PER_MIN``)."""

    KEY = "model:server"

    def __init__(
        self,
        calls_per_min: float,
        *,
        clock: Callable[[], float] = time.time,
        store: LimitStore | None = None,
    ) -> None:
        self._limiter = RateLimiter(
            calls_per_min, clock=clock, name="KG_API_MODEL_CALLS_PER_MIN", store=store
        )
        self.calls_per_min = calls_per_min

    def wait(self) -> float:
        """Seconds until a model call may start (0.0: now)."""
        return self._limiter.wait(self.KEY)

    def take(self) -> float:
        """0.0 and one call spent, or the seconds until one may start."""
        return self._limiter.check(self.KEY)

    def charge(self, calls: int) -> None:
        self._limiter.charge(self.KEY, calls)


class CappedSynthesizer:
    """A synthesizer whose model calls count against a ``ModelCallCap``."""

    def __init__(self, inner: Synthesizer, cap: ModelCallCap) -> None:
        self._inner = inner
        self._cap = cap

    @property
    def info(self) -> SynthesizerInfo:
        return self._inner.info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        self._take()
        draft = self._inner.synthesize(request)
        self._cap.charge(draft.usage.calls - 1)  # the one taken above covered the first call
        return draft

    def _take(self) -> None:
        waited = self._cap.take()
        if waited > 0:
            raise ModelBudgetSpent(
                f"this server's model budget ({self._cap.calls_per_min:g} calls per minute, "
                f"KG_API_MODEL_CALLS_PER_MIN) is spent; retry in {math.ceil(waited)} s",
                retry_after=waited,
            )


class CappedReader(CappedSynthesizer):
    """A capped synthesizer that also reads questions (``QuestionReader``), on the same budget."""

    def __init__(self, inner: QuestionReader, cap: ModelCallCap) -> None:
        assert isinstance(inner, Synthesizer)
        super().__init__(inner, cap)
        self._reader = inner

    def read_question(self, messages: list[dict[str, str]]) -> tuple[str, Usage]:
        self._take()
        text, usage = self._reader.read_question(messages)
        self._cap.charge(usage.calls - 1)
        return text, usage


def cap_synthesizer(synth: Synthesizer, cap: ModelCallCap | None) -> Synthesizer:
    """``synth`` behind ``cap``; unchanged when there is no cap or it makes no model calls."""
    if cap is None or synth.info.offline:
        return synth
    if isinstance(synth, QuestionReader):
        return CappedReader(synth, cap)
    return CappedSynthesizer(synth, cap)


def serving_limits(
    rt: Runtime, *, ask_rate_per_min: float, model_calls_per_min: float, clock: Callable[[], float]
) -> RateLimiter | None:
    """The per-caller question limit of a served runtime (None when off), and its synthesizer put
    behind the server's model budget (before the planner is first built), both kept in the served
    database (``data_plane.limits.LimitTable``), so every process serving it enforces one limit and
    many clients cannot multiply the model bill. 0 turns either off."""
    store = LimitTable(rt.engine)
    if model_calls_per_min:
        cap = ModelCallCap(model_calls_per_min, clock=clock, store=store)
        rt.synthesizer = cap_synthesizer(rt.synthesizer or build_synthesizer(rt.settings), cap)
    if not ask_rate_per_min:
        return None
    return RateLimiter(ask_rate_per_min, clock=clock, store=store)
