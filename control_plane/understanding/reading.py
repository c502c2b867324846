"""The reading of a question: what the reader hands the planner (frozen values, no grammar).

``Reading`` says how a question was understood: its intent and form, the concepts it is about
and their roles, direction, scope, the relations the answer is computed from, the time it names,
and how sure the reading is. ``Mention`` is a concept named in the question (token span).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.understanding.names import NameIndex
from control_plane.understanding.text import Text
from control_plane.understanding.timewords import TimePoint
from data_plane.relations import BUILDS_ON, CONTRASTS_WITH, PART_OF, PREREQUISITE, RELATED, RELATIONS

SURE: Final = 0.8
# The key of the relation counts (``reader.Vocabulary.relation_counts``) that says how many lesson
# links hold: a graph with none has no lessons to answer with.
LESSONS: Final = "lesson links"
MAX_READ_CHARS: Final = 2000

LEARNING: Final = (PREREQUISITE, BUILDS_ON)


INTENT_RELATIONS: Final[dict[str, tuple[str, ...]]] = {
    "prerequisites": (PREREQUISITE,),
    "needed_before": LEARNING,
    "dependents": LEARNING,
    "builds_on": (BUILDS_ON,),
    "built_by": (BUILDS_ON,),
    "parts": (PART_OF,),
    "wholes": (PART_OF,),
    "contrasts": (CONTRASTS_WITH,),
    "related": (RELATED,),
    "neighbours": RELATIONS,
    "path": LEARNING,
    "before_uses": LEARNING,
    "lessons_before": LEARNING,
    "study_plan": LEARNING,
    "order": LEARNING,
    "relate": LEARNING,
    "next": LEARNING,
    "opens": LEARNING,
    "start": LEARNING,
    "lessons_covering": (),
    "about": (),
    "unknown": (),
}
# The learning direction each directional intent answers in.
DIRECTION: Final[dict[str, str]] = {
    "prerequisites": "before",
    "needed_before": "before",
    "builds_on": "before",
    "lessons_before": "before",
    "study_plan": "before",
    "before_uses": "before",
    "dependents": "after",
    "built_by": "after",
    "path": "forward",
    "order": "before",
    "relate": "before",
    "next": "before",
    "opens": "after",
    "start": "before",
}
# Intents whose answer reads the known concepts' neighbourhoods both ways (what they rest on and
# what they open), whichever direction the answer is stated in.
READS_BOTH_WAYS: Final = frozenset({"next", "opens"})
# The forms a question may take around an intent: "" asks for the intent's answer (a list, a
# path, a plan); "yes_no" asks whether the candidate is in it ("is X a prerequisite for Y?");
# "count" asks how many ("how many prerequisites does Y have?"); "why" asks for the chain that
# puts the candidate in it, with the reasons on its edges ("why do I need X for Y?"); "ready" asks
# whether what the learner knows covers the subject's answer, and what it still lacks ("can I take
# Y if I've done X?").
FORMS: Final = ("", "yes_no", "count", "why", "ready")


@dataclass(frozen=True)
class Mention:
    """A concept named in the question: normalised token span ``[start, end)``."""

    concept_id: str
    start: int
    end: int
    name: str = ""


@dataclass(frozen=True)
class Subject:
    """A concept the reading is about and its role: ``subject`` (what is asked about),
    ``target`` (a path's end, a plan's goal), ``other`` (the second concept of a combined
    question), ``candidate`` (what a yes/no or why question asks about the subject: X in "is X
    needed for Y?"), ``known`` (already learned), ``excluded`` ("but not Y")."""

    concept_id: str
    role: str
    words: str

    def to_dict(self) -> dict[str, str]:
        return {"concept_id": self.concept_id, "role": self.role, "words": self.words}


@dataclass(frozen=True)
class Reading:
    """How the question was read (module docstring). ``relations`` are the relations the answer
    is computed from on this graph; ``asked_relations`` what the words asked for."""

    question: str
    intent: str
    subjects: tuple[Subject, ...] = ()
    direction: str = ""  # "before" | "after" | "forward" | ""
    transitive: bool = False
    asked_relations: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    relation_note: str = ""
    relations_missing: bool = False  # the asked relation has no edge in force in this graph
    combine: str = ""  # "" | "both" | "either" | "except"
    hops: int = 1
    exact: bool = False
    time: TimePoint | None = None
    sureness: float = 0.0
    read_by: str = "grammar"  # "grammar" | "fallback" | "none"
    cue: str = ""
    alternatives: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    problem: str | None = None
    doubt: str = ""  # what the learnt second reading (intent_model) finds more likely
    names: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # Where the question's own words put each named concept in learning order, whatever the
    # reading: (id, "dependent" | "foundation", strength: 3 a preposition, 2 a noun, 1 a verb)
    # by the grammar's role rules. A model's reading must not contradict the strong ones.
    placed: tuple[tuple[str, str, int], ...] = field(default=(), compare=False)
    # Parts of the question the reading sets aside (an aside that asks something the graph does
    # not record, in a sentence of its own), as the learner wrote them: the answer says so.
    set_aside: tuple[str, ...] = ()
    # The learner's own words beside the question that the reading leaves as their background
    # ("I'm a DSC major", "in my bootcamp", "I was wondering"), as written (``accounting``).
    background: tuple[str, ...] = ()
    form: str = ""  # one of FORMS
    # (id, name) of known concepts close to a name the question wrote that matches none
    did_you_mean: tuple[tuple[str, str], ...] = ()
    # Other intents the words allow as well: the question is answered only where each of them
    # gives the same answer over the evidence (``semantics.meaning``), else abstained on with
    # both rewrites. ("Once I pass X, which courses am I then eligible for?": what X itself opens,
    # or everything the learner can take next.)
    agree: tuple[str, ...] = ()

    @property
    def sure(self) -> bool:
        return self.problem is None and self.sureness >= SURE

    def ids(self, *roles: str) -> tuple[str, ...]:
        return tuple(s.concept_id for s in self.subjects if not roles or s.role in roles)

    @property
    def subject(self) -> str | None:
        found = self.ids("subject") or self.ids("target")
        return found[0] if found else None

    @property
    def other(self) -> str | None:
        found = self.ids("target") if self.intent == "path" else self.ids("other", "excluded")
        return found[0] if found else None

    @property
    def known(self) -> tuple[str, ...]:
        return self.ids("known")

    @property
    def candidate(self) -> str | None:
        """X in "is X needed for Y?" / "why do I need X for Y?" (the subject is Y)."""
        found = self.ids("candidate")
        return found[0] if found else None

    def _words(self, concept_id: str | None) -> str:
        for s in self.subjects:
            if s.concept_id == concept_id:
                return s.words
        return concept_id or "?"

    def describe(self) -> str:
        """One line: what the question was read as ("concepts that have RAG as a prerequisite")."""
        if self.problem:
            return self.problem
        text = self._describe_intent()
        if self.form == "yes_no":
            text = f"whether {self._words(self.candidate)} is among {text}"
        elif self.form == "ready":
            knew = ", ".join(self._words(k) for k in self.known) or "nothing"
            text = f"whether what is known ({knew}) covers {text}"
        elif self.form == "why":
            text = f"why {self._words(self.candidate)} is among {text}"
        elif self.form == "count":
            text = f"how many: {text}"
        if self.combine == "except":
            text += f", except {self._words(self.other)}"
        if self.known and self.intent != "next" and self.form != "ready":
            text += " (already known: " + ", ".join(self._words(k) for k in self.known) + ")"
        if self.time is not None:
            text += f", as of {self.time.valid_at.date().isoformat()} (from {self.time.words!r})"
        if self.relation_note:
            text += f"; {self.relation_note}"
        return text

    def _describe_intent(self) -> str:
        x, y = self._words(self.subject), self._words(self.other)
        if self.combine == "both":
            x = f"both {x} and {y}"
        elif self.combine == "either":
            x = f"{x} and {y}"
        how = "transitively" if self.transitive else "directly"
        text: dict[str, str] = {
            "prerequisites": f"the direct prerequisites of {x}",
            "needed_before": f"everything needed before {x}"
            if self.transitive
            else f"what comes directly before {x}",
            "dependents": (
                f"concepts that have {x} as a prerequisite"
                if self.asked_relations == (PREREQUISITE,) and not self.transitive
                else f"everything that comes after {x}"
                if self.transitive
                else f"what comes directly after {x}"
            ),
            "builds_on": f"what {x} builds on" + (" (transitively)" if self.transitive else ""),
            "built_by": f"what builds on {x}" + (" (transitively)" if self.transitive else ""),
            "parts": f"the parts of {x}",
            "wholes": f"what {x} is part of",
            "contrasts": f"what {x} contrasts with"
            if not self.other or self.combine
            else f"how {x} contrasts with {y}",
            "related": f"what {x} is related to",
            "neighbours": f"concepts {'exactly' if self.exact else 'within'} {self.hops} hop{'s' if self.hops > 1 else ''} of {x}",
            "path": f"the learning path from {x} to {y}",
            "before_uses": f"concepts needed before {x} that {y} builds on",
            "lessons_covering": f"lessons that cover {x}",
            "lessons_before": f"lessons to take before {x} ({how})",
            "study_plan": f"a study plan for {x}",
            "about": f"what {x} is",
            "order": f"which comes first in learning order, {x} or {y}",
            "relate": f"how {x} and {y} are related in learning order",
            "next": "what can be learned next, knowing " + " and ".join(self._words(k) for k in self.known),
            "opens": f"what knowing {x} opens up (ready now because of it)",
            "start": f"where to start for {x} (what it rests on that needs nothing first)",
            "unknown": "no known concept is named",
        }
        return text.get(self.intent, self.intent)

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "form": self.form,
            "read_as": self.describe() if self.sure or self.problem else f"{self.describe()} (unsure)",
            "subjects": [s.to_dict() for s in self.subjects],
            "direction": self.direction,
            "transitive": self.transitive,
            "asked_relations": list(self.asked_relations),
            "relations": list(self.relations),
            "relation_note": self.relation_note,
            "combine": self.combine,
            "hops": self.hops,
            "exact": self.exact,
            "time": self.time.to_dict() if self.time else None,
            "sureness": self.sureness,
            "sure": self.sure,
            "read_by": self.read_by,
            "cue": self.cue,
            "alternatives": list(self.alternatives),
            "agree": list(self.agree),
            "suggestions": list(self.suggestions),
            "problem": self.problem,
            "doubt": self.doubt,
            "did_you_mean": [{"id": cid, "name": name} for cid, name in self.did_you_mean],
            "set_aside": list(self.set_aside),
            "background": list(self.background),
        }


def mentions_in(question: str | Text, index: NameIndex, ids: Iterable[str] | None = None) -> list[Mention]:
    """Where the concepts ``ids`` (all, by default) are named in ``question`` (outermost spans)."""
    wanted = None if ids is None else set(ids)
    found = index.matches(question)
    kept = [m for m in found if not any(m.inside(o) for o in found)]
    out = [Mention(m.concept_id, m.start, m.end) for m in kept if wanted is None or m.concept_id in wanted]
    return sorted(out, key=lambda m: (m.start, m.concept_id))
