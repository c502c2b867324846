"""Mermaid and Graphviz DOT text of the evidence: their own engines lay them out, with the same
emphasis as the page (cited edges thick and dark, other evidence grey) and, in DOT, the same
learning order (foundations left)."""

from __future__ import annotations

from control_plane.surfaces.pictures.palette import CITED_EDGE, FADED_EDGE, FADED_TEXT, STYLES
from control_plane.surfaces.pictures.scene import Answer, evidence_scene, learning_order

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


def to_mermaid(answer: Answer) -> str:
    """A Mermaid ``flowchart`` of the evidence; node ids are ``n0, n1 ...`` (concept ids may not be
    valid Mermaid ids), labels are the concept names; cited links are thick, the rest grey."""
    scene = evidence_scene(answer)
    ids = {n.id: f"n{i}" for i, n in enumerate(scene.nodes)}
    lines = ["flowchart LR"]
    for n in scene.nodes:
        lines.append(f'    {ids[n.id]}["{_mermaid_text(" ".join(n.lines))}"]:::{n.kind}')
    for e in scene.edges:
        arrow = "---" if learning_order(e.source, e.target, e.relation) is None else "-->"
        lines.append(f"    {ids[e.source]} {arrow}|{_mermaid_text(e.relation)}| {ids[e.target]}")
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


def to_dot(answer: Answer) -> str:
    """A Graphviz ``digraph`` of the evidence with grounding as tooltips. Foundations rank left:
    a ``builds_on`` edge is written target -> source with ``dir=back``, so its arrow still points
    at the stored target."""
    scene = evidence_scene(answer)
    lines = [
        "digraph evidence {",
        "    rankdir=LR;",
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
        order = learning_order(e.source, e.target, e.relation)
        s, t, extra = e.source, e.target, ""
        if order is None:
            extra = ", dir=none, constraint=false"
        elif order[0] != e.source:
            s, t, extra = e.target, e.source, ", dir=back"
        look = (
            f'penwidth=2.5, color="{CITED_EDGE}"'
            if e.cited
            else f'penwidth=1, color="{FADED_EDGE}", fontcolor="{FADED_TEXT}"'
        )
        lines.append(
            f'    "{_dot_text(s)}" -> "{_dot_text(t)}" [label="{_dot_text(e.relation)}", {look}, '
            f'tooltip="{_dot_text(e.title)}"{extra}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
