"""Build the question-forms corpus: learner-style phrasings of the question forms (check, count,
why, order, relate, next, remaining, shared), of the older intents with names written as learners
write them, misspelt names, unsupported questions and bad input, instantiated on two graphs with
gold from ``evals.gold`` (networkx over the bundle files, never the system under test), split ONCE
into ``dev`` and ``test`` by phrasing template; and a blind ``holdout`` written apart from them,
on those two graphs and a third.

Run from the repository root::

    python evals/questions/build_forms.py           # rewrites the forms rows of the question files
    python evals/questions/build_forms.py --check   # fails if the committed rows are stale

Graphs: ``curriculum`` (the bundled curriculum) and ``prereqmap`` (``evals/bundles/prereqmap``);
the holdout also ``musicstats`` (``evals/bundles/musicstats``). Output: the rows of corpus
``forms`` in ``{graph}_{split}.jsonl.gz`` (``curriculum`` and ``prereqmap``: dev, test, holdout;
``musicstats``: holdout), shared with the paraphrase corpus (``evals.corpus``); the holdout's rows
carry ``round: 1`` (the forms corpus's one blind round). Score them with ``kg eval --questions
evals/questions/curriculum_test.jsonl.gz --corpus forms`` (``--bundle evals/bundles/prereqmap`` or
``evals/bundles/musicstats`` for the other graphs). Semantics and gold: docs/evals.md, "Question
forms corpus".

* ``forms_templates.jsonl`` holds one row per template: ``id``, ``form``, ``text`` with slots
  ``{x}``, ``{y}``, ``{k1}``..``{k3}``, the parameters its gold needs (``scope``: direct, transitive
  or either; ``family``: ``order`` or ``builds_on``; ``of`` for a count; ``intent`` and ``style``
  for a names template; ``asks`` for a misspelt one) and ``split``. Within each form the dev and
  test templates were ordered by the SHA-256 of their id and dealt alternately to dev and test,
  once; the builder refuses a file that disagrees. The holdout's templates, written apart, are
  rows of the same file with ``split: holdout``.
* Rounds: the dealt rows are round 1 (no ``round`` key). Rows with ``"round": 2`` to ``5``
  (:data:`LATER_ROUNDS`) came later, to give the reader more dev phrasings to learn general
  mechanisms from: they are dev only (the builder refuses another split) and take no part in the
  dealing. Each round is instantiated after every earlier one, taking its turns in case cycles of
  its own, so every earlier question stays as it was and the new ones follow them in the dev files.
* ``forms_names.jsonl`` holds names as learners write them that no rule derives: the other number
  of a concept's name ("transformers", "sparse matrix") and misspellings ("embedings"), per graph.
  The builder refuses a misspelling that is a known name, contains one, or is not closest to the
  concept it misspells. Rows with ``split: holdout`` are the holdout's own (the others serve dev
  and test), among them rows of style ``unknown`` (no graph): the concepts in no graph its
  questions ask about instead of :data:`evals.corpus.UNKNOWN`.
* Each template is instantiated twice per graph (seeded). Subjects are chosen so that each form's
  answers are balanced: each template asks for a *case* (a check that holds directly, through
  others, reversed or between unrelated concepts; a count that is small, larger or zero; ...)
  taken in turn from its form's cycle of cases, per split and graph. Gold sets are listable (at
  most ``MAX_GOLD`` concepts) and non-empty where the form has no finding.
* "Builds on" wording (``family: builds_on``) on the curriculum is answered from builds_on edges
  only, and used only on subjects where that reading and the learning order agree. Counts of
  direct sets (prerequisites, dependents, foundations, built_by) likewise use only subjects whose
  set is everything directly before (after) them in the learning order, and the direct shared
  needs of two concepts only pairs whose shared prerequisite edges give the same set.
* Every other template of a form also asks about a concept in neither graph (type
  ``unanswerable``, abstain); misspelt, unsupported and bad-input templates abstain anyway.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED  # noqa: E402
from evals import gold  # noqa: E402
from evals.corpus import (  # noqa: E402
    GRAPHS,
    HOLDOUT_GRAPHS,
    MAX_GOLD,
    UNKNOWN,
    Graph,
    check_unknown,
    eligible,
    fill,
    gold_for,
    load_graph,
    question_file,
    read_rows,
    render,
    round_tripped,
    run_builder,
    split_of,
)
from evals.questions import Question  # noqa: E402

HERE = Path(__file__).parent
CORPUS = "forms"
TEMPLATES_FILE = HERE / "forms_templates.jsonl"
NAMES_FILE = HERE / "forms_names.jsonl"
PER_TEMPLATE = 2
SPLITS = ("dev", "test")
HOLDOUT = ("holdout",)
FORMS = ("check", "count", "why", "order", "relate", "next", "remaining", "shared")
ABSTAIN_FORMS = ("misspelt", "unsupported", "bad_input")
COUNTABLE = ("prerequisites", "needed_before", "dependents", "comes_after", "foundations", "built_by")
ONE_NAME_INTENTS = (*COUNTABLE, "about", "lessons_covering", "lessons_before")
NAME_INTENTS = (*ONE_NAME_INTENTS, "path")  # a path names two concepts: {x} and {y}
STYLES = ("lower", "number", "possessive", "contains")
LATER_ROUNDS = (2, 3, 4, 5)  # written after the dealing, for dev only
FAMILIES = ("order", "builds_on")
OTHER_RELATIONS = (RELATED, CONTRASTS_WITH, PART_OF)

SLOT_ORDER = ("k1", "k2", "k3", "x", "y")
Subject = tuple[str, ...]  # concept ids in slot order: (x,), (x, y), (k1, .., km) or (k1, .., km, y)

# -- templates ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One phrasing of a form, with the parameters its gold needs."""

    id: str
    form: str
    text: str
    split: str
    scope: str | None = None
    family: str | None = None
    of: str | None = None
    intent: str | None = None
    style: str | None = None
    asks: str | None = None
    round: int = 1  # 1: dealt to dev or test; later rounds: dev only

    @property
    def slots(self) -> tuple[str, ...]:
        """The slots the text uses, in subject order (knowns, then x, then y)."""
        found = set(re.findall(r"\{(\w+)\}", self.text))
        return tuple(
            sorted(
                found,
                key=lambda slot: (
                    slot not in SLOT_ORDER,
                    SLOT_ORDER.index(slot) if slot in SLOT_ORDER else 0,
                    slot,
                ),
            )
        )

    @property
    def knowns(self) -> int:
        return sum(1 for s in self.slots if s.startswith("k"))

    @property
    def asked(self) -> str:
        """The corpus ``intent``: the form, or the older intent a names template asks."""
        return self.intent if self.form == "names" and self.intent else self.form


XY, X = ("x", "y"), ("x",)
KNOWN = tuple(tuple(f"k{i}" for i in range(1, m + 1)) for m in (1, 2, 3))
# Per form: the parameters a template must carry (with their allowed values) and its slot sets.
RULES: dict[str, tuple[dict[str, tuple[str, ...]], tuple[tuple[str, ...], ...]]] = {
    "check": ({"scope": ("direct", "transitive"), "family": FAMILIES}, (XY,)),
    "count": ({"of": COUNTABLE}, (X,)),
    "why": ({}, (XY,)),
    "order": ({}, (XY,)),
    "relate": ({}, (XY,)),
    "next": ({}, KNOWN),
    "remaining": ({}, tuple((*k, "y") for k in KNOWN)),
    "shared": ({"scope": ("direct", "transitive", "either"), "family": FAMILIES}, (XY,)),
    "names": ({"intent": NAME_INTENTS, "style": STYLES}, (X, XY)),
    "misspelt": ({"asks": ONE_NAME_INTENTS}, (X,)),
    "unsupported": ({}, (X, XY)),
    "bad_input": ({}, (X, XY)),
}


def load_templates(path: Path = TEMPLATES_FILE, splits: tuple[str, ...] = SPLITS) -> list[Template]:
    """The templates of ``splits`` (dev and test, or the holdout), the whole file validated: known
    forms, the parameters each needs, its slots, unique ids and texts, and its split: one of dev,
    test and holdout, the once-only dealing for dev and test (a later round: dev)."""
    out: list[Template] = []
    for row in read_rows(path):
        tid = row.get("id", "?")
        form = row.get("form")
        if form not in RULES:
            raise ValueError(f"{path.name}: template {tid}: unknown form {form!r}")
        params, slot_sets = RULES[form]
        for key, allowed in params.items():
            if row.get(key) not in allowed:
                raise ValueError(f"{path.name}: template {tid}: {key} must be one of {allowed}")
        extra = set(row) - {"id", "form", "text", "split", "round", *params}
        if extra:
            raise ValueError(f"{path.name}: template {tid}: unexpected {sorted(extra)}")
        if "round" in row and row["round"] not in LATER_ROUNDS:
            raise ValueError(
                f"{path.name}: template {tid}: round must be one of {LATER_ROUNDS} (round 1: no key)"
            )
        if "round" in row and row.get("split") != "dev":
            raise ValueError(f"{path.name}: template {tid}: a round-{row['round']} template is dev only")
        if row.get("split") not in (*SPLITS, *HOLDOUT):
            raise ValueError(f"{path.name}: template {tid}: split must be one of {(*SPLITS, *HOLDOUT)}")
        t = Template(**row)
        if t.slots not in slot_sets or (form == "names" and (t.slots == XY) != (t.intent == "path")):
            raise ValueError(f"{path.name}: template {tid}: slots {t.slots} are not one of {slot_sets}")
        if t.style == "possessive" and "{x}'s" not in t.text:
            raise ValueError(f"{path.name}: template {tid}: a possessive template writes {{x}}'s")
        out.append(t)
    for attr in ("id", "text"):
        values = [getattr(t, attr) for t in out]
        if len(set(values)) != len(values):
            raise ValueError(f"{path.name}: two templates share a{'n' if attr == 'id' else ''} {attr}")
    dealt = split_of([(t.id, t.form) for t in out if t.round == 1 and t.split in SPLITS])
    for t in out:
        if t.round == 1 and t.split in SPLITS and t.split != dealt[t.id]:
            raise ValueError(f"{path.name}: template {t.id} belongs to {dealt[t.id]}, not {t.split}")
    return [t for t in out if t.split in splits]


# -- names as learners write them -------------------------------------------------------------------------


def _forms_of(graph: Graph, numbers: dict[str, str], cid: str) -> list[str]:
    name, aliases = graph.names[cid]
    return [name, *aliases, *([numbers[cid]] if cid in numbers else [])]


@dataclass(frozen=True, eq=False)
class Names:
    """How learners write one graph's concepts beyond :func:`evals.corpus.render`: the other
    number of a name, names that contain another concept's name, misspellings; and the concepts
    in no graph that questions ask about instead (``unknown``)."""

    numbers: dict[str, str]  # id -> the name in the other number
    containing: dict[str, list[str]]  # id -> its written forms that contain another concept's name
    misspelt: list[tuple[str, str]]  # (misspelling, intended id)
    unknown: tuple[str, ...] = UNKNOWN

    @classmethod
    def of(cls, graph: Graph, rows: Sequence[dict[str, Any]], where: str = NAMES_FILE.name) -> Names:
        unknown = tuple(r["text"] for r in rows if r.get("style") == "unknown" and "graph" not in r)
        rows = [r for r in rows if r.get("graph") == graph.name]
        for r in rows:
            if r["id"] not in graph.names or r["style"] not in ("number", "misspelt"):
                raise ValueError(f"{where}: {r} names no concept of {graph.name} or no style")
        numbers = {r["id"]: r["text"] for r in rows if r["style"] == "number"}
        written = {cid: [f.lower() for f in _forms_of(graph, numbers, cid)] for cid in graph.names}
        owner = {f: cid for cid, forms in written.items() for f in forms[:-1] or forms}
        for cid, text in numbers.items():
            if owner.get(text.lower(), cid) != cid:
                raise ValueError(f"{where}: {text!r} is another concept's name")
        containing = {
            cid: hits
            for cid, forms in written.items()
            if (hits := [f for f in forms if _contains_other(f, cid, written)])
        }
        misspelt = [(r["text"], r["id"]) for r in rows if r["style"] == "misspelt"]
        for text, cid in misspelt:
            _check_misspelling(text, cid, written, where)
        return cls(numbers, containing, misspelt, unknown or UNKNOWN)


def _contains_other(form: str, cid: str, written: dict[str, list[str]]) -> bool:
    return any(
        other != cid and len(n) >= 3 and n != form and re.search(rf"\b{re.escape(n)}\b", form)
        for other, names in written.items()
        for n in names
    )


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    neighbouring letters each cost one."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _check_misspelling(text: str, cid: str, written: dict[str, list[str]], where: str) -> None:
    """A misspelling names nothing, contains no name, and is one or two slips from ``cid`` only."""
    low = text.lower()
    for other, names in written.items():
        for n in names:
            if n == low or re.search(rf"\b{re.escape(n)}\b", low):
                raise ValueError(f"{where}: misspelling {text!r} contains the name {n!r} ({other})")
    near = min(edit_distance(low, n) for n in written[cid])
    rival = min(edit_distance(low, n) for other, names in written.items() if other != cid for n in names)
    if not 1 <= near <= 2 or rival <= near:
        raise ValueError(f"{where}: {text!r} is not one or two slips from {cid} alone")


# -- the learning order of one graph, with the subject pools -------------------------------------------------


@dataclass(frozen=True, eq=False)
class Shape:
    """One graph as the forms read it: the learning order (``g``), the builds_on-only order for
    "builds on" wording (the learning order itself where the graph has no builds_on edges), and
    the candidate subjects of each case."""

    graph: Graph
    view: gold.GraphView
    g: nx.DiGraph
    builds_on: nx.DiGraph
    names: Names

    @classmethod
    def of(cls, graph: Graph, names: Names) -> Shape:
        view = graph.view(None)
        g = gold.before_graph(view)
        only = gold.before_graph(view, only=BUILDS_ON) if BUILDS_ON in graph.relations() else g
        return cls(graph, view, g, only, names)

    def order(self, family: str | None) -> nx.DiGraph:
        return self.builds_on if family == "builds_on" else self.g

    @functools.cached_property
    def prerequisite(self) -> nx.DiGraph:
        """The order of the stored prerequisite edges alone (what "prerequisite" names directly)."""
        return gold.before_graph(self.view, only=PREREQUISITE)

    @functools.cached_property
    def anc(self) -> dict[str, frozenset[str]]:
        return {n: frozenset(nx.ancestors(self.g, n)) for n in self.g}

    @functools.cached_property
    def desc(self) -> dict[str, frozenset[str]]:
        return {n: frozenset(nx.descendants(self.g, n)) for n in self.g}

    def pred(self, x: str) -> frozenset[str]:
        return frozenset(self.g.predecessors(x))

    def unordered(self, a: str, b: str) -> bool:
        return a != b and a not in self.anc[b] and b not in self.anc[a]

    @functools.cached_property
    def nodes(self) -> list[str]:
        """Concepts with a place in the learning order (something before or after them)."""
        return sorted(n for n in self.g if self.g.degree(n) > 0)

    @functools.cached_property
    def direct(self) -> list[Subject]:
        return sorted(self.g.edges)

    @functools.cached_property
    def through(self) -> list[Subject]:
        """x before y, two to four steps apart and not directly."""
        out = []
        for x in self.nodes:
            for y, d in nx.single_source_shortest_path_length(self.g, x, cutoff=4).items():
                if d >= 2 and not self.g.has_edge(x, y):
                    out.append((x, y))
        return sorted(out)

    @functools.cached_property
    def reversed(self) -> list[Subject]:
        return sorted((y, x) for x, y in (*self.direct, *self.through))

    @functools.cached_property
    def siblings(self) -> list[Subject]:
        """Unordered pairs that share something directly before them (both orders)."""
        out = {
            (a, b)
            for p in self.nodes
            for a, b in itertools.permutations(sorted(self.g.successors(p)), 2)
            if self.unordered(a, b)
        }
        return sorted(out)

    @functools.cached_property
    def unordered_pairs(self) -> dict[str, list[Subject]]:
        """Unordered pairs by how :func:`evals.gold.relation_between` relates them (no path)."""
        out: dict[str, list[Subject]] = {"shared_foundations": [], "direct": [], "none": []}
        linked = {frozenset((s, t)) for s, t, r in self.view.edges if r in OTHER_RELATIONS}
        for a, b in itertools.combinations(sorted(self.view.concepts), 2):
            if not self.unordered(a, b):
                continue
            if self.anc[a] & self.anc[b]:
                out["shared_foundations"].append((a, b))
            else:
                out["direct" if frozenset((a, b)) in linked else "none"].append((a, b))
        return out


# -- the forms: cases, candidate subjects, gold ----------------------------------------------------------------

ATTEMPTS = 400  # draws of knowns (next, remaining) before a case counts as impossible


def _always(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    return True


def _fits(g: gold.FormGold) -> bool:
    """Gold a learner can be expected to list: a bounded set, non-empty unless a finding says."""
    return len(g.concepts) <= MAX_GOLD and (bool(g.finding) or len(g.concepts) > 0)


@dataclass(frozen=True)
class Form:
    """One question form: its cycle of cases (per template), its gold, and where a case's
    subjects come from: a listed ``pool`` (drawn from at random) or a random ``draw`` (sets of
    knowns); ``ok`` is the extra condition a subject must meet."""

    cases: Callable[[Template], tuple[str, ...]]
    gold: Callable[[Shape, Template, Subject], gold.FormGold]
    pool: Callable[[Shape, Template, str], Sequence[Subject]] | None = None
    draw: Callable[[Shape, Template, str, random.Random], Subject | None] | None = None
    ok: Callable[[Shape, Template, str, Subject], bool] = _always

    def supports(self, shape: Shape, t: Template, case: str) -> bool:
        """Whether the graph has candidates for ``case`` at all (a prerequisite-only graph has no
        edge of another relation, so no "direct" relate case)."""
        return self.pool is None or bool(self.pool(shape, t, case))

    def pick(
        self, shape: Shape, t: Template, case: str, rng: random.Random, used: set[Subject]
    ) -> Subject | None:
        """A subject for ``case`` not used yet, meeting ``ok``, with listable gold; None if none."""

        def good(s: Subject | None) -> bool:
            return (
                s is not None
                and s not in used
                and self.ok(shape, t, case, s)
                and _fits(self.gold(shape, t, s))
            )

        if self.pool is not None:
            pool = self.pool(shape, t, case)
            return next((pool[i] for i in rng.sample(range(len(pool)), len(pool)) if good(pool[i])), None)
        assert self.draw is not None
        return next((s for s in (self.draw(shape, t, case, rng) for _ in range(ATTEMPTS)) if good(s)), None)


def _agrees(shape: Shape, t: Template, fn: Callable[[nx.DiGraph], Any]) -> bool:
    """ "Builds on" wording: the builds_on-only reading gives what the learning order gives."""
    return t.family != "builds_on" or fn(shape.builds_on) == fn(shape.g)


def _pairs(shape: Shape, case: str) -> Sequence[Subject]:
    """Pairs (x, y) by how x stands to y: directly before, before through others, after (either
    way), unordered siblings."""
    return {
        "direct": shape.direct,
        "through": shape.through,
        "tie": shape.through,
        "reversed": shape.reversed,
        "unrelated": shape.siblings,
    }[case]


def _check_cases(t: Template) -> tuple[str, ...]:
    if t.scope == "direct":  # "through" is a "no" here: half yes, half no
        return ("direct", "through", "direct", "reversed", "direct", "unrelated")
    return ("direct", "through", "reversed", "unrelated")


def _check_gold(shape: Shape, t: Template, s: Subject) -> gold.FormGold:
    return gold.check_gold(shape.order(t.family), s[0], s[1], direct=t.scope == "direct")


def _check_ok(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    direct = t.scope == "direct"
    return _agrees(shape, t, lambda g: gold.holds_before(g, s[0], s[1], direct=direct))


@functools.cache
def _counted(shape: Shape, of: str) -> dict[str, list[str]]:
    """Each concept's set for a count of ``of`` (the older intent's gold)."""
    return {x: gold_for(shape.graph, of, (x,), None)[0] for x in shape.nodes}


def _count_gold(shape: Shape, t: Template, s: Subject) -> gold.FormGold:
    assert t.of is not None
    return gold.count_gold(_counted(shape, t.of)[s[0]], s[0])


@functools.cache
def _count_pool(shape: Shape, t: Template, case: str) -> Sequence[Subject]:
    assert t.of is not None
    size = {"zero": range(0, 1), "small": range(1, 4), "large": range(4, MAX_GOLD + 1)}[case]
    return [(x,) for x, members in _counted(shape, t.of).items() if len(members) in size]


def _count_ok(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    """A direct count's set is everything directly before (after) the subject: one reading."""
    assert t.of is not None
    members = set(_counted(shape, t.of)[s[0]])
    if t.of in ("prerequisites", "foundations"):
        return members == shape.pred(s[0])
    if t.of in ("dependents", "built_by"):
        return members == set(shape.g.successors(s[0]))
    return True


def _why_ok(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    """A chain through others has one shortest path, a tie several."""
    if case not in ("through", "tie"):
        return True
    ties = len(list(itertools.islice(nx.all_shortest_paths(shape.g, s[0], s[1]), 2))) > 1
    return ties == (case == "tie")


@functools.cache
def _order_pool(shape: Shape, t: Template, case: str) -> Sequence[Subject]:
    if case == "a_first":
        return sorted({*shape.direct, *shape.through})
    return _pairs(shape, {"b_first": "reversed", "neither": "unrelated"}[case])


@functools.cache
def _relate_pool(shape: Shape, t: Template, case: str) -> Sequence[Subject]:
    if case == "path":
        return sorted({*shape.direct, *shape.through, *shape.reversed})
    return shape.unordered_pairs[case]


def _relate_gold(shape: Shape, t: Template, s: Subject) -> gold.FormGold:
    return gold.relate_gold(shape.view, s[0], s[1])


def _relate_ok(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    return bool(_relate_gold(shape, t, s).finding["how"] == case)


def _shared_pool(shape: Shape, t: Template, case: str) -> Sequence[Subject]:
    if t.scope == "transitive":
        return shape.unordered_pairs["shared_foundations"]
    return shape.siblings


def _shared_sets(g: nx.DiGraph, s: Subject) -> tuple[set[str], set[str]]:
    return gold.shared_needs(g, s[0], s[1], direct=True), gold.shared_needs(g, s[0], s[1], direct=False)


def _shared_ok(shape: Shape, t: Template, case: str, s: Subject) -> bool:
    """``differs``: the other scope would give another set; ``agree`` (wording that does not say
    direct or not): both scopes give the same set."""
    if not _agrees(shape, t, lambda g: _shared_sets(g, s)):
        return False
    direct, transitive = _shared_sets(shape.order(t.family), s)
    if (
        t.scope != "transitive"
        and t.family != "builds_on"
        and _shared_sets(shape.prerequisite, s)[0] != direct
    ):
        return False  # as for counts: a direct set read from prerequisite edges alone is the same set
    return {"agree": direct == transitive, "differs": direct != transitive, "any": True}[case]


def _shared_gold(shape: Shape, t: Template, s: Subject) -> gold.FormGold:
    return gold.shared_gold(shape.order(t.family), s[0], s[1], direct=t.scope != "transitive")


def _near(shape: Shape, k: str) -> list[str]:
    """What a learner who knows ``k`` plausibly knows too: its neighbours and siblings."""
    sib = {s for p in shape.g.predecessors(k) for s in shape.g.successors(p)}
    return sorted((shape.pred(k) | set(shape.g.successors(k)) | sib) - {k})


def _draw_next(shape: Shape, t: Template, case: str, rng: random.Random) -> Subject | None:
    """Knowns near each other: one concept with something after it, and its neighbours."""
    k1 = rng.choice([n for n in shape.nodes if shape.g.out_degree(n) > 0])
    near = _near(shape, k1)
    return (k1, *rng.sample(near, t.knowns - 1)) if len(near) >= t.knowns - 1 else None


def _draw_remaining(shape: Shape, t: Template, case: str, rng: random.Random) -> Subject | None:
    """A goal and knowns before it, one directly (``inside``); or with the last known elsewhere
    (``outside``: something the learner knows that the goal does not need)."""
    m = t.knowns
    y = rng.choice([y for y in shape.nodes if len(shape.anc[y]) > m])
    first = rng.choice(sorted(shape.pred(y)))
    known = [first, *rng.sample(sorted(shape.anc[y] - {first}), m - 1 if case == "inside" else m - 2)]
    if case == "outside":
        known.append(rng.choice(sorted(set(shape.nodes) - shape.anc[y] - shape.desc[y] - {y})))
    return (*known, y)


def _pair_gold(fn: Callable[[nx.DiGraph, str, str], gold.FormGold]) -> Callable[..., gold.FormGold]:
    return lambda shape, t, s: fn(shape.g, s[0], s[1])


FORM_TABLE: dict[str, Form] = {
    "check": Form(_check_cases, _check_gold, pool=lambda shape, t, case: _pairs(shape, case), ok=_check_ok),
    "count": Form(
        lambda t: ("small", "large", "small", "zero", "large", "small"),
        _count_gold,
        pool=_count_pool,
        ok=_count_ok,
    ),
    "why": Form(
        lambda t: ("through", "direct", "tie", "reversed", "through", "unrelated"),
        _pair_gold(gold.why_gold),
        pool=lambda shape, t, case: _pairs(shape, case),
        ok=_why_ok,
    ),
    "order": Form(lambda t: ("a_first", "b_first", "neither"), _pair_gold(gold.order_gold), pool=_order_pool),
    "relate": Form(
        lambda t: ("path", "shared_foundations", "direct", "none"),
        _relate_gold,
        pool=_relate_pool,
        ok=_relate_ok,
    ),
    "next": Form(lambda t: ("any",), lambda shape, t, s: gold.next_gold(shape.g, s), draw=_draw_next),
    "remaining": Form(
        lambda t: ("inside", "outside") if t.knowns >= 2 else ("inside",),
        lambda shape, t, s: gold.remaining_gold(shape.g, s[:-1], s[-1]),
        draw=_draw_remaining,
    ),
    "shared": Form(
        lambda t: ("agree",) if t.scope == "either" else ("differs", "any"),
        _shared_gold,
        pool=_shared_pool,
        ok=_shared_ok,
    ),
}


# -- building -----------------------------------------------------------------------------------------------


@dataclass
class Builder:
    """Instantiates every template on one graph; keeps the case cycles and the subjects used."""

    shape: Shape
    turns: dict[tuple[str, str, int, tuple[str, ...]], int] = field(default_factory=dict)
    used: dict[str, set[Subject]] = field(default_factory=dict)
    unknown_turn: int = 0
    misspelt_turn: int = 0

    @property
    def prefix(self) -> str:
        return {"curriculum": "cu", "prereqmap": "pm", "musicstats": "ms"}[self.shape.graph.name]

    def next_case(self, t: Template) -> list[str]:
        """This template's turn in its form's cycle of cases (per split and round), then the others."""
        form = FORM_TABLE[t.form]
        cycle = tuple(c for c in form.cases(t) if form.supports(self.shape, t, c))
        key = (t.form, t.split, t.round, cycle)
        turn = self.turns.get(key, 0)
        self.turns[key] = turn + 1
        return [cycle[(turn + i) % len(cycle)] for i in range(len(cycle))]

    def subject(self, t: Template, rng: random.Random) -> Subject:
        used = self.used.setdefault(t.form, set())
        for case in self.next_case(t):
            s = FORM_TABLE[t.form].pick(self.shape, t, case, rng, used)
            if s is not None:
                used.add(s)
                return s
        raise ValueError(f"{self.shape.graph.name}: no subject for template {t.id}")

    def question(
        self,
        t: Template,
        n: int,
        text: str,
        qtype: str,
        g: gold.FormGold | None,
        *,
        lessons: Sequence[str] = (),
        suggest: Sequence[str] = (),
    ) -> Question:
        """A question; ``g`` None means it must be abstained on."""
        return Question(
            id=f"{self.prefix}-{t.id}-{n}",
            question=text,
            type=qtype,
            concepts=tuple(sorted(g.concepts)) if g else (),
            abstain=g is None,
            intent=t.asked,
            template=t.id,
            lessons=tuple(lessons),
            match=g.match if g else "exact",
            finding=tuple(g.finding.items()) if g else (),
            suggest=tuple(suggest),
        )

    def misspelling(self) -> tuple[str, str]:
        """The next misspelling (and the concept it means), each used once before any repeats."""
        pool = self.shape.names.misspelt
        order = random.Random(self.shape.graph.name).sample(range(len(pool)), len(pool))
        self.misspelt_turn += 1
        return pool[order[(self.misspelt_turn - 1) % len(pool)]]

    def unknown(self) -> str:
        unknown = self.shape.names.unknown
        u = unknown[self.unknown_turn % len(unknown)]
        self.unknown_turn += 1
        return u


def _fill(t: Template, names: dict[str, str]) -> str:
    """The template's text with the names in; a name ending in s takes a bare apostrophe
    ("transformers' prerequisites"), as learners write the possessive of a plural."""
    text = t.text
    for slot, name in names.items():
        if name.lower().endswith("s"):
            text = text.replace("{" + slot + "}'s", "{" + slot + "}'")
    return fill(text, **names)


def _written(shape: Shape, t: Template, s: Subject, rng: random.Random) -> dict[str, str]:
    return {slot: render(shape.graph, cid, rng) for slot, cid in zip(t.slots, s, strict=True)}


def build_form(b: Builder, t: Template, k: int) -> list[Question]:
    """A form template's questions on one graph: ``PER_TEMPLATE`` subjects, and for every other
    template (``k`` even) one more with a concept in neither graph in one of its slots."""
    rng = random.Random(f"{b.shape.graph.name}:{t.id}")
    out: list[Question] = []
    for n in range(1, PER_TEMPLATE + 1):
        s = b.subject(t, rng)
        out.append(
            b.question(
                t, n, _fill(t, _written(b.shape, t, s, rng)), t.form, FORM_TABLE[t.form].gold(b.shape, t, s)
            )
        )
    if k % 2 == 0:
        names = _written(b.shape, t, s, rng)
        slot = t.slots[-1] if (k // 2) % 2 else t.slots[0]
        names[slot] = b.unknown()
        out.append(b.question(t, PER_TEMPLATE + 1, _fill(t, names), "unanswerable", None))
    return out


def _name_pool(shape: Shape, t: Template) -> list[Subject]:
    """Subjects with a listable answer; the style's (``number``, ``contains``) is written as ``x``."""
    assert t.intent is not None
    pool = eligible(shape.graph, t.intent)
    if t.style == "number":
        return [s for s in pool if s[0] in shape.names.numbers]
    if t.style == "contains":
        return [s for s in pool if s[0] in shape.names.containing]
    return pool


def _name_written(shape: Shape, t: Template, x: str, rng: random.Random) -> str:
    if t.style == "lower":
        return shape.graph.names[x][0].lower()
    if t.style == "number":
        text = shape.names.numbers[x]
        return text.lower() if rng.random() < 0.5 else text
    if t.style == "contains":
        return rng.choice(shape.names.containing[x])
    return render(shape.graph, x, rng)


def _name_slots(shape: Shape, t: Template, s: Subject, x: str, rng: random.Random) -> dict[str, str]:
    """The slots' text: ``x`` as written for the subject, then a path's end as :func:`render` writes it."""
    return dict(zip(t.slots, (x, *(render(shape.graph, c, rng) for c in s[1:])), strict=True))


def build_names(b: Builder, t: Template, k: int) -> list[Question]:
    """An older intent with the subject written as learners write it (gold as the paraphrase
    corpus computes it), and for every other template one unknown concept (as ``x``; a path's
    ``y`` stays known)."""
    assert t.intent is not None
    shape = b.shape
    rng = random.Random(f"{shape.graph.name}:{t.id}")
    pool = _name_pool(shape, t)
    if len(pool) < PER_TEMPLATE:
        raise ValueError(f"{shape.graph.name}: too few subjects for template {t.id}")
    out: list[Question] = []
    for n, s in enumerate(rng.sample(pool, PER_TEMPLATE), start=1):
        concepts, lessons, _ = gold_for(shape.graph, t.intent, s, None)
        g = gold.FormGold(concepts=frozenset(concepts), match="contains" if t.intent == "about" else "exact")
        text = _fill(t, _name_slots(shape, t, s, _name_written(shape, t, s[0], rng), rng))
        out.append(b.question(t, n, text, t.intent, g, lessons=sorted(lessons)))
    if k % 2 == 0:
        text = _fill(t, _name_slots(shape, t, s, b.unknown(), rng))
        out.append(b.question(t, PER_TEMPLATE + 1, text, "unanswerable", None))
    return out


def build_abstain(b: Builder, t: Template, k: int) -> list[Question]:
    """Questions to abstain on: a misspelt name (with the concept to suggest), a question the
    graph cannot answer, or bad input, about real concepts."""
    shape = b.shape
    rng = random.Random(f"{shape.graph.name}:{t.id}")
    out: list[Question] = []
    if t.form == "misspelt":
        for n in range(1, PER_TEMPLATE + 1):
            text, cid = b.misspelling()
            out.append(b.question(t, n, _fill(t, {"x": text}), t.form, None, suggest=[cid]))
        return out
    for n in range(1, PER_TEMPLATE + 1):
        s = tuple(rng.sample(shape.nodes, len(t.slots)))
        out.append(b.question(t, n, _fill(t, _written(shape, t, s, rng)), t.form, None))
    return out


BUILDERS: dict[str, Callable[[Builder, Template, int], list[Question]]] = {
    **dict.fromkeys(FORMS, build_form),
    "names": build_names,
    **dict.fromkeys(ABSTAIN_FORMS, build_abstain),
}


def build_graph(
    shape: Shape, templates: Sequence[Template], splits: tuple[str, ...] = SPLITS
) -> dict[str, list[Question]]:
    """Every question on one graph, by split; round by round, so a later round draws its subjects
    after the earlier ones and leaves their questions as they were."""
    b = Builder(shape)
    out: dict[str, list[Question]] = {split: [] for split in splits}
    seen: dict[str, int] = {}
    for t in sorted(templates, key=lambda t: t.round):
        k = seen.get(t.form, 0)
        seen[t.form] = k + 1
        out[t.split] += BUILDERS[t.form](b, t, k)
    return out


@dataclass(frozen=True)
class Corpus:
    """Templates and the names they are filled with, the graphs they are instantiated on and the
    splits they make; ``blind``: the holdout's (its names rows say ``split: holdout``)."""

    graphs: Mapping[str, Path]
    splits: tuple[str, ...]
    blind: bool = False
    templates: Path = TEMPLATES_FILE
    names: Path = NAMES_FILE

    def template_rows(self) -> list[dict[str, Any]]:
        """The rows of :attr:`templates` this corpus instantiates."""
        return [r for r in read_rows(self.templates) if r.get("split") in self.splits]

    def name_rows(self) -> list[dict[str, Any]]:
        """The rows of :attr:`names` this corpus writes its names with."""
        rows = read_rows(self.names)
        for r in rows:
            if r.get("split", "holdout") != "holdout":
                raise ValueError(f"{self.names.name}: names row {r.get('id')}: split is holdout or absent")
        return [r for r in rows if ("split" in r) == self.blind]

    def shapes(self) -> list[Shape]:
        """Each graph as the forms read it, with the names this corpus writes."""
        rows = self.name_rows()
        graphs = [load_graph(name, bundle) for name, bundle in self.graphs.items()]
        shapes = [Shape.of(graph, Names.of(graph, rows, self.names.name)) for graph in graphs]
        check_unknown(graphs, {u for shape in shapes for u in shape.names.unknown})
        return shapes

    def outputs(self) -> dict[Path, list[Question]]:
        templates = load_templates(self.templates, self.splits)
        blind = 1 if self.blind else None  # the forms corpus has had one blind round
        files: dict[Path, list[Question]] = {}
        for shape in self.shapes():
            for split, built in build_graph(shape, templates, self.splits).items():
                rows = [replace(q, corpus=CORPUS, round=blind) for q in built]
                files[question_file(shape.graph.name, split)] = round_tripped(rows)
        return files


CORPORA = {
    "forms": Corpus(GRAPHS, SPLITS),
    # Written blind to the reader and to the dev/test phrasings; scored once (docs/evals.md).
    "holdout": Corpus(HOLDOUT_GRAPHS, HOLDOUT, blind=True),
}


def outputs() -> dict[Path, list[Question]]:
    return {path: qs for corpus in CORPORA.values() for path, qs in corpus.outputs().items()}


def main(argv: list[str] | None = None) -> int:
    return run_builder(argv, doc=__doc__, outputs=outputs, corpus=CORPUS, script="build_forms.py")


if __name__ == "__main__":
    raise SystemExit(main())
