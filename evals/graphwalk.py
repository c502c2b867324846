"""A GraphWalk-style synthetic structural benchmark: can the loop reason over a graph it has
never seen, whose concept names mean nothing?

For each size (default 100, 150, 200 and 500 concepts) a random graph is generated from a fixed
seed: concepts named by meaningless 4-8 letter words (so no world knowledge helps), about two
edges per concept over all five relation types (prerequisite edges point forward in a hidden
order, so they stay acyclic). Some edges were valid from 2024-01-01 and invalidated at
2025-06-01; some only became valid at 2025-06-01. Questions come from templates adapted to the
loop, and every gold answer is computed independently with networkx from the generated triples:

=================  =============================================================================
template           question and gold
=================  =============================================================================
k_hop              "Which concepts are within 2 hops of A?" — undirected distance 1..2
remote             "Which concepts are exactly 2 hops from A, not directly linked?" — distance 2
middle             "Which concept links A and C?" — the one common neighbour of non-adjacent A, C
intersection       "Which concepts are connected to both A and B?" — common neighbours
negation           "Which concepts are connected to A but not to B?" — N(A) minus N(B) and B
relation           "What does A build on?" / "What are the parts of A?" / "What contrasts with A?"
ignore_invalid     "What does A build on?" where one of A's builds_on edges was invalidated
as_of_past         the same, asked as of 2025-01-01 (the invalidated edge counts, later ones not)
=================  =============================================================================

Scores per template and size: n, correct (exact set match), accuracy, precision, recall, F1 and
false positives (concepts the answer states, :func:`evals.metrics.answer_set`, outside the gold), by :mod:`evals.metrics`. The synthesizer is
used as is; nothing here knows how it parses questions.

    python -m evals.graphwalk [--sizes 100,150,200,500] [--per-template 8] [--seed 11] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import networkx as nx

from data_plane.gateway import Write
from data_plane.records import Grounding
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED, canonical_edge
from evals.gold import GraphView, contrasts, foundations, parts
from evals.metrics import Response, Score, answer_set, score, summarise
from evals.questions import Question

__all__ = [
    "TEMPLATES",
    "WalkGraph",
    "generate",
    "load",
    "main",
    "make_questions",
    "run_size",
    "summary_table",
]

PAST_VALID: Final = datetime(2024, 1, 1, tzinfo=UTC)
REVISION: Final = datetime(2025, 6, 1, tzinfo=UTC)
ASK_PAST: Final = "2025-01-01"
TEMPLATES: Final = (
    "k_hop",
    "remote",
    "middle",
    "intersection",
    "negation",
    "relation",
    "ignore_invalid",
    "as_of_past",
)
MAX_GOLD: Final = 15
_MIX: Final = (
    (PREREQUISITE, 0.25),
    (BUILDS_ON, 0.30),
    (PART_OF, 0.15),
    (RELATED, 0.18),
    (CONTRASTS_WITH, 0.12),
)
# Words the question templates use: a concept must never be named like one of them.
_RESERVED: Final = frozenset(
    [
        "what",
        "which",
        "does",
        "build",
        "built",
        "part",
        "parts",
        "concept",
        "concepts",
        "link",
        "links",
        "linked",
        "both",
        "connected",
        "exactly",
        "hops",
        "hop",
        "from",
        "within",
        "directly",
        "with",
        "contrast",
        "contrasts",
        "before",
        "after",
        "path",
        "lead",
        "leads",
        "about",
    ]
)
_GROUNDING: Final = Grounding(0.9, "graphwalk synthetic edge", "evals.graphwalk", {"generator": "graphwalk"})


@dataclass(frozen=True)
class WalkGraph:
    """Concepts (meaningless names, id == lowercase name) and edges with their validity."""

    seed: int
    concepts: tuple[str, ...]
    # (source, target, relation, valid_at, invalid_at or None)
    edges: tuple[tuple[str, str, str, datetime, datetime | None], ...]

    def view(self, at: datetime | None = None) -> GraphView:
        """The graph as valid at ``at`` (None: now, i.e. nothing invalidated)."""

        def live(v: datetime, inv: datetime | None) -> bool:
            if at is None:
                return inv is None
            return v <= at and (inv is None or inv > at)

        return GraphView.of(self.concepts, ((s, t, r) for s, t, r, v, inv in self.edges if live(v, inv)))


def _word(rng: random.Random, taken: set[str]) -> str:
    while True:
        n = rng.randint(4, 8)
        w = "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
        # Words ending in "s" would be singularised by the name matcher; keep names unambiguous.
        if w not in taken and w not in _RESERVED and not w.endswith("s"):
            taken.add(w)
            return w


def generate(n: int, *, seed: int = 11, edges_per_concept: float = 2.0) -> WalkGraph:
    """A random graph of ``n`` concepts; the same ``(n, seed)`` always gives the same graph."""
    rng = random.Random(seed * 1_000_003 + n)
    taken: set[str] = set()
    names = [_word(rng, taken) for _ in range(n)]
    seen: set[tuple[str, str, str]] = set()
    edges: list[tuple[str, str, str, datetime, datetime | None]] = []
    target = int(n * edges_per_concept)
    while len(edges) < target:
        r = rng.random()
        acc = 0.0
        rel = _MIX[-1][0]
        for name, share in _MIX:
            acc += share
            if r <= acc:
                rel = name
                break
        i, j = rng.sample(range(n), 2)
        if rel in (PREREQUISITE, BUILDS_ON, PART_OF):
            i, j = min(i, j), max(i, j)  # a hidden order keeps directed relations acyclic
            if rel == BUILDS_ON:
                i, j = j, i  # the later concept builds on the earlier one
        key = canonical_edge(names[i], names[j], rel)
        if key in seen or (key[1], key[0], key[2]) in seen:
            continue
        seen.add(key)
        roll = rng.random()
        if roll < 0.08:
            edges.append((*key, PAST_VALID, REVISION))  # invalidated at the revision
        elif roll < 0.14:
            edges.append((*key, REVISION, None))  # added at the revision
        else:
            edges.append((*key, PAST_VALID, None))
    return WalkGraph(seed, tuple(names), tuple(edges))


def writes(graph: WalkGraph) -> list[Write]:
    """The graph as gateway writes (one batch)."""
    out = [
        Write.concept(
            c, grounding=_GROUNDING, name=c.capitalize(), summary=f"{c.capitalize()}.", valid_at=PAST_VALID
        )
        for c in graph.concepts
    ]
    out += [
        Write.edge(s, t, r, grounding=_GROUNDING, valid_at=v, invalid_at=inv)
        for s, t, r, v, inv in graph.edges
    ]
    return out


def load(graph: WalkGraph, url: str) -> None:
    """Migrate ``url`` and write ``graph`` into it through the gateway."""
    from data_plane.database import connect, migrate
    from data_plane.gateway import WriteGateway

    engine = connect(url)
    try:
        migrate(engine)
        WriteGateway(engine).apply(writes(graph))
    finally:
        engine.dispose()


def _undirected(view: GraphView) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(view.concepts)
    g.add_edges_from((s, t) for s, t, _ in view.edges)
    return g


def _ok(gold: set[str]) -> bool:
    return 0 < len(gold) <= MAX_GOLD


def make_questions(graph: WalkGraph, *, per_template: int = 8, seed: int = 11) -> list[Question]:
    """Up to ``per_template`` questions per template, gold computed with networkx."""
    rng = random.Random(seed)
    now, past = graph.view(), graph.view(datetime(2025, 1, 1, tzinfo=UTC))
    g = _undirected(now)
    nodes = sorted(now.concepts)
    name = str.capitalize
    out: list[Question] = []

    def add(template: str, text: str, gold: set[str], as_of: str | None = None) -> None:
        out.append(Question(f"{template}-{len(out):03d}", text, template, tuple(sorted(gold)), False, as_of))

    def sample(template: str, make: Callable[[], tuple[str, set[str], str | None] | None]) -> None:
        made = tries = 0
        while made < per_template and tries < 400:
            tries += 1
            got = make()
            if got is not None and _ok(got[1]) and got[0] not in {q.question for q in out}:
                add(template, got[0], got[1], got[2])
                made += 1

    def k_hop() -> tuple[str, set[str], str | None] | None:
        a = rng.choice(nodes)
        gold = set(nx.single_source_shortest_path_length(g, a, cutoff=2)) - {a}
        return f"Which concepts are within 2 hops of {name(a)}?", gold, None

    def remote() -> tuple[str, set[str], str | None] | None:
        a = rng.choice(nodes)
        gold = {v for v, d in nx.single_source_shortest_path_length(g, a, cutoff=2).items() if d == 2}
        return f"Which concepts are exactly 2 hops from {name(a)}, not directly linked to it?", gold, None

    def middle() -> tuple[str, set[str], str | None] | None:
        a, c = rng.sample(nodes, 2)
        if g.has_edge(a, c):
            return None
        common = set(nx.common_neighbors(g, a, c))
        if len(common) != 1:
            return None
        return f"Which concept links {name(a)} and {name(c)}?", common, None

    def intersection() -> tuple[str, set[str], str | None] | None:
        a = rng.choice(nodes)
        two = [v for v, d in nx.single_source_shortest_path_length(g, a, cutoff=2).items() if d == 2]
        if not two:
            return None
        b = rng.choice(sorted(two))
        return (
            f"Which concepts are connected to both {name(a)} and {name(b)}?",
            set(nx.common_neighbors(g, a, b)),
            None,
        )

    def negation() -> tuple[str, set[str], str | None] | None:
        a = rng.choice(nodes)
        na = set(g[a])
        if len(na) < 2:
            return None
        b = rng.choice(sorted(na))
        gold = na - set(g[b]) - {b}
        return f"Which concepts are connected to {name(a)} but not to {name(b)}?", gold, None

    def relation() -> tuple[str, set[str], str | None] | None:
        a = rng.choice(nodes)
        kind = rng.choice(("found", "parts", "contrasts"))
        if kind == "found":
            return f"What does {name(a)} build on?", foundations(now, a), None
        if kind == "parts":
            return f"What are the parts of {name(a)}?", parts(now, a), None
        return f"What contrasts with {name(a)}?", contrasts(now, a), None

    invalidated = sorted({s for s, _, r, _, inv in graph.edges if r == BUILDS_ON and inv is not None})

    def ignore_invalid() -> tuple[str, set[str], str | None] | None:
        if not invalidated:
            return None
        a = rng.choice(invalidated)
        return f"What does {name(a)} build on?", foundations(now, a), None

    def as_of_past() -> tuple[str, set[str], str | None] | None:
        if not invalidated:
            return None
        a = rng.choice(invalidated)
        return f"As of 1 January 2025, what did {name(a)} build on?", foundations(past, a), ASK_PAST

    makers = {
        "k_hop": k_hop,
        "remote": remote,
        "middle": middle,
        "intersection": intersection,
        "negation": negation,
        "relation": relation,
        "ignore_invalid": ignore_invalid,
        "as_of_past": as_of_past,
    }
    for template in TEMPLATES:
        sample(template, makers[template])
    return out


def run_size(
    n: int,
    *,
    synthesizer: Any,
    url: str,
    per_template: int = 8,
    seed: int = 11,
) -> dict[str, Any]:
    """Generate, load into ``url`` (an empty database), ask every question through the loop."""
    from control_plane.planning.loop import Planner
    from data_plane.database import connect
    from data_plane.reads import GraphReader
    from evals.baselines import LoopSystem

    graph = generate(n, seed=seed)
    load(graph, url)
    questions = make_questions(graph, per_template=per_template, seed=seed)
    engine = connect(url)
    try:
        loop = LoopSystem(Planner(GraphReader(engine), synthesizer))
        scored: list[tuple[Question, Response, Score]] = []
        for q in questions:
            resp = loop.run(q)
            scored.append((q, resp, score(q.id, q.type, q.concepts, False, resp)))
    finally:
        engine.dispose()
    by_template: dict[str, Any] = {}
    for t in TEMPLATES:
        rows = [(q, r, s) for q, r, s in scored if q.type == t]
        summ = summarise([s for _, _, s in rows])
        by_template[t] = {
            "n": len(rows),
            "correct": sum(1 for *_, s in rows if s.exact_match),
            "accuracy": summ["exact_match"],
            "precision": summ["precision"],
            "recall": summ["recall"],
            "f1": summ["f1"],
            "false_positives": sum(len(set(answer_set(r)) - set(q.concepts)) for q, r, _ in rows),
            "abstained": sum(1 for _, r, _ in rows if r.abstained),
            "mean_rounds": summ["mean_rounds"],
        }
    overall = summarise([s for *_, s in scored])
    return {
        "size": n,
        "edges": len(graph.edges),
        "questions": len(questions),
        "overall": {
            "correct": sum(1 for *_, s in scored if s.exact_match),
            "accuracy": overall["exact_match"],
            "precision": overall["precision"],
            "recall": overall["recall"],
            "f1": overall["f1"],
            "false_positives": sum(len(set(answer_set(r)) - set(q.concepts)) for q, r, _ in scored),
            "mean_rounds": overall["mean_rounds"],
        },
        "by_template": by_template,
        "details": [
            {
                "id": q.id,
                "question": q.question,
                "as_of": q.as_of,
                "gold": list(q.concepts),
                "cited": list(r.cited),
                "abstained": r.abstained,
                "f1": s.f1,
            }
            for q, r, s in scored
        ],
    }


def _markdown(results: Sequence[dict[str, Any]]) -> str:
    from evals.report import fmt

    lines = [
        "| size | template | n | correct | accuracy | P | R | F1 | false pos. | abstained |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for t, s in res["by_template"].items():
            lines.append(
                f"| {res['size']} | {t} | {s['n']} | {s['correct']} | {fmt(s['accuracy'])} | {fmt(s['precision'])} | "
                f"{fmt(s['recall'])} | {fmt(s['f1'])} | {s['false_positives']} | {s['abstained']} |"
            )
        o = res["overall"]
        lines.append(
            f"| {res['size']} | **all** | {res['questions']} | {o['correct']} | {fmt(o['accuracy'])} | {fmt(o['precision'])} | "
            f"{fmt(o['recall'])} | {fmt(o['f1'])} | {o['false_positives']} | |"
        )
    return "\n".join(lines) + "\n"


def summary_table(results: Sequence[dict[str, Any]]) -> str:
    """One row per template: F1 at each size, and correct answers and false positives over all
    sizes; a last row for every template together."""
    from evals.report import fmt

    sizes = [res["size"] for res in results]
    lines = [
        "| template | " + " | ".join(f"F1 @{n}" for n in sizes) + " | correct (all sizes) | false pos. |",
        "|---|" + "---:|" * len(sizes) + "---:|---:|",
    ]
    for t in TEMPLATES:
        rows = [res["by_template"][t] for res in results if t in res["by_template"]]
        f1s = " | ".join(
            fmt(res["by_template"][t]["f1"]) if t in res["by_template"] else "-" for res in results
        )
        correct = f"{sum(r['correct'] for r in rows)}/{sum(r['n'] for r in rows)}"
        lines.append(f"| {t} | {f1s} | {correct} | {sum(r['false_positives'] for r in rows)} |")
    overall = [res["overall"] for res in results]
    f1s = " | ".join(fmt(o["f1"]) for o in overall)
    correct = f"{sum(o['correct'] for o in overall)}/{sum(res['questions'] for res in results)}"
    lines.append(f"| **all** | {f1s} | {correct} | {sum(o['false_positives'] for o in overall)} |")
    return "\n".join(lines)


def _plot(results: Sequence[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(results))
    for i, res in enumerate(results):
        vals = [float(res["by_template"][t]["f1"] or 0.0) for t in TEMPLATES]
        ax.bar([j + i * width for j in range(len(TEMPLATES))], vals, width, label=f"{res['size']} concepts")
    ax.set_xticks([j + width * (len(results) - 1) / 2 for j in range(len(TEMPLATES))])
    ax.set_xticklabels(TEMPLATES, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1")
    ax.set_title("GraphWalk-style benchmark: loop F1 per template and graph size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.graphwalk", description="GraphWalk-style structural benchmark."
    )
    parser.add_argument("--sizes", default="100,150,200,500", help="concept counts, comma-separated")
    parser.add_argument("--per-template", type=int, default=8)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--synthesizer", choices=("offline", "deepseek"), default="offline")
    parser.add_argument("--out", type=Path, default=Path("out/graphwalk"))
    args = parser.parse_args(argv)
    from evals.runner import _quiet_logs, _synthesizer

    _quiet_logs()
    synthesizer = _synthesizer(args.synthesizer)
    results = []
    with tempfile.TemporaryDirectory(prefix="kg-graphwalk-") as tmp:
        for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
            res = run_size(
                n,
                synthesizer=synthesizer,
                url=f"sqlite:///{tmp}/walk{n}.sqlite3",
                per_template=args.per_template,
                seed=args.seed,
            )
            results.append(res)
            o = res["overall"]
            print(
                f"{n:>5} concepts: {o['correct']}/{res['questions']} correct, F1 {o['f1']:.3f}",
                file=sys.stderr,
            )
    args.out.mkdir(parents=True, exist_ok=True)
    report = {
        "command": "python -m evals.graphwalk " + " ".join(argv if argv is not None else sys.argv[1:]),
        "results": results,
    }
    (args.out / "graphwalk.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    md = _markdown(results)
    (args.out / "graphwalk.md").write_text(md, encoding="utf-8")
    _plot(results, args.out / "graphwalk_f1.png")
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
