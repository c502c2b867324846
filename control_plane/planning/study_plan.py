"""Study plans: the needed-before closure of a concept in learning order, as data (pure).

``study_plan(subject, needs, known=..., lessons=...)`` layers what must be mastered before
``subject``:

* layer 0 holds what can be learned first (nothing it needs is in the plan); each later layer
  holds concepts all of whose needs are in earlier layers ("as early as possible" layering, the
  longest chain of needs below a concept decides its layer); the last layer holds direct needs
  of the subject. Within a layer, ids are sorted.
* concepts on a learning-order cycle (possible through builds_on, never through prerequisite
  alone) cannot be ordered: they share one layer, placed after everything they need outside it.
* "already known" concepts are left out, **and so is everything needed before them**: knowing
  a concept means having mastered what it needs (a concept needed before a known one is also
  skipped when something else in the plan needs it). Both lists are reported (``known``,
  ``skipped``) so a platform can show them.
* each concept carries the ids of the active lessons that cover it (read by the caller as of the
  question's time, ``data_plane.walks.lessons_for``).

``needs`` maps a concept to the concepts needed immediately before it (prerequisite sources into
it, builds_on targets out of it): ``control_plane.learning_order.needs_from_edges`` builds it from
evidence edges, and its ``layers`` does the ordering.
:func:`asks_for_study_plan` and :func:`known_concepts` read the two things a question may say:
that it wants a plan or an order, and which concepts the learner already knows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.learning_order import closure, layers
from control_plane.understanding.names import normalise

__all__ = [
    "PlanStep",
    "StudyPlan",
    "asks_for_study_plan",
    "known_concepts",
    "study_plan",
]

_PLAN_CUES: Final = tuple(
    normalise(p)
    for p in (
        "study plan",
        "learning plan",
        "learning path for",
        "roadmap",
        "in what order",
        "in which order",
        "what order",
        "which order",
        "learning order",
        "order should i learn",
        "order to learn",
    )
)
_KNOWN_CUES: Final = tuple(
    normalise(p)
    for p in ("already know", "i know", "i've learned", "i have learned", "familiar with", "already learned")
)


def _find(tokens: tuple[str, ...], phrase: tuple[str, ...]) -> int:
    n = len(phrase)
    for i in range(len(tokens) - n + 1):
        if tokens[i : i + n] == phrase:
            return i
    return -1


def asks_for_study_plan(question: str) -> bool:
    """Does the question ask for a plan or an order of learning?"""
    toks = normalise(question)
    return any(_find(toks, cue) >= 0 for cue in _PLAN_CUES)


def known_concepts(question: str, matches: Iterable[tuple[str, int]]) -> tuple[str, ...]:
    """Concepts the learner says they already know: those named (``(concept id, token
    position)`` matches) after the first "already know" / "familiar with" cue, in order."""
    toks = normalise(question)
    cues = [i for i in (_find(toks, cue) for cue in _KNOWN_CUES) if i >= 0]
    if not cues:
        return ()
    at = min(cues)
    return tuple(dict.fromkeys(cid for cid, pos in sorted(matches, key=lambda m: m[1]) if pos > at))


@dataclass(frozen=True)
class PlanStep:
    concept_id: str
    lesson_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"concept_id": self.concept_id, "lesson_ids": list(self.lesson_ids)}


@dataclass(frozen=True)
class StudyPlan:
    """Ordered layers of what to learn before ``subject`` (module docstring). ``complete``:
    the closure it was built from was fully explored."""

    subject: str
    layers: tuple[tuple[PlanStep, ...], ...]
    known: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    complete: bool = True
    concepts: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "concepts", tuple(s.concept_id for layer in self.layers for s in layer))

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "layers": [[s.to_dict() for s in layer] for layer in self.layers],
            "known": list(self.known),
            "skipped": list(self.skipped),
            "complete": self.complete,
        }

    def text(self, name: Mapping[str, str]) -> str:
        """The plan as one sentence per layer, for the answer text."""
        if not self.layers:
            return f"Study plan for {name.get(self.subject, self.subject)}: nothing left to learn first."
        parts = [
            f"{i}) " + ", ".join(name.get(s.concept_id, s.concept_id) for s in layer)
            for i, layer in enumerate(self.layers, start=1)
        ]
        return f"Study plan for {name.get(self.subject, self.subject)}, in order: " + "; ".join(parts) + "."


def study_plan(
    subject: str,
    needs: Mapping[str, Collection[str]],
    *,
    known: Collection[str] = (),
    lessons: Mapping[str, Collection[str]] | None = None,
    complete: bool = True,
) -> StudyPlan:
    """The layered needed-before closure of ``subject`` (module docstring)."""
    before = closure([subject], needs) - {subject}
    known_set = set(known) - {subject}
    skipped = (known_set | closure(known_set, needs)) & before
    lessons = lessons or {}
    ordered = tuple(
        tuple(PlanStep(c, tuple(sorted(lessons.get(c, ())))) for c in layer)
        for layer in layers(before - skipped, needs)
    )
    return StudyPlan(
        subject,
        ordered,
        known=tuple(sorted(known_set)),
        skipped=tuple(sorted(skipped)),
        complete=complete,
    )
