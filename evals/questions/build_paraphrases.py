"""Build the paraphrase corpus: learner-style phrasings of every intent, instantiated on two graphs,
with gold from ``evals.gold`` (networkx over the bundle files, never the system under test), split
ONCE into ``dev`` and ``test`` by phrasing template.

Run from the repository root::

    python evals/questions/build_paraphrases.py           # rewrites the four paraphrase_*.jsonl files
    python evals/questions/build_paraphrases.py --check   # fails if a committed file is stale

Graphs: ``curriculum`` (the bundled curriculum, five relations) and ``prereqmap`` (the generated
prerequisite-only map, ``evals/bundles/prereqmap``). Output: ``paraphrase_{graph}_{split}.jsonl``.

Rules (docs/evals.md has the intents table):

* A template is a phrasing with ``{x}`` (and ``{y}`` for paths), kept in
  ``paraphrase_templates_{dev,test}.jsonl``. Its wording appears in exactly one split: within each
  intent the templates were ordered by the SHA-256 of their id and dealt alternately to dev and
  test, once; the builder refuses a template file that disagrees with that dealing. Whoever tunes
  the question parser reads only ``*_dev*`` files.
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

Round 2 (after the test split had been scored once): two more template files, not dealt.
``paraphrase_templates_dev_round2.jsonl`` adds dev phrasings (for tuning; some of their families
were learnt from round-1 test failures, see docs/evals.md); ``..._dev_round3.jsonl`` more dev
phrasings in deliberately varied learner styles, and ``..._dev_round4.jsonl`` (non-native
grammar, misspelt ordinary words, very short and very long messages), both written by someone who
had not read the parser.
``..._dev_round5.jsonl`` (written by the parser's author after holdout25 had been scored) adds dev
phrasings of families the learnt second reading doubted although the grammar read them right
("every topic X depends on, directly or indirectly", "grounded in X", "which class teaches X"),
with their mirror images, so that word order around the name carries the direction.
``paraphrase_templates_holdout.jsonl``
was written by someone who had not read the parser, the other template files or the failures; it
builds the ``holdout`` split, with its own unknown-concept names (rows of kind ``unknown_name``),
and is only ever scored. ``paraphrase_templates_holdout2.jsonl`` (split ``holdout2``) was written
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
    render,
    round_tripped,
    run_builder,
    split_of,
)
from evals.corpus import read_rows as _read_rows  # noqa: E402
from evals.questions import Question  # noqa: E402

HERE = Path(__file__).parent
PER_TEMPLATE = 2
SPLITS = (
    "dev",
    "test",
    "holdout",
    "holdout2",
    "holdout3",
    "holdout4",
    "holdout5",
    "holdout6",
    "holdout7",
    "holdout8",
    "holdout9",
    "holdout10",
    "holdout11",
    "holdout12",
    "holdout13",
    "holdout14",
    "holdout15",
    "holdout16",
    "holdout17",
    "holdout18",
    "holdout19",
    "holdout20",
    "holdout21",
    "holdout22",
    "holdout23",
    "holdout24",
    "holdout25",
    "holdout26",
)

# -- templates ---------------------------------------------------------------------------------------
# The phrasings live in paraphrase_templates_{dev,test}.jsonl, one per line:
# {"id", "seq" (build order), "kind": "intent" | "time" | "bad_input", "intent", "text", "time"?}. Whoever tunes a
# parser reads only the dev file; the test file is read here, to build the test split, and nowhere
# else.
TEMPLATE_FILES = {split: HERE / f"paraphrase_templates_{split}.jsonl" for split in DEALT}
# Round 2: files whose split is the file's (not dealt), see the module docstring.
ROUND_TWO_FILES = {
    HERE / "paraphrase_templates_dev_round2.jsonl": "dev",
    HERE / "paraphrase_templates_dev_round3.jsonl": "dev",
    HERE / "paraphrase_templates_dev_round4.jsonl": "dev",
    HERE / "paraphrase_templates_dev_round5.jsonl": "dev",
    HERE / "paraphrase_templates_holdout.jsonl": "holdout",
    HERE / "paraphrase_templates_holdout2.jsonl": "holdout2",
    HERE / "paraphrase_templates_holdout3.jsonl": "holdout3",
    HERE / "paraphrase_templates_holdout4.jsonl": "holdout4",
    HERE / "paraphrase_templates_holdout5.jsonl": "holdout5",
    HERE / "paraphrase_templates_holdout6.jsonl": "holdout6",
    HERE / "paraphrase_templates_holdout7.jsonl": "holdout7",
    HERE / "paraphrase_templates_holdout8.jsonl": "holdout8",
    HERE / "paraphrase_templates_holdout9.jsonl": "holdout9",
    HERE / "paraphrase_templates_holdout10.jsonl": "holdout10",
    HERE / "paraphrase_templates_holdout11.jsonl": "holdout11",
    HERE / "paraphrase_templates_holdout12.jsonl": "holdout12",
    HERE / "paraphrase_templates_holdout13.jsonl": "holdout13",
    HERE / "paraphrase_templates_holdout14.jsonl": "holdout14",
    HERE / "paraphrase_templates_holdout15.jsonl": "holdout15",
    HERE / "paraphrase_templates_holdout16.jsonl": "holdout16",
    HERE / "paraphrase_templates_holdout17.jsonl": "holdout17",
    HERE / "paraphrase_templates_holdout18.jsonl": "holdout18",
    HERE / "paraphrase_templates_holdout19.jsonl": "holdout19",
    HERE / "paraphrase_templates_holdout20.jsonl": "holdout20",
    HERE / "paraphrase_templates_holdout21.jsonl": "holdout21",
    HERE / "paraphrase_templates_holdout22.jsonl": "holdout22",
    HERE / "paraphrase_templates_holdout23.jsonl": "holdout23",
    HERE / "paraphrase_templates_holdout24.jsonl": "holdout24",
    HERE / "paraphrase_templates_holdout25.jsonl": "holdout25",
    HERE / "paraphrase_templates_holdout26.jsonl": "holdout26",
}


def _load_templates() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in (*TEMPLATE_FILES.values(), *ROUND_TWO_FILES):
        rows += [r for r in _read_rows(path) if r["kind"] != "unknown_name"]
    return sorted(rows, key=lambda r: int(r["seq"]))


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
    split: names
    for path, split in ROUND_TWO_FILES.items()
    if (names := tuple(r["text"] for r in _read_rows(path) if r["kind"] == "unknown_name"))
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
    """Template id -> split: round 1 as dealt by :func:`split_of` (the template files must
    agree), round 2 by file."""
    later = {r["id"]: split for path, split in ROUND_TWO_FILES.items() for r in _read_rows(path)}
    keyed = [(tid, intent) for tid, intent, _ in TEMPLATES if tid not in later]
    keyed += [(tid, "time") for tid, *_ in TIME_TEMPLATES if tid not in later]
    keyed += [(tid, "bad_input") for tid, _ in BAD_TEMPLATES if tid not in later]
    dealt = split_of(keyed)
    for split, path in TEMPLATE_FILES.items():
        for row in _read_rows(path):
            if row["id"] in later or dealt[row["id"]] != split:
                raise ValueError(f"{path.name}: template {row['id']} belongs to another split")
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


def outputs() -> dict[Path, list[Question]]:
    graphs = [load_graph(name, bundle) for name, bundle in GRAPHS.items()]
    check_unknown(graphs, (*UNKNOWN, *(n for names in SPLIT_UNKNOWN.values() for n in names)))
    files: dict[Path, list[Question]] = {}
    for graph in graphs:
        for split, questions in build_graph(graph).items():
            files[HERE / f"paraphrase_{graph.name}_{split}.jsonl"] = round_tripped(questions)
    return files


def main(argv: list[str] | None = None) -> int:
    return run_builder(argv, doc=__doc__, outputs=outputs, script="build_paraphrases.py")


if __name__ == "__main__":
    raise SystemExit(main())
