"""The evidence page as a person sees it: headless Chromium renders it 1280 px wide, and the boxes
it lays out show no two labels on top of each other, every cited edge's reason on the page, every
cited concept in the main picture with the asked concept in view, and nothing wider than the
window (no sideways scrolling), as it opens and with every toggle open.

Chromium renders a copy of the page with one measuring script appended (the page itself forbids
scripts by its Content-Security-Policy, so the copy drops that meta tag); the script writes every
label's and box's bounding box into the DOM, once as the page opens and once with every
``<details>`` toggle open, and ``--dump-dom`` hands them back. Screenshots of both pages land in
the test's temporary directory (the CI artefacts); docs/pictures/ holds copies.
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from test_pictures import _item

from control_plane.settings import Settings
from control_plane.surfaces.pictures import to_html
from control_plane.surfaces.runtime import Runtime, ensure_initialised

# Slow (a headless browser renders each page): left out by default, run by .ci/run (-m slow).
pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
QUESTION = (
    "What must a learner master before agent orchestration, and which of those concepts does RAG build on?"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

# Reads every visible label and box of every picture, and where each cited edge's reason is.
MEASURE = """
<script>
(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const measure = () => {
    const pictures = [];
    for (const svg of document.querySelectorAll("svg.picture")) {
      // A picture inside a closed toggle is not shown (Chromium may still give it boxes).
      if (svg.closest("details:not([open])") || !svg.checkVisibility()) continue;
      const items = [];
      for (const t of svg.querySelectorAll("text")) items.push({kind: t.getAttribute("class"), text: t.textContent,
        owner: t.closest("g").dataset.id, ...box(t)});
      for (const r of svg.querySelectorAll("g.node rect")) items.push({kind: "node-box", text: "",
        owner: r.closest("g").dataset.id, ...box(r)});
      pictures.push({id: svg.id, items});
    }
    return pictures;
  };
  const reasons = () => [...document.querySelectorAll("#cited-edges tr[data-edge]")].map((tr) => {
    const td = tr.querySelector("td.reason");
    td.scrollIntoView({block: "center", inline: "center"});
    const r = td.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const style = getComputedStyle(td);
    return {edge: tr.dataset.edge, text: td.textContent, ...box(td), onTop: !!hit && td.contains(hit),
      visibility: style.visibility, opacity: style.opacity, colour: style.color};
  });
  // What the main picture draws (outside every toggle): SVG boxes, or stage-card items.
  const main = () => [...document.querySelectorAll("#pictures g.node[data-id], #pictures li[data-id]")]
    .filter((el) => !el.closest("details") && el.checkVisibility())
    .map((el) => ({id: el.dataset.id, ...box(el)}));
  const frames = () => [...document.querySelectorAll("svg.picture")]
    .filter((el) => !el.closest("details:not([open])") && el.checkVisibility()).map((el) => ({id: el.id, ...box(el)}));
  const wide = () => [...document.querySelectorAll("body *")].filter((el) => el.scrollWidth > el.clientWidth + 1
    && getComputedStyle(el).overflowX !== "visible").map((el) => el.tagName + "." + el.className);
  const out = {closed: measure(), reasons: reasons(), main: main(), frames: frames(), scrollers: wide(),
    viewport: innerWidth, width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight};
  window.scrollTo(0, 0);
  for (const d of document.querySelectorAll("details")) d.open = true;
  out.open = measure();
  out.openFrames = frames();
  out.openScrollers = wide();
  out.openWidth = document.documentElement.scrollWidth;
  out.openHeight = document.documentElement.scrollHeight;
  const pre = document.createElement("pre");
  pre.id = "measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

# The window the page must fit: an ordinary laptop screen.
WIDTH = 1280

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or shutil.which("dot") is None,
    reason="chromium or Graphviz dot is not installed; .ci/run installs both",
)


def _chromium(tmp_path: Path, *args: str) -> str:
    proc = subprocess.run(
        [CHROMIUM or "chromium", *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def render(page: str, tmp_path: Path, name: str) -> dict[str, Any]:
    """Render the page in Chromium, measure it, and save screenshots of it as it opens and with
    every toggle open (``NAME.png``, ``NAME-open.png`` in ``tmp_path``)."""
    source = tmp_path / f"{name}.html"
    source.write_text(page, encoding="utf-8")
    probe = tmp_path / f"{name}-measure.html"
    probe.write_text(
        re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page).replace(
            "</body>", MEASURE + "</body>"
        ),
        encoding="utf-8",
    )
    dom = _chromium(tmp_path, f"--window-size={WIDTH},1200", "--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    opened = tmp_path / f"{name}-open.html"
    opened.write_text(page.replace("<details", "<details open"), encoding="utf-8")
    # Screenshots 1280 px wide and as tall as the page (Chromium caps a capture at 16384 px).
    for target, h in ((source, measured["height"]), (opened, measured["openHeight"])):
        shot = tmp_path / f"{target.stem}.png"
        size = f"--window-size={WIDTH},{min(16000, h)}"
        _chromium(tmp_path, size, f"--screenshot={shot}", target.as_uri())
        assert shot.stat().st_size > 0
    return measured


def _overlap(a: dict[str, Any], b: dict[str, Any], slack: float = 0.5) -> bool:
    return (
        min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > slack
        and min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > slack
    )


def _inside(inner: dict[str, Any], outer: dict[str, Any], slack: float = 1.0) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["w"] <= outer["x"] + outer["w"] + slack
        and inner["y"] + inner["h"] <= outer["y"] + outer["h"] + slack
    )


def label_problems(pictures: list[dict[str, Any]]) -> list[str]:
    """Every pair of labels that overlap, every edge label on a box, every box or box label that
    spills out of its box or onto another box."""
    problems = []
    for pic in pictures:
        items = [i for i in pic["items"] if i["w"] > 0 and i["h"] > 0]
        texts = [i for i in items if i["kind"] in ("edge-label", "node-label")]
        boxes = {i["owner"]: i for i in items if i["kind"] == "node-box"}
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                if _overlap(a, b):
                    problems.append(f"{pic['id']}: label {a['text']!r} overlaps label {b['text']!r}")
            if a["kind"] == "node-label" and not _inside(a, boxes[a["owner"]]):
                problems.append(f"{pic['id']}: label {a['text']!r} spills out of its box")
            for owner, node in boxes.items():
                if (a["kind"] == "edge-label" or owner != a["owner"]) and _overlap(a, node):
                    problems.append(f"{pic['id']}: label {a['text']!r} lies on box {owner!r}")
        names = sorted(boxes)
        for i, a_id in enumerate(names):
            for b_id in names[i + 1 :]:
                if _overlap(boxes[a_id], boxes[b_id]):
                    problems.append(f"{pic['id']}: boxes {a_id!r} and {b_id!r} overlap")
    return problems


def reason_problems(measured: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """Every cited edge whose reason is missing, empty, hidden, covered or off the page."""
    by_edge = {r["edge"]: r for r in measured["reasons"]}
    edges = {e["edge_id"]: e for e in answer["evidence"]["edges"]}
    problems = []
    for eid in answer["cited_edges"]:
        r = by_edge.get(eid)
        want = edges[eid]["grounding"]["reason"]
        if r is None:
            problems.append(f"{eid}: no row")
        elif r["text"] != want:
            problems.append(f"{eid}: reason reads {r['text']!r}, not {want!r}")
        elif not (r["w"] > 0 and r["h"] > 0 and r["x"] >= 0 and r["y"] >= 0):
            problems.append(f"{eid}: reason has no box on the page")
        elif not r["onTop"] or r["visibility"] != "visible" or float(r["opacity"]) < 1:
            problems.append(f"{eid}: reason is covered or hidden")
    return problems


def fit_problems(measured: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """Everything that is wider than the window (as the page opens and with every toggle open),
    every cited concept the main picture does not draw, and an asked concept out of view."""
    problems = []
    for state, width, frames, scrollers in (
        ("closed", measured["width"], measured["frames"], measured["scrollers"]),
        ("open", measured["openWidth"], measured["openFrames"], measured["openScrollers"]),
    ):
        if width > measured["viewport"]:
            problems.append(f"{state}: the page is {width} px wide in a {measured['viewport']} px window")
        problems += [
            f"{state}: picture {f['id']} runs to {f['x'] + f['w']:.0f} px"
            for f in frames
            if f["x"] + f["w"] > WIDTH
        ]
        problems += [f"{state}: {s} scrolls sideways" for s in scrollers]
    drawn = {m["id"]: m for m in measured["main"]}
    for c in answer["cited_concepts"]:
        if c["id"] not in drawn:
            problems.append(f"cited concept {c['id']} is not in the main picture")
    for seed in answer["seeds"]:
        m = drawn.get(seed)
        if m is None or m["w"] <= 0 or m["x"] < 0 or m["x"] + m["w"] > WIDTH:
            problems.append(f"asked concept {seed} is not in view: {m}")
    return problems


def worked_example(engine: Engine) -> dict[str, Any]:
    url = engine.url.render_as_string(hide_password=False)
    ensure_initialised(url, engine=engine)
    rt = Runtime(Settings(database_url=url, synthesizer="offline"), engine)
    return rt.planner.ask(QUESTION).to_dict()


WORDS = [
    "linear",
    "algebra",
    "probability",
    "gradient",
    "descent",
    "attention",
    "tokenization",
    "embedding",
    "retrieval",
    "evaluation",
    "calibration",
    "sampling",
    "decoding",
    "memory",
    "planning",
    "agents",
    "vector",
    "search",
    "graphs",
    "fine-tuning",
    "alignment",
    "reward",
    "models",
    "safety",
    "prompting",
    "compression",
    "distillation",
    "quantisation",
    "routing",
    "caching",
    "batching",
    "serving",
]


def closure_answer(stages: int = 12, width: int = 9, seed: int = 13) -> dict[str, Any]:
    """A study-plan closure as an answer: ``stages`` layers of ``width`` concepts and one asked
    concept (12 x 9 + 1 = 100 by default), each concept resting on one to three concepts of the
    three layers before it by prerequisite or builds_on edges, all cited."""
    rng = random.Random(seed)

    layers = [[f"c{k:02d}{i}" for i in range(width)] for k in range(stages - 1)] + [["goal"]]
    ids = [c for layer in layers for c in layer]
    names = {
        c: " ".join(rng.sample(WORDS, rng.choice((1, 2, 3)))).capitalize() + f" {n}"
        for n, c in enumerate(ids)
    }
    edges: list[dict[str, Any]] = []
    for k in range(1, stages):
        for c in layers[k]:
            below = [rng.choice(layers[k - 1])]
            below += [
                rng.choice(layers[rng.randrange(max(0, k - 3), k)]) for _ in range(rng.choice((0, 1, 1, 2)))
            ]
            for f in layers[k - 1] if c == "goal" else dict.fromkeys(below):
                rel = rng.choice(("prerequisite", "prerequisite", "builds_on"))
                s, t = (f, c) if rel == "prerequisite" else (c, f)
                n = len(edges) + 1
                reason = f"{names[s]} {rel.replace('_', ' ')} {names[t]} (generated reason {n})"
                edges.append(
                    {
                        "edge_id": f"e{n}",
                        "key": f"{s}>{rel}>{t}",
                        "source_id": s,
                        "target_id": t,
                        "relation": rel,
                        **_item(reason, 1000 + n),
                    }
                )
    concepts = [
        {"concept_id": c, "name": names[c], "aliases": [], "summary": "", **_item(f"concept {c}", n + 1)}
        for n, c in enumerate(ids)
    ]
    return {
        "schema": "answer/1",
        "answer_id": "closure-100",
        "question": f"Make me a study plan for {names['goal']}",
        "text": f"A study plan for {names['goal']} in {stages - 1} stages.",
        "abstained": False,
        "abstain_reason": None,
        "confidence": 0.9,
        "cited_concepts": [{"id": c, "name": names[c]} for c in ids[:-1]],
        "cited_edges": [e["edge_id"] for e in edges],
        "seeds": ["goal"],
        "evidence": {"seeds": ["goal"], "concepts": concepts, "edges": edges},
        "as_of": {"valid_at": "2025-06-01T00:00:00Z", "recorded_at": "2025-06-01T00:00:00Z"},
        "rounds": [{"round": 1}],
        "llm_calls": 0,
    }


@needs_browser
def test_rendered_svg_dom_has_the_worked_example_nodes_and_edges(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """Chromium's rendered DOM holds an SVG group per evidence concept and per evidence edge."""
    answer = worked_example(sqlite_engine)
    page = tmp_path / "evidence.html"
    page.write_text(to_html(answer), encoding="utf-8")
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert "<svg" in dom
    for cid in ("agent_orchestration", "function_calling", "rag", "embeddings"):
        assert f'data-id="{cid}"' in dom
    for edge in answer["evidence"]["edges"]:
        assert f'data-id="{edge["edge_id"]}"' in dom


@needs_browser
def test_worked_example_labels_do_not_overlap_and_cited_reasons_are_visible(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """The worked example's page, as it opens and with all evidence shown, has no label on another
    label or on a box, and shows the reason of every cited edge."""
    answer = worked_example(sqlite_engine)
    measured = render(to_html(answer), tmp_path, "worked-example")
    assert [p["id"] for p in measured["closed"]] == ["cited"]
    assert {p["id"] for p in measured["open"]} == {"cited", "evidence"}
    assert sum(len(p["items"]) for p in measured["open"]) > 2 * len(answer["evidence"]["edges"])
    assert label_problems(measured["closed"]) == []
    assert label_problems(measured["open"]) == []
    assert reason_problems(measured, answer) == []
    assert len(answer["cited_concepts"]) >= 30 and fit_problems(measured, answer) == []


@needs_browser
def test_hundred_concept_closure_collapses_by_stage_without_overlaps(tmp_path: Path) -> None:
    """A 100-concept study-plan closure shows one card per stage, and every stage's picture (all
    toggles open) has no overlapping labels; every cited edge's reason is visible."""
    answer = closure_answer()
    assert len(answer["evidence"]["concepts"]) == 100
    page = to_html(answer)
    assert page.count('class="stage-card"') == 12
    measured = render(page, tmp_path, "closure-100")
    assert measured["closed"] == []
    assert len(measured["open"]) == 12
    assert label_problems(measured["open"]) == []
    assert reason_problems(measured, answer) == []
    assert fit_problems(measured, answer) == []


def test_the_overlap_check_is_not_vacuous() -> None:
    """Two labels on top of each other, or a label on a box, are reported."""
    a = {"kind": "edge-label", "text": "builds on", "owner": "e1", "x": 0, "y": 0, "w": 50, "h": 12}
    b = {**a, "owner": "e2", "x": 30}
    box = {"kind": "node-box", "text": "", "owner": "n1", "x": 100, "y": 0, "w": 80, "h": 30}
    label = {"kind": "node-label", "text": "N", "owner": "n1", "x": 110, "y": 5, "w": 20, "h": 12}
    stray = {**a, "owner": "e3", "x": 150}
    problems = label_problems([{"id": "p", "items": [a, b, box, label, stray]}])
    assert any("overlaps" in p for p in problems) and any("lies on box" in p for p in problems)
    assert label_problems([{"id": "p", "items": [a, box, label]}]) == []


def test_the_fit_check_is_not_vacuous() -> None:
    """A page wider than the window, a picture running off it, an undrawn cited concept and an
    asked concept out of view are each reported."""
    fine = {"viewport": WIDTH, "width": WIDTH, "openWidth": WIDTH, "scrollers": [], "openScrollers": []}
    seed = {"id": "goal", "x": 10, "y": 0, "w": 80, "h": 20}
    answer = {"cited_concepts": [{"id": "a"}], "seeds": ["goal"]}
    ok = {**fine, "frames": [], "openFrames": [], "main": [seed, {**seed, "id": "a"}]}
    assert fit_problems(ok, answer) == []
    bad = {
        **fine,
        "width": 1900,
        "frames": [{"id": "cited", "x": 32, "w": 1500}],
        "openFrames": [],
        "openScrollers": ["DIV.frame"],
        "main": [{**seed, "x": 1250}],
    }
    problems = fit_problems(bad, answer)
    assert len(problems) == 5, problems
