"""One parse: the reader tokenises a question once, and every rule reads that one ``Text``.

Counted, not assumed: a profile hook counts the calls of ``data_plane.names.tokenize`` and of
``normalise`` (its words alone) on the question's own text while the planner reads it (names, time words, the grammar's sentences,
cues and roles, each reading tried for a name that is also a word). A rule that tokenised the
raw question again would be counted here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import pytest

from control_plane.planning.loop import Planner
from control_plane.surfaces.runtime import Runtime
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader
from data_plane import names as data_names
from evals.questions import load_questions
from evals.runner import default_questions

NOW = datetime(2026, 1, 1, tzinfo=UTC)
# Forms the curriculum questions may not all have: time words, several sentences, an aside, a
# list, a slip in a name, reported speech, a two-part request.
EXTRA = (
    "What did RAG build on as of March 2025?",
    "Backend dev here, pivoting into ML. For RAG, what are the prerequisites?",
    "I know embeddings and tokenization. What should I learn next?",
    "What must I learn before retrieval augmented genration?",
    "My tutor said embeddings come before RAG. Is that right?",
    "Which lessons cover RAG, and what does agent memory build on?",
)


def _tokenised(question: str, read: Callable[[], Any]) -> int:
    """How often ``question`` itself was tokenised (``tokenize``, ``normalise``) while ``read`` ran."""
    codes = (data_names.tokenize.__code__, data_names.normalise.__wrapped__.__code__)
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" and frame.f_code in codes and frame.f_locals.get("text") == question:
            count += 1

    data_names.normalise.cache_clear()  # a memoised normalise(question) would hide a tokenisation
    sys.setprofile(profile)
    try:
        read()
    finally:
        sys.setprofile(None)
    return count


def _questions() -> Iterator[str]:
    yield from (q.question for q in load_questions(default_questions()))
    yield from EXTRA


@pytest.fixture
def planner(curriculum_runtime: Runtime) -> Planner:
    return Planner(GraphReader(curriculum_runtime.engine), OfflineSynthesizer(), clock=lambda: NOW)


def test_every_question_is_tokenised_once_however_many_rules_read_it(planner: Planner) -> None:
    point = planner.reader.as_of(NOW, NOW)
    counts = {
        q: _tokenised(q, lambda q=q: planner.read(q, point, explicit=False, now=NOW))  # type: ignore[misc]
        for q in _questions()
    }
    assert len(counts) > 90
    assert {q: n for q, n in counts.items() if n != 1} == {}


def test_the_count_sees_a_second_tokenisation(planner: Planner) -> None:
    """The hook itself: reading a question and then normalising it counts two."""
    q = "What does RAG build on?"
    point = planner.reader.as_of(NOW, NOW)

    def twice() -> None:
        planner.read(q, point, explicit=False, now=NOW)
        data_names.normalise(q)

    assert _tokenised(q, twice) == 2
