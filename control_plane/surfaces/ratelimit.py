"""Rate limits for the HTTP API: per-caller token buckets for /ask, and one server-wide cap on
model calls, so neither one client nor many together can run up an unbounded model bill.

``RateLimiter(rate_per_min, burst=..., clock=...)``: each key may spend ``burst`` requests at once
and regains ``rate_per_min`` per minute. ``check(key)`` returns 0.0 when the request may go ahead
(and spends one), else the seconds until it could (for ``Retry-After``); ``wait(key)`` says the
same without spending; ``charge(key, n)`` spends ``n`` after the fact (the balance may go below
zero: later requests then wait longer). The clock is injectable (monotonic seconds) so tests are
exact; the bucket logic is pure arithmetic on it.

``ModelCallCap`` is one bucket for the whole server; ``CappedSynthesizer`` puts it in front of a
synthesizer: a synthesis needs one call in the bucket to start (else ``ModelBudgetSpent``, which
the planner turns into an abstention naming it) and is charged every call it made (a repair call
included). The HTTP app also asks the cap before starting a question, answering 429 with
``Retry-After`` while it is spent. Offline synthesizers cost nothing and are never capped.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from control_plane.errors import ModelBudgetSpent
from control_plane.synthesizers.base import Draft, SynthesisRequest, Synthesizer, SynthesizerInfo
from data_plane.errors import ConfigurationError

__all__ = ["CappedSynthesizer", "ModelCallCap", "RateLimiter", "cap_synthesizer"]


class RateLimiter:
    """Token buckets keyed by caller; thread-safe."""

    def __init__(
        self,
        rate_per_min: float,
        *,
        burst: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        name: str = "KG_API_ASK_RATE_PER_MIN",
    ) -> None:
        if not math.isfinite(rate_per_min) or rate_per_min <= 0:
            raise ConfigurationError(f"{name} must be a positive number, got {rate_per_min!r}")
        self.rate_per_s = rate_per_min / 60.0
        self.burst = burst if burst is not None else max(1, math.ceil(rate_per_min))
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) * self.rate_per_s)

    def _until_one(self, tokens: float) -> float:
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate_per_s

    def check(self, key: str) -> float:
        """0.0 and one token spent if ``key`` may proceed; otherwise the seconds to wait."""
        now = self._clock()
        with self._lock:
            tokens = self._tokens(key, now)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return self._until_one(tokens)

    def wait(self, key: str) -> float:
        """The seconds until ``key`` may proceed (0.0: now), spending nothing."""
        now = self._clock()
        with self._lock:
            return self._until_one(self._tokens(key, now))

    def charge(self, key: str, n: float) -> None:
        """Spend ``n`` more tokens of ``key`` now; the balance may go negative (a debt)."""
        if n <= 0:
            return
        now = self._clock()
        with self._lock:
            self._buckets[key] = (self._tokens(key, now) - n, now)


class ModelCallCap:
    """One bucket of model calls per minute for the whole server (``KG_API_MODEL_CALLS_PER_MIN``)."""

    KEY = "server"

    def __init__(self, calls_per_min: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limiter = RateLimiter(calls_per_min, clock=clock, name="KG_API_MODEL_CALLS_PER_MIN")
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
        waited = self._cap.take()
        if waited > 0:
            raise ModelBudgetSpent(
                f"this server's model budget ({self._cap.calls_per_min:g} calls per minute, "
                f"KG_API_MODEL_CALLS_PER_MIN) is spent; retry in {math.ceil(waited)} s",
                retry_after=waited,
            )
        draft = self._inner.synthesize(request)
        self._cap.charge(draft.usage.calls - 1)  # the one taken above covered the first call
        return draft


def cap_synthesizer(synth: Synthesizer, cap: ModelCallCap | None) -> Synthesizer:
    """``synth`` behind ``cap``; unchanged when there is no cap or it makes no model calls."""
    if cap is None or synth.info.offline:
        return synth
    return CappedSynthesizer(synth, cap)
