"""Pure scoring: one system's response to one question against its gold, and summaries over many.

Scoring rules (also in docs/evals.md):

* **Answerable question** (``expect.abstain`` false). If the system answers, precision, recall and
  F1 compare its answer set with the gold set (nothing in it: P = R = F1 = 0). The answer set is
  ``result.members`` when the answer has a ``result`` (the set its text states), else its cited
  concept ids (baselines and older answers). If it abstains, P = R = F1 = 0 (a missed answer costs
  full recall and is not excused by precision). *Exact match* means the answer set equals the gold
  set and, when the question has an ``expect.finding``, every finding key equals the answer's
  ``result`` key (same value and type; no ``result``: not an exact match; F1 is still computed
  over the sets). *Evidence recall* is the share of gold concepts present in the evidence
  sub-graph, whether or not the system then answered.
* **Abstain question** (``expect.abstain`` true). P/R/F1 and evidence recall are not computed
  (``None``, left out of averages); the response is correct, and counts as an exact match, only if
  the system abstained.
* **Abstention precision**: of the questions the system abstained on, the share that were
  abstain questions; **abstention recall**: of the abstain questions, the share it abstained on.
  Either is ``None`` when its denominator is zero.
* **Coverage**: share of questions answered (not abstained). **Selective accuracy**: of the
  answered questions, the share that are exact matches (answering an abstain question is wrong).
* **Lesson questions** (gold ``expect.lessons``) compare the response's cited lesson ids instead of
  its cited concepts, by the same rules.
* **"contains" questions** (``expect.match``, e.g. "tell me about X"): the gold ids must be among
  the concepts the answer is about, its cited ones or its seeds (``extra["seeds"]``: an "about X"
  answer often cites X's neighbours and not X); P = R = F1 = the share of gold ids found there,
  exact match when all are (and the finding, if any, is right).
* **Set aside** (``expect.set_aside`` true: answer the graph question and say what part of the
  question was not answered): an answered such question is an exact match only if the response's
  ``set_aside`` (the answer's top-level ``set_aside`` list) is non-empty, besides the set and
  finding match; F1 is still the sets'. *Set-aside accuracy* is the share of answered such
  questions whose list is non-empty (``None`` when there are none).
* **Requirement groups** (``expect.one_of``, ``expect.unmet``, ``expect.requirements``; a graph
  with groups): each one given must equal the answer's ``result`` key, ``one_of`` a group id,
  ``unmet`` and ``requirements`` as sets of group ids (an entry a group id or an object with
  ``group_id``; a list the result leaves out is empty, a ``one_of`` it leaves out is none). A
  wrong or missing one makes an answered question not an exact match (``groups_ok`` false); F1
  is still the sets'. *Groups accuracy* is the share of such questions (abstentions included)
  whose groups are right. Questions without them are scored as before.
* **Suggestions** (``expect.suggest``, misspelt names): *suggestion recall* is the share of such
  questions whose ``did_you_mean`` holds every suggested id; the correct response is still to
  abstain (exact match as for any abstain question).
* **Time**: when the question's words name a time (``expect.as_of`` window), *time read right*
  says whether the valid time the system reports using falls in the window (``None`` otherwise);
  gold was computed at that time, so a system that ignores the words usually misses the set too.
* **Crash**: a system that raises something other than a ``KGError`` on a question has answered
  it wrongly (not abstained): bad input must give a clear abstention or error, never a traceback.
* **Citation coverage**: of the concepts an answer's text names (``Response.named``, found by
  ``evals.coverage``), the share it cites; summed over answered questions
  (named and cited / named), ``None`` when no answer names a concept.
* **Calibration** (ECE): over answered questions, confidence against exact-match correctness, in
  equal-width bins; the reliability diagram plots the same bins.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from data_plane.clock import parse_time
from data_plane.errors import InputError

__all__ = [
    "GroupsExpected",
    "Response",
    "Score",
    "answer_set",
    "calibration_bins",
    "expected_calibration_error",
    "prf",
    "score",
    "summarise",
    "time_read_right",
]


@dataclass(frozen=True)
class Response:
    """What one system did with one question (the runner fills this from an Answer or a baseline)."""

    abstained: bool
    cited: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    confidence: float = 0.0
    rounds: int = 0
    llm_calls: int = 0  # model calls (0 offline)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    text: str = ""
    reasoning_tokens: int = 0
    cache_hit_tokens: int = 0
    cost_usd: float = 0.0
    abstain_reason: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    lessons: tuple[str, ...] = ()
    as_of_valid: str | None = None  # the valid time the system says it answered at
    crashed: bool = False
    result: Mapping[str, Any] | None = None  # the answer's ``result`` (what it found), if any
    did_you_mean: tuple[str, ...] = ()  # ids offered for a name that matched nothing
    # Text quoted from cited records (summaries, lesson titles): names in it are not claims.
    quoted: tuple[str, ...] = ()
    # The concepts the text names (the runner fills this in); None: not computed.
    named: tuple[str, ...] | None = None
    syntheses: int = 0  # synthesis steps run, offline or by a model
    # The parts of the question the answer says it did not answer (the answer's ``set_aside``).
    set_aside: tuple[str, ...] = ()


@dataclass(frozen=True)
class Score:
    """One response scored against one question's gold."""

    question_id: str
    type: str
    expect_abstain: bool
    abstained: bool
    precision: float | None
    recall: float | None
    f1: float | None
    exact_match: bool
    evidence_recall: float | None
    confidence: float
    rounds: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    intent: str | None = None
    time_ok: bool | None = None
    crashed: bool = False
    reasoning_tokens: int = 0
    cache_hit_tokens: int = 0
    cost_usd: float = 0.0
    named: int | None = None  # concepts the answer's text names (answered questions only)
    named_cited: int | None = None  # ... of which the answer cites
    finding_ok: bool | None = None  # every expect.finding key stated right (None: no finding)
    suggest_ok: bool | None = None  # did_you_mean holds every expect.suggest id (None: none asked)
    syntheses: int = 0
    set_aside_ok: bool | None = None  # answered, set aside something, as asked (None: not asked)
    groups_ok: bool | None = None  # one_of, unmet and requirements stated right (None: none asked)

    @property
    def answered(self) -> bool:
        return not self.abstained

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "exact_match": self.exact_match,
            "evidence_recall": self.evidence_recall,
            "abstained": self.abstained,
            "confidence": self.confidence,
            "rounds": self.rounds,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": round(self.latency_ms, 3),
            "time_ok": self.time_ok,
            "crashed": self.crashed,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_hit_tokens": self.cache_hit_tokens,
            "cost_usd": round(self.cost_usd, 8),
            "named": self.named,
            "named_cited": self.named_cited,
            "finding_ok": self.finding_ok,
            "suggest_ok": self.suggest_ok,
            "syntheses": self.syntheses,
            "set_aside_ok": self.set_aside_ok,
            "groups_ok": self.groups_ok,
        }


def time_read_right(window: tuple[datetime, datetime] | None, reported: str | None) -> bool | None:
    """Whether the reported valid time falls in ``[start, end)``; None when no window is asked."""
    if window is None:
        return None
    if reported is None:
        return False
    try:
        at = parse_time(reported, field="as_of")
    except InputError:
        return False
    return window[0] <= at < window[1]


def prf(predicted: Iterable[str], gold: Iterable[str]) -> tuple[float, float, float]:
    """Set precision, recall and F1; an empty prediction or empty gold scores 0 on that side."""
    p_set, g_set = set(predicted), set(gold)
    hit = len(p_set & g_set)
    precision = hit / len(p_set) if p_set else 0.0
    recall = hit / len(g_set) if g_set else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def answer_set(response: Response) -> tuple[str, ...]:
    """The concepts the answer states: ``result.members`` when it has a result, else its citations."""
    if response.result is None:
        return response.cited
    return tuple(response.result.get("members") or ())


def _finding_ok(finding: Mapping[str, Any], response: Response) -> bool | None:
    if not finding:
        return None
    result = response.result
    if result is None or response.abstained:
        return False
    # True == 1 in Python: a count of 1 is not "holds", so the types must agree too.
    return all(k in result and type(result[k]) is type(v) and result[k] == v for k, v in finding.items())


def _suggest_ok(suggest: Sequence[str], response: Response) -> bool | None:
    return set(suggest) <= set(response.did_you_mean) if suggest else None


def _set_aside_ok(set_aside: bool, response: Response) -> bool | None:
    """An answered ``expect.set_aside`` question: does the answer say it set something aside?"""
    if not set_aside or response.abstained:
        return None
    return any(isinstance(part, str) and part.strip() for part in response.set_aside)


@dataclass(frozen=True)
class GroupsExpected:
    """What a question on a graph with requirement groups asks of the answer's ``result`` (each
    None: not asked)."""

    one_of: str | None = None
    unmet: Sequence[str] | None = None
    requirements: Sequence[str] | None = None

    @property
    def asked(self) -> bool:
        return self.one_of is not None or self.unmet is not None or self.requirements is not None


def _group_id(entry: Any) -> Any:
    return entry.get("group_id") if isinstance(entry, Mapping) else entry


def _group_ids(value: Any) -> set[Any] | None:
    """A result's list of groups as ids (None: not a list)."""
    if value is None:
        return set()
    if not isinstance(value, list | tuple):
        return None
    return {_group_id(e) for e in value}


def _groups_ok(expected: GroupsExpected, response: Response) -> bool | None:
    if not expected.asked:
        return None
    result = response.result
    if result is None or response.abstained:
        return False
    if expected.one_of is not None and _group_id(result.get("one_of")) != expected.one_of:
        return False
    for name in ("unmet", "requirements"):
        wanted = getattr(expected, name)
        if wanted is not None and _group_ids(result.get(name)) != set(wanted):
            return False
    return True


def score(
    question_id: str,
    qtype: str,
    gold: Sequence[str],
    expect_abstain: bool,
    response: Response,
    *,
    intent: str | None = None,
    gold_lessons: Sequence[str] = (),
    match: str = "exact",
    time_window: tuple[datetime, datetime] | None = None,
    finding: Mapping[str, Any] | None = None,
    suggest: Sequence[str] = (),
    set_aside: bool = False,
    groups: GroupsExpected | None = None,
) -> Score:
    """Score ``response`` by the rules in the module docstring."""
    if response.crashed:  # a traceback is a wrong answer, not an abstention
        response = Response(
            abstained=False, confidence=response.confidence, latency_ms=response.latency_ms, crashed=True
        )
    stated: Sequence[str] = answer_set(response)
    if gold_lessons:
        gold, stated = gold_lessons, response.lessons
    named = set(response.named) if response.named is not None and not response.abstained else None
    common: dict[str, Any] = {
        "question_id": question_id,
        "type": qtype,
        "expect_abstain": expect_abstain,
        "abstained": response.abstained,
        "confidence": response.confidence,
        "rounds": response.rounds,
        "llm_calls": response.llm_calls,
        "syntheses": response.syntheses,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "latency_ms": response.latency_ms,
        "intent": intent or qtype,
        "time_ok": time_read_right(time_window, response.as_of_valid),
        "crashed": response.crashed,
        "reasoning_tokens": response.reasoning_tokens,
        "cache_hit_tokens": response.cache_hit_tokens,
        "cost_usd": response.cost_usd,
        "named": None if named is None else len(named),
        "named_cited": None if named is None else len(named & set(response.cited)),
        "suggest_ok": _suggest_ok(suggest, response),
    }
    finding_ok = _finding_ok(finding or {}, response)
    set_aside_ok = None if expect_abstain else _set_aside_ok(set_aside, response)
    groups_ok = None if expect_abstain else _groups_ok(groups or GroupsExpected(), response)
    told = finding_ok is not False and set_aside_ok is not False and groups_ok is not False
    if expect_abstain:
        return Score(
            precision=None,
            recall=None,
            f1=None,
            exact_match=response.abstained,
            evidence_recall=None,
            **common,
        )
    ev = set(response.evidence)
    evidence_recall: float | None = len(ev & set(gold)) / len(set(gold)) if gold else 0.0
    if gold_lessons:  # the evidence sub-graph holds concepts, not lessons
        evidence_recall = None
    if response.abstained:
        return Score(
            precision=0.0,
            recall=0.0,
            f1=0.0,
            exact_match=False,
            evidence_recall=evidence_recall,
            finding_ok=finding_ok,
            groups_ok=groups_ok,
            **common,
        )
    if match == "contains":  # what the answer is about: its citations (not result.members) or seeds
        about = set(response.lessons if gold_lessons else response.cited)
        about |= set(response.extra.get("seeds") or ())
        share = len(about & set(gold)) / len(set(gold)) if gold else 0.0
        return Score(
            precision=share,
            recall=share,
            f1=share,
            exact_match=set(gold) <= about and told,
            evidence_recall=evidence_recall,
            finding_ok=finding_ok,
            set_aside_ok=set_aside_ok,
            groups_ok=groups_ok,
            **common,
        )
    p, r, f = prf(stated, gold)
    return Score(
        precision=p,
        recall=r,
        f1=f,
        exact_match=set(stated) == set(gold) and told,
        evidence_recall=evidence_recall,
        finding_ok=finding_ok,
        set_aside_ok=set_aside_ok,
        groups_ok=groups_ok,
        **common,
    )


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


def calibration_bins(
    confidences: Sequence[float], correct: Sequence[bool], *, bins: int = 10
) -> list[dict[str, float | int]]:
    """Equal-width bins over [0, 1]: count, mean confidence and accuracy of each non-empty bin."""
    out: list[dict[str, float | int]] = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, c in enumerate(confidences) if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if not idx:
            continue
        out.append(
            {
                "lo": lo,
                "hi": hi,
                "n": len(idx),
                "confidence": statistics.fmean(confidences[i] for i in idx),
                "accuracy": statistics.fmean(1.0 if correct[i] else 0.0 for i in idx),
            }
        )
    return out


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], *, bins: int = 10
) -> float | None:
    """ECE: the count-weighted mean gap between confidence and accuracy over the bins."""
    if len(confidences) != len(correct):
        raise ValueError("confidences and correct must have the same length")
    if not confidences:
        return None
    total = len(confidences)
    return sum(
        int(b["n"]) / total * abs(float(b["confidence"]) - float(b["accuracy"]))
        for b in calibration_bins(confidences, correct, bins=bins)
    )


def summarise(scores: Sequence[Score]) -> dict[str, Any]:
    """Aggregate scores: means over the questions where a metric is defined (see module docstring)."""
    n = len(scores)
    abstained = [s for s in scores if s.abstained]
    should = [s for s in scores if s.expect_abstain]
    answered = [s for s in scores if s.answered]
    latencies = [s.latency_ms for s in scores]
    confs = [s.confidence for s in answered]
    correct = [s.exact_match for s in answered]
    named = sum(s.named or 0 for s in scores)
    return {
        "n": n,
        "n_answerable": n - len(should),
        "precision": _mean(s.precision for s in scores),
        "recall": _mean(s.recall for s in scores),
        "f1": _mean(s.f1 for s in scores),
        "exact_match": _mean(1.0 if s.exact_match else 0.0 for s in scores),
        "evidence_recall": _mean(s.evidence_recall for s in scores),
        "abstention_precision": (
            sum(1 for s in abstained if s.expect_abstain) / len(abstained) if abstained else None
        ),
        "abstention_recall": sum(1 for s in should if s.abstained) / len(should) if should else None,
        "coverage": len(answered) / n if n else None,
        "selective_accuracy": _mean(1.0 if s.exact_match else 0.0 for s in answered),
        "ece": expected_calibration_error(confs, correct),
        "citation_coverage": sum(s.named_cited or 0 for s in scores) / named if named else None,
        "named_uncited": named - sum(s.named_cited or 0 for s in scores),
        "time_accuracy": _mean(None if s.time_ok is None else float(s.time_ok) for s in scores),
        "suggestion_recall": _mean(None if s.suggest_ok is None else float(s.suggest_ok) for s in scores),
        "set_aside_accuracy": _mean(
            None if s.set_aside_ok is None else float(s.set_aside_ok) for s in scores
        ),
        "groups_accuracy": _mean(None if s.groups_ok is None else float(s.groups_ok) for s in scores),
        "crashes": sum(1 for s in scores if s.crashed),
        "mean_rounds": _mean(float(s.rounds) for s in scores),
        "mean_llm_calls": _mean(float(s.llm_calls) for s in scores),
        "mean_syntheses": _mean(float(s.syntheses) for s in scores),
        "mean_prompt_tokens": _mean(float(s.prompt_tokens) for s in scores),
        "mean_completion_tokens": _mean(float(s.completion_tokens) for s in scores),
        "mean_reasoning_tokens": _mean(float(s.reasoning_tokens) for s in scores),
        "cache_hit_rate": (
            sum(s.cache_hit_tokens for s in scores) / prompt_total
            if (prompt_total := sum(s.prompt_tokens for s in scores))
            else None
        ),
        "mean_cost_usd": _mean(s.cost_usd for s in scores),
        "total_cost_usd": sum(s.cost_usd for s in scores) if scores else None,
        "mean_latency_ms": _mean(latencies),
        "p50_latency_ms": _percentile(latencies, 0.5),
        "p99_latency_ms": _percentile(latencies, 0.99),
    }
