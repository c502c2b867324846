"""What a DeepSeek call costs: a per-model price table (configuration, not code) and the estimate.

Prices are US dollars per million tokens in three classes, as DeepSeek bills them: input tokens that
hit the context cache, input tokens that miss it, and output tokens (reasoning tokens are output
tokens: they are part of ``completion_tokens`` and billed at the output price, never twice).

The defaults below are DeepSeek's *peak-hour* list prices (Beijing 09:00-12:00 and 14:00-18:00 on
working days; off-peak is half) from the pricing page read on 2026-11-23, which quotes them in CNY;
they are converted at 7.1 CNY per USD and rounded. Peak is used so the estimate is an upper bound.
See ``docs/llm.md`` ("Cost") for the source and how to override: ``KG_DEEPSEEK_PRICES`` holds a JSON
object ``{"<model>": {"cache_hit": usd, "cache_miss": usd, "output": usd}}`` merged over these.
Pure: no clock, no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from data_plane.errors import ConfigurationError

__all__ = ["DEFAULT_PRICES", "ModelPrice", "estimate_cost_usd", "parse_prices"]

PER: Final = 1_000_000
PRICE_KEYS: Final = ("cache_hit", "cache_miss", "output")


@dataclass(frozen=True)
class ModelPrice:
    """US dollars per million tokens: cached input, uncached input, output (reasoning included)."""

    cache_hit: float
    cache_miss: float
    output: float

    def __post_init__(self) -> None:
        for name in PRICE_KEYS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ConfigurationError(f"price {name} must be a number of USD per 1M tokens, got {value!r}")
            if not 0 <= value <= 1000:
                raise ConfigurationError(
                    f"price {name} must be in [0, 1000] USD per 1M tokens, got {value!r}"
                )
            object.__setattr__(self, name, float(value))

    def to_dict(self) -> dict[str, float]:
        return {"cache_hit": self.cache_hit, "cache_miss": self.cache_miss, "output": self.output}


_FLASH: Final = ModelPrice(cache_hit=0.0056, cache_miss=0.28, output=1.12)  # CNY 0.04 / 2 / 8
DEFAULT_PRICES: Final[Mapping[str, ModelPrice]] = {
    "deepseek-flash": _FLASH,
    # The legacy V4 Flash name is served by V4.1 Flash and billed at Flash prices.
    "deepseek-v4-flash": _FLASH,
    # Listed as DeepSeek-V4-Pro-0813 at CNY 0.30 / 9.0 / 27 (peak). Reports say it is routed to
    # V4.1 Flash and billed as Flash; we keep the listed Pro price so the estimate stays an upper bound.
    "deepseek-v4-pro": ModelPrice(cache_hit=0.042, cache_miss=1.27, output=3.80),
}


def parse_prices(
    text: str | None, *, base: Mapping[str, ModelPrice] = DEFAULT_PRICES
) -> dict[str, ModelPrice]:
    """``base`` with the models in ``text`` (the ``KG_DEEPSEEK_PRICES`` JSON) added or replaced.

    Raises ``ConfigurationError`` naming the variable and what is wrong."""
    table = dict(base)
    if text is None or not text.strip():
        return table
    try:
        raw: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"KG_DEEPSEEK_PRICES is not JSON ({exc.msg}); {_SHAPE}") from None
    if not isinstance(raw, dict) or not raw:
        raise ConfigurationError(f"KG_DEEPSEEK_PRICES must be a non-empty JSON object; {_SHAPE}")
    for model, entry in raw.items():
        if not isinstance(entry, dict) or set(entry) != set(PRICE_KEYS):
            raise ConfigurationError(
                f"KG_DEEPSEEK_PRICES[{model!r}] must have exactly the keys {', '.join(PRICE_KEYS)}; {_SHAPE}"
            )
        try:
            table[model] = ModelPrice(**entry)
        except ConfigurationError as exc:
            raise ConfigurationError(f"KG_DEEPSEEK_PRICES[{model!r}]: {exc}") from None
    return table


_SHAPE: Final = (
    'expected {"<model>": {"cache_hit": 0.0056, "cache_miss": 0.28, "output": 1.12}} (USD per 1M tokens)'
)


def estimate_cost_usd(
    price: ModelPrice,
    *,
    prompt_tokens: int,
    cache_hit_tokens: int,
    cache_miss_tokens: int,
    completion_tokens: int,
) -> float:
    """Estimated US dollars for one or more calls. Prompt tokens the gateway did not report as a
    cache hit are priced as misses (a gateway may strip the split): an estimate never undercounts."""
    cache_miss_tokens = max(cache_miss_tokens, prompt_tokens - cache_hit_tokens)
    return (
        cache_hit_tokens * price.cache_hit
        + cache_miss_tokens * price.cache_miss
        + completion_tokens * price.output
    ) / PER
