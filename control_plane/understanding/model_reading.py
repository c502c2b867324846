"""A reading the model proposes, checked before it is used: pure, no I/O.

When the grammar cannot read a question with confidence and DeepSeek is configured, the planner
asks the model once to read it into the reading's own structure (``synthesizers.prompts.
READING_PROMPT``). What comes back is untrusted: :func:`checked_reading` turns it into a
:class:`Reading` only when the intent and form are ones the reader supports, every role is one a
reading has, the roles fit the intent (a path has a subject and a target, a check a subject and a
candidate, ...), and every concept id is one the question names (the name index found it); the
reading is then marked ``read_by="model"``. Anything else gives an unsure reading whose problem
says what was wrong, so the question is abstained on as before.

**Roles are checked against the question's own words.** The grammar places a concept in learning
order wherever a cue word governs it ("before X", "X's prerequisites", "what comes after X", "I
know X": ``Reading.placed``), even when it cannot read the whole question. A model's reading is
refused when a role it gives contradicts such a placement (what the question puts after, the model
puts first), and a reading that orders two concepts against each other (a check, a why, a path)
is refused unless the question's words place at least one of them: with neither placed, a reading
with the two swapped would be as likely, and a swapped reading answered is a wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from control_plane.understanding.grammar import _map_relations
from control_plane.understanding.lexicon import DEP, FOUND
from control_plane.understanding.reading import DIRECTION, FORMS, INTENT_RELATIONS, Reading, Subject
from control_plane.understanding.timewords import TimePoint

__all__ = ["MODEL_INTENTS", "MODEL_SURENESS", "checked_reading"]

# Intents a model may read a question as (the ones the answer side has an answer for).
MODEL_INTENTS: Final = frozenset(
    {"needed_before", "prerequisites", "dependents", "builds_on", "built_by", "parts", "wholes",
     "contrasts", "related", "path", "order", "relate", "next", "about"}
)  # fmt: skip
ROLES: Final = frozenset({"subject", "target", "other", "candidate", "known", "excluded"})
# The roles each intent or form needs at least (the rest may add known or excluded concepts).
_NEEDS: Final[dict[str, frozenset[str]]] = {
    "path": frozenset({"subject", "target"}),
    "order": frozenset({"subject", "other"}),
    "relate": frozenset({"subject", "other"}),
    "next": frozenset({"known"}),
    "yes_no": frozenset({"subject", "candidate"}),
    "why": frozenset({"subject", "candidate"}),
}
# A model's reading is used, and said to be the model's, but below the grammar's 0.9-0.95.
MODEL_SURENESS: Final = 0.85


def checked_reading(
    payload: Mapping[str, Any] | str,
    *,
    question: str,
    named: Mapping[str, str],
    relations: Mapping[str, int] | None,
    time: TimePoint | None = None,
    placed: Sequence[tuple[str, str, int]] = (),
) -> Reading:
    """The model's reading of ``question`` if it passes every check (module docstring), else an
    unsure reading whose problem says why. ``payload``: the parsed reading, or the reason it could
    not be parsed; ``named``: id -> name of the concepts the question names; ``placed``: where the
    question's words put them (the grammar's ``Reading.placed``)."""
    why = (
        payload if isinstance(payload, str) else _fault(payload, named) or _misplaced(payload, named, placed)
    )
    if why is not None:
        return Reading(
            question, "unknown", problem=f"the model's reading was not usable: {why}", read_by="model"
        )
    assert not isinstance(payload, str)
    intent, form = payload["intent"], payload["form"]
    subjects = tuple(Subject(s["concept_id"], s["role"], named[s["concept_id"]]) for s in payload["subjects"])
    asked = INTENT_RELATIONS.get(intent, ())
    rels, note, missing = _map_relations(asked, relations)
    return Reading(
        question=question,
        intent=intent,
        subjects=subjects,
        direction=DIRECTION.get(intent, ""),
        transitive=bool(payload["transitive"]) or intent in ("path", "order", "relate", "next"),
        asked_relations=asked,
        relations=rels,
        relation_note=note,
        relations_missing=missing,
        time=time,
        sureness=MODEL_SURENESS,
        read_by="model",
        cue="model",
        form=form,
    )


def _fault(payload: Mapping[str, Any], named: Mapping[str, str]) -> str | None:
    """What makes ``payload`` unusable, or None."""
    if not payload["understood"]:
        return "the model did not understand the question either"
    intent, form = payload["intent"], payload["form"]
    if intent not in MODEL_INTENTS:
        return f"intent {intent!r} is not one the reader answers"
    if form not in FORMS or (form == "why" and intent != "needed_before"):
        return f"form {form!r} does not fit intent {intent!r}"
    roles: dict[str, list[str]] = {}
    for s in payload["subjects"]:
        if s["concept_id"] not in named:
            return f"{s['concept_id']!r} is not a concept the question names"
        if s["role"] not in ROLES:
            return f"role {s['role']!r} is not a reading's role"
        roles.setdefault(s["role"], []).append(s["concept_id"])
    if any(len(ids) > 1 for role, ids in roles.items() if role not in ("known", "excluded")):
        return "a role is given to more than one concept"
    need = _NEEDS.get(form) or _NEEDS.get(intent) or frozenset({"subject"})
    if not need <= roles.keys():
        return f"{intent} {form or ''} needs the roles {', '.join(sorted(need))}".replace("  ", " ")
    return None


def _position(intent: str, form: str, role: str) -> str | None:
    """Where a role of a reading puts its concept in learning order: the dependent (what comes
    later) or the foundation; None where the reading orders nothing (which first, how related)."""
    if role == "known":
        return FOUND
    direction = DIRECTION.get(intent, "")
    if intent == "path":
        return {"subject": FOUND, "target": DEP}.get(role)
    if intent in ("order", "relate") or direction not in ("before", "after"):
        return None
    later, earlier = (DEP, FOUND) if direction == "before" else (FOUND, DEP)
    return {"subject": later, "other": later, "candidate": earlier}.get(role)


def _misplaced(
    payload: Mapping[str, Any], named: Mapping[str, str], placed: Sequence[tuple[str, str, int]]
) -> str | None:
    """Why the reading's roles disagree with the question's words (module docstring), or None."""
    intent, form = payload["intent"], payload["form"]
    said = {cid: position for cid, position, _ in placed}
    ordered = []
    for s in payload["subjects"]:
        position = _position(intent, form, s["role"])
        if position is None:
            continue
        ordered.append(s["concept_id"])
        words = said.get(s["concept_id"])
        if words is not None and words != position:
            where = "before" if words == FOUND else "after"
            return (
                f"it reads {named[s['concept_id']]!r} as the {s['role']}, but the question's words put it "
                f"{where} the other"
            )
    two = len(set(ordered)) >= 2 and (form in ("yes_no", "why") or intent == "path")
    if two and not set(ordered) & said.keys():
        return "the question's words do not say which of its two concepts comes first, and the reading depends on it"
    return None
