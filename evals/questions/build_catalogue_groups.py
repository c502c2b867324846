"""Build the catalogue-with-groups question sets: the UC San Diego catalogue with its requirement
groups ("one of CSE 21, MATH 154 ..."), asked in the catalogue set's own phrasings.

    python evals/questions/build_catalogue_groups.py [--check] [--summary]

The graph is ``../shared/dev-graphs/ucsd-catalogue`` (or ``$KG_DEV_GRAPHS``) converted with its
``requirements.json`` by :func:`evals.catalogue_groups.convert` (into a temporary folder: nothing of
the catalogue is copied into the project); without it the builder stops with a note and
``--check`` says it skipped. Score the sets on the same conversion::

    python -m evals.catalogue_groups ../shared/dev-graphs/ucsd-catalogue /tmp/ucsd-groups
    kg eval --questions evals/questions/catalogue_groups_dev.jsonl.gz --bundle /tmp/ucsd-groups --baseline loop

**Phrasings.** The dev and test templates of ``catalogue_templates.jsonl`` (build_catalogue.py),
each in its own split (the later dev rounds' in dev, after every earlier row; the holdout's are not
used), of the forms whose meaning with groups
docs/control-plane.md states and :mod:`evals.gold_groups` implements: prerequisites,
needed_before, dependents, comes_after, check, count, ready, remaining, shared, opens, start,
next (path and order, whose steps through options the spec leaves to wording, are not asked; nor
the abstentions, which read no group). Names are written and read back as that builder does
(every listed course and every course only a requirement names), five questions a template,
subjects drawn by a ``random.Random`` seeded by the template id: same files, same bytes.
``--check`` fails when a committed file is not what it would write.

**Gold** is :mod:`evals.gold_groups` on the converted bundle's CSV files. Each row's ``expect``
has the fields of :mod:`evals.questions` plus ``requirements`` (prerequisites: G(X);
needed_before: the choices), ``one_of`` (check, when the concept lies on some ways only) and
``unmet`` (ready, remaining). A subject **touches the groups** when its gold differs from the gold
of the same plain graph without groups or from the flat reading (every alternative required):
four of a template's five questions touch them, one is a control whose gold neither changes.
Touching cases, in a cycle per template: prerequisites groups only / with plain needs;
needed_before own groups / choices deeper down; dependents through options only / mixed;
check in an option / required by an option's member (``one_of``); count of needed_before small /
larger / none but choices; ready ready through options / only groups unmet / both / only
concepts missing; remaining with / without unmet groups; the rest any touching subject. Not
asked: a check whose concept reaches its course through more than one group, nested ones
included (the spec names the first choice by id, but any group on the way would be a fair
answer), a count of "prerequisites" a group touches ("how many does X list" has no one reading
with alternatives), sets over 15 concepts. Wording read two ways (``scope: either``) is asked only
where both readings give the same gold, as in the catalogue set.

Rows: the catalogue set's fields with ``corpus: "catalogue_groups"``, ids ``grp-<template>-<n>``,
``case`` and ``touches`` (false for the controls).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from evals import gold_groups as gold  # noqa: E402
from evals.catalogue_groups import convert  # noqa: E402
from evals.corpus import load_builder  # noqa: E402
from evals.dev_graphs import ENV, dev_graph, dev_graphs_folder  # noqa: E402
from evals.questions import write_or_check  # noqa: E402

base = load_builder("build_catalogue")

CORPUS = "catalogue_groups"
HERE = ROOT / "evals" / "questions"
SPLITS = ("dev", "test")
SEED = "ucsd-catalogue-groups-2026"
MAX_GOLD = base.MAX_GOLD
KNOWN_POOL = 10  # knowns of a readiness question are drawn from at most this many courses
CONTROL = "control"
FORMS = (*base.SETS, "check", "count", "ready", "remaining", "shared", "opens", "start", "next")
# The touching cases of each form, in the order a template cycles through them, then a control.
CASES: Mapping[str, tuple[str, ...]] = {
    "prerequisites": ("groups_only", "mixed", "groups_only", "mixed"),
    "needed_before": ("own", "deeper", "own", "deeper"),
    "dependents": ("options_only", "mixed", "options_only", "mixed"),
    "check": ("option", "deeper", "option", "deeper"),
    "count:needed_before": ("small", "larger", "zero", "small"),
    "count:prerequisites": (),
    "ready": ("ready", "unmet", "both", "missing"),
    "remaining": ("unmet", "met", "unmet", "met"),
}
TOUCHED = ("touched",) * 4
# Forms whose gold is a set of concepts only (the others may be groups alone).
MEMBERS_ONLY = ("dependents", "comes_after", "shared", "opens", "start", "next")
# Wording read two ways, asked only where both give the gold (intent -> the other readings).
EITHER = {
    "prerequisites": ("needed_before",),
    "needed_before": ("prerequisites",),
    "dependents": ("comes_after", "opens"),
    "comes_after": ("dependents",),
}

Subject = tuple[str, ...]


@dataclass(frozen=True)
class Gold(base.Gold):  # type: ignore[misc,name-defined]
    """The catalogue builder's gold and what the answer must say about groups."""

    one_of: str | None = None
    unmet: tuple[str, ...] | None = None
    requirements: tuple[str, ...] | None = None

    @classmethod
    def with_groups(cls, got: gold.GroupGold) -> Gold:
        return cls(
            frozenset(got.concepts),
            dict(got.finding),
            got.match,
            one_of=got.one_of,
            unmet=got.unmet,
            requirements=got.requirements,
        )


def with_unlisted(names: Any, gg: gold.GroupGraph) -> Any:
    """The catalogue's names and the courses only a requirement names (by their code), so that a
    question is read back against every name of the graph it is asked on."""
    extra = {cid: name for cid, name in gg.names.items() if cid not in names.code}
    keys = dict(names.keys)
    for cid, code in extra.items():
        keys[base.fold(code)] = keys.get(base.fold(code), frozenset()) | {cid}
    longest = max([names.longest, *(len(base.fold(c).split()) for c in extra.values())])
    return replace(names, code={**names.code, **extra}, keys=keys, longest=longest)


class Judge:
    """Which subjects each form is asked about, by case (module docstring), and their gold."""

    def __init__(self, cat: Any, gg: gold.GroupGraph) -> None:
        self.cat, self.gg = cat, gg
        self.readings = (gg.without_groups(), gg.flat())
        self.listed = frozenset(cat.courses)
        self.xs = [x for x in cat.courses if x in gg.g and cat.askable(x)]
        self._pools: dict[tuple[Any, ...], dict[str, list[Subject]]] = {}
        self._case: dict[tuple[Any, ...], str] = {}
        self._forward_before: dict[str, frozenset[str]] = {}

    def askable(self, x: str) -> bool:
        return x in self.listed and x in self.gg.g and bool(self.cat.askable(x))

    def gold(self, form: str, of: str | None, subject: Subject) -> Gold:
        return Gold.with_groups(gold.form_gold(self.gg, form, subject, of=of))

    def touches(self, form: str, of: str | None, subject: Subject, got: gold.GroupGold) -> bool:
        return any(gold.form_gold(r, form, subject, of=of) != got for r in self.readings)

    def case(self, t: Any, subject: Subject) -> str:
        return self._case[(t.form, t.scope, t.of, t.knowns, subject)]

    def pools(self, form: str, scope: str | None, of: str | None, knowns: int) -> dict[str, list[Subject]]:
        key = (form, scope, of, knowns)
        if key not in self._pools:
            found: dict[str, set[Subject]] = {}
            for subject in self._candidates(form, knowns):
                case = self._classify(form, scope, of, subject)
                if case is not None:
                    found.setdefault(case, set()).add(subject)
                    self._case[(*key, subject)] = case
            self._pools[key] = {case: sorted(s) for case, s in found.items()}
        return self._pools[key]

    # subjects ---------------------------------------------------------------------------------

    def _ways_near(self, x: str) -> set[str]:
        """What lies on some way to ``x``: the members of its choices and what each requires."""
        gg = self.gg
        members = {m for grp in gg.choices(x) for m in grp.members}
        return members.union(*(gg.required(m) for m in members))

    def _all_ways(self, a: str, x: str) -> set[str]:
        """Every group ``a`` reaches ``x`` through, nested ones too: its target is ``x`` or on a way
        to it, and ``a`` is a member or on a way to one. A check is asked only where this is the
        first choice the spec names, so no reading of "some ways" names another group."""
        h = self.gg.forward()
        before = self._forward_before
        if x not in before:
            before[x] = frozenset(nx.ancestors(h, x))
        targets = {x} | before[x]
        out = set()
        for grp in self.gg.groups.values():
            if grp.target in targets:
                for m in grp.members:
                    if m not in before:
                        before[m] = frozenset(nx.ancestors(h, m))
                    if a == m or a in before[m]:
                        out.add(grp.group_id)
                        break
        return out

    def _known_pool(self, x: str) -> list[str]:
        near = sorted(k for k in self.gg.required(x) | self._ways_near(x) if k != x and self.askable(k))
        if len(near) <= KNOWN_POOL:
            return near
        return sorted(random.Random(f"{SEED}:knowns:{x}").sample(near, KNOWN_POOL))

    def _candidates(self, form: str, knowns: int) -> Iterable[Subject]:
        gg = self.gg
        if form == "check":
            for x in self.xs:
                for a in sorted(gg.required(x) | self._ways_near(x)):
                    if a != x and self.askable(a):
                        yield (a, x)
        elif form in ("ready", "remaining"):
            for x in self.xs:
                for ks in itertools.combinations(self._known_pool(x), knowns):
                    yield (*ks, x)
        elif form == "shared":
            some = [x for x in self.xs if gg.required(x)]
            for a, b in itertools.combinations(some, 2):
                if a not in gg.required(b) and b not in gg.required(a):
                    yield (a, b)
        elif form == "next" and knowns == 2:
            after = gg.forward()
            singles = [x for x in self.xs if after.out_degree(x)]
            for a, b in itertools.combinations(singles, 2):
                apart = a not in gg.required(b) and b not in gg.required(a)
                if apart and self.cat.dept(a) == self.cat.dept(b):
                    yield (a, b)
        else:
            yield from ((x,) for x in self.xs)

    def _classify(self, form: str, scope: str | None, of: str | None, subject: Subject) -> str | None:
        """The case of ``subject`` (a touching one, or the control), None when it is not asked."""
        got = gold.form_gold(self.gg, form, subject, of=of)
        if len(got.concepts) > MAX_GOLD or not (got.concepts or got.finding or got.group_ids):
            return None
        if form in MEMBERS_ONLY and not got.concepts:
            return None
        if form == "start" and len(self.gg.required(subject[0])) > MAX_GOLD:
            return None
        if scope == "either" and any(
            (other_gold := gold.form_gold(self.gg, other, subject)).concepts != got.concepts
            or other_gold.requirements != got.requirements
            for other in EITHER[form]
        ):
            return None
        if not self.touches(form, of, subject, got):
            return CONTROL
        return self._touching(form, of, subject, got)

    def _touching(self, form: str, of: str | None, subject: Subject, got: gold.GroupGold) -> str | None:
        gg, x = self.gg, subject[-1]
        if form == "prerequisites":
            return "mixed" if got.concepts else "groups_only"
        if form == "needed_before":
            return "own" if gg.groups_of(x) else "deeper"
        if form == "dependents":
            return "mixed" if set(gg.g.successors(x)) else "options_only"
        if form == "check":
            if got.one_of is None or self._all_ways(*subject) != {got.one_of}:
                return None
            return "option" if subject[0] in gg.groups[got.one_of].members else "deeper"
        if form == "count":
            if of == "prerequisites":
                return None
            n = got.finding["count"]
            if of == "dependents":
                return "touched"
            return "zero" if n == 0 else "small" if n <= 3 else "larger"
        if form == "ready":
            if got.finding["holds"]:
                return "ready"
            return ("both" if got.concepts else "unmet") if got.unmet else "missing"
        if form == "remaining":
            return "unmet" if got.unmet else "met"
        return "touched"


class Builder(base.Builder):  # type: ignore[misc,name-defined]
    """The catalogue builder's phrasings, names and rows, with this set's subjects and gold."""

    corpus = CORPUS
    prefix = "grp-"

    def __init__(self, cat: Any, gg: gold.GroupGraph) -> None:
        super().__init__(replace(cat, names=with_unlisted(cat.names, gg)))
        self.judge = Judge(self.cat, gg)
        self.cases: dict[str, str] = {}

    def questions(self, templates: Sequence[Any]) -> list[Any]:
        """The dealt templates' questions, then the later dev rounds' (dev only, after every
        earlier row, so that adding a round leaves the rows before it as they were)."""
        out: list[Any] = []
        for t in sorted(templates, key=lambda t: t.round if t.later else 0):
            if t.form in FORMS and t.split in SPLITS:
                out += self._answerable(t, random.Random(f"{SEED}:{t.id}"))
        return out

    def _case_order(self, t: Any) -> list[str]:
        touching = CASES.get(f"{t.form}:{t.of}" if t.form == "count" else t.form, TOUCHED)
        pools = self.judge.pools(t.form, t.scope, t.of, t.knowns)
        cases = [c for c in (*touching, CONTROL) if c in pools] or list(pools)
        shift = int(hashlib.sha256(t.id.encode()).hexdigest(), 16) % len(cases)
        return cases[shift:] + cases[:shift]

    def _check_grouped(self, t: Any, subject: Subject, answer: Gold) -> None:
        """Nothing to refuse: the groups are what this set asks about (the catalogue set's rule
        keeps its gold the same without them)."""

    def _expect(self, t: Any, answer: Gold) -> dict[str, Any]:
        expect: dict[str, Any] = super()._expect(t, answer)
        if answer.one_of is not None:
            expect["one_of"] = answer.one_of
        for name in ("unmet", "requirements"):
            if (ids := getattr(answer, name)) is not None:
                expect[name] = list(ids)
        return expect

    def _made(self, t: Any, suffix: str, subject: Subject, answer: Gold, rng: random.Random) -> Any:
        made = super()._made(t, suffix, subject, answer, rng)
        self.cases[made.question.id] = self.judge.case(t, subject)
        return made


def row_of(made: Any, case: str) -> dict[str, Any]:
    return {**base.row_of(made), "case": case, "touches": case != CONTROL}


def output(split: str) -> Path:
    return HERE / f"{CORPUS}_{split}.jsonl.gz"


def build(cat: Any, gg: gold.GroupGraph, templates: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """Every row of both splits, from the catalogue templates and the graph with groups."""
    templates = base.load_templates() if templates is None else templates
    base.check_dealing(templates)
    builder = Builder(cat, gg)
    rows = [row_of(m, builder.cases[m.question.id]) for m in builder.questions(templates)]
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise ValueError("question ids must be unique")
    return rows


def texts(rows: Sequence[Mapping[str, Any]]) -> dict[Path, str]:
    """Each split's file and the text the builder writes into it."""
    return {
        output(split): "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r["split"] == split)
        for split in SPLITS
    }


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per split: questions, controls, by form and by form and case (no phrasing)."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        mine = [r for r in rows if r["split"] == split]
        out[split] = {
            "questions": len(mine),
            "controls": sum(1 for r in mine if not r["touches"]),
            "by_form": base._count(r["form"] for r in mine),
            "by_case": base._count(f"{r['form']}:{r['case']}" for r in mine),
        }
    return out


def load(source: Path) -> tuple[Any, gold.GroupGraph]:
    """The catalogue (names) and its graph with groups, converted into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="ucsd-groups-") as tmp:
        convert(source, Path(tmp))
        gg = gold.load_group_bundle(tmp)
    return base.Catalogue.load(source), gg


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs")
    parser.add_argument("--summary", action="store_true", help="print the counts per split")
    args = parser.parse_args(argv)
    source = dev_graph(base.GRAPH, os.environ)
    if source is None:
        print(f"skipped: no {base.GRAPH} graph in {dev_graphs_folder(os.environ)} (set {ENV}); nothing built")
        return 0 if args.check else 2
    rows = build(*load(source))
    files = texts(rows)
    if args.summary:
        print(json.dumps(summary(rows), indent=1))
    return write_or_check(files, check=args.check, script="build_catalogue_groups.py")


if __name__ == "__main__":
    raise SystemExit(main())
