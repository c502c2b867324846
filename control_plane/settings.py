"""Settings, parsed once at the edge (CLI, HTTP app) from an environment mapping, then passed down.

Environment variables:

=============================  ==============================================================  =======================
variable                       meaning                                                         default
=============================  ==============================================================  =======================
KG_DATABASE_URL                SQLAlchemy URL of the graph database                            None (the caller picks)
KG_SYNTHESIZER                 ``offline`` or ``deepseek``                                     deepseek if a key is set
DEEPSEEK_API_KEY               the DeepSeek API key (kept in a ``Secret``)                     none
KG_DEEPSEEK_MODEL              a current DeepSeek model (retired names are refused)            deepseek-flash
KG_DEEPSEEK_THINKING           ``disabled`` or ``enabled`` (sent as ``thinking.type``)          disabled
KG_DEEPSEEK_REASONING_EFFORT   ``low``, ``high`` or ``max``; only with thinking enabled         high (when enabled)
KG_DEEPSEEK_PRICES             JSON price table overrides, USD per 1M tokens (see pricing)     built-in table
KG_LLM_BASE_URL                the ONE model gateway URL (DeepSeek, Cloudflare AI Gateway)      https://api.deepseek.com
CF_AIG_TOKEN                   Cloudflare AI Gateway token (``cf-aig-authorization`` header)   none
KG_LLM_TIMEOUT_S               per-request timeout in seconds                                   30 (120 when thinking)
KG_LLM_MAX_RETRIES             retries after the first attempt, 0..5                            2
KG_LLM_CONTEXT_WINDOW          the model's context window in tokens (explicit, not guessed)    1000000
KG_LLM_MAX_TOKENS              completion token limit (reasoning tokens count against it)      2048 (8192 when thinking)
KG_WRITE_WAIT_S                seconds a write waits for another writer (an import) to finish  600
=============================  ==============================================================  =======================

Serving (``kg serve``, the HTTP app; see ``ServingSettings``):

=============================  ==============================================================  =======================
KG_API_ASK_RATE_PER_MIN        /ask requests per minute per token (or client address); 0: off  10 (burst 10)
KG_API_MODEL_CALLS_PER_MIN     model calls per minute for the whole server; 0: off             60
KG_API_READS_REQUIRE_TOKEN     ``1``: reads (and /ask) need a token                            0
KG_API_TRUSTED_PROXIES         proxies whose ``X-Forwarded-For`` is believed (IPs, networks)   none
KG_MCP_TOKEN                   ``kg mcp`` (stdio): the secret of the token it acts with        none (reads only)
=============================  ==============================================================  =======================

Egress goes to exactly one gateway: DeepSeek itself, a Cloudflare AI Gateway in front of it, or
(tests only) a loopback fake. A second base URL in the environment (``OPENAI_BASE_URL``,
``OPENAI_API_BASE``, ``DEEPSEEK_BASE_URL``) that differs from it is refused at start-up rather than
silently ignored. Errors and reprs never contain secrets.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast
from urllib.parse import urlsplit, urlunsplit

from control_plane.synthesizers.pricing import DEFAULT_PRICES, ModelPrice, parse_prices
from data_plane.errors import ConfigurationError

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "RETIRED_MODELS",
    "LLMSettings",
    "Secret",
    "ServingSettings",
    "Settings",
    "SynthesizerName",
    "Thinking",
    "exposure_problem",
    "is_loopback",
]

SynthesizerName = Literal["offline", "deepseek"]
SYNTHESIZERS: Final[tuple[str, ...]] = ("offline", "deepseek")
Thinking = Literal["disabled", "enabled"]
THINKING_MODES: Final[tuple[str, ...]] = ("disabled", "enabled")
# DeepSeek's documented efforts for the OpenAI format (other spellings are mapped onto these).
REASONING_EFFORTS: Final[tuple[str, ...]] = ("low", "high", "max")

DEFAULT_BASE_URL: Final = "https://api.deepseek.com"
DEFAULT_MODEL: Final = "deepseek-flash"
DEFAULT_EFFORT: Final = "high"
# Completion budgets. Reasoning tokens count against max_tokens, so thinking needs far more room
# than the JSON answer itself (which stays under ~1k tokens).
MAX_TOKENS: Final[dict[str, int]] = {"disabled": 2048, "enabled": 8192}
TIMEOUT_S: Final[dict[str, float]] = {"disabled": 30.0, "enabled": 120.0}
CONTEXT_WINDOW: Final = 1_000_000
# Names DeepSeek no longer serves (after 2026-07-24 15:59 UTC), and what to use instead.
RETIRED_MODELS: Final[dict[str, str]] = {
    "deepseek-chat": "KG_DEEPSEEK_MODEL=deepseek-flash with KG_DEEPSEEK_THINKING=disabled",
    "deepseek-reasoner": "KG_DEEPSEEK_MODEL=deepseek-flash with KG_DEEPSEEK_THINKING=enabled",
    "deepseek-coder": "KG_DEEPSEEK_MODEL=deepseek-flash",
}
MAX_RETRIES_LIMIT: Final = 5
# Other places a client library might find a base URL; any of them pointing elsewhere is a second gateway.
OTHER_BASE_URL_VARS: Final[tuple[str, ...]] = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "DEEPSEEK_BASE_URL")

_DEEPSEEK_RE: Final = re.compile(r"https://api\.deepseek\.com(/v1)?")
_CLOUDFLARE_RE: Final = re.compile(
    r"https://gateway\.ai\.cloudflare\.com/v1/[A-Za-z0-9_-]+/[A-Za-z0-9_-]+/deepseek"
)
_LOOPBACK_RE: Final = re.compile(r"http://(127\.0\.0\.1|localhost):[0-9]{1,5}(/v1)?")


class Secret:
    """A string that never shows itself: ``repr`` and ``str`` are ``***``. Read it with ``reveal()``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "***"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> Any:
        # Pickling would write the secret to wherever the pickle goes; refuse rather than leak.
        raise TypeError("a Secret cannot be pickled")


def redact_url(url: str) -> str:
    """``url`` with any user:password part replaced by ``***`` (for messages and reprs)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


def normalise_base_url(url: str) -> str:
    return url.strip().rstrip("/")


def gateway_kind(url: str) -> Literal["deepseek", "cloudflare", "loopback"] | None:
    """Which allowed gateway a normalised base URL is, or None if it is not allowed."""
    if _DEEPSEEK_RE.fullmatch(url):
        return "deepseek"
    if _CLOUDFLARE_RE.fullmatch(url):
        return "cloudflare"
    if _LOOPBACK_RE.fullmatch(url):
        return "loopback"
    return None


@dataclass(frozen=True)
class LLMSettings:
    """How to reach DeepSeek. Refuses to exist when invalid (like ``Grounding``)."""

    model: str = DEFAULT_MODEL
    api_key: Secret | None = None
    base_url: str = DEFAULT_BASE_URL
    cf_aig_token: Secret | None = None
    timeout_s: float = TIMEOUT_S["disabled"]
    max_retries: int = 2
    context_window: int = CONTEXT_WINDOW
    max_tokens: int = MAX_TOKENS["disabled"]
    thinking: Thinking = "disabled"
    # Only with thinking enabled; None there means DeepSeek's documented default, sent explicitly.
    reasoning_effort: str | None = None
    prices: Mapping[str, ModelPrice] = field(
        default_factory=lambda: dict(DEFAULT_PRICES), repr=False, hash=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.startswith("deepseek-"):
            raise ConfigurationError(
                f"KG_DEEPSEEK_MODEL={self.model!r} is not a DeepSeek model: only model names starting "
                f"with 'deepseek-' are accepted (e.g. {DEFAULT_MODEL!r})"
            )
        if self.model in RETIRED_MODELS:
            raise ConfigurationError(
                f"KG_DEEPSEEK_MODEL={self.model!r} is retired: DeepSeek stopped serving it after "
                f"2026-07-24; use {RETIRED_MODELS[self.model]}"
            )
        if self.model not in self.prices:
            raise ConfigurationError(
                f"KG_DEEPSEEK_MODEL={self.model!r} has no price, so its cost could not be shown: add it to "
                f'KG_DEEPSEEK_PRICES as {{{json.dumps(self.model)}: {{"cache_hit": ..., "cache_miss": ..., '
                f'"output": ...}}}} (USD per 1M tokens), or use one of {", ".join(sorted(self.prices))}'
            )
        if self.thinking not in THINKING_MODES:
            raise ConfigurationError(
                f"KG_DEEPSEEK_THINKING={self.thinking!r} is not one of {', '.join(THINKING_MODES)}"
            )
        if self.reasoning_effort is not None:
            if self.thinking != "enabled":
                raise ConfigurationError(
                    f"KG_DEEPSEEK_REASONING_EFFORT={self.reasoning_effort!r} needs KG_DEEPSEEK_THINKING=enabled"
                )
            if self.reasoning_effort not in REASONING_EFFORTS:
                raise ConfigurationError(
                    f"KG_DEEPSEEK_REASONING_EFFORT={self.reasoning_effort!r} is not one of "
                    f"{', '.join(REASONING_EFFORTS)}"
                )
        elif self.thinking == "enabled":
            object.__setattr__(self, "reasoning_effort", DEFAULT_EFFORT)
        base = normalise_base_url(self.base_url)
        if gateway_kind(base) is None:
            raise ConfigurationError(
                f"KG_LLM_BASE_URL={redact_url(self.base_url)!r} is not an allowed model gateway: use "
                f"{DEFAULT_BASE_URL} (optionally /v1), a Cloudflare AI Gateway URL "
                "https://gateway.ai.cloudflare.com/v1/{account}/{gateway}/deepseek, or (tests only) "
                "http://127.0.0.1:PORT or http://localhost:PORT"
            )
        object.__setattr__(self, "base_url", base)
        if self.cf_aig_token is not None and gateway_kind(base) == "deepseek":
            raise ConfigurationError(
                "CF_AIG_TOKEN is set but KG_LLM_BASE_URL is DeepSeek itself, not a Cloudflare AI Gateway: "
                "set KG_LLM_BASE_URL to your gateway URL or unset CF_AIG_TOKEN"
            )
        for name, secret in (("DEEPSEEK_API_KEY", self.api_key), ("CF_AIG_TOKEN", self.cf_aig_token)):
            if secret is not None and (not isinstance(secret, Secret) or not secret.reveal().strip()):
                raise ConfigurationError(f"{name} must be a non-empty Secret")
        t = self.timeout_s
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or not 0 < t <= 600:
            raise ConfigurationError(f"KG_LLM_TIMEOUT_S must be a number of seconds in (0, 600], got {t!r}")
        object.__setattr__(self, "timeout_s", float(t))
        _check_int("KG_LLM_MAX_RETRIES", self.max_retries, 0, MAX_RETRIES_LIMIT)
        _check_int("KG_LLM_CONTEXT_WINDOW", self.context_window, 1024, 10_000_000)
        _check_int("KG_LLM_MAX_TOKENS", self.max_tokens, 1, 1_000_000)

    @property
    def gateway(self) -> Literal["deepseek", "cloudflare", "loopback"]:
        kind = gateway_kind(self.base_url)
        assert kind is not None  # checked in __post_init__
        return kind

    @property
    def base_host(self) -> str:
        """Host (and port) of the gateway, safe to log."""
        return urlsplit(self.base_url).netloc

    @property
    def price(self) -> ModelPrice:
        """The price of ``model`` (checked to exist at start-up)."""
        return self.prices[self.model]

    def describe(self) -> dict[str, Any]:
        """What is configured, safe to print (no key, no token, no credentials in URLs)."""
        return {
            "model": self.model,
            "thinking": self.thinking,
            "reasoning_effort": self.reasoning_effort,
            "base_url": redact_url(self.base_url),
            "gateway": self.gateway,
            "api_key": "set" if self.api_key is not None else "not set",
            "cf_aig_token": "set" if self.cf_aig_token is not None else "not set",
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "context_window": self.context_window,
            "max_tokens": self.max_tokens,
            "price_usd_per_1m": self.price.to_dict(),
        }


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


# A database "URL" with no scheme at all (`--db scratch.sqlite3`, `--db /data/kg.db`): a file path.
_PATH_NOT_URL: Final = re.compile(r"(?![a-zA-Z][a-zA-Z0-9+.-]*:)")

# The data plane's default WriteWait (data_plane.database, not imported here: it loads SQLAlchemy).
DEFAULT_WRITE_WAIT_S: Final = 600.0


@dataclass(frozen=True)
class Settings:
    """Everything the backend reads from its environment, parsed once."""

    database_url: str | None = field(default=None, repr=False)
    synthesizer: SynthesizerName = "offline"
    llm: LLMSettings = field(default_factory=LLMSettings)
    write_wait_s: float = DEFAULT_WRITE_WAIT_S

    def __post_init__(self) -> None:
        if self.synthesizer not in SYNTHESIZERS:
            raise ConfigurationError(
                f"KG_SYNTHESIZER={self.synthesizer!r} is not one of {', '.join(SYNTHESIZERS)}"
            )
        if not (math.isfinite(self.write_wait_s) and self.write_wait_s >= 0):
            raise ConfigurationError(
                f"KG_WRITE_WAIT_S must be a number of seconds >= 0, got {self.write_wait_s!r}"
            )
        if self.database_url is not None and _PATH_NOT_URL.match(self.database_url):
            # A plain path (`--db scratch.sqlite3`): not a URL, but clearly meant as a SQLite file.
            raise ConfigurationError(
                f"the database {self.database_url!r} is a path, not a URL: "
                f"use sqlite:///{self.database_url} (or postgresql+psycopg://USER@HOST/DB)"
            )
        if self.synthesizer == "deepseek" and self.llm.api_key is None:
            raise ConfigurationError(
                "KG_SYNTHESIZER=deepseek needs DEEPSEEK_API_KEY; set it, or use KG_SYNTHESIZER=offline"
            )

    def __repr__(self) -> str:
        db = None if self.database_url is None else redact_url(self.database_url)
        return f"Settings(database_url={db!r}, synthesizer={self.synthesizer!r}, llm={self.llm!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Settings:
        """Parse ``env`` (e.g. ``os.environ``). ``overrides`` (field names of ``Settings`` or
        ``LLMSettings``, e.g. from CLI options) win over the environment; ``None`` means "not given".
        Raises ``ConfigurationError`` naming the offending variable and value (never a secret).
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        llm_fields = set(LLMSettings.__dataclass_fields__)
        unknown = set(given) - llm_fields - {"database_url", "synthesizer"}
        if unknown:
            raise ConfigurationError(f"unknown setting(s): {', '.join(sorted(unknown))}")

        def text(var: str) -> str | None:
            value = env.get(var)
            return value.strip() if value is not None and value.strip() else None

        api_key_text = text("DEEPSEEK_API_KEY")
        cf_text = text("CF_AIG_TOKEN")
        thinking = given.get("thinking") or (text("KG_DEEPSEEK_THINKING") or "disabled").lower()
        mode = thinking if thinking in THINKING_MODES else "disabled"  # a bad value is refused below
        effort = text("KG_DEEPSEEK_REASONING_EFFORT")
        llm_kwargs: dict[str, Any] = {
            "model": text("KG_DEEPSEEK_MODEL") or DEFAULT_MODEL,
            "api_key": Secret(api_key_text) if api_key_text else None,
            "base_url": text("KG_LLM_BASE_URL") or DEFAULT_BASE_URL,
            "cf_aig_token": Secret(cf_text) if cf_text else None,
            "timeout_s": _number("KG_LLM_TIMEOUT_S", text("KG_LLM_TIMEOUT_S"), TIMEOUT_S[mode], float),
            "max_retries": _number("KG_LLM_MAX_RETRIES", text("KG_LLM_MAX_RETRIES"), 2, int),
            "context_window": _number(
                "KG_LLM_CONTEXT_WINDOW", text("KG_LLM_CONTEXT_WINDOW"), CONTEXT_WINDOW, int
            ),
            "max_tokens": _number("KG_LLM_MAX_TOKENS", text("KG_LLM_MAX_TOKENS"), MAX_TOKENS[mode], int),
            "thinking": thinking,
            "reasoning_effort": effort.lower() if effort else None,
            "prices": parse_prices(text("KG_DEEPSEEK_PRICES")),
        }
        for key in llm_fields & set(given):
            value = given[key]
            if key in ("api_key", "cf_aig_token") and isinstance(value, str):
                value = Secret(value)
            llm_kwargs[key] = value
        llm = LLMSettings(**llm_kwargs)

        for var in OTHER_BASE_URL_VARS:
            other = text(var)
            if other is not None and normalise_base_url(other) != llm.base_url:
                raise ConfigurationError(
                    f"exactly one model gateway URL is allowed: {var}={redact_url(other)!r} differs from "
                    f"KG_LLM_BASE_URL={llm.base_url!r}; unset {var} or make them equal"
                )

        default_synth = "deepseek" if llm.api_key is not None else "offline"
        synthesizer = given.get("synthesizer") or (text("KG_SYNTHESIZER") or default_synth).lower()
        return cls(
            database_url=given.get("database_url") or text("KG_DATABASE_URL"),
            synthesizer=cast(SynthesizerName, synthesizer),
            llm=llm,
            write_wait_s=_number("KG_WRITE_WAIT_S", text("KG_WRITE_WAIT_S"), DEFAULT_WRITE_WAIT_S, float),
        )


DEFAULT_ASK_RATE_PER_MIN: Final = 10.0
DEFAULT_MODEL_CALLS_PER_MIN: Final = 60.0
RATE_LIMIT: Final = 100_000.0


@dataclass(frozen=True)
class ServingSettings:
    """What keeps a served API from running up an unbounded model bill, on by default.

    ``ask_rate_per_min``: /ask requests per minute per bearer token (or per client address), with a
    burst of as many; ``model_calls_per_min``: model calls per minute for the whole server (every
    client together; the offline synthesizer is not counted). 0 turns either off."""

    ask_rate_per_min: float = DEFAULT_ASK_RATE_PER_MIN
    model_calls_per_min: float = DEFAULT_MODEL_CALLS_PER_MIN
    reads_require_token: bool = False
    # Whose X-Forwarded-For names the client (control_plane.surfaces.http.proxies); none: nobody's.
    trusted_proxies: tuple[Network, ...] = ()
    # The token a stdio MCP server (`kg mcp`) acts with; over HTTP every request sends its own.
    mcp_token: Secret | None = None

    def __post_init__(self) -> None:
        for name, var in (
            ("ask_rate_per_min", "KG_API_ASK_RATE_PER_MIN"),
            ("model_calls_per_min", "KG_API_MODEL_CALLS_PER_MIN"),
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0 <= value <= RATE_LIMIT
            ):
                raise ConfigurationError(
                    f"{var} must be a number of requests per minute in [0, {RATE_LIMIT:g}] (0: off), got {value!r}"
                )
            object.__setattr__(self, name, float(value))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ServingSettings:
        def text(var: str) -> str | None:
            value = env.get(var)
            return value.strip() if value is not None and value.strip() else None

        flag = (text("KG_API_READS_REQUIRE_TOKEN") or "0").lower()
        if flag not in ("0", "1", "true", "false", "yes", "no"):
            raise ConfigurationError(f"KG_API_READS_REQUIRE_TOKEN must be 0 or 1, got {flag!r}")
        return cls(
            ask_rate_per_min=_number(
                "KG_API_ASK_RATE_PER_MIN", text("KG_API_ASK_RATE_PER_MIN"), DEFAULT_ASK_RATE_PER_MIN, float
            ),
            model_calls_per_min=_number(
                "KG_API_MODEL_CALLS_PER_MIN",
                text("KG_API_MODEL_CALLS_PER_MIN"),
                DEFAULT_MODEL_CALLS_PER_MIN,
                float,
            ),
            reads_require_token=flag in ("1", "true", "yes"),
            trusted_proxies=parse_networks(text("KG_API_TRUSTED_PROXIES")),
            mcp_token=Secret(token) if (token := text("KG_MCP_TOKEN")) else None,
        )

    def describe(self, host: str, port: int) -> list[str]:
        """What a server bound to ``host:port`` exposes, one line each (for `kg serve` to print
        before it starts; "serving on ..." follows once the socket answers)."""

        def rate(value: float, what: str) -> str:
            return f"{value:g} {what}" if value else "UNLIMITED (0)"

        reads = "need a token" if self.reads_require_token else "open to anyone who can connect"
        return [
            f"address http://{host}:{port}: {'loopback only' if is_loopback(host) else 'reachable from the network'}",
            f"POST /ask and reads (/concepts, /edges, /snapshot, /answers ...): {reads}",
            "writes: need a write token (kg token create NAME --scope write)",
            "MCP at /mcp (streamable HTTP): the same reads, writes and limits as the routes",
            f"/ask limit: {rate(self.ask_rate_per_min, 'per minute per token or client address')}",
            f"model calls: {rate(self.model_calls_per_min, 'per minute for the whole server')}",
            "client address: "
            + (
                f"X-Forwarded-For from {', '.join(map(str, self.trusted_proxies))}, else the connection's"
                if self.trusted_proxies
                else "the connection's (no proxy trusted: X-Forwarded-For is ignored)"
            ),
        ]


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str | None, *, variable: str = "KG_API_TRUSTED_PROXIES") -> tuple[Network, ...]:
    """Comma-separated addresses or networks (``10.0.0.1, 10.1.0.0/16, ::1``); empty: none."""
    out: list[Network] = []
    for item in (text or "").split(","):
        if not item.strip():
            continue
        try:
            out.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            raise ConfigurationError(
                f"{variable} must list IP addresses or networks (e.g. 10.0.0.1, 10.1.0.0/16), "
                f"got {item.strip()!r}"
            ) from None
    return tuple(out)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name or 0.0.0.0-like wildcard: assume reachable


def exposure_problem(host: str, serving: ServingSettings, *, expose: bool) -> str | None:
    """Why binding ``host`` must not go ahead without ``--expose``, or None when it may."""
    if is_loopback(host) or serving.reads_require_token or expose:
        return None
    return (
        f"refusing to serve on {host}: /ask and every read would be open to anyone who can reach it; "
        "set KG_API_READS_REQUIRE_TOKEN=1 (and give clients read tokens), or pass --expose to serve it open"
    )


def _number(var: str, raw: str | None, default: float, kind: type[int] | type[float]) -> Any:
    if raw is None:
        return default
    try:
        return kind(raw)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise ConfigurationError(f"{var} must be {noun}, got {raw!r}") from None
