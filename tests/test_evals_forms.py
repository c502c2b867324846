"""The question forms' gold oracle (evals.gold), checked on tiny graphs whose answers are worked out
by hand: ties between shortest paths, cycles, roots, the reversed direction, builds_on edges."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest

from data_plane.errors import InputError
from evals import gold
from evals.baselines import LoopSystem, answer_result, did_you_mean
from evals.metrics import Response, score, summarise
from evals.questions import parse_question
from evals.report import failure_table, intent_table

P, B = "prerequisite", "builds_on"


def _order(*edges: tuple[str, str]) -> nx.DiGraph:
    """An order graph from (before, after) pairs."""
    return gold.before_graph(gold.GraphView.of({n for e in edges for n in e}, [(s, t, P) for s, t in edges]))


@pytest.fixture
def diamond() -> nx.DiGraph:
    """a before b and c, both before d, d before e; z stands alone (a root with nothing after it)."""
    g = _order(("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"))
    g.add_node("z")
    return g


# -- check -------------------------------------------------------------------------------------------


def test_check_direct_holds_only_for_an_edge(diamond: nx.DiGraph) -> None:
    """Directly: a before b yes; a before d no (only through b or c); the reverse never."""
    assert gold.holds_before(diamond, "a", "b", direct=True)
    assert not gold.holds_before(diamond, "a", "d", direct=True)
    assert not gold.holds_before(diamond, "b", "a", direct=True)


def test_check_transitive_holds_through_others_but_not_reversed_or_unrelated(diamond: nx.DiGraph) -> None:
    """At all: a before e (through b, d) yes; e before a no; b and c are unrelated; z is unrelated."""
    assert gold.holds_before(diamond, "a", "e")
    assert not gold.holds_before(diamond, "e", "a")
    assert not gold.holds_before(diamond, "b", "c") and not gold.holds_before(diamond, "c", "b")
    assert not gold.holds_before(diamond, "z", "e")


def test_check_gold_carries_holds_and_asks_for_both_ends(diamond: nx.DiGraph) -> None:
    """The finding is {"holds": ...}; the answer must be about x and y (contains)."""
    g = gold.check_gold(diamond, "a", "d", direct=False)
    assert g == gold.FormGold({"holds": True}, frozenset("ad"), "contains")
    assert gold.check_gold(diamond, "a", "d", direct=True).finding == {"holds": False}


def test_builds_on_edges_count_in_the_learning_order_and_alone_on_request() -> None:
    """x builds_on f puts f before x; with only=builds_on the prerequisite edge a -> x is left out."""
    view = gold.GraphView.of("axf", [("a", "x", P), ("x", "f", B)])
    both, only = gold.before_graph(view), gold.before_graph(view, only=B)
    assert gold.holds_before(both, "f", "x", direct=True) and gold.holds_before(both, "a", "x")
    assert gold.holds_before(only, "f", "x") and not gold.holds_before(only, "a", "x")


# -- why ---------------------------------------------------------------------------------------------


def test_why_unions_every_shortest_path_when_several_tie(diamond: nx.DiGraph) -> None:
    """a to d has two shortest paths (through b, through c): both are the reason."""
    assert gold.shortest_chain(diamond, "a", "d") == {"a", "b", "c", "d"}
    assert gold.why_gold(diamond, "a", "e") == gold.FormGold({"holds": True}, frozenset("abcde"))


def test_why_a_direct_need_is_the_two_ends(diamond: nx.DiGraph) -> None:
    """d directly before e: the chain is d, e."""
    assert gold.shortest_chain(diamond, "d", "e") == {"d", "e"}


def test_why_the_reversed_or_unrelated_pair_does_not_hold(diamond: nx.DiGraph) -> None:
    """e is not needed for a, b not for c: holds false, the answer must be about both."""
    assert gold.shortest_chain(diamond, "e", "a") is None
    assert gold.why_gold(diamond, "b", "c") == gold.FormGold({"holds": False}, frozenset("bc"), "contains")


def test_why_takes_the_shortest_path_not_every_path() -> None:
    """a before c directly and through b: only the direct edge is the shortest chain."""
    g = _order(("a", "b"), ("b", "c"), ("a", "c"))
    assert gold.shortest_chain(g, "a", "c") == {"a", "c"}


# -- order -------------------------------------------------------------------------------------------


def test_order_names_the_one_needed_first_in_either_argument_order(diamond: nx.DiGraph) -> None:
    """a comes before e whichever is asked first; b and c have no order."""
    assert gold.first_of(diamond, "a", "e") == "a" and gold.first_of(diamond, "e", "a") == "a"
    assert gold.first_of(diamond, "b", "c") is None
    assert gold.order_gold(diamond, "e", "a") == gold.FormGold({"first": "a"}, frozenset("ae"), "contains")


def test_order_on_a_cycle_is_neither() -> None:
    """p before q and q before p: no order between them."""
    g = _order(("p", "q"), ("q", "p"))
    assert gold.first_of(g, "p", "q") is None


# -- relate ------------------------------------------------------------------------------------------


def test_relate_prefers_a_path_in_either_direction(diamond: nx.DiGraph) -> None:
    """a and e: the path's nodes (both shortest ones), whichever is named first."""
    assert gold.relation_between(_view(diamond), "a", "e") == ("path", set("abcde"))
    assert gold.relation_between(_view(diamond), "e", "a") == ("path", set("abcde"))


def test_relate_a_path_beats_shared_foundations() -> None:
    """a before b and c, b before c: b and c share a but are related by the path b, c."""
    view = _view(_order(("a", "b"), ("a", "c"), ("b", "c")))
    assert gold.relation_between(view, "c", "b") == ("path", {"b", "c"})


def test_relate_without_a_path_gives_the_nearest_shared_foundations(diamond: nx.DiGraph) -> None:
    """b and c share only a."""
    assert gold.relate_gold(_view(diamond), "b", "c") == gold.FormGold(
        {"how": "shared_foundations"}, frozenset("a")
    )


def test_nearest_shared_foundations_drop_the_ones_further_back() -> None:
    """r before s, s before x and y: both share r and s; s is the nearest, r is behind it."""
    g = _order(("r", "s"), ("s", "x"), ("s", "y"), ("r", "x"))
    assert gold.nearest_shared_foundations(g, "x", "y") == {"s"}


def test_nearest_shared_foundations_keep_a_whole_cycle() -> None:
    """s1 and s2 form a cycle before x and y, r comes before the cycle: nearest are s1 and s2."""
    g = _order(("r", "s1"), ("s1", "s2"), ("s2", "s1"), ("s2", "x"), ("s2", "y"))
    assert gold.nearest_shared_foundations(g, "x", "y") == {"s1", "s2"}


def test_relate_on_a_cycle_takes_both_directions() -> None:
    """p before q and q before p, one hop each: the path is p, q."""
    view = _view(_order(("p", "q"), ("q", "p")))
    assert gold.relation_between(view, "p", "q") == ("path", {"p", "q"})


def test_relate_falls_back_to_a_direct_edge_of_another_relation_then_none() -> None:
    """u related to v (no learning order): direct; w contrasts with u: direct; w and v: none."""
    view = gold.GraphView.of("uvw", [("u", "v", "related"), ("w", "u", "contrasts_with")])
    assert gold.relate_gold(view, "v", "u") == gold.FormGold({"how": "direct"}, frozenset("uv"), "contains")
    assert gold.relation_between(view, "u", "w") == ("direct", {"u", "w"})
    assert gold.relate_gold(view, "w", "v") == gold.FormGold({"how": "none"}, frozenset("vw"), "contains")


def test_relate_two_roots_are_unrelated(diamond: nx.DiGraph) -> None:
    """a and z: nothing before either, no path, no edge."""
    assert gold.relation_between(_view(diamond), "a", "z") == ("none", {"a", "z"})


# -- next and remaining ------------------------------------------------------------------------------------


def test_next_is_the_outer_fringe_of_what_is_known(diamond: nx.DiGraph) -> None:
    """Knowing a: b and c. Knowing b (so a too): c, not d (c is missing). Knowing b and c: d."""
    assert gold.learn_next(diamond, ["a"]) == {"b", "c"}
    assert gold.learn_next(diamond, ["b"]) == {"c"}
    assert gold.next_gold(diamond, ["b", "c"]) == gold.FormGold(concepts=frozenset("d"))


def test_next_leaves_out_roots(diamond: nx.DiGraph) -> None:
    """z and a have nothing before them: never "next", even for someone who knows nothing of them."""
    assert gold.learn_next(diamond, ["d"]) == {"e"}
    assert "z" not in gold.learn_next(diamond, ["e"]) and gold.learn_next(diamond, ["e"]) == set()


def test_remaining_is_what_comes_before_the_goal_less_what_is_known(diamond: nx.DiGraph) -> None:
    """Before e: a, b, c, d; knowing b (and so a): c and d are left; knowing d: nothing."""
    assert gold.left_before(diamond, ["b"], "e") == {"c", "d"}
    assert gold.remaining_gold(diamond, ["b", "c"], "e") == gold.FormGold(concepts=frozenset("d"))
    assert gold.left_before(diamond, ["d"], "e") == set()


# -- shared and count ------------------------------------------------------------------------------------


def test_shared_direct_and_transitive(diamond: nx.DiGraph) -> None:
    """b and c both directly need a; d and e both need a, b and c (e through d)."""
    assert gold.shared_needs(diamond, "b", "c", direct=True) == {"a"}
    assert gold.shared_needs(diamond, "d", "e", direct=True) == set()
    assert gold.shared_gold(diamond, "d", "e", direct=False) == gold.FormGold(concepts=frozenset("abc"))


def test_count_is_the_set_size_and_zero_asks_about_the_subject() -> None:
    """Three members: count 3, the set exact; none: count 0, the answer must be about x."""
    assert gold.count_gold({"p", "q", "r"}, "x") == gold.FormGold({"count": 3}, frozenset("pqr"))
    assert gold.count_gold(set(), "x") == gold.FormGold({"count": 0}, frozenset("x"), "contains")


def _view(g: nx.DiGraph) -> gold.GraphView:
    """The order graph as prerequisite edges."""
    return gold.GraphView.of(g.nodes, [(s, t, P) for s, t in g.edges])


# -- question format ---------------------------------------------------------------------------------


def _q(**expect: Any) -> dict[str, Any]:
    return {"id": "q", "question": "Is A needed before B?", "type": "check", "expect": expect}


def test_finding_and_suggest_round_trip() -> None:
    """expect.finding and expect.suggest survive a round trip in the order written."""
    obj = _q(concepts=["a", "b"], finding={"holds": True, "direct": False}, abstain=False, match="contains")
    q = parse_question(obj)
    assert q.findings == {"holds": True, "direct": False} and q.to_dict() == obj
    typo = _q(concepts=[], suggest=["embeddings"], abstain=True)
    assert parse_question(typo).suggest == ("embeddings",) and parse_question(typo).to_dict() == typo


def test_a_finding_alone_makes_a_question_answerable() -> None:
    """ "How many prerequisites has X?" with none: count 0 is a gold answer without concepts."""
    assert parse_question(_q(finding={"count": 0})).findings == {"count": 0}
    assert parse_question(_q(finding={"first": None})).findings == {"first": None}


@pytest.mark.parametrize(
    ("expect", "field"),
    [
        ({"concepts": []}, "expect.concepts"),
        ({"finding": "holds"}, "expect.finding"),
        ({"finding": {}}, "expect.finding"),
        ({"finding": {"verdict": True}}, "expect.finding"),
        ({"finding": {"holds": "yes"}}, "expect.finding.holds"),
        ({"finding": {"direct": 1}}, "expect.finding.direct"),
        ({"finding": {"count": -1}}, "expect.finding.count"),
        ({"finding": {"count": True}}, "expect.finding.count"),
        ({"finding": {"first": ""}}, "expect.finding.first"),
        ({"finding": {"how": "somehow"}}, "expect.finding.how"),
        ({"abstain": True, "suggest": "rag"}, "expect.suggest"),
        ({"abstain": True, "suggest": [""]}, "expect.suggest"),
        ({"concepts": ["rag"], "suggest": ["rag"]}, "expect.suggest"),
    ],
)
def test_bad_finding_or_suggest_is_refused_by_name(expect: dict[str, Any], field: str) -> None:
    """Each malformed field is refused with an InputError naming it."""
    with pytest.raises(InputError) as info:
        parse_question(_q(**expect))
    assert info.value.field == field


# -- scoring -----------------------------------------------------------------------------------------


def test_result_members_are_the_answer_set_when_there_is_a_result() -> None:
    """With a result, its members are compared with the gold set, not the citations; without
    one (baselines, older answers), the citations are."""
    stated = Response(abstained=False, cited=("a", "b", "c"), result={"members": ["a", "b"]})
    assert score("q", "next", ["a", "b"], False, stated).exact_match
    wrong = Response(abstained=False, cited=("a", "b"), result={"members": ["a"]})
    s = score("q", "next", ["a", "b"], False, wrong)
    assert not s.exact_match and s.recall == 0.5
    assert not score(
        "q", "next", ["a", "b"], False, Response(abstained=False, cited=("a", "b", "c"))
    ).exact_match


def test_exact_match_needs_every_finding_key_right() -> None:
    """A check about x and y: the right verdict is exact; the wrong one or no result is not, yet
    F1 over the concepts is still reported."""

    def check(result: dict[str, Any] | None) -> Any:
        resp = Response(abstained=False, cited=("x", "y"), result=result)
        return score("q", "check", ["x", "y"], False, resp, match="contains", finding={"holds": True})

    right, wrong, missing = check({"holds": True, "members": []}), check({"holds": False}), check(None)
    assert right.exact_match and right.finding_ok
    assert not wrong.exact_match and wrong.finding_ok is False and wrong.f1 == 1.0
    assert not missing.exact_match and missing.f1 == 1.0


def test_a_finding_value_must_have_the_gold_type() -> None:
    """count 1 is not holds true (1 == True in Python): the types must agree."""
    resp = Response(abstained=False, result={"members": ["a"], "count": True})
    assert not score("q", "count", ["a"], False, resp, finding={"count": 1}).exact_match
    resp = Response(abstained=False, result={"members": ["a"], "count": 1})
    assert score("q", "count", ["a"], False, resp, finding={"count": 1}).exact_match


def test_exact_finding_and_set_must_both_hold() -> None:
    """A why answer with the right verdict and a wrong chain is not exact."""
    resp = Response(abstained=False, result={"holds": True, "members": ["a", "c"]})
    s = score("q", "why", ["a", "b", "c"], False, resp, finding={"holds": True})
    assert s.finding_ok and not s.exact_match


def test_contains_questions_still_read_citations_and_seeds() -> None:
    """An order answer whose members are empty is about x and y through its seeds."""
    resp = Response(abstained=False, result={"first": "x", "members": []}, extra={"seeds": ["x", "y"]})
    assert score("q", "order", ["x", "y"], False, resp, match="contains", finding={"first": "x"}).exact_match


def test_suggestion_recall_counts_did_you_mean_holding_every_suggested_id() -> None:
    """Three misspelt names: one offered in full, one partly, one answered; only the first counts
    for suggestion recall, and answering is still wrong."""
    full = score(
        "a", "misspelt", [], True, Response(abstained=True, did_you_mean=("rag", "llm")), suggest=["rag"]
    )
    part = score(
        "b", "misspelt", [], True, Response(abstained=True, did_you_mean=("llm",)), suggest=["rag", "llm"]
    )
    answered = score(
        "c", "misspelt", [], True, Response(abstained=False, did_you_mean=("rag",)), suggest=["rag"]
    )
    assert (full.suggest_ok, part.suggest_ok) == (True, False) and full.exact_match
    assert answered.suggest_ok and not answered.exact_match
    assert summarise([full, part, answered])["suggestion_recall"] == pytest.approx(2 / 3)
    assert summarise([score("d", "t", ["a"], False, Response(abstained=True))])["suggestion_recall"] is None


def test_the_answer_dict_gives_result_and_did_you_mean() -> None:
    """The contract with answer/1: ``result`` is an object or absent; ``did_you_mean`` objects
    with an id (or ids)."""
    assert answer_result({"result": {"holds": True, "members": []}}) == {"holds": True, "members": []}
    assert answer_result({"result": None}) is None and answer_result({}) is None
    assert did_you_mean({"did_you_mean": [{"id": "rag", "name": "RAG"}, "llm_basics"]}) == (
        "rag",
        "llm_basics",
    )
    assert did_you_mean({}) == ()


class _Answer:
    """The parts of an answer the loop adapter reads, with the given answer/1 dict."""

    def __init__(self, d: dict[str, Any]) -> None:
        self._d = d
        self.abstained = d.get("result") is None
        self.cited_concept_ids, self.seeds, self.rounds = ("x",), ("x",), ()
        self.cited_edges: tuple[str, ...] = ()
        self.evidence = type(
            "Ev", (), {"concepts": {"x": type("C", (), {"summary": ""})()}, "edges": {}, "lessons": {}}
        )()
        self.confidence, self.llm_calls, self.prompt_tokens, self.completion_tokens = 0.9, 0, 0, 0
        self.syntheses = 0
        self.reasoning_tokens, self.cache_hit_tokens, self.cost_usd, self.latency_ms = 0, 0, 0.0, 1.0
        self.text, self.abstain_reason, self.extra = "", None, {}
        self.as_of = type("AsOf", (), {"to_dict": lambda _: {"valid_at": None}})()

    def to_dict(self) -> dict[str, Any]:
        return self._d


class _Planner:
    """Answers every question with one scripted answer/1 dict."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.d = d

    def ask(self, question: str, **_: Any) -> _Answer:
        return _Answer(self.d)


def test_the_loop_adapter_carries_result_and_did_you_mean_into_the_response() -> None:
    """What the loop's answer states reaches the scorer: its result, its suggestions."""
    q = parse_question(_q(concepts=["x"], finding={"holds": True}, match="contains"))
    found = LoopSystem(_Planner({"result": {"intent": "check", "holds": True, "members": []}})).run(q)
    assert found.result == {"intent": "check", "holds": True, "members": []} and found.did_you_mean == ()
    offered = LoopSystem(_Planner({"did_you_mean": [{"id": "rag", "name": "RAG"}]})).run(q)
    assert offered.result is None and offered.did_you_mean == ("rag",)


def test_intent_table_reports_exact_match_and_suggestion_recall_with_dashes() -> None:
    """Per form: n, coverage, selective accuracy, F1, EM, abstention P/R, suggestion recall; an
    undefined figure is ``-``, never None or n/a."""
    scores = [
        score(
            "c1",
            "check",
            ["x", "y"],
            False,
            Response(abstained=False, cited=("x", "y"), result={"holds": True}),
            intent="check",
            match="contains",
            finding={"holds": True},
        ),
        score(
            "m1",
            "misspelt",
            [],
            True,
            Response(abstained=True, did_you_mean=("rag",)),
            intent="misspelt",
            suggest=["rag"],
        ),
    ]
    by_intent = {s.intent: {"loop": summarise([s])} for s in scores}
    table = intent_table(by_intent, {"loop": summarise(scores)}, "loop")
    head, _, check, misspelt, _ = table.splitlines()
    assert "| EM |" in head and "| suggest R |" in head and "| abst. P | abst. R |" in head
    assert check.startswith("| check | 1 | 1 | 1.00 | 1.00 | 1.00 | 1.00 | - | - | - |")
    assert misspelt.startswith("| misspelt | 1 | 0 | 0.00 | - | - | 1.00 | 1.00 | 1.00 | 1.00 |")
    assert "None" not in table and "n/a" not in table


def test_failure_table_shows_the_gold_finding_and_the_answers_result() -> None:
    """A check answered the wrong way lists holds=true as gold and holds=false as got."""
    row = {
        "id": "c1",
        "question": "is x needed before y",
        "type": "check",
        "intent": "check",
        "template": "fm-check-01",
        "expect": {"concepts": ["x", "y"], "finding": {"holds": True}, "abstain": False, "match": "contains"},
        "results": {
            "loop": {
                "exact_match": False,
                "abstained": False,
                "cited": ["x", "y"],
                "result": {"holds": False, "members": []},
            }
        },
    }
    n, table = failure_table([row], "loop")
    assert n == 1 and "holds=true; x, y" in table and "holds=false; (no members)" in table
