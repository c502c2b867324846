"""Mermaid and Graphviz DOT text of the evidence: their own engines lay them out, with the same
emphasis as the page (cited edges thick and dark, other evidence grey) and the same arrows: every
directed edge runs from its foundation to what needs it, labelled with what it says read that way
(``scene.ARROW_WORDS``: "Embeddings -built on by-> RAG"), so foundations rank first."""

from __future__ import annotations

from control_plane.surfaces.pictures.palette import CITED_EDGE, FADED_EDGE, FADED_TEXT, STYLES
from control_plane.surfaces.pictures.scene import (
    ARROW_WORDS,
    Answer,
    Edge,
    abstention,
    evidence_scene,
    learning_order,
)

__all__ = ["to_dot", "to_mermaid"]


def _mermaid_text(text: str) -> str:
    # Inside a quoted Mermaid label, entities are written #name; — quotes and angle brackets must
    # not reach the renderer raw.
    return (
        text.replace("#", "#35;")
        .replace('"', "#quot;")
        .replace("<", "#lt;")
        .replace(">", "#gt;")
        .replace("\n", " ")
    )


def _ends(e: Edge) -> tuple[str, str, bool]:
    """(tail, head, directed) of an edge as drawn: foundation first."""
    order = learning_order(e.source, e.target, e.relation)
    return (e.source, e.target, False) if order is None else (*order, True)


def _words(e: Edge) -> str:
    return ARROW_WORDS.get(e.relation, e.relation)


def to_mermaid(answer: Answer) -> str:
    """A Mermaid ``flowchart`` of the evidence; node ids are ``n0, n1 ...`` (concept ids may not be
    valid Mermaid ids), labels are the concept names; cited links are thick, the rest grey. An
    abstention also gets a note box: why, how the question was read, the concepts offered for a
    name that matched nothing, and phrasings that are understood."""
    scene = evidence_scene(answer)
    ids = {n.id: f"n{i}" for i, n in enumerate(scene.nodes)}
    lines = ["flowchart LR"]
    help_ = abstention(answer)
    if help_ is not None:
        note = "<br>".join(_mermaid_text(line) for line in help_.lines())
        lines.append(f'    abstained["{note}"]:::abstained')
        lines.append("    classDef abstained fill:#fef3c7,stroke:#b45309,color:#111827")
    for n in scene.nodes:
        lines.append(f'    {ids[n.id]}["{_mermaid_text(n.label)}"]:::{n.kind}')
    for e in scene.edges:
        tail, head, directed = _ends(e)
        arrow = "-->" if directed else "---"
        lines.append(f"    {ids[tail]} {arrow}|{_mermaid_text(_words(e))}| {ids[head]}")
    for kind, (fill, stroke, _) in STYLES.items():
        color = FADED_TEXT if kind == "evidence" else "#111827"
        lines.append(f"    classDef {kind} fill:{fill},stroke:{stroke},color:{color}")
    for i, e in enumerate(scene.edges):
        style = (
            f"stroke:{CITED_EDGE},stroke-width:3px"
            if e.cited
            else f"stroke:{FADED_EDGE},stroke-width:1px,color:{FADED_TEXT}"
        )
        lines.append(f"    linkStyle {i} {style}")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _dot_note(answer: Answer) -> list[str]:
    """An abstention's help as the graph's label, left-aligned at the top (nothing for an answer)."""
    help_ = abstention(answer)
    if help_ is None:
        return []
    text = "".join(_dot_text(line) + "\\l" for line in help_.lines())
    return [f'    labelloc=t; labeljust=l; fontname="Helvetica"; label="{text}";']


def to_dot(answer: Answer) -> str:
    """A Graphviz ``digraph`` of the evidence with grounding as tooltips. Every directed edge is
    written from its foundation to what needs it (a ``builds_on`` edge target -> source, labelled
    "built on by"), so foundations rank left and every arrow points the same way."""
    scene = evidence_scene(answer)
    lines = [
        "digraph evidence {",
        "    rankdir=LR;",
        *_dot_note(answer),
        '    node [shape=box, style="rounded,filled", fontname="Helvetica"];',
        '    edge [fontname="Helvetica", fontsize=11];',
    ]
    for n in scene.nodes:
        fill, stroke, _ = STYLES[n.kind]
        font = FADED_TEXT if n.faded else "#111827"
        lines.append(
            f'    "{_dot_text(n.id)}" [label="{_dot_text(chr(10).join(n.lines))}", fillcolor="{fill}", '
            f'color="{stroke}", fontcolor="{font}", tooltip="{_dot_text(n.title)}"];'
        )
    for e in scene.edges:
        s, t, directed = _ends(e)
        extra = "" if directed else ", dir=none, constraint=false"
        look = (
            f'penwidth=2.5, color="{CITED_EDGE}"'
            if e.cited
            else f'penwidth=1, color="{FADED_EDGE}", fontcolor="{FADED_TEXT}"'
        )
        lines.append(
            f'    "{_dot_text(s)}" -> "{_dot_text(t)}" [label="{_dot_text(_words(e))}", {look}, '
            f'tooltip="{_dot_text(e.title)}"{extra}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
