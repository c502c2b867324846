"""What the MCP server offers besides tools, where MCP's conventions put it: the graph's schema as a
resource an agent reads before it calls a tool (``kg://schema``: the relation types and their
directions, the four time stamps, the key formats, the answer contract), and prompts a person
picks in a client (a study plan that takes what the learner already knows, an answer that keeps
to its evidence).

The schema is built from the definitions the data plane itself uses (``data_plane.relations``),
so it cannot drift from them; it holds no graph data, so reading it needs no token.
"""

from __future__ import annotations

import json
from typing import Any, Final

from data_plane.relations import PHRASES, RELATIONS, SYMMETRIC

__all__ = ["SCHEMA_URI", "explain_with_evidence", "schema", "schema_text", "study_plan"]

SCHEMA_URI: Final = "kg://schema"
_DIRECTION: Final = {
    "prerequisite": "the source must be mastered before the target",
    "builds_on": "the source builds on the target (the target is the foundation)",
    "part_of": "the source is a part or component of the target",
    "related": "symmetric: stored once, the smaller id as source",
    "contrasts_with": "symmetric: stored once, the smaller id as source",
}


def schema() -> dict[str, Any]:
    """The graph's schema (module docstring) as JSON data."""
    return {
        "graph": "a bi-temporal curriculum knowledge graph: concepts, edges between them, lessons "
        "that teach them; every version grounded (reason, evidence, source, confidence); nothing "
        "deleted, only revised or invalidated",
        "relations": [
            {
                "name": r,
                "reads": f"source {PHRASES[r]} target",
                "direction": _DIRECTION[r],
                "symmetric": r in SYMMETRIC,
            }
            for r in RELATIONS
        ],
        "needed_before": "what is needed before X: prerequisite edges into X and builds_on edges out "
        "of X, transitively",
        "times": {
            "valid_at / invalid_at": "when a version is true in the curriculum (valid time; as_of)",
            "recorded_at / expired_at": "when the system knew it (recorded time; known_at)",
            "format": "ISO 8601 in UTC; arguments take a date (midnight UTC) or a datetime with a zone",
        },
        "keys": {
            "concept": "its id, e.g. rag",
            "edge": "source>relation>target, e.g. rag>builds_on>embeddings",
        },
        "answer": "answer/1: the object the ask tool returns and recorded_answers lists",
    }


def schema_text() -> str:
    """:func:`schema` as the resource's JSON text."""
    return json.dumps(schema(), indent=2)


def study_plan(
    target: str,
    known: str = "",
) -> str:
    """A study plan for the learner: what is left to learn before TARGET, leaving out what they
    already know (KNOWN, names separated by commas), in learning order, from the graph."""
    knows = f"I already know {known.strip()}. " if known.strip() else ""
    return (
        f"Call the ask tool with the question: {knows}What must I learn before {target.strip()}?\n"
        "Then give the plan in the order the answer gives it, naming for each step the edge it "
        "rests on from the answer's evidence. If the answer abstained, say why (abstain_reason) "
        "and suggest the concepts it may have meant (reading.did_you_mean, or search_concepts)."
    )


def explain_with_evidence(question: str) -> str:
    """An answer to QUESTION that keeps to the graph's evidence and cites it."""
    return (
        f"Call the ask tool with the question: {question.strip()}\n"
        "Answer from its result only: cite every claim with the edge it rests on "
        "(source -relation-> target, with its reason and source from the evidence), say how "
        "confident the answer is, and if it abstained, say why instead of answering yourself."
    )
