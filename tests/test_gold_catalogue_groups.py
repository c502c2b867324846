"""Gold with requirement groups (evals.gold_groups, the meaning of docs/control-plane.md
"Requirements with alternatives"): on a tiny graph worked out by hand here, on real catalogue
courses checked by reading requirements.json, and for every question of the catalogue-with-groups
sets, recomputed by a second oracle written differently (brute force over the CSV rows).

The catalogue is a development graph beside the checkout (``../shared/dev-graphs``, or
``$KG_DEV_GRAPHS``); the tests that need it are skipped with a note when it is absent. A failure
names question ids only, never a phrasing: the test file is scored, not read."""

from __future__ import annotations

import csv
import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from evals import corpus
from evals import gold_groups as gg_
from evals.catalogue_groups import convert
from evals.dev_graphs import dev_graph, dev_graphs_folder
from evals.gold_groups import Group, GroupGold, GroupGraph
from evals.questions import load_questions, read_rows

# Plain needs: a -> b, k -> b, b -> x, g -> d.  Groups:
#   x.1  x needs one of {c} or {d, e};   x.2  x needs two of {f}, {h}, {m};
#   b.1  b needs one of {n} or {m};      k.1  k needs one of {s} or {t};   c.1  c needs one of {p} or {q}.
PLAIN = [("a", "b"), ("k", "b"), ("b", "x"), ("g", "d")]
GROUPS = [
    Group("x.1", "x", 1, (frozenset("c"), frozenset("de"))),
    Group("x.2", "x", 2, (frozenset("f"), frozenset("h"), frozenset("m"))),
    Group("b.1", "b", 1, (frozenset("n"), frozenset("m"))),
    Group("k.1", "k", 1, (frozenset("s"), frozenset("t"))),
    Group("c.1", "c", 1, (frozenset("p"), frozenset("q"))),
]
NODES = "abcdefghkmnpqstx"


@pytest.fixture
def gg() -> GroupGraph:
    g = nx.DiGraph()
    g.add_nodes_from(NODES)
    g.add_edges_from(PLAIN)
    return GroupGraph(g, GROUPS, {c: c.upper() for c in NODES})


def _set(*ids: str) -> frozenset[str]:
    return frozenset(ids)


def test_required_is_the_plain_closure_and_choices_gather_the_groups_along_it(gg: GroupGraph) -> None:
    assert gg.plain_needs("x") == {"b"}
    assert gg.required("x") == {"a", "b", "k"}  # c, d, e, f, h, m are ways, not required
    assert [g.group_id for g in gg.groups_of("x")] == ["x.1", "x.2"]
    assert [g.group_id for g in gg.choices("x")] == ["b.1", "k.1", "x.1", "x.2"]  # not c.1: c is an option
    assert gg.credited(["b"]) == {"a", "b", "k"}


def test_the_requirement_sentence_sorts_plain_names_then_phrases(gg: GroupGraph) -> None:
    assert gg_.requirement_sentence(gg, "x") == "X requires: B; one of C or (D and E); two of F, H or M."
    assert gg_.requirement_sentence(gg, "b") == "B requires: A; K; one of M or N."
    assert gg_.requirement_sentence(gg, "c") == "C requires: one of P or Q."
    assert gg_.requirement_sentence(gg, "a") is None


def test_an_option_of_several_concepts_lists_them_in_parentheses() -> None:
    """Options, and phrases, sort by their casefolded text with the parentheses aside."""
    names = {"y": "PHYS 1", "p2a": "PHYS 2A", "p2b": "PHYS 2B", "p2c": "phys 2c", "d": "CHEM 6"}
    names |= {"z": "PHYS 3", "p8": "PHYS 8", "p9": "PHYS 9", "b": "BIO 1"}
    g = nx.DiGraph()
    g.add_nodes_from(names)
    y1 = Group("y.1", "y", 1, (frozenset({"p2c", "p2b", "p2a"}), frozenset({"d"}), frozenset({"z"})))
    y2 = Group("y.2", "y", 1, (frozenset({"p9", "p8"}), frozenset({"b"})))
    view = GroupGraph(g, [y1, y2], names)
    # "phys 2a, ..." before "phys 3"; "one of bio 1 or phys 8 ..." before "one of chem 6, ...".
    assert gg_.requirement_sentence(view, "y") == (
        "PHYS 1 requires: one of BIO 1 or (PHYS 8 and PHYS 9); one of CHEM 6, (PHYS 2A, PHYS 2B and phys 2c) or PHYS 3."
    )
    y3 = Group("y.3", "y", 1, (frozenset({"p9", "p8"}), frozenset({"zoo"})))
    # "one of phys 8 and phys 9 or zoo 1" sorts after "one of chem 6, ...", though "(" sorts before "c".
    assert gg_.requirement_sentence(GroupGraph(g, [y1, y3], names | {"zoo": "ZOO 1"}), "y") == (
        "PHYS 1 requires: one of CHEM 6, (PHYS 2A, PHYS 2B and phys 2c) or PHYS 3; one of (PHYS 8 and PHYS 9) or ZOO 1."
    )


def test_prerequisites_and_needed_before_list_their_groups(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "prerequisites", ("x",)) == GroupGold(
        concepts=_set("b"), requirements=("x.1", "x.2")
    )
    assert gg_.form_gold(gg, "needed_before", ("x",)) == GroupGold(
        concepts=_set("a", "b", "k"), requirements=("b.1", "k.1", "x.1", "x.2")
    )


def test_check_names_the_one_group_a_concept_is_a_way_through(gg: GroupGraph) -> None:
    def check(a: str) -> tuple[bool, str | None]:
        got = gg_.form_gold(gg, "check", (a, "x"))
        assert got.concepts == {a, "x"} and got.match == "contains"
        return got.finding["holds"], got.one_of

    assert check("a") == (True, None)  # required
    assert check("n") == (False, "b.1")  # in an option of a choice of x (b's group)
    assert check("d") == (False, "x.1")  # in an option of x's own group
    assert check("g") == (False, "x.1")  # required by d, a member of an option
    assert check("f") == (False, "x.2")
    # On the ways through two groups: the first by group id.
    assert gg_.ways(gg, "m", "x") == {"b.1", "x.2"} and check("m") == (False, "b.1")
    # p is an option of c's group, c an option of x's: p lies on some way to c, so through x.1.
    assert gg_.ways(gg, "p", "x") == {"x.1"} and check("p") == (False, "x.1")
    # After x, on no way to a: no group to name.
    no_way = gg_.form_gold(gg, "check", ("x", "a"))
    assert (no_way.finding, no_way.one_of, gg_.ways(gg, "x", "a")) == ({"holds": False}, None, set())


def test_readiness_credits_what_the_knowns_require_and_lists_unmet_groups(gg: GroupGraph) -> None:
    def ready(*known: str) -> GroupGold:
        return gg_.form_gold(gg, "ready", (*known, "x"))

    assert ready("b", "c", "f", "h") == GroupGold({"holds": True}, frozenset(), unmet=())
    # Required all there, but only one of the two x.2 needs: not ready.
    assert ready("b", "c") == GroupGold({"holds": False}, frozenset(), unmet=("x.2",))
    # b and k missing: their groups count too, x's groups are met.
    assert ready("a", "c", "f", "h") == GroupGold({"holds": False}, _set("b", "k"), unmet=("b.1", "k.1"))
    assert gg_.form_gold(gg, "remaining", ("a", "f", "m", "x")) == GroupGold(
        concepts=_set("b", "k"), unmet=("k.1", "x.1")
    )


def test_count_dependents_and_what_comes_after_read_options(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "count", ("x",), of="needed_before") == GroupGold(
        {"count": 3}, _set("a", "b", "k")
    )
    assert gg_.form_gold(gg, "count", ("c",), of="needed_before") == GroupGold(
        {"count": 0}, _set("c"), "contains"
    )
    assert gg_.form_gold(gg, "dependents", ("m",)).concepts == {"b", "x"}  # an option of b.1 and of x.2
    assert gg_.form_gold(gg, "count", ("m",), of="dependents").finding == {"count": 2}
    assert gg_.form_gold(gg, "comes_after", ("g",)).concepts == {"d", "x"}
    assert gg_.form_gold(gg, "comes_after", ("p",)).concepts == {"c", "x"}


def test_next_and_opens_need_every_plain_need_and_every_group_met(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "next", ("a",)).concepts == set()  # b also needs k, and n or m
    assert gg_.form_gold(gg, "next", ("a", "k", "n")).concepts == {"b"}
    assert gg_.form_gold(gg, "next", ("s",)).concepts == {"k"}  # a group alone is something before
    assert gg_.form_gold(gg, "opens", ("p",)).concepts == {"c"}
    assert gg_.form_gold(gg, "opens", ("n",)).concepts == set()  # b still needs a and k


def test_shared_and_start_read_required_concepts_only(gg: GroupGraph) -> None:
    assert gg_.form_gold(gg, "shared", ("x", "b")).concepts == {"a", "k"}
    assert gg_.form_gold(gg, "start", ("x",)).concepts == {"a"}  # k needs nothing plain, but a group


def test_the_two_readings_a_set_is_compared_with(gg: GroupGraph) -> None:
    """Without groups nothing is a choice; flat, every alternative is required."""
    assert gg.without_groups().choices("x") == () and gg.without_groups().required("x") == {"a", "b", "k"}
    assert gg.flat().required("x") == set("abkcdefghmnpqst")


# -- the catalogue: real courses and every question of the sets ---------------------------------------

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "evals" / "questions"
SPLITS = ("dev", "test")
CATALOGUE = dev_graph("ucsd-catalogue", os.environ)
needs_catalogue = pytest.mark.skipif(
    CATALOGUE is None or not (CATALOGUE / "requirements.json").is_file(),
    reason=f"no ucsd-catalogue with requirements.json in {dev_graphs_folder(os.environ)} "
    "(../shared/dev-graphs, or set KG_DEV_GRAPHS): the groups sets' gold is checked where it is",
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert CATALOGUE is not None
    out = tmp_path_factory.mktemp("ucsd-groups")
    convert(CATALOGUE, out)
    return out


@pytest.fixture(scope="module")
def catalogue(bundle: Path) -> GroupGraph:
    return gg_.load_group_bundle(bundle)


def _rows(split: str) -> list[dict[str, Any]]:
    return read_rows(QUESTIONS / f"catalogue_groups_{split}.jsonl.gz")


def _fail_unless(problems: Iterable[str], what: str) -> None:
    """Fail listing the ids that break ``what`` (no phrasing reaches the report)."""
    problems = sorted(problems)
    if problems:
        pytest.fail(f"{what}: {problems[:20]} ({len(problems)} in all)", pytrace=False)


@needs_catalogue
def test_real_courses_read_as_their_requirements_json_says(catalogue: GroupGraph) -> None:
    """Checked by reading requirements.json: cse_101 is all of one of (cse_21, math_154, math_158,
    math_184, math_188) and one of (cse_12, dsc_30); cse_100 adds cse_12 plainly and one of
    (cse_15l, cse_29, ece_15); ece_107 is ece_45 and all of PHYS 2A-C or all of PHYS 4A-C; math_20a
    is one of an unlisted MATH 2C, math_4c, math_10a; econ_102 one of math_20c or two ones inside an all."""
    sentence = functools.partial(gg_.requirement_sentence, catalogue)
    assert (
        sentence("cse_101")
        == "CSE 101 requires: one of CSE 12 or DSC 30; one of CSE 21, MATH 154, MATH 158, MATH 184 or MATH 188."
    )
    assert sentence("cse_100") == (
        "CSE 100 requires: CSE 12; one of CSE 15L, CSE 29 or ECE 15; one of CSE 21, MATH 154, MATH 158, MATH 184 or MATH 188."
    )
    assert (
        sentence("ece_107")
        == "ECE 107 requires: ECE 45; one of (PHYS 2A, PHYS 2B and PHYS 2C) or (PHYS 4A, PHYS 4B and PHYS 4C)."
    )
    assert sentence("math_20a") == "MATH 20A requires: one of MATH 10A, MATH 2C or MATH 4C."
    # ece_103 is ece_65 and one of phys_2d or all of phys_4d, phys_4e: parentheses aside in the order.
    assert sentence("ece_103") == "ECE 103 requires: ECE 65; one of PHYS 2D or (PHYS 4D and PHYS 4E)."
    assert sentence("econ_102") == (
        "ECON 102 requires: one of (ECON 1 and ECON 2), (ECON 1 and ECON 3), (ECON 100B and ECON 2), "
        "(ECON 100B and ECON 3) or MATH 20C."
    )
    # cse_101 needs no course on every way; its two groups are the choices.
    assert gg_.form_gold(catalogue, "needed_before", ("cse_101",)) == GroupGold(
        concepts=frozenset(), requirements=("cse_101.1", "cse_101.2")
    )
    # cse_12 (itself one of cse_8b or cse_11) is required for cse_100: its group is a choice too.
    assert gg_.form_gold(catalogue, "needed_before", ("cse_100",)).requirements == (
        "cse_100.1",
        "cse_100.2",
        "cse_12.1",
    )


@needs_catalogue
def test_real_checks_and_readiness(catalogue: GroupGraph) -> None:
    """CSE 12 is one way to meet cse_101.2. CSE 8B is an option of cse_12's group (cse_12 is
    required for CSE 100), and on the way to CSE 15L (one of CSE 8B, CSE 11, ...: an option of
    cse_100.2) and to CSE 20 (one of ..., CSE 8B, ...), which CSE 21 needs (an option of
    cse_100.1): the first by id is named. DSC 30 and MATH 184 meet both of CSE 101's groups."""
    assert gg_.form_gold(catalogue, "check", ("cse_12", "cse_101")).one_of == "cse_101.2"
    assert gg_.ways(catalogue, "cse_8b", "cse_100") == {"cse_100.1", "cse_100.2", "cse_12.1"}
    assert gg_.form_gold(catalogue, "check", ("cse_8b", "cse_100")).one_of == "cse_100.1"
    assert gg_.form_gold(catalogue, "check", ("math_10b", "math_10c")).one_of == "math_10c.1"
    assert gg_.form_gold(catalogue, "check", ("cse_12", "cse_100")).finding == {"holds": True}
    ready = gg_.form_gold(catalogue, "ready", ("dsc_30", "math_184", "cse_101"))
    assert ready == GroupGold({"holds": True}, frozenset(), unmet=())
    assert gg_.form_gold(catalogue, "ready", ("cse_12", "cse_101")).unmet == ("cse_101.1",)
    # MATH 10C needs MATH 10B or MATH 20B, MATH 20B needs MATH 20A, MATH 10B or MATH 10C: options both ways.
    assert {"math_10c", "math_20c"} <= gg_.form_gold(catalogue, "dependents", ("math_20b",)).concepts
    assert "math_20b" in gg_.form_gold(catalogue, "dependents", ("math_10c",)).concepts


class Oracle:
    """The forms' gold again, written apart from evals.gold_groups: loops over the bundle's CSV rows
    (no networkx), for a reading of the groups: ``groups`` as stored, ``none`` (no group) or
    ``flat`` (each option member a plain need of its target)."""

    def __init__(self, bundle: Path, reading: str) -> None:
        def rows(name: str) -> list[dict[str, str]]:
            with (bundle / name).open(encoding="utf-8", newline="") as fh:
                return list(csv.DictReader(fh))

        edges = rows("concept_edges.csv")
        assert {r["relation"] for r in edges} == {"prerequisite"}
        pairs = {(r["source_id"], r["target_id"]) for r in edges}
        self.target = {r["group_id"]: r["target_id"] for r in rows("requirement_groups.csv")}
        self.k = {r["group_id"]: int(r["needs"]) for r in rows("requirement_groups.csv")}
        self.opts: dict[str, dict[str, set[str]]] = {g: {} for g in self.target}
        for r in rows("requirement_members.csv"):
            self.opts[r["group_id"]].setdefault(r["option"], set()).add(r["concept_id"])
        if reading == "flat":
            pairs |= {(m, t) for g, t in self.target.items() for m in self.members(g)}
        if reading != "groups":
            self.target, self.k, self.opts = {}, {}, {}
        self.all = {r["id"] for r in rows("concepts.csv")}
        self._needs = {c: {s for s, t in pairs if t == c} for c in self.all}
        self._plain_after = {c: {t for s, t in pairs if s == c} for c in self.all}
        self._req: dict[str, set[str]] = {}
        self._after: dict[str, set[str]] = {}

    def needs(self, x: str) -> set[str]:
        return self._needs[x]

    def groups(self, x: str) -> list[str]:
        return sorted(g for g, t in self.target.items() if t == x)

    def members(self, g: str) -> set[str]:
        return set().union(*self.opts[g].values())

    @staticmethod
    def _reach(x: str, step: Callable[[str], set[str]]) -> set[str]:
        """Everything ``step`` leads to from ``x``, again and again (x itself only on a cycle)."""
        seen: set[str] = set()
        todo = [x]
        while todo:
            for s in step(todo.pop()):
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return seen

    def req(self, x: str) -> set[str]:
        if x not in self._req:
            self._req[x] = self._reach(x, self.needs)
        return self._req[x]

    def met(self, g: str, have: set[str]) -> bool:
        return len([o for o in self.opts[g].values() if o.issubset(have)]) >= self.k[g]

    def have(self, known: list[str]) -> set[str]:
        return set(known).union(*(self.req(k) for k in known))

    def choices(self, x: str) -> list[str]:
        return sorted({g for c in [x, *self.req(x)] for g in self.groups(c)})

    def can(self, c: str, have: set[str]) -> bool:
        needs, gs = self.needs(c), self.groups(c)
        return bool(needs or gs) and needs.issubset(have) and all(self.met(g, have) for g in gs)

    def dependents(self, x: str) -> set[str]:
        return self._plain_after[x] | {t for g, t in self.target.items() if x in self.members(g)}

    def after(self, x: str) -> set[str]:
        if x not in self._after:
            self._after[x] = self._reach(x, self.dependents) - {x}
        return self._after[x]

    def expect(self, form: str, s: dict[str, str], of: str | None) -> dict[str, Any]:
        """The expect block a row must carry (abstain left out), from its form and subjects."""
        x = s.get("x", "")
        ks = [s[k] for k in ("k1", "k2", "k3") if k in s]
        if form == "prerequisites":
            return {"concepts": sorted(self.needs(x)), "requirements": self.groups(x)}
        if form == "needed_before":
            return {"concepts": sorted(self.req(x)), "requirements": self.choices(x)}
        if form == "check":
            a = s["a"]
            out: dict[str, Any] = {"concepts": sorted({a, x}), "finding": {"holds": a in self.req(x)}}
            out["match"] = "contains"
            through = [
                g for g in self.choices(x) if any(m == a or m in self.after(a) for m in self.members(g))
            ]
            if a not in self.req(x) and through:
                out["one_of"] = min(through)
            return out
        if form in ("ready", "remaining"):
            have = self.have(ks)
            missing = self.req(x) - have
            unmet = sorted(g for c in [x, *missing] for g in self.groups(c) if not self.met(g, have))
            if form == "remaining":
                return {"concepts": sorted(missing), "unmet": unmet}
            return {
                "concepts": sorted(missing),
                "finding": {"holds": not missing and not unmet},
                "unmet": unmet,
            }
        if form == "count":
            assert of is not None
            counted = {"needed_before": self.req, "prerequisites": self.needs, "dependents": self.dependents}[
                of
            ](x)
            if not counted:
                return {"concepts": [x], "finding": {"count": 0}, "match": "contains"}
            return {"concepts": sorted(counted), "finding": {"count": len(counted)}}
        if form == "dependents":
            return {"concepts": sorted(self.dependents(x))}
        if form == "comes_after":
            return {"concepts": sorted(self.after(x))}
        if form in ("next", "opens"):
            have = self.have(ks or [x])
            found = {c for c in self.all - have if self.can(c, have)}
            if form == "opens":
                found = {
                    c
                    for c in found
                    if x in self.needs(c) or any(x in self.members(g) for g in self.groups(c))
                }
            return {"concepts": sorted(found)}
        if form == "shared":
            return {"concepts": sorted(self.req(s["a"]) & self.req(s["b"]))}
        if form == "start":
            return {"concepts": sorted(c for c in self.req(x) if not self.needs(c) and not self.groups(c))}
        raise AssertionError(form)


GROUP_KEYS = ("concepts", "finding", "match", "one_of", "unmet", "requirements")


def _expected(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row["expect"][k] for k in GROUP_KEYS if k in row["expect"]}


@pytest.fixture(scope="module")
def oracles(bundle: Path) -> dict[str, Oracle]:
    return {reading: Oracle(bundle, reading) for reading in ("groups", "none", "flat")}


@pytest.fixture(scope="module")
def templates() -> dict[str, dict[str, Any]]:
    """The catalogue templates' metadata by id (their texts are not read here)."""
    rows = read_rows(QUESTIONS / "catalogue_templates.jsonl")
    return {r["id"]: {k: v for k, v in r.items() if k != "text"} for r in rows}


def test_the_files_are_one_corpus_each_template_in_its_own_split(
    templates: dict[str, dict[str, Any]],
) -> None:
    ids: list[str] = []
    for split in SPLITS:
        questions = load_questions(QUESTIONS / f"catalogue_groups_{split}.jsonl.gz")
        rows = _rows(split)
        # the dealt templates' questions; dev also has the later dev rounds' (dev only, after them)
        later = [r for r in rows if templates[r["template"]].get("round", 1) > 1]
        assert 200 <= len(questions) - len(later) <= 260
        assert split == "dev" or not later
        assert [r["id"] for r in rows[len(rows) - len(later) :]] == [r["id"] for r in later]
        _fail_unless([q.id for q in questions if q.corpus != "catalogue_groups"], f"{split}: corpus")
        _fail_unless([r["id"] for r in rows if r["split"] != split], f"{split}: split field")
        _fail_unless(
            [r["id"] for r in rows if templates[r["template"]]["split"] != split], f"{split}: template split"
        )
        _fail_unless([r["id"] for r in rows if r["expect"]["abstain"]], f"{split}: abstentions")
        ids += [q.id for q in questions]
    assert len(ids) == len(set(ids))


def test_every_question_touches_a_group_but_the_controls() -> None:
    """About four in five questions touch the groups; every form has both kinds, and every case
    the builder cycles through is asked, in each split."""
    cases = corpus.load_builder("build_catalogue_groups").CASES
    wanted = {(k.split(":")[0], case) for k, cs in cases.items() for case in cs}
    for split in SPLITS:
        assert wanted <= {(r["form"], r["case"]) for r in _rows(split)}, split
        rows = _rows(split)
        controls = [r for r in rows if not r["touches"]]
        assert 0.15 <= len(controls) / len(rows) <= 0.3, split
        touching = {r["form"] for r in rows if r["touches"]}
        assert touching == {r["form"] for r in rows}, split
        assert {r["form"] for r in controls} == touching, split


def _of(templates: dict[str, dict[str, Any]], row: dict[str, Any]) -> str | None:
    return templates[row["template"]].get("of")


@needs_catalogue
def test_every_gold_is_the_second_oracles(
    oracles: dict[str, Oracle], templates: dict[str, dict[str, Any]]
) -> None:
    """Each row's expect block, recomputed from its form and subjects by the oracle over the CSV rows."""
    o = oracles["groups"]
    wrong = [
        r["id"]
        for split in SPLITS
        for r in _rows(split)
        if o.expect(r["form"], r["subjects"], _of(templates, r)) != _expected(r)
    ]
    _fail_unless(wrong, "gold differs from the oracle's")


@needs_catalogue
def test_wording_read_two_ways_has_one_gold(
    oracles: dict[str, Oracle], templates: dict[str, dict[str, Any]]
) -> None:
    """A template whose wording could mean either set ("what do you need to get into X") is asked
    only where both readings give the same members and groups."""
    other = {"prerequisites": ["needed_before"], "needed_before": ["prerequisites"]}
    other |= {"dependents": ["comes_after", "opens"], "comes_after": ["dependents"]}
    o = oracles["groups"]
    wrong = []
    for split in SPLITS:
        for r in _rows(split):
            if templates[r["template"]].get("scope") == "either":
                mine = o.expect(r["form"], r["subjects"], None)
                for form in other[r["form"]]:
                    theirs = o.expect(form, r["subjects"], None)
                    if [theirs.get(k) for k in ("concepts", "requirements")] != [
                        mine.get(k) for k in ("concepts", "requirements")
                    ]:
                        wrong.append(r["id"])
    _fail_unless(wrong, "readings of an either wording differ")


@needs_catalogue
def test_touching_questions_differ_without_groups_or_read_flat_and_controls_do_not(
    oracles: dict[str, Oracle], templates: dict[str, dict[str, Any]]
) -> None:
    """A control's gold is the same with no group and with every alternative required; a touching
    question's is not (it names a group, or its set or finding changes)."""
    wrong = []
    for split in SPLITS:
        for r in _rows(split):
            of = _of(templates, r)
            mine = oracles["groups"].expect(r["form"], r["subjects"], of)
            others = [oracles[o].expect(r["form"], r["subjects"], of) for o in ("none", "flat")]
            if r["touches"] != any(o != mine for o in others):
                wrong.append(r["id"])
    _fail_unless(wrong, "touches says otherwise than the readings")


@needs_catalogue
def test_a_check_names_the_only_group_on_every_way_nested_ones_too(oracles: dict[str, Oracle]) -> None:
    """Where a check names one_of, no other group (not even one of an option's own) leads from its
    concept to its course, so a deeper reading of "some ways" names the same group."""
    o = oracles["groups"]
    wrong = []
    for split in SPLITS:
        for r in _rows(split):
            if "one_of" in r["expect"]:
                a, x = r["subjects"]["a"], r["subjects"]["x"]
                on_way = {x} | {c for c in o.all if x in o.after(c)}
                through = {
                    g
                    for g, t in o.target.items()
                    if t in on_way and any(m == a or m in o.after(a) for m in o.members(g))
                }
                if through != {r["expect"]["one_of"]}:
                    wrong.append(r["id"])
    _fail_unless(wrong, "a check's concept reaches its course through other groups")


@needs_catalogue
def test_the_committed_files_are_what_the_builder_writes() -> None:
    builder = corpus.load_builder("build_catalogue_groups")
    assert builder.main(["--check"]) == 0
