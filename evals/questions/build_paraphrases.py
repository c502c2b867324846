"""Build the paraphrase corpus: learner-style phrasings of every intent, instantiated on two graphs,
with gold from ``evals.gold`` (networkx over the bundle files, never the system under test), split
ONCE into ``dev`` and ``test`` by phrasing template.

Run from the repository root::

    python evals/questions/build_paraphrases.py           # rewrites the paraphrase rows of the question files
    python evals/questions/build_paraphrases.py --check   # fails if the committed rows are stale

Graphs: ``curriculum`` (the bundled curriculum, five relations) and ``prereqmap`` (the generated
prerequisite-only map, ``evals/bundles/prereqmap``). Output: the rows of corpus ``paraphrase`` in
``{graph}_{dev,test,holdout}.jsonl.gz``, shared with the forms corpus (``evals.corpus``); a holdout
row's ``round`` is the blind round it was written in (1 for ``holdout``, 2 for ``holdout2``, ...,
in that order in the file). Score one split or round with ``kg eval --questions
evals/questions/curriculum_holdout.jsonl.gz --corpus paraphrase --round 26`` (add ``--bundle
evals/bundles/prereqmap`` for the prereq map).

Templates: ``paraphrase_templates.jsonl.gz``, one phrasing per row: ``id``, ``seq`` (build order),
``kind`` (``intent``, ``time``, ``bad_input``, or ``unknown_name`` for a holdout's own names of
concepts in neither graph), ``intent``, ``text``, ``time`` (time rows), and where it was written:
``split`` (``dev``, ``test`` or ``holdout``) and ``round``. Dev round 1 and test (round 1) are the
dealt templates; dev rounds 2 to 5 and holdout rounds 1 to 26 were written later, one round at a
time (below). A round is called by its split as these builders and ``evals.intent_training`` call
it: ``dev`` (every dev round), ``test``, ``holdout`` (round 1), ``holdout2`` ... ``holdout26``. The
file is gzip because it is over 400 KB as text; read it with ``zcat``. Whoever tunes the question
parser reads only the ``dev`` rows.

Rules (docs/evals.md has the intents table):

* A template is a phrasing with ``{x}`` (and ``{y}`` for paths). Its wording appears in exactly
  one split: within each intent the round-1 dev and test templates were ordered by the SHA-256 of
  their id and dealt alternately to dev and test, once; the builder refuses a template file that
  disagrees with that dealing.
* Subjects are drawn per template and graph with a seeded RNG among the concepts whose gold is
  non-empty and at most ``evals.corpus.MAX_GOLD`` long; names are written as learners write them (as stored,
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

Later rounds (after the test split had been scored once), not dealt; each was once a file of its
own, ``paraphrase_templates_dev_round2.jsonl``, ``..._holdout.jsonl``, ``..._holdout7.jsonl``, the
names below. Dev round 2 (``..._dev_round2``) adds dev phrasings (for tuning; some of their
families were learnt from round-1 test failures, see docs/evals.md); ``..._dev_round3`` more dev
phrasings in deliberately varied learner styles, and ``..._dev_round4`` (non-native grammar,
misspelt ordinary words, very short and very long messages), both written by someone who had not
read the parser.
``..._dev_round5`` (written by the parser's author after holdout25 had been scored) adds dev
phrasings of families the learnt second reading doubted although the grammar read them right
("every topic X depends on, directly or indirectly", "grounded in X", "which class teaches X"),
with their mirror images, so that word order around the name carries the direction.
Holdout round 1 (``paraphrase_templates_holdout``)
was written by someone who had not read the parser, the other templates or the failures; it
builds the ``holdout`` split, with its own unknown-concept names (rows of kind ``unknown_name``),
and is only ever scored. Round 2 (``..._holdout2``, split ``holdout2``) was written
the same way, blind, after ``holdout`` had been scored once and its failures read; ``..._holdout3``
(split ``holdout3``) likewise, after ``holdout2`` had been read; ``..._holdout4`` (``holdout4``)
likewise after ``holdout3`` had been read; ``..._holdout5`` likewise, after ``holdout4``
had been read, to measure the reader as finally committed; ``..._holdout6`` likewise, after
``holdout5`` had been read and fixed, to measure the reader of ``3612f62`` once;
``..._holdout7`` likewise, after ``holdout6`` had been read and fixed (reader of ``10b28ba``);
``..._holdout8`` likewise, after ``holdout7`` had been read and fixed (reader of ``89b7324``);
``..._holdout9`` likewise, after ``holdout8`` had been read and fixed (reader of ``36511c2``);
``..._holdout10`` likewise, after ``holdout9`` had been read and fixed (reader of ``62900ec``);
``..._holdout11`` likewise, after ``holdout10`` had been read and fixed (reader of ``adbcedc``;
two of its families were fixed after it was scored); ``..._holdout12`` likewise, after ``holdout11``
had been read and fixed (reader of ``930ec32``, which had no blind measurement of its own);
``..._holdout13`` likewise, after ``holdout12`` had been read and fixed, to measure the reader
with its learnt second reading (trained on everything but ``test`` and ``holdout13``);
``..._holdout14`` likewise, after ``holdout13`` had been read and fixed, to give the final reader
(model trained on everything but ``test`` and ``holdout14``) a blind measurement of its own;
``..._holdout15`` likewise, after ``holdout14`` had been read and its one family fixed;
``..._holdout16`` likewise, after ``holdout15`` had been read and fixed, to measure the final
reader (model trained on everything but ``test`` and ``holdout16``); ``..._holdout17`` likewise,
after ``holdout16`` had been read and fixed (model trained on everything but ``test`` and
``holdout17``; its 28 phrasings and names that repeated an earlier file's were dropped unread);
``..._holdout18`` likewise, after ``holdout17`` had been read and fixed, to measure the final
reader (the same model, trained without ``test``, ``holdout16``, ``holdout17`` and ``holdout18``);
``..._holdout19`` likewise, after ``holdout18`` had been read and fixed, to measure the reader of
``d135372`` (same model, also trained without ``holdout19``; 24 phrasings and names that repeated
an earlier file's were dropped unread); ``..._holdout20`` likewise, after ``holdout19`` had been
read and fixed, to measure the reader of ``d1df945`` (same model, also trained without
``holdout20``; its 25 phrasings and names that repeated an earlier file's were dropped unread);
``..._holdout21`` likewise, after ``holdout20`` had been read and fixed, to measure the reader of
``231fc7b`` (same model, also trained without ``holdout21``; 22 repeats dropped unread);
``..._holdout22`` likewise, after ``holdout21`` had been read and fixed, to measure the reader of
``9be1ad9`` (same phrasings in the model, also trained without ``holdout22``; 34 repeats dropped
unread); ``..._holdout23`` likewise, after ``holdout22`` had been read and fixed, to measure the
reader of ``a78dc02`` (same phrasings in the model, also trained without ``holdout23``; 36
repeats dropped unread); ``..._holdout24`` likewise, after ``holdout23`` had been read and
fixed, to measure the reader of ``144532c`` (same phrasings in the model, also trained without
``holdout24``; 36 repeats dropped unread); ``..._holdout25`` likewise, after ``holdout24`` had
been read and fixed, to measure the reader of ``8a0b1e2`` (same phrasings in the model, also
trained without ``holdout25``; 38 repeats dropped unread); ``..._holdout26`` likewise, after
``holdout25`` had been read, to measure the reader of ``8e2f309`` (the logistic check, trained
without ``holdout26``; 34 repeats dropped unread, and two unknown names that contain a known one).
"""

from __future__ import annotations

import functools
import random
import sys
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from data_plane.clock import parse_time  # noqa: E402
from evals import gold  # noqa: E402
from evals.corpus import (  # noqa: E402
    DEALT,
    GRAPHS,
    UNKNOWN,
    Gold,
    Graph,
    absent,
    check_unknown,
    eligible,
    fill,
    gold_for,
    load_graph,
    question_file,
    render,
    round_tripped,
    run_builder,
    split_of,
)
from evals.corpus import read_rows as _read_rows  # noqa: E402
from evals.questions import Question, load_questions, select  # noqa: E402

HERE = Path(__file__).parent
CORPUS = "paraphrase"
PER_TEMPLATE = 2
TEMPLATES_FILE = HERE / "paraphrase_templates.jsonl.gz"
HOLDOUT = "holdout"


def split_name(split: str, round: int) -> str:
    """What a round of ``split`` is called: ``dev``, ``test``, ``holdout``, ``holdout2``, ..."""
    return f"{split}{round}" if split == HOLDOUT and round > 1 else split


def _name(row: dict[str, Any]) -> str:
    return split_name(row["split"], row["round"])


def _dealt(row: dict[str, Any]) -> bool:
    """Is the row a round-1 dev or test template (dealt once, by :func:`split_of`)?"""
    return row["split"] in DEALT and row["round"] == 1


def _template_rows() -> list[dict[str, Any]]:
    rows = _read_rows(TEMPLATES_FILE)
    for row in rows:
        if row.get("split") not in (*DEALT, HOLDOUT) or not isinstance(row.get("round"), int):
            raise ValueError(f"{TEMPLATES_FILE.name}: template {row.get('id')}: needs a split and a round")
    return rows


_TEMPLATE_ROWS = _template_rows()
# Every split the corpus has: dev, test, then the blind holdouts round by round.
SPLITS: tuple[str, ...] = (
    *DEALT,
    *(split_name(HOLDOUT, n) for n in sorted({r["round"] for r in _TEMPLATE_ROWS if r["split"] == HOLDOUT})),
)


def _load_templates() -> list[dict[str, Any]]:
    return sorted((r for r in _TEMPLATE_ROWS if r["kind"] != "unknown_name"), key=lambda r: int(r["seq"]))


_ROWS = _load_templates()
TEMPLATES: list[tuple[str, str, str]] = [
    (r["id"], r["intent"], r["text"]) for r in _ROWS if r["kind"] == "intent"
]
TIME_TEMPLATES: list[tuple[str, str, str, str]] = [
    (r["id"], r["intent"], r["time"], r["text"]) for r in _ROWS if r["kind"] == "time"
]
BAD_TEMPLATES: list[tuple[str, str]] = [(r["id"], r["text"]) for r in _ROWS if r["kind"] == "bad_input"]

# Time words and the valid-time window they mean: (start, end); None = now.
TIMES: dict[str, tuple[str, str] | None] = {
    "2018": ("2018-01-01", "2019-01-01"),
    "2023": ("2023-01-01", "2024-01-01"),
    "jan2025": ("2025-01-01", "2025-02-01"),
    "start2025": ("2025-01-01", "2025-01-02"),
    "2025-01-15": ("2025-01-15", "2025-01-16"),
    "now": None,
}
# A holdout split's own names for concepts in neither graph.
SPLIT_UNKNOWN: dict[str, tuple[str, ...]] = {
    split: tuple(r["text"] for r in _TEMPLATE_ROWS if r["kind"] == "unknown_name" and _name(r) == split)
    for split in dict.fromkeys(_name(r) for r in _TEMPLATE_ROWS if r["kind"] == "unknown_name")
}
LEFT_OUT = {"prereqmap": {"related"}}


# -- graphs ------------------------------------------------------------------------------------------


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


# -- the split ---------------------------------------------------------------------------------------


def template_splits() -> dict[str, str]:
    """Template id -> split: round 1 of dev and test as dealt by :func:`split_of` (the template
    file must agree), later rounds by their ``split`` and ``round``."""
    later = {r["id"]: _name(r) for r in _TEMPLATE_ROWS if not _dealt(r)}
    keyed = [(tid, intent) for tid, intent, _ in TEMPLATES if tid not in later]
    keyed += [(tid, "time") for tid, *_ in TIME_TEMPLATES if tid not in later]
    keyed += [(tid, "bad_input") for tid, _ in BAD_TEMPLATES if tid not in later]
    dealt = split_of(keyed)
    for row in _TEMPLATE_ROWS:
        if _dealt(row) and (row["id"] in later or dealt[row["id"]] != row["split"]):
            raise ValueError(f"{TEMPLATES_FILE.name}: template {row['id']} belongs to another split")
    return {**dealt, **later}


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
            names_pool = SPLIT_UNKNOWN.get(splits[tid], UNKNOWN)
            u = names_pool[sum(len(v) for v in out.values()) % len(names_pool)]
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


def file_and_round(split: str) -> tuple[str, int | None]:
    """Where a split's questions go: ``holdout7`` -> (``holdout``, 7); ``dev`` -> (``dev``, None)."""
    if split in DEALT:
        return split, None
    return HOLDOUT, int(split.removeprefix(HOLDOUT) or 1)


def questions(graph: str, split: str) -> list[Question]:
    """The committed paraphrase questions of ``split`` (``dev``, ``holdout7``, ...) on ``graph``."""
    part, blind = file_and_round(split)
    return select(load_questions(question_file(graph, part)), corpus=CORPUS, round=blind)


def outputs() -> dict[Path, list[Question]]:
    graphs = [load_graph(name, bundle) for name, bundle in GRAPHS.items()]
    check_unknown(graphs, (*UNKNOWN, *(n for names in SPLIT_UNKNOWN.values() for n in names)))
    files: dict[Path, list[Question]] = {}
    for graph in graphs:
        for split, built in build_graph(graph).items():
            part, blind = file_and_round(split)
            rows = [replace(q, corpus=CORPUS, round=blind) for q in built]
            files.setdefault(question_file(graph.name, part), []).extend(round_tripped(rows))
    return files


def main(argv: list[str] | None = None) -> int:
    return run_builder(argv, doc=__doc__, outputs=outputs, corpus=CORPUS, script="build_paraphrases.py")


if __name__ == "__main__":
    raise SystemExit(main())
