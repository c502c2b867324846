"""Asked "What do I need before <course>?" on the UC San Diego catalogue with its requirement
groups, the answer states the course's requirement as docs/control-plane.md ("Requirements with
alternatives") writes it, and lists its choices: checked on 20 courses drawn with a fixed seed
among those whose requirements.json expression offers alternatives, against a sentence computed
here from requirements.json alone (a normaliser of this file's own, not data_plane's or the
evals' gold).

The catalogue is a development graph beside the checkout (``../shared/dev-graphs``, or
``$KG_DEV_GRAPHS``); without it these tests are skipped with a note."""

from __future__ import annotations

import csv
import itertools
import json
import os
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from control_plane.planning.loop import Planner
from control_plane.synthesizers.offline import OfflineSynthesizer
from data_plane import GraphReader
from data_plane.database import connect
from evals.catalogue_groups import convert
from evals.dev_graphs import dev_graph, dev_graphs_folder
from evals.runner import _database

CATALOGUE = dev_graph("ucsd-catalogue", os.environ)
HAS_REQUIREMENTS = CATALOGUE is not None and (CATALOGUE / "requirements.json").is_file()
pytestmark = pytest.mark.skipif(
    not HAS_REQUIREMENTS,
    reason=f"no ucsd-catalogue with requirements.json in {dev_graphs_folder(os.environ)} "
    "(../shared/dev-graphs, or set KG_DEV_GRAPHS): the requirement sentences are checked where it is",
)
SAMPLE = 20
SEED = "requirement-text-2026"
KS = {1: "one", 2: "two"}

Option = frozenset[str]


def _expressions() -> dict[str, Any]:
    assert CATALOGUE is not None
    return dict(json.loads((CATALOGUE / "requirements.json").read_text(encoding="utf-8"))["requirements"])


def _names() -> dict[str, str]:
    assert CATALOGUE is not None
    with (CATALOGUE / "concepts.csv").open(encoding="utf-8", newline="") as fh:
        return {r["id"]: r["name"] for r in csv.DictReader(fh)}


def _offers_alternatives(e: Any) -> bool:
    return isinstance(e, dict) and (
        e["type"] in ("one", "two") or any(map(_offers_alternatives, e["courses"]))
    )


def _sample() -> list[str]:
    if not HAS_REQUIREMENTS:
        return []
    offering = sorted(c for c, e in _expressions().items() if _offers_alternatives(e))
    return sorted(random.Random(SEED).sample(offering, SAMPLE))


# -- requirements.json read here: plain courses and groups ---------------------------------------


def _without(e: Any, course: str) -> Any:
    """``e`` with the parts naming ``course`` itself dropped (None when nothing is left)."""
    if isinstance(e, str):
        return None if e == course else e
    kept = [p for p in (_without(c, course) for c in e["courses"]) if p is not None]
    return {"type": e["type"], "courses": kept} if kept else None


def _ways(e: Any) -> list[Option]:
    """Every set of courses that meets ``e``, each once, in the order written."""
    if isinstance(e, str):
        return [frozenset([e])]
    parts = [_ways(p) for p in e["courses"]]
    k = {"all": len(parts), "one": 1, "two": 2}[e["type"]]
    out: list[Option] = []
    for chosen in itertools.combinations(parts, k):
        for pick in itertools.product(*chosen):
            way = frozenset().union(*pick)
            if way not in out:
                out.append(way)
    return out


def _conjuncts(e: Any) -> Iterator[Any]:
    if isinstance(e, dict) and e["type"] == "all":
        for part in e["courses"]:
            yield from _conjuncts(part)
    else:
        yield e


def _normal(e: Any) -> tuple[set[str], list[tuple[int, list[Option]]]]:
    """Plain courses and (k, options) groups, in the order written: a "two" of single courses or
    all-of sets counts its parts; any other alternative is one of its ways; one way is plain."""
    plain: set[str] = set()
    groups: list[tuple[int, list[Option]]] = []
    for part in _conjuncts(e):
        if isinstance(part, str):
            plain.add(part)
            continue
        each = [_ways(p) for p in part["courses"]]
        if part["type"] == "two" and all(len(w) == 1 for w in each):
            options, k = [w[0] for w in each], 2
        else:
            options, k = _ways(part), 1
        if k >= len(options):
            plain.update(*options)
        else:
            groups.append((k, options))
    return plain, groups


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Any]:
    """Per course: plain ids and groups (ids as the bundle gives them: an unlisted code's slug)."""
    names = _names()

    def ident(code: str) -> str:
        return code if code in names else re.sub(r"[^a-z0-9]+", "_", code.lower()).strip("_")

    def name(code: str) -> str:
        return names.get(code, code)

    read: dict[str, Any] = {}
    for course, e in _expressions().items():
        kept = _without(e, course)
        if kept is not None:
            plain, groups = _normal(kept)
            read[course] = (plain, groups)
    return {"read": read, "ident": ident, "name": name, "names": names}


def _sorted(texts: list[str]) -> list[str]:
    return sorted(texts, key=lambda t: (t.casefold(), t))


def _either(items: list[str], word: str) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} " + items[-1]


def sentence(catalogue: dict[str, Any], course: str) -> str:
    """The spec's sentence: plain names sorted, then one phrase per group sorted, joined by "; "
    (sorted: by casefolded text; an option's parentheses aside)."""
    plain, groups = catalogue["read"][course]
    name = catalogue["name"]
    phrases: list[tuple[str, str]] = []  # (as it sorts, as it reads)
    for k, options in groups:
        # an option of several courses in parentheses, sorted (and its phrase sorted) without them
        inside = {o: _either(_sorted([name(c) for c in o]), "and") for o in options}
        ordered = sorted(options, key=lambda o: (inside[o].casefold(), inside[o]))
        bare = f"{KS[k]} of {_either([inside[o] for o in ordered], 'or')}"
        texts = [inside[o] if len(o) == 1 else f"({inside[o]})" for o in ordered]
        phrases.append((bare, f"{KS[k]} of {_either(texts, 'or')}"))
    phrases.sort(key=lambda p: (p[0].casefold(), p[0]))
    parts = _sorted([name(c) for c in plain]) + [reads for _, reads in phrases]
    return f"{catalogue['names'][course]} requires: {'; '.join(parts)}."


def choices(catalogue: dict[str, Any], course: str) -> set[str]:
    """The groups of ``course`` and of every course it requires plainly, all the way down."""
    read, ident = catalogue["read"], catalogue["ident"]
    required: set[str] = set()
    todo = [course]
    while todo:
        for c in read.get(todo.pop(), (set(), []))[0]:
            if ident(c) not in required:
                required.add(ident(c))
                todo.append(c)
    return {f"{c}.{n}" for c in {course} | required for n in range(1, len(read.get(c, (set(), []))[1]) + 1)}


def test_the_normaliser_reads_cse_101_and_ece_107_as_requirements_json_states_them(
    catalogue: dict[str, Any],
) -> None:
    assert sentence(catalogue, "cse_101") == (
        "CSE 101 requires: one of CSE 12 or DSC 30; one of CSE 21, MATH 154, MATH 158, MATH 184 or MATH 188."
    )
    assert sentence(catalogue, "ece_107") == (
        "ECE 107 requires: ECE 45; one of (PHYS 2A, PHYS 2B and PHYS 2C) or (PHYS 4A, PHYS 4B and PHYS 4C)."
    )
    assert choices(catalogue, "cse_100") == {"cse_100.1", "cse_100.2", "cse_12.1"}
    assert _normal({"type": "two", "courses": ["a", "b", "c"]}) == (set(), [(2, [{"a"}, {"b"}, {"c"}])])


# -- the answers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def planner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planner]:
    """The loop, offline, on a fresh SQLite holding the catalogue with its groups (as kg eval loads one)."""
    assert CATALOGUE is not None
    bundle = tmp_path_factory.mktemp("ucsd-groups")
    convert(CATALOGUE, bundle)
    with _database(None, bundle) as url:
        engine = connect(url)
        try:
            yield Planner(GraphReader(engine), OfflineSynthesizer())
        finally:
            engine.dispose()


@pytest.mark.parametrize("course", _sample())
def test_what_do_i_need_before_a_course_states_its_requirement_and_lists_its_choices(
    planner: Planner, catalogue: dict[str, Any], course: str
) -> None:
    """The answer's text holds the course's requirement sentence, and ``result.requirements`` lists
    exactly the groups of the course and of every course it requires (its choices)."""
    question = f"What do I need before {catalogue['names'][course]}?"
    answer = planner.ask(question, record=False).to_dict()
    said = (
        f"asked {question!r}; the answer said: {answer.get('text')!r} (abstained: {answer.get('abstained')})"
    )
    assert not answer["abstained"], said
    wanted = sentence(catalogue, course)
    assert wanted in answer["text"], f"{said}; expected the sentence {wanted!r}"
    listed = (answer.get("result") or {}).get("requirements")
    assert isinstance(listed, list), f"{said}; result.requirements is {listed!r}"
    assert {r.get("group_id") for r in listed} == choices(catalogue, course), said
