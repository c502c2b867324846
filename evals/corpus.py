"""What the question-corpus builders share: the two graphs with the names learners call their
concepts, the gold of the set-valued intents, how a learner writes a name, the once-only
dev/test dealing of phrasing templates, and the question files they share.

Used by ``evals/questions/build_paraphrases.py`` (one question per intent phrasing) and
``evals/questions/build_forms.py`` (the question forms: check, count, why, order, ...). Gold comes
from :mod:`evals.gold` (networkx over the bundle files), never from the system under test.

The two corpora share one question file per graph and split, :func:`question_file`
(``evals/questions/{graph}_{split}.jsonl.gz``, splits ``dev``, ``test`` and ``holdout``): each row
names its ``corpus`` (``paraphrase`` rows first, then ``forms`` rows, each in its builder's order)
and a holdout row the blind ``round`` it was written in. A builder rewrites only its own corpus's
rows and leaves the other's as they are; ``--check`` compares only its own. The files are gzip
(:func:`evals.questions.write_text`) because a holdout file holds 26 blind paraphrase rounds,
about 2 MB of text per graph, and no file in the repository passes 400 KB; the dev and test files
are gzip too so that every question file is read and written one way. Read one with
``zcat evals/questions/curriculum_dev.jsonl.gz``, score part of one with ``kg eval --questions FILE
--corpus NAME [--round N]``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import json
import random
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType

import networkx as nx

from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED
from evals import gold
from evals.prereqmap import default_bundle
from evals.questions import Question, parse_question, read_rows, read_text, write_text

__all__ = [
    "CORPUS_ORDER",
    "DEALT",
    "FAMILY",
    "GRAPHS",
    "HOLDOUT_GRAPHS",
    "MAX_GOLD",
    "MAX_LESSONS",
    "ONE_HOP",
    "PREREQUISITE_READING",
    "UNKNOWN",
    "Gold",
    "Graph",
    "absent",
    "check_unknown",
    "eligible",
    "fill",
    "gold_for",
    "load_builder",
    "load_graph",
    "question_file",
    "read_rows",
    "render",
    "round_tripped",
    "run_builder",
    "split_of",
    "unambiguous_direct",
]

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "evals" / "questions"
CORPUS_ORDER = ("paraphrase", "forms")  # the corpora of a shared question file, in file order
GRAPHS = {"curriculum": ROOT / "data_plane" / "curriculum", "prereqmap": default_bundle()}
# The forms holdout adds a third graph, hand-authored and unlike the other two (music theory and
# statistics; evals/bundles/musicstats).
HOLDOUT_GRAPHS = {**GRAPHS, "musicstats": ROOT / "evals" / "bundles" / "musicstats"}
MAX_GOLD = 15
MAX_LESSONS = 8
DEALT = ("dev", "test")

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


def check_unknown(graphs: Iterable[Graph], unknown: Iterable[str]) -> None:
    """Refuse an "unknown" concept name that contains a name (or alias) of a known concept."""
    known = {n.lower() for g in graphs for name, aliases in g.names.values() for n in (name, *aliases)}
    for u in unknown:
        for n in known:
            if re.search(rf"\b{re.escape(n)}\b", u.lower()):
                raise ValueError(f"unknown concept {u!r} contains the known name {n!r}")


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


def unambiguous_direct(graph: Graph, intent: str, x: str, at: datetime | None) -> bool:
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
        if intent in ("prerequisites", "dependents") and not unambiguous_direct(graph, intent, x, at):
            continue
        concepts, lessons, abstain = gold_for(graph, intent, (x,), at)
        size = len(lessons) if intent.startswith("lessons") else len(concepts)
        limit = MAX_LESSONS if intent.startswith("lessons") else MAX_GOLD
        if not abstain and 0 < size <= limit:
            out.append((x,))
    return out


# -- rendering and the split ---------------------------------------------------------------------------


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
            out[tid] = DEALT[i % 2]
    return out


# -- writing ---------------------------------------------------------------------------------------------


def round_tripped(questions: Sequence[Question]) -> list[Question]:
    """``questions``, after checking that every record loads back as written."""
    for q in questions:
        if parse_question(q.to_dict(), where=q.id) != q:
            raise ValueError(f"{q.id} does not round-trip")
    return list(questions)


def question_file(graph: str, split: str) -> Path:
    """The question file every corpus shares for ``graph`` and ``split``."""
    return QUESTIONS / f"{graph}_{split}.jsonl.gz"


def run_builder(
    argv: list[str] | None,
    *,
    doc: str | None,
    outputs: Callable[[], Mapping[Path, Sequence[Question]]],
    corpus: str,
    script: str,
) -> int:
    """A builder's command line: write its corpus's rows into their files, or with ``--check``
    fail when its rows in one of them are stale."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs")
    args = parser.parse_args(argv)
    return _write_or_check(outputs(), corpus=corpus, check=args.check, script=script)


def load_builder(name: str) -> ModuleType:
    """``evals/questions/<name>.py`` as a module (a script: ``evals/questions`` is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "evals" / "questions" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _rows_by_corpus(path: Path) -> dict[str, list[str]]:
    """The records of a shared question file (none if it does not exist yet), by corpus."""
    out: dict[str, list[str]] = {c: [] for c in CORPUS_ORDER}
    if not path.exists():
        return out
    for n, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            corpus = json.loads(line).get("corpus")
            if corpus not in out:
                raise ValueError(f"{path.name}:{n}: corpus must be one of {CORPUS_ORDER}, not {corpus!r}")
            out[corpus].append(line)
    return out


def _write_or_check(
    files: Mapping[Path, Sequence[Question]], *, corpus: str, check: bool, script: str
) -> int:
    """Put ``corpus``'s rows into each file in place of its old ones, keeping the other corpora's
    (every file is read and checked before any is written, and a file is written only when its
    text changes); or (``check``) compare them with the committed rows and list the stale files.
    The exit status of a builder's command line."""
    texts: dict[Path, str] = {}
    stale = []
    for path, questions in files.items():
        if any(q.corpus != corpus for q in questions):
            raise ValueError(f"{path.name}: a {corpus} builder writes only {corpus} rows")
        rows = _rows_by_corpus(path)
        fresh = [q.to_line() for q in questions]
        if rows[corpus] != fresh:
            stale.append(path.name)
        rows[corpus] = fresh
        texts[path] = "".join(line + "\n" for c in CORPUS_ORDER for line in rows[c])
    if check:
        print(f"stale: {', '.join(stale)}: rerun {script}" if stale else "up to date")
        return 1 if stale else 0
    for path, text in texts.items():
        if not path.exists() or read_text(path) != text:
            write_text(path, text)
        mine, others = len(files[path]), text.count("\n") - len(files[path])
        print(f"{path}: {mine} {corpus} questions ({others} of other corpora)")
    return 0
