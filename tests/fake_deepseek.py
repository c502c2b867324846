"""A fake OpenAI-compatible DeepSeek server on 127.0.0.1, for wire tests over real sockets.

Script it with a queue of ``Reply`` values (status, headers, JSON body or raw text, delay before
answering); it records every request. When the queue runs dry it answers 500 with a clear message,
so a test that sends more requests than it scripted fails loudly::

    with FakeDeepSeek() as fake:
        fake.enqueue(Reply(429, headers={"Retry-After": "2"}), Reply(body=completion(DRAFT_JSON)))
        synth = DeepSeekSynthesizer(LLMSettings(api_key=Secret("sk-test"), base_url=fake.url))
        ...
        assert [r.path for r in fake.requests] == ["/chat/completions"] * 2

Serves ``POST /chat/completions`` and ``POST /v1/chat/completions``; anything else is 404.
``closed_port()`` gives a loopback port nobody listens on (connection refused).
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["FakeDeepSeek", "RecordedRequest", "Reply", "closed_port", "completion"]

PATHS = ("/chat/completions", "/v1/chat/completions")


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    model: str = "deepseek-chat",
) -> dict[str, Any]:
    """An OpenAI-style chat completion body whose one choice says ``content``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
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

    def __init__(self) -> None:
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
            if request.method != "POST" or request.path not in PATHS:
                return Reply(404, body=error_body(404, f"no route {request.method} {request.path}"))
            if not self._queue:
                return Reply(500, body=error_body(500, "fake DeepSeek: no scripted reply left"))
            return self._queue.popleft()

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


def closed_port() -> int:
    """A loopback port with no listener: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
