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
Whether a question asks for a plan, and which concepts the learner already knows, comes from its
reading (``control_plane.understanding.interpretation``: intent ``study_plan``, role ``known``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from control_plane.learning_order import closure, layers

__all__ = ["PlanStep", "StudyPlan", "study_plan"]


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
