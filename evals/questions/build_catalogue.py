"""Build the catalogue question sets: what students ask about a real university course catalogue.

    python evals/questions/build_catalogue.py [--check] [--deal]

The graph is UC San Diego's catalogue (``../shared/dev-graphs/ucsd-catalogue``, or
``$KG_DEV_GRAPHS/ucsd-catalogue``; :mod:`evals.dev_graphs`): 1,025 courses of six departments named
by code (``CSE 101``, ``MATH 20C``), the title an alias, 674 ``prerequisite`` edges (a required
course or an AND part of the requirement), no cycles. It is not copied into the project: without
it this builder stops with a note and ``--check`` says it skipped.

It fills the phrasings of ``catalogue_templates.jsonl`` (one row per phrasing: ``id``, ``form``,
``class``, ``text``, ``split`` and the optional ``scope``, ``of``, ``asks``, ``n``, ``round``) with
catalogue courses and writes ``catalogue_dev.jsonl.gz``, ``catalogue_test.jsonl.gz`` and
``catalogue_holdout.jsonl.gz`` (rows: the fields of :mod:`evals.questions` with ``corpus:
"catalogue"``, and ``split``, ``form``, ``class``, ``styles`` (how each name was written) and
``subjects`` (slot -> course id) for per-kind figures and re-checking). Same templates and graph,
same bytes: every choice is drawn from a ``random.Random`` seeded by the template id.
``--check`` fails when a committed file is not what it would write.

**Split.** A phrasing is in one split only. The dev/test templates were ordered by the SHA-256 of
their id and dealt once, each to the split with fewer templates of its kind (group, form, class,
scope, set counted, number of knowns), else of its class within its group, else of its group (the
form, or ``set_aside`` for the answer-and-set-aside phrasings), else in all; ``--deal`` deals only
templates that have no split yet, so adding a phrasing never moves another. The builder refuses a
template without a split or a group whose splits differ by more than one. ``holdout`` templates
(``round`` 1) were written afterwards, blind of the reader, in other words again, and take no part
in the dealing. The test and holdout files are scored, never read by whoever tunes the reader.
Later dev rounds (``round`` in :data:`LATER_ROUNDS` on a ``dev`` template: ids ``cat2-*``,
``cat3-*``, ``cat4-*``) were written after the dealing, blind of the reader and of the test and holdout
phrasings, to give whoever tunes the reader more dev phrasings: they are dev only, take no part
in the dealing (nor in its balance), are instantiated after every earlier template, round by
round, so every question made before them stays as it was and theirs follow in
``catalogue_dev.jsonl.gz``, and their rows carry no ``round`` (a question row's ``round`` is the
blind holdout round it was written in).

**Gold** comes from :mod:`evals.gold` (networkx over the bundle's CSV files), never from the
system. Learning order ``u -> v`` for a prerequisite edge; pred, anc, succ, desc; K* = the courses
the learner says they have done and everything before them:

====================  ===========================================================  ===============
form (``intent``)     gold                                                         finding
====================  ===========================================================  ===============
prerequisites         pred(x)
needed_before         anc(x)
dependents            succ(x)
comes_after           desc(x)
check (needed_before) x, a (contains)                                              holds: a in anc(x)
count                 the counted set (``of``: needed_before, prerequisites,       count
                      dependents); x (contains) for 0
path                  the unique shortest a..x path's courses
order                 a, b (contains)                                              first
ready                 missing = anc(x) - K* (empty when ready)                     holds: no missing
shared                anc(a) & anc(b) (never the union; never empty)
remaining             anc(x) - K* of {k1}
opens                 d in succ(x) with pred(d) within K* of {x}
start                 the courses of anc(x) with no prerequisites
next                  c outside K*, pred(c) non-empty and within K*
====================  ===========================================================  ===============

Sets hold 1-15 courses. ``scope`` says what a set wording means: ``direct`` (pred, succ),
``transitive`` (anc, desc) or ``either`` (a wording that could mean both: asked only where both
agree, and for ``dependents`` also where it equals what x opens, since "what opens up after x"
is said both ways). Scoped wording prefers subjects where the scopes differ.

**Gold must not depend on groups.** ``requirements.json`` holds the one-of/two-of groups the edges
leave out ("one of CSE 21, MATH 154 ..."); a later change will bring them into the graph. Every
question is asked only where its gold is the same with or without them. The rule rests on one
assumption (:class:`evals.gold.RequirementGroups`): bringing a group in may rewrite, in any way,
the incoming edges of a *group target* (a course whose requirement holds a group) -- new group
nodes, unlisted courses as nodes, new edges out of any course its expression names -- and touches
no other course's incoming edges. With T the group targets and N the courses some target's
requirement names:

* pred(x) stays when x is not in T; anc(x) (so the paths into x, its starting points, ``check``
  and ``count`` of it) when neither x nor anything in anc(x) is in T
  (:func:`evals.gold.group_free_before`);
* succ(x) stays when x is not in N (then no dependent of x is in T either); desc(x) when neither
  x nor any course of desc(x) is in N and no course of desc(x) is in T
  (:func:`evals.gold.group_free_after`);
* ``ready``, ``remaining``, ``shared``, ``order``: the before-rule for every course named;
  ``opens``: the before-rule and the succ-rule for x (so every dependent's pred stays);
  ``next``: the before-rule for every known and no target outside K* names a course of K*
  (:func:`evals.gold.group_free_next`: a target naming none of K* is not next either way);
* abstentions (unknown codes, attributes, longer phrases, shared titles, two questions,
  differences) and their suggestions do not read edges.

The builder then rebuilds the graph both ways :func:`evals.gold.with_groups` brings the groups
in (as nodes; every alternative as a required edge) and refuses to write a question whose gold
differs on either. Of the catalogue's 1,025 courses, 245 are group targets and 255 course names
are group options (156 of them listed courses); the pred-rule keeps 780 courses (361 with a
prerequisite), the before-rule 624 (205 with something before them), the succ-rule 855 (160 with
a dependent), the desc-rule 843 (148 with something after them), the opens rule 104 courses that
open something, the next rule 168 single knowns with something next; :func:`survivors` counts them.

**Names as students type them.** Each course slot takes a style, drawn per question: the code as
stored (``CSE 100``), in lower case, joined (``cse100``, ``CSE100``), hyphenated (``cse-100``),
capitalised (``Cse 100``); or, for a course with a title alias of its own, the title, in lower
case, ``intro to`` for ``Introduction to``, an arabic numeral for a roman one (``Quantum Fields 2``),
or ``CODE (Title)``. A title is used only when it (and its variant) names this one course and is
no part of another course's title; a title with "and", commas or colons only in one-course
phrasings. Every question is read back (:meth:`Names.named`: every code and title it holds, the
longest match winning) and refused unless it names exactly the courses it was made from.

Abstain classes (``expect.abstain``): ``unknown_code`` (a code the catalogue does not list, nor as
part of a sequence listing, nor a prefix of a listed code or the other way round; also asked once
by every third template of the answerable forms), ``attribute`` (who teaches, careers, how hard,
when offered ...), ``longer_phrase`` (a course's name followed by words that make it something
else: "the CSE 100 midterm"), ``shared_title`` (a title several courses share and none has as an
alias; ``expect.suggest``: those courses), ``two_questions`` (two graph questions of different
forms in one message), ``difference`` (no contrast relation in this graph). Class ``set_aside``
asks a graph question with an off-topic aside or second request: the gold is the graph part's,
with ``expect.set_aside: true``.
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from evals import gold  # noqa: E402
from evals.dev_graphs import ENV, dev_graph, dev_graphs_folder  # noqa: E402
from evals.questions import Question, parse_question, read_rows, write_or_check  # noqa: E402

CORPUS = "catalogue"
GRAPH = "ucsd-catalogue"
HERE = ROOT / "evals" / "questions"
TEMPLATES = HERE / "catalogue_templates.jsonl"
DEALT = ("dev", "test")
SPLITS = (*DEALT, "holdout")
SEED = "ucsd-catalogue-2025"
MAX_GOLD = 15
NAME_TRIES = 20
SHORTENED_SHARE = 0.3  # share of subjects drawn among courses with a shortened title
DEFAULT_N = 5
ABSTAIN_N = 3
LATER_ROUNDS = (2, 3, 4)  # dev-only rounds written after the dealing (module docstring, "Split")

SETS = ("prerequisites", "needed_before", "dependents", "comes_after")
ANSWERABLE = (
    *SETS,
    "check",
    "count",
    "path",
    "order",
    "ready",
    "shared",
    "remaining",
    "opens",
    "start",
    "next",
)
ABSTAIN = ("unknown_code", "attribute", "longer_phrase", "shared_title", "two_questions", "difference")
SCOPES = ("direct", "transitive", "either")
SCOPE_OF = {
    "prerequisites": "direct",
    "needed_before": "transitive",
    "dependents": "direct",
    "comes_after": "transitive",
}
COUNT_OF = ("needed_before", "prerequisites", "dependents")
EASY = ("plain", "nouns", "context", "unknown")
HARD = ("readiness", "scope", "dropped", "ambiguous", "set_aside")
# The classes a form's templates may have (set_aside: any answerable form).
CLASS_OF: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((*SETS, "check", "count", "path", "order"), ("plain", "nouns", "context", "set_aside")),
    "ready": ("readiness", "set_aside"),
    **dict.fromkeys(("shared", "remaining", "opens", "start", "next"), ("scope", "set_aside")),
    "unknown_code": ("unknown",),
    "shared_title": ("ambiguous",),
    **dict.fromkeys(("attribute", "longer_phrase", "two_questions", "difference"), ("dropped",)),
}
# What a row's ``type`` says (the reporting category) and its ``intent`` (what is asked).
ABSTAIN_TYPE = {
    "unknown_code": "unanswerable",
    "attribute": "unsupported",
    "longer_phrase": "longer_phrase",
    "shared_title": "ambiguous_name",
    "two_questions": "two_questions",
    "difference": "absent_relation",
}
ABSTAIN_INTENT = {"attribute": "unsupported", "two_questions": "two_questions", "difference": "contrasts"}
# The slots a form fills, in its subject's order (k: the courses the learner has done).
SLOTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys((*SETS, "count", "opens", "start", "attribute", "longer_phrase"), ("x",)),
    **dict.fromkeys(("check", "path"), ("a", "x")),
    **dict.fromkeys(("order", "shared", "two_questions", "difference"), ("a", "b")),
    "ready": ("k1", "k2", "k3", "x"),
    "remaining": ("k1", "x"),
    "next": ("k1", "k2"),
    "shared_title": ("t",),
    "unknown_code": ("u", "a"),
}

# Codes the catalogue does not list: numbers it never had, retired ones (MATH 20F, CSE 5A), and
# other departments' courses students take alongside (COGS 108). Checked by :func:`check_lists`.
UNKNOWN_CODES = (
    "CSE 102",
    "CSE 8C",
    "CSE 22",
    "CSE 5A",
    "CSE 152C",
    "MATH 20F",
    "MATH 21D",
    "DSC 42",
    "PHYS 4F",
    "PHYS 2F",
    "ECE 47",
    "ECON 100D",
    "ECON 120D",
    "ECON 110C",
    "COGS 108",
    "BILD 1",
    "CHEM 6A",
    "LIGN 101",
)
# Titles several courses share, none of them an alias (asked by title: suggest them all).
SHARED_TITLE_MAX = 4

ROMAN = {"I": "1", "II": "2", "III": "3", "IV": "4", "V": "5"}
CODE_STYLES = ("code", "code_lower", "joined", "joined_upper", "hyphen", "capital")
TITLE_STYLES = ("title", "title_lower", "intro", "numeral", "code_title")
STYLE_WEIGHTS = {
    "code": 20,
    "code_lower": 10,
    "joined": 10,
    "joined_upper": 6,
    "hyphen": 8,
    "capital": 5,
    "title": 12,
    "title_lower": 8,
    "intro": 30,
    "numeral": 12,
    "code_title": 6,
}
CODE_RE = re.compile(r"([A-Z]{2,5}) (\d+[A-Z]*)")


# -- names -----------------------------------------------------------------------------------------------


@functools.cache
def fold(text: str) -> str:
    """A name as compared: NFKC, case folded, dashes, slashes and underscores as spaces,
    punctuation dropped, and a department's letters split from the number that follows them
    (``cse100`` -> ``cse 100``); ``intro`` is ``introduction``."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"[‐‑‒–—―\-_/]", " ", t)
    t = re.sub(r"['’‘`]s\b", "", t)
    t = re.sub(r"[^\w\s]", " ", t)
    t = re.sub(r"\b([a-z]{2,5})(?=\d)", r"\1 ", t)
    t = re.sub(r"\bintro\b", "introduction", t)
    return " ".join(t.split())


def _numeral(title: str) -> str | None:
    """The title with its roman numerals as arabic ones (None: it has none)."""
    words = title.split(" ")
    swapped = [ROMAN.get(w.rstrip(":")) for w in words]
    if not any(swapped):
        return None
    return " ".join(
        (s + (":" if w.endswith(":") else "")) if s else w for w, s in zip(words, swapped, strict=True)
    )


@dataclass(frozen=True)
class Names:
    """The catalogue's codes and titles, the keys a text is read by, and how students write them."""

    code: Mapping[str, str]  # id -> code as stored
    title: Mapping[str, str]  # id -> its title alias ("" when its title is shared)
    shared: Mapping[str, tuple[str, ...]]  # a title several courses share -> their ids
    keys: Mapping[str, frozenset[str]]  # folded key -> the ids it names
    longest: int
    titled: frozenset[str]  # ids whose title (and its variants) can name them alone

    @classmethod
    def build(cls, code: Mapping[str, str], title: Mapping[str, str], full: Mapping[str, str]) -> Names:
        """``full``: every course's catalogue title, shared or not."""
        shared: dict[str, list[str]] = {}
        for cid, t in full.items():
            if not title.get(cid):
                shared.setdefault(t, []).append(cid)
        keys: dict[str, set[str]] = {}
        for cid, c in code.items():
            keys.setdefault(fold(c), set()).add(cid)
        title_keys: dict[str, set[str]] = {}
        for cid, t in full.items():
            for form in _title_forms(t):
                title_keys.setdefault(fold(form), set()).add(cid)
        for k, ids in title_keys.items():
            keys.setdefault(k, set()).update(ids)
        longest = max(len(k.split()) for k in keys)
        within: dict[str, set[str]] = {}  # a phrase -> the courses whose title holds it (not as all)
        for k, ids in title_keys.items():
            words = k.split()
            for i, j in itertools.combinations(range(len(words) + 1), 2):
                if (i, j) != (0, len(words)):
                    within.setdefault(" ".join(words[i:j]), set()).update(ids)
        titled = set()
        for cid, t in title.items():
            forms = [fold(f) for f in _title_forms(t)] if t else []
            if forms and all(keys[f] == {cid} and not within.get(f, set()) - {cid} for f in forms):
                titled.add(cid)
        return cls(
            code=dict(code),
            title=dict(title),
            shared={t: tuple(sorted(ids)) for t, ids in shared.items() if len(ids) > 1},
            keys={k: frozenset(v) for k, v in keys.items()},
            longest=longest,
            titled=frozenset(titled),
        )

    def named(self, text: str) -> list[frozenset[str]]:
        """The names ``text`` holds, as the id sets their keys name, the longest match winning
        (a match inside a longer one is dropped), in order."""
        words = fold(text).split()
        spans = []
        for i in range(len(words)):
            for j in range(i + 1, min(len(words), i + self.longest) + 1):
                ids = self.keys.get(" ".join(words[i:j]))
                if ids:
                    spans.append((i, j, ids))
        kept = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
        return [ids for _, _, ids in kept]

    def styles(self, cid: str, *, one_slot: bool) -> list[str]:
        """The styles ``cid`` can be written in (module docstring, "Names")."""
        out = list(CODE_STYLES) if CODE_RE.fullmatch(self.code[cid]) else ["code"]
        t = self.title.get(cid, "")
        if cid in self.titled and (one_slot or not re.search(r" and |[,:;&]", t)):
            out += ["title", "title_lower", "code_title"]
            if t.startswith("Introduction to "):
                out.append("intro")
            if _numeral(t):
                out.append("numeral")
        elif cid in self.titled:
            out.append("code_title")
        return out

    def render(self, cid: str, style: str, rng: random.Random) -> str:
        c, t = self.code[cid], self.title.get(cid, "")
        m = CODE_RE.fullmatch(c)
        if style == "code":
            return c
        if style in CODE_STYLES:
            assert m is not None
            dept, num = m.groups()
            return {
                "code_lower": f"{dept.lower()} {num.lower()}",
                "joined": f"{dept.lower()}{num.lower()}",
                "joined_upper": f"{dept}{num}",
                "hyphen": rng.choice((f"{dept.lower()}-{num.lower()}", f"{dept}-{num}")),
                "capital": f"{dept.capitalize()} {num}",
            }[style]
        if style == "title":
            return t
        if style == "title_lower":
            return t.lower()
        if style == "intro":
            rest = t[len("Introduction to ") :]
            return rng.choice(("intro to ", "Intro to ")) + (rest.lower() if rng.random() < 0.5 else rest)
        if style == "numeral":
            swapped = _numeral(t)
            assert swapped is not None
            return swapped if rng.random() < 0.5 else swapped.lower()
        if style == "code_title":
            return f"{c} ({t})"
        raise ValueError(f"unknown style {style!r}")

    def pick(self, cid: str, rng: random.Random, *, one_slot: bool) -> tuple[str, str]:
        """(style, text): a style drawn by :data:`STYLE_WEIGHTS` among those ``cid`` has."""
        options = self.styles(cid, one_slot=one_slot)
        style = rng.choices(options, weights=[STYLE_WEIGHTS[s] for s in options])[0]
        return style, self.render(cid, style, rng)


def _title_forms(title: str) -> list[str]:
    """A title and the variants students write that still read as it."""
    forms = [title]
    if title.startswith("Introduction to "):
        forms.append("intro to " + title[len("Introduction to ") :])
    if swapped := _numeral(title):
        forms.append(swapped)
    return forms


# -- the catalogue ---------------------------------------------------------------------------------------


@dataclass(eq=False)
class Catalogue:
    """The learning order, the requirement groups, the names, and what is before and after each
    course (cached)."""

    g: nx.DiGraph
    groups: gold.RequirementGroups
    names: Names
    _anc: dict[str, frozenset[str]] = field(default_factory=dict)
    _desc: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, bundle: Path) -> Catalogue:
        with (bundle / "concepts.csv").open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        code = {r["id"]: r["name"] for r in rows}
        title = {r["id"]: r["aliases"] for r in rows}
        full = {}
        for r in rows:  # the catalogue title, shared or not, as the row's reason gives it
            m = re.match(rf"{re.escape(r['name'])} \((.+)\) is listed", r["reason"])
            if m is None or (r["aliases"] and m.group(1) != r["aliases"]):
                raise ValueError(f"{r['id']}: no catalogue title in its reason {r['reason']!r}")
            full[r["id"]] = m.group(1)
        groups = gold.load_requirements(bundle)
        if groups is None:
            raise ValueError(f"{bundle}: no requirements.json")
        g = gold.before_graph(gold.load_bundle_view(bundle))
        return cls(g, groups, Names.build(code, title, full))

    @property
    def courses(self) -> list[str]:
        return sorted(self.g)

    def anc(self, x: str) -> frozenset[str]:
        if x not in self._anc:
            self._anc[x] = frozenset(nx.ancestors(self.g, x))
        return self._anc[x]

    def desc(self, x: str) -> frozenset[str]:
        if x not in self._desc:
            self._desc[x] = frozenset(nx.descendants(self.g, x))
        return self._desc[x]

    def closure(self, ks: Iterable[str]) -> frozenset[str]:
        """K*: the knowns and everything before them (from the caches)."""
        return frozenset(ks).union(*(self.anc(k) for k in ks))

    def pred(self, x: str) -> frozenset[str]:
        return frozenset(self.g.predecessors(x))

    def succ(self, x: str) -> frozenset[str]:
        return frozenset(self.g.successors(x))

    def dept(self, x: str) -> str:
        return x.split("_")[0]

    def graduate(self, x: str) -> bool:
        """A graduate course (numbered 200 and up)."""
        m = re.search(r"\d+", self.names.code[x])
        return m is not None and int(m.group()) >= 200

    def in_edge(self, x: str) -> bool:
        return bool(self.g.in_degree(x) or self.g.out_degree(x))

    def askable(self, x: str) -> bool:
        """A course a slot may name: its code is a plain code (not a sequence listing)."""
        return CODE_RE.fullmatch(self.names.code[x]) is not None

    # the group-independence rule (module docstring) ---------------------------------------------

    @functools.cached_property
    def _free_before(self) -> frozenset[str]:
        return frozenset(x for x in self.g if gold.group_free_before(self.g, self.groups, x))

    @functools.cached_property
    def _free_succ(self) -> frozenset[str]:
        return frozenset(x for x in self.g if gold.group_free_after(self.g, self.groups, x, direct=True))

    @functools.cached_property
    def _free_desc(self) -> frozenset[str]:
        return frozenset(x for x in self.g if gold.group_free_after(self.g, self.groups, x, direct=False))

    def free_before(self, *xs: str) -> bool:
        return all(x in self._free_before for x in xs)

    def free_pred(self, x: str) -> bool:
        return x not in self.groups.targets

    def free_succ(self, x: str) -> bool:
        return x in self._free_succ

    def free_desc(self, x: str) -> bool:
        return x in self._free_desc

    def free_next(self, ks: Sequence[str]) -> bool:
        return gold.group_free_next(self.g, self.groups, ks)

    @functools.cached_property
    def rebuilt(self) -> tuple[nx.DiGraph, nx.DiGraph]:
        """The graph with the groups brought in, both ways (:func:`evals.gold.with_groups`)."""
        return (
            gold.with_groups(self.g, self.groups, style="nodes"),
            gold.with_groups(self.g, self.groups, style="flat"),
        )


def survivors(cat: Catalogue) -> dict[str, int]:
    """How many courses each part of the group-independence rule keeps (and with a gold)."""
    g = cat.g
    return {
        "courses": len(g),
        "group_targets": len(cat.groups.targets),
        "group_options": len(cat.groups.options),
        "group_options_listed": len(cat.groups.options & set(g)),
        "free_pred": sum(1 for x in g if cat.free_pred(x)),
        "free_pred_with_prerequisites": sum(1 for x in g if cat.free_pred(x) and cat.pred(x)),
        "free_before": sum(1 for x in g if cat.free_before(x)),
        "free_before_with_ancestors": sum(1 for x in g if cat.free_before(x) and cat.anc(x)),
        "free_succ": sum(1 for x in g if cat.free_succ(x)),
        "free_succ_with_dependents": sum(1 for x in g if cat.free_succ(x) and cat.succ(x)),
        "free_desc": sum(1 for x in g if cat.free_desc(x)),
        "free_desc_with_descendants": sum(1 for x in g if cat.free_desc(x) and cat.desc(x)),
        "free_opens": sum(1 for x in g if cat.free_before(x) and cat.free_succ(x) and gold.opened_by(g, x)),
        "free_next_single": sum(1 for x in g if cat.free_next([x]) and gold.learn_next(g, [x])),
    }


# -- gold ------------------------------------------------------------------------------------------------


Subject = tuple[str, ...]


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
        return cls(frozenset(form.concepts), dict(form.finding), form.match)


def _set(g: nx.DiGraph, intent: str, x: str) -> set[str]:
    if intent == "prerequisites":
        return set(g.predecessors(x))
    if intent == "needed_before":
        return set(nx.ancestors(g, x))
    if intent == "dependents":
        return set(g.successors(x))
    if intent == "comes_after":
        return set(nx.descendants(g, x))
    raise ValueError(intent)


def form_gold(g: nx.DiGraph, form: str, of: str | None, subject: Subject) -> gold.FormGold:
    """A form's gold on order graph ``g`` (the table in the module docstring), with evals.gold."""
    if form in SETS:
        return gold.FormGold(concepts=frozenset(_set(g, form, subject[0])))
    if form == "count":
        assert of is not None
        return gold.count_gold(_set(g, of, subject[0]), subject[0])
    if form == "check":
        a, x = subject
        return gold.check_gold(g, a, x, direct=False)
    if form == "path":
        chain = gold.unique_chain(g, *subject)
        return gold.FormGold(concepts=frozenset(chain or ()))
    if form == "order":
        return gold.order_gold(g, *subject)
    if form == "ready":
        *ks, x = subject
        return gold.ready_gold(g, ks, x)
    if form == "shared":
        return gold.shared_gold(g, *subject, direct=False)
    if form == "remaining":
        k, x = subject
        return gold.remaining_gold(g, [k], x)
    if form == "opens":
        return gold.opens_gold(g, subject[0])
    if form == "start":
        return gold.start_gold(g, subject[0])
    if form == "next":
        return gold.next_gold(g, subject)
    raise ValueError(f"no gold for form {form!r}")


def _sized(concepts: Iterable[str]) -> bool:
    return 1 <= len(set(concepts)) <= MAX_GOLD


def _size_case(n: int) -> str:
    return "zero" if n == 0 else "small" if n <= 3 else "larger"


class Judge:
    """Which subjects a form can be asked about, by case, kept only where the group rule holds
    (module docstring), and each one's gold."""

    def __init__(self, cat: Catalogue) -> None:
        self.cat = cat
        self._pools: dict[tuple[Any, ...], dict[str, list[Subject]]] = {}

    def pools(self, form: str, scope: str | None, of: str | None, knowns: int) -> dict[str, list[Subject]]:
        key = (form, scope, of, knowns)
        if key not in self._pools:
            found = self._pool(form, scope, of, knowns)
            self._pools[key] = {case: sorted(set(s)) for case, s in found.items() if s}
        return self._pools[key]

    def _pool(self, form: str, scope: str | None, of: str | None, knowns: int) -> dict[str, list[Subject]]:
        c = self.cat
        xs = [x for x in c.courses if c.askable(x)]
        out: dict[str, list[Subject]] = {}

        def add(case: str, subject: Subject) -> None:
            out.setdefault(case, []).append(subject)

        if form in SETS:
            for x in xs:
                got = self.set_gold(form, scope or SCOPE_OF[form], x)
                if got is not None:
                    add(got[0], (x,))
        elif form == "count":
            assert of is not None
            for x in xs:
                members = _set(c.g, of, x)
                if not self._free_set(of, x) or len(members) > MAX_GOLD:
                    continue
                if members or (of == "needed_before" and c.in_edge(x)):
                    add(_size_case(len(members)), (x,))
        elif form == "check":
            for x in xs:
                if not (c.free_before(x) and c.anc(x)):
                    continue
                for a in c.anc(x):
                    add("edge" if a in c.pred(x) else "through", (a, x))
                for a in c.desc(x):
                    add("reversed", (a, x))
                for a in self._neighbours(x):
                    add("unrelated", (a, x))
        elif form == "path":
            for x in xs:
                if c.free_before(x):
                    for a in c.anc(x):
                        chain = gold.unique_chain(c.g, a, x)
                        if chain and 3 <= len(chain) <= MAX_GOLD:
                            add("path", (a, x))
        elif form == "order":
            for b in xs:
                if not c.free_before(b):
                    continue
                for a in c.anc(b):
                    if c.askable(a):
                        add("first_x", (a, b))
                        add("first_y", (b, a))
                for a in self._neighbours(b):
                    if c.free_before(a):
                        add("neither", (a, b))
        elif form == "ready":
            for x in xs:
                if c.free_before(x) and c.anc(x):
                    for ks in itertools.combinations(sorted(c.anc(x) | self._extras(x)), knowns):
                        if all(c.askable(k) for k in ks) and c.free_before(*ks):
                            missing = c.anc(x) - c.closure(ks)
                            if len(missing) > MAX_GOLD:
                                continue
                            if not missing:
                                add("ready", (*ks, x))
                            elif not set(ks) & c.anc(x):
                                add("unrelated", (*ks, x))
                            elif not set(ks) & c.pred(x):
                                add("deep", (*ks, x))
                            else:
                                add("partial", (*ks, x))
        elif form == "shared":
            pairs = [x for x in xs if c.free_before(x) and c.anc(x)]
            for a, b in itertools.combinations(pairs, 2):
                if a in c.anc(b) or b in c.anc(a):
                    continue
                every = c.anc(a) & c.anc(b)
                if _sized(every):
                    add("same" if every == c.pred(a) & c.pred(b) else "differs", (a, b))
        elif form == "remaining":
            for x in xs:
                if not (c.free_before(x) and c.anc(x)):
                    continue
                for k in sorted(c.anc(x)):
                    if c.askable(k) and _sized(gold.left_before(c.g, [k], x)):
                        add("inside", (k, x))
                for k in self._extras(x):
                    if _sized(c.anc(x)):
                        add("outside", (k, x))
        elif form == "opens":
            for x in xs:
                if c.free_before(x) and c.free_succ(x):
                    opened = gold.opened_by(c.g, x)
                    if _sized(opened):
                        add("same" if opened == set(c.succ(x)) else "differs", (x,))
        elif form == "start":
            for x in xs:
                if c.free_before(x) and c.anc(x):
                    roots = gold.starting_points(c.g, x)
                    if _sized(roots) and len(c.anc(x)) <= MAX_GOLD:
                        add("same" if roots == set(c.anc(x)) else "differs", (x,))
        elif form == "next":
            singles = [x for x in xs if c.succ(x) and c.free_next([x])]
            if knowns == 1:
                for k in singles:
                    if _sized(gold.learn_next(c.g, [k])):
                        add("next", (k,))
            else:
                for a, b in itertools.combinations(singles, 2):
                    if a in c.anc(b) or b in c.anc(a) or not c.free_next([a, b]):
                        continue
                    both = gold.learn_next(c.g, [a, b])
                    if _sized(both):
                        apart = gold.learn_next(c.g, [a]) | gold.learn_next(c.g, [b])
                        add("together" if both - apart else "apart", (a, b))
        else:
            raise ValueError(f"no subjects for form {form!r}")
        return out

    @functools.cache  # noqa: B019 (one Judge per build)
    def _neighbours(self, x: str) -> frozenset[str]:
        """Courses a student might plausibly pair with ``x`` that are neither before nor after it:
        of its department or sharing something before it, in an edge, askable."""
        c = self.cat
        out = set()
        for a in c.courses:
            if a == x or a in c.anc(x) or a in c.desc(x) or not c.askable(a) or not c.in_edge(a):
                continue
            if c.anc(a) & c.anc(x) or (c.dept(a) == c.dept(x) and (c.anc(a) or c.succ(a))):
                out.add(a)
        return frozenset(out)

    @functools.cache  # noqa: B019 (one Judge per build)
    def _extras(self, x: str) -> frozenset[str]:
        """Up to six courses of x's department and level, unrelated to x, that a learner might list
        as done."""
        c = self.cat
        options = sorted(
            a
            for a in self._neighbours(x)
            if c.dept(a) == c.dept(x)
            and c.graduate(a) == c.graduate(x)
            and c.free_before(a)
            and not c.anc(a) & c.anc(x)
            and c.askable(a)
        )
        return frozenset(random.Random(f"{SEED}:extras:{x}").sample(options, min(6, len(options))))

    def _free_set(self, intent: str, x: str) -> bool:
        """The group rule for a set form (module docstring)."""
        c = self.cat
        if intent == "prerequisites":
            return c.free_pred(x)
        if intent == "needed_before":
            return c.free_before(x)
        if intent == "dependents":
            return c.free_succ(x)
        if intent == "comes_after":
            return c.free_desc(x)
        raise ValueError(intent)

    def set_gold(self, intent: str, scope: str, x: str) -> tuple[str, Gold] | None:
        """(case, gold) of a set wording about ``x``: ``same``/``differs`` from the other scope."""
        c = self.cat
        if not self._free_set(intent, x):
            return None
        got = _set(c.g, intent, x)
        if not _sized(got):
            return None
        other_intent = {
            "prerequisites": "needed_before",
            "needed_before": "prerequisites",
            "dependents": "comes_after",
            "comes_after": "dependents",
        }[intent]
        same = _set(c.g, other_intent, x) == got
        if scope == "either":
            if not same or not self._free_set(other_intent, x):
                return None
            if intent == "dependents" and not (c.free_before(x) and gold.opened_by(c.g, x) == got):
                return None
        return ("same" if same else "differs"), Gold(frozenset(got))

    def gold(self, form: str, of: str | None, subject: Subject) -> Gold:
        return Gold.of(form_gold(self.cat.g, form, of, subject))


# -- templates -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One phrasing of ``catalogue_templates.jsonl`` (module docstring) and the split it is in."""

    id: str
    form: str
    cls: str
    text: str
    split: str
    scope: str | None = None
    of: str | None = None
    asks: str | None = None
    n: int | None = None
    round: int | None = None

    @property
    def group(self) -> str:
        return "set_aside" if self.cls == "set_aside" else self.form

    @property
    def later(self) -> bool:
        """A dev template of a later round (written after the dealing, no part of it)."""
        return self.split == "dev" and self.round is not None

    @property
    def slots(self) -> list[str]:
        return list(dict.fromkeys(re.findall(r"\{(\w+)\}", self.text)))

    @property
    def knowns(self) -> int:
        return sum(1 for s in self.slots if s.startswith("k"))

    @property
    def kind(self) -> tuple[str, ...]:
        return (self.group, self.form, self.cls, self.scope or "", self.of or "", str(self.knowns))

    @property
    def hard(self) -> bool:
        return self.cls in HARD

    @property
    def intent(self) -> str:
        if self.form in ABSTAIN:
            return ABSTAIN_INTENT.get(self.form) or self.asks or self.form
        return "needed_before" if self.form == "check" else self.form

    @property
    def instances(self) -> int:
        if self.n is not None:
            return self.n
        return ABSTAIN_N if self.form in ABSTAIN else DEFAULT_N

    def to_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "form": self.form, "class": self.cls}
        for name in ("scope", "of", "asks", "n", "round"):
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
            n=row.get("n"),
            round=row.get("round"),
        )
        _check_template(t)
        out.append(t)
    ids = [t.id for t in out]
    if len(ids) != len(set(ids)):
        raise ValueError("template ids must be unique")
    texts = [t.text.casefold() for t in out]
    if len(texts) != len(set(texts)):
        raise ValueError("template texts must be unique")
    return out


def _check_template(t: Template) -> None:
    where = f"template {t.id}"
    if t.form not in (*ANSWERABLE, *ABSTAIN):
        raise ValueError(f"{where}: unknown form {t.form!r}")
    if t.cls not in CLASS_OF[t.form]:
        raise ValueError(f"{where}: a {t.form} template's class is one of {CLASS_OF[t.form]}")
    if (t.form in SETS) != (t.scope is not None) or t.scope not in (None, *SCOPES):
        raise ValueError(f"{where}: a set form (only) has a scope, one of {SCOPES}")
    if t.form in SETS and t.scope not in (SCOPE_OF[t.form], "either"):
        raise ValueError(f"{where}: {t.form} is {SCOPE_OF[t.form]} or either")
    if (t.form == "count") != (t.of is not None) or t.of not in (None, *COUNT_OF):
        raise ValueError(f"{where}: a count (only) has 'of', one of {COUNT_OF}")
    if (t.form in ("unknown_code", "longer_phrase", "shared_title")) != (t.asks is not None):
        raise ValueError(f"{where}: an unknown code, longer phrase or shared title (only) says what it asks")
    wanted = SLOTS[t.form]
    if not t.slots or not set(t.slots) <= set(wanted):
        raise ValueError(f"{where}: slots {t.slots}, its form fills {wanted}")
    if (t.form == "ready" and "x" not in t.slots) or (t.form in ("ready", "next") and not t.knowns):
        raise ValueError(f"{where}: a readiness or next question names what is done (and the goal)")
    if t.form == "unknown_code" and "u" not in t.slots:
        raise ValueError(f"{where}: an unknown-code template has a {{u}} slot")
    if t.split not in (*SPLITS, ""):
        raise ValueError(f"{where}: split must be one of {SPLITS}")
    if t.split == "holdout" and t.round is None:
        raise ValueError(f"{where}: a holdout template has its blind round")
    if t.split not in ("holdout", "dev") and t.round is not None:
        raise ValueError(f"{where}: only a holdout template (its blind round) or a dev one has a round")
    if t.split == "dev" and t.round is not None and t.round not in LATER_ROUNDS:
        raise ValueError(f"{where}: a later dev round is one of {LATER_ROUNDS}")


def deal(templates: Sequence[Template]) -> list[Template]:
    """Deal the dev/test templates that have no split yet, in SHA-256 order of their id, each to
    the split with fewer of its kind, else of its class in its group, else of its group, else
    fewer in all (else dev); the others keep theirs."""
    counts: dict[Any, dict[str, int]] = {}

    def levels(t: Template) -> tuple[Any, ...]:
        return t.kind, (t.group, t.cls), t.group, "all"

    def add(t: Template, split: str) -> None:
        for key in levels(t):
            counts.setdefault(key, dict.fromkeys(DEALT, 0))[split] += 1

    for t in templates:
        if t.split in DEALT and not t.later:
            add(t, t.split)
    dealt = {}
    for t in sorted(
        (t for t in templates if not t.split), key=lambda t: hashlib.sha256(t.id.encode()).hexdigest()
    ):
        split = min(DEALT, key=lambda s: tuple(counts.get(k, {}).get(s, 0) for k in levels(t)))
        add(t, split)
        dealt[t.id] = split
    return [replace(t, split=dealt.get(t.id, t.split)) for t in templates]


def check_dealing(templates: Sequence[Template]) -> None:
    counts: dict[str, dict[str, int]] = {}
    for t in templates:
        if not t.split:
            raise ValueError(f"template {t.id} has no split: run with --deal once")
        if t.split in DEALT and not t.later:
            counts.setdefault(t.group, dict.fromkeys(DEALT, 0))[t.split] += 1
    for group, c in counts.items():
        if abs(c["dev"] - c["test"]) > 1:
            raise ValueError(f"group {group}: {c['dev']} dev and {c['test']} test templates")


def check_lists(cat: Catalogue) -> None:
    """Refuse an unknown code the catalogue knows, one part of a listing (``MATH 220C`` of
    ``MATH 220A-B-C``) or one that is a prefix of a listed code or has one as a prefix."""
    listed = set(cat.names.code.values())
    parts = set()
    for code in listed:
        m = re.fullmatch(r"([A-Z]+) (\d+)([A-Z]+(?:-[A-Z]+)+)", code)
        if m:
            parts |= {f"{m.group(1)} {m.group(2)}{s}" for s in m.group(3).split("-")}
    for u in UNKNOWN_CODES:
        dept, num = u.split(" ")
        prefix = [c for c in listed if c.split(" ")[0] == dept and _prefixes(num, c.split(" ")[-1])]
        if u in listed or u in parts or cat.names.named(u) or prefix:
            raise ValueError(f"unknown code {u!r} is listed, part of a listing or a prefix of {prefix}")


def _prefixes(a: str, b: str) -> bool:
    """One course number extends the other by letters (``152`` and ``152A``, ``20`` and ``20F``)."""
    short, long = sorted((a, b), key=len)
    return a != b and re.fullmatch(rf"{re.escape(short)}[A-Z]+", long) is not None


# -- questions -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Made:
    """One question, the template it was made from, its subject (slot -> id) and name styles."""

    question: Question
    template: Template
    subjects: Mapping[str, str]
    styles: tuple[str, ...]

    @property
    def split(self) -> str:
        return self.template.split


class Builder:
    corpus = CORPUS  # the rows' corpus
    prefix = ""  # what their ids begin with

    def __init__(self, cat: Catalogue) -> None:
        self.cat = cat
        self.judge = Judge(cat)

    def questions(self, templates: Sequence[Template]) -> list[Made]:
        """Every template's questions, a later dev round's after every earlier template."""
        out: list[Made] = []
        order: dict[str, int] = {}
        for t in sorted(templates, key=lambda t: t.round if t.later else 0):
            rng = random.Random(f"{SEED}:{t.id}")
            position = order[t.group] = order.get(t.group, -1) + 1
            made = self._instances(t, rng)
            if t.form in ANSWERABLE and t.cls != "set_aside" and position % 3 == 0:
                made.append(self._unknown(t, rng))
            out += made
        return out

    def _instances(self, t: Template, rng: random.Random) -> list[Made]:
        if t.form in ANSWERABLE:
            return self._answerable(t, rng)
        return [self._abstain(t, rng, i) for i in range(1, t.instances + 1)]

    # answerable ------------------------------------------------------------------------------

    def _case_order(self, t: Template) -> list[str]:
        cases = {
            "check": ["edge", "through", "reversed", "unrelated", "through"],
            "count": ["small", "larger", "small", "zero"] if t.of == "needed_before" else ["small", "larger"],
            "path": ["path"],
            "order": ["first_x", "first_y", "neither"],
            "ready": ["ready", "partial", "deep", "partial", "unrelated", "ready"],
            "shared": ["differs", "differs", "same"],
            "remaining": ["inside", "inside", "outside", "inside"],
            "opens": ["differs", "differs", "same"],
            "start": ["differs", "differs", "same"],
            "next": ["together", "apart", "together"] if t.knowns == 2 else ["next"],
        }.get(t.form)
        if cases is None:  # a set form
            cases = ["same"] if t.scope == "either" else ["differs", "differs", "same"]
        shift = int(hashlib.sha256(t.id.encode()).hexdigest(), 16) % len(cases)
        return cases[shift:] + cases[:shift]

    def _answerable(self, t: Template, rng: random.Random) -> list[Made]:
        pools = self.judge.pools(t.form, t.scope, t.of, t.knowns)
        if not pools:
            raise ValueError(f"template {t.id}: no subject passes the group rule")
        cases = self._case_order(t)
        used: set[Subject] = set()
        out = []
        for i in range(1, t.instances + 1):
            case = cases[(i - 1) % len(cases)]
            pool = pools.get(case) or [s for p in pools.values() for s in p]
            fresh = [s for s in pool if s not in used and not any(s[-1] == u[-1] for u in used)]
            fresh = fresh or [s for s in pool if s not in used]
            if not fresh:
                raise ValueError(f"template {t.id}: too few subjects")
            if rng.random() < SHORTENED_SHARE:  # a course students shorten ("intro to", "2" for "II")
                fresh = [s for s in fresh if any(self._shortened(x, len(t.slots) == 1) for x in s)] or fresh
            subject = fresh[rng.randrange(len(fresh))]
            used.add(subject)
            answer = self.judge.gold(t.form, t.of, subject)
            self._check_grouped(t, subject, answer)
            out.append(self._made(t, str(i), subject, answer, rng))
        return out

    def _shortened(self, cid: str, one_slot: bool) -> bool:
        return bool({"intro", "numeral"} & set(self.cat.names.styles(cid, one_slot=one_slot)))

    def _check_grouped(self, t: Template, subject: Subject, answer: Gold) -> None:
        """Refuse a gold that differs once the groups are in the graph (module docstring)."""
        for h in self.cat.rebuilt:
            if Gold.of(form_gold(h, t.form, t.of, subject)) != answer:
                raise ValueError(f"template {t.id}: the gold for {subject} depends on the groups")

    def _made(self, t: Template, suffix: str, subject: Subject, answer: Gold, rng: random.Random) -> Made:
        slots = [s for s in SLOTS[t.form] if s in t.slots]
        if len(slots) != len(subject):
            raise ValueError(f"template {t.id}: {len(slots)} slots for a subject of {len(subject)}")
        filled = dict(zip(slots, subject, strict=True))
        if t.form == "ready":  # the knowns in a drawn order
            ks = [filled[s] for s in slots if s.startswith("k")]
            rng.shuffle(ks)
            filled.update(zip([s for s in slots if s.startswith("k")], ks, strict=True))
        return self._question(t, suffix, filled, answer, rng)

    # abstain ---------------------------------------------------------------------------------

    def _abstain(self, t: Template, rng: random.Random, i: int) -> Made:
        c = self.cat
        edged = [x for x in c.courses if c.askable(x) and c.in_edge(x)]
        filled: dict[str, str] = {}
        texts: dict[str, tuple[str, str]] = {}
        suggest: tuple[str, ...] = ()
        for slot in t.slots:
            if slot == "u":
                code = UNKNOWN_CODES[rng.randrange(len(UNKNOWN_CODES))]
                texts["u"] = ("unknown", _code_style(code, rng))
            elif slot == "t":
                titles = sorted(k for k, ids in c.names.shared.items() if len(ids) <= SHARED_TITLE_MAX)
                title = titles[rng.randrange(len(titles))]
                suggest = c.names.shared[title]
                texts["t"] = ("shared_title", title if rng.random() < 0.6 else title.lower())
            else:
                pool = [x for x in edged if x not in filled.values()]
                if slot == "b" and "a" in filled:  # a pair a student would put side by side
                    same = [x for x in pool if c.dept(x) == c.dept(filled["a"])]
                    pool = same or pool
                if rng.random() < SHORTENED_SHARE:
                    pool = [x for x in pool if self._shortened(x, len(t.slots) == 1)] or pool
                filled[slot] = pool[rng.randrange(len(pool))]
        return self._question(t, str(i), filled, Gold(abstain=True, suggest=suggest), rng, texts=texts)

    def _unknown(self, t: Template, rng: random.Random) -> Made:
        """The template asked once with an unknown code in one of its slots (the others real)."""
        c = self.cat
        slots = [s for s in SLOTS[t.form] if s in t.slots]
        missing = slots[rng.randrange(len(slots))]
        edged = [x for x in c.courses if c.askable(x) and c.in_edge(x)]
        filled = {}
        for s in slots:
            if s != missing:
                filled[s] = edged[rng.randrange(len(edged))]
        code = UNKNOWN_CODES[rng.randrange(len(UNKNOWN_CODES))]
        texts = {missing: ("unknown", _code_style(code, rng))}
        made = self._question(t, "u", filled, Gold(abstain=True), rng, texts=texts, qtype="unanswerable")
        return made

    # rows ------------------------------------------------------------------------------------

    def _question(
        self,
        t: Template,
        suffix: str,
        filled: Mapping[str, str],
        answer: Gold,
        rng: random.Random,
        *,
        texts: Mapping[str, tuple[str, str]] | None = None,
        qtype: str | None = None,
    ) -> Made:
        c = self.cat
        one_slot = len(t.slots) == 1
        for _ in range(NAME_TRIES):  # a name that reads as another with its neighbours: write it again
            written = dict(texts or {})
            for slot in t.slots:
                if slot not in written:
                    written[slot] = c.names.pick(filled[slot], rng, one_slot=one_slot)
            text = t.text
            for slot, (_, name) in written.items():
                text = text.replace("{" + slot + "}", name)
            if self._names_right(text, filled, answer):
                break
        else:
            named = [sorted(ids) for ids in c.names.named(text)]
            raise ValueError(f"template {t.id}: {text!r} names {named}, not {sorted(filled.values())}")
        qid = f"{self.prefix}{t.id}-{suffix}"
        row: dict[str, Any] = {
            "id": qid,
            "question": text,
            "type": qtype or (ABSTAIN_TYPE[t.form] if t.form in ABSTAIN else t.form),
            "intent": t.intent,
            "template": t.id,
            "expect": self._expect(t, answer),
            "corpus": self.corpus,
        }
        if t.round is not None and not t.later:  # the blind holdout round
            row["round"] = t.round
        styles = tuple(written[s][0] for s in t.slots)
        return Made(parse_question(row, where=qid), t, dict(filled), styles)

    def _expect(self, t: Template, answer: Gold) -> dict[str, Any]:
        """A row's ``expect`` from its gold."""
        expect: dict[str, Any] = {"concepts": sorted(answer.concepts)}
        if answer.finding:
            expect["finding"] = dict(answer.finding)
        if answer.suggest:
            expect["suggest"] = list(answer.suggest)
        if t.cls == "set_aside" and not answer.abstain:
            expect["set_aside"] = True
        expect["abstain"] = answer.abstain
        if answer.match != "exact":
            expect["match"] = answer.match
        return expect

    def _names_right(self, text: str, filled: Mapping[str, str], answer: Gold) -> bool:
        """The question names exactly its courses (and, for a shared title, that title's courses),
        read as :meth:`Names.named` reads it: "principles of macroeconomics a prereq" also names
        ECON 210A (Macroeconomics A), so it is written another way."""
        wanted = {frozenset({cid}) for cid in filled.values()}
        if answer.suggest:
            wanted.add(frozenset(answer.suggest))
        return set(self.cat.names.named(text)) == wanted  # "CODE (Title)" names its course twice


def _code_style(code: str, rng: random.Random) -> str:
    """An unknown code written as students write codes."""
    dept, num = code.split(" ")
    return rng.choice((code, f"{dept.lower()} {num.lower()}", f"{dept.lower()}{num.lower()}", f"{dept}{num}"))


def row_of(made: Made) -> dict[str, Any]:
    """A question's record: the fields of :mod:`evals.questions` and what it was made of."""
    t = made.template
    return {
        **made.question.to_dict(),
        "split": made.split,
        "form": t.form,
        "class": t.cls,
        "styles": list(made.styles),
        "subjects": dict(made.subjects),
    }


# -- files ------------------------------------------------------------------------------------------------


def output(split: str) -> Path:
    return HERE / f"{CORPUS}_{split}.jsonl.gz"


def texts(made: Sequence[Made]) -> dict[Path, str]:
    """Each split's file and the text the builder writes into it."""
    out = {
        output(split): "".join(
            json.dumps(row_of(m), ensure_ascii=False) + "\n" for m in made if m.split == split
        )
        for split in SPLITS
    }
    return {path: text for path, text in out.items() if text}


def build(cat: Catalogue, templates: Sequence[Template] | None = None) -> list[Made]:
    """Every question of every split, from the templates and the catalogue."""
    templates = load_templates() if templates is None else templates
    check_dealing(templates)
    check_lists(cat)
    made = Builder(cat).questions(templates)
    ids = [m.question.id for m in made]
    if len(ids) != len(set(ids)):
        raise ValueError("question ids must be unique")
    seen: dict[str, str] = {}
    for m in made:  # a holdout text repeating a dev/test one would not measure anything new
        key = fold(m.question.question)
        if key in seen and seen[key] != m.split:
            raise ValueError(f"{m.question.id}: the same text as a {seen[key]} question")
        seen.setdefault(key, m.split)
    return made


def summary(made: Sequence[Made]) -> dict[str, Any]:
    """Counts per split: questions by intent, form, class and style; templates hard and in all."""
    out: dict[str, Any] = {}
    for split in SPLITS:
        ms = [m for m in made if m.split == split]
        temps = {m.template.id: m.template for m in ms}
        out[split] = {
            "questions": len(ms),
            "templates": len(temps),
            "hard_templates": sum(1 for t in temps.values() if t.hard),
            "abstain": sum(1 for m in ms if m.question.abstain),
            "set_aside": sum(1 for m in ms if m.question.set_aside),
            "by_intent": _count(m.question.asks for m in ms),
            "by_type": _count(m.question.type for m in ms),
            "by_form": _count(m.template.form for m in ms),
            "by_class": _count(m.template.cls for m in ms),
            "by_style": _count(s for m in ms for s in m.styles),
        }
    return out


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed file differs")
    parser.add_argument("--deal", action="store_true", help="deal templates without a split, then build")
    parser.add_argument(
        "--summary", action="store_true", help="print the counts and the group rule's survivors"
    )
    args = parser.parse_args(argv)
    bundle = dev_graph(GRAPH, os.environ)
    if bundle is None:
        print(f"skipped: no {GRAPH} graph in {dev_graphs_folder(os.environ)} (set {ENV}); nothing built")
        return 0 if args.check else 2
    templates = load_templates()
    if args.deal:
        templates = deal(templates)
        TEMPLATES.write_text("".join(json.dumps(t.to_row(), ensure_ascii=False) + "\n" for t in templates))
    cat = Catalogue.load(bundle)
    made = build(cat, templates)
    files = texts(made)
    if args.summary:
        print(json.dumps({"survivors": survivors(cat), "splits": summary(made)}, indent=1))
    return write_or_check(files, check=args.check, script="build_catalogue.py")


if __name__ == "__main__":
    raise SystemExit(main())
