"""The metamorphic name test: rename every concept, rewrite the questions, and nothing may change.

A graph brings its own names, and the answers must not depend on them. Compilers are tested the
same way on renamed programs: :func:`renamed_bundle` writes a copy of a ``kg-bundle/1`` folder in
which every concept has a new id and a new name, drawn from adversarial pools (:data:`POOLS`:
everyday words the reader and the answers use themselves, names told apart by symbols, names with
apostrophes, qualifiers, digits, one letter or another script, names inside names);
:func:`renamed_question` rewrites a question, putting each concept's new name where the question
named it (in the same style: as stored, lower case, possessive); :func:`compare` runs both
through the planning loop (offline) and lists every difference in the reading (intent, form,
subjects and their roles, direction, scope, time, sureness) and the answer (abstained or not, the
answer set mapped back, the finding). Any difference is a bug in a mechanism.

    python -m evals.renaming --questions evals/questions/curriculum_dev.jsonl.gz [--bundle DIR]
                             [--seeds 3] [--first-seed 0] [--limit N] [--show]

``--show`` prints the differing questions (use it on dev files only: a test split is scored,
never read); without it, differences are counted by what differs. ``tests/test_renaming.py``
runs it under Hypothesis (a fixed seed by default, many in the slow run).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from control_plane.understanding.lexicon import VOCABULARY, everyday
from control_plane.understanding.names import NameIndex, tokenize
from control_plane.understanding.reading import mentions_in
from data_plane.errors import KGError
from data_plane.names import normalise
from evals.questions import Question, load_questions

__all__ = [
    "POOLS",
    "Difference",
    "Renaming",
    "assign",
    "compare",
    "draw_renaming",
    "renamed_bundle",
    "renamed_question",
    "run",
]

# Adversarial names, by kind. Each kind breaks a different shortcut: a reader or checker that
# looks for its own words in text, that compares names without their symbols, apostrophes,
# qualifiers or digits, that finds a name inside a longer one, or that knows only ASCII.
POOLS: Final[Mapping[str, tuple[str, ...]]] = {
    "everyday": (
        "Edge", "Graph", "Path", "Order", "Set", "Next", "First", "Left", "Class", "Share", "Reach",
        "Need", "Build", "Part", "Relation", "Lesson", "Time", "Year",
    ),
    "symbols": ("C++", "C#", "F#", "k-means++", "k-means", "A* search", "Node.js", "A.I. safety"),
    "apostrophes": ("Hooke's law", "Bayes' theorem", "Newton's laws of motion", "Ohm's law", "Fermat's last theorem"),
    "qualifiers": (
        "Motion (physics)", "Set (mathematics)", "Kernel (statistics)", "Equality (mathematics)",
        "Field (physics)",
    ),
    "nested": (
        "Multiple integrals", "Evaluating multiple integrals: change of variables", "Binary search",
        "Binary search trees", "Linear algebra", "Numerical linear algebra",
    ),
    "one_letter": ("C", "R", "Q"),
    "digits": ("GPT-4", "GPT-3", "Web 2.0", "Python 3", "IPv6", "3D printing", "5G networks"),
    # course codes and numbered titles, which questions write as students type them ("cse100",
    # "CSE-100", "Calculus 3" for "Calculus III")
    "codes": ("CSE 100", "MATH 20C", "PHYS 2A", "DSC 40B", "ECE 45", "Calculus III", "Japanese II"),
    "scripts": (
        "机器学习", "深度学习", "Μηχανική μάθηση", "Ångström units", "Schrödinger equation", "Теория графов",
        "Gödel's incompleteness theorems",
    ),
}  # fmt: skip
# Syllables of the neutral names every other concept gets.
_SYLLABLES: Final = ("ka", "lo", "mi", "ven", "dor", "tal", "su", "rix", "bel", "qua", "zen", "pol", "thy")

_BUNDLED: Final = Path(str(resources.files("data_plane") / "curriculum"))


@dataclass(frozen=True)
class Renaming:
    """Old concept id → new id and new name (every concept of the bundle)."""

    ids: Mapping[str, str]
    names: Mapping[str, str]

    def back(self) -> dict[str, str]:
        return {new: old for old, new in self.ids.items()}


def _neutral(rng: random.Random, taken: set[tuple[str, ...]]) -> str:
    while True:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).title()
        key = normalise(word)
        if key not in taken and key[0] not in VOCABULARY:
            taken.add(key)
            return word


def assign(ids: Sequence[str], wanted: Iterable[str], pool: Sequence[str], rng: random.Random) -> Renaming:
    """A renaming of ``ids``: the ``wanted`` concepts first take the ``pool``'s names (in order),
    every other concept a neutral made-up name; new ids keep the old ids' order (ties broken by
    id stay broken the same way)."""
    order = sorted(ids)
    new_ids = {old: f"c{i:05d}" for i, old in enumerate(order)}
    names: dict[str, str] = {}
    taken: set[tuple[str, ...]] = set()
    free = [p for p in pool if normalise(p)]
    for cid in dict.fromkeys(wanted):
        if cid in new_ids and free:
            name = free.pop(0)
            if normalise(name) in taken:
                continue
            names[cid] = name
            taken.add(normalise(name))
    for cid in order:
        if cid not in names:
            names[cid] = _neutral(rng, taken)
    return Renaming(new_ids, names)


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write_csv(path: Path, fields: list[str], rows: Iterable[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)


def bundle_ids(bundle: Path) -> list[str]:
    _, rows = _read_csv(bundle / "concepts.csv")
    return list(dict.fromkeys(r["id"] for r in rows))


def renamed_bundle(bundle: Path, out: Path, renaming: Renaming) -> Path:
    """A copy of ``bundle`` in ``out`` with every concept renamed (ids, names; aliases dropped,
    summaries, reasons and lesson titles kept: they are quoted, never read for names)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(bundle / "manifest.json", out / "manifest.json")
    fields, rows = _read_csv(bundle / "concepts.csv")
    for r in rows:
        old = r["id"]
        r["id"], r["name"] = renaming.ids[old], renaming.names[old]
        if "aliases" in r:
            r["aliases"] = ""
    _write_csv(out / "concepts.csv", fields, rows)
    for name, columns in (
        ("concept_edges.csv", ("source_id", "target_id")),
        ("lesson_concepts.csv", ("concept_id",)),
    ):
        if (bundle / name).is_file():
            fields, rows = _read_csv(bundle / name)
            for r in rows:
                for c in columns:
                    r[c] = renaming.ids.get(r[c], r[c])
            _write_csv(out / name, fields, rows)
    return out


def old_index(bundle: Path) -> NameIndex:
    """The bundle's names as the reader indexes them (every row: names of any time)."""
    _, rows = _read_csv(bundle / "concepts.csv")
    return NameIndex.from_names(
        (r["id"], r["name"], [a for a in (r.get("aliases") or "").split("|") if a.strip()]) for r in rows
    )


def renamed_question(
    text: str,
    index: NameIndex,
    renaming: Renaming,
    style: random.Random | None = None,
    only: Iterable[str] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """``text`` with each concept it names (outermost names, as the reader finds them; not a name
    outside ``only`` written as one lower-case verb form) written by its new name, in the style the question wrote the old one (lower case stays
    lower case; a possessive stays one); and the old ids it named. With ``style``, a lower-case
    name is sometimes written as the graph spells it instead. A name that is also a word the
    reader reads is written as the graph spells it: lower case, "order" or "graph"
    is that word (docs/control-plane.md, "Names as learners write them")."""
    tokens = tokenize(text)
    wanted = None if only is None else set(only)
    out, pos, named = [], 0, []
    for m in mentions_in(text, index):
        lo, hi = tokens[m.start].start, tokens[m.end - 1].end
        surface = text[lo:hi]
        if (
            wanted is not None
            and m.concept_id not in wanted
            and m.end - m.start == 1
            and surface.islower()
            and (surface.endswith(("ing", "ed")) or _is_word(surface))
        ):
            continue  # a word that happens to be a name ("I'm planning the next year", "tie in with")
        new = renaming.names[m.concept_id]
        as_spelt = _is_word(new) or len(new) == 1 or (style is not None and style.random() < 0.5)
        if surface == surface.lower() and not as_spelt:
            new = new.lower()
        if style is not None:
            new = _as_typed(new, style)
        if surface.endswith(("'s", "’s")):
            new += "'s"
        out += [text[pos:lo], new]
        pos = hi
        named.append(m.concept_id)
    out.append(text[pos:])
    return "".join(out), tuple(dict.fromkeys(named))


_CODE: Final = re.compile(r"^([A-Za-z]{2,5}) (\d+[A-Za-z]?)$")
_ROMAN: Final = {"II": "2", "III": "3", "IV": "4"}


def _as_typed(name: str, style: random.Random) -> str:
    """A course code or numbered title as students type it, half the time: "CSE 100" as
    "CSE100", "cse100" or "CSE-100"; "Calculus III" as "Calculus 3"."""
    if style.random() >= 0.5:
        return name
    code = _CODE.match(name)
    if code:
        letters, number = code.groups()
        return style.choice(
            [f"{letters}{number}", f"{letters.lower()}{number.lower()}", f"{letters}-{number}"]
        )
    head, _, last = name.rpartition(" ")
    return f"{head} {_ROMAN[last]}" if head and last in _ROMAN else name


def _is_word(name: str) -> bool:
    """Is ``name`` written with words the reader reads or the answers use ("Order", "Graph")?"""
    return everyday(" ".join(normalise(name)))


def _asked_about(q: Question, answer: Mapping[str, Any]) -> set[str]:
    """The concepts a question is about: its gold, and the subjects of its reading (a name used
    as a word, "I'm planning the next year" against a concept "Planning", is neither)."""
    reading = answer.get("reading") or {}
    return {
        *q.concepts,
        *q.suggest,
        *(s["concept_id"] for s in reading.get("subjects", ())),
        *(v for v in q.findings.values() if isinstance(v, str)),
    }


@dataclass(frozen=True)
class Difference:
    """One question read or answered differently once renamed: what differs, before and after."""

    question_id: str
    what: str
    before: Any
    after: Any
    original: str = ""
    renamed: str = ""


def _reading(answer: Mapping[str, Any], back: Mapping[str, str]) -> dict[str, Any]:
    """The reading's structure with ids mapped back; a question not read surely (a problem, no
    concept named, or a reading too unsure to answer from) is only that, whatever else the reader
    noted."""
    r = answer["reading"]
    if not r.get("sure"):
        return {"read": False}
    return {
        "intent": r["intent"],
        "form": r["form"],
        "subjects": sorted((back.get(s["concept_id"], s["concept_id"]), s["role"]) for s in r["subjects"]),
        "direction": r["direction"],
        "transitive": r["transitive"],
        "relations": r["relations"],
        "combine": r["combine"],
        "hops": r["hops"],
        "time": ((r["time"] or {}).get("valid_at") or "")[:10],  # "today" is the run's own day
    }


def _outcome(answer: Mapping[str, Any], back: Mapping[str, str]) -> dict[str, Any]:
    result = answer.get("result") or {}
    members = sorted(back.get(m, m) for m in result.get("members", ()))
    facts = {k: v for k, v in result.items() if k not in ("intent", "members")}
    if isinstance(facts.get("first"), str):
        facts["first"] = back.get(facts["first"], facts["first"])
    return {"abstained": answer["abstained"], "members": members, "facts": facts}


def compare(
    question: Question, before: Mapping[str, Any], after: Mapping[str, Any], renaming: Renaming, renamed: str
) -> list[Difference]:
    """Every difference between the answer to ``question`` and to its renamed form."""
    back = renaming.back()
    out = []
    old, new = _reading(before, {}), _reading(after, back)
    if old.keys() != new.keys():
        read = ("read" not in old, "read" not in new)
        out.append(Difference(question.id, "reading.read", *read, question.question, renamed))
    for what, a, b in (
        *((f"reading.{k}", v, new[k]) for k, v in old.items() if k in new),
        *((f"answer.{k}", v, _outcome(after, back)[k]) for k, v in _outcome(before, {}).items()),
    ):
        if a != b:
            out.append(Difference(question.id, what, a, b, question.question, renamed))
    return out


@contextmanager
def _loaded(bundle: Path) -> Iterator[Any]:
    """A planner (offline) over a fresh SQLite file loaded with ``bundle``."""
    from control_plane.planning.loop import Planner
    from control_plane.surfaces.runtime import ensure_initialised
    from control_plane.synthesizers.offline import OfflineSynthesizer
    from data_plane.bundle import ImportPolicy, import_bundle
    from data_plane.database import connect
    from data_plane.gateway import WriteGateway
    from data_plane.reads import GraphReader

    with tempfile.TemporaryDirectory(prefix="kg-renaming-") as tmp:
        url = f"sqlite:///{tmp}/kg.sqlite3"
        ensure_initialised(url, load_curriculum=False)
        engine = connect(url)
        try:
            import_bundle(
                WriteGateway(engine), bundle, policy=ImportPolicy(set_aside=True, name_key=normalise)
            )
            yield Planner(GraphReader(engine), OfflineSynthesizer())
        finally:
            engine.dispose()


@dataclass
class Report:
    """What a run compared and found."""

    questions: int = 0
    differences: list[Difference] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(d.what for d in self.differences)

    def questions_differing(self) -> int:
        return len({d.question_id for d in self.differences})


def _ask(planner: Any, q: Question, text: str) -> dict[str, Any]:
    """The answer's JSON; a question refused as input (empty, too long) is an abstention."""
    try:
        answer: dict[str, Any] = planner.ask(
            text, as_of=q.as_of_time, known_at=q.known_at_time, record=False
        ).to_dict()
    except KGError as exc:
        return {"abstained": True, "result": None, "reading": {"intent": "unknown", "problem": str(exc)}}
    return answer


def run(
    bundle: Path,
    questions: Sequence[Question],
    renamings: Iterable[tuple[Renaming, random.Random | None]],
    *,
    before: dict[str, dict[str, Any]] | None = None,
) -> Report:
    """Ask every question of the original bundle and of each renamed copy; compare.
    ``before`` caches the original answers by question id across calls."""
    report = Report()
    cache = before if before is not None else {}
    index = old_index(bundle)
    missing = [q for q in questions if q.id not in cache]
    if missing:
        with _loaded(bundle) as planner:
            for q in missing:
                cache[q.id] = _ask(planner, q, q.question)
    for renaming, style in renamings:
        with (
            tempfile.TemporaryDirectory(prefix="kg-renamed-") as tmp,
            _loaded(renamed_bundle(bundle, Path(tmp) / "bundle", renaming)) as planner,
        ):
            for q in questions:
                about = _asked_about(q, cache[q.id])
                text, _ = renamed_question(q.question, index, renaming, style, only=about)
                report.questions += 1
                report.differences += compare(q, cache[q.id], _ask(planner, q, text), renaming, text)
    return report


def draw_renaming(bundle: Path, questions: Sequence[Question], rng: random.Random) -> Renaming:
    """A renaming where the concepts the questions name take adversarial names (every pool, in
    a shuffled order), and the rest neutral ones."""
    index = old_index(bundle)
    named = [m.concept_id for q in questions for m in mentions_in(q.question, index)]
    rng.shuffle(named)
    pool = [name for names in POOLS.values() for name in names]
    rng.shuffle(pool)
    return assign(bundle_ids(bundle), named, pool, rng)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.renaming", description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--bundle", type=Path, default=_BUNDLED)
    parser.add_argument("--corpus")
    parser.add_argument("--seeds", type=int, default=1, help="how many renamings to draw")
    parser.add_argument("--first-seed", type=int, default=0, help="draw seeds from this one on")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--show", action="store_true", help="print the differing questions (dev files only)")
    args = parser.parse_args(argv)
    from evals.runner import _quiet_logs

    _quiet_logs()
    questions = [q for q in load_questions(args.questions) if args.corpus in (None, q.corpus)]
    if args.limit:
        questions = questions[: args.limit]
    renamings = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rng = random.Random(seed)
        renamings.append((draw_renaming(args.bundle, questions, rng), random.Random(seed)))
    report = run(args.bundle, questions, renamings)
    print(
        json.dumps(
            {
                "questions": report.questions,
                "differing": report.questions_differing(),
                "by_what": dict(report.counts().most_common()),
            },
            indent=1,
        )
    )
    if args.show:
        for d in report.differences:
            print(f"{d.question_id} {d.what}: {d.before!r} -> {d.after!r}\n  {d.original}\n  {d.renamed}")
    return 1 if report.differences else 0


if __name__ == "__main__":
    sys.exit(main())
