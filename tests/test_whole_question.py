"""Every question the reader is sure of is explained whole: over every question set, the words of a
sure reading's question that no name, no word the reader reads with (``accounting.known``), no
time, no part set aside and no background the reading reports account for are counted, and there
are none. The count is the reading's own report (its subjects' names found again in the text,
``time``, ``set_aside``, ``background``) held against the question's words, not the reader's
verdict: a reading that left a word unreported would be counted.

The sets on the maps beside the checkout (the course catalogue, LectureBank) run where the maps
are; the two large holdout files are slow tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.understanding.accounting import known
from control_plane.understanding.names import normalise
from control_plane.understanding.reading import Reading, mentions_in
from control_plane.understanding.text import Text
from data_plane import GraphReader
from data_plane.temporal import AsOf
from evals.dev_graphs import dev_graph
from evals.questions import load_questions
from evals.runner import _database

QUESTIONS = Path(__file__).resolve().parents[1] / "evals" / "questions"
ROOT = QUESTIONS.parents[1]
NOW = datetime(2027, 1, 1, tzinfo=UTC)


def _bundles() -> dict[str, tuple[Path | None, bool] | None]:
    """Each map a question set is asked of: its bundle (None: the bundled curriculum) and whether
    it imports with the set-aside policy; None when the map is not here."""
    catalogue = dev_graph("ucsd-catalogue", os.environ)
    lecturebank = dev_graph("lecturebank", os.environ)
    return {
        "curriculum": (None, False),
        "prereqmap": (ROOT / "evals" / "bundles" / "prereqmap", False),
        "musicstats": (ROOT / "evals" / "bundles" / "musicstats", False),
        "catalogue": (catalogue, False) if catalogue else None,
        "lecturebank": (lecturebank, True) if lecturebank else None,
    }


BUNDLES = _bundles()
SETS = [
    ("curriculum", "curriculum.jsonl"),
    ("curriculum", "curriculum_dev.jsonl.gz"),
    ("curriculum", "curriculum_test.jsonl.gz"),
    ("prereqmap", "prereqmap_dev.jsonl.gz"),
    ("prereqmap", "prereqmap_test.jsonl.gz"),
    ("musicstats", "musicstats_holdout.jsonl.gz"),
    ("catalogue", "catalogue_dev.jsonl.gz"),
    ("catalogue", "catalogue_test.jsonl.gz"),
    ("catalogue", "catalogue_holdout.jsonl.gz"),
    ("lecturebank", "lecturebank_dev.jsonl.gz"),
    ("lecturebank", "lecturebank_test.jsonl.gz"),
]
SLOW_SETS = [("curriculum", "curriculum_holdout.jsonl.gz"), ("prereqmap", "prereqmap_holdout.jsonl.gz")]


def unreported(question: str, reading: Reading, planner: Planner, point: AsOf) -> list[str]:
    """The words of ``question`` nothing the sure ``reading`` (read at ``point``) reports accounts
    for (module docstring)."""
    text = Text.of(question)
    index = planner.name_index(point)
    named = {i for m in mentions_in(text, index) for i in range(m.start, m.end)}
    reported = [*reading.set_aside, *reading.background, *([reading.time.words] if reading.time else [])]
    said = {w for part in reported for w in normalise(part)}
    return [w for i, w in enumerate(text.words) if i not in named and not known(w) and w not in said]


@pytest.fixture(scope="module")
def planners() -> Iterator[dict[str, Planner]]:
    """A planner over a fresh SQLite database of each map that is here."""
    with ExitStack() as stack:
        out: dict[str, Planner] = {}
        for graph, spec in BUNDLES.items():
            if spec is None:
                continue
            bundle, set_aside = spec
            engine = create_engine(stack.enter_context(_database(None, bundle, set_aside=set_aside)))
            stack.callback(engine.dispose)
            out[graph] = Planner(GraphReader(engine), OfflineSynthesizer())
        yield out


def check_set(planners: dict[str, Planner], graph: str, name: str) -> None:
    if graph not in planners:
        pytest.skip(f"no {graph} map beside the checkout (../shared/dev-graphs, or set KG_DEV_GRAPHS)")
    planner = planners[graph]
    sure = 0
    left: list[str] = []
    for q in load_questions(QUESTIONS / name):
        reading, point, _ = planner.read(q.question, AsOf(NOW, NOW), explicit=False, now=NOW)
        if not reading.sure:
            continue
        sure += 1
        words = unreported(q.question, reading, planner, point)
        if words:
            left.append(f"{q.id}: {words} in {q.question!r}")
    assert sure > 0
    assert not left, f"{len(left)} of {sure} sure readings leave words unexplained:\n" + "\n".join(left[:20])


@pytest.mark.parametrize(("graph", "name"), SETS, ids=[name for _, name in SETS])
def test_a_sure_reading_explains_every_word(planners: dict[str, Planner], graph: str, name: str) -> None:
    check_set(planners, graph, name)


@pytest.mark.slow
@pytest.mark.parametrize(("graph", "name"), SLOW_SETS, ids=[name for _, name in SLOW_SETS])
def test_a_sure_reading_explains_every_word_on_the_holdouts(
    planners: dict[str, Planner], graph: str, name: str
) -> None:
    check_set(planners, graph, name)


def test_an_unreported_word_is_counted(planners: dict[str, Planner]) -> None:
    """The count can fail: a sure reading whose background is dropped leaves its words counted."""
    planner = planners["curriculum"]
    question = "I'm a backend dev moving into AI. What comes right before RAG?"
    reading, point, _ = planner.read(question, AsOf(NOW, NOW), explicit=False, now=NOW)
    assert reading.sure and reading.background
    assert unreported(question, reading, planner, point) == []
    assert unreported(question, replace(reading, background=()), planner, point)
