"""Evidence pictures: Mermaid, DOT and the self-contained HTML page are faithful, escaped and stable."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control_plane.surfaces import pictures
from control_plane.surfaces.pictures.scene import LARGE, Edge, Node, Scene, learning_order, stages
from data_plane.errors import KGError
from data_plane.relations import RELATIONS

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz dot is not installed (.ci/run installs it)"
)

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
    """The Mermaid flowchart declares every concept once and every edge with what it says read
    along its arrow, foundation first: function calling is built on by RAG."""
    text = pictures.to_mermaid(answer())
    assert text.startswith("flowchart LR\n")
    ids = dict((name, n) for n, name in re.findall(r'^\s+(n\d+)\["([^"]*)"\]', text, re.M))
    assert len(ids) == 4
    fc, ao, rag = ids["Function calling"], ids["Agent orchestration"], ids["RAG"]
    assert f"{fc} -->|prerequisite of| {ao}" in text and f"{fc} -->|built on by| {rag}" in text
    assert "---|related|" in text


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
    assert '"function_calling" -> "agent_orchestration" [label="prerequisite of"' in text
    assert "reason: edge rag builds_on function_calling" in text
    assert '\\"quotes\\"' in text


@needs_dot
def test_html_page_is_self_contained() -> None:
    """The HTML page loads nothing from elsewhere: no script, no external link or image."""
    page = pictures.to_html(answer())
    assert "<script" not in page.lower().replace("&lt;script", "")
    assert not re.search(r'(src|href)\s*=\s*"https?:', page)
    assert "<svg" in page


@needs_dot
def test_html_escapes_untrusted_concept_text() -> None:
    """A concept named like markup is rendered as text, never as markup."""
    page = pictures.to_html(answer())
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert" in page


@needs_dot
def test_html_svg_has_a_data_id_element_per_concept_and_edge() -> None:
    """Every concept and every edge is an SVG group carrying its id in data-id."""
    page = pictures.to_html(answer())
    for cid in ("agent_orchestration", "function_calling", "rag", "bad"):
        assert f'data-id="{cid}"' in page
    for eid in ("e10", "e11", "e12"):
        assert re.search(f'class="edge[^"]*" data-id="{eid}"', page)


@needs_dot
def test_html_draws_seed_cited_and_other_evidence_distinctly_with_a_legend() -> None:
    """Seeds, cited concepts and other evidence have different kinds and each kind is in the legend."""
    page = pictures.to_html(answer())
    assert 'data-id="agent_orchestration" data-kind="seed"' in page
    assert 'data-id="function_calling" data-kind="cited"' in page
    assert 'data-id="rag" data-kind="evidence"' in page
    for kind in ("seed", "cited", "evidence"):
        assert f'data-legend="{kind}"' in page


@needs_dot
def test_html_titles_carry_grounding() -> None:
    """Each node and edge has an SVG title with its reason, source, evidence and times."""
    page = pictures.to_html(answer())
    titles = re.findall(r"<title>(.*?)</title>", page, re.S)
    edge_title = next(t for t in titles if "edge function_calling prerequisite" in t)
    assert "source: tests" in edge_title and "confidence: 0.9" in edge_title
    assert "valid: 2024-01-01T00:00:00Z" in edge_title and "recorded: 2025-01-01T00:00:00Z" in edge_title
    assert any("reason: concept rag" in t for t in titles)


def _edge_paths(page: str) -> dict[str, str]:
    evidence = page[page.index('<svg xmlns="http://www.w3.org/2000/svg" id="evidence"') :]
    return dict(re.findall(r'<g class="edge[^"]*" data-id="(e\d+)".*?(<path[^>]*>)', evidence, re.S))


@needs_dot
def test_directed_edges_have_arrowheads_and_symmetric_ones_do_not() -> None:
    """Prerequisite and builds_on edges both carry their arrowhead at what needs the foundation
    (a builds_on arrow points from its stored target to its source, with an open head); a
    related edge has none (it is dashed)."""
    page = pictures.to_html(answer())
    paths = _edge_paths(page)
    assert 'marker-end="url(#evidence-arrow' in paths["e10"]
    assert 'marker-end="url(#evidence-open' in paths["e11"] and "marker-start" not in paths["e11"]
    assert "marker" not in paths["e12"] and "stroke-dasharray" in paths["e12"]
    lay = pictures.layout(answer())
    tip, rag, fc = lay.routes["e11"].end_tip, lay.boxes["rag"], lay.boxes["function_calling"]
    assert tip is not None and abs(tip[0] - rag.x) < abs(tip[0] - fc.x)  # the head is at RAG


@needs_dot
def test_layout_is_deterministic_and_in_learning_order() -> None:
    """The same evidence in another order gives the same positions; foundations sit left of what
    rests on them (prerequisite: source first; builds_on: target first), the asked concept right."""
    a = answer()
    b = answer()
    b["evidence"]["concepts"].reverse()
    b["evidence"]["edges"].reverse()
    la, lb = pictures.layout(a), pictures.layout(b)
    assert la == lb
    xs = {cid: x for cid, (x, _) in la.positions.items()}
    assert xs["function_calling"] < xs["agent_orchestration"]
    assert xs["function_calling"] < xs["rag"]


@needs_dot
def test_abstention_page_shows_the_reason() -> None:
    """An abstained answer's page states the abstention and its reason, and opens what was gathered."""
    a = answer()
    a.update(
        abstained=True, text="", abstain_reason="no concept matched <b>", cited_concepts=[], cited_edges=[]
    )
    page = pictures.to_html(a)
    assert "Abstained: no concept matched &lt;b&gt;" in page
    assert '<details id="all-evidence" open>' in page


def abstention() -> dict[str, Any]:
    """An abstention that gathered nothing: a name that matched no concept, with one near it."""
    a = answer()
    a.update(
        abstained=True,
        text="",
        abstain_reason="no known concept is named",
        cited_concepts=[],
        cited_edges=[],
        seeds=[],
        rounds=[],
        evidence={"seeds": [], "concepts": [], "edges": []},
        did_you_mean=[{"id": "embeddings", "name": "Embeddings <b>"}],
        reading={
            "read_as": "the question names 'embedings', which is not a concept in this graph",
            "suggestions": ["What does Embeddings build on?", "What is <i>Embeddings</i>?"],
        },
    )
    return a


def test_an_abstention_page_says_how_it_read_what_was_meant_and_what_to_ask() -> None:
    """The page of an abstention shows the reading, the did-you-mean and the phrasings to try
    (escaped), and no section with nothing in it: no legend, no picture, no empty grounding table."""
    page = pictures.to_html(abstention(), dot="no-such-dot-needed")
    assert "Read as: the question names &#x27;embedings&#x27;" in page
    assert 'Did you mean <b data-id="embeddings">Embeddings &lt;b&gt;</b>' in page
    assert "<li>What does Embeddings build on?</li>" in page and "&lt;i&gt;Embeddings&lt;/i&gt;" in page
    assert 'class="legend"' not in page and "<svg" not in page and "What the answer rests on" not in page
    assert "Grounding of" not in page and "cites no concept" not in page and "<section" not in page


def test_an_answer_page_says_how_the_question_was_read() -> None:
    """Answered or not, the page says how the question was read (when the answer carries it)."""
    a = answer()
    a["reading"] = {"read_as": "everything needed before agent orchestration"}
    assert "Read as: everything needed before agent orchestration" in pictures.to_html(a, dot="no-dot")


@pytest.mark.parametrize("render", [pictures.to_mermaid, pictures.to_dot])
def test_mermaid_and_dot_of_an_abstention_carry_its_help(render: Any) -> None:
    """Mermaid and DOT of an abstention show why, the reading, the did-you-mean and the phrasings."""
    text = render(abstention())
    for words in ("no known concept is named", "embedings", "(embeddings)", "What does Embeddings build on?"):
        assert words in text


def test_the_mermaid_note_of_an_abstention_is_escaped() -> None:
    """Text in the note cannot reach Mermaid's renderer as markup (only its own line breaks do)."""
    text = pictures.to_mermaid(abstention())
    assert "<b>" not in text and "<i>" not in text and text.count("<br>") == 3


def test_mermaid_and_dot_of_an_answer_carry_no_note() -> None:
    """An answer's Mermaid and DOT are the evidence alone."""
    assert "abstained" not in pictures.to_mermaid(answer()) and 'label="Abstained' not in pictures.to_dot(
        answer()
    )


# ---------------------------------------------------------------------------------------------
# Emphasis, grounding tables, lessons, fallback, large pictures


def test_dot_and_mermaid_carry_the_cited_emphasis() -> None:
    """DOT draws the cited edge thick and dark and the rest grey; Mermaid styles links the same way."""
    dot = pictures.to_dot(answer())
    cited = next(line for line in dot.splitlines() if '"function_calling" -> "agent_orchestration"' in line)
    other = next(line for line in dot.splitlines() if "built on by" in line and " -> " in line)
    assert "penwidth=2.5" in cited and "penwidth=1," in other and 'color="#9ca3af"' in other
    mermaid = pictures.to_mermaid(answer())
    styles = re.findall(r"^\s+linkStyle (\d+) (.*)$", mermaid, re.M)
    assert len(styles) == 3
    assert sum("stroke-width:3px" in style for _, style in styles) == 1
    assert re.search(r"classDef evidence .*color:#6b7280", mermaid)


def test_dot_ranks_foundations_first() -> None:
    """In DOT a builds_on edge is written from its foundation (the target) to what builds on it,
    labelled "built on by", so dot ranks the foundation left and the arrow points the way every
    learning-order arrow points."""
    dot = pictures.to_dot(answer())
    assert '"function_calling" -> "rag" [label="built on by"' in dot and "dir=back" not in dot


@needs_dot
def test_main_picture_holds_only_the_cited_subgraph_and_the_rest_is_behind_a_toggle() -> None:
    """The first picture has the seeds, cited concepts and cited edges; everything else is in the
    all-evidence picture inside a closed <details>, drawn faded."""
    page = pictures.to_html(answer())
    main = page[page.index('id="cited"') : page.index("</svg>")]
    assert 'data-id="e10"' in main and 'data-id="e11"' not in main and 'data-id="rag"' not in main
    details = page[page.index('<details id="all-evidence">') : page.index("</details>")]
    assert 'class="edge faded" data-id="e11"' in details
    assert 'class="node evidence faded" data-id="rag"' in details
    assert "All gathered evidence: 4 concepts and 3 edges (2 edges not cited, faded)" in details


@needs_dot
def test_grounding_table_lists_every_cited_edge_with_its_grounding() -> None:
    """Below the pictures, each cited edge has a row with confidence, reason, source, evidence and
    validity, readable without hovering."""
    page = pictures.to_html(answer())
    rows = dict(re.findall(r'<tr data-edge="(e\d+)">(.*?)</tr>', page, re.S))
    assert list(rows) == ["e10"]
    row = rows["e10"]
    for cell in (
        '<td class="confidence">0.9</td>',
        '<td class="reason">edge function_calling prerequisite agent_orchestration</td>',
        '<td class="source">tests</td>',
        "{&quot;doc&quot;: &quot;d&quot;}",
        "2024-01-01T00:00:00Z .. open",
        "2025-01-01T00:00:00Z .. current",
    ):
        assert cell in row
    concepts = re.findall(r'<tr data-concept="([^"]+)">', page)
    assert concepts == ["agent_orchestration", "function_calling"]


@needs_dot
def test_table_escapes_untrusted_grounding() -> None:
    """A reason written like markup is printed as text in the table."""
    a = answer()
    a["evidence"]["edges"][0]["grounding"]["reason"] = HOSTILE
    page = pictures.to_html(a)
    assert "<script>alert" not in page and '<td class="reason">&lt;script&gt;alert' in page


@needs_dot
def test_lessons_the_answer_names_are_listed_with_links() -> None:
    """With ``cited_lessons``, the page lists each lesson with the concepts it covers, its grounding
    and a link when it has an http(s) address; a script address is never linked."""
    a = answer()
    a["cited_lessons"] = [
        {"lesson_id": "L1", "title": "Tools", "url": "https://example.org/l1"},
        "L2",
        {"id": "L3", "title": "Bad", "url": "javascript:alert(1)"},
    ]
    a["evidence"]["lesson_links"] = [
        {
            "lesson_id": "L2",
            "title": "Orchestration",
            "concept_id": "agent_orchestration",
            **_item("covers it", 40),
        }
    ]
    page = pictures.to_html(a)
    lessons = dict(re.findall(r'<tr data-lesson="(L\d)">(.*?)</tr>', page, re.S))
    assert list(lessons) == ["L1", "L2", "L3"]
    assert '<a href="https://example.org/l1">Tools</a>' in lessons["L1"]
    assert "Agent orchestration" in lessons["L2"] and '<td class="reason">covers it</td>' in lessons["L2"]
    assert "javascript:" not in page
    assert "Lessons the answer names" not in pictures.to_html(answer())


def test_page_without_graphviz_is_laid_out_in_python_and_says_so(tmp_path: Path) -> None:
    """Where dot is not on PATH the page still has its pictures, laid out by the pure-Python
    layered layout, says so under the picture, and keeps the grounding tables."""
    page = pictures.to_html(answer(), dot=str(tmp_path / "no-such-dot"))
    assert "<svg" in page and "No picture" not in page
    assert "Laid out without Graphviz" in page
    assert '<tr data-edge="e10">' in page and page.rstrip().endswith("</html>")
    for item in ("agent_orchestration", "function_calling", "rag", "bad", "e10", "e11", "e12"):
        assert f'data-id="{item}"' in page


def _boxes_overlap(a: Any, b: Any) -> bool:
    return abs(a.x - b.x) * 2 < a.w + b.w and abs(a.y - b.y) * 2 < a.h + b.h


@pytest.mark.parametrize("n", [5, 30])
def test_the_python_layout_keeps_learning_order_and_boxes_apart(tmp_path: Path, n: int) -> None:
    """Without dot: every concept has a box, no two boxes overlap, every directed edge runs from
    its foundation's box to its dependent's with the arrow tip at the dependent, learning order
    runs left to right, and the same evidence in another order gives the same layout."""
    a = _chain(n)
    a["evidence"]["edges"].append(_edge(a["evidence"]["concepts"][0]["concept_id"], "k001", "related", 900))
    missing = str(tmp_path / "no-such-dot")
    lay = pictures.layout(a, dot=missing)
    assert lay.engine == "grandalf" and set(lay.boxes) == {c["concept_id"] for c in a["evidence"]["concepts"]}
    boxes = list(lay.boxes.values())
    assert not [
        (i, j) for i, p in enumerate(boxes) for j, q in enumerate(boxes) if i < j and _boxes_overlap(p, q)
    ]
    for e in a["evidence"]["edges"]:
        order = learning_order(e["source_id"], e["target_id"], e["relation"])
        route = lay.routes[e["edge_id"]]
        if order is None:
            assert route.end_tip is None and route.start_tip is None
            continue
        first, then = lay.boxes[order[0]], lay.boxes[order[1]]
        assert first.x < then.x
        assert route.end_tip is not None and abs(route.end_tip[0] - (then.x - then.w / 2)) < 1.0
    b = _chain(n)
    b["evidence"]["edges"].append(_edge(b["evidence"]["concepts"][0]["concept_id"], "k001", "related", 900))
    b["evidence"]["concepts"].reverse()
    b["evidence"]["edges"].reverse()
    assert pictures.layout(b, dot=missing) == lay


def test_page_when_graphviz_fails_says_so(tmp_path: Path) -> None:
    """A dot that exits with an error gives the same whole page with the error in the note."""
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'syntax error in line 1' >&2\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    page = pictures.to_html(answer(), dot=str(fake))
    assert "No picture: Graphviz dot failed (exit 3): syntax error in line 1" in page
    with pytest.raises(pictures.LayoutUnavailable) as info:
        pictures.layout(answer(), dot=str(fake))
    assert isinstance(info.value, KGError) and "exit 3" in info.value.reason


def _chain(n: int) -> dict[str, Any]:
    a = answer()
    ids = [f"k{i:03d}" for i in range(n)]
    a["evidence"]["concepts"] = [_concept(c, f"Concept {c}", i + 1) for i, c in enumerate(ids)]
    a["evidence"]["edges"] = [
        _edge(ids[i], ids[i + 1], "prerequisite", 100 + i)
        if i % 2
        else _edge(ids[i + 1], ids[i], "builds_on", 100 + i)
        for i in range(n - 1)
    ]
    a["seeds"] = a["evidence"]["seeds"] = [ids[-1]]
    a["cited_concepts"] = [{"id": c, "name": c} for c in ids[:-1]]
    a["cited_edges"] = [e["edge_id"] for e in a["evidence"]["edges"]]
    return a


@needs_dot
def test_large_pictures_collapse_by_stage() -> None:
    """More than LARGE concepts: one card per learning stage, in order, and each stage's picture
    behind its own toggle; a small picture is drawn whole."""
    n = LARGE + 5
    page = pictures.to_html(_chain(n))
    cards = re.findall(r'<li class="stage-card" data-stage="(\d+)">', page)
    assert cards == [str(k) for k in range(1, n + 1)]
    assert page.count('<details class="stage"') == n
    assert 'id="cited-stage1"' in page and 'id="cited"' not in page
    stage3 = page[page.index('id="cited-stage3"') :]
    stage3 = stage3[: stage3.index("</svg>")]
    assert re.search(
        r'class="node cited faded" data-id="k001".*?<tspan[^>]*>\(stage 2\)</tspan>', stage3, re.S
    )
    small = pictures.to_html(_chain(LARGE))
    assert 'class="stage-card"' not in small and 'id="cited"' in small


@needs_dot
def test_deep_chain_is_laid_out_left_to_right() -> None:
    """A chain of alternating prerequisite and builds_on edges runs left to right in learning order."""
    lay = pictures.layout(_chain(8))
    xs = [lay.positions[f"k{i:03d}"][0] for i in range(8)]
    assert xs == sorted(xs) and len(set(xs)) == 8


@needs_dot
def test_a_picture_too_wide_for_the_page_is_laid_out_top_to_bottom_and_says_so() -> None:
    """A 30-step chain is far wider than a 1280 px page left to right: it is laid out top to bottom
    (within the page's width), its caption says which way learning order runs, and the page
    scales, never scrolls, whatever is still too wide."""
    from control_plane.surfaces.pictures.graphviz import FIT_PX, layout_scene
    from control_plane.surfaces.pictures.scene import cited_scene

    wide = cited_scene(_chain(30))
    across, fitted = layout_scene(wide), layout_scene(wide, fit=FIT_PX)
    assert across.width > FIT_PX and (fitted.rankdir, fitted.width <= FIT_PX) == ("TB", True)
    page = pictures.to_html(_chain(30))
    assert 'data-rankdir="TB"' in page and "Learning order runs top to bottom" in page
    assert "svg.picture{max-width:100%;height:auto}" in page and "overflow-x:auto" not in page
    small = pictures.to_html(answer())
    assert 'id="cited"' in small and "Learning order runs left to right" in small


@st.composite
def _scenes(draw: st.DrawFn) -> Scene:
    n = draw(st.integers(1, 12))
    ids = [f"n{i}" for i in range(n)]
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(RELATIONS)), max_size=30
        )
    )
    nodes = tuple(Node(c, (c,), "cited", False, c) for c in ids)
    edges = tuple(
        Edge(f"e{i}", ids[a], ids[b], r, r, True, False, "") for i, (a, b, r) in enumerate(pairs) if a != b
    )
    return Scene("s", nodes, edges)


@given(_scenes())
def test_stages_follow_learning_order(scene: Scene) -> None:
    """Every concept gets a stage; stage 0 has no foundation; a concept in stage k > 0 has a foundation in
    stage k - 1; and in an acyclic scene every foundation's stage is lower than its dependent's."""
    stage = stages(scene)
    assert set(stage) == {n.id for n in scene.nodes}
    pairs = {o for e in scene.edges if (o := learning_order(e.source, e.target, e.relation))}
    for node, k in stage.items():
        below = [stage[f] for f, d in pairs if d == node]
        if k > 0:
            assert k - 1 in below
    acyclic = all(not _reaches(pairs, d, f) for f, d in pairs)
    if acyclic:
        assert all(stage[f] < stage[d] for f, d in pairs)


def _reaches(pairs: set[tuple[str, str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        cur = todo.pop()
        if cur == goal:
            return True
        for f, d in pairs:
            if f == cur and d not in seen:
                seen.add(d)
                todo.append(d)
    return False


@needs_dot
@settings(max_examples=20, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_any_text_is_escaped_everywhere(name: str, reason: str) -> None:
    """Whatever a concept's name or an edge's reason holds, no tag of it reaches the page raw."""
    a = answer()
    a["evidence"]["concepts"][1]["name"] = name + "<x-injected a='1'>"
    a["evidence"]["edges"][0]["grounding"]["reason"] = reason + '"><x-injected>'
    page = pictures.to_html(a)
    assert "<x-injected" not in page
    assert page.count("&lt;x-injected") >= 3


@needs_dot
def test_dot_output_is_valid_graphviz() -> None:
    """Graphviz itself accepts the DOT text (hostile names included) and draws every edge."""
    proc = subprocess.run(
        ["dot", "-Tsvg"], input=pictures.to_dot(answer()), capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('class="edge"') == 3 and "&lt;script&gt;" in proc.stdout


def test_an_offline_answer_recorded_before_syntheses_reads_as_no_model_calls() -> None:
    """Answers recorded before `syntheses` existed counted each offline synthesis in `llm_calls`:
    their page says no model calls; a model's recorded calls are still counted."""
    from control_plane.planning.answer import model_calls, syntheses

    old = {**answer(), "llm_calls": 1, "synthesizer": {"name": "offline"}, "rounds": [{"decision": "answer"}]}
    assert (model_calls(old), syntheses(old)) == (0, 1)
    assert "no model calls" in pictures.to_html(old, dot="no-dot")
    by_model = {**old, "llm_calls": 2, "synthesizer": {"name": "deepseek"}}
    assert model_calls(by_model) == 2 and "2 model calls" in pictures.to_html(by_model, dot="no-dot")
    new = {**old, "llm_calls": 0, "syntheses": 1}
    assert (model_calls(new), syntheses(new)) == (0, 1)
