"""Workers the reliability tests run in threads and in separate processes, plus their shared checks.

Everything here is importable by a ``spawn``-ed child (top-level functions, plain arguments), and
runnable as a script for the crash tests (``python tests/reliability_workers.py burst URL N``).
Figures a test measures are written as JSON into ``$KG_RELIABILITY_FIGURES`` when that variable
is set, so that docs/reliability.md can be filled from a real run.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # when run as a script
    sys.path.insert(0, str(REPO_ROOT))

from data_plane import KGError, WriteGateway, connect, schema  # noqa: E402
from data_plane.records import Grounding  # noqa: E402

# Overlapping keys every writer fights over.
KEYS: tuple[str, ...] = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
OPS: tuple[str, ...] = ("assert", "revise", "invalidate", "edge")


def op_grounding(tag: str) -> Grounding:
    """A grounding whose reason is unique to one attempted write, so the write can be found again."""
    return Grounding(confidence=0.8, reason=tag, source="reliability", evidence={"op": tag})


def one_op(gateway: WriteGateway, writer: int, i: int, rng: random.Random) -> dict[str, Any]:
    """Attempt one random write on an overlapping key and log what happened."""
    kind = rng.choice(OPS)
    key = rng.choice(KEYS)
    tag = f"w{writer}-op{i}-{kind}"
    entry: dict[str, Any] = {"writer": writer, "op": i, "kind": kind, "tag": tag}
    g = op_grounding(tag)
    try:
        if kind == "assert":
            entry["table"], entry["key"] = "concepts", [key]
            vid = gateway.assert_concept(key, name=key.title(), summary=tag, grounding=g).stamp.version_id
        elif kind == "revise":
            entry["table"], entry["key"] = "concepts", [key]
            vid = gateway.revise_concept(key, summary=tag, grounding=g).stamp.version_id
        elif kind == "invalidate":
            entry["table"], entry["key"] = "concepts", [key]
            vid = gateway.invalidate_concept(key, grounding=g).written[0].stamp.version_id
        else:
            other = rng.choice([k for k in KEYS if k != key])
            entry["table"], entry["key"] = "concept_edges", [key, other, "prerequisite"]
            vid = gateway.assert_edge(key, other, "prerequisite", grounding=g).stamp.version_id
        entry.update(outcome="accepted", version_id=vid)
    except KGError as exc:
        entry.update(outcome="rejected", error=type(exc).__name__, message=str(exc))
    except Exception as exc:  # a crash: the test counts and reports these
        entry.update(outcome="crashed", error=type(exc).__name__, message=str(exc)[:500])
    return entry


def run_writer(url: str, writer: int, n_ops: int, seed: int, out: str, barrier: Any = None) -> None:
    """Process entry point: own engine, wait for the others, do ``n_ops`` writes, log to ``out``."""
    engine = connect(url)
    gateway = WriteGateway(engine)
    rng = random.Random(seed)
    if barrier is not None:
        barrier.wait()
    log = [one_op(gateway, writer, i, rng) for i in range(n_ops)]
    engine.dispose()
    Path(out).write_text(json.dumps(log))


def thread_writer(engine: Engine, writer: int, n_ops: int, seed: int, barrier: Any) -> list[dict[str, Any]]:
    """Thread entry point: shares the engine (and its pool) with the other threads."""
    gateway = WriteGateway(engine)
    rng = random.Random(seed)
    barrier.wait()
    return [one_op(gateway, writer, i, rng) for i in range(n_ops)]


def keys_with_several_current_versions(engine: Engine) -> list[tuple[str, tuple[Any, ...], int]]:
    """Every (table, key) with two current versions whose valid periods overlap (a key may hold
    over several periods, one current version each); must be empty."""
    bad: list[tuple[str, tuple[Any, ...], int]] = []
    with engine.connect() as conn:
        for table in schema.VERSIONED_TABLES:
            a, b = table.alias("a"), table.alias("b")
            cols = [a.c[k] for k in schema.KEY_COLUMNS[table.name]]
            stmt = (
                sa.select(*cols, sa.func.count())
                .where(
                    *(a.c[k] == b.c[k] for k in schema.KEY_COLUMNS[table.name]),
                    a.c.version_id < b.c.version_id,
                    a.c.expired_at.is_(None),
                    b.c.expired_at.is_(None),
                    sa.or_(a.c.invalid_at.is_(None), a.c.invalid_at > b.c.valid_at),
                    sa.or_(b.c.invalid_at.is_(None), b.c.invalid_at > a.c.valid_at),
                )
                .group_by(*cols)
            )
            bad += [(table.name, tuple(r[:-1]), r[-1]) for r in conn.execute(stmt)]
    return bad


def rows_by_reason(engine: Engine, tables: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """All rows of ``tables`` grouped by their grounding reason."""
    out: dict[str, list[dict[str, Any]]] = {}
    with engine.connect() as conn:
        for name in tables:
            table = schema.metadata.tables[name]
            for row in conn.execute(sa.select(table)).mappings():
                out.setdefault(row["reason"], []).append({"table": name, **dict(row)})
    return out


def audit(engine: Engine, log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Compare a writers' log with the database: what was accepted must be there, rejected must not."""
    by_reason = rows_by_reason(engine, ("concepts", "concept_edges", "lesson_concepts"))
    lost: list[dict[str, Any]] = []
    phantom: list[dict[str, Any]] = []
    for entry in log:
        rows = [r for r in by_reason.get(entry["tag"], []) if r["table"] == entry["table"]]
        if entry["outcome"] == "accepted":
            match = [
                r
                for r in rows
                if r["version_id"] == entry["version_id"]
                and r["confidence"] == 0.8
                and r["source"] == "reliability"
                and r["evidence"] == {"op": entry["tag"]}
            ]
            if not match:
                lost.append(entry)
        elif rows:
            phantom.append(entry)
    return {
        "attempted": len(log),
        "accepted": sum(e["outcome"] == "accepted" for e in log),
        "rejected": sum(e["outcome"] == "rejected" for e in log),
        "crashed": sum(e["outcome"] == "crashed" for e in log),
        "lost": len(lost),
        "phantom": len(phantom),
        "lost_entries": lost[:5],
        "phantom_entries": phantom[:5],
        "rejections": _count(e["error"] for e in log if e["outcome"] != "accepted"),
    }


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def record_figures(name: str, data: Any) -> None:
    """Write measured figures to ``$KG_RELIABILITY_FIGURES/<name>.json`` when that is set."""
    target = os.environ.get("KG_RELIABILITY_FIGURES")
    if not target:
        return
    path = Path(target)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True, default=str))


def burst(url: str, n: int) -> None:
    """Many single gateway writes, printing each accepted version id (flushed) as soon as it commits."""
    engine = connect(url)
    gateway = WriteGateway(engine)
    gateway.assert_concept("burst-root", name="Burst root", grounding=op_grounding("burst-root"))
    print("ready", flush=True)
    for i in range(n):
        tag = f"burst-{i}"
        if i % 2 == 0:
            v = gateway.assert_concept(f"b{i}", name=f"B {i}", summary=tag, grounding=op_grounding(tag))
            vid, table = v.stamp.version_id, "concepts"
        else:
            e = gateway.assert_edge(f"b{i - 1}", "burst-root", "part_of", grounding=op_grounding(tag))
            vid, table = e.stamp.version_id, "concept_edges"
        print(f"{table} {vid} {tag}", flush=True)


def import_into(url: str, bundle: str, policy: str = "") -> None:
    """Import a bundle in one transaction, announcing each phase on stdout as it is reached;
    ``policy`` "set-aside" imports under the set-aside and mutual-as-related policy."""
    from data_plane.bundle import ImportPolicy, import_bundle

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "apply" and done == 0:
            print("apply", flush=True)

    engine = connect(url)
    print("start", flush=True)
    chosen = ImportPolicy(set_aside=True, mutual_as_related=True) if policy == "set-aside" else None
    report = import_bundle(WriteGateway(engine), bundle, progress=progress, policy=chosen)
    print(f"done {report.new_versions}", flush=True)
    # Stay alive until killed, so that a kill after the commit is possible.
    sys.stdin.read()


def paused_import(url: str, bundle: str, pause_at: int, go: str) -> None:
    """Import a bundle in one transaction, and in its write pass, once ``pause_at`` rows are
    written (the write lock held), print "writing" and wait until the file ``go`` exists; print
    "done N" once the import has committed."""
    import time

    from data_plane.bundle import import_bundle

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "apply" and done >= pause_at and not Path(go).exists():
            print("writing", flush=True)
            while not Path(go).exists():
                time.sleep(0.05)

    report = import_bundle(WriteGateway(connect(url)), bundle, progress=progress)
    print(f"done {report.new_versions}", flush=True)


if __name__ == "__main__":
    import structlog

    # stdout carries the protocol (one acknowledged write per line); logs go to stderr.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    if sys.argv[1] == "burst":
        burst(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "import":
        import_into(sys.argv[2], sys.argv[3], *sys.argv[4:5])
    elif sys.argv[1] == "paused-import":
        paused_import(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
