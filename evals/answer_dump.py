"""Every reading and every answer of every question set, dumped for a before/after comparison.

A refactor of the reader or the planning loop must change nothing users see. This runs every
question of every question file (``evals/questions/<graph>_<split>.jsonl.gz``, the bundled
``curriculum.jsonl`` and, when ``../shared/dev-graphs`` is there, the LectureBank splits) through
the offline loop under a fixed clock, in more than one loop configuration (the default one, and
a small frontier without walks, which takes the one-hop rounds, the reserve and the refocusing
through every round), and writes one JSON line per question: its reading, and its answer's text,
result, cited ids, confidence, abstention reason, evidence and rounds (everything but ids and
timings, which differ run to run).

    python -m evals.answer_dump --out /tmp/before.jsonl      # on the code before
    python -m evals.answer_dump --out /tmp/after.jsonl       # on the code after
    python -m evals.answer_dump --compare /tmp/before.jsonl /tmp/after.jsonl

``--compare`` prints which questions differ (set, configuration, id) and where in the answer,
never a question's text, and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from evals.dev_graphs import dev_graphs_folder

__all__ = ["compare", "dump", "main"]

ROOT: Final = Path(__file__).resolve().parent.parent
QUESTIONS: Final = ROOT / "evals" / "questions"
BUNDLES: Final = {"curriculum": None, "prereqmap": "prereqmap", "musicstats": "musicstats"}
# The loop configurations every question runs under: (name, Planner options).
CONFIGS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("default", {}),
    ("hops", {"walks": False, "frontier_cap": 3}),
)
# What differs between two runs of the same code: ids, clocks and timings.
# (``recorded_at`` of a record is the import's time; the question's own is in its reading.)
_VOLATILE: Final = frozenset({"answer_id", "question_id", "created_at", "latency_ms", "recorded_at"})
# The clock every question is asked at (time words are read relative to it).
CLOCK: Final = datetime(2027, 1, 1, tzinfo=UTC)


def question_sets() -> list[tuple[str, Path, Path | None, bool]]:
    """(name, question file, bundle (None: the bundled curriculum), set aside) for every set."""
    found: list[tuple[str, Path, Path | None, bool]] = [
        ("curriculum.jsonl", QUESTIONS / "curriculum.jsonl", None, False)
    ]
    for path in sorted(QUESTIONS.glob("*_*.jsonl.gz")):
        graph = path.name.partition("_")[0]
        if graph in BUNDLES:
            bundle = BUNDLES[graph]
            found.append(
                (path.name, path, None if bundle is None else ROOT / "evals/bundles" / bundle, False)
            )
    lecturebank = dev_graphs_folder({}) / "lecturebank"
    if (lecturebank / "manifest.json").is_file():
        for split in ("dev", "test"):
            path = QUESTIONS / f"lecturebank_{split}.jsonl.gz"
            found.append((path.name, path, lecturebank, True))
    return found


def _stable(value: Any) -> Any:
    """``value`` without the keys that differ between runs of the same code."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _digested(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer with its evidence as the ids it holds and a digest of the whole (the records
    themselves would make the dump hundreds of megabytes)."""
    evidence = answer.get("evidence")
    if not isinstance(evidence, dict):
        return answer
    whole = json.dumps(evidence, sort_keys=True).encode()
    return {
        **answer,
        "evidence": {
            "concepts": sorted(c["concept_id"] for c in evidence.get("concepts", [])),
            "edges": len(evidence.get("edges", [])),
            "lesson_links": len(evidence.get("lesson_links", [])),
            "sha256": hashlib.sha256(whole).hexdigest(),
        },
    }


@contextmanager
def _planners(bundle: Path | None, set_aside: bool) -> Iterator[list[tuple[str, Any]]]:
    """One offline planner per configuration over a fresh SQLite file loaded with ``bundle``."""
    from control_plane.planning.loop import Planner
    from control_plane.surfaces.runtime import ensure_initialised
    from control_plane.synthesizers.offline import OfflineSynthesizer
    from data_plane.bundle import ImportPolicy, import_bundle
    from data_plane.database import connect
    from data_plane.gateway import WriteGateway
    from data_plane.reads import GraphReader

    with tempfile.TemporaryDirectory(prefix="kg-dump-") as tmp:
        url = f"sqlite:///{tmp}/kg.sqlite3"
        ensure_initialised(url, load_curriculum=bundle is None)
        engine = connect(url)
        try:
            if bundle is not None:
                import_bundle(WriteGateway(engine), bundle, policy=ImportPolicy(set_aside=set_aside))
            reader = GraphReader(engine)
            yield [
                (name, Planner(reader, OfflineSynthesizer(), clock=lambda: CLOCK, **options))
                for name, options in CONFIGS
            ]
        finally:
            engine.dispose()


def _dump_set(item: tuple[str, Path, Path | None, bool]) -> list[str]:
    """The dump lines of one question set."""
    import logging

    import structlog

    from data_plane.errors import KGError
    from evals.questions import load_questions

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    name, path, bundle, set_aside = item
    lines = []
    with _planners(bundle, set_aside) as planners:
        for q in load_questions(path):
            for config, planner in planners:
                try:
                    answer: Any = planner.ask(
                        q.question, as_of=q.as_of_time, known_at=q.known_at_time, record=False
                    ).to_dict()
                except KGError as exc:
                    answer = {"refused": f"{type(exc).__name__}: {exc}"}
                row = {"set": name, "config": config, "id": q.id, "question": q.question}
                lines.append(json.dumps({**row, "answer": _digested(_stable(answer))}, sort_keys=True))
    return lines


def dump(out: Path, *, only: Sequence[str] = (), workers: int = 2) -> int:
    """Write the dump of every question set (``only``: those whose name starts so) to ``out``;
    return the number of lines."""
    sets = [s for s in question_sets() if not only or s[0].startswith(tuple(only))]
    count = 0
    with out.open("w", encoding="utf-8") as f, ProcessPoolExecutor(workers) as pool:
        for name, lines in zip((s[0] for s in sets), pool.map(_dump_set, sets), strict=True):
            f.writelines(line + "\n" for line in lines)
            count += len(lines)
            print(f"{name}: {len(lines)} answers", file=sys.stderr)
    return count


def _differing(a: Any, b: Any, at: str = "") -> list[str]:
    """The paths (``reading.intent``, ``rounds``) at which ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(a.keys() | b.keys()) for p in _differing(a.get(k), b.get(k), f"{at}{k}.")]
    return [] if a == b else [at.rstrip(".") or "(whole)"]


def compare(before: Path, after: Path, *, show: int = 20) -> int:
    """Print which questions differ (set, configuration, id) and where in the answer, never the
    question's text (a test or holdout split is compared, not read); return how many differ."""
    with before.open(encoding="utf-8") as a, after.open(encoding="utf-8") as b:
        old, new = a.read().splitlines(), b.read().splitlines()
    differing = 0
    for x, y in zip(old, new, strict=False):
        if x != y:
            differing += 1
            if differing <= show:
                rx, ry = json.loads(x), json.loads(y)
                where = ", ".join(_differing(rx["answer"], ry["answer"]))
                print(f"{rx['set']} {rx['config']} {rx['id']}: {where}")
    if len(old) != len(new):
        print(f"line counts differ: {len(old)} before, {len(new)} after")
        differing += abs(len(old) - len(new))
    print(f"{len(old)} lines compared, {differing} differ")
    return differing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.answer_dump", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the dump here")
    parser.add_argument("--only", action="append", default=[], help="sets whose file name starts so")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        return 1 if compare(*args.compare) else 0
    if args.out is None:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    print(
        f"{dump(args.out, only=args.only, workers=args.workers)} lines written to {args.out}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
