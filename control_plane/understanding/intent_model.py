"""A second, learnt opinion on what a question asks, used to check the grammar's reading.

The grammar (:mod:`.interpretation`) reads a question by its structure. Where a writer's phrasing
falls outside what it knows, it can read a wrong intent with full confidence, which the product
must never turn into an answer. This module is an independent check: a naive Bayes model over
word and word-pair features (concept names masked as one token) of which *corpus intent* a
phrasing asks, learnt from the labelled phrasing corpus (``python -m evals.intent_training``
writes ``intent_model.json`` beside this file; the training files are named inside it).

It answers nothing. :func:`second_opinion` compares its scores with the grammar's reading: when the
model finds another intent far more likely than every intent the reading is compatible with (a
log-odds margin of at least :data:`DISAGREE`), the reading is made unsure, and the loop abstains
saying what else the question could mean. Readings the corpus has no label for (combined
questions, neighbourhoods wider than one hop) are not checked.

Pure: features in, scores out; the model file is read once, lazily.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from .lexicon import respelt
from .names import normalise

__all__ = [
    "DISAGREE",
    "LABEL_READING",
    "NAME",
    "IntentModel",
    "compatible_labels",
    "default_model",
    "features",
    "phrasing_tokens",
    "question_tokens",
    "second_opinion",
    "train",
]

# The token a concept name becomes (both in training phrasings and in questions).
NAME: Final = "qqx"
# Log-odds by which another intent must beat the reading's for the reading to be doubted; chosen
# leave-one-holdout-out on the readers that scored holdout6-11 blind (``python -m
# evals.second_reading``; docs/evals.md, "Round 4"): a plateau from 4 to 6.
DISAGREE: Final = 5.0
# Additive smoothing of feature counts.
ALPHA: Final = 0.5
MODEL_FILE: Final = Path(__file__).with_name("intent_model.json")
FORMAT: Final = "kg-intent-model/1"
# Corpus labels that are not a reading's intent: the model saying so is a reason to doubt.
BAD_INPUT: Final = "bad_input"


def phrasing_tokens(template: str) -> tuple[str, ...]:
    """A corpus phrasing (``{x}``, ``{y}`` where names go) as model tokens."""
    text = template.replace("{x}", f" {NAME} ").replace("{y}", f" {NAME} ")
    return tuple(t if t == NAME else respelt(t) for t in normalise(text))


def question_tokens(tokens: Sequence[str], spans: Iterable[tuple[int, int]]) -> tuple[str, ...]:
    """A question's (normalised, respelt) ``tokens`` with every named concept's span ``[start,
    end)`` collapsed to one :data:`NAME` token."""
    starts = dict(spans)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        end = starts.get(i)
        if end is not None and end > i:
            out.append(NAME)
            i = end
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out)


def features(tokens: Sequence[str]) -> frozenset[str]:
    """Words and adjacent word pairs (``"a b"``)."""
    return frozenset((*tokens, *(f"{a} {b}" for a, b in itertools.pairwise(tokens))))


@dataclass(frozen=True)
class IntentModel:
    """Per label: how many phrasings it was learnt from and in how many each feature occurs."""

    documents: Mapping[str, int]
    counts: Mapping[str, Mapping[str, int]]
    trained_on: tuple[str, ...] = ()
    # Derived once (frozen): per seen feature, what it adds to each label that has seen it, over
    # what an unseen one adds; per label, the prior and the log of an unseen feature's share.
    _lift: dict[str, tuple[tuple[str, float], ...]] = field(init=False, repr=False, compare=False)
    _base: dict[str, tuple[float, float]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        vocabulary = {f for c in self.counts.values() for f in c}
        total = sum(self.documents.values())
        base = {
            k: (
                math.log(n / total),
                math.log(ALPHA) - math.log(sum(self.counts.get(k, {}).values()) + ALPHA * len(vocabulary)),
            )
            for k, n in self.documents.items()
        }
        lift: dict[str, list[tuple[str, float]]] = {}
        for label, counts in self.counts.items():
            for f, n in counts.items():
                lift.setdefault(f, []).append((label, math.log((n + ALPHA) / ALPHA)))
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_lift", {f: tuple(v) for f, v in lift.items()})

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(sorted(self.documents))

    def scores(self, feats: Iterable[str]) -> dict[str, float]:
        """Log score (up to a shared constant) of every label for these features; features the
        model never saw are ignored. (Multinomial naive Bayes with additive smoothing: each seen
        feature adds log((count + ALPHA) / (label total + ALPHA * |V|)), written as the unseen
        share plus a lift for the labels that saw it.)"""
        lifts = [self._lift[f] for f in feats if f in self._lift]
        out = {label: prior + len(lifts) * unseen for label, (prior, unseen) in self._base.items()}
        for lift in lifts:
            for label, gain in lift:
                out[label] += gain
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "trained_on": list(self.trained_on),
            "documents": dict(sorted(self.documents.items())),
            "counts": {k: dict(sorted(v.items())) for k, v in sorted(self.counts.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntentModel:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model (format {data.get('format')!r})")
        return cls(
            documents={str(k): int(v) for k, v in data["documents"].items()},
            counts={str(k): {str(f): int(n) for f, n in v.items()} for k, v in data["counts"].items()},
            trained_on=tuple(data.get("trained_on", ())),
        )


def train(examples: Iterable[tuple[Sequence[str], str]], *, trained_on: Sequence[str] = ()) -> IntentModel:
    """Learn from (tokens, label) pairs: each feature counted once per phrasing."""
    documents: Counter[str] = Counter()
    counts: dict[str, Counter[str]] = {}
    for tokens, label in examples:
        documents[label] += 1
        counts.setdefault(label, Counter()).update(features(tokens))
    if not documents:
        raise ValueError("no examples to learn from")
    return IntentModel(dict(documents), {k: dict(v) for k, v in counts.items()}, tuple(trained_on))


@cache
def default_model() -> IntentModel | None:
    """The committed model, or None when the file is absent (the check is then skipped)."""
    if not MODEL_FILE.exists():
        return None
    return IntentModel.from_dict(json.loads(MODEL_FILE.read_text(encoding="utf-8")))


# Corpus labels a reading stands for, by the reading's intent: (direct, transitive). On a
# prerequisite-only graph "builds on" is answered from prerequisites, so the builds-on labels are
# compatible with the learning-order ones of the same direction and scope.
_BEFORE_DIRECT: Final = ("prerequisites", "foundations")
_AFTER_DIRECT: Final = ("dependents", "built_by")
_COMPATIBLE: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "prerequisites": (_BEFORE_DIRECT, ("needed_before",)),
    "needed_before": (_BEFORE_DIRECT, ("needed_before",)),
    "builds_on": (_BEFORE_DIRECT, ("foundations", "needed_before")),
    "dependents": (_AFTER_DIRECT, ("comes_after",)),
    "built_by": (_AFTER_DIRECT, ("built_by", "comes_after")),
    **{k: ((k,), (k,)) for k in ("parts", "wholes", "contrasts", "related", "path")},
    **{k: ((k,), (k,)) for k in ("lessons_covering", "lessons_before", "about")},
    "neighbours": (("related",), ("related",)),
    "study_plan": (("path", "needed_before"), ("path", "needed_before")),
}
# The other way: the reading (intent, transitive) a corpus label stands for, to say what else a
# doubted question could mean (``bad_input`` stands for no reading).
LABEL_READING: Final[dict[str, tuple[str, bool]]] = {
    "prerequisites": ("prerequisites", False),
    "needed_before": ("needed_before", True),
    "dependents": ("dependents", False),
    "comes_after": ("dependents", True),
    "foundations": ("builds_on", False),
    "built_by": ("built_by", False),
    **{
        k: (k, False)
        for k in ("parts", "wholes", "contrasts", "related", "path", "lessons_covering", "about")
    },
    "lessons_before": ("lessons_before", True),
}


def compatible_labels(intent: str, *, transitive: bool, combined: bool) -> tuple[str, ...]:
    """The corpus labels a reading of ``intent`` answers; empty when the corpus has no label for
    it (then there is nothing to check against)."""
    pair = None if combined else _COMPATIBLE.get(intent)
    return () if pair is None else pair[transitive]


# Labels that need two named concepts (a path runs from one to another).
TWO_CONCEPTS: Final = frozenset({"path"})


def second_opinion(
    model: IntentModel, tokens: Sequence[str], labels: Sequence[str], *, concepts: int = 1
) -> tuple[str, float] | None:
    """The label the model prefers over every one of ``labels`` by at least :data:`DISAGREE`
    (and by how much), or None when the model does not doubt them. ``concepts``: how many
    different concepts the question names; a label the question cannot mean with that many
    (a path with one) is not a rival."""
    if not labels:
        return None
    scores = model.scores(features(tokens))
    if concepts < 2:
        scores = {k: v for k, v in scores.items() if k not in TWO_CONCEPTS}
    best = max(scores, key=lambda k: (scores[k], k))
    held = max(scores.get(label, -math.inf) for label in labels)
    margin = scores[best] - held
    if best in labels or margin < DISAGREE:
        return None
    return best, margin
