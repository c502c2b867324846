"""A fake OpenAI-compatible DeepSeek server on 127.0.0.1, for wire tests over real sockets.

Script it with a queue of ``Reply`` values (status, headers, JSON body or raw text, delay before
answering); it records every request. When the queue runs dry it answers 500 with a clear message,
so a test that sends more requests than it scripted fails loudly::

    with FakeDeepSeek() as fake:
        fake.enqueue(Reply(429, headers={"Retry-After": "2"}), Reply(body=completion(DRAFT_JSON)))
        synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret("sk-test"), base_url=fake.url))
        ...
        assert [r.path for r in fake.requests] == ["/chat/completions"] * 2

Serves ``POST /chat/completions`` and ``POST /v1/chat/completions`` (scripted), and
``GET /models`` / ``GET /v1/models`` (the model list; 401 unless the bearer key matches ``api_key``
when one is given); anything else is 404. A chat request naming a retired model (``deepseek-chat``,
``deepseek-reasoner``) gets DeepSeek's 400 without using up a scripted reply.

``prefix_cache=True`` simulates DeepSeek's context cache: the usage block of every scripted 200
completion is rewritten from the request itself, ``prompt_tokens`` being the prompt's length and
``prompt_cache_hit_tokens`` the length of its longest common prefix with any earlier request, both in
``approx_tokens`` (4 characters a token, the same rule for both so the rate is consistent).
``closed_port()`` gives a loopback port nobody listens on (connection refused).

``responder``: a function from a chat request's JSON body to a ``Reply``, used when the queue is
empty (for servers that answer any number of requests, e.g. behind several worker processes);
``honest_model`` is one: it answers the claim the prompt's evidence gives (``evals.liar``).
``claim_reply`` scripts one reply from a claim object.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "FakeDeepSeek",
    "RecordedRequest",
    "Reply",
    "approx_tokens",
    "claim_reply",
    "closed_port",
    "completion",
    "honest_model",
]

PATHS = ("/chat/completions", "/v1/chat/completions")
MODEL_PATHS = ("/models", "/v1/models")
RETIRED = ("deepseek-chat", "deepseek-reasoner")
MODELS = ("deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro")


def approx_tokens(chars: int) -> int:
    """Tokens for ``chars`` characters of prompt, by the fake's one rule (4 characters a token)."""
    return chars // 4


def prompt_text(body: Any) -> str:
    """The prompt as the cache sees it: role and content of each message, in order."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return "".join(f"<{m.get('role')}>{m.get('content')}" for m in messages if isinstance(m, dict))


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    model: str = "deepseek-flash",
    reasoning_content: str | None = None,
    reasoning_tokens: int | None = None,
    cache_hit_tokens: int | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A DeepSeek chat completion body whose one choice says ``content`` (and, in thinking mode,
    ``reasoning_content``). With ``cache_hit_tokens`` the usage block carries DeepSeek's cache split
    (``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens`` = ``prompt_tokens``); with
    ``reasoning_tokens``, ``completion_tokens_details.reasoning_tokens`` (part of completion_tokens)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cache_hit_tokens is not None:
        usage["prompt_cache_hit_tokens"] = cache_hit_tokens
        usage["prompt_cache_miss_tokens"] = prompt_tokens - cache_hit_tokens
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": usage,
    }


def error_body(status: int, message: str = "fake error") -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake", "code": str(status)}}


@dataclass(frozen=True)
class Reply:
    """One scripted response. ``text`` (raw) wins over ``body`` (JSON); with neither, a 200 gets an
    empty object and an error status gets an OpenAI-style error body."""

    status: int = 200
    body: dict[str, Any] | None = None
    text: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> tuple[bytes, str]:
        if self.text is not None:
            return self.text.encode(), "text/plain; charset=utf-8"
        body = self.body if self.body is not None else ({} if self.status < 400 else error_body(self.status))
        return json.dumps(body).encode(), "application/json"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeDeepSeek:
    """The server. Use as a context manager; ``url`` is its base URL (``http://127.0.0.1:PORT``)."""

    def __init__(
        self,
        *,
        prefix_cache: bool = False,
        api_key: str | None = None,
        models: tuple[str, ...] = MODELS,
        responder: Callable[[Any], Reply] | None = None,
    ) -> None:
        self.prefix_cache = prefix_cache
        self.responder = responder
        self.api_key = api_key
        self.models = models
        self._prompts: list[str] = []
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-deepseek",
            daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeDeepSeek:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stopping.set()  # wakes handlers that are still "delaying"
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeDeepSeek:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.method == "GET" and request.path in MODEL_PATHS:
                return self._models(request)
            if request.method != "POST" or request.path not in PATHS:
                return Reply(404, body=error_body(404, f"no route {request.method} {request.path}"))
            try:
                body = request.json()
            except ValueError:
                body = None
            if isinstance(body, dict) and body.get("model") in RETIRED:
                return Reply(400, body=error_body(400, "Model Not Exist"))
            if not self._queue and self.responder is not None:
                return self.responder(body)
            if not self._queue:
                return Reply(500, body=error_body(500, "fake DeepSeek: no scripted reply left"))
            reply = self._queue.popleft()
            if self.prefix_cache:
                reply = self._cached(reply, prompt_text(body))
            return reply

    def _models(self, request: RecordedRequest) -> Reply:
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return Reply(401, body=error_body(401, "Authentication Fails, Your api key is invalid"))
        data = [{"id": m, "object": "model", "owned_by": "deepseek"} for m in self.models]
        return Reply(body={"object": "list", "data": data})

    def _cached(self, reply: Reply, prompt: str) -> Reply:
        """``reply`` with its usage recomputed from ``prompt`` against the earlier prompts."""
        best = max((common_prefix(prompt, earlier) for earlier in self._prompts), default=0)
        self._prompts.append(prompt)
        if reply.status != 200 or reply.body is None or "usage" not in reply.body:
            return reply
        total = approx_tokens(len(prompt))
        hit = min(approx_tokens(best), total)
        usage = dict(reply.body["usage"])
        usage.update(
            prompt_tokens=total,
            prompt_cache_hit_tokens=hit,
            prompt_cache_miss_tokens=total - hit,
            total_tokens=total + int(usage.get("completion_tokens", 0)),
        )
        return Reply(reply.status, {**reply.body, "usage": usage}, reply.text, reply.headers, reply.delay)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = RecordedRequest(
                    method=self.command,
                    path=self.path.split("?", 1)[0],
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                reply = fake._next(recorded)
                if reply.delay and fake._stopping.wait(reply.delay):
                    return
                payload, content_type = reply.payload()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout fired first): expected in timeout tests

            do_POST = _serve
            do_GET = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean; requests are recorded instead

        return Handler


def honest_model(body: Any) -> Reply:
    """What an honest model replies: the claim the prompt's evidence gives for its reading,
    computed from the prompt alone (``evals.liar``); asked to read a question itself, it says it
    did not understand it, so the grammar's reading stands."""
    from evals.liar import Liar

    return Reply(body=Liar().completion(body))


def claim_reply(
    claim: dict[str, Any],
    *,
    confidence: float = 0.95,
    missing: str = "",
    focus: dict[str, Any] | None = None,
    **usage: Any,
) -> Reply:
    """A 200 completion whose reply is ``claim`` in the reply object the system prompt asks for."""
    body = {
        "claim": claim,
        "confidence": confidence,
        "missing": missing,
        "next_focus": focus or {"relations": [], "concept_ids": [], "text": ""},
    }
    return Reply(body=completion(json.dumps(body), **usage))


def closed_port() -> int:
    """A loopback port with no listener: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
