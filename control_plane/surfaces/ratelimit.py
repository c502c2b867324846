"""A per-key token bucket for the HTTP API (one bucket per bearer token, or per client address).

``RateLimiter(rate_per_min, burst=..., clock=...)``: each key may spend ``burst`` requests at once
and regains ``rate_per_min`` per minute. ``check(key)`` returns 0.0 when the request may go ahead
(and spends one), else the seconds until it could (for ``Retry-After``). The clock is injectable
(monotonic seconds) so tests are exact; the bucket logic is pure arithmetic on it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from data_plane.errors import ConfigurationError

__all__ = ["RateLimiter"]


class RateLimiter:
    """Token buckets keyed by caller; thread-safe."""

    def __init__(
        self, rate_per_min: float, *, burst: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not math.isfinite(rate_per_min) or rate_per_min <= 0:
            raise ConfigurationError(
                f"KG_API_ASK_RATE_PER_MIN must be a positive number, got {rate_per_min!r}"
            )
        self.rate_per_s = rate_per_min / 60.0
        self.burst = burst if burst is not None else max(1, math.ceil(rate_per_min))
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def check(self, key: str) -> float:
        """0.0 and one token spent if ``key`` may proceed; otherwise the seconds to wait."""
        now = self._clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.rate_per_s)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate_per_s
