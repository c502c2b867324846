"""Walk or one hop: which expansion a question's rounds make, decided from its reading (pure).

A learning-order question ("everything before X", "what does X unlock", "how does A lead to B",
"a study plan for X", "lessons to take before X", "which first, A or B", "how are A and B
related") is answered from a *closure*, so its rounds walk
the learning relations the reading uses transitively, in one recursive statement
(``Expander.walk``, ``data_plane.walks``): towards what comes *before* for the needed-before
family, towards what comes *after* for what X unlocks. "What can I learn next, knowing K" reads a
*fringe* (``data_plane.walks.fringe``): K's closure and everything one step after it. Every other question, and every direct
("right before X", "X's prerequisites") one, keeps the one-hop expansion, whose 12 frontier
places are ranked (``ranking``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from control_plane.understanding.interpretation import Reading
from control_plane.understanding.relating import mode_of
from data_plane.relations import BUILDS_ON, PREREQUISITE
from data_plane.walks import FRINGE, NEEDED_BEFORE, UNLOCKS

__all__ = ["WALK_BUDGET", "WALK_DEPTH", "WalkOrder", "walk_order"]

# No depth bound by default: a walk then expands each concept exactly once, and its row budget
# bounds the work: a closure of up to this many concepts is gathered by one walk, and a
# question's walks gather at most this many in all (about 200 MB at the peak of a question's
# process for 16,000 concepts and 32,000 edges; docs/benchmarks.md). A closure beyond it is
# counted, not gathered.
WALK_DEPTH: Final[int | None] = None
WALK_BUDGET: Final = 20_000
_LEARNING: Final = (PREREQUISITE, BUILDS_ON)
# Intents answered from a whole closure whatever words they use.
_CLOSURE_INTENTS: Final = frozenset(
    {"path", "before_uses", "study_plan", "lessons_before", "order", "relate", "start"}
)
# Intents read from a fringe: a closure and the concepts one step after it.
_FRINGE_INTENTS: Final = frozenset({"next", "opens"})


@dataclass(frozen=True)
class WalkOrder:
    """One round's walk: the learning ``direction`` (``needed_before`` or ``unlocks``), the
    relations to follow, and its bounds (steps deep or None, walk rows; ``total``: the
    concepts all the question's walks may expand together)."""

    direction: str
    relations: tuple[str, ...]
    max_depth: int | None = WALK_DEPTH
    budget: int = WALK_BUDGET
    total: int = WALK_BUDGET


def walk_order(reading: Reading) -> WalkOrder | None:
    """The walk every round of a question with this reading makes, or None for one hop."""
    if not (reading.transitive or reading.intent in _CLOSURE_INTENTS or reading.intent in _FRINGE_INTENTS):
        return None
    relations = tuple(r for r in _LEARNING if r in reading.relations)
    if not relations:
        return None
    if reading.intent in _FRINGE_INTENTS:
        # what a learner can take up next (what X opens up): their closure and what lies one step
        # after it, with all its needs
        return WalkOrder(FRINGE, relations)
    mode = mode_of(reading)
    if mode == "after":
        return WalkOrder(UNLOCKS, relations)
    if mode == "before":
        return WalkOrder(NEEDED_BEFORE, relations)
    return None
