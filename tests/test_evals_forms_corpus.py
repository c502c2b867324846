"""The question-forms corpus: its templates and their split, the balance of its answers, names as
learners write them, and every gold recomputed from the bundles with evals.gold; for the dev/test
corpus and the blind holdout alike. A failure names question or template ids only, never a
phrasing or a name: the holdout must stay unread until it is scored."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import networkx as nx
import pytest

from evals import corpus, gold
from evals.questions import Question, load_questions, select

FORMS = ("check", "count", "why", "order", "relate", "next", "remaining", "shared")
ABSTAIN = ("misspelt", "unsupported", "bad_input")


def _builder() -> ModuleType:
    return corpus.load_builder("build_forms")


CORPORA = tuple(_builder().CORPORA)  # "forms" (dev, test) and "holdout"
SETS = [
    (c, g, s) for c in CORPORA for g in _builder().CORPORA[c].graphs for s in _builder().CORPORA[c].splits
]


def _corpus(name: str) -> Any:
    return _builder().CORPORA[name]


@functools.cache
def _questions(graph: str, split: str) -> tuple[Question, ...]:
    return tuple(select(load_questions(corpus.question_file(graph, split)), corpus="forms"))


@functools.cache
def _templates(c: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _corpus(c).template_rows()}


def _fail_unless(problems: list[str], what: str) -> None:
    """Fail listing the ids of the questions (templates) that break ``what``: no assertion
    rewriting, so no phrasing or name reaches the report."""
    if problems:
        pytest.fail(f"{what}: {sorted(problems)}", pytrace=False)


# -- templates and the split ---------------------------------------------------------------------------


def test_every_form_has_at_least_fourteen_templates_and_the_other_kinds_their_share() -> None:
    """14+ phrasings per form; about 20 names, 12 misspelt, 12 unsupported, 8 bad-input ones."""
    per_form = Counter(r["form"] for r in _templates("forms").values())
    assert all(per_form[f] >= 14 for f in FORMS), per_form
    assert per_form["names"] >= 18 and per_form["misspelt"] >= 12 and per_form["unsupported"] >= 12
    assert per_form["bad_input"] >= 8


def test_the_holdout_has_eight_templates_per_form_and_the_other_kinds_their_share() -> None:
    """8+ phrasings per form; about 24 names (every older intent), 8 misspelt, 8 unsupported, 6
    bad-input ones."""
    rows = _templates("holdout").values()
    per_form = Counter(r["form"] for r in rows)
    assert all(per_form[f] >= 8 for f in FORMS), per_form
    assert per_form["names"] >= 20 and per_form["misspelt"] >= 8 and per_form["unsupported"] >= 8
    assert per_form["bad_input"] >= 6
    assert {r["intent"] for r in rows if r["form"] == "names"} == set(_builder().NAME_INTENTS)


def test_the_template_file_follows_the_once_only_dealing() -> None:
    """Within each form, the round-1 templates ordered by SHA-256 of their id alternate dev, test."""
    rows = [r for r in _templates("forms").values() if "round" not in r]
    dealt = corpus.split_of([(r["id"], r["form"]) for r in rows])
    assert all(r["split"] == dealt[r["id"]] for r in rows)


def test_every_later_round_template_is_dev() -> None:
    """A template written after the dealing (round 2, 3, 4 or 5) is dev only; the builder loads every row."""
    later = [r for r in _templates("forms").values() if "round" in r]
    assert later and {r["round"] for r in later} == {2, 3, 4, 5}
    _fail_unless([r["id"] for r in later if r["split"] != "dev"], "later-round templates outside dev")
    assert len(_builder().load_templates()) == len(_templates("forms"))


@pytest.mark.parametrize("split", ["test", "holdout"])
def test_a_round_two_template_outside_dev_is_refused(tmp_path: Path, split: str) -> None:
    """A round-2 row that says test (or anything but dev) is refused, naming the template."""
    _refused(tmp_path, "forms", lambda r: {**r, "round": 2, "split": split}, "dev only")


def test_a_round_other_than_two_to_five_is_refused(tmp_path: Path) -> None:
    """Round 1 is written by leaving the key out; any other round value is refused."""
    for value in (1, 6):
        _refused(tmp_path, "forms", lambda r, v=value: {**r, "round": v, "split": "dev"}, "round must be")


@pytest.mark.parametrize("graph", _corpus("forms").graphs)
def test_later_round_questions_follow_the_earlier_ones_in_dev(graph: str) -> None:
    """The dev files list every round-1 question before any round-2 one, those before any round-3
    one, and so on to round 5, so adding a round leaves the earlier questions where they were."""
    rounds = [_templates("forms")[q.template or ""].get("round", 1) for q in _questions(graph, "dev")]
    assert rounds == sorted(rounds) and set(rounds) == {1, 2, 3, 4, 5}


def test_every_holdout_template_is_in_the_holdout_split() -> None:
    """The holdout is not dealt: all its templates are held out."""
    rows = list(_templates("holdout").values())
    assert {r["split"] for r in rows} == {"holdout"}
    assert len(_builder().load_templates(_corpus("holdout").templates, ("holdout",))) == len(rows)


def test_the_holdout_shares_no_template_id_or_wording_with_dev_and_test() -> None:
    """Written apart from the dev/test phrasings: no template id and no wording (case and spacing
    aside) in common."""

    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    seen = {norm(r["text"]) for r in _templates("forms").values()}
    shared = [
        t for t, r in _templates("holdout").items() if t in _templates("forms") or norm(r["text"]) in seen
    ]
    _fail_unless(shared, "holdout templates shared with dev/test")


def _refused(tmp_path: Path, c: str, change: Any, message: str) -> None:
    rows = list(_templates(c).values())
    first = next(i for i, r in enumerate(rows) if r["form"] == "check")
    rows[first] = change(rows[first])
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        _builder().load_templates(path, _corpus(c).splits)
    assert rows[first]["id"] in str(info.value)


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
    _refused(tmp_path, "forms", change, message)


def test_a_template_of_no_known_split_is_refused(tmp_path: Path) -> None:
    """A row whose split is none of dev, test and holdout is refused, naming the template."""
    _refused(tmp_path, "holdout", lambda r: {**r, "split": "holdout2"}, "split must be one of")


def test_the_holdout_and_dev_test_templates_are_rows_of_one_file() -> None:
    """The template file holds the dev/test rows and the holdout rows; each corpus loads its own."""
    rows = corpus.read_rows(_builder().TEMPLATES_FILE)
    assert len(rows) == len(_templates("forms")) + len(_templates("holdout"))
    assert len(_builder().load_templates(_builder().TEMPLATES_FILE, ("holdout",))) == len(
        _templates("holdout")
    )


def test_a_names_row_of_another_split_is_refused(tmp_path: Path) -> None:
    """A names row is the holdout's (``split: holdout``) or dev and test's (no split); another
    split is refused, naming the row."""
    path = tmp_path / "names.jsonl"
    path.write_text(
        json.dumps({"graph": "curriculum", "id": "rag", "style": "number", "split": "dev"}) + "\n"
    )
    with pytest.raises(ValueError, match="names row rag"):
        dataclasses.replace(_corpus("forms"), names=path).name_rows()


def test_a_names_template_with_two_names_asks_for_a_path(tmp_path: Path) -> None:
    """Only a path names two concepts; a path names two."""
    row = {"id": "n", "form": "names", "intent": "prerequisites", "style": "lower", "split": "holdout"}
    for text, intent in (("from {x} to {y}?", "prerequisites"), ("{x}?", "path")):
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps({**row, "text": text, "intent": intent}) + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match="slots"):
            _builder().load_templates(path, ("holdout",))


@pytest.mark.parametrize("graph", _corpus("forms").graphs)
def test_splits_are_disjoint_by_template_and_each_holds_five_templates_of_every_form(graph: str) -> None:
    """No template (hence no wording) is in both splits; each split has at least five templates of
    every form and some of every other kind."""
    templates = {s: {q.template for q in _questions(graph, s)} for s in ("dev", "test")}
    assert not templates["dev"] & templates["test"]
    for split in ("dev", "test"):
        kinds = Counter(_templates("forms")[t]["form"] for t in templates[split] if t)
        assert all(kinds[f] >= 5 for f in FORMS), (split, kinds)
        assert min(kinds[k] for k in ("names", *ABSTAIN)) >= 4, kinds


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_question_ids_are_unique(c: str, graph: str, split: str) -> None:
    """Each question of a file has its own id."""
    ids = Counter(q.id for q in _questions(graph, split))
    _fail_unless([i for i, n in ids.items() if n > 1], "repeated question ids")


@pytest.mark.parametrize("c", CORPORA)
def test_no_template_uses_negated_or_inverted_polarity(c: str) -> None:
    """ "Can I skip X", "isn't X needed": their yes/no is ambiguous, so no phrasing uses them."""
    polar = re.compile(r"\b(not|skip|without|never)\b|n't\b", re.IGNORECASE)
    # contradictions are the point of bad input
    found = [t for t, r in _templates(c).items() if r["form"] != "bad_input" and polar.search(r["text"])]
    _fail_unless(found, "negated or inverted templates")


@pytest.mark.slow  # rebuilds every forms file
def test_committed_corpus_is_up_to_date() -> None:
    """Rebuilding from the bundles gives the committed files (gold is never typed in)."""
    assert _builder().main(["--check"]) == 0


# -- gold, recomputed --------------------------------------------------------------------------------------


@functools.cache
def _shapes(c: str) -> dict[str, Any]:
    """The builder's view of each graph: the bundle, names as the corpus writes them, the orders."""
    return {shape.graph.name: shape for shape in _corpus(c).shapes()}


def _graph(c: str, name: str) -> Any:
    return _shapes(c)[name]


@functools.cache
def _ids_by_name(c: str, name: str) -> dict[str, str]:
    """Every written form of a concept (stored name, alias, other number, lower case) -> id."""
    shape = _graph(c, name)
    out: dict[str, str] = {}
    for cid, (stored, aliases) in shape.graph.names.items():
        for n in (stored, *aliases, *([shape.names.numbers[cid]] if cid in shape.names.numbers else [])):
            out[n.lower()] = cid
    return out


def _unknown(c: str) -> set[str]:
    return {u.lower() for shape in _shapes(c).values() for u in shape.names.unknown}


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


def _slots(c: str, q: Question, graph: str) -> dict[str, str]:
    """The names written into the template's slots, read back off the question: the one reading
    whose every slot is a name of the graph, an unknown concept or a misspelling."""
    template = _templates(c)[q.template or ""]
    known = set(_ids_by_name(c, graph)) | _unknown(c)
    known |= {r["text"].lower() for r in _corpus(c).name_rows() if "text" in r}
    parts = re.split(r"\{(\w+)\}", template["text"])
    found = {tuple(sorted(r.items())) for r in _readings(parts, q.question, known)}
    if len(found) != 1:
        pytest.fail(f"{q.id}: {len(found)} readings of its names", pytrace=False)
    return dict(next(iter(found)))


def _ids(c: str, graph: str, q: Question) -> dict[str, str]:
    return {slot: _ids_by_name(c, graph)[w.lower()] for slot, w in _slots(c, q, graph).items()}


def _recompute(c: str, graph: str, t: dict[str, Any], ids: dict[str, str]) -> gold.FormGold:
    """The gold of one question from evals.gold (and, for older intents, the paraphrase gold)."""
    shape = _graph(c, graph)
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


def _wrong_gold(c: str, graph: str, q: Question) -> bool:
    """Whether the question's gold differs from the one recomputed from its text."""
    t = _templates(c)[q.template or ""]
    written = _slots(c, q, graph)
    if t["form"] in ABSTAIN:
        return not (q.abstain and q.type == t["form"] and not q.concepts)
    if any(w.lower() in _unknown(c) for w in written.values()):
        return not (q.abstain and q.type == "unanswerable" and q.template == t["id"])
    ids = {slot: _ids_by_name(c, graph)[w.lower()] for slot, w in written.items()}
    if t["form"] == "names":
        subject = tuple(ids[s] for s in ("x", "y") if s in ids)
        concepts, lessons, abstain = corpus.gold_for(_graph(c, graph).graph, t["intent"], subject, None)
        return (list(q.concepts), list(q.lessons), q.abstain) != (concepts, sorted(lessons), abstain)
    expected = _recompute(c, graph, t, ids)
    return (
        q.findings != dict(expected.finding)
        or set(q.concepts) != set(expected.concepts)
        or q.match != expected.match
        or q.abstain
        or not q.type == t["form"] == q.asks
    )


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_every_gold_is_recomputable_from_the_bundles(c: str, graph: str, split: str) -> None:
    """Each question's names are read back off its text and its gold recomputed: the finding,
    the concept set and the match rule agree; an unknown concept or a misspelling abstains."""
    _fail_unless([q.id for q in _questions(graph, split) if _wrong_gold(c, graph, q)], "gold differs")


@pytest.mark.parametrize("c", CORPORA)
def test_misspelt_questions_suggest_the_concept_they_misspell(c: str) -> None:
    """A misspelt name abstains and suggests the concept its names row says it misspells."""
    rows = _corpus(c).name_rows()
    meant = {(r["graph"], r["text"]): r["id"] for r in rows if r.get("style") == "misspelt"}
    found, wrong = 0, []
    for graph, split in ((g, s) for cc, g, s in SETS if cc == c):
        for q in _questions(graph, split):
            if q.type == "misspelt":
                written = _slots(c, q, graph)["x"]
                if q.suggest != (meant.get((graph, written)),) or not q.abstain:
                    wrong.append(q.id)
                found += 1
    _fail_unless(wrong, "misspelt questions suggesting another concept")
    templates = sum(1 for r in _templates(c).values() if r["form"] == "misspelt")
    assert found == _builder().PER_TEMPLATE * templates * len(_corpus(c).graphs)


def test_the_holdout_asks_about_concepts_of_its_own_in_no_graph() -> None:
    """Its unknown concepts are not the dev/test ones, and every holdout graph uses them."""
    assert _unknown("holdout") and not _unknown("holdout") & _unknown("forms")
    assert all(
        shape.names.unknown == _graph("holdout", "curriculum").names.unknown
        for shape in _shapes("holdout").values()
    )


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_gold_sets_are_listable_and_non_empty_where_there_is_no_finding(
    c: str, graph: str, split: str
) -> None:
    """At most 15 concepts; a form without a finding (next, remaining, shared) never has none."""
    bad = [
        q.id
        for q in _questions(graph, split)
        if not q.abstain
        and (len(q.concepts) > corpus.MAX_GOLD or not (q.concepts or q.lessons or q.findings))
    ]
    _fail_unless(bad, "unlistable or empty gold")


def _builds_on_disagrees(c: str, q: Question, t: dict[str, Any], order: nx.DiGraph) -> bool:
    """A "builds on" phrasing whose gold over builds_on edges alone is not the learning order's,
    or a direct count whose set is not all that comes directly before (after) the subject."""
    ids = _ids(c, "curriculum", q)
    if t.get("family") == "builds_on" and _recompute(c, "curriculum", t, ids) != _recompute(
        c, "curriculum", {**t, "family": "order"}, ids
    ):
        return True
    direct = {"prerequisites": order.predecessors, "foundations": order.predecessors}
    direct |= {"dependents": order.successors, "built_by": order.successors}
    if t["form"] == "count" and t["of"] in direct:
        return set(q.concepts) - {ids["x"]} != set(direct[t["of"]](ids["x"]))
    return False


@pytest.mark.parametrize(("c", "split"), [(c, s) for c, g, s in SETS if g == "curriculum"])
def test_builds_on_wording_is_used_where_both_readings_agree(c: str, split: str) -> None:
    """On the curriculum, a "builds on" phrasing's gold is the same over builds_on edges alone and
    over the whole learning order; a direct count's set is all that comes directly before/after."""
    order = gold.before_graph(_graph(c, "curriculum").view)
    bad = [
        q.id
        for q in _questions("curriculum", split)
        if not q.abstain
        and _templates(c)[q.template or ""]["form"] in FORMS
        and _builds_on_disagrees(c, q, _templates(c)[q.template or ""], order)
    ]
    _fail_unless(bad, "builds-on readings that disagree")


# -- balance ------------------------------------------------------------------------------------------------


def _answered(graph: str, split: str, form: str) -> list[Question]:
    return [q for q in _questions(graph, split) if q.type == form]


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_checks_are_half_yes_with_every_kind_of_pair(c: str, graph: str, split: str) -> None:
    """About half hold; x directly before y, before it through others, after it, and neither all
    occur."""
    qs = _answered(graph, split, "check")
    assert 0.35 <= sum(q.findings["holds"] for q in qs) / len(qs) <= 0.65
    g = _graph(c, graph).g
    kinds = set()
    for q in qs:
        x, y = _ids(c, graph, q)["x"], _ids(c, graph, q)["y"]
        before, after = gold.holds_before(g, x, y), gold.holds_before(g, y, x)
        kinds.add(
            "direct" if g.has_edge(x, y) else "through" if before else "reversed" if after else "neither"
        )
    assert kinds == {"direct", "through", "reversed", "neither"}


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_orders_name_the_first_the_second_and_neither(c: str, graph: str, split: str) -> None:
    """ "Which first, A or B": A, B and neither are each a fifth to a half of the answers."""
    kinds: Counter[str] = Counter()
    for q in _answered(graph, split, "order"):
        ids = _ids(c, graph, q)
        first = q.findings["first"]
        kinds["neither" if first is None else "x" if first == ids["x"] else "y"] += 1
    assert set(kinds) == {"x", "y", "neither"}
    assert all(0.2 <= n / sum(kinds.values()) <= 0.5 for n in kinds.values()), kinds


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_relate_covers_every_way_the_graph_supports(c: str, graph: str, split: str) -> None:
    """Path, shared foundations and none everywhere; a direct edge of another relation where the
    graph has such relations (the curriculum)."""
    hows = Counter(q.findings["how"] for q in _answered(graph, split, "relate"))
    expected = {"path", "shared_foundations", "none"} | ({"direct"} if graph == "curriculum" else set())
    assert set(hows) == expected and min(hows.values()) >= 2, hows


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_counts_are_small_larger_and_zero_and_why_has_both_answers(c: str, graph: str, split: str) -> None:
    """Counts of 0, 1-3 and 4+ all occur; why has true and false premises and a tie of several
    shortest chains."""
    sizes = Counter(
        "zero" if n == 0 else "small" if n <= 3 else "large"
        for n in (q.findings["count"] for q in _answered(graph, split, "count"))
    )
    assert set(sizes) == {"zero", "small", "large"}
    whys = _answered(graph, split, "why")
    assert {q.findings["holds"] for q in whys} == {True, False}
    g = _graph(c, graph).g
    ties = [
        q
        for q in whys
        if q.findings["holds"] and len(list(nx.all_shortest_paths(g, *_ids(c, graph, q).values()))) > 1
    ]
    assert ties


@pytest.mark.parametrize(("c", "graph", "split"), SETS)
def test_every_form_asks_about_an_unknown_concept_too(c: str, graph: str, split: str) -> None:
    """Each form (and the names templates) has questions about a concept in neither graph."""
    unknown = Counter(q.asks for q in _questions(graph, split) if q.type == "unanswerable")
    assert all(unknown[f] >= 1 for f in FORMS), unknown


# -- names as learners write them --------------------------------------------------------------------------


def _styled_as_written(c: str, graph: str, q: Question, style: str) -> bool:
    """Whether the subject is written as the template's style says."""
    written = _slots(c, q, graph)["x"]
    cid = _ids_by_name(c, graph)[written.lower()]
    stored = _graph(c, graph).graph.names[cid][0]
    if style == "lower":
        return written == stored.lower()
    if style == "number":
        return written.lower() == _graph(c, graph).names.numbers[cid].lower()
    if style == "possessive":
        return bool(re.search(re.escape(written) + "'s?", q.question))
    others = {n for n, other in _ids_by_name(c, graph).items() if other != cid and len(n) >= 3}
    return any(re.search(rf"\b{re.escape(n)}\b", written.lower()) for n in others)


@pytest.mark.parametrize("c", CORPORA)
def test_names_templates_write_subjects_as_learners_do(c: str) -> None:
    """lower case; the other number ("transformers", "sparse matrix"); the possessive; a longer
    name that contains another concept's name (whose gold is the longer one's)."""
    seen: Counter[tuple[str, str]] = Counter()
    bad = []
    for graph, split in ((g, s) for cc, g, s in SETS if cc == c):
        for q in _questions(graph, split):
            t = _templates(c)[q.template or ""]
            if t["form"] != "names" or q.abstain:
                continue
            if not _styled_as_written(c, graph, q, t["style"]):
                bad.append(q.id)
            seen[graph, t["style"]] += 1
    _fail_unless(bad, "subjects not written in their template's style")
    assert all(seen[g, s] >= 4 for g in _corpus(c).graphs for s in _builder().STYLES), seen


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
