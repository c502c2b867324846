"""The production synthesizer: DeepSeek through LlamaIndex's ``DeepSeek`` LLM, through ONE gateway.

One ``synthesize`` is one logical call. Transport failures (connection errors, timeouts, 429 and
500/502/503/504) are retried here, and only here, on a deterministic exponential schedule that
honours ``Retry-After``; the OpenAI client underneath runs with ``max_retries=0`` and a Cloudflare
AI Gateway is told ``cf-aig-max-attempts: 1``, so retries never multiply across layers. Refusals
(400/401/402/422 and other 4xx) are not retried. A reply whose *content* is unusable gets one
repair call; if that is unusable too, the result is a ``Draft`` with confidence 0 and ``error`` set.
A reply cut short by the token limit (``finish_reason: "length"``) is unusable content too: its repair
call asks for a shorter object.

Thinking mode is always explicit in the request body (``thinking: {"type": "enabled"|"disabled"}``,
and ``reasoning_effort`` when enabled), because DeepSeek's V4 models think unless told not to. In
thinking mode ``temperature`` is not sent (DeepSeek ignores it there). ``reasoning_content`` is never
read as the answer, never echoed back, never logged: only its token count is kept.

Logs (structlog, event ``llm.attempt``): model, gateway host, status, attempt, tokens, latency.
Nothing secret is ever passed to a logger: the key and gateway token live only inside the client.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import httpx

from control_plane.errors import LLMRejected, LLMUnavailable
from control_plane.semantics.claims import contract_of
from control_plane.settings import LLMSettings, Settings
from control_plane.synthesizers.base import Draft, SynthesisRequest, Synthesizer, SynthesizerInfo, Usage
from control_plane.synthesizers.parsing import parse_draft
from control_plane.synthesizers.pricing import estimate_cost_usd
from control_plane.synthesizers.prompts import (
    COMPACT_OVER_EDGES,
    PROMPT_VERSION,
    build_closure_messages,
    build_messages,
    repair_messages,
)
from data_plane.errors import ConfigurationError
from data_plane.events import get_logger

if TYPE_CHECKING:
    from llama_index.llms.deepseek import DeepSeek

__all__ = [
    "RETRYABLE_STATUS",
    "DeepSeekSynthesizer",
    "backoff_delay",
    "build_synthesizer",
    "request_options",
    "retry_after_seconds",
]

RETRYABLE_STATUS: Final = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE_S: Final = 0.5
BACKOFF_CAP_S: Final = 8.0
RETRY_AFTER_CAP_S: Final = 30.0
TEMPERATURE: Final = 0.0

_REFUSALS: Final[dict[int, str]] = {
    400: "400 bad request): the request body was invalid; check KG_DEEPSEEK_MODEL is a name DeepSeek "
    "still serves (e.g. deepseek-flash), else this is a bug, please report it",
    401: "401 unauthorized): check DEEPSEEK_API_KEY (and CF_AIG_TOKEN when using a Cloudflare AI Gateway)",
    402: "402 insufficient balance): top up the DeepSeek account",
    403: "403 forbidden): the key or gateway token may not use this model or gateway",
    404: "404 not found): check KG_LLM_BASE_URL and KG_DEEPSEEK_MODEL",
    422: "422 invalid parameters): check KG_DEEPSEEK_MODEL, KG_LLM_MAX_TOKENS and KG_LLM_CONTEXT_WINDOW",
}

log = get_logger("control_plane.synthesizers.deepseek")


def retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), capped at
    ``RETRY_AFTER_CAP_S``; None when absent or unreadable. Pure: ``now`` is passed in."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def backoff_delay(attempt: int) -> float:
    """The deterministic wait after failed attempt ``attempt`` (1-based): 0.5, 1, 2, 4, 8, 8 ... s."""
    return float(min(BACKOFF_BASE_S * 2 ** (attempt - 1), BACKOFF_CAP_S))


TRUNCATED: Final = (
    "it was cut off at the completion token limit (finish_reason 'length') before the JSON object was "
    "complete; reply with a shorter object (a shorter answer, fewer ids)"
)


def request_options(settings: LLMSettings) -> dict[str, Any]:
    """The body fields we add to every chat completion, besides model, messages and max_tokens.

    ``thinking`` is not an OpenAI parameter, so it travels in ``extra_body``; ``reasoning_effort`` is.
    ``openai.NOT_GIVEN`` drops LlamaIndex's ``temperature`` from the body in thinking mode."""
    import openai

    options: dict[str, Any] = {
        "response_format": {"type": "json_object"},
        "extra_body": {"thinking": {"type": settings.thinking}},
    }
    if settings.thinking == "enabled":
        options["reasoning_effort"] = settings.reasoning_effort
        options["temperature"] = openai.NOT_GIVEN
    return options


@dataclass(frozen=True)
class _Reply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cache_hit_tokens: int = 0
    cache_miss_tokens: int = 0
    finish_reason: str | None = None


class DeepSeekSynthesizer:
    """``Synthesizer`` backed by DeepSeek. ``http_client`` is the wire seam for tests
    (``httpx.Client(transport=httpx.MockTransport(handler))``); ``sleep`` is the waiting seam."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if settings.api_key is None:
            raise ConfigurationError("the DeepSeek synthesizer needs DEEPSEEK_API_KEY")
        self._settings = settings
        self._sleep = sleep
        self._info = SynthesizerInfo("deepseek", settings.model, PROMPT_VERSION, offline=False)
        self._llm = self._build_llm(settings, http_client)

    @staticmethod
    def _build_llm(settings: LLMSettings, http_client: httpx.Client | None) -> DeepSeek:
        # Imported here: llama_index costs over a second at import, and the offline path never needs it.
        from llama_index.llms.deepseek import DeepSeek

        assert settings.api_key is not None
        headers: dict[str, str] = {}
        if settings.gateway in ("cloudflare", "loopback"):
            # Our retries are the only layer: stop the gateway from retrying on its own.
            headers["cf-aig-max-attempts"] = "1"
            if settings.cf_aig_token is not None:
                headers["cf-aig-authorization"] = f"Bearer {settings.cf_aig_token.reveal()}"
        return DeepSeek(
            model=settings.model,
            api_key=settings.api_key.reveal(),
            api_base=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
            context_window=settings.context_window,
            max_tokens=settings.max_tokens,
            temperature=TEMPERATURE,
            additional_kwargs=request_options(settings),
            default_headers=headers,
            http_client=http_client,
        )

    def __repr__(self) -> str:
        return f"DeepSeekSynthesizer(model={self._settings.model!r}, base_url={self._settings.base_url!r})"

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        """One logical call: the draft, or an error draft after one repair call.

        Raises ``LLMUnavailable`` (retries exhausted) or ``LLMRejected`` (refused, not retried).
        """
        started = time.perf_counter()
        # A big closure goes as layered lists with edge ids (<= 2,000 prompt tokens at 100 concepts).
        compact = len(request.evidence.edges) > COMPACT_OVER_EDGES
        messages = build_closure_messages(request) if compact else build_messages(request)
        replies: list[_Reply] = []
        draft: Draft | None = None
        contract = contract_of(request.reading) if request.reading is not None else "set"
        for calls in (1, 2):  # the first call, and at most one repair call
            reply = self._call(messages)
            replies.append(reply)
            usage = self._usage(replies, started)
            draft = parse_draft(reply.content, usage, contract=contract)
            if draft.error is None:
                return draft
            error = draft.error
            if reply.finish_reason == "length":
                error = f"malformed model reply: {TRUNCATED}"
                draft = replace(draft, error=error)
            log.warning("llm.malformed", model=self._settings.model, call=calls, error=error)
            messages = repair_messages(messages, reply.content, error)
        assert draft is not None
        return draft

    def read_question(self, messages: list[dict[str, str]]) -> tuple[str, Usage]:
        """One model call reading a question into the reading structure (``QuestionReader``); the
        reply is checked by the caller. Raises ``LLMUnavailable`` / ``LLMRejected`` as ``synthesize``."""
        started = time.perf_counter()
        reply = self._call(messages)
        return reply.content, self._usage([reply], started)

    def _usage(self, replies: Sequence[_Reply], started: float) -> Usage:
        """Totals over the calls of one synthesis, with the estimated cost."""

        def total(name: str) -> int:
            return sum(getattr(r, name) for r in replies)

        prompt, hit, miss, completion = (
            total("prompt_tokens"),
            total("cache_hit_tokens"),
            total("cache_miss_tokens"),
            total("completion_tokens"),
        )
        cost = estimate_cost_usd(
            self._settings.price,
            prompt_tokens=prompt,
            cache_hit_tokens=hit,
            cache_miss_tokens=miss,
            completion_tokens=completion,
        )
        return Usage(
            calls=len(replies),
            prompt_tokens=prompt,
            completion_tokens=completion,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            reasoning_tokens=total("reasoning_tokens"),
            cache_hit_tokens=hit,
            cache_miss_tokens=miss,
            cost_usd=cost,
        )

    def _call(self, messages: Sequence[dict[str, str]]) -> _Reply:
        """One chat completion with bounded transport retries."""
        import openai
        from llama_index.core.llms import ChatMessage

        chat = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
        attempts = self._settings.max_retries + 1
        status: int | None = None
        for attempt in range(1, attempts + 1):
            t0 = time.perf_counter()
            delay = backoff_delay(attempt)
            try:
                response = self._llm.chat(chat)
            except openai.APIStatusError as exc:
                status = exc.status_code
                self._log_attempt(attempt, status, t0, outcome="error")
                if status not in RETRYABLE_STATUS:
                    hint = _REFUSALS.get(status, f"{status}): the gateway refused the request")
                    raise LLMRejected(f"DeepSeek refused the request ({hint}", status=status) from exc
                header = exc.response.headers.get("retry-after")
                waited = retry_after_seconds(header, now=datetime.now(UTC))
                if waited is not None:
                    delay = waited
                last: BaseException = exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                status = None
                self._log_attempt(attempt, None, t0, outcome=type(exc).__name__)
                last = exc
            except (AttributeError, IndexError, TypeError):
                # A 2xx body that is not a chat completion (an HTML page, ``{}``): the client library
                # trips over it. Treat it as an unusable reply, which gets the one repair call.
                self._log_attempt(attempt, 200, t0, outcome="unreadable response")
                return _Reply(content="")
            else:
                reply = _extract(response.raw)
                self._log_attempt(
                    attempt,
                    200,
                    t0,
                    outcome="ok",
                    finish_reason=reply.finish_reason,
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens,
                    reasoning_tokens=reply.reasoning_tokens,
                    cache_hit_tokens=reply.cache_hit_tokens,
                )
                return reply
            if attempt < attempts:
                log.info("llm.retry", model=self._settings.model, attempt=attempt, delay_s=delay)
                self._sleep(delay)
        what = f"HTTP {status}" if status is not None else "no response (network error or timeout)"
        raise LLMUnavailable(
            f"DeepSeek at {self._settings.base_host} is unavailable: {what} after {attempts} attempt(s); "
            "try again later or raise KG_LLM_TIMEOUT_S / KG_LLM_MAX_RETRIES",
            status=status,
            attempts=attempts,
        ) from last

    def _log_attempt(
        self, attempt: int, status: int | None, t0: float, *, outcome: str, **extra: Any
    ) -> None:
        log.info(
            "llm.attempt",
            model=self._settings.model,
            base_host=self._settings.base_host,
            status=status,
            attempt=attempt,
            outcome=outcome,
            latency_ms=round((time.perf_counter() - t0) * 1000.0, 1),
            **extra,
        )


def _count(obj: Any, name: str) -> int:
    """A non-negative token count from ``obj.name`` (an SDK model or its extra fields), else 0."""
    value = getattr(obj, name, None)
    if value is None and obj is not None:
        extra = getattr(obj, "model_extra", None)  # fields the SDK's model does not declare
        value = extra.get(name) if isinstance(extra, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _extract(raw: Any) -> _Reply:
    """Content, finish reason and token counts of a chat completion; a reply without content becomes
    ``""`` (and then an error draft), never an exception. Only ``message.content`` is the answer:
    ``message.reasoning_content`` (the chain of thought) is deliberately not read."""
    content: Any = None
    finish_reason: Any = None
    choices = getattr(raw, "choices", None)
    if isinstance(choices, list) and choices:
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        finish_reason = getattr(choices[0], "finish_reason", None)
    usage = getattr(raw, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    return _Reply(
        content=content if isinstance(content, str) else "",
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        reasoning_tokens=_count(details, "reasoning_tokens"),
        cache_hit_tokens=_count(usage, "prompt_cache_hit_tokens"),
        cache_miss_tokens=_count(usage, "prompt_cache_miss_tokens"),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
    )


def build_synthesizer(settings: Settings, *, http_client: httpx.Client | None = None) -> Synthesizer:
    """The synthesizer ``settings`` ask for: the offline one, or DeepSeek through the one gateway."""
    if settings.synthesizer == "offline":
        from control_plane.synthesizers.offline import OfflineSynthesizer

        return OfflineSynthesizer()
    return DeepSeekSynthesizer(settings.llm, http_client=http_client)
