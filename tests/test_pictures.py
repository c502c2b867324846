"""Evidence pictures: Mermaid, DOT and the self-contained HTML page are faithful, escaped and stable."""

from __future__ import annotations

import re
from typing import Any

from control_plane.surfaces import pictures

HOSTILE = '<script>alert("x")</script> & "quotes"'


def _item(reason: str, version_id: int) -> dict[str, Any]:
    return {
        "grounding": {"confidence": 0.9, "reason": reason, "source": "tests", "evidence": {"doc": "d"}},
        "version_id": version_id,
        "op": "assert",
        "valid_at": "2024-01-01T00:00:00Z",
        "invalid_at": None,
        "recorded_at": "2025-01-01T00:00:00Z",
        "expired_at": None,
        "supersedes_id": None,
    }


def _concept(cid: str, name: str, version_id: int) -> dict[str, Any]:
    return {
        "concept_id": cid,
        "name": name,
        "aliases": [],
        "summary": "",
        **_item(f"concept {cid}", version_id),
    }


def _edge(s: str, t: str, r: str, version_id: int) -> dict[str, Any]:
    return {
        "edge_id": f"e{version_id}",
        "key": f"{s}>{r}>{t}",
        "source_id": s,
        "target_id": t,
        "relation": r,
        **_item(f"edge {s} {r} {t}", version_id),
    }


def answer() -> dict[str, Any]:
    """A small answer: seed agent_orchestration; cited function_calling; evidence rag, bad."""
    return {
        "schema": "answer/1",
        "answer_id": "a1",
        "question": "What before agent orchestration?",
        "text": "Function calling.",
        "abstained": False,
        "abstain_reason": None,
        "confidence": 0.9,
        "cited_concepts": [{"id": "function_calling", "name": "Function calling"}],
        "cited_edges": ["e10"],
        "seeds": ["agent_orchestration"],
        "evidence": {
            "seeds": ["agent_orchestration"],
            "concepts": [
                _concept("agent_orchestration", "Agent orchestration", 1),
                _concept("function_calling", "Function calling", 2),
                _concept("rag", "RAG", 3),
                _concept("bad", HOSTILE, 4),
            ],
            "edges": [
                _edge("function_calling", "agent_orchestration", "prerequisite", 10),
                _edge("rag", "function_calling", "builds_on", 11),
                _edge("bad", "rag", "related", 12),
            ],
        },
        "as_of": {"valid_at": "2025-06-01T00:00:00Z", "recorded_at": "2025-06-01T00:00:00Z"},
        "rounds": [{"round": 1}],
        "llm_calls": 0,
    }


def test_mermaid_has_one_node_per_concept_and_one_link_per_edge() -> None:
    """The Mermaid flowchart declares every concept once and every edge with its relation label."""
    text = pictures.to_mermaid(answer())
    assert text.startswith("flowchart LR\n")
    assert len(re.findall(r'^\s+n\d+\["', text, re.M)) == 4
    assert "-->|prerequisite|" in text and "-->|builds_on|" in text and "---|related|" in text


def test_mermaid_labels_escape_quotes_and_angle_brackets() -> None:
    """Untrusted concept names cannot break out of a Mermaid label."""
    text = pictures.to_mermaid(answer())
    assert "<script>" not in text
    label_line = next(line for line in text.splitlines() if "alert" in line)
    assert label_line.count('"') == 2


def test_dot_declares_every_concept_and_directed_edge_with_tooltips() -> None:
    """The DOT digraph has a node statement per concept and an edge statement per edge, with grounding."""
    text = pictures.to_dot(answer())
    assert text.startswith("digraph evidence {")
    assert text.count(" -> ") == 3
    assert '"function_calling" -> "agent_orchestration" [label="prerequisite"' in text
    assert "reason: edge rag builds_on function_calling" in text
    assert '\\"quotes\\"' in text


def test_html_page_is_self_contained() -> None:
    """The HTML page loads nothing from elsewhere: no script, no external link or image."""
    page = pictures.to_html(answer())
    assert "<script" not in page.lower().replace("&lt;script", "")
    assert not re.search(r'(src|href)\s*=\s*"https?:', page)
    assert "<svg" in page


def test_html_escapes_untrusted_concept_text() -> None:
    """A concept named like markup is rendered as text, never as markup."""
    page = pictures.to_html(answer())
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert" in page


def test_html_svg_has_a_data_id_element_per_concept_and_edge() -> None:
    """Every concept and every edge is an SVG group carrying its id in data-id."""
    page = pictures.to_html(answer())
    for cid in ("agent_orchestration", "function_calling", "rag", "bad"):
        assert f'data-id="{cid}"' in page
    for eid in ("e10", "e11", "e12"):
        assert f'class="edge" data-id="{eid}"' in page


def test_html_draws_seed_cited_and_other_evidence_distinctly_with_a_legend() -> None:
    """Seeds, cited concepts and other evidence have different kinds and each kind is in the legend."""
    page = pictures.to_html(answer())
    assert 'data-id="agent_orchestration" data-kind="seed"' in page
    assert 'data-id="function_calling" data-kind="cited"' in page
    assert 'data-id="rag" data-kind="evidence"' in page
    for kind in ("seed", "cited", "evidence"):
        assert f'data-legend="{kind}"' in page


def test_html_titles_carry_grounding() -> None:
    """Each node and edge has an SVG title with its reason, source, evidence and times."""
    page = pictures.to_html(answer())
    titles = re.findall(r"<title>(.*?)</title>", page, re.S)
    edge_title = next(t for t in titles if "edge function_calling prerequisite" in t)
    assert "source: tests" in edge_title and "confidence: 0.9" in edge_title
    assert "valid: 2024-01-01T00:00:00Z" in edge_title and "recorded: 2025-01-01T00:00:00Z" in edge_title
    assert any("reason: concept rag" in t for t in titles)


def test_directed_edges_have_arrowheads_and_symmetric_ones_do_not() -> None:
    """Prerequisite/builds_on lines end in an arrowhead; a related line has none."""
    page = pictures.to_html(answer())
    groups = dict(re.findall(r'<g class="edge" data-id="(e\d+)".*?(<line[^>]*>)', page, re.S))
    assert "marker-end" in groups["e10"] and "marker-end" in groups["e11"]
    assert "marker-end" not in groups["e12"]


def test_layout_is_deterministic_and_layered_from_the_seeds() -> None:
    """The same evidence in another order gives the same positions; seeds sit in the first column."""
    a = answer()
    b = answer()
    b["evidence"]["concepts"].reverse()
    b["evidence"]["edges"].reverse()
    la, lb = pictures.layout(a), pictures.layout(b)
    assert la == lb
    xs = {cid: x for cid, (x, _) in la.positions.items()}
    assert xs["agent_orchestration"] < xs["function_calling"] < xs["rag"] < xs["bad"]


def test_abstention_page_shows_the_reason() -> None:
    """An abstained answer's page states the abstention and its reason."""
    a = answer()
    a.update(
        abstained=True, text="", abstain_reason="no concept matched <b>", cited_concepts=[], cited_edges=[]
    )
    page = pictures.to_html(a)
    assert "Abstained: no concept matched &lt;b&gt;" in page
