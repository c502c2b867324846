"""A model that lies gets nothing through: with a stand-in DeepSeek that answers from the prompt
alone (``evals.liar``: networkx over the prompt's evidence) and tells one kind of lie per run (a
flipped yes/no, half a set called complete, a wrong count, a path with a gap or the wrong edge, a
step reversed, an invented id, a lesson of another concept, complete over an incomplete walk),
over the bundled curriculum on both engines, no wrong answer is emitted that the offline
synthesizer does not also give, an honest model is answered wherever the offline one is, and a
lie costs at most two model calls a question on average."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from data_plane import WriteGateway, connect
from data_plane.bundle import import_bundle
from evals.liar import LIES, score_modes
from evals.questions import Question, load_questions, select

ROOT = Path(__file__).resolve().parent.parent
CURRICULUM = ROOT / "data_plane" / "curriculum"
QUESTIONS = ROOT / "evals" / "questions"


def _sample(per_type: int) -> list[Question]:
    """The first ``per_type`` questions of every type: the curriculum set (sets, paths, combined,
    temporal, unanswerable) and the question forms of the dev split (check, count, why, order,
    relate, next, what is left, shared)."""
    picked: list[Question] = []
    for q in [
        *load_questions(QUESTIONS / "curriculum.jsonl"),
        *select(load_questions(QUESTIONS / "curriculum_dev.jsonl.gz"), corpus="forms"),
    ]:
        if sum(p.type == q.type for p in picked) < per_type:
            picked.append(q)
    return picked


@pytest.fixture
def curriculum_url(database_url: str) -> Iterator[str]:
    engine = connect(database_url)
    try:
        import_bundle(WriteGateway(engine), CURRICULUM)
    finally:
        engine.dispose()
    yield database_url


def _check(rows: list[dict[str, object]]) -> None:
    by = {(r["mode"], r["system"]): r for r in rows}
    for (mode, system), row in by.items():
        assert row["new_wrong"] == [], (mode, system, row["new_wrong"])
        if mode == "offline":
            continue
        assert float(str(row["calls_per_question"])) <= 2.0, (mode, system, row)
    offline, honest = by["offline", "loop"], by["honest", "loop"]
    answered = set(offline["answered"]) & set(honest["answered"])  # type: ignore[call-overload]
    assert len(answered) >= 0.95 * len(offline["answered"]), (offline["answered"], honest["answered"])  # type: ignore[arg-type]
    assert honest["wrong"] == offline["wrong"]
    told = sum(int(str(r["lies"])) for r in rows if r["mode"] not in ("offline", "honest"))
    assert told > 0


def test_no_lie_gets_through_on_either_engine(curriculum_url: str) -> None:
    """Two questions of every type, every kind of lie, the walking loop: nothing wrong is emitted
    that the offline synthesizer does not emit too, and each lie costs at most two calls."""
    _check(score_modes(_sample(2), curriculum_url, ("honest", *LIES), systems=("loop",)))


@pytest.mark.slow
def test_no_lie_gets_through_on_the_whole_sample_with_either_loop(curriculum_url: str) -> None:
    """Six questions of every type, every kind of lie, both loops (one hop a round meets drafts
    over incomplete evidence)."""
    _check(score_modes(_sample(6), curriculum_url, ("honest", *LIES)))
