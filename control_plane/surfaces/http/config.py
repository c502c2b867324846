"""HTTP-only settings, read once from the environment at the edge (``ApiConfig.from_env``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from data_plane.errors import ConfigurationError

__all__ = ["ApiConfig"]


@dataclass(frozen=True)
class ApiConfig:
    """HTTP-only settings: whether reads need a token, and the request body limit."""

    reads_require_token: bool = False
    max_body_bytes: int = 64 * 1024
    # /ask requests per minute per token (or per client address); 0 means unlimited.
    ask_rate_per_min: float = 0.0
    rate_clock: Callable[[], float] = time.monotonic

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ApiConfig:
        flag = env.get("KG_API_READS_REQUIRE_TOKEN", "").strip().lower()
        if flag not in ("", "0", "1", "true", "false", "yes", "no"):
            raise ConfigurationError(f"KG_API_READS_REQUIRE_TOKEN must be 0 or 1, got {flag!r}")
        rate_text = env.get("KG_API_ASK_RATE_PER_MIN", "").strip() or "0"
        try:
            rate = float(rate_text)
        except ValueError:
            raise ConfigurationError(f"KG_API_ASK_RATE_PER_MIN must be a number, got {rate_text!r}") from None
        return cls(reads_require_token=flag in ("1", "true", "yes"), ask_rate_per_min=rate)
