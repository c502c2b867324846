"""Evidence pictures: an answer's evidence sub-graph as Mermaid, Graphviz DOT, or an HTML page.

Pure functions over the answer JSON (``Answer.to_dict()``), so a recorded answer can be drawn
long after it was given. The HTML page is self-contained: an inline SVG laid out here,
deterministically (layers by breadth-first distance from the seed concepts), with no script, no
stylesheet link and no CDN, so it works offline and in a sandboxed viewer. Every element carries
its grounding (confidence, reason, source, evidence, valid/recorded times) in an SVG ``<title>``,
which browsers show as a tooltip. Concept text is untrusted and escaped everywhere.

Three kinds of concept are drawn distinctly: seeds (where the search started), cited concepts
(named by the answer) and other evidence.
"""

from __future__ import annotations

import html
import json
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from data_plane.relations import SYMMETRIC

__all__ = ["Layout", "layout", "to_dot", "to_html", "to_mermaid"]

# kind -> (fill, stroke, legend label)
STYLES: Final[dict[str, tuple[str, str, str]]] = {
    "seed": ("#fde68a", "#b45309", "seed (question mentions it)"),
    "cited": ("#bbf7d0", "#15803d", "cited by the answer"),
    "evidence": ("#e5e7eb", "#4b5563", "other evidence"),
}
_NODE_W: Final = 170
_NODE_H: Final = 44
_COL_GAP: Final = 110
_ROW_GAP: Final = 28
_MARGIN: Final = 30
_LEGEND_H: Final = 70

Answer = Mapping[str, Any]


def _concepts(answer: Answer) -> dict[str, Mapping[str, Any]]:
    return {c["concept_id"]: c for c in answer.get("evidence", {}).get("concepts", [])}


def _edges(answer: Answer) -> list[Mapping[str, Any]]:
    return list(answer.get("evidence", {}).get("edges", []))


def _kinds(answer: Answer) -> dict[str, str]:
    """Each concept's kind; a seed that is also cited is drawn as a seed."""
    seeds = set(answer.get("seeds", []) or answer.get("evidence", {}).get("seeds", []))
    cited = {c["id"] for c in answer.get("cited_concepts", [])}
    out: dict[str, str] = {}
    ids = set(_concepts(answer))
    for e in _edges(answer):
        ids.update((e["source_id"], e["target_id"]))
    for cid in ids | seeds:
        out[cid] = "seed" if cid in seeds else "cited" if cid in cited else "evidence"
    return out


def _name(answer: Answer, cid: str) -> str:
    c = _concepts(answer).get(cid)
    return str(c["name"]) if c else cid


def _grounding_text(item: Mapping[str, Any]) -> str:
    g = item.get("grounding", {})
    evidence = json.dumps(g.get("evidence"), ensure_ascii=False, sort_keys=True)
    lines = [
        f"confidence: {g.get('confidence')}",
        f"reason: {g.get('reason')}",
        f"source: {g.get('source')}",
        f"evidence: {evidence}",
        f"valid: {item.get('valid_at')} .. {item.get('invalid_at') or 'open'}",
        f"recorded: {item.get('recorded_at')} .. {item.get('expired_at') or 'current'}",
        f"version: {item.get('version_id')} ({item.get('op')})",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Layout


@dataclass(frozen=True)
class Layout:
    """Node centres (x, y) and the canvas size."""

    positions: dict[str, tuple[float, float]]
    width: float
    height: float


def layout(answer: Answer) -> Layout:
    """Columns by breadth-first distance from the seeds (undirected); ids sorted within a column.

    Concepts unreachable from any seed go in one last column. Same answer, same picture.
    """
    kinds = _kinds(answer)
    adjacency: dict[str, set[str]] = {cid: set() for cid in kinds}
    for e in _edges(answer):
        adjacency[e["source_id"]].add(e["target_id"])
        adjacency[e["target_id"]].add(e["source_id"])
    depth: dict[str, int] = {}
    queue: deque[str] = deque()
    for s in sorted(c for c, k in kinds.items() if k == "seed"):
        depth[s] = 0
        queue.append(s)
    while queue:
        cur = queue.popleft()
        for nxt in sorted(adjacency[cur]):
            if nxt not in depth:
                depth[nxt] = depth[cur] + 1
                queue.append(nxt)
    last = max(depth.values(), default=-1) + 1
    columns: dict[int, list[str]] = {}
    for cid in sorted(kinds):
        columns.setdefault(depth.get(cid, last), []).append(cid)
    rows = max((len(v) for v in columns.values()), default=1)
    height = 2 * _MARGIN + rows * _NODE_H + (rows - 1) * _ROW_GAP
    positions: dict[str, tuple[float, float]] = {}
    for col_no, col in enumerate(sorted(columns)):
        ids = columns[col]
        x = _MARGIN + _NODE_W / 2 + col_no * (_NODE_W + _COL_GAP)
        span = len(ids) * _NODE_H + (len(ids) - 1) * _ROW_GAP
        top = (height - span) / 2
        for i, cid in enumerate(ids):
            positions[cid] = (x, top + _NODE_H / 2 + i * (_NODE_H + _ROW_GAP))
    ncols = max(len(columns), 1)
    width = 2 * _MARGIN + ncols * _NODE_W + (ncols - 1) * _COL_GAP
    return Layout(positions, float(max(width, 560)), float(height + _LEGEND_H))


# ---------------------------------------------------------------------------------------------
# Mermaid and DOT


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
    valid Mermaid ids), labels are the concept names."""
    kinds = _kinds(answer)
    ids = {cid: f"n{i}" for i, cid in enumerate(sorted(kinds))}
    lines = ["flowchart LR"]
    for cid in sorted(kinds):
        lines.append(f'    {ids[cid]}["{_mermaid_text(_name(answer, cid))}"]:::{kinds[cid]}')
    for e in _edges(answer):
        arrow = "---" if e["relation"] in SYMMETRIC else "-->"
        rel = _mermaid_text(str(e["relation"]))
        lines.append(f"    {ids[e['source_id']]} {arrow}|{rel}| {ids[e['target_id']]}")
    for kind, (fill, stroke, _) in STYLES.items():
        lines.append(f"    classDef {kind} fill:{fill},stroke:{stroke},color:#111827")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(answer: Answer) -> str:
    """A Graphviz ``digraph`` of the evidence, with grounding as tooltips."""
    kinds = _kinds(answer)
    concepts = _concepts(answer)
    lines = [
        "digraph evidence {",
        "    rankdir=LR;",
        '    node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for cid in sorted(kinds):
        fill, stroke, _ = STYLES[kinds[cid]]
        tip = _grounding_text(concepts[cid]) if cid in concepts else cid
        lines.append(
            f'    "{_dot_text(cid)}" [label="{_dot_text(_name(answer, cid))}", fillcolor="{fill}", '
            f'color="{stroke}", tooltip="{_dot_text(tip)}"];'
        )
    for e in _edges(answer):
        extra = ", dir=none" if e["relation"] in SYMMETRIC else ""
        lines.append(
            f'    "{_dot_text(e["source_id"])}" -> "{_dot_text(e["target_id"])}" '
            f'[label="{_dot_text(str(e["relation"]))}", tooltip="{_dot_text(_grounding_text(e))}"{extra}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# HTML with inline SVG


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _clip(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _border_point(cx: float, cy: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from a node centre towards (tx, ty) leaves the node's box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    scale = min(
        (_NODE_W / 2) / abs(dx) if dx else math.inf,
        (_NODE_H / 2) / abs(dy) if dy else math.inf,
    )
    return cx + dx * scale, cy + dy * scale


def _svg(answer: Answer) -> str:
    lay = layout(answer)
    kinds = _kinds(answer)
    concepts = _concepts(answer)
    cited_edges = set(answer.get("cited_edges", []))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="evidence" width="{lay.width:.0f}" '
        f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" role="img" '
        'aria-label="evidence sub-graph">',
        "<defs>",
        '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#374151"/></marker>',
        "</defs>",
    ]
    for e in _edges(answer):
        s, t = e["source_id"], e["target_id"]
        (sx, sy), (tx, ty) = lay.positions[s], lay.positions[t]
        x1, y1 = _border_point(sx, sy, tx, ty)
        x2, y2 = _border_point(tx, ty, sx, sy)
        marker = "" if e["relation"] in SYMMETRIC else ' marker-end="url(#arrow)"'
        width = "2.5" if e.get("edge_id") in cited_edges else "1.2"
        dash = ' stroke-dasharray="5 4"' if e["relation"] in SYMMETRIC else ""
        label = f"{_name(answer, s)} {e['relation']} {_name(answer, t)}"
        parts.append(
            f'<g class="edge" data-id="{_esc(e.get("edge_id", ""))}" data-source="{_esc(s)}" '
            f'data-target="{_esc(t)}" data-relation="{_esc(e["relation"])}">'
            f"<title>{_esc(label)}\n"
            f"{_esc(_grounding_text(e))}</title>"
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#374151" '
            f'stroke-width="{width}"{dash}{marker}/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 4:.1f}" font-size="11" '
            f'text-anchor="middle" fill="#1f2937">{_esc(e["relation"])}</text></g>'
        )
    for cid in sorted(kinds):
        x, y = lay.positions[cid]
        fill, stroke, _ = STYLES[kinds[cid]]
        tip = _grounding_text(concepts[cid]) if cid in concepts else "(not in the evidence concepts)"
        name = _name(answer, cid)
        parts.append(
            f'<g class="node {kinds[cid]}" data-id="{_esc(cid)}" data-kind="{kinds[cid]}">'
            f"<title>{_esc(name)} ({_esc(cid)})\n{_esc(tip)}</title>"
            f'<rect x="{x - _NODE_W / 2:.1f}" y="{y - _NODE_H / 2:.1f}" width="{_NODE_W}" '
            f'height="{_NODE_H}" rx="8" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="13" text-anchor="middle" '
            f'fill="#111827">{_esc(_clip(name))}</text></g>'
        )
    ly = lay.height - _LEGEND_H + 20
    parts.append(f'<g class="legend" transform="translate({_MARGIN},{ly:.0f})">')
    for i, (kind, (fill, stroke, label)) in enumerate(STYLES.items()):
        parts.append(
            f'<g data-legend="{kind}" transform="translate({i * 180},0)"><rect width="18" height="14" '
            f'rx="3" fill="{fill}" stroke="{stroke}"/><text x="24" y="12" font-size="12">{_esc(label)}</text></g>'
        )
    parts.append(
        '<g transform="translate(0,26)"><line x1="0" y1="7" x2="40" y2="7" stroke="#374151" '
        'stroke-width="1.2" marker-end="url(#arrow)"/><text x="48" y="11" font-size="12">directed relation '
        '(thick: cited)</text><line x1="240" y1="7" x2="280" y2="7" stroke="#374151" stroke-dasharray="5 4"/>'
        '<text x="288" y="11" font-size="12">symmetric relation</text></g>'
    )
    parts.append("</g></svg>")
    return "\n".join(parts)


def to_html(answer: Answer) -> str:
    """A self-contained HTML page: question, answer or abstention, and the evidence as inline SVG."""
    abstained = bool(answer.get("abstained"))
    verdict = (
        f"Abstained: {answer.get('abstain_reason') or 'no reason given'}"
        if abstained
        else str(answer.get("text", ""))
    )
    as_of = answer.get("as_of", {})
    meta = (
        f"confidence {answer.get('confidence')} · rounds {len(answer.get('rounds', []))} · "
        f"LLM calls {answer.get('llm_calls')} · as of {as_of.get('valid_at')} "
        f"(known at {as_of.get('recorded_at')}) · answer {answer.get('answer_id')}"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>Evidence: {_esc(_clip(str(answer.get('question', '')), 80))}</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#111827}"
        ".meta{color:#4b5563;font-size:.9rem}.abstained{color:#b91c1c}"
        "svg{border:1px solid #e5e7eb;background:#fff}</style></head><body>\n"
        f"<h1>{_esc(answer.get('question', ''))}</h1>\n"
        f'<p class="{"abstained" if abstained else "answer"}">{_esc(verdict)}</p>\n'
        f'<p class="meta">{_esc(meta)}</p>\n'
        '<p class="meta">Hover a concept or an edge for its grounding.</p>\n'
        f"{_svg(answer)}\n</body></html>\n"
    )
