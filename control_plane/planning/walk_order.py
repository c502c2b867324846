"""Walk or one hop: which expansion a round makes, decided from the focus (pure).

A learning-order question ("everything before X", "how does A lead to B", "what does X unlock",
"a study plan for X") is answered from a *closure*, so its rounds walk the focused relations
transitively in one recursive statement (``Expander.walk``, ``data_plane.walks``). Every other
question keeps the one-hop expansion, whose 12 frontier places are ranked (``ranking``).

:func:`walk_order` is the one place that decision is made. Today it reads the focus's relation
types (``ranking.relations_named`` on the question, or the synthesizer's ``next_focus``): a focus
naming ``prerequisite`` is a learning-order one, walked towards what comes *before* over the
learning relations it names, and so is a request for a study plan; "unlock"/"enable" cues walk
the other way (what X unlocks). Question understanding can
replace it by building a :class:`WalkOrder` from its reading (intent and direction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from control_plane.planning.study_plan import asks_for_study_plan
from control_plane.synthesizers.base import Focus
from control_plane.understanding.names import normalise
from data_plane.relations import BUILDS_ON, PREREQUISITE
from data_plane.walks import NEEDED_BEFORE, UNLOCKS

__all__ = ["WALK_BUDGET", "WALK_DEPTH", "WalkOrder", "walk_order"]

# No depth bound by default: a walk then expands each concept exactly once, and its row budget
# bounds the work.
WALK_DEPTH: Final[int | None] = None
WALK_BUDGET: Final = 1000
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)
_UNLOCK_CUES: Final = frozenset({"unlock", "unlocked", "enable", "enabled"})


@dataclass(frozen=True)
class WalkOrder:
    """One round's walk: the learning ``direction`` (``needed_before`` or ``unlocks``), the
    relations to follow, and its bounds (steps deep or None, walk rows)."""

    direction: str
    relations: tuple[str, ...]
    max_depth: int | None = WALK_DEPTH
    budget: int = WALK_BUDGET


def walk_order(focus: Focus, question: str = "") -> WalkOrder | None:
    """The walk a round with this focus makes, or None for the one-hop expansion."""
    relations = tuple(r for r in _LEARNING if r in focus.relations) or _LEARNING
    if _UNLOCK_CUES & set(normalise(question)):
        return WalkOrder(UNLOCKS, relations)
    if PREREQUISITE in focus.relations or asks_for_study_plan(question):
        return WalkOrder(NEEDED_BEFORE, relations)
    return None
