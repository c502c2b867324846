"""A generated graph shaped like a real public prerequisite map (a maths / CS / ML syllabus).

Public prerequisite maps (course catalogues, Metacademy-style concept maps, school maths maps) have
one relation only, ``prerequisite``, readable topic names that share words ("Bayesian inference",
"Bayesian neural networks"), a few acronyms, a couple of prerequisites per topic and long chains.
:func:`generate` builds such a graph, deterministically from a seed:

* about 300 concepts named from per-domain word lists (unique names; multi-word names get their
  acronym as an alias when it is unique, e.g. "Maximum likelihood estimation" / "MLE");
* ONLY ``prerequisite`` edges, each from a lower syllabus level to a higher one (so acyclic over
  all time), about 2.5 per concept on average, and every concept above level 0 has a prerequisite
  on the level just below it, so the longest chain is as deep as the level count (16);
* time: everything is valid from 2015-01-01 except a few concepts added on :data:`LATER` or
  :data:`RECENT`, a few prerequisites dropped (``invalid_at``) or added on those dates, and a few
  concepts retired on :data:`RECENT`; so "back in 2018", "as of January 2025" and "today" differ;
* lessons of 3-5 concepts covering most concepts, some added on :data:`LATER`, and a few links
  moved from one lesson to another on :data:`RECENT`.

Every edge has its own reason. :func:`write_bundle` writes a ``kg-bundle/1`` folder, imported
through the real importer; the same ``seed`` gives the same folder, byte for byte.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from data_plane.bundle import BUNDLE_FORMAT
from data_plane.relations import PREREQUISITE

__all__ = [
    "BASE",
    "LATER",
    "RECENT",
    "ConceptRow",
    "EdgeRow",
    "LinkRow",
    "PrereqMap",
    "default_bundle",
    "generate",
    "write_bundle",
]

BASE: Final = "2015-01-01T00:00:00Z"
LATER: Final = "2019-06-01T00:00:00Z"
RECENT: Final = "2025-03-01T00:00:00Z"
SEED: Final = 2024
LEVELS: Final = 16
MEAN_PREREQUISITES: Final = 2.6

# (domain title, level range, modifiers, heads): names are "<modifier> <head>".
_DOMAINS: Final[tuple[tuple[str, tuple[int, int], tuple[str, ...], tuple[str, ...]], ...]] = (
    (
        "Calculus",
        (1, 5),
        ("Partial", "Multivariable", "Numerical", "Vector", "Implicit", "Directional", "Stochastic"),
        ("derivatives", "integration", "differential equations", "series"),
    ),
    (
        "Linear algebra",
        (1, 5),
        ("Orthogonal", "Symmetric", "Sparse", "Positive definite", "Triangular", "Diagonal", "Block"),
        ("matrices", "decompositions", "projections", "transformations"),
    ),
    (
        "Probability",
        (2, 7),
        ("Bayesian", "Gaussian", "Markov", "Poisson", "Conditional", "Joint", "Bernoulli", "Monte Carlo"),
        ("distributions", "processes", "inference", "sampling", "models"),
    ),
    (
        "Statistics",
        (4, 9),
        ("Maximum likelihood", "Robust", "Nonparametric", "Sequential", "Multivariate", "Interval"),
        ("estimation", "hypothesis testing", "regression analysis"),
    ),
    (
        "Algorithms",
        (2, 8),
        ("Binary", "Balanced", "Randomized", "Parallel", "External", "Greedy", "Approximate", "Online"),
        ("search", "sorting", "search trees", "hashing", "graph algorithms"),
    ),
    (
        "Optimization",
        (4, 9),
        ("Convex", "Stochastic gradient", "Linear", "Integer", "Dynamic", "Quadratic", "Constrained"),
        ("optimization", "programming", "methods"),
    ),
    (
        "Machine learning",
        (6, 11),
        ("Linear", "Logistic", "Kernel", "Ridge", "Lasso", "Polynomial", "Softmax", "Bayesian linear"),
        ("regression", "classification"),
    ),
    (
        "Clustering",
        (7, 11),
        ("Spectral", "Hierarchical", "Density-based", "K-means", "Gaussian mixture", "Agglomerative"),
        ("clustering",),
    ),
    (
        "Deep learning",
        (8, 13),
        ("Convolutional", "Recurrent", "Residual", "Graph", "Bayesian", "Siamese", "Capsule", "Spiking"),
        ("neural networks", "network training", "network pruning"),
    ),
    (
        "Language processing",
        (9, 14),
        ("Word", "Sentence", "Document", "Character", "Subword", "Contextual"),
        ("embeddings", "tokenization", "classification"),
    ),
    (
        "Reinforcement learning",
        (10, 15),
        ("Model-based", "Model-free", "Inverse", "Multi-agent", "Hierarchical", "Offline", "Deep"),
        ("reinforcement learning", "policy search", "value estimation"),
    ),
    (
        "Graph theory",
        (2, 7),
        ("Planar", "Bipartite", "Directed", "Weighted", "Random"),
        ("graphs", "graph colouring", "matchings"),
    ),
    (
        "Computer systems",
        (3, 9),
        ("Distributed", "Concurrent", "Real-time", "Embedded", "Fault-tolerant"),
        ("systems", "scheduling", "storage"),
    ),
)
_FOUNDATIONS: Final = (
    "Sets and functions",
    "Logic and proofs",
    "Counting principles",
    "Real numbers",
    "Limits",
    "Derivatives",
    "Integrals",
    "Vectors",
    "Matrices",
    "Probability axioms",
    "Boolean algebra",
    "Number bases",
    "Functions and graphs",
    "Sequences and series",
    "Polynomials",
    "Trigonometry",
    "Complex numbers",
    "Mathematical induction",
    "Recursion",
    "Variables and expressions",
)
_REASONS: Final = (
    "{t} is defined in terms of {s}",
    "Working with {t} requires fluency in {s}",
    "{t} applies the techniques of {s}",
    "The standard treatment of {t} assumes {s}",
    "{s} supplies the notation used throughout {t}",
    "Exercises on {t} start from results of {s}",
)
_SMALL_WORDS: Final = frozenset({"and", "of", "the"})
_ACRONYM_ENDINGS: Final = ("neural networks", "reinforcement learning", "differential equations")
_ALIASES: Final = {
    "Maximum likelihood estimation": "MLE",
    "Linear programming": "LP",
    "Quadratic programming": "QP",
    "Dynamic programming": "DP",
    "Stochastic gradient methods": "SGD",
    "Gaussian processes": "GPs",
    "Markov models": "Markov chains",
    "Monte Carlo sampling": "MC sampling",
}


@dataclass(frozen=True)
class ConceptRow:
    id: str
    name: str
    alias: str
    summary: str
    level: int
    valid_at: str = ""
    invalid_at: str = ""


@dataclass(frozen=True)
class EdgeRow:
    source_id: str
    target_id: str
    reason: str
    valid_at: str = ""
    invalid_at: str = ""


@dataclass(frozen=True)
class LinkRow:
    lesson_id: str
    lesson_title: str
    concept_id: str
    valid_at: str = ""
    invalid_at: str = ""


@dataclass(frozen=True)
class PrereqMap:
    """A prerequisite-only syllabus graph with its lessons (rows as written to the bundle)."""

    seed: int
    concepts: tuple[ConceptRow, ...]
    edges: tuple[EdgeRow, ...]
    links: tuple[LinkRow, ...]


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name.lower()).strip("_").replace("__", "_")


def _acronym(name: str) -> str:
    """The acronym learners use for ``name``, if the field has one ("Recurrent neural networks":
    "RNN"); most topics have none."""
    if name in _ALIASES:
        return _ALIASES[name]
    if not name.endswith(_ACRONYM_ENDINGS):
        return ""
    return "".join(w[0].upper() for w in name.replace("-", " ").split() if w.lower() not in _SMALL_WORDS)


def _names(rng: random.Random, count: int) -> list[tuple[str, str, int]]:
    """``count`` unique (name, domain, level) triples: all foundations plus sampled domain topics."""
    topics = [
        (name, "Foundations", rng.randint(0, 1) if i >= 10 else 0) for i, name in enumerate(_FOUNDATIONS)
    ]
    seen = {t[0].lower() for t in topics}
    pool: list[tuple[str, str, int]] = []
    for title, (lo, hi), mods, heads in _DOMAINS:
        for mod in mods:
            for head in heads:
                name = f"{mod} {head}"
                if name.lower() not in seen:
                    seen.add(name.lower())
                    pool.append((name, title, rng.randint(lo, hi)))
    rng.shuffle(pool)
    chosen = sorted(pool[: count - len(topics)], key=lambda t: t[0])
    ranges = {title: span for title, span, _, _ in _DOMAINS}
    for level in range(LEVELS):  # every level must hold a topic for chains to reach the top
        if not any(lvl == level for _, _, lvl in topics + chosen):
            k = next(k for k, (_, d, _) in enumerate(chosen) if ranges[d][0] <= level <= ranges[d][1])
            chosen[k] = (chosen[k][0], chosen[k][1], level)
    return topics + chosen


def generate(*, seed: int = SEED, concepts: int = 300) -> PrereqMap:
    """The prerequisite map for ``seed`` with ``concepts`` concepts (at most the name pool's size)."""
    rng = random.Random(seed)
    named = _names(rng, concepts)
    by_level: dict[int, list[int]] = {lvl: [] for lvl in range(LEVELS)}
    for i, (_, _, level) in enumerate(named):
        by_level[level].append(i)
    ids = [_slug(name) for name, _, _ in named]
    acronyms = [_acronym(name) for name, _, _ in named]
    taken = {n.lower() for n, _, _ in named}
    counts: dict[str, int] = {}
    for a in acronyms:
        counts[a] = counts.get(a, 0) + 1

    # Later additions and retirements: topics above level 8 with no later topic depending on them
    # is too strict a rule to find enough; instead every edge's validity is clipped to its ends'.
    upper = [i for i, (_, _, lvl) in enumerate(named) if lvl >= 6]
    rng.shuffle(upper)
    added_later = set(upper[:10])
    added_recent = set(upper[10:20])
    retired = set(upper[20:24])
    concept_rows: list[ConceptRow] = []
    for i, (name, domain, level) in enumerate(named):
        alias = (
            acronyms[i]
            if acronyms[i] and counts[acronyms[i]] == 1 and acronyms[i].lower() not in taken
            else ""
        )
        valid = LATER if i in added_later else RECENT if i in added_recent else ""
        concept_rows.append(
            ConceptRow(
                ids[i],
                name,
                alias,
                f"{name} is a {domain.lower()} topic at level {level} of the syllabus.",
                level,
                valid,
                RECENT if i in retired else "",
            )
        )

    # Prerequisites: one on the level just below, the rest from up to four levels below.
    eligible = [i for i in range(len(named)) if named[i][2] > 0]
    total = round(MEAN_PREREQUISITES * len(named))
    want = dict.fromkeys(eligible, 1)
    for _ in range(total - len(eligible)):
        i = rng.choice(eligible)
        if want[i] < 5:
            want[i] += 1
    edges: list[EdgeRow] = []
    pairs: set[tuple[int, int]] = set()
    for j in eligible:
        level = named[j][2]
        same_domain = [i for i in by_level[level - 1] if named[i][1] == named[j][1]]
        first = rng.choice(same_domain if same_domain and rng.random() < 0.6 else by_level[level - 1])
        chosen = [first]
        lower = [i for lvl in range(max(0, level - 4), level) for i in by_level[lvl] if i != first]
        while len(chosen) < want[j] and lower:
            chosen.append(lower.pop(rng.randrange(len(lower))))
        for i in chosen:
            pairs.add((i, j))
    recent_pairs: set[tuple[int, int]] = set()
    while len(recent_pairs) < 12:  # prerequisites added on RECENT between existing topics
        j = rng.choice(eligible)
        level = named[j][2]
        i = rng.choice([k for lvl in range(max(0, level - 3), level) for k in by_level[lvl]])
        if (i, j) not in pairs:
            recent_pairs.add((i, j))
    ordered = sorted(pairs)
    dropped = rng.sample(ordered, 24)
    dropped_later, dropped_recent = set(dropped[:12]), set(dropped[12:])

    def when(i: int, j: int, own_valid: str, own_invalid: str) -> tuple[str, str]:
        starts = [t for t in (concept_rows[i].valid_at, concept_rows[j].valid_at, own_valid) if t]
        ends = [t for t in (concept_rows[i].invalid_at, concept_rows[j].invalid_at, own_invalid) if t]
        start, end = (max(starts) if starts else ""), (min(ends) if ends else "")
        return start, end

    for i, j in sorted(pairs | recent_pairs):
        own_valid = RECENT if (i, j) in recent_pairs else ""
        own_invalid = LATER if (i, j) in dropped_later else RECENT if (i, j) in dropped_recent else ""
        start, end = when(i, j, own_valid, own_invalid)
        if end and start and end <= start:
            continue  # a drop that would precede the edge's own start: leave the edge out
        reason = rng.choice(_REASONS).format(s=named[i][0], t=named[j][0])
        edges.append(EdgeRow(ids[i], ids[j], reason[0].upper() + reason[1:], start, end))

    # Lessons: concepts in syllabus order, 3-5 per lesson, about one in twelve left uncovered.
    order = sorted(range(len(named)), key=lambda i: (named[i][2], named[i][1], named[i][0]))
    links: list[LinkRow] = []
    lesson_no = 0
    k = 0
    moved: list[tuple[int, str]] = []
    while k < len(order):
        size = rng.randint(3, 5)
        group = [i for i in order[k : k + size] if rng.random() >= 1 / 12]
        k += size
        if not group:
            continue
        lesson_no += 1
        lesson = f"PM{lesson_no:03d}"
        title = f"{named[group[0]][1]} {lesson_no}: {named[group[0]][0]}"
        lesson_valid = LATER if rng.random() < 0.1 else ""
        for i in group:
            c = concept_rows[i]
            starts = [t for t in (c.valid_at, lesson_valid) if t]
            invalid = c.invalid_at
            if not invalid and len(group) > 3 and i == group[-1] and rng.random() < 0.25:
                invalid = RECENT
                moved.append((i, lesson))
            links.append(LinkRow(lesson, title, ids[i], max(starts) if starts else "", invalid))
    by_lesson: dict[str, LinkRow] = {}
    for link in links:
        by_lesson.setdefault(link.lesson_id, link)
    lesson_ids = sorted(by_lesson)
    for i, old in moved:  # the concept moves to the next lesson on RECENT
        nxt = lesson_ids[min(lesson_ids.index(old) + 1, len(lesson_ids) - 1)]
        if nxt != old:
            links.append(LinkRow(nxt, by_lesson[nxt].lesson_title, ids[i], RECENT, ""))
    return PrereqMap(seed, tuple(concept_rows), tuple(edges), tuple(links))


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write_bundle(graph: PrereqMap, path: str | Path) -> Path:
    """Write ``graph`` as a ``kg-bundle/1`` folder at ``path``; return the folder."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": BUNDLE_FORMAT,
        "name": f"prereqmap-seed{graph.seed}",
        "description": (
            "Generated maths/CS/ML prerequisite map (evals.prereqmap): prerequisite edges only, "
            "readable topic names, lessons, and a 2019 and a 2025 revision."
        ),
        "defaults": {
            "source": "evals.prereqmap",
            "reason": "Topic of the generated syllabus",
            "confidence": 0.9,
            "evidence": {"generator": "evals.prereqmap", "seed": graph.seed},
            "valid_at": BASE,
        },
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    _write_csv(
        folder / "concepts.csv",
        ("id", "name", "aliases", "summary", "valid_at", "invalid_at"),
        [(c.id, c.name, c.alias, c.summary, c.valid_at, c.invalid_at) for c in graph.concepts],
    )
    _write_csv(
        folder / "concept_edges.csv",
        ("source_id", "target_id", "relation", "reason", "valid_at", "invalid_at"),
        [(e.source_id, e.target_id, PREREQUISITE, e.reason, e.valid_at, e.invalid_at) for e in graph.edges],
    )
    _write_csv(
        folder / "lesson_concepts.csv",
        ("lesson_id", "lesson_title", "concept_id", "valid_at", "invalid_at"),
        [(lk.lesson_id, lk.lesson_title, lk.concept_id, lk.valid_at, lk.invalid_at) for lk in graph.links],
    )
    return folder


def default_bundle() -> Path:
    """The committed bundle of the default seed (regenerate: ``python -m evals.prereqmap``)."""
    return Path(__file__).with_name("bundles") / "prereqmap"


if __name__ == "__main__":
    print(write_bundle(generate(), default_bundle()))
