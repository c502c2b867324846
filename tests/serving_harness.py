"""Running the HTTP app as it is deployed, for tests and the load run: several uvicorn worker
processes on 127.0.0.1 over one database, with the fake DeepSeek server as the model gateway.

``served(url, workers=N, env=...)`` starts ``python -m uvicorn --factory
control_plane.surfaces.http:app_from_env --workers N`` (the documented production command; or
``argv`` given, e.g. ``kg serve --workers N``), waits until every worker has built its app (each
one writes its metric files into its own ``PROMETHEUS_MULTIPROC_DIR`` entry) and ``/readyz`` is 200,
and yields a ``Server`` (its base URL and metrics folder). It always stops the server on exit.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from fake_deepseek import closed_port

ROOT = Path(__file__).resolve().parent.parent
APP = "control_plane.surfaces.http:app_from_env"
_PID = re.compile(r"_(\d+)\.db$")


@dataclass(frozen=True)
class Server:
    url: str
    metrics_dir: Path
    log: Path

    def worker_pids(self) -> set[int]:
        """Processes that built the app (each writes its own metric files)."""
        return {int(m.group(1)) for p in self.metrics_dir.iterdir() if (m := _PID.search(p.name))}


def uvicorn_argv(port: int, workers: int) -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", "--factory", APP, "--workers", str(workers),
        "--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level", "warning",
        "--no-proxy-headers",
    ]  # fmt: skip


@contextmanager
def served(
    database_url: str,
    *,
    workers: int,
    env: Mapping[str, str] = {},
    argv: Sequence[str] | None = None,
    port: int | None = None,
    timeout: float = 120.0,
) -> Iterator[Server]:
    """The app served by ``workers`` processes over ``database_url`` (module docstring)."""
    port = port or closed_port()
    with tempfile.TemporaryDirectory(prefix="kg-served-") as tmp:
        metrics_dir = Path(tmp) / "metrics"
        metrics_dir.mkdir()
        log = Path(tmp) / "server.log"
        full_env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "KG_DATABASE_URL": database_url,
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
            "DEEPSEEK_API_KEY": "",
            "KG_SYNTHESIZER": "offline",
            "KG_API_READS_REQUIRE_TOKEN": "",
            **env,
        }
        command = list(argv) if argv is not None else uvicorn_argv(port, workers)
        with log.open("wb") as out:
            proc = subprocess.Popen(command, env=full_env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        server = Server(f"http://127.0.0.1:{port}", metrics_dir, log)
        try:
            _wait_ready(proc, server, workers, timeout)
            yield server
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def _wait_ready(proc: subprocess.Popen[bytes], server: Server, workers: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited ({proc.returncode}): {server.log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the server did not get ready in {timeout:g} s: {server.log.read_text()[-3000:]}"
            )
        if len(server.worker_pids()) >= workers:
            try:
                if httpx.get(f"{server.url}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
        time.sleep(0.2)
