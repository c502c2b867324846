"""Test doubles that tests, evals and benchmarks share: a manual clock and a graph builder.

Like ``structlog.testing``, this ships with the package so that evals and downstream users can
build small graphs and control time exactly without reaching into private code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from data_plane.gateway import Write, WriteGateway
from data_plane.records import Grounding

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass
class ManualClock:
    """A clock that only moves when told to: ``tick()`` advances it by ``step`` after every read.

    With ``step`` zero it stands still. Every read returns an aware UTC datetime.
    """

    now: datetime = EPOCH
    step: timedelta = field(default_factory=lambda: timedelta(seconds=1))

    def __call__(self) -> datetime:
        current = self.now
        self.now = self.now + self.step
        return current

    def set(self, when: datetime) -> None:
        self.now = when

    def advance(self, delta: timedelta) -> datetime:
        self.now = self.now + delta
        return self.now


def grounding(reason: str = "test fixture", *, confidence: float = 0.9, source: str = "tests") -> Grounding:
    """A valid grounding record for fixtures."""
    return Grounding(confidence=confidence, reason=reason, source=source, evidence={"fixture": reason})


def build_graph(
    gateway: WriteGateway,
    concepts: Iterable[str | tuple[str, str] | tuple[str, str, Iterable[str]]],
    edges: Iterable[tuple[str, str, str] | tuple[str, str, str, float]] = (),
    *,
    valid_at: datetime | None = None,
) -> None:
    """Write a small graph in one batch.

    ``concepts``: ids, ``(id, name)`` or ``(id, name, aliases)``; a bare id gets its id as name.
    ``edges``: ``(source, target, relation)`` or with a confidence as fourth item.
    """
    writes: list[Write] = []
    for c in concepts:
        aliases: Iterable[str]
        if isinstance(c, str):
            cid, name, aliases = c, c.replace("_", " "), ()
        elif len(c) == 2:
            cid, name, aliases = c[0], c[1], ()
        else:
            cid, name, aliases = c
        writes.append(
            Write.concept(
                cid,
                grounding=grounding(f"concept {cid}"),
                name=name,
                aliases=list(aliases),
                summary=f"{name}.",
                valid_at=valid_at,
            )
        )
    for e in edges:
        conf = e[3] if len(e) == 4 else 0.9
        writes.append(
            Write.edge(
                e[0],
                e[1],
                e[2],
                grounding=grounding(f"edge {e[0]} {e[2]} {e[1]}", confidence=conf),
                valid_at=valid_at,
            )
        )
    gateway.apply(writes)
