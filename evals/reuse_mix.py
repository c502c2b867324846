"""Answer reuse on a realistic mix: many learners asking the same questions, with curation between.

``python -m evals.reuse_mix [--db URL] [--questions 30] [--repeats 20] [--seed 7] [--out DIR]``

The bundled curriculum (a fresh temporary SQLite file unless ``--db``), ``--questions`` answerable
questions of ``evals/questions/curriculum.jsonl`` (every third one, so every kind is there), each
asked ``--repeats`` times in a shuffled order through ``Planner.reply`` (the path ``/ask`` and
``kg ask`` take), with one curation change halfway: GraphRAG is added as a concept that builds on
RAG, a new edge into every neighbourhood that reads RAG. The synthesizer is the offline one behind
a counter, so "model calls" are the synthesis calls actually made.

The stale check: every reused answer is compared with a fresh run as of the reused answer's own
point (its substance, ``planning.reuse.substance``: everything but the answer's id, times, words of
the question and usage); any difference is a stale answer. The issue's target: model calls at most
2 x questions x (rounds per question), with 0 stale answers.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import structlog

from control_plane.planning.loop import Planner
from control_plane.planning.reuse import ReusedAnswer, substance
from control_plane.surfaces.runtime import ensure_initialised
from control_plane.synthesizers.base import Draft, SynthesisRequest, SynthesizerInfo
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader, Grounding, WriteGateway, connect, parse_time
from data_plane.reuse import AnswerIndex
from evals.questions import load_questions

__all__ = ["MixReport", "main", "run_mix"]

QUESTIONS = Path(__file__).parent / "questions" / "curriculum.jsonl"


class Counting:
    """The offline synthesizer, counting its calls (the "model calls" of the mix)."""

    def __init__(self) -> None:
        self._inner = OfflineSynthesizer()
        self.calls = 0

    @property
    def info(self) -> SynthesizerInfo:
        return self._inner.info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        self.calls += 1
        return self._inner.synthesize(request)


@dataclass(frozen=True)
class MixReport:
    questions: int
    repeats: int
    asks: int
    model_calls: int
    model_calls_without_reuse: int
    rounds_per_question: float
    target: float
    reused: int
    asked_afresh: int
    stale: int
    afresh_after_change: int
    seconds: float

    @property
    def met(self) -> bool:
        return self.model_calls <= self.target and self.stale == 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "met": self.met}


def pick_questions(n: int) -> list[str]:
    """``n`` answerable questions without explicit times, every third one of the curriculum set."""
    usable = [
        q.question for q in load_questions(QUESTIONS) if not q.abstain and not q.as_of and not q.known_at
    ]
    picked = usable[::3][:n]
    if len(picked) < n:
        picked += [q for q in usable if q not in picked][: n - len(picked)]
    return picked


def curate(gateway: WriteGateway) -> None:
    """The change made halfway: GraphRAG, which builds on RAG."""
    g = Grounding(0.9, "Added for the 2026 retrieval unit", "evals:reuse_mix", {"doc": "syllabus-2026.pdf"})
    gateway.assert_concept(
        "graph_rag", name="GraphRAG", summary="Retrieval over a knowledge graph.", grounding=g
    )
    gateway.assert_edge("graph_rag", "rag", "builds_on", grounding=g)


def run_mix(url: str, *, questions: int = 30, repeats: int = 20, seed: int = 7) -> MixReport:
    """Run the mix on the database at ``url`` (initialised here) and check every reused answer."""
    ensure_initialised(url)
    engine = connect(url)
    try:
        reader, gateway = GraphReader(engine), WriteGateway(engine)
        counted = Counting()
        planner = Planner(reader, counted, gateway=gateway, reuse=AnswerIndex(reader))
        checker = Planner(reader, OfflineSynthesizer())  # fresh runs for the stale check, not counted
        asked = pick_questions(questions)
        mix = [q for q in asked for _ in range(repeats)]
        random.Random(seed).shuffle(mix)
        started = time.perf_counter()
        rounds: dict[str, int] = {}
        reused = stale = afresh_after = without = 0
        for i, question in enumerate(mix):
            if i == len(mix) // 2:
                curate(gateway)
            answer = planner.reply(question)
            body = answer.to_dict()
            if isinstance(answer, ReusedAnswer):
                reused += 1
                point = body["as_of"]
                fresh = checker.ask(
                    question,
                    as_of=parse_time(point["valid_at"]),
                    known_at=parse_time(point["recorded_at"]),
                    record=False,
                )
                without += fresh.syntheses
                stale += substance(fresh.to_dict()) != substance(body)
            else:
                rounds.setdefault(question, len(body["rounds"]))
                without += int(body["syntheses"])
                afresh_after += i >= len(mix) // 2
        per_question = sum(rounds.values()) / max(1, len(rounds))
        return MixReport(
            questions=len(asked),
            repeats=repeats,
            asks=len(mix),
            model_calls=counted.calls,
            model_calls_without_reuse=without,
            rounds_per_question=round(per_question, 3),
            target=round(2 * len(asked) * per_question, 3),
            reused=reused,
            asked_afresh=len(mix) - reused,
            stale=stale,
            afresh_after_change=afresh_after,
            seconds=round(time.perf_counter() - started, 2),
        )
    finally:
        engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.reuse_mix", description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database URL (default: a fresh temporary SQLite file)")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, help="write reuse-mix.json into this folder")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with tempfile.TemporaryDirectory(prefix="kg-reuse-") as tmp:
        url = args.db or f"sqlite:///{tmp}/kg.sqlite3"
        report = run_mix(url, questions=args.questions, repeats=args.repeats, seed=args.seed)
    text = json.dumps(report.to_dict(), indent=2)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "reuse-mix.json").write_text(text + "\n", encoding="utf-8")
    return 0 if report.met else 1


if __name__ == "__main__":
    sys.exit(main())
