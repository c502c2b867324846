"""Build the paraphrase corpus: learner-style phrasings of every intent, instantiated on two graphs,
with gold from ``evals.gold`` (networkx over the bundle files, never the system under test), split
ONCE into ``dev`` and ``test`` by phrasing template.

Run from the repository root::

    python evals/questions/build_paraphrases.py           # rewrites the four paraphrase_*.jsonl files
    python evals/questions/build_paraphrases.py --check   # fails if a committed file is stale

Graphs: ``curriculum`` (the bundled curriculum, five relations) and ``prereqmap`` (the generated
prerequisite-only map, ``evals/bundles/prereqmap``). Output: ``paraphrase_{graph}_{split}.jsonl``.

Rules (docs/evals.md has the intents table):

* A template is a phrasing with ``{x}`` (and ``{y}`` for paths). Its wording appears in exactly one
  split: within each intent the templates are ordered by the SHA-256 of their id and dealt
  alternately to dev and test. Adding a template never moves another one.
* Subjects are drawn per template and graph with a seeded RNG among the concepts whose gold is
  non-empty and at most ``MAX_GOLD`` long; names are written as learners write them (as stored,
  lower case, or an alias).
* On the curriculum, direct intents (``prerequisites``, ``dependents``) only use subjects for which
  the prerequisite-only reading and the "anything that comes right before/after" reading agree, so
  "right before X" has one right answer.
* On the prereq map "builds on" is answered from prerequisite edges (``foundations`` = direct
  prerequisites, ``built_by`` = direct dependents). ``parts``, ``wholes`` and ``contrasts`` ask for
  relations the graph does not have: gold is abstain (type ``absent_relation``), because "none" would
  claim a relation was read that does not exist. ``related`` is left out there (no honest gold).
* Time-worded questions carry the time their words mean as ``expect.as_of``/``as_of_end`` (a window
  over which the gold is checked to be constant), NOT as the question's ``as_of``.
* Unknown-concept questions reuse the intent templates with a concept that is in neither graph.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import csv  # noqa: E402

import networkx as nx  # noqa: E402

from data_plane.clock import parse_time  # noqa: E402
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED  # noqa: E402
from evals import gold  # noqa: E402
from evals.prereqmap import default_bundle  # noqa: E402
from evals.questions import Question, dump_questions, parse_question  # noqa: E402

HERE = Path(__file__).parent
GRAPHS = {"curriculum": ROOT / "data_plane" / "curriculum", "prereqmap": default_bundle()}
MAX_GOLD = 15
MAX_LESSONS = 8
PER_TEMPLATE = 2
SPLITS = ("dev", "test")

# -- templates: (id, intent, text) ------------------------------------------------------------------
TEMPLATES: list[tuple[str, str, str]] = [
    # direct prerequisites: prerequisite edges into X
    ("pre-01", "prerequisites", "What are the prerequisites of {x}?"),
    ("pre-02", "prerequisites", "prereqs for {x}?"),
    ("pre-03", "prerequisites", "Which concepts are direct prerequisites for {x}?"),
    ("pre-04", "prerequisites", "What do I need to learn right before {x}?"),
    ("pre-05", "prerequisites", "List the immediate prerequisites of {x}."),
    ("pre-06", "prerequisites", "which topics does {x} directly require"),
    (
        "pre-07",
        "prerequisites",
        "I'm planning to study {x} next. What should I have done immediately before it?",
    ),
    ("pre-08", "prerequisites", "What does {x} directly depend on?"),
    ("pre-09", "prerequisites", "Before starting {x}, which topics are listed as its prerequisites??"),
    ("pre-10", "prerequisites", "whats on the prerequisite list for {x}"),
    ("pre-11", "prerequisites", "Name the direct prerequisites of {x}, please."),
    ("pre-12", "prerequisites", "Tell me the prerequisites for {x}."),
    # everything needed before X: the transitive closure
    ("bef-01", "needed_before", "What do I need to learn before {x}?"),
    ("bef-02", "needed_before", "Everything I should master before tackling {x}, all the way down."),
    ("bef-03", "needed_before", "Give me all the prerequisites, direct and indirect, of {x}."),
    ("bef-04", "needed_before", "What is the full list of topics to study before {x}?"),
    (
        "bef-05",
        "needed_before",
        "which concepts must be in place before {x}, including prerequisites of prerequisites",
    ),
    ("bef-06", "needed_before", "I want to understand {x} from scratch. What has to come first?"),
    ("bef-07", "needed_before", "List every concept that {x} transitively depends on."),
    ("bef-08", "needed_before", "What background do I need, in total, before {x}?"),
    ("bef-09", "needed_before", "what are ALL the things i need before {x}"),
    ("bef-10", "needed_before", "Show the complete chain of prerequisites leading up to {x}."),
    ("bef-11", "needed_before", "From zero, what must a learner cover before reaching {x}?"),
    ("bef-12", "needed_before", "all prerequisites (recursively) of {x}?"),
    # direct dependents: concepts that have X as a prerequisite
    ("dep-01", "dependents", "Which concepts have {x} as a prerequisite?"),
    ("dep-02", "dependents", "What comes right after {x}?"),
    ("dep-03", "dependents", "Which topics require {x} directly?"),
    ("dep-04", "dependents", "What does {x} unlock next?"),
    ("dep-05", "dependents", "List the concepts that list {x} as a direct prerequisite."),
    ("dep-06", "dependents", "I just finished {x}. What can I take immediately after it?"),
    ("dep-07", "dependents", "what directly depends on {x}"),
    ("dep-08", "dependents", "Which topics is {x} a prerequisite for?"),
    ("dep-09", "dependents", "Once I know {x}, which concepts open up straight away??"),
    ("dep-10", "dependents", "Name the topics for which {x} is an immediate prerequisite."),
    ("dep-11", "dependents", "what needs {x} as a prereq"),
    ("dep-12", "dependents", "Show me the next steps right after {x}."),
    # everything after X: the transitive mirror of needed_before
    ("aft-01", "comes_after", "Everything that {x} eventually unlocks?"),
    ("aft-02", "comes_after", "What comes after {x}, directly or indirectly?"),
    ("aft-03", "comes_after", "Which concepts depend on {x}, transitively?"),
    ("aft-04", "comes_after", "List all topics that need {x} somewhere in their prerequisite chain."),
    ("aft-05", "comes_after", "If I skip {x}, which later topics will I be unable to take?"),
    ("aft-06", "comes_after", "what are all the downstream concepts of {x}"),
    ("aft-07", "comes_after", "Show every concept that relies on {x} at any distance."),
    ("aft-08", "comes_after", "Which topics ultimately require {x}?"),
    ("aft-09", "comes_after", "everything downstream of {x} in the curriculum, please"),
    ("aft-10", "comes_after", "Give me the full set of later concepts that rely on {x}, directly or not."),
    ("aft-11", "comes_after", "What does learning {x} open up, all the way to the end?"),
    ("aft-12", "comes_after", "i know {x} now. what can it eventually lead to?"),
    # learning path from X to Y: the unique shortest "before" path, both ends included
    ("pth-01", "path", "What is the learning path from {x} to {y}?"),
    ("pth-02", "path", "How do I get from {x} to {y}?"),
    ("pth-03", "path", "Which concepts connect {x} to {y} in learning order?"),
    ("pth-04", "path", "Trace the path from {x} to {y}."),
    ("pth-05", "path", "how does {x} lead to {y}"),
    ("pth-06", "path", "Map out the steps from {x} to {y}, in order."),
    ("pth-07", "path", "Show me the shortest route from {x} up to {y}."),
    ("pth-08", "path", "Give the chain of topics linking {x} and {y}, starting at {x}."),
    ("pth-09", "path", "from {x} to {y}: which steps?"),
    ("pth-10", "path", "What sequence of concepts takes a learner from {x} to {y}??"),
    # what X builds on
    ("fnd-01", "foundations", "What does {x} build on?"),
    ("fnd-02", "foundations", "Which concepts is {x} built on?"),
    ("fnd-03", "foundations", "What are the foundations of {x}?"),
    ("fnd-04", "foundations", "{x} builds on which topics?"),
    ("fnd-05", "foundations", "what does {x} rest on directly"),
    ("fnd-06", "foundations", "Tell me what {x} builds upon."),
    ("fnd-07", "foundations", "Which ideas does {x} directly build on?"),
    ("fnd-08", "foundations", "I'm reading about {x}; what is it built on top of?"),
    ("fnd-09", "foundations", "List the concepts {x} directly builds on."),
    ("fnd-10", "foundations", "WHAT DOES {x} BUILD ON"),
    # what builds on X
    ("blt-01", "built_by", "What builds on {x}?"),
    ("blt-02", "built_by", "Which concepts build directly on {x}?"),
    ("blt-03", "built_by", "What topics are built on top of {x}?"),
    ("blt-04", "built_by", "once i know {x}, what builds on it"),
    ("blt-05", "built_by", "Which concepts directly build upon {x}?"),
    ("blt-06", "built_by", "List the concepts that use {x} as a foundation."),
    ("blt-07", "built_by", "What is built upon {x}?"),
    ("blt-08", "built_by", "Show me what builds on {x}!"),
    ("blt-09", "built_by", "Which concepts take {x} as their foundation?"),
    ("blt-10", "built_by", "{x}: what builds on it?"),
    # parts of X
    ("prt-01", "parts", "What are the parts of {x}?"),
    ("prt-02", "parts", "What components make up {x}?"),
    ("prt-03", "parts", "What does {x} consist of?"),
    ("prt-04", "parts", "Which subtopics are part of {x}?"),
    ("prt-05", "parts", "break {x} down into its parts"),
    ("prt-06", "parts", "What pieces is {x} made of?"),
    ("prt-07", "parts", "List the components of {x}."),
    ("prt-08", "parts", "Which concepts are components of {x}?"),
    ("prt-09", "parts", "whats inside {x}? list its parts"),
    ("prt-10", "parts", "Name the parts that make up {x}."),
    # what X is part of
    ("who-01", "wholes", "What is {x} part of?"),
    ("who-02", "wholes", "Which larger topic is {x} a part of?"),
    ("who-03", "wholes", "{x} is a component of what?"),
    ("who-04", "wholes", "Where does {x} belong: what bigger topic is it part of?"),
    ("who-05", "wholes", "what is {x} a part of"),
    ("who-06", "wholes", "Which topics have {x} as a component?"),
    ("who-07", "wholes", "Tell me what {x} is a piece of."),
    ("who-08", "wholes", "Of which broader concepts is {x} a part?"),
    ("who-09", "wholes", "I found {x} in my notes. What bigger area is it part of?"),
    ("who-10", "wholes", "Name the wholes that {x} belongs to."),
    # contrasts
    ("con-01", "contrasts", "What does {x} contrast with?"),
    ("con-02", "contrasts", "What is the alternative to {x}?"),
    ("con-03", "contrasts", "What is {x} usually contrasted with?"),
    ("con-04", "contrasts", "{x} versus what?"),
    ("con-05", "contrasts", "Which approaches are alternatives to {x}?"),
    ("con-06", "contrasts", "what's the opposite of {x}"),
    ("con-07", "contrasts", "Compare {x} with its alternatives: which are they?"),
    ("con-08", "contrasts", "Which concepts stand in contrast to {x}?"),
    ("con-09", "contrasts", "What could I use instead of {x}?"),
    ("con-10", "contrasts", "List the concepts that contrast with {x}."),
    # related
    ("rel-01", "related", "What is related to {x}?"),
    ("rel-02", "related", "Which concepts are related to {x}?"),
    ("rel-03", "related", "Show me topics related to {x}."),
    ("rel-04", "related", "what else is related to {x}"),
    ("rel-05", "related", "Which ideas are closely related to {x}?"),
    ("rel-06", "related", "List the concepts related to {x}."),
    ("rel-07", "related", "{x}: related topics?"),
    ("rel-08", "related", "I liked {x}. What related concepts should I look at?"),
    ("rel-09", "related", "What topics are marked as related to {x}?"),
    ("rel-10", "related", "give me concepts related to {x}"),
    # lessons that cover X
    ("lcv-01", "lessons_covering", "Which lessons cover {x}?"),
    ("lcv-02", "lessons_covering", "In which lesson is {x} taught?"),
    ("lcv-03", "lessons_covering", "What lessons teach {x}?"),
    ("lcv-04", "lessons_covering", "where can i learn {x}? which lesson"),
    ("lcv-05", "lessons_covering", "List the lessons that include {x}."),
    ("lcv-06", "lessons_covering", "Which lesson should I open to study {x}?"),
    ("lcv-07", "lessons_covering", "Is {x} covered in any lesson? Which ones?"),
    ("lcv-08", "lessons_covering", "Find the lessons about {x}."),
    ("lcv-09", "lessons_covering", "What lesson covers {x}??"),
    ("lcv-10", "lessons_covering", "Show me lessons that teach {x}."),
    # lessons to take before X
    ("lbf-01", "lessons_before", "Which lessons should I take before {x}?"),
    ("lbf-02", "lessons_before", "What lessons do I need to complete before studying {x}?"),
    ("lbf-03", "lessons_before", "Which lessons cover everything I need before {x}?"),
    ("lbf-04", "lessons_before", "before {x}, which lessons to take"),
    ("lbf-05", "lessons_before", "List the lessons that prepare me for {x}."),
    ("lbf-06", "lessons_before", "I want to learn {x}. Which lessons come first?"),
    ("lbf-07", "lessons_before", "What lessons lead up to {x}?"),
    ("lbf-08", "lessons_before", "Which earlier lessons should I finish before tackling {x}?"),
    ("lbf-09", "lessons_before", "lessons to do before {x}?"),
    ("lbf-10", "lessons_before", "Recommend the lessons to take prior to {x}."),
    # about X
    ("abt-01", "about", "What is {x}?"),
    ("abt-02", "about", "Tell me about {x}."),
    ("abt-03", "about", "explain {x}"),
    ("abt-04", "about", "What's {x}?"),
    ("abt-05", "about", "Give me an overview of {x}."),
    ("abt-06", "about", "I keep hearing about {x}. What is it?"),
    ("abt-07", "about", "Describe {x} briefly."),
    ("abt-08", "about", "what is {x} about"),
    ("abt-09", "about", "Can you summarise {x} for me?"),
    ("abt-10", "about", "{x}?"),
]

# Time words and the valid-time window they mean: (start, end); None = now.
TIMES: dict[str, tuple[str, str] | None] = {
    "2018": ("2018-01-01", "2019-01-01"),
    "2023": ("2023-01-01", "2024-01-01"),
    "jan2025": ("2025-01-01", "2025-02-01"),
    "start2025": ("2025-01-01", "2025-01-02"),
    "2025-01-15": ("2025-01-15", "2025-01-16"),
    "now": None,
}
# (id, intent, time key, text)
TIME_TEMPLATES: list[tuple[str, str, str, str]] = [
    ("tim-01", "prerequisites", "2018", "Back in 2018, what were the prerequisites of {x}?"),
    ("tim-02", "prerequisites", "jan2025", "As of January 2025, what were the prerequisites of {x}?"),
    ("tim-03", "prerequisites", "start2025", "What were the prerequisites for {x} at the start of 2025?"),
    ("tim-04", "prerequisites", "now", "What are the prerequisites of {x} today?"),
    ("tim-05", "foundations", "jan2025", "As of January 2025, what did {x} build on?"),
    ("tim-06", "built_by", "2018", "back in 2018 what built on {x}"),
    ("tim-07", "dependents", "jan2025", "Which concepts had {x} as a prerequisite as of January 2025?"),
    ("tim-08", "dependents", "now", "Which concepts currently have {x} as a prerequisite?"),
    ("tim-09", "needed_before", "2018", "In 2018, what did a learner need before {x}, all the way down?"),
    ("tim-10", "lessons_covering", "jan2025", "Which lessons covered {x} as of January 2025?"),
    ("tim-11", "lessons_covering", "now", "Which lessons cover {x} right now?"),
    ("tim-12", "prerequisites", "2025-01-15", "As of 2025-01-15, what was listed as a prerequisite of {x}?"),
    ("tim-13", "foundations", "now", "What does {x} build on today?"),
    ("tim-14", "built_by", "start2025", "At the start of 2025, which concepts built on {x}?"),
    ("tim-15", "prerequisites", "2023", "In 2023, which topics were prerequisites of {x}?"),
    ("tim-16", "dependents", "2018", "Back in 2018, which topics required {x} directly?"),
]

# Bad input: (id, text); {x} is a real concept of the graph. Gold: abstain (or a clear error).
BAD_TEMPLATES: list[tuple[str, str]] = [
    ("bad-01", ""),
    ("bad-02", "   "),
    ("bad-03", "asdfgh qwerty zxcvb"),
    ("bad-04", "The cat sat on the mat."),
    ("bad-05", "!!!???..."),
    ("bad-06", "'; DROP TABLE concepts; --"),
    ("bad-07", "Please read this carefully. " * 300 + "What comes before {x}?"),
    ("bad-08", "¿Cuáles son los prerrequisitos de {x}?"),
    ("bad-09", "{x}の前提条件は何ですか？"),
    ("bad-10", "Was muss ich vor {x} lernen, bitte?"),
    ("bad-11", "Thanks, that was really helpful!"),
    ("bad-12", "1234567890"),
]

# Concepts in neither graph: far from both, and near misses that share words with real names.
UNKNOWN: tuple[str, ...] = (
    "quantum error correction",
    "photosynthesis",
    "sourdough baking",
    "plate tectonics",
    "Baroque counterpoint",
    "medieval siege warfare",
    "glacier dynamics",
    "jazz harmony",
    "Roman contract law",
    "cell mitosis",
    "quantum annealing",
    "fuzzy clustering",
    "causal inference",
    "tensor decompositions",
    "speech recognition",
    "protein folding",
)


# -- graphs ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Graph:
    """One bundle read at the times the corpus needs, plus the names learners call its concepts."""

    name: str
    bundle: Path
    names: dict[str, tuple[str, tuple[str, ...]]]  # id -> (name, aliases)

    def view(self, at: datetime | None) -> gold.GraphView:
        return _cached_view(self.bundle, at)

    def lessons(self, at: datetime | None) -> gold.Lessons:
        return _cached_lessons(self.bundle, at)

    def relations(self) -> set[str]:
        return {r for _, _, r in self.view(None).edges}


_VIEWS: dict[tuple[Path, datetime | None], gold.GraphView] = {}
_LESSONS: dict[tuple[Path, datetime | None], gold.Lessons] = {}


def _cached_view(bundle: Path, at: datetime | None) -> gold.GraphView:
    if (bundle, at) not in _VIEWS:
        _VIEWS[bundle, at] = gold.load_bundle_view(bundle, at=at)
    return _VIEWS[bundle, at]


def _cached_lessons(bundle: Path, at: datetime | None) -> gold.Lessons:
    if (bundle, at) not in _LESSONS:
        _LESSONS[bundle, at] = gold.load_bundle_lessons(bundle, at=at)
    return _LESSONS[bundle, at]


def load_graph(name: str, bundle: Path) -> Graph:
    names: dict[str, tuple[str, tuple[str, ...]]] = {}
    with (bundle / "concepts.csv").open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            aliases = tuple(a.strip() for a in (r.get("aliases") or "").split("|") if a.strip())
            names[r["id"]] = (r["name"], aliases)
    return Graph(name, bundle, names)


# -- gold per intent ---------------------------------------------------------------------------------

Gold = tuple[list[str], list[str], bool]  # (concepts, lessons, abstain)
ONE_HOP: dict[str, Callable[[gold.GraphView, str], set[str]]] = {
    "prerequisites": gold.direct_prerequisites,
    "needed_before": gold.needed_before,
    "dependents": gold.dependents,
    "comes_after": gold.comes_after,
    "foundations": gold.foundations,
    "built_by": gold.builds_on_x,
    "parts": gold.parts,
    "wholes": gold.wholes,
    "contrasts": gold.contrasts,
    "related": gold.related,
}
# The relation an intent asks about, when it names one.
FAMILY = {
    "foundations": BUILDS_ON,
    "built_by": BUILDS_ON,
    "parts": PART_OF,
    "wholes": PART_OF,
    "contrasts": CONTRASTS_WITH,
    "related": RELATED,
}
# On a prerequisite-only graph, "builds on" is read from prerequisite edges.
PREREQUISITE_READING = {"foundations": gold.direct_prerequisites, "built_by": gold.dependents}
LEFT_OUT = {"prereqmap": {"related"}}


def absent(graph: Graph, intent: str) -> bool:
    """True when ``intent`` asks for a relation ``graph`` does not have and cannot be read otherwise."""
    rel = FAMILY.get(intent)
    rels = graph.relations()
    if rel is None or rel in rels:
        return False
    return not (intent in PREREQUISITE_READING and PREREQUISITE in rels)


def gold_for(graph: Graph, intent: str, subject: tuple[str, ...], at: datetime | None) -> Gold:
    """Gold concepts, gold lessons and whether to abstain, for ``intent`` on ``subject`` at ``at``."""
    view = graph.view(at)
    if any(s not in view.concepts for s in subject):
        return [], [], True
    x = subject[0]
    if intent == "about":
        return [x], [], False
    if intent == "path":
        path = gold.unique_path(view, subject[0], subject[1])
        return (sorted(path), [], False) if path else ([], [], True)
    if intent == "lessons_covering":
        return [], sorted(gold.lessons_covering(graph.lessons(at), x)), False
    if intent == "lessons_before":
        return [], sorted(gold.lessons_before(view, graph.lessons(at), x)), False
    if absent(graph, intent):
        return [], [], True
    fn = ONE_HOP[intent]
    if FAMILY.get(intent) == BUILDS_ON and BUILDS_ON not in graph.relations():
        fn = PREREQUISITE_READING[intent]
    return sorted(fn(view, x)), [], False


def _unambiguous_direct(graph: Graph, intent: str, x: str, at: datetime | None) -> bool:
    """On a graph with builds_on too, "right before/after X" could also mean builds_on neighbours:
    keep subjects where that reading adds nothing."""
    view = graph.view(at)
    if intent == "prerequisites":
        return not gold.foundations(view, x)
    if intent == "dependents":
        return not gold.builds_on_x(view, x)
    return True


_ELIGIBLE: dict[tuple[str, str, datetime | None], list[tuple[str, ...]]] = {}


def eligible(graph: Graph, intent: str, at: datetime | None = None) -> list[tuple[str, ...]]:
    """Subjects (sorted) whose gold at ``at`` (None: now) is non-empty and small enough to list."""
    key = (graph.name, intent, at)
    if key not in _ELIGIBLE:
        _ELIGIBLE[key] = _eligible(graph, intent, at)
    return _ELIGIBLE[key]


def _eligible(graph: Graph, intent: str, at: datetime | None) -> list[tuple[str, ...]]:
    view = graph.view(at)
    out: list[tuple[str, ...]] = []
    if intent == "path":
        g = gold.before_graph(view)
        for a in sorted(view.concepts):
            lengths = nx.single_source_shortest_path_length(g, a, cutoff=5)
            for b in sorted(lengths):
                if 2 <= lengths[b] <= 5 and len(list(nx.all_shortest_paths(g, a, b))) == 1:
                    out.append((a, b))
        return out
    for x in sorted(view.concepts):
        if intent in ("prerequisites", "dependents") and not _unambiguous_direct(graph, intent, x, at):
            continue
        concepts, lessons, abstain = gold_for(graph, intent, (x,), at)
        size = len(lessons) if intent.startswith("lessons") else len(concepts)
        limit = MAX_LESSONS if intent.startswith("lessons") else MAX_GOLD
        if not abstain and 0 < size <= limit:
            out.append((x,))
    return out


@functools.cache
def no_path_pairs(graph: Graph) -> list[tuple[str, ...]]:
    """Pairs with no "before" path either way (a path question about them must be abstained on)."""
    view = graph.view(None)
    g = gold.before_graph(view)
    ids = sorted(c for c in view.concepts if g.degree(c) > 0)
    out: list[tuple[str, ...]] = []
    for a in ids[::7]:
        for b in ids[3::11]:
            if a != b and not nx.has_path(g, a, b) and not nx.has_path(g, b, a):
                out.append((a, b))
    return out


# -- rendering ---------------------------------------------------------------------------------------


def render(graph: Graph, cid: str, rng: random.Random) -> str:
    """How a learner writes the concept: as stored (most often), in lower case, or an alias."""
    name, aliases = graph.names[cid]
    r = rng.random()
    if aliases and r < 0.35:
        return rng.choice(aliases)
    if r < 0.6:
        return name.lower()
    return name


def fill(text: str, **names: str) -> str:
    out = text
    for key, value in names.items():
        out = out.replace("{" + key + "}", value)
    return out


def split_of(templates: list[tuple[str, str]]) -> dict[str, str]:
    """Template id -> split: within each group, ordered by SHA-256 of the id, dealt alternately."""
    groups: dict[str, list[str]] = {}
    for tid, group in templates:
        groups.setdefault(group, []).append(tid)
    out: dict[str, str] = {}
    for ids in groups.values():
        ordered = sorted(ids, key=lambda t: hashlib.sha256(t.encode()).hexdigest())
        for i, tid in enumerate(ordered):
            out[tid] = SPLITS[i % 2]
    return out


def template_splits() -> dict[str, str]:
    keyed = [(tid, intent) for tid, intent, _ in TEMPLATES]
    keyed += [(tid, "time") for tid, *_ in TIME_TEMPLATES]
    keyed += [(tid, "bad_input") for tid, _ in BAD_TEMPLATES]
    return split_of(keyed)


def _at(day: str) -> datetime:
    return parse_time(day)


def _checked_time_gold(graph: Graph, intent: str, subject: tuple[str, ...], key: str) -> Gold:
    window = TIMES[key]
    if window is None:
        return gold_for(graph, intent, subject, None)
    start, end = _at(window[0]), _at(window[1]) - timedelta(seconds=1)
    first, last = gold_for(graph, intent, subject, start), gold_for(graph, intent, subject, end)
    if first != last:
        raise ValueError(f"{graph.name}: gold of {intent} {subject} changes inside the window {key}")
    return first


def _differs(graph: Graph, intent: str, subject: tuple[str, ...], key: str) -> bool:
    """Does the time matter: is the gold at the time the words mean different from another time?"""
    here = _checked_time_gold(graph, intent, subject, key)
    other = "jan2025" if key == "now" else "now"
    return here != _checked_time_gold(graph, intent, subject, other)


def _listable(g: Gold) -> bool:
    concepts, lessons, abstain = g
    return abstain or bool(concepts or lessons)


# -- building ----------------------------------------------------------------------------------------


def _question(
    qid: str, text: str, qtype: str, intent: str, template: str, g: Gold, key: str | None = None
) -> Question:
    concepts, lessons, abstain = g
    window = TIMES.get(key) if key else None
    return Question(
        id=qid,
        question=text,
        type=qtype,
        concepts=tuple(concepts),
        abstain=abstain,
        intent=intent,
        template=template,
        lessons=tuple(lessons),
        expect_as_of=None if window is None else window[0],
        expect_as_of_end=None if window is None else window[1],
        match="contains" if intent == "about" and not abstain else "exact",
    )


def _check_unknown(graphs: list[Graph]) -> None:
    known = {n.lower() for g in graphs for name, aliases in g.names.values() for n in (name, *aliases)}
    for u in UNKNOWN:
        for n in known:
            if re.search(rf"\b{re.escape(n)}\b", u.lower()):
                raise ValueError(f"unknown concept {u!r} contains the known name {n!r}")


def build_graph(graph: Graph) -> dict[str, list[Question]]:
    """Every question for ``graph``, by split."""
    splits = template_splits()
    out: dict[str, list[Question]] = {s: [] for s in SPLITS}
    prefix = {"curriculum": "cu", "prereqmap": "pm"}[graph.name]
    intents_done: dict[str, int] = {}
    for tid, intent, text in TEMPLATES:
        if intent in LEFT_OUT.get(graph.name, set()):
            continue
        rng = random.Random(f"{graph.name}:{tid}")
        is_absent = absent(graph, intent)
        pool = eligible(graph, "prerequisites" if is_absent else intent)
        subjects = rng.sample(pool, 1 if is_absent else PER_TEMPLATE)
        qtype = "absent_relation" if is_absent else intent
        n = 0
        for subject in subjects:
            names = dict(zip("xy", (render(graph, s, rng) for s in subject), strict=False))
            g = gold_for(graph, intent, subject, None)
            n += 1
            out[splits[tid]].append(
                _question(f"{prefix}-{tid}-{n}", fill(text, **names), qtype, intent, tid, g)
            )
        # every other template of an intent also asks about a concept that is in neither graph
        k = intents_done.get(intent, 0)
        intents_done[intent] = k + 1
        if k % 2 == 0 and not is_absent:
            u = UNKNOWN[(len(out["dev"]) + len(out["test"])) % len(UNKNOWN)]
            names = {"x": u}
            if intent == "path":
                names["y"] = render(graph, rng.choice(pool)[1], rng)
            n += 1
            out[splits[tid]].append(
                _question(
                    f"{prefix}-{tid}-{n}", fill(text, **names), "unanswerable", intent, tid, ([], [], True)
                )
            )
        if intent == "path" and k % 2 == 1:  # two real concepts with no learning path between them
            a, b = rng.choice(no_path_pairs(graph))
            n += 1
            qtext = fill(text, x=render(graph, a, rng), y=render(graph, b, rng))
            out[splits[tid]].append(
                _question(f"{prefix}-{tid}-{n}", qtext, "unanswerable", intent, tid, ([], [], True))
            )
    for tid, intent, key, text in TIME_TEMPLATES:
        rng = random.Random(f"{graph.name}:{tid}")
        if absent(graph, intent):
            continue
        window = TIMES[key]
        pool = eligible(graph, intent)
        if window is not None:
            pool = sorted(set(pool) | set(eligible(graph, intent, _at(window[0]))))
        # "none at that time" is not a listable answer: keep subjects with gold then, or abstain
        pool = [s for s in pool if _listable(_checked_time_gold(graph, intent, s, key))]
        mattering = [s for s in pool if _differs(graph, intent, s, key)]
        chosen = rng.sample(mattering, min(PER_TEMPLATE, len(mattering)))
        rest = [s for s in pool if s not in chosen]
        chosen += rng.sample(rest, PER_TEMPLATE - len(chosen))
        for n, subject in enumerate(chosen, start=1):
            g = _checked_time_gold(graph, intent, subject, key)
            qtext = fill(text, x=render(graph, subject[0], rng))
            out[splits[tid]].append(_question(f"{prefix}-{tid}-{n}", qtext, "temporal", intent, tid, g, key))
    for tid, text in BAD_TEMPLATES:
        rng = random.Random(f"{graph.name}:{tid}")
        x = rng.choice(sorted(graph.view(None).concepts))
        qtext = fill(text, x=render(graph, x, rng))
        out[splits[tid]].append(
            _question(f"{prefix}-{tid}-1", qtext, "bad_input", "bad_input", tid, ([], [], True))
        )
    return out


def outputs() -> dict[Path, list[Question]]:
    graphs = [load_graph(name, bundle) for name, bundle in GRAPHS.items()]
    _check_unknown(graphs)
    files: dict[Path, list[Question]] = {}
    for graph in graphs:
        for split, questions in build_graph(graph).items():
            for q in questions:  # every record must load back as written
                if parse_question(q.to_dict(), where=q.id) != q:
                    raise ValueError(f"{q.id} does not round-trip")
            files[HERE / f"paraphrase_{graph.name}_{split}.jsonl"] = questions
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs")
    args = parser.parse_args(argv)
    stale = []
    for path, questions in outputs().items():
        if args.check:
            tmp = path.with_suffix(".check.jsonl")
            dump_questions(questions, tmp)
            if not path.exists() or tmp.read_text(encoding="utf-8") != path.read_text(encoding="utf-8"):
                stale.append(path.name)
            tmp.unlink()
        else:
            dump_questions(questions, path)
            print(f"wrote {len(questions)} questions to {path}")
    if stale:
        print(f"stale: {', '.join(stale)}: rerun build_paraphrases.py")
        return 1
    if args.check:
        print("up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
