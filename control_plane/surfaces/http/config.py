"""HTTP-only settings, read once from the environment at the edge (``ApiConfig.from_env``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from control_plane.settings import (
    DEFAULT_ASK_RATE_PER_MIN,
    DEFAULT_MODEL_CALLS_PER_MIN,
    Network,
    ServingSettings,
)

__all__ = ["ApiConfig"]


@dataclass(frozen=True)
class ApiConfig:
    """HTTP-only settings: whether reads need a token, the request body limit, the rate limits
    (on by default; see ``control_plane.settings.ServingSettings``) and the trusted proxies."""

    reads_require_token: bool = False
    max_body_bytes: int = 64 * 1024
    # /ask requests per minute per token (or per client address); 0 means unlimited.
    ask_rate_per_min: float = DEFAULT_ASK_RATE_PER_MIN
    # Wall-clock seconds: the limits' state is shared by processes (and hosts) in the database.
    rate_clock: Callable[[], float] = time.time
    # Model calls per minute for the whole server; 0 means unlimited.
    model_calls_per_min: float = DEFAULT_MODEL_CALLS_PER_MIN
    # Several processes serve (PROMETHEUS_MULTIPROC_DIR is set): /metrics sums every process's files.
    metrics_multiprocess: bool = False
    # Proxies whose X-Forwarded-For names the client (none: the header is ignored; see proxies).
    trusted_proxies: tuple[Network, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ApiConfig:
        serving = ServingSettings.from_env(env)
        return cls(
            reads_require_token=serving.reads_require_token,
            ask_rate_per_min=serving.ask_rate_per_min,
            model_calls_per_min=serving.model_calls_per_min,
            metrics_multiprocess=bool(env.get("PROMETHEUS_MULTIPROC_DIR", "").strip()),
            trusted_proxies=serving.trusted_proxies,
        )
