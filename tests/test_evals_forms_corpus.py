"""The question-forms corpus: its templates and their once-only split, the balance of its answers,
names as learners write them, and every gold recomputed from the bundles with evals.gold."""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx
import pytest

from evals import corpus, gold
from evals.questions import Question, load_questions

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "evals" / "questions"
GRAPHS = ("curriculum", "prereqmap")
SPLITS = ("dev", "test")
FORMS = ("check", "count", "why", "order", "relate", "next", "remaining", "shared")


def _builder() -> ModuleType:
    return corpus.load_builder("build_forms")


@functools.cache
def _questions(graph: str, split: str) -> tuple[Question, ...]:
    return tuple(load_questions(QUESTIONS / f"forms_{graph}_{split}.jsonl"))


@functools.cache
def _templates() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in corpus.read_rows(QUESTIONS / "forms_templates.jsonl")}


# -- templates and the split ---------------------------------------------------------------------------


def test_every_form_has_at_least_fourteen_templates_and_the_other_kinds_their_share() -> None:
    """14+ phrasings per form; about 20 names, 12 misspelt, 12 unsupported, 8 bad-input ones."""
    per_form = Counter(r["form"] for r in _templates().values())
    assert all(per_form[f] >= 14 for f in FORMS), per_form
    assert per_form["names"] >= 18 and per_form["misspelt"] >= 12 and per_form["unsupported"] >= 12
    assert per_form["bad_input"] >= 8


def test_the_template_file_follows_the_once_only_dealing() -> None:
    """Within each form, templates ordered by SHA-256 of their id alternate dev, test."""
    rows = list(_templates().values())
    dealt = corpus.split_of([(r["id"], r["form"]) for r in rows])
    assert all(r["split"] == dealt[r["id"]] for r in rows)
    assert len(_builder().load_templates()) == len(rows)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: {**r, "split": "test" if r["split"] == "dev" else "dev"}, "belongs to"),
        (lambda r: {**r, "scope": "sometimes"}, "scope must be one of"),
        (lambda r: {**r, "text": "Is {x} needed?"}, "slots"),
        (lambda r: {**r, "form": "poem"}, "unknown form"),
    ],
)
def test_a_template_file_that_disagrees_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    """A flipped split, a bad parameter, wrong slots or an unknown form: refused, naming it."""
    rows = list(_templates().values())
    first = next(i for i, r in enumerate(rows) if r["form"] == "check")
    rows[first] = change(rows[first])
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        _builder().load_templates(path)
    assert rows[first]["id"] in str(info.value)


@pytest.mark.parametrize("graph", GRAPHS)
def test_splits_are_disjoint_by_template_and_each_holds_five_templates_of_every_form(graph: str) -> None:
    """No template (hence no wording) is in both splits; each split has at least five templates of
    every form and some of every other kind."""
    templates = {s: {q.template for q in _questions(graph, s)} for s in SPLITS}
    assert not templates["dev"] & templates["test"]
    for split in SPLITS:
        kinds = Counter(_templates()[t]["form"] for t in templates[split] if t)
        assert all(kinds[f] >= 5 for f in FORMS), (split, kinds)
        assert min(kinds[k] for k in ("names", "misspelt", "unsupported", "bad_input")) >= 4, kinds
        ids = [q.id for q in _questions(graph, split)]
        assert len(set(ids)) == len(ids)


def test_no_template_uses_negated_or_inverted_polarity() -> None:
    """ "Can I skip X", "isn't X needed": their yes/no is ambiguous, so no phrasing uses them."""
    polar = re.compile(r"\b(not|skip|without|never)\b|n't\b", re.IGNORECASE)
    for r in _templates().values():
        if r["form"] != "bad_input":  # contradictions are the point of bad input
            assert not polar.search(r["text"]), r["id"]


def test_committed_corpus_is_up_to_date() -> None:
    """Rebuilding from the bundles gives the committed files (gold is never typed in)."""
    assert _builder().main(["--check"]) == 0


# -- gold, recomputed --------------------------------------------------------------------------------------


@functools.cache
def _graph(name: str) -> Any:
    """The builder's view of a graph: the bundle, names as learners write them, the orders."""
    bf = _builder()
    graph = corpus.load_graph(name, corpus.GRAPHS[name])
    return bf.Shape.of(graph, bf.Names.of(graph, corpus.read_rows(bf.NAMES_FILE)))


@functools.cache
def _ids_by_name(name: str) -> dict[str, str]:
    """Every written form of a concept (stored name, alias, other number, lower case) -> id."""
    shape = _graph(name)
    out: dict[str, str] = {}
    for cid, (stored, aliases) in shape.graph.names.items():
        for n in (stored, *aliases, *([shape.names.numbers[cid]] if cid in shape.names.numbers else [])):
            out[n.lower()] = cid
    return out


def _readings(parts: list[str], question: str, known: set[str]) -> list[dict[str, str]]:
    """Every way the question fills the template's slots (``parts``: literal, slot, literal, ...)
    with names in ``known`` (lower case); a possessive "'s" may be a bare "'" after a plural."""
    literal, rest = parts[0], parts[1:]
    options = [literal]
    if literal.startswith("'s") and not literal.startswith("'s?"):
        options.append("'" + literal[2:])
    out: list[dict[str, str]] = []
    for lit in options:
        if not rest:
            out += [{}] if question == lit else []
            continue
        if not question.startswith(lit):
            continue
        tail, slot = question[len(lit) :], rest[0]
        for end in range(1, len(tail) + 1):
            value = tail[:end]
            if value.lower() in known:
                out += [
                    {slot: value, **r}
                    for r in _readings(rest[1:], tail[end:], known)
                    if r.get(slot, value) == value
                ]
    return out


def _slots(template: dict[str, Any], question: str, graph: str = "") -> dict[str, str]:
    """The names written into the template's slots, read back off the question: the one reading
    whose every slot is a name of the graph, an unknown concept or a misspelling."""
    known = {n for g in (graph,) if g for n in _ids_by_name(g)} | {u.lower() for u in corpus.UNKNOWN}
    known |= {r["text"].lower() for r in corpus.read_rows(_builder().NAMES_FILE)}
    parts = re.split(r"\{(\w+)\}", template["text"])
    found = {tuple(sorted(r.items())) for r in _readings(parts, question, known)}
    assert len(found) == 1, (template["id"], question, found)
    return dict(next(iter(found)))


def _recompute(graph: str, t: dict[str, Any], ids: dict[str, str]) -> gold.FormGold:
    """The gold of one question from evals.gold (and, for older intents, the paraphrase gold)."""
    shape = _graph(graph)
    g: nx.DiGraph = gold.before_graph(shape.view)
    if t.get("family") == "builds_on" and "builds_on" in shape.graph.relations():
        g = gold.before_graph(shape.view, only="builds_on")
    form, x, y = t["form"], ids.get("x", ""), ids.get("y", "")
    known = [ids[k] for k in ("k1", "k2", "k3") if k in ids]
    if form == "check":
        return gold.check_gold(g, x, y, direct=t["scope"] == "direct")
    if form == "count":
        return gold.count_gold(corpus.gold_for(shape.graph, t["of"], (x,), None)[0], x)
    if form == "shared":
        return gold.shared_gold(g, x, y, direct=t["scope"] != "transitive")
    if form == "relate":
        return gold.relate_gold(shape.view, x, y)
    if form == "next":
        return gold.next_gold(g, known)
    if form == "remaining":
        return gold.remaining_gold(g, known, y)
    return {"why": gold.why_gold, "order": gold.order_gold}[form](g, x, y)


def _all() -> list[tuple[str, Question]]:
    return [(g, q) for g in GRAPHS for s in SPLITS for q in _questions(g, s)]


def test_every_gold_is_recomputable_from_the_bundles() -> None:
    """Each question's names are read back off its text and its gold recomputed: the finding,
    the concept set and the match rule agree; an unknown concept or a misspelling abstains."""
    unknown = {u.lower() for u in corpus.UNKNOWN}
    for graph, q in _all():
        t = _templates()[q.template or ""]
        written = _slots(t, q.question, graph)
        if t["form"] in ("misspelt", "unsupported", "bad_input"):
            assert q.abstain and q.type == t["form"] and not q.concepts
            continue
        if any(w.lower() in unknown for w in written.values()):
            assert q.abstain and q.type == "unanswerable" and q.template == t["id"], q.id
            continue
        ids = {slot: _ids_by_name(graph)[w.lower()] for slot, w in written.items()}
        if t["form"] == "names":
            concepts, lessons, abstain = corpus.gold_for(_graph(graph).graph, t["intent"], (ids["x"],), None)
            assert (list(q.concepts), list(q.lessons), q.abstain) == (concepts, sorted(lessons), abstain), (
                q.id
            )
            continue
        expected = _recompute(graph, t, ids)
        assert q.findings == dict(expected.finding), q.id
        assert set(q.concepts) == set(expected.concepts) and q.match == expected.match, q.id
        assert not q.abstain and q.type == t["form"] == q.asks


def test_misspelt_questions_suggest_the_concept_they_misspell() -> None:
    """A misspelt name abstains and suggests the concept its names row says it misspells."""
    meant = {(r["graph"], r["text"]): r["id"] for r in corpus.read_rows(_builder().NAMES_FILE)}
    found = 0
    for graph, q in _all():
        if q.type == "misspelt":
            written = _slots(_templates()[q.template or ""], q.question, graph)["x"]
            assert q.suggest == (meant[graph, written],) and q.abstain
            found += 1
    assert found == 2 * 12 * len(GRAPHS)


def test_gold_sets_are_listable_and_non_empty_where_there_is_no_finding() -> None:
    """At most 15 concepts; a form without a finding (next, remaining, shared) never has none."""
    for _, q in _all():
        if not q.abstain:
            assert len(q.concepts) <= corpus.MAX_GOLD, q.id
            assert q.concepts or q.lessons or q.findings, q.id


def test_builds_on_wording_is_used_where_both_readings_agree() -> None:
    """On the curriculum, a "builds on" phrasing's gold is the same over builds_on edges alone and
    over the whole learning order; a direct count's set is all that comes directly before/after."""
    shape = _graph("curriculum")
    order = gold.before_graph(shape.view)
    for graph, q in _all():
        t = _templates()[q.template or ""]
        if graph != "curriculum" or q.abstain or t["form"] not in FORMS:
            continue
        ids = {s: _ids_by_name(graph)[w.lower()] for s, w in _slots(t, q.question, graph).items()}
        if t.get("family") == "builds_on":
            learning_order = _recompute(graph, {**t, "family": "order"}, ids)
            assert _recompute(graph, t, ids) == learning_order, q.id
        if t["form"] == "count" and t["of"] in ("prerequisites", "foundations"):
            assert set(q.concepts) - {ids["x"]} == set(order.predecessors(ids["x"])), q.id
        if t["form"] == "count" and t["of"] in ("dependents", "built_by"):
            assert set(q.concepts) - {ids["x"]} == set(order.successors(ids["x"])), q.id


# -- balance ------------------------------------------------------------------------------------------------


def _answered(graph: str, split: str, form: str) -> list[Question]:
    return [q for q in _questions(graph, split) if q.type == form]


def _ids(graph: str, q: Question) -> dict[str, str]:
    written = _slots(_templates()[q.template or ""], q.question, graph)
    return {slot: _ids_by_name(graph)[w.lower()] for slot, w in written.items()}


@pytest.mark.parametrize(("graph", "split"), list(itertools.product(GRAPHS, SPLITS)))
def test_checks_are_half_yes_with_every_kind_of_pair(graph: str, split: str) -> None:
    """About half hold; x directly before y, before it through others, after it, and neither all
    occur."""
    qs = _answered(graph, split, "check")
    assert 0.35 <= sum(q.findings["holds"] for q in qs) / len(qs) <= 0.65
    g = _graph(graph).g
    kinds = set()
    for q in qs:
        x, y = _ids(graph, q)["x"], _ids(graph, q)["y"]
        before, after = gold.holds_before(g, x, y), gold.holds_before(g, y, x)
        kinds.add(
            "direct" if g.has_edge(x, y) else "through" if before else "reversed" if after else "neither"
        )
    assert kinds == {"direct", "through", "reversed", "neither"}


@pytest.mark.parametrize(("graph", "split"), list(itertools.product(GRAPHS, SPLITS)))
def test_orders_name_the_first_the_second_and_neither(graph: str, split: str) -> None:
    """ "Which first, A or B": A, B and neither are each a fifth to a half of the answers."""
    kinds = Counter()
    for q in _answered(graph, split, "order"):
        ids = _ids(graph, q)
        first = q.findings["first"]
        kinds["neither" if first is None else "x" if first == ids["x"] else "y"] += 1
    assert set(kinds) == {"x", "y", "neither"}
    assert all(0.2 <= n / sum(kinds.values()) <= 0.5 for n in kinds.values()), kinds


@pytest.mark.parametrize(("graph", "split"), list(itertools.product(GRAPHS, SPLITS)))
def test_relate_covers_every_way_the_graph_supports(graph: str, split: str) -> None:
    """Path, shared foundations and none everywhere; a direct edge of another relation where the
    graph has such relations (the curriculum)."""
    hows = Counter(q.findings["how"] for q in _answered(graph, split, "relate"))
    expected = {"path", "shared_foundations", "none"} | ({"direct"} if graph == "curriculum" else set())
    assert set(hows) == expected and min(hows.values()) >= 2, hows


@pytest.mark.parametrize(("graph", "split"), list(itertools.product(GRAPHS, SPLITS)))
def test_counts_are_small_larger_and_zero_and_why_has_both_answers(graph: str, split: str) -> None:
    """Counts of 0, 1-3 and 4+ all occur; why has true and false premises and a tie of several
    shortest chains."""
    sizes = Counter(
        "zero" if n == 0 else "small" if n <= 3 else "large"
        for n in (q.findings["count"] for q in _answered(graph, split, "count"))
    )
    assert set(sizes) == {"zero", "small", "large"}
    whys = _answered(graph, split, "why")
    assert {q.findings["holds"] for q in whys} == {True, False}
    g = _graph(graph).g
    ties = [
        q
        for q in whys
        if q.findings["holds"] and len(list(nx.all_shortest_paths(g, *_ids(graph, q).values()))) > 1
    ]
    assert ties


@pytest.mark.parametrize(("graph", "split"), list(itertools.product(GRAPHS, SPLITS)))
def test_every_form_asks_about_an_unknown_concept_too(graph: str, split: str) -> None:
    """Each form (and the names templates) has questions about a concept in neither graph."""
    unknown = Counter(q.asks for q in _questions(graph, split) if q.type == "unanswerable")
    assert all(unknown[f] >= 1 for f in FORMS), unknown


# -- names as learners write them --------------------------------------------------------------------------


def test_names_templates_write_subjects_as_learners_do() -> None:
    """lower case; the other number ("transformers", "sparse matrix"); the possessive; a longer
    name that contains another concept's name (whose gold is the longer one's)."""
    seen = Counter()
    for graph, q in _all():
        t = _templates()[q.template or ""]
        if t["form"] != "names" or q.abstain:
            continue
        written = _slots(t, q.question, graph)["x"]
        cid = _ids_by_name(graph)[written.lower()]
        stored = _graph(graph).graph.names[cid][0]
        style = t["style"]
        if style == "lower":
            assert written == stored.lower()
        elif style == "number":
            assert written.lower() == _graph(graph).names.numbers[cid].lower()
        elif style == "possessive":
            assert re.search(re.escape(written) + "'s?", q.question)
        else:
            others = {n for n, other in _ids_by_name(graph).items() if other != cid and len(n) >= 3}
            assert any(re.search(rf"\b{re.escape(n)}\b", written.lower()) for n in others), q.id
        seen[graph, style] += 1
    assert all(seen[g, s] >= 4 for g in GRAPHS for s in ("lower", "number", "possessive", "contains")), seen


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "embeddings", "text": "Embeddings"}, "contains the name"),
        ({"id": "rag_pipeline", "text": "rag pipline"}, "contains the name"),
        ({"id": "rag", "text": "retrieval augmented genratoin xx"}, "slips"),
        ({"id": "overfitting", "text": "dropuot"}, "slips"),
    ],
)
def test_a_misspelling_that_is_a_name_contains_one_or_is_far_is_refused(
    row: dict[str, str], message: str
) -> None:
    """A misspelling must name nothing, contain no name ("rag pipline" contains RAG), and be one
    or two slips from its concept and from no other (too far; closer to dropout than overfitting)."""
    bf = _builder()
    graph = corpus.load_graph("curriculum", corpus.GRAPHS["curriculum"])
    with pytest.raises(ValueError, match=message):
        bf.Names.of(graph, [{"graph": "curriculum", "style": "misspelt", **row}])


def test_edit_distance_counts_a_swap_as_one_slip() -> None:
    """kitten -> sitting is three edits; a swap of two neighbouring letters is one."""
    bf = _builder()
    assert bf.edit_distance("kitten", "sitting") == 3
    assert bf.edit_distance("modles", "models") == 1 and bf.edit_distance("abc", "abc") == 0
