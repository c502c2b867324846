"""Build the LectureBank question sets: questions learners write about a real prerequisite map.

    python evals/questions/build_lecturebank.py [--check] [--deal]

The graph is LectureBank's (``../shared/dev-graphs/lecturebank``, or ``$KG_DEV_GRAPHS/lecturebank``;
:mod:`evals.dev_graphs`): 208 NLP topics named as annotators wrote them, 913 ``prerequisite``
edges, valid from 2018-01-01, with prerequisite cycles, so it is imported with ``kg import
--set-aside`` (``kg eval --set-aside``). It is not copied into the project: without it this
builder stops with a note and ``--check`` says it skipped.

It fills the phrasings of ``lecturebank_templates.jsonl`` (one row per phrasing: ``id``, ``form``,
``class``, ``text``, ``split`` and the optional ``scope``, ``of``, ``asks``, ``style``,
``as_of``/``as_of_end``, ``n``, ``round``) with the graph's concepts and writes ``lecturebank_dev.jsonl.gz`` and
``lecturebank_test.jsonl.gz`` (rows: the fields of :mod:`evals.questions`, ``corpus:
"lecturebank"`` and the row's ``split``). Same templates and graph, same bytes: every choice is
drawn from a ``random.Random`` seeded by the template id. ``--check`` fails when a committed file
is not what it would write.

**Split.** A phrasing is in one split only. The templates were ordered by the SHA-256 of their id
and dealt once, each to the split with fewer templates of its kind (form, scope, set counted,
number of knowns, relation asked, name style), else of its name style or form within its group,
else of its group (the template's ``class`` when it is not ``plain``, else its ``form``), else in
all; ``--deal`` deals only templates that have no split yet,
so adding a phrasing never moves another. The builder refuses a template without a split or a
group whose splits differ by more than one. The test file is scored, never read by whoever tunes
the reader. Later dev rounds (``round`` in :data:`LATER_ROUNDS` on a ``dev`` template: ids
``lb2-*``) were written after the dealing, blind of the reader and of the test phrasings, to give
whoever tunes the reader more dev phrasings: they are dev only, take no part in the dealing (nor
in its balance), and are instantiated after every earlier template, round by round, so every
question made before them stays as it was and theirs follow in ``lecturebank_dev.jsonl.gz``
(their rows carry no ``round``).

**Gold** comes from :mod:`evals.gold` (networkx over the bundle's CSV files), never from the
system. Learning order B: ``u -> v`` for a prerequisite edge ``u -> v``; pred, anc, succ, desc as
in docs/evals.md ("Forms and gold"). On this prerequisite-only graph "builds on" is read from
prerequisite edges (``foundations`` = the direct prerequisites, ``built_by`` = the direct
dependents); parts, wholes, contrasts and lessons are absent relations (abstain).

**Cycles.** Which row breaks a cycle is the importer's choice. Every gold is computed on B_full
(every edge) and on B_bare (B_full without every edge inside a strongly connected component of
more than one concept); whatever rows an import sets aside, the graph it keeps lies between the
two. A question is kept only when its gold does not depend on where in that range the graph is:

* sets and yes/no answers that only grow with the edges (pred, anc, succ, desc, their counts,
  ``check``, ``order``'s two "is x before y", ``shared`` (an intersection of such sets)): equal at
  both ends, hence everywhere between;
* ``path`` and ``why`` (all shortest paths): equal at both ends with the same length; a graph in
  between has that length too (it is squeezed between the two), so its shortest paths are squeezed
  between the two equal sets;
* ``remaining`` (anc(y) minus K*, K* = the knowns and all before them): anc(y) and K* each equal at
  both ends;
* ``next`` (c outside K* with pred(c) non-empty and inside K*): K* equal at both ends, and no
  concept both in for some pred P between pred_bare(c) and pred_full(c) (c outside K*, pred_bare
  inside K* and some of pred_full in K*: P = that part with pred_bare) and out for another (c in
  K*, pred_bare empty, or pred_full not inside K*); e.g. a learner who knows linear algebra and
  matrix multiplication but neither of the two-cycle "dimensionality reduction" and "singular-value
  decomposition" is ready for whichever of the two the import left without the other, so
  no "next" is asked for such a learner;
* ``relate`` (shortest paths either way, else the nearest shared foundations): no cycle edge
  joins two concepts of its region (both concepts, everything before and after either), which
  holds every path and foundation it reads, so every graph in between reads the same.

Gold sets hold 1-15 concepts. Wording without a scope ("what comes after X", "what do X and Y
share") is only asked where the direct and the transitive answers agree (``scope: either``); a
scoped wording prefers subjects where they differ, so reading the scope matters.

**Names as learners type them.** Each concept slot takes a style, drawn per question: as stored,
lower case, or (half the time, when the concept has one) a variant. A variant is kept only if it
names exactly one concept of the whole graph under the learner fold (NFKC, case, apostrophes
dropped, hyphens and underscores as spaces, parentheses and colons dropped, each word's plural
folded to its singular) and under the same fold with spaces removed, and is not the fold of any
other concept's name or short form (qualifier dropped, abbreviation). The variants:

* ``apostrophe``: an apostrophe dropped (``CNN's`` -> ``CNNs``);
* ``hyphen``: a hyphen between two words of two letters or more as a space (``First-order logic``
  -> ``first order logic``), and the compounds of :data:`COMPOUNDS` written with hyphens
  (``Context Free Grammar`` -> ``context-free grammar``);
* ``joined``: a hyphen after one letter or after ``multi`` dropped (``K-nn`` -> ``knn``,
  ``Multi-task Learning`` -> ``multitask learning``);
* ``qualifier``: a parenthetical or a subtitle after a colon dropped (``Information Theory:
  coding`` -> ``information theory``); ``abbreviation``: the parenthetical abbreviation in place of
  what it abbreviates, or alone (``EM algorithm``, ``EM``);
* ``number``: the last word in the other number, for the nouns of :data:`NUMBER` (``Decision
  Trees`` -> ``decision tree``), and a possessive plural as its singular (``CNN's`` -> ``CNN``).

A ``class: set_aside`` template asks a graph question and, in the same message, something the
graph cannot hold (who won a cup, a price in 2021): ``expect.set_aside`` is true, the gold is the
graph question's, and the answer must say what it set aside (the date is the aside's, never the
question's time). A few concepts carry the rare variants, so ``class: names`` templates (each with a ``style``) ask
only about concepts that have their style, written in it: ``apostrophe``, ``qualifier``,
``abbreviation``, ``joined``, and ``contains`` (a name holding another concept's whole name, as
stored or in lower case: ``Bio Text Mining`` holds ``Text mining``; the longer one is the subject).

Abstain classes (``expect.abstain``), each with its own phrasings: ``misspelt`` (one or two slips
from a concept and further from every other, naming nothing; ``expect.suggest``: the concept),
``ambiguous_name`` (a word of several names and the name of none, e.g. ``regression``;
``expect.suggest``: every concept whose name has it), ``partial_name`` (a word of exactly one name,
e.g. ``attention`` for ``Attention Models``: abstain with that one as the suggestion, never a
guess), ``unsupported`` (duration, people, dates, cost...), ``bad_input``, absent relations,
``two_questions`` (two graph questions at once), and time words before the graph's valid time (``temporal``:
"back in 2015"). "As of 2020" is now (``class: temporal``; ``expect.as_of`` is the window the
words mean). Every other template of the answerable forms also asks once about a topic the graph
lacks (``type: unanswerable``; :data:`UNKNOWN` names nothing in the graph).
"""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import itertools
import json
import os
import random
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402
from rapidfuzz.distance import DamerauLevenshtein  # noqa: E402

from evals import gold  # noqa: E402
from evals.dev_graphs import ENV, dev_graph, dev_graphs_folder  # noqa: E402
from evals.questions import Question, parse_question, read_rows, write_or_check  # noqa: E402

CORPUS = "lecturebank"
GRAPH = "lecturebank"
HERE = ROOT / "evals" / "questions"
TEMPLATES = HERE / "lecturebank_templates.jsonl"
SPLITS = ("dev", "test")
SEED = "lecturebank-2018"
MAX_GOLD = 15
VALID_FROM = "2018-01-01"

# -- the data the rules read ---------------------------------------------------------------------------

# Compounds learners write with hyphens where the graph has spaces ("hyphen" style).
COMPOUNDS = (
    "context free",
    "context sensitive",
    "k means",
    "q learning",
    "part of speech",
    "bag of words",
    "word sense",
    "tree adjoining",
    "noisy channel",
    "character level",
    "monte carlo",
    "search engine",
    "sentence boundary",
)
# Countable nouns whose number a learner changes at the end of a name ("number" style).
NUMBER = {
    "algorithm": "algorithms",
    "autoencoder": "autoencoders",
    "bot": "bots",
    "car": "cars",
    "database": "databases",
    "embedding": "embeddings",
    "expression": "expressions",
    "field": "fields",
    "function": "functions",
    "gram": "grams",
    "grammar": "grammars",
    "graph": "graphs",
    "machine": "machines",
    "method": "methods",
    "metric": "metrics",
    "model": "models",
    "network": "networks",
    "problem": "problems",
    "process": "processes",
    "system": "systems",
    "tree": "trees",
    "unit": "units",
    "walk": "walks",
}
# Misspellings learners make (concept id -> text): one or two slips, checked by the builder.
MISSPELT = {
    "gradient_descent": "gradient decent",
    "backpropagation": "backpropogation",
    "hidden_markov_models": "hidden markov modles",
    "latent_dirichlet_allocation": "latent dirichelet allocation",
    "kullback_leibler_divergence": "Kullback-Liebler divergence",
    "bayes_theorem": "bayes theorm",
    "boltzmann_machine": "Boltzman machine",
    "sentiment_analysis": "sentiment anaylsis",
    "dependency_parsing": "dependancy parsing",
    "named_entity_recognition": "named entity recogntion",
    "reinforcement_learning": "reinforcment learning",
    "logistic_regression": "logistic regresion",
    "dimensionality_reduction": "dimensionality reducton",
    "transliteration": "transliteraton",
    "crowdsourcing": "crowdsorcing",
    "spectral_clustering": "spectral clusterring",
    "markov_chain_monte_carlo": "markov chain monte carol",
    "lexicography": "lexicograhpy",
    "word_sense_disambiguation": "word sense disambigation",
    "conditional_random_fields": "conditional random feilds",
    "regularization": "regularizaton",
    "bayesian_network": "baysian network",
}
# Words of several names and the name of none: the reader must ask which (suggest them all).
AMBIGUOUS = (
    "regression",
    "summarization",
    "machine translation",
    "disambiguation",
    "analysis",
    "logic",
    "calculus",
    "resolution",
    "extraction",
    "detection",
    "markov",
    "monte carlo",
    "gradient",
    "indexing",
    "programming",
    "decomposition",
    "bayes",
    "spectral",
    "latent",
    "recurrent",
)
# Words of exactly one name and not a name: a partial name, suggested, never guessed.
PARTIAL = (
    "attention",
    "sampling",
    "dirichlet",
    "treebank",
    "entailment",
    "boltzmann",
    "locomotion",
    "simplification",
    "factorization",
    "capsule",
)
# Topics LectureBank does not have, none containing one of its names.
UNKNOWN = (
    "BERT",
    "byte pair encoding",
    "Kalman filters",
    "photosynthesis",
    "plate tectonics",
    "knowledge distillation",
    "contrastive learning",
    "prompt engineering",
    "diffusion models",
    "Fourier transform",
    "quantum annealing",
    "sourdough baking",
    "mixture of experts",
    "Byzantine fault tolerance",
    "protein folding",
    "medieval siege warfare",
)

VARIANTS = ("apostrophe", "hyphen", "joined", "qualifier", "abbreviation", "number")
# A names template's style: a variant, or a name that holds another concept's whole name.
NAME_STYLES = (*VARIANTS, "contains")
ONE_SUBJECT = ("prerequisites", "needed_before", "dependents", "comes_after", "foundations", "built_by")
TWO_SUBJECT = ("path", "check", "why", "order", "relate", "shared")
ANSWERABLE = (*ONE_SUBJECT, *TWO_SUBJECT, "about", "count", "next", "remaining")
ABSTAIN = (
    "misspelt",
    "ambiguous_name",
    "partial_name",
    "unsupported",
    "bad_input",
    "absent_relation",
    "two_questions",
)
ABSENT = ("parts", "wholes", "contrasts", "lessons_covering", "lessons_before")
CLASSES = ("plain", "context", "temporal", "past", "set_aside", "names")
SCOPES = ("direct", "transitive", "either")
COUNT_OF = ("prerequisites", "needed_before", "dependents", "comes_after")
DEFAULT_N = 3
ABSTAIN_N = 2
LATER_ROUNDS = (2,)  # dev-only rounds written after the dealing (module docstring, "Split")


# -- names -----------------------------------------------------------------------------------------------


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and re.search(r"(sses|ches|shes|xes)$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not re.search(r"(ss|us|is)$", word):
        return word[:-1]
    return word


@functools.cache
def strict(text: str) -> str:
    """A name as compared before plural folding: NFKC, case, apostrophes, hyphens, brackets."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"['’‘`]", "", t)
    t = re.sub(r"[-–_/]", " ", t)
    t = re.sub(r"[():,.?!]", " ", t)
    return " ".join(t.split())


@functools.cache
def fold(text: str) -> str:
    """The learner fold: :func:`strict` with every word's plural folded to its singular."""
    return " ".join(_singular(w) for w in strict(text).split())


def _keys(text: str) -> set[str]:
    """The keys a text is compared by: its strict form, its fold, and its fold without spaces."""
    return {strict(text), fold(text), fold(text).replace(" ", "")}


def _has_words(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\S){re.escape(phrase)}(?!\S)", text) is not None


@dataclass(frozen=True)
class Names:
    """The graph's names and how learners write them, every variant checked against every name."""

    stored: Mapping[str, str]  # id -> name as stored
    short: Mapping[str, tuple[str, ...]]  # id -> its short forms (qualifier dropped, abbreviation)
    variants: Mapping[str, tuple[tuple[str, str], ...]]  # id -> ((style, text), ...)

    @classmethod
    def build(cls, stored: Mapping[str, str]) -> Names:
        short = {cid: _short_forms(name) for cid, name in stored.items()}
        owners: dict[str, set[str]] = {}
        for cid, name in stored.items():
            for form in (name, *(text for _, text in short[cid])):
                for key in _keys(form):
                    owners.setdefault(key, set()).add(cid)
        clashing = {key: ids for key, ids in owners.items() if len(ids) > 1}
        if clashing:
            raise ValueError(f"names the learner fold cannot tell apart: {clashing}")
        variants: dict[str, tuple[tuple[str, str], ...]] = {}
        for cid, name in sorted(stored.items()):
            kept = []
            for style, text in [*short[cid], *_spellings(name)]:
                if text.lower() == name.lower():
                    continue
                if all(owners.get(key, {cid}) == {cid} for key in _keys(text)) and cid in owners.get(
                    fold(text), set()
                ) | owners.get(fold(text).replace(" ", ""), set()):
                    kept.append((style, text))
            variants[cid] = tuple(dict.fromkeys(kept))
        return cls(stored, {cid: tuple(t for _, t in s) for cid, s in short.items()}, variants)

    def owners(self, text: str) -> set[str]:
        """The concepts whose name or short form ``text`` folds to."""
        keys = _keys(text)
        return {
            cid
            for cid, name in self.stored.items()
            if keys & {k for form in (name, *self.short[cid]) for k in _keys(form)}
        }

    def containing(self, phrase: str) -> set[str]:
        """The concepts whose folded name has the folded ``phrase`` as whole words."""
        p = fold(phrase)
        return {cid for cid, name in self.stored.items() if _has_words(fold(name), p)}

    def render(self, cid: str, rng: random.Random) -> tuple[str, str]:
        """(style, text): as stored, lower case, or (half the time, when it has one) a variant."""
        name, variants = self.stored[cid], self.variants[cid]
        r = rng.random()
        if variants and r < 0.5:
            return rng.choice(variants)
        if r < 0.75 and name.lower() != name:
            return "lower", name.lower()
        return "stored", name


def _short_forms(name: str) -> list[tuple[str, str]]:
    """A name's parenthetical or colon qualifier dropped, and its parenthetical abbreviation."""
    out: list[tuple[str, str]] = []
    m = re.fullmatch(r"(.+?)\s*\(([^)]+)\)\s*(.*)", name)
    if m:
        head, inner, tail = m.groups()
        out.append(("qualifier", " ".join(f"{head} {tail}".split())))
        if re.fullmatch(r"[A-Z]{2,6}", inner):
            out.append(("abbreviation", " ".join(f"{inner} {tail}".split())))
            out.append(("abbreviation", inner))
    m = re.fullmatch(r"(.+?):\s*(.+)", name)
    if m:
        out.append(("qualifier", m.group(1).lower()))
    return out


def _spellings(name: str) -> list[tuple[str, str]]:
    """Rule-derived spellings of a name (each still to be checked against every name)."""
    out: list[tuple[str, str]] = []
    low = name.lower()
    if "'" in name:
        out.append(("apostrophe", name.replace("'", "")))
        out.append(("apostrophe", low.replace("'", "")))
        if name.endswith("'s"):
            out.append(("number", name[:-2]))
    if re.search(r"\w{2,}-\w{2,}", name):
        out.append(("hyphen", re.sub(r"(?<=\w{2})-(?=\w{2})", " ", low)))
    for compound in COMPOUNDS:
        if _has_words(low, compound):
            out.append(("hyphen", low.replace(compound, compound.replace(" ", "-"))))
    if re.search(r"(\b\w|\bmulti)-", low):
        out.append(("joined", re.sub(r"(\b\w|\bmulti)-", r"\1", low)))
    words = low.split()
    last = words[-1] if words else ""
    plural = {v: k for k, v in NUMBER.items()}
    base = last.split("-")[-1]
    # Not where the name already has another plural word, a parenthesis or an "and".
    plain = not re.search(r"[()]| and ", low) and all(_singular(w) == w for w in words[:-1])
    if (base in NUMBER or base in plural) and plain:
        other = NUMBER.get(base) or plural[base]
        out.append(("number", " ".join([*words[:-1], last[: len(last) - len(base)] + other])))
    return out


# -- the graph at both ends of the cycle range ------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Graph:
    """LectureBank's learning order with every edge (``full``) and without the edges inside its
    cycles (``bare``), and its names; what is before and after each concept, cached."""

    full_view: gold.GraphView
    bare_view: gold.GraphView
    full: nx.DiGraph
    bare: nx.DiGraph
    names: Names
    _anc: dict[tuple[bool, str], frozenset[str]] = field(default_factory=dict)
    _desc: dict[str, frozenset[str]] = field(default_factory=dict)
    _succ: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, bundle: Path) -> Graph:
        with (bundle / "concepts.csv").open(encoding="utf-8", newline="") as fh:
            stored = {r["id"]: r["name"] for r in csv.DictReader(fh)}
        return cls.of(gold.load_bundle_view(bundle), Names.build(stored))

    @classmethod
    def of(cls, view: gold.GraphView, names: Names) -> Graph:
        """``view`` as the full end; the bare end drops every edge inside a cycle."""
        full = gold.before_graph(view)
        cyclic = [c for c in nx.strongly_connected_components(full) if len(c) > 1]
        inside = {(u, v) for c in cyclic for u, v in full.subgraph(c).edges}
        bare_view = gold.GraphView.of(view.concepts, {e for e in view.edges if (e[0], e[1]) not in inside})
        return cls(view, bare_view, full, gold.before_graph(bare_view), names)

    def at(self, view: gold.GraphView) -> Graph:
        """The graph with ``view`` at both ends (e.g. the edges an import kept)."""
        g = gold.before_graph(view)
        return Graph(view, view, g, g, self.names)

    @property
    def concepts(self) -> list[str]:
        return sorted(self.full_view.concepts)

    @property
    def cycle_edges(self) -> set[tuple[str, str]]:
        return set(self.full.edges) - set(self.bare.edges)

    def ends(self) -> tuple[tuple[nx.DiGraph, gold.GraphView], tuple[nx.DiGraph, gold.GraphView]]:
        return (self.full, self.full_view), (self.bare, self.bare_view)

    def agreed(self, f: Callable[[nx.DiGraph, gold.GraphView], Any]) -> Any:
        """``f`` at both ends when they agree, else None."""
        a, b = (f(g, v) for g, v in self.ends())
        return a if a == b else None

    def anc(self, x: str, *, bare: bool = False) -> frozenset[str]:
        if (bare, x) not in self._anc:
            self._anc[bare, x] = frozenset(nx.ancestors(self.bare if bare else self.full, x))
        return self._anc[bare, x]

    def desc(self, x: str) -> frozenset[str]:
        if x not in self._desc:
            self._desc[x] = frozenset(nx.descendants(self.full, x))
        return self._desc[x]

    def succ(self, x: str) -> frozenset[str]:
        if x not in self._succ:
            self._succ[x] = frozenset(self.full.successors(x))
        return self._succ[x]

    def known(self, ks: Sequence[str]) -> frozenset[str] | None:
        """K* (the knowns and all before them) when both ends agree."""
        full = frozenset(ks).union(*(self.anc(k) for k in ks))
        bare = frozenset(ks).union(*(self.anc(k, bare=True) for k in ks))
        return full if full == bare else None

    def standing(self, a: str, b: str) -> str | None:
        """:func:`_standing` on the full graph, from the caches; None for two concepts with
        nothing before both (not worth asking about)."""
        if b in self.succ(a):
            return "edge"
        if a in self.anc(b):
            return "through"
        if b in self.anc(a):
            return "reversed"
        return "unrelated" if self.anc(a) & self.anc(b) else None

    def relation(self, a: str, b: str) -> str:
        """The ``how`` of a relate question on the full graph, from the caches."""
        if a in self.anc(b) or b in self.anc(a):
            return "path"
        return "shared_foundations" if self.anc(a) & self.anc(b) else "none"

    def region_is_acyclic(self, xs: Iterable[str]) -> bool:
        """No cycle edge joins two concepts of xs, everything before them and everything after."""
        region: set[str] = set()
        for x in xs:
            region |= {x} | self.anc(x) | self.desc(x)
        return not any(u in region and v in region for u, v in self.cycle_edges)


@dataclass(frozen=True)
class Gold:
    """One question's gold: the set, the finding, how it is matched; or abstain (with suggestions)."""

    concepts: frozenset[str] = frozenset()
    finding: Mapping[str, Any] = field(default_factory=dict)
    match: str = "exact"
    abstain: bool = False
    suggest: tuple[str, ...] = ()

    @classmethod
    def of(cls, form: gold.FormGold) -> Gold:
        return cls(form.concepts, dict(form.finding), form.match)


def _sized(concepts: Iterable[str]) -> bool:
    return 1 <= len(set(concepts)) <= MAX_GOLD


def _ancestors(g: nx.DiGraph, _view: gold.GraphView, x: str) -> set[str]:
    """:func:`evals.gold.needed_before` on the order graph already built from the view."""
    return set(nx.ancestors(g, x))


def _descendants(g: nx.DiGraph, _view: gold.GraphView, x: str) -> set[str]:
    """:func:`evals.gold.comes_after` on the order graph already built from the view."""
    return set(nx.descendants(g, x))


def _direct(
    f: Callable[[gold.GraphView, str], set[str]],
) -> Callable[[nx.DiGraph, gold.GraphView, str], set[str]]:
    return lambda _g, view, x: f(view, x)


# A set-valued intent's gold on (order graph, view, concept).
SETS: dict[str, Callable[[nx.DiGraph, gold.GraphView, str], set[str]]] = {
    "prerequisites": _direct(gold.direct_prerequisites),
    "needed_before": _ancestors,
    "dependents": _direct(gold.dependents),
    "comes_after": _descendants,
    "foundations": _direct(gold.direct_prerequisites),  # "builds on", read from prerequisite edges
    "built_by": _direct(gold.dependents),
}
# The other scope of a set-valued intent: "either" wording needs both to agree.
OTHER_SCOPE = {
    "prerequisites": "needed_before",
    "needed_before": "prerequisites",
    "dependents": "comes_after",
    "comes_after": "dependents",
    "foundations": "needed_before",
    "built_by": "comes_after",
}


# -- subjects per form and case, and their gold where both ends agree ---------------------------------


Subject = tuple[str, ...]
# The slots a form's subject fills, in the subject's order.
SLOTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((*ONE_SUBJECT, "about", "count"), ("x",)),
    **dict.fromkeys(TWO_SUBJECT, ("x", "y")),
    "next": ("k1", "k2"),
    "remaining": ("k1", "k2", "y"),
}


class Judge:
    """Which subjects a form can be asked about, by case (read off the full graph, cheaply), and
    each one's gold: computed with :mod:`evals.gold` at both ends of the cycle range, None when
    the two ends do not give the same gold (module docstring, "Cycles") or the gold is too big."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self._pools: dict[tuple[Any, ...], dict[str, list[Subject]]] = {}

    # pools ----------------------------------------------------------------------------------

    def pools(self, form: str, scope: str | None, of: str | None, knowns: int) -> dict[str, list[Subject]]:
        key = (form, scope, of, knowns)
        if key not in self._pools:
            self._pools[key] = {case: found for case, found in self._pool(*key).items() if found}
        return self._pools[key]

    def _pool(self, form: str, scope: str | None, of: str | None, knowns: int) -> dict[str, list[Subject]]:
        g, xs = self.g, self.g.concepts
        if form in SETS:
            return {"set": [(x,) for x in xs if _sized(SETS[form](g.full, g.full_view, x))]}
        if form == "about":
            return {"any": [(x,) for x in xs]}
        if form == "count":
            assert of is not None
            return _by(((x,) for x in xs), lambda s: _size_case(len(SETS[of](g.full, g.full_view, s[0]))))
        if form == "path":
            return {
                "path": [
                    (a, b)
                    for a in xs
                    for b, d in sorted(nx.single_source_shortest_path_length(g.full, a, cutoff=5).items())
                    if d >= 2
                ]
            }
        if form in ("check", "why", "order"):
            return _by(itertools.permutations(xs, 2), lambda s: g.standing(*s))
        if form == "relate":
            return _by(itertools.combinations(xs, 2), lambda s: g.relation(*s))
        if form == "shared":
            return {"pair": [(a, b) for a, b in itertools.combinations(xs, 2) if g.anc(a) & g.anc(b)]}
        if form == "next":
            if knowns == 1:
                return {"next": [(k,) for k in xs if g.succ(k)]}
            return {
                "next": [
                    (a, b)
                    for a, b in itertools.combinations(xs, 2)
                    if g.succ(a) & g.succ(b) and a not in g.anc(b) and b not in g.anc(a)
                ]
            }
        if form == "remaining":
            return {
                "remaining": [
                    (*ks, y)
                    for y in xs
                    for ks in itertools.combinations(sorted(g.anc(y)), knowns)
                    if not any(k in g.anc(j) for k in ks for j in ks)
                ]
            }
        raise ValueError(f"no subjects for form {form!r}")

    # gold -----------------------------------------------------------------------------------

    def gold(self, form: str, scope: str | None, of: str | None, subject: Subject) -> tuple[str, Gold] | None:
        """(case, gold) of ``subject``, or None when the ends disagree or the gold is too big."""
        if form in SETS:
            return self._set(form, scope, subject[0])
        return getattr(self, f"_{form}")(scope, of, subject)  # type: ignore[no-any-return]

    def _set(self, intent: str, scope: str | None, x: str) -> tuple[str, Gold] | None:
        got = self.g.agreed(lambda g, v: frozenset(SETS[intent](g, v, x)))
        other = self.g.agreed(lambda g, v: frozenset(SETS[OTHER_SCOPE[intent]](g, v, x)))
        if got is None or other is None or not _sized(got):
            return None
        same = other == got
        if scope == "either" and not same:
            return None
        return ("same" if same else "differs"), Gold(got)

    def _about(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold]:
        return "any", Gold(frozenset(s), match="contains")

    def _count(self, _scope: str | None, of: str | None, s: Subject) -> tuple[str, Gold] | None:
        assert of is not None
        got = self.g.agreed(lambda g, v: frozenset(SETS[of](g, v, s[0])))
        if got is None or len(got) > MAX_GOLD:
            return None
        return _size_case(len(got)), Gold.of(gold.count_gold(got, s[0]))

    def _path(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        path = self.g.agreed(lambda _g, v: tuple(gold.unique_path(v, *s) or ()))
        return ("path", Gold(frozenset(path))) if path and len(path) <= MAX_GOLD else None

    def _check(self, scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        direct = scope == "direct"
        case = self.g.agreed(lambda g, _v: _standing(g, *s))
        holds = self.g.agreed(lambda g, _v: gold.holds_before(g, *s, direct=direct))
        if case is None or holds is None:
            return None
        return case, Gold.of(gold.check_gold(self.g.full, *s, direct=direct))

    def _why(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        def chain(g: nx.DiGraph, _v: gold.GraphView) -> tuple[Any, ...]:
            nodes = gold.shortest_chain(g, *s)
            return ("", None) if nodes is None else (frozenset(nodes), nx.shortest_path_length(g, *s))

        case = self.g.agreed(lambda g, _v: _standing(g, *s))
        if case is None or self.g.agreed(chain) is None:
            return None
        answer = gold.why_gold(self.g.full, *s)
        if answer.match == "exact" and not _sized(answer.concepts):
            return None
        return case, Gold.of(answer)

    def _order(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        first = self.g.agreed(lambda g, _v: ("", gold.first_of(g, *s)))
        if first is None:
            return None
        case = "neither" if first[1] is None else "first_x" if first[1] == s[0] else "first_y"
        return case, Gold.of(gold.order_gold(self.g.full, *s))

    def _relate(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        if not self.g.region_is_acyclic(s):
            return None
        answer = self.g.agreed(lambda _g, v: gold.relate_gold(v, *s))
        if answer is None or (answer.match == "exact" and not _sized(answer.concepts)):
            return None
        return str(answer.finding["how"]), Gold.of(answer)

    def _shared(self, scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        direct = self.g.agreed(lambda g, _v: frozenset(gold.shared_needs(g, *s, direct=True)))
        every = self.g.agreed(lambda g, _v: frozenset(gold.shared_needs(g, *s, direct=False)))
        if direct is None or every is None:
            return None
        same = direct == every
        got = direct if scope == "direct" else every
        if not _sized(got) or (scope == "either" and not same):
            return None
        return ("same" if same else "differs"), Gold(got)

    def _next(self, _scope: str | None, _of: str | None, ks: Subject) -> tuple[str, Gold] | None:
        have = self.g.known(ks)
        if have is None:
            return None
        for c in self.g.concepts:  # in for no pred between the two ends, or for every one
            lo, hi = set(self.g.bare.predecessors(c)), set(self.g.full.predecessors(c))
            maybe_in = c not in have and lo <= have and bool(hi & have)
            maybe_out = c in have or not lo or not hi <= have
            if maybe_in and maybe_out:
                return None
        got = frozenset(gold.learn_next(self.g.full, ks))
        return ("next", Gold(got)) if _sized(got) else None

    def _remaining(self, _scope: str | None, _of: str | None, s: Subject) -> tuple[str, Gold] | None:
        *ks, y = s
        if self.g.known(ks) is None or self.g.anc(y) != self.g.anc(y, bare=True):
            return None
        got = frozenset(gold.left_before(self.g.full, ks, y))
        return ("remaining", Gold(got)) if _sized(got) else None


def _standing(g: nx.DiGraph, a: str, b: str) -> str:
    """How ``a`` stands to ``b`` in ``g``: an edge, before through others, after, or neither."""
    if g.has_edge(a, b):
        return "edge"
    if gold.holds_before(g, a, b):
        return "through"
    if gold.holds_before(g, b, a):
        return "reversed"
    return "unrelated"


def _size_case(n: int) -> str:
    return "zero" if n == 0 else "small" if n <= 3 else "larger"


def _by(subjects: Iterable[Subject], case: Callable[[Subject], str | None]) -> dict[str, list[Subject]]:
    out: dict[str, list[Subject]] = {}
    for s in subjects:
        c = case(s)
        if c is not None:
            out.setdefault(c, []).append(s)
    return out


# -- templates and questions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One phrasing of ``lecturebank_templates.jsonl`` (module docstring) and the split it is in."""

    id: str
    form: str
    cls: str
    text: str
    split: str
    scope: str | None = None
    of: str | None = None
    asks: str | None = None
    as_of: str | None = None
    as_of_end: str | None = None
    n: int | None = None
    style: str | None = None
    round: int | None = None

    @property
    def later(self) -> bool:
        """A dev template of a later round (written after the dealing, no part of it)."""
        return self.split == "dev" and self.round is not None

    @property
    def group(self) -> str:
        """What the dealing balances within: the class when it is not plain, else the form."""
        return self.form if self.cls == "plain" else self.cls

    @property
    def kind(self) -> tuple[str, ...]:
        """What the dealing also balances within a group: the form, scope, set counted, number
        of knowns, relation asked and name style (so no kind of question is in one split only)."""
        knowns = sum(1 for s in set(self.slots) if s.startswith("k"))
        return (
            self.group,
            self.form,
            self.scope or "",
            self.of or "",
            str(knowns),
            self.asks or "",
            self.style or "",
        )

    @property
    def slots(self) -> list[str]:
        return re.findall(r"\{(\w+)\}", self.text)

    @property
    def intent(self) -> str:
        if self.form == "absent_relation":
            assert self.asks is not None
            return self.asks
        return self.form

    @property
    def instances(self) -> int:
        if self.n is not None:
            return self.n
        return ABSTAIN_N if self.form in ABSTAIN or self.cls == "past" else DEFAULT_N

    def to_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "form": self.form, "class": self.cls}
        for name in ("scope", "of", "asks", "style", "as_of", "as_of_end", "n", "round"):
            if getattr(self, name) is not None:
                row[name] = getattr(self, name)
        row["text"] = self.text
        if self.split:
            row["split"] = self.split
        return row


def load_templates(path: Path = TEMPLATES) -> list[Template]:
    out = []
    for row in read_rows(path):
        t = Template(
            id=row["id"],
            form=row["form"],
            cls=row.get("class", "plain"),
            text=row["text"],
            split=row.get("split", ""),
            scope=row.get("scope"),
            of=row.get("of"),
            asks=row.get("asks"),
            as_of=row.get("as_of"),
            as_of_end=row.get("as_of_end"),
            n=row.get("n"),
            style=row.get("style"),
            round=row.get("round"),
        )
        _check_template(t)
        out.append(t)
    ids = [t.id for t in out]
    if len(ids) != len(set(ids)):
        raise ValueError("template ids must be unique")
    return out


def _check_template(t: Template) -> None:
    where = f"template {t.id}"
    if t.form not in (*ANSWERABLE, *ABSTAIN):
        raise ValueError(f"{where}: unknown form {t.form!r}")
    if t.cls not in CLASSES:
        raise ValueError(f"{where}: unknown class {t.cls!r}")
    scoped = t.form in ("check", "shared") or (t.form in SETS and t.scope is not None)
    if scoped and t.scope not in SCOPES:
        raise ValueError(f"{where}: scope must be one of {SCOPES}")
    if t.form == "count" and t.of not in COUNT_OF:
        raise ValueError(f"{where}: a count needs 'of', one of {COUNT_OF}")
    if t.form == "absent_relation" and t.asks not in ABSENT:
        raise ValueError(f"{where}: an absent relation asks one of {ABSENT}")
    if t.cls in ("temporal", "past") and (t.as_of is None or t.as_of_end is None):
        raise ValueError(f"{where}: time words need the window they mean (as_of, as_of_end)")
    if t.cls == "past" and (t.form not in SETS or t.as_of_end is None or t.as_of_end > VALID_FROM):
        raise ValueError(f"{where}: a past question asks a set before {VALID_FROM}")
    if t.cls == "temporal" and t.as_of is not None and t.as_of < VALID_FROM:
        raise ValueError(f"{where}: a temporal question answered now means a time after {VALID_FROM}")
    if (t.cls == "names") != (t.style is not None) or t.style not in (None, *NAME_STYLES):
        raise ValueError(f"{where}: a names template (only) has a style, one of {NAME_STYLES}")
    if t.cls == "names" and t.form not in (*ONE_SUBJECT, "about"):
        raise ValueError(f"{where}: a names template asks a one-concept form")
    if t.split not in (*SPLITS, ""):
        raise ValueError(f"{where}: split must be one of {SPLITS}")
    if t.round is not None and (t.split != "dev" or t.round not in LATER_ROUNDS):
        raise ValueError(f"{where}: a later round is dev only and one of {LATER_ROUNDS} (round 1: no key)")


def deal(templates: Sequence[Template]) -> list[Template]:
    """Deal the templates that have no split yet, in SHA-256 order of their id, each to the split
    that has fewer of its kind, else of its style (names) or form in its group, else of its group,
    else fewer in all (else dev); the others keep theirs (a later dev round counts for neither)."""
    counts: dict[Any, dict[str, int]] = {}

    def levels(t: Template) -> tuple[Any, ...]:
        return t.kind, (t.group, t.style or t.form), t.group, "all"

    def add(t: Template, split: str) -> None:
        for key in levels(t):
            counts.setdefault(key, dict.fromkeys(SPLITS, 0))[split] += 1

    for t in templates:
        if t.split and not t.later:
            add(t, t.split)
    dealt = {}
    for t in sorted(
        (t for t in templates if not t.split), key=lambda t: hashlib.sha256(t.id.encode()).hexdigest()
    ):
        split = min(SPLITS, key=lambda s: tuple(counts.get(k, {}).get(s, 0) for k in levels(t)))
        add(t, split)
        dealt[t.id] = split
    return [Template(**{**t.__dict__, "split": dealt.get(t.id, t.split)}) for t in templates]


def check_dealing(templates: Sequence[Template]) -> None:
    counts: dict[str, dict[str, int]] = {}
    for t in templates:
        if not t.split:
            raise ValueError(f"template {t.id} has no split: run with --deal once")
        if not t.later:
            counts.setdefault(t.group, dict.fromkeys(SPLITS, 0))[t.split] += 1
    for group, c in counts.items():
        if abs(c["dev"] - c["test"]) > 1:
            raise ValueError(f"group {group}: {c['dev']} dev and {c['test']} test templates")


def check_names(names: Names) -> None:
    """Refuse a misspelling, head word or unknown topic that does not do what its list says."""
    for cid, text in MISSPELT.items():
        target = DamerauLevenshtein.distance(fold(text), fold(names.stored[cid]))
        nearest = min(
            DamerauLevenshtein.distance(fold(text), fold(n)) for c, n in names.stored.items() if c != cid
        )
        named = [c for c, n in names.stored.items() if _has_words(fold(text), fold(n))]
        if not 1 <= target <= 2 or nearest <= target or named or names.owners(text):
            raise ValueError(
                f"misspelling {text!r} of {cid}: {target} slips, nearest other {nearest}, names {named}"
            )
    for word in (*AMBIGUOUS, *PARTIAL):
        found = names.containing(word)
        wanted = range(2, 5) if word in AMBIGUOUS else range(1, 2)
        if names.owners(word) or len(found) not in wanted:
            raise ValueError(f"head word {word!r}: names {sorted(names.owners(word))}, in {sorted(found)}")
    for topic in UNKNOWN:
        named = [c for c, n in names.stored.items() if _has_words(fold(topic), fold(n))]
        near = min(
            (
                DamerauLevenshtein.distance(fold(topic), fold(n)),
                DamerauLevenshtein.normalized_distance(fold(topic), fold(n)),
            )
            for n in names.stored.values()
        )
        if named or near[0] < 3 or near[1] <= 0.25:
            raise ValueError(f"unknown topic {topic!r} names {named} or is near a name {near}")


@dataclass(frozen=True)
class Made:
    """One question, the template and subject it was made from (empty for an abstain class or
    an unknown topic), and how its names were written (for per-style figures)."""

    question: Question
    template: Template
    subject: Subject
    styles: tuple[str, ...]

    @property
    def split(self) -> str:
        return self.template.split


class Builder:
    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self.judge = Judge(graph)
        stored = graph.names.stored
        # Concepts whose name holds another concept's whole name ("Bio Text Mining", "Text mining").
        self._holders = {
            c
            for c, n in stored.items()
            if any(d != c and _has_words(fold(n), fold(m)) for d, m in stored.items())
        }

    def questions(self, templates: Sequence[Template]) -> list[Made]:
        """Every template's questions, a later dev round's after every earlier template."""
        out: list[Made] = []
        order: dict[str, int] = {}
        for t in sorted(templates, key=lambda t: t.round if t.later else 0):
            rng = random.Random(f"{SEED}:{t.id}")
            position = order[t.group] = order.get(t.group, -1) + 1
            made = self._instances(t, rng)
            if t.form in ANSWERABLE and t.cls not in ("past", "names", "set_aside") and position % 2 == 0:
                made.append(self._unknown(t, rng))
            out += made
        return out

    # instances ----------------------------------------------------------------------------------

    def _instances(self, t: Template, rng: random.Random) -> list[Made]:
        if t.cls == "names":
            return self._named(t, rng)
        if t.form in ANSWERABLE and t.cls != "past":
            return self._answerable(t, rng)
        return [self._abstain(t, rng, i) for i in range(1, t.instances + 1)]

    def _answerable(self, t: Template, rng: random.Random) -> list[Made]:
        cases = self._case_order(t)
        used: set[Subject] = set()
        out = []
        for i in range(1, t.instances + 1):
            for attempt in range(len(cases)):
                found = self._find(t, cases[(i - 1 + attempt) % len(cases)], used, rng)
                if found is not None:
                    break
            else:
                raise ValueError(f"template {t.id}: no subject has a gold that survives the cycles")
            used.add(found[0])
            out.append(self._made(t, i, *found, rng))
        return out

    def _named(self, t: Template, rng: random.Random) -> list[Made]:
        """A names template: concepts that have its style, written in it (distinct spellings)."""
        assert t.style is not None
        options = []
        for cid in self.g.concepts:
            texts = self._styled(cid, t.style)
            got = self.judge.gold(t.form, t.scope, t.of, (cid,)) if texts else None
            options += [((cid,), text, got[1]) for text in texts if got is not None]
        if len(options) < t.instances:
            raise ValueError(
                f"template {t.id}: {len(options)} {t.style} spellings with a gold, not {t.instances}"
            )
        picks = rng.sample(options, t.instances)
        return [
            self._question(t, str(i), _filled(t.text, {"x": text}), t.form, answer, (t.style,), subject)
            for i, (subject, text, answer) in enumerate(picks, 1)
        ]

    def _styled(self, cid: str, style: str) -> list[str]:
        """How a names template writes ``cid`` in ``style`` (none: the concept has no such name)."""
        name = self.g.names.stored[cid]
        if style == "contains":
            return [name, name.lower()] if cid in self._holders else []
        return [text for s, text in self.g.names.variants[cid] if s == style]

    @staticmethod
    def _case_order(t: Template) -> list[str]:
        """The cases a template's instances take in turn, starting at a place set by its id."""
        if t.form == "check":
            cases = (
                ["edge", "through", "edge", "unrelated"]
                if t.scope == "direct"
                else ["edge", "through", "reversed", "unrelated"]
            )
        elif t.form in (*SETS, "shared"):
            cases = ["same"] if t.scope == "either" else ["differs", "differs", "same"]
        else:
            cases = {
                "count": ["small", "larger", "zero"],
                "why": ["through", "edge", "reversed", "through", "unrelated"],
                "order": ["first_x", "first_y", "neither"],
                "relate": ["path", "shared_foundations", "none"],
                "path": ["path"],
                "about": ["any"],
                "next": ["next"],
                "remaining": ["remaining"],
            }[t.form]
        shift = int(hashlib.sha256(t.id.encode()).hexdigest(), 16) % len(cases)
        return cases[shift:] + cases[:shift]

    def _find(
        self, t: Template, case: str, used: set[Subject], rng: random.Random
    ) -> tuple[Subject, Gold] | None:
        """A subject of ``case`` not asked yet by this template, its gold agreed at both ends;
        half the time one with a name variant. Random draws first, then every subject in a
        random order."""
        knowns = sum(1 for s in t.slots if s.startswith("k"))
        pools = self.judge.pools(t.form, t.scope, t.of, knowns)
        subjects = pools.get(case) or [s for pool in pools.values() for s in pool]
        if rng.random() < 0.5:
            subjects = [s for s in subjects if any(self.g.names.variants[x] for x in s)] or subjects
        tried: set[Subject] = set(used)

        def fits(subject: Subject) -> tuple[Subject, Gold] | None:
            tried.add(subject)
            got = self.judge.gold(t.form, t.scope, t.of, subject)
            return (subject, got[1]) if got is not None and got[0] == case else None

        for _ in range(64):
            subject = subjects[rng.randrange(len(subjects))]
            if subject not in tried and (found := fits(subject)) is not None:
                return found
        rest = [s for s in subjects if s not in tried]
        rng.shuffle(rest)
        return next((found for s in rest if (found := fits(s)) is not None), None)

    def _made(self, t: Template, i: int, subject: Subject, answer: Gold, rng: random.Random) -> Made:
        text, styles = self._fill(t, subject, rng)
        qtype = "temporal" if t.cls == "temporal" else t.form
        return self._question(t, f"{i}", text, qtype, answer, styles, subject)

    def _fill(self, t: Template, subject: Subject, rng: random.Random) -> tuple[str, tuple[str, ...]]:
        slots = self._slots(t)
        if len(slots) != len(subject):
            raise ValueError(f"template {t.id}: {len(slots)} slots for a subject of {len(subject)}")
        names, styles = {}, []
        for slot, cid in zip(slots, subject, strict=True):
            style, text = self.g.names.render(cid, rng)
            names[slot] = text
            styles.append(style)
        return _filled(t.text, names), tuple(styles)

    def _abstain(self, t: Template, rng: random.Random, i: int) -> Made:
        slots = self._slots(t)
        concepts = self.g.concepts
        suggest: tuple[str, ...] = ()
        styles: list[str] = []
        names: dict[str, str] = {}
        if t.form == "misspelt":
            cid = sorted(MISSPELT)[rng.randrange(len(MISSPELT))]
            names["x"], suggest, styles = MISSPELT[cid], (cid,), ["misspelt"]
        elif t.form in ("ambiguous_name", "partial_name"):
            words = AMBIGUOUS if t.form == "ambiguous_name" else PARTIAL
            word = words[rng.randrange(len(words))]
            names["x"], suggest, styles = word, tuple(sorted(self.g.names.containing(word))), [t.form]
        for slot in slots:
            if slot not in names:
                style, names[slot] = self.g.names.render(concepts[rng.randrange(len(concepts))], rng)
                styles.append(style)
        qtype = "temporal" if t.cls == "past" else t.form
        answer = Gold(abstain=True, suggest=suggest)
        return self._question(t, f"{i}", _filled(t.text, names), qtype, answer, tuple(styles))

    def _unknown(self, t: Template, rng: random.Random) -> Made:
        """The template asked once about a topic the graph lacks, in one of its slots (the others
        name real concepts)."""
        slots = self._slots(t)
        missing = slots[rng.randrange(len(slots))]
        concepts = self.g.concepts
        names, styles = {}, []
        for slot in slots:
            if slot == missing:
                names[slot] = UNKNOWN[rng.randrange(len(UNKNOWN))]
                styles.append("unknown")
            else:
                style, names[slot] = self.g.names.render(concepts[rng.randrange(len(concepts))], rng)
                styles.append(style)
        qtype = "unanswerable"
        return self._question(t, "u", _filled(t.text, names), qtype, Gold(abstain=True), tuple(styles))

    @staticmethod
    def _slots(t: Template) -> list[str]:
        """The template's slots in its form's subject order."""
        wanted = SLOTS.get(t.form, ("x", "y"))
        slots = [s for s in wanted if s in t.slots]
        if set(slots) != set(t.slots):
            raise ValueError(f"template {t.id}: slots {sorted(set(t.slots))}, its form fills {wanted}")
        return slots

    def _question(
        self,
        t: Template,
        suffix: str,
        text: str,
        qtype: str,
        answer: Gold,
        styles: tuple[str, ...],
        subject: Subject = (),
    ) -> Made:
        expect: dict[str, Any] = {"concepts": sorted(answer.concepts)}
        if answer.finding:
            expect["finding"] = dict(answer.finding)
        if answer.suggest:
            expect["suggest"] = list(answer.suggest)
        expect["abstain"] = answer.abstain
        if t.cls == "set_aside":
            expect["set_aside"] = True
        if t.as_of is not None:
            expect["as_of"], expect["as_of_end"] = t.as_of, t.as_of_end
        if answer.match != "exact":
            expect["match"] = answer.match
        qid = f"{t.id}-{suffix}"
        row = {
            "id": qid,
            "question": text,
            "type": qtype,
            "intent": t.intent,
            "template": t.id,
            "expect": expect,
            "corpus": CORPUS,
        }
        return Made(parse_question(row, where=qid), t, subject, styles)


def _filled(text: str, names: Mapping[str, str]) -> str:
    out = text
    for slot, name in names.items():
        out = out.replace("{" + slot + "}", name)
    return out


def style_of(made: Made) -> str | None:
    """How an answerable question writes its names: the first variant it uses, else ``lower`` when
    a name is in lower case, else ``stored``; None for a question to abstain on."""
    if made.question.abstain:
        return None
    variant = next((s for s in made.styles if s in NAME_STYLES), None)
    return variant or ("lower" if "lower" in made.styles else "stored")


# -- files --------------------------------------------------------------------------------------------


def output(split: str) -> Path:
    return HERE / f"{GRAPH}_{split}.jsonl.gz"


def row_of(made: Made) -> dict[str, Any]:
    """A question's record: the fields of :mod:`evals.questions` and its split."""
    return {**made.question.to_dict(), "split": made.split}


def texts(made: Sequence[Made]) -> dict[Path, str]:
    """Each split's file and the text the builder writes into it."""
    return {
        output(split): "".join(
            json.dumps(row_of(m), ensure_ascii=False) + "\n" for m in made if m.split == split
        )
        for split in SPLITS
    }


def load_graph(bundle: Path) -> Graph:
    """The graph at ``bundle`` with its names checked against the name lists."""
    graph = Graph.load(bundle)
    check_names(graph.names)
    return graph


def build(graph: Graph, templates: Sequence[Template] | None = None) -> list[Made]:
    """Every question of both splits, from the templates and ``graph``."""
    templates = load_templates() if templates is None else templates
    check_dealing(templates)
    made = Builder(graph).questions(templates)
    ids = [m.question.id for m in made]
    if len(ids) != len(set(ids)):
        raise ValueError("question ids must be unique")
    return made


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs")
    parser.add_argument("--deal", action="store_true", help="deal templates without a split, then build")
    args = parser.parse_args(argv)
    bundle = dev_graph(GRAPH, os.environ)
    if bundle is None:
        print(f"skipped: no {GRAPH} graph in {dev_graphs_folder(os.environ)} (set {ENV}); nothing built")
        return 0 if args.check else 2
    templates = load_templates()
    if args.deal:
        templates = deal(templates)
        TEMPLATES.write_text("".join(json.dumps(t.to_row(), ensure_ascii=False) + "\n" for t in templates))
    files = texts(build(load_graph(bundle), templates))
    return write_or_check(files, check=args.check, script="build_lecturebank.py")


if __name__ == "__main__":
    raise SystemExit(main())
