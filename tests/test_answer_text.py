"""`kg ask` in a terminal: the answer first, within one screen by default, and the grounding of
the evidence without repeating what rows share."""

from __future__ import annotations

import math
from typing import Any

import pytest
from kg_cli import ok

from control_plane.surfaces.cli.answer_text import MORE, SCREEN, answer_lines, grounding_lines, summary_lines
from control_plane.surfaces.cli.options import EvidenceShown

HEADLINE = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)


def screen_lines(text: str, columns: int) -> int:
    """The rows ``text`` takes on a terminal ``columns`` wide (a longer line wraps)."""
    return sum(max(1, math.ceil(len(line) / columns)) for line in text.splitlines())


@pytest.mark.parametrize("columns", [80, 120])
def test_the_readme_headline_fits_one_screen(initialised: str, columns: int) -> None:
    """The README's question prints at most 60 rows at 80 (and 120) columns: the answer, how it
    was read, the meta line, the cited edges and how to see their grounding."""
    out = ok(initialised, "ask", HEADLINE, env={"COLUMNS": str(columns)}).stdout
    assert screen_lines(out, columns) <= SCREEN
    assert max(len(line) for line in out.splitlines()) <= columns
    lines = out.splitlines()
    assert lines[0].startswith("Answer: Before Agent orchestration")
    assert any(line.startswith("read as: ") for line in lines) and MORE in out


def _record(reason: str, *, source: str = "team", confidence: float = 0.95) -> dict[str, Any]:
    return {"grounding": {"reason": reason, "source": source, "confidence": confidence, "evidence": {}}}


def wide_answer(edges: int, *, shared_reason: bool = False) -> dict[str, Any]:
    """An answer citing ``edges`` edges into one concept, and every concept it names."""
    ids = [f"c{i}" for i in range(edges)]
    concepts = [
        {"concept_id": cid, "name": f"Concept number {i}", **_record("Authored by the team")}
        for i, cid in enumerate([*ids, "goal"])
    ]
    rows = [
        {
            "edge_id": f"e{i}",
            "key": f"{cid}>prerequisite>goal",
            "source_id": cid,
            "target_id": "goal",
            "relation": "prerequisite",
            **_record("Shared reason" if shared_reason else f"Reason {i}"),
        }
        for i, cid in enumerate(ids)
    ]
    return {
        "answer_id": "a" * 32,
        "text": f"Before Goal a learner must master {edges} concepts.",
        "abstained": False,
        "abstain_reason": None,
        "confidence": 0.9,
        "reading": {"read_as": "everything needed before goal"},
        "synthesizer": {"name": "offline"},
        "rounds": [{"round": 1}],
        "cited_edges": [r["edge_id"] for r in rows],
        "cited_concepts": [{"id": c["concept_id"], "name": c["name"]} for c in concepts],
        "evidence": {"concepts": concepts, "edges": rows},
    }


@pytest.mark.parametrize(("edges", "shown"), [(3, "each"), (40, "each"), (100, "compact"), (2000, "cut")])
def test_the_summary_stays_within_one_screen_however_many_edges_are_cited(edges: int, shown: str) -> None:
    """Edges one a line while they fit; then a compact list (the sources of one relation into one
    target together); then cut, saying how many there are in all."""
    answer = wide_answer(edges)
    lines = answer_lines(answer, width=80, model_calls=0)
    assert screen_lines("\n".join(lines), 80) <= SCREEN and lines[-1] == MORE
    body = summary_lines(answer, 80, SCREEN - 4)[1:-1]
    if shown == "each":
        assert [line.split()[0] for line in body] == [f"e{i}" for i in range(edges)]
    else:
        assert body[0].startswith("  Concept number 0, Concept number 1, Concept number 2,")
    if shown == "compact":
        joined = " ".join(line.strip() for line in body)
        assert joined.endswith("Concept number 99 -prerequisite-> Concept number 100")
    if shown == "cut":
        assert body[-1] == f"  … and more: {edges} cited edges in all (--evidence cited)"


def test_the_grounding_says_a_shared_reason_once() -> None:
    """--evidence cited writes a reason shared by many rows once, with the rows under it, and a
    source and confidence once for all the rows that share them."""
    answer = wide_answer(30, shared_reason=True)
    lines = grounding_lines(answer, 80, everything=False)
    text = "\n".join(lines)
    assert text.count("Shared reason") == 1 and text.count("Authored by the team") == 1
    assert text.count("from team, confidence 0.95:") == 1
    assert all(f"e{i}  c{i}>prerequisite>goal" in text for i in range(30))
    assert "31 concepts: Concept number 0 (c0)" in text


def test_the_grounding_keeps_sources_and_confidences_apart() -> None:
    """Rows of another source or confidence are grouped under their own header."""
    answer = wide_answer(2)
    answer["evidence"]["edges"][1]["grounding"].update(source="other", confidence=0.5)
    text = "\n".join(grounding_lines(answer, 80, everything=True))
    assert "from team, confidence 0.95:" in text and "from other, confidence 0.50:" in text
    assert "e0 *  c0>prerequisite>goal" in text


def test_no_evidence_and_nothing_cited_are_said_in_one_line() -> None:
    """An answer with no evidence, or citing none of it, says so in one line."""
    empty = {**wide_answer(1), "evidence": {"concepts": [], "edges": []}, "cited_edges": []}
    assert answer_lines(empty, width=80, model_calls=0)[-1] == "evidence: none"
    uncited = {**wide_answer(2), "cited_edges": []}
    assert summary_lines(uncited, 80, SCREEN) == [
        "evidence: nothing cited (2 edges gathered: --evidence all)"
    ]
    none = answer_lines(wide_answer(2), width=80, model_calls=0, evidence=EvidenceShown.none)
    assert none[-2].startswith("confidence 0.90 · 1 round · no model calls") and none[-1].startswith(
        "answer "
    )


def test_an_abstention_offers_the_names_it_did_not_say_already() -> None:
    """An abstention prints its reason and reading, and the did-you-mean names when the reading
    does not carry them."""
    answer = {
        **wide_answer(1),
        "abstained": True,
        "abstain_reason": "no known concept is named",
        "did_you_mean": [{"id": "embeddings", "name": "Embeddings"}],
        "reading": {"read_as": "no known concept is named (unsure)"},
    }
    lines = answer_lines(answer, width=80, model_calls=2, evidence=EvidenceShown.none)
    assert lines[:3] == [
        "Abstained: no known concept is named",
        "read as: no known concept is named (unsure)",
        "did you mean: Embeddings (embeddings)?",
    ]
    assert "2 model calls" in lines[3]
