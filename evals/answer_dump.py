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

``--compare`` matches the two dumps by (set, configuration, id) and prints every question that
differs (set, configuration, id, how: answered/abstained either way, or where in the answer), a
count per set and configuration, and the questions only one dump has; never a question's text
(a test or holdout split is compared, not read); it exits 1 if any differs. The course catalogue's
sets run where ``../shared/dev-graphs/ucsd-catalogue`` is, the catalogue-with-groups sets on the
bundle ``evals.catalogue_groups`` converts from it.
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
    shared = dev_graphs_folder({})
    lecturebank = shared / "lecturebank"
    if (lecturebank / "manifest.json").is_file():
        for split in ("dev", "test"):
            path = QUESTIONS / f"lecturebank_{split}.jsonl.gz"
            found.append((path.name, path, lecturebank, True))
    catalogue = shared / "ucsd-catalogue"
    if (catalogue / "manifest.json").is_file():
        for split in ("dev", "test", "holdout"):
            path = QUESTIONS / f"catalogue_{split}.jsonl.gz"
            found.append((path.name, path, catalogue, False))
        for split in ("dev", "test"):
            path = QUESTIONS / f"catalogue_groups_{split}.jsonl.gz"
            found.append((path.name, path, GROUPS, False))
    return found


# Stands for the catalogue with its requirement groups, converted when a set asks for it.
GROUPS: Final = Path("<ucsd-catalogue with groups>")


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
        if bundle == GROUPS:
            from evals.catalogue_groups import convert

            bundle = Path(tmp) / "groups"
            convert(dev_graphs_folder({}) / "ucsd-catalogue", bundle)
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


def _keyed(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {(r["set"], r["config"], r["id"]): r for r in rows}


def _how(a: dict[str, Any], b: dict[str, Any]) -> str:
    """How an answer changed: answered/abstained either way, else where it differs."""
    was, now = a.get("abstained"), b.get("abstained")
    if was is not None and now is not None and was != now:
        return "answered -> abstained" if now else "abstained -> answered"
    return ", ".join(_differing(a, b))


def compare(before: Path, after: Path, *, show: int | None = None) -> int:
    """Print every question that differs (set, configuration, id, how; at most ``show`` of them
    when given), a count per set and configuration, and the questions one dump lacks; never a
    question's text (a test or holdout split is compared, not read). Returns how many differ."""
    old, new = _keyed(before), _keyed(after)
    differing = 0
    per: dict[tuple[str, str], dict[str, int]] = {}
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key]["answer"], new[key]["answer"]
        if a == b:
            continue
        differing += 1
        how = _how(a, b)
        kind = how if "->" in how else "changed"
        counts = per.setdefault(key[:2], {})
        counts[kind] = counts.get(kind, 0) + 1
        if show is None or differing <= show:
            print(f"{key[0]} {key[1]} {key[2]}: {how}")
    for key in sorted(old.keys() ^ new.keys()):
        differing += 1
        print(f"{key[0]} {key[1]} {key[2]}: only {'before' if key in old else 'after'}")
    for (name, config), counts in sorted(per.items()):
        print(f"  {name} {config}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    print(f"{len(old.keys() | new.keys())} answers compared, {differing} differ")
    return differing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.answer_dump", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the dump here")
    parser.add_argument("--only", action="append", default=[], help="sets whose file name starts so")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--show", type=int, default=None, help="print at most this many differing answers")
    args = parser.parse_args(argv)
    if args.compare:
        return 1 if compare(*args.compare, show=args.show) else 0
    if args.out is None:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    print(
        f"{dump(args.out, only=args.only, workers=args.workers)} lines written to {args.out}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
