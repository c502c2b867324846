"""`kg doctor`: is this installation able to answer? Checks, printed without secrets.

Three groups, each a list of ``Check(name, status, detail)`` with status ``ok``, ``warn`` or
``fail`` (only ``fail`` makes the report, and the command's exit code, bad):

* **configuration** — the environment parses (the same ``Settings.from_env`` every command uses);
* **database** — reachable, schema at the Alembic head, what is in force now (the counts of ``kg
  audit snapshot``: not what was invalidated or retracted). A missing SQLite file
  is reported, never created;
* **synthesizer** — which one, and for DeepSeek the model, thinking mode, effort, limits, price
  and base URL (credentials redacted); with a key, ONE cheap authenticated request: ``GET
  {base}/models`` (DeepSeek's "list models"; no tokens are spent), with a diagnosis for 401, 402,
  404, 429/5xx, timeouts and connection errors.

The API key and the gateway token are sent only in that request's headers; no detail string, log
event or error message ever contains them (tests assert it). ``http_client`` is the wire seam.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import httpx
import sqlalchemy as sa

from control_plane.settings import LLMSettings, Settings, redact_url
from control_plane.surfaces.wording import counted
from data_plane import schema, storage
from data_plane.clock import utc_now
from data_plane.database import connect, head_revision, redacted_url, schema_revision, sqlite_path
from data_plane.errors import ConfigurationError
from data_plane.events import get_logger
from data_plane.sidecar import probe as sidecar_probe
from data_plane.sidecar import queue_of, side_path
from data_plane.temporal import in_force

__all__ = ["Check", "DoctorReport", "check_database", "check_gateway", "check_synthesizer", "run_doctor"]

Status = Literal["ok", "warn", "fail"]
DOCTOR_TIMEOUT_S: Final = 10.0
COUNTED: Final = (
    ("concept", schema.concepts),
    ("edge", schema.concept_edges),
    ("lesson", schema.lessons),
    ("lesson link", schema.lesson_concepts),
    ("answer", schema.answers),
)
_DIAGNOSES: Final[dict[int, str]] = {
    401: "the gateway refused the credentials (401): check DEEPSEEK_API_KEY (and CF_AIG_TOKEN behind a "
    "Cloudflare AI Gateway)",
    402: "the DeepSeek account has insufficient balance (402): top it up; every question would fail",
    403: "the credentials may not use this gateway (403): check the key's and the gateway's permissions",
    404: "the gateway has no /models here (404): check KG_LLM_BASE_URL (DeepSeek: https://api.deepseek.com; "
    "Cloudflare: https://gateway.ai.cloudflare.com/v1/ACCOUNT/GATEWAY/deepseek)",
    429: "the gateway is rate-limiting this key (429): try again later, or lower the load",
}

log = get_logger("control_plane.surfaces.doctor")


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str

    def line(self) -> str:
        return f"[{self.status}] {self.name}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def lines(self) -> list[str]:
        verdict = "all good" if self.ok else "something is wrong (see [fail] above)"
        return [c.line() for c in self.checks] + [f"doctor: {verdict}"]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.to_dict() for c in self.checks]}


def _scrub(text: str, *secrets: str | None) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def check_database(url: str) -> list[Check]:
    """Reachable, schema at head, current row counts. Never creates or migrates anything."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return [Check("database", "fail", "the database URL is not valid")]
    shown = parsed.render_as_string(hide_password=True)
    file = (
        parsed.database if parsed.get_backend_name() == "sqlite" and parsed.database != ":memory:" else None
    )
    if file and not Path(file).expanduser().exists():
        return [Check("database", "fail", f"no database at {shown}: run `kg init`")]
    try:
        engine = connect(url)
    except ConfigurationError as exc:
        return [Check("database", "fail", str(exc))]
    try:
        try:
            revision = schema_revision(engine)
        except sa.exc.SQLAlchemyError as exc:
            first = _scrub(str(exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc), parsed.password)
            reason = first.strip().splitlines()[0] if first.strip() else type(exc).__name__
            return [Check("database", "fail", f"cannot reach {shown}: {reason}")]
        checks = [Check("database", "ok", f"reachable at {redacted_url(engine)} ({engine.dialect.name})")]
        head = head_revision()
        if revision != head:
            where = "an empty database" if revision is None else f"revision {revision}"
            checks.append(Check("schema", "fail", f"{where}, the code expects {head}: run `kg init`"))
            return checks
        checks.append(Check("schema", "ok", f"at head ({head})"))
        now = utc_now()
        with engine.connect() as conn:
            # What is in force now, as `kg audit snapshot` counts it: not invalidated or retracted.
            counts = {
                name: conn.execute(
                    sa.select(sa.func.count()).select_from(table).where(in_force(table, now, now))
                ).scalar_one()
                for name, table in COUNTED
            }
        counts["answer"] += _queued(engine)
        text = ", ".join(counted(n, noun) for noun, n in counts.items())
        if counts["concept"] == 0:
            checks.append(Check("graph", "warn", f"{text}: run `kg init` to load the bundled curriculum"))
        else:
            checks.append(Check("graph", "ok", text))
        checks.append(_check_periods(engine))
        checks.extend(_check_storage(engine))
        return checks
    finally:
        engine.dispose()


def _queued(engine: sa.Engine) -> int:
    """Answers queued in the SQLite side file and not in ``answers`` yet (an import killed while
    they were asked leaves them there until the next write moves them)."""
    queue = queue_of(engine)
    ids = {q.answer_id for q in queue.pending(None)} if queue is not None else set()
    if not ids:
        return 0
    A = schema.answers
    with engine.connect() as conn:
        moved = set(conn.execute(sa.select(A.c.answer_id).where(A.c.answer_id.in_(ids))).scalars())
    return len(ids - moved)


def _check_storage(engine: sa.Engine) -> list[Check]:
    """On an SQLite file, whether it and its side file take the writes a question makes (its
    answer, its limits): permissions, the disk, and a write tried and rolled back."""
    path = sqlite_path(engine.url.render_as_string(hide_password=False))
    if path is None:
        return []
    out = []
    why = storage.fault(path.absolute(), "the database file")
    out.append(Check("database file", "fail" if why else "ok", why or f"{path.absolute()} can be written"))
    side = side_path(engine)
    why = sidecar_probe(engine)
    out.append(Check("side file", "fail" if why else "ok", why or f"{side} can be written"))
    return out


def _check_periods(engine: sa.Engine) -> Check:
    """Whether revisions written before migration 0004 dropped valid periods still to restore."""
    from data_plane.restore import find_dropped

    n = len(find_dropped(engine))
    if n:
        return Check(
            "periods",
            "warn",
            f"{n} valid period{'s' * (n != 1)} dropped by revisions under the old rule: run "
            "`kg audit restore-periods` (`--check` lists them)",
        )
    return Check("periods", "ok", "no valid period dropped by the old revision rule")


def check_synthesizer(settings: Settings) -> list[Check]:
    """What will answer, as configured (secrets shown only as set / not set)."""
    if settings.synthesizer == "offline":
        key = "set but KG_SYNTHESIZER=offline" if settings.llm.api_key is not None else "not set"
        return [
            Check("synthesizer", "ok", f"offline (deterministic, no model calls); DEEPSEEK_API_KEY {key}")
        ]
    d = settings.llm.describe()
    price = d["price_usd_per_1m"]
    return [
        Check(
            "synthesizer",
            "ok",
            f"deepseek model={d['model']} thinking={d['thinking']}"
            + (f" reasoning_effort={d['reasoning_effort']}" if d["reasoning_effort"] else "")
            + f" max_tokens={d['max_tokens']} context_window={d['context_window']} timeout_s={d['timeout_s']:g}"
            f" max_retries={d['max_retries']}",
        ),
        Check(
            "gateway config",
            "ok",
            f"{d['base_url']} ({d['gateway']}); DEEPSEEK_API_KEY {d['api_key']}, CF_AIG_TOKEN {d['cf_aig_token']}",
        ),
        Check(
            "price",
            "ok",
            f"USD per 1M tokens: cache hit {price['cache_hit']:g}, cache miss {price['cache_miss']:g}, "
            f"output {price['output']:g} (KG_DEEPSEEK_PRICES overrides)",
        ),
    ]


def check_gateway(llm: LLMSettings, *, http_client: httpx.Client | None = None) -> Check:
    """One authenticated ``GET {base}/models``; the diagnosis names what to fix."""
    if llm.api_key is None:
        return Check("gateway", "ok", "skipped: no DEEPSEEK_API_KEY, so no model request is made")
    key, token = llm.api_key.reveal(), llm.cf_aig_token.reveal() if llm.cf_aig_token else None
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
    if token is not None:
        headers["cf-aig-authorization"] = f"Bearer {token}"
    url = f"{llm.base_url}/models"
    shown = redact_url(url)
    timeout = min(llm.timeout_s, DOCTOR_TIMEOUT_S)
    client = http_client or httpx.Client()
    try:
        response = client.get(url, headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        return Check(
            "gateway", "fail", f"no answer from {shown} within {timeout:g} s: check the network or proxy"
        )
    except httpx.HTTPError as exc:
        reason = _scrub(str(exc), key, token) or type(exc).__name__
        return Check("gateway", "fail", f"could not reach {shown}: {reason}")
    finally:
        if http_client is None:
            client.close()
    status = response.status_code
    log.info("doctor.gateway", base_host=llm.base_host, status=status)
    if status != 200:
        hint = _DIAGNOSES.get(status) or (
            f"the gateway is failing ({status}): try again later"
            if status >= 500
            else f"the gateway answered {status}"
        )
        return Check("gateway", "fail", f"GET {shown}: {hint}")
    try:
        data = response.json().get("data", [])
        ids = sorted(m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str))
    except (ValueError, AttributeError, TypeError):
        return Check(
            "gateway", "fail", f"GET {shown} answered 200 but not a model list: is it a DeepSeek gateway?"
        )
    listed = ", ".join(ids) or "none"
    if llm.model not in ids:
        return Check(
            "gateway",
            "warn",
            f"key accepted; {llm.model} is not in the gateway's model list ({listed}); it may still be "
            "served under a legacy name, else set KG_DEEPSEEK_MODEL to a listed model",
        )
    return Check("gateway", "ok", f"key accepted; models: {listed}")


def run_doctor(
    env: Mapping[str, str], *, database_url: str | None = None, http_client: httpx.Client | None = None
) -> DoctorReport:
    """Every check, in order; the report is bad when any check failed."""
    from control_plane.surfaces.runtime import default_database_url

    checks: list[Check] = []
    try:
        settings: Settings | None = Settings.from_env(env, database_url=database_url)
        checks.append(Check("configuration", "ok", "the environment parses"))
    except ConfigurationError as exc:
        settings = None
        checks.append(Check("configuration", "fail", str(exc)))
    # Even when the rest of the environment is refused, check the database it names.
    url = (
        (settings.database_url if settings else None)
        or database_url
        or env.get("KG_DATABASE_URL", "").strip()
        or default_database_url()
    )
    checks += check_database(url)
    if settings is not None:
        checks += check_synthesizer(settings)
        if settings.synthesizer == "deepseek":
            checks.append(check_gateway(settings.llm, http_client=http_client))
    return DoctorReport(tuple(checks))
