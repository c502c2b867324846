"""A second, learnt opinion on what a question asks, used to check the grammar's reading.

The grammar (:mod:`.interpretation`) reads a question by its structure. Where a writer's phrasing
falls outside what it knows, it can read a wrong intent with full confidence, which the product
must never turn into an answer. This module is an independent check: a multinomial logistic
regression over word and word-pair features (concept names masked as one token) of which *corpus
intent* a phrasing asks, learnt from the labelled phrasing corpus (``python -m
evals.intent_training`` writes ``intent_model.json.gz`` beside this file; the training files are named
inside it).

Why logistic regression and not naive Bayes (which this was until 2026-11-26): a learner's phrase
gives several overlapping features ("directly", "or", "indirectly", "directly or", ...); naive Bayes
counts each as independent evidence, so one phrase common in another intent's phrasings outvoted
the word order that carries the direction ("every topic X depends on, directly or indirectly" was
doubted as "everything after X" at log-odds 8-19, even after learning that very phrasing). A
discriminative model weighs the features jointly. Measured leave-one-split-out on the phrasing
corpus (``python -m evals.second_reading templates``; docs/evals.md, "The learnt check").

It answers nothing. :func:`second_opinion` compares its scores with the grammar's reading: when the
model finds another intent far more likely than every intent the reading is compatible with (a
log-odds margin of at least :data:`DISAGREE`), the reading is made unsure, and the loop abstains
saying what else the question could mean. Readings the corpus has no label for (combined
questions, neighbourhoods wider than one hop) are not checked.

Pure: features in, scores out; the model file is read once, lazily. Training needs numpy and scipy
(the ``evals`` extra), imported only by :func:`train`.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    "dump",
    "features",
    "load",
    "phrasing_tokens",
    "question_tokens",
    "rival",
    "second_opinion",
    "train",
]

# The token a concept name becomes (both in training phrasings and in questions).
NAME: Final = "qqx"
# Log-odds by which another intent must beat the reading's for the reading to be doubted, and the
# inverse strength of the L2 penalty (|W|^2 / (2 C n) per phrasing): chosen together,
# leave-one-split-out on the phrasing corpus (every split but test, read by the grammar of this
# code; ``python -m evals.second_reading templates``), on the evidence (scores without the bias).
# Of 6,031 right readings this pair withholds 18 and of 20 wrong ones it catches 18; with the bias
# it withheld 30 (and doubted a bare "RAG?" as bad input), and naive Bayes at its threshold of 5.0
# withheld 48 of 5,845 and caught 16 (docs/evals.md, "The learnt check").
DISAGREE: Final = 3.0
REGULARISATION: Final = 30.0
# Weights are stored rounded to this many decimals, as canonical JSON, gzip-compressed (8,000
# features x 15 labels are ~870 kB as text, ~160 kB compressed): :func:`dump` and :func:`load`.
DECIMALS: Final = 3
MODEL_FILE: Final = Path(__file__).with_name("intent_model.json.gz")
FORMAT: Final = "kg-intent-model/2"
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
    """Per label a bias, per feature one weight per label (in :attr:`labels` order), and how many
    phrasings of each label it was learnt from."""

    labels: tuple[str, ...]
    bias: tuple[float, ...]
    weights: Mapping[str, tuple[float, ...]]
    documents: Mapping[str, int]
    trained_on: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.labels)
        if len(self.bias) != n or any(len(w) != n for w in self.weights.values()):
            raise ValueError(f"every weight row needs one weight per label ({n})")

    def scores(self, feats: Iterable[str]) -> dict[str, float]:
        """Log-odds score (up to a shared constant) of every label for these features: the bias
        plus the weights of the features the model has seen; unseen features add nothing. They are
        added in sorted order: a set's order changes with the process's hash seed, and a float sum
        in another order can round the other way (a doubt's "log-odds 3.7" or "3.8")."""
        total = list(self.bias)
        for f in sorted(feats):
            row = self.weights.get(f)
            if row is not None:
                total = [a + b for a, b in zip(total, row, strict=True)]
        return dict(zip(self.labels, total, strict=True))

    def evidence(self, feats: Iterable[str]) -> dict[str, float]:
        """:meth:`scores` without the bias: what the question's own words say. The check vetoes
        on this, not on a label's prior: phrasings without a name are mostly ``bad_input``, so its
        bias is high, and a bare "RAG?" (one feature) would be doubted as bad input by the prior
        alone."""
        total = self.scores(feats)
        return {label: total[label] - b for label, b in zip(self.labels, self.bias, strict=True)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "trained_on": list(self.trained_on),
            "labels": list(self.labels),
            "documents": dict(sorted(self.documents.items())),
            "bias": list(self.bias),
            "weights": {f: list(w) for f, w in sorted(self.weights.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntentModel:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model (format {data.get('format')!r})")
        return cls(
            labels=tuple(str(k) for k in data["labels"]),
            bias=tuple(float(b) for b in data["bias"]),
            weights={str(f): tuple(float(x) for x in w) for f, w in data["weights"].items()},
            documents={str(k): int(v) for k, v in data["documents"].items()},
            trained_on=tuple(data.get("trained_on", ())),
        )


def train(
    examples: Iterable[tuple[Sequence[str], str]],
    *,
    trained_on: Sequence[str] = (),
    regularisation: float = REGULARISATION,
) -> IntentModel:
    """Learn from (tokens, label) pairs: softmax regression over binary features (each feature
    counted once per phrasing), L2-penalised, minimised by L-BFGS to its optimum (the objective is
    strictly convex, so the optimum is unique and the model reproducible whatever the machine's
    floating point does along the way)."""
    import numpy as np
    from scipy.optimize import minimize

    pairs = [(sorted(features(tokens)), label) for tokens, label in examples]
    if not pairs:
        raise ValueError("no examples to learn from")
    names = sorted({f for feats, _ in pairs for f in feats})
    vocabulary = {f: i for i, f in enumerate(names)}
    labels = tuple(sorted({label for _, label in pairs}))
    n, k, v = len(pairs), len(labels), len(names)
    column = np.asarray([vocabulary[f] for feats, _ in pairs for f in feats], dtype=np.int64)
    lengths = np.asarray([len(feats) for feats, _ in pairs], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    owner = np.repeat(np.arange(n), lengths)
    target = np.asarray([labels.index(label) for _, label in pairs])
    onehot = np.zeros((n, k))
    onehot[np.arange(n), target] = 1.0

    def loss(flat: Any) -> tuple[float, Any]:
        weights, bias = flat[: v * k].reshape(v, k), flat[v * k :]
        z = np.add.reduceat(weights[column], starts, axis=0) + bias
        z -= z.max(axis=1, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        value = -log_p[np.arange(n), target].sum() / n + (weights**2).sum() / (2 * regularisation * n)
        g = (np.exp(log_p) - onehot) / n
        grad_w = np.zeros_like(weights)
        np.add.at(grad_w, column, g[owner])
        grad_w += weights / (regularisation * n)
        return float(value), np.concatenate([grad_w.ravel(), g.sum(axis=0)])

    found = minimize(
        loss, np.zeros(v * k + k), jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-9}
    )
    weights, bias = found.x[: v * k].reshape(v, k), found.x[v * k :]
    bias = bias - bias.mean()  # scores are log-odds up to a shared constant
    return IntentModel(
        labels=labels,
        bias=tuple(round(float(b), DECIMALS) for b in bias),
        weights={f: tuple(round(float(x), DECIMALS) for x in weights[i]) for i, f in enumerate(names)},
        documents=dict(Counter(label for _, label in pairs)),
        trained_on=tuple(trained_on),
    )


def dump(model: IntentModel) -> bytes:
    """The model file's bytes: its canonical JSON (sorted features, rounded weights), gzip-compressed
    with no time stamp or file name in the header, so the same model gives the same bytes."""
    text = json.dumps(model.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def load(path: Path) -> IntentModel:
    """The model stored at ``path`` by :func:`dump`."""
    return IntentModel.from_dict(json.loads(gzip.decompress(path.read_bytes()).decode("utf-8")))


@cache
def default_model() -> IntentModel | None:
    """The committed model, or None when the file is absent (the check is then skipped)."""
    if not MODEL_FILE.exists():
        return None
    return load(MODEL_FILE)


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


def rival(
    model: Any, tokens: Sequence[str], labels: Sequence[str], *, concepts: int = 1
) -> tuple[str, float] | None:
    """The label the ``model`` (anything with ``evidence``) finds most likely, and by how much it
    beats the best of ``labels``, when it is none of them; None when it is one of them or there
    are no labels. ``concepts``: how many different concepts the question names; a label the
    question cannot mean with that many (a path with one) is not a rival."""
    if not labels:
        return None
    scores = model.evidence(features(tokens))
    if concepts < 2:
        scores = {k: v for k, v in scores.items() if k not in TWO_CONCEPTS}
    best = max(scores, key=lambda k: (scores[k], k))
    if best in labels:
        return None
    return best, scores[best] - max(scores.get(label, -math.inf) for label in labels)


def second_opinion(
    model: IntentModel, tokens: Sequence[str], labels: Sequence[str], *, concepts: int = 1
) -> tuple[str, float] | None:
    """The :func:`rival` of ``labels`` when it beats them by at least :data:`DISAGREE`, or None
    when the model does not doubt them."""
    found = rival(model, tokens, labels, concepts=concepts)
    return found if found is not None and found[1] >= DISAGREE else None
