"""The evidence page: one self-contained HTML file a person can read, print or screen-read.

Top to bottom: the question, the answer (or the abstention and its reason), a picture of what the
answer rests on (seeds, cited concepts, cited edges: the whole cited sub-graph, laid out by Graphviz
``dot`` in learning order, every arrow from a foundation to what needs it, left to right or, when
that is too wide for a 1280 px page, top to bottom; what is still too wide is scaled to the page's
width, never scrolled sideways), all the other gathered evidence faded behind a ``<details>``
toggle, and below
the pictures the grounding as tables: every cited edge and concept with confidence, reason,
source, evidence and validity, and the lessons when the answer names any. A picture with more
than :data:`~control_plane.surfaces.pictures.scene.LARGE` concepts collapses by learning stage:
one card per stage listing its concepts, and each stage's own picture behind its own toggle.

No script, no stylesheet link, no font or image fetched: inline SVG and inline CSS only, under a
Content-Security-Policy that forbids the rest. Every piece of answer text is escaped. When ``dot``
is missing or fails, the page says so where the picture would be and still carries the tables.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any, Final

from control_plane.planning.answer import model_calls
from control_plane.surfaces.pictures.graphviz import (
    EDGE_FONT_PX,
    FIT_PX,
    LINE_PX,
    NODE_FONT_PX,
    Box,
    Layout,
    LayoutUnavailable,
    Route,
    layout_scene,
)
from control_plane.surfaces.pictures.palette import BUILT_ON_EDGE, CITED_EDGE, FADED_EDGE, FADED_TEXT, STYLES
from control_plane.surfaces.pictures.scene import (
    LARGE,
    Answer,
    Edge,
    Node,
    Scene,
    abstention,
    cited_scene,
    evidence_scene,
    stage_links,
    stage_members,
    stage_scene,
    stages,
)
from control_plane.surfaces.wording import calls_text, counted
from data_plane.events import get_logger
from data_plane.relations import BUILDS_ON

__all__ = ["CSP", "to_html"]

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'"
_CSS: Final = (
    "body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:2rem;color:#111827;max-width:none}"
    "h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}.meta{color:#4b5563;font-size:.9rem}"
    ".abstained{color:#b91c1c}.reading,.did-you-mean{margin:.3rem 0}ul.try{margin:.2rem 0}.note{background:#fef3c7;border:1px solid #b45309;padding:.5rem .75rem}"
    ".frame{padding-bottom:.25rem}svg{background:#fff;border:1px solid #e5e7eb;display:block}"
    "svg.picture{max-width:100%;height:auto}"
    "svg text{font-family:'DejaVu Sans',Verdana,sans-serif}"
    "ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;font-size:.9rem}"
    "ul.legend li{display:flex;align-items:center;gap:.4rem}"
    ".swatch{display:inline-block;width:1.4rem;height:.9rem;border:1.5px solid;border-radius:3px}"
    f".line{{display:inline-block;width:2rem;border-top:3px solid {CITED_EDGE}}}"
    f".line.built{{border-top-color:{BUILT_ON_EDGE}}}.line.faded{{border-top:1px solid {FADED_EDGE}}}"
    ".line.dashed{border-top-style:dashed}"
    "details{margin:1rem 0}summary{cursor:pointer;font-weight:600}"
    "table{border-collapse:collapse;font-size:.88rem;margin:.5rem 0}"
    "th,td{border:1px solid #d1d5db;padding:.3rem .5rem;text-align:left;vertical-align:top}"
    "th{background:#f3f4f6}td.reason{min-width:18rem;max-width:34rem}td.evidence{font-family:monospace;"
    "font-size:.8rem;min-width:12rem;max-width:22rem;overflow-wrap:anywhere}td.validity{min-width:13rem;font-size:.8rem;overflow-wrap:anywhere}td.source{min-width:7rem}.id{color:#6b7280;font-size:.8rem;overflow-wrap:anywhere}"
    "ol.stages{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-start}"
    ".stage-card{border:1.5px solid #0369a1;background:#f0f9ff;border-radius:7px;padding:.4rem .6rem;"
    "width:14rem;font-size:.85rem}.stage-card ul{margin:.3rem 0 0;padding-left:1rem}"
    ".stage-card li.seed{background:#fde68a}.stage-card li.faded{color:#6b7280}"
    "@media print{details{display:block}}"
)

log = get_logger(__name__)
_NO_ROUTE: Final = Route((), None, None, None)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------------------------------------
# SVG


def _path(route: Route) -> str:
    pts = route.points
    parts = [f"M{route.start_tip[0]:.1f},{route.start_tip[1]:.1f} L" if route.start_tip else "M"]
    parts.append(f"{pts[0][0]:.1f},{pts[0][1]:.1f}")
    if len(pts) > 1:
        parts.append(" C" + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts[1:]))
    if route.end_tip:
        parts.append(f" L{route.end_tip[0]:.1f},{route.end_tip[1]:.1f}")
    return "".join(parts)


def _marker(mid: str, colour: str, *, hollow: bool = False) -> str:
    head = f'fill="#fff" stroke="{colour}" stroke-width="1.5"' if hollow else f'fill="{colour}"'
    return (
        f'<marker id="{mid}" viewBox="-1 -1 12 12" refX="10" refY="5" markerUnits="userSpaceOnUse" '
        f'markerWidth="12" markerHeight="12" orient="auto-start-reverse">'
        f'<path d="M0,0 L10,5 L0,10 z" {head}/></marker>'
    )


def _markers(name: str) -> str:
    """A prerequisite's filled head and a "builds on" open head, each also faded."""
    return (
        _marker(f"{name}-arrow", CITED_EDGE)
        + _marker(f"{name}-arrow-faded", FADED_EDGE)
        + _marker(f"{name}-open", BUILT_ON_EDGE, hollow=True)
        + _marker(f"{name}-open-faded", FADED_EDGE, hollow=True)
    )


def _edge_svg(e: Edge, route: Route, name: str) -> str:
    built = e.relation == BUILDS_ON
    colour = FADED_EDGE if e.faded else BUILT_ON_EDGE if built else CITED_EDGE
    width = "1" if e.faded else "2.2" if e.cited else "1.4"
    arrow = f"url(#{name}-{'open' if built else 'arrow'}{'-faded' if e.faded else ''})"
    if route.end_tip:
        marker = f' marker-end="{arrow}"'
    elif route.start_tip:
        marker = f' marker-start="{arrow}"'
    else:
        marker = ' stroke-dasharray="5 4"'
    label = ""
    if route.label:
        lx, ly = route.label
        w = len(e.label) * EDGE_FONT_PX * 0.62 + 6
        text_colour = FADED_TEXT if e.faded else "#1f2937"
        label = (
            f'<rect class="label-ground" x="{lx - w / 2:.1f}" y="{ly - 8:.1f}" width="{w:.1f}" height="16" '
            f'fill="#fff" fill-opacity="0.85"/><text class="edge-label" x="{lx:.1f}" y="{ly:.1f}" '
            f'font-size="{EDGE_FONT_PX}" text-anchor="middle" dominant-baseline="central" fill="{text_colour}">'
            f"{_esc(e.label)}</text>"
        )
    classes = "edge" + (" cited" if e.cited else "") + (" faded" if e.faded else "")
    return (
        f'<g class="{classes}" data-id="{_esc(e.id)}" data-source="{_esc(e.source)}" '
        f'data-target="{_esc(e.target)}" data-relation="{_esc(e.relation)}"><title>{_esc(e.title)}</title>'
        f'<path d="{_path(route)}" fill="none" stroke="{colour}" stroke-width="{width}"{marker}/>{label}</g>'
    )


def _node_svg(n: Node, box: Box) -> str:
    fill, stroke, _ = STYLES[n.kind]
    text_colour = FADED_TEXT if n.faded else "#111827"
    dash = ' stroke-dasharray="4 3"' if n.faded else ""
    top = box.y - (len(n.lines) - 1) * LINE_PX / 2
    tspans = "".join(
        f'<tspan x="{box.x:.1f}" y="{top + i * LINE_PX:.1f}">{_esc(line)}</tspan>'
        for i, line in enumerate(n.lines)
    )
    return (
        f'<g class="node {n.kind}{" faded" if n.faded else ""}" data-id="{_esc(n.id)}" data-kind="{n.kind}">'
        f"<title>{_esc(n.title)}</title>"
        f'<rect x="{box.x - box.w / 2:.1f}" y="{box.y - box.h / 2:.1f}" width="{box.w:.1f}" '
        f'height="{box.h:.1f}" rx="7" fill="{fill}" stroke="{stroke}" stroke-width="{1 if n.faded else 1.6}"{dash}/>'
        f'<text class="node-label" font-size="{NODE_FONT_PX}" text-anchor="middle" '
        f'dominant-baseline="central" fill="{text_colour}">{tspans}</text></g>'
    )


def svg(scene: Scene, lay: Layout, *, caption: str) -> str:
    """One picture: edges (path, label on a white ground) under boxes, each with its grounding as
    an SVG ``<title>`` tooltip and its id in ``data-id``."""
    name = scene.name
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{_esc(name)}" class="picture" '
        f'width="{lay.width:.0f}" height="{lay.height:.0f}" viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" '
        f'role="img" aria-label="{_esc(caption)}" data-rankdir="{lay.rankdir}"><defs>{_markers(name)}</defs>'
    ]
    parts += [
        _edge_svg(e, lay.routes[e.id], name) for e in scene.edges if lay.routes.get(e.id, _NO_ROUTE).points
    ]
    parts += [_node_svg(n, lay.boxes[n.id]) for n in scene.nodes if n.id in lay.boxes]
    parts.append("</svg>")
    return "".join(parts)


def _stage_cards(scene: Scene, stage: Mapping[str, int]) -> str:
    """The stages as cards in learning order, each listing its concepts and what reaches it."""
    links = stage_links(scene, stage)
    cards = []
    for k, members in stage_members(scene, stage).items():
        froms = ", ".join(f"stage {a + 1} ({n})" for a, n in sorted(links.get(k, {}).items()))
        items = "".join(
            f'<li class="{n.kind}{" faded" if n.faded else ""}" data-id="{_esc(n.id)}">{_esc(n.label)}</li>'
            for n in members
        )
        count = counted(len(members), "concept")
        cards.append(
            f'<li class="stage-card" data-stage="{k + 1}"><b>Stage {k + 1}</b> · {count}'
            f'<div class="meta">{"edges from " + froms if froms else "no foundation in this picture"}</div>'
            f"<ul>{items}</ul></li>"
        )
    return '<ol class="stages">' + "".join(cards) + "</ol>"


_RUNS: Final = {"LR": "left to right", "TB": "top to bottom"}


def _drawn(scene: Scene, *, caption: str, dot: str) -> str:
    """One picture, fitted to the page, with a caption that says which way learning order runs."""
    lay = layout_scene(scene, dot=dot, fit=FIT_PX)
    engine = "" if lay.engine == "dot" else " (Laid out without Graphviz, which is not installed.)"
    return (
        f'<p class="meta caption">Learning order runs {_RUNS[lay.rankdir]}: each arrow goes from a '
        f"foundation to what needs it.{engine}</p>"
        f'<div class="frame">{svg(scene, lay, caption=caption)}</div>'
    )


def _picture(scene: Scene, *, caption: str, dot: str) -> str:
    """A scene's picture; a large scene collapses by stage: stage cards, then one toggle per stage."""
    if len(scene.nodes) <= LARGE:
        return _drawn(scene, caption=caption, dot=dot)
    stage = stages(scene)
    count = len(set(stage.values()))
    out = [
        f'<p class="meta">{len(scene.nodes)} concepts in {count} learning stages, first to last; open a '
        "stage below the cards for its picture.</p>",
        _stage_cards(scene, stage),
    ]
    for k in range(count):
        part = stage_scene(scene, stage, k)
        n = sum(1 for v in stage.values() if v == k)
        out.append(
            f'<details class="stage" data-stage="{k + 1}"><summary>Stage {k + 1}: {counted(n, "concept")} '
            f"and the {counted(len(part.edges), 'edge')} "
            "that reach them (their foundations from earlier stages faded)</summary>"
            f"{_drawn(part, caption=f'{caption}, stage {k + 1}', dot=dot)}</details>"
        )
    return "".join(out)


def _legend() -> str:
    items = [
        f'<li data-legend="{kind}"><span class="swatch" style="background:{fill};border-color:{stroke}">'
        f"</span>{_esc(label)}</li>"
        for kind, (fill, stroke, label) in STYLES.items()
    ]
    items += [
        '<li data-legend="prerequisite"><span class="line"></span>&#9654; prerequisite of: the tail is '
        "mastered before the head</li>",
        '<li data-legend="builds_on"><span class="line built"></span>&#9655; built on by: the head builds on '
        "the tail</li>",
        '<li data-legend="other"><span class="line dashed"></span>other relations, named on the line '
        "(dashed: related, contrasts with)</li>",
        '<li data-legend="faded"><span class="line faded"></span>evidence the answer does not cite</li>',
    ]
    return '<ul class="legend">' + "".join(items) + "</ul>"


def _pictures(answer: Answer, dot: str) -> str:
    """The pictures (each with the legend), or "" when nothing was gathered to draw."""
    cited = cited_scene(answer)
    if not cited.edges and all(n.kind == "seed" for n in cited.nodes):
        # Seeds alone are not something the answer rests on (an abstention, say).
        cited = Scene(cited.name, (), ())
    full = evidence_scene(answer)
    if not cited.nodes and not full.nodes:
        return ""
    others = sum(1 for e in full.edges if not e.cited)
    out = [
        "<h2>What the answer rests on</h2>",
        '<p class="meta">Every concept and edge the answer cites, in learning order: each arrow goes '
        "from a foundation to what needs it, for a prerequisite and for “builds on” alike. Amber "
        "boxes are the concepts the question names.</p>",
        _legend(),
    ]
    try:
        if cited.nodes:
            out.append(_picture(cited, caption="the cited evidence", dot=dot))
        else:
            out.append('<p class="note">The answer cites no concept or edge.</p>')
        if others or not cited.nodes:
            summary = (
                f"All gathered evidence: {counted(len(full.nodes), 'concept')} and "
                f"{counted(len(full.edges), 'edge')} ({counted(others, 'edge')} not cited, faded)"
            )
            opened = "" if cited.nodes else " open"
            out.append(
                f'<details id="all-evidence"{opened}><summary>{_esc(summary)}</summary>'
                f"{_picture(full, caption='all gathered evidence', dot=dot)}</details>"
            )
    except LayoutUnavailable as exc:
        log.warning("evidence_picture_unavailable", reason=exc.reason)
        out = out[:1]
        out.append(
            f'<p class="note" role="note">No picture: {_esc(exc.reason)}. The gathered evidence is listed '
            "instead, and the tables below hold the grounding of what the answer cites.</p>"
        )
        out.append(_evidence_list(full))
    return "".join(out)


def _evidence_list(scene: Scene) -> str:
    """The evidence as text, for a page without pictures: concepts, then edges as statements."""
    names = {n.id: n.label for n in scene.nodes}
    concepts = "".join(
        f'<li class="{n.kind}" data-id="{_esc(n.id)}">{_esc(names[n.id])} <span class="id">{_esc(n.id)} · '
        f"{n.kind}</span></li>"
        for n in scene.nodes
    )
    edges = "".join(
        f'<li class="{"cited" if e.cited else "evidence"}" data-id="{_esc(e.id)}">'
        f"{_esc(names.get(e.source, e.source))} <b>{_esc(e.relation.replace('_', ' '))}</b> "
        f"{_esc(names.get(e.target, e.target))}"
        f"{' (cited)' if e.cited else ''}</li>"
        for e in scene.edges
    )
    return (
        f'<details id="all-evidence" open><summary>All gathered evidence: {counted(len(scene.nodes), "concept")} '
        f'and {counted(len(scene.edges), "edge")}</summary><ul class="evidence-list">{concepts}</ul>'
        f'<ul class="evidence-list">{edges}</ul></details>'
    )


# ---------------------------------------------------------------------------------------------
# Tables


def _validity(item: Mapping[str, Any]) -> tuple[str, str]:
    return (
        f"{item.get('valid_at')} .. {item.get('invalid_at') or 'open'}",
        f"{item.get('recorded_at')} .. {item.get('expired_at') or 'current'}",
    )


def _grounding_cells(item: Mapping[str, Any]) -> str:
    g = item.get("grounding", {})
    valid, recorded = _validity(item)
    evidence = json.dumps(g.get("evidence"), ensure_ascii=False, sort_keys=True)
    return (
        f'<td class="confidence">{_esc(g.get("confidence"))}</td><td class="reason">{_esc(g.get("reason"))}</td>'
        f'<td class="source">{_esc(g.get("source"))}</td><td class="evidence">{_esc(evidence)}</td>'
        f'<td class="validity"><span class="valid">valid {_esc(valid)}</span><br>'
        f'<span class="recorded">recorded {_esc(recorded)}</span></td>'
    )


_HEAD: Final = "<th>confidence</th><th>reason</th><th>source</th><th>evidence</th><th>validity</th>"


def _tables(answer: Answer) -> str:
    ev = answer.get("evidence", {})
    concepts = {c["concept_id"]: c for c in ev.get("concepts", [])}
    names = {cid: str(c["name"]) for cid, c in concepts.items()}
    cited_ids = set(answer.get("cited_edges", []))
    edges = [e for e in ev.get("edges", []) if e.get("edge_id") in cited_ids]
    out = []
    if edges:
        out.append(f"<h2>Grounding of the {counted(len(edges), 'cited edge')}</h2>")
        rows = [
            f'<tr data-edge="{_esc(e.get("edge_id"))}"><td class="statement">'
            f"{_esc(names.get(e['source_id'], e['source_id']))} <b>{_esc(str(e['relation']).replace('_', ' '))}</b> "
            f"{_esc(names.get(e['target_id'], e['target_id']))} "
            f'<span class="id">{_esc(e.get("key", ""))}</span></td>{_grounding_cells(e)}</tr>'
            for e in edges
        ]
        out.append(
            f'<table class="grounding" id="cited-edges"><thead><tr><th>edge</th>{_HEAD}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    cited = [c["id"] for c in answer.get("cited_concepts", [])]
    seeds = [s for s in answer.get("seeds", []) if s not in cited]
    shown = [cid for cid in [*seeds, *cited] if cid in concepts]
    if shown:
        out.append(f"<h2>Grounding of the asked and cited concepts ({len(shown)})</h2>")
        rows = [
            f'<tr data-concept="{_esc(cid)}"><td class="statement">{_esc(names[cid])} '
            f'<span class="id">{_esc(cid)}{" · asked" if cid in seeds else ""}</span></td>'
            f"{_grounding_cells(concepts[cid])}</tr>"
            for cid in shown
        ]
        out.append(
            f'<table class="grounding" id="cited-concepts"><thead><tr><th>concept</th>{_HEAD}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    out.append(_lessons(answer, names))
    return "".join(out)


def _lesson_id(item: Any) -> str:
    if isinstance(item, Mapping):
        return str(item.get("lesson_id") or item.get("id") or "")
    return str(item)


def _lessons(answer: Answer, names: Mapping[str, str]) -> str:
    """The lessons the answer names (``cited_lessons``), with their links to concepts from the
    evidence (``evidence.lessons`` / ``evidence.lesson_links``) when those are there."""
    cited = answer.get("cited_lessons") or []
    if not cited:
        return ""
    ev = answer.get("evidence", {})
    links: dict[str, list[Mapping[str, Any]]] = {}
    for item in [*(ev.get("lessons") or []), *(ev.get("lesson_links") or [])]:
        if isinstance(item, Mapping):
            links.setdefault(_lesson_id(item), []).append(item)
    rows = []
    for item in cited:
        lid = _lesson_id(item)
        records = [item] if isinstance(item, Mapping) else []
        records += links.get(lid, [])
        title = next((str(r["title"]) for r in records if r.get("title")), lid)
        url = next(
            (str(r["url"]) for r in records if str(r.get("url", "")).startswith(("https://", "http://"))), ""
        )
        concepts = sorted({str(r["concept_id"]) for r in records if r.get("concept_id")})
        grounded = next((r for r in records if r.get("grounding")), None)
        lesson = f'<a href="{_esc(url)}">{_esc(title)}</a>' if url else _esc(title)
        covers = ", ".join(_esc(names.get(c, c)) for c in concepts) or "—"
        cells = _grounding_cells(grounded) if grounded else '<td colspan="5">—</td>'
        rows.append(
            f'<tr data-lesson="{_esc(lid)}"><td class="statement">{lesson} <span class="id">{_esc(lid)}</span></td>'
            f"<td>{covers}</td>{cells}</tr>"
        )
    return (
        f"<h2>Lessons the answer names ({len(rows)})</h2>"
        f'<table class="grounding" id="cited-lessons"><thead><tr><th>lesson</th><th>covers</th>{_HEAD}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


# ---------------------------------------------------------------------------------------------


def _reading(answer: Answer) -> str:
    """How the question was read; for an abstention also the concepts offered for a name that
    matched nothing and phrasings that are understood (each only when there is one)."""
    read_as = str((answer.get("reading") or {}).get("read_as") or "")
    out = [f'<p class="reading">Read as: {_esc(read_as)}</p>'] if read_as else []
    help_ = abstention(answer)
    if help_ is not None and help_.did_you_mean:
        offered = ", ".join(
            f'<b data-id="{_esc(cid)}">{_esc(name)}</b> <span class="id">{_esc(cid)}</span>'
            for cid, name in help_.did_you_mean
        )
        out.append(f'<p class="did-you-mean">Did you mean {offered}?</p>')
    if help_ is not None and help_.phrasings:
        tries = "".join(f"<li>{_esc(phrase)}</li>" for phrase in help_.phrasings)
        out.append(f'<p class="try">Questions it does understand:</p><ul class="try">{tries}</ul>')
    return "".join(out)


def _section(name: str, body: str) -> str:
    return f'<section id="{name}">{body}</section>\n' if body else ""


def to_html(answer: Answer, *, dot: str = "dot") -> str:
    """The evidence page for an answer (``Answer.to_dict()``); ``dot`` names the Graphviz command.
    Sections with nothing to show (no evidence gathered, nothing cited) are left out."""
    abstained = bool(answer.get("abstained"))
    verdict = (
        f"Abstained: {answer.get('abstain_reason') or 'no reason given'}"
        if abstained
        else str(answer.get("text", ""))
    )
    as_of = answer.get("as_of", {})
    meta = (
        f"confidence {answer.get('confidence')} · {counted(len(answer.get('rounds', [])), 'round')} · "
        f"{calls_text(model_calls(answer))} · as of {as_of.get('valid_at')} "
        f"(known at {as_of.get('recorded_at')}) · answer {answer.get('answer_id')}"
    )
    question = str(answer.get("question", ""))
    title = question if len(question) <= 80 else question[:79] + "…"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>Evidence: {_esc(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{_esc(question)}</h1>\n"
        f'<p class="{"abstained" if abstained else "answer"}">{_esc(verdict)}</p>\n'
        f"{_reading(answer)}"
        f'<p class="meta">{_esc(meta)}</p>\n'
        f"{_section('pictures', _pictures(answer, dot))}"
        f"{_section('grounding', _tables(answer))}"
        "</body></html>\n"
    )
