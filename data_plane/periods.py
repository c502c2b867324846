"""Valid periods, pure: the portion rule every write follows (SQL:2011 ``FOR PORTION OF``).

A period is half-open, ``[start, end)``; ``None`` is an open end (``start`` None: since always,
``end`` None: for ever). A write that is true over a portion of valid time says nothing about
the rest: a version it supersedes keeps the parts of its period the portion does not cover
(:func:`cut`), and a set of periods is asked whether it covers another (:func:`covers`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

__all__ = ["Cut", "Period", "covers", "cut", "overlaps", "uncovered"]


class Period(NamedTuple):
    """``[start, end)``; ``None`` is open (minus or plus infinity)."""

    start: datetime | None
    end: datetime | None

    def is_empty(self) -> bool:
        return self.start is not None and self.end is not None and self.end <= self.start


def overlaps(a: Period, b: Period) -> bool:
    """Do two half-open periods share an instant? (Touching ends do not.)"""
    return (a.end is None or b.start is None or b.start < a.end) and (
        b.end is None or a.start is None or a.start < b.end
    )


class Cut(NamedTuple):
    """A period cut by a portion: the part before it, the part inside it, the part after it
    (each None when empty)."""

    before: Period | None
    inside: Period | None
    after: Period | None


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    """The later of two starts (None: minus infinity)."""
    if a is None:
        return b
    return a if b is None else max(a, b)


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    """The earlier of two ends (None: plus infinity)."""
    if a is None:
        return b
    return a if b is None else min(a, b)


def _part(start: datetime | None, end: datetime | None) -> Period | None:
    p = Period(start, end)
    return None if p.is_empty() else p


def cut(period: Period, portion: Period) -> Cut:
    """Split ``period`` at ``portion``'s ends."""
    if not overlaps(period, portion):
        return Cut(period, None, None) if _before(period, portion) else Cut(None, None, period)
    before = None if portion.start is None else _part(period.start, _earlier(period.end, portion.start))
    after = None if portion.end is None else _part(_later(period.start, portion.end), period.end)
    inside = Period(_later(period.start, portion.start), _earlier(period.end, portion.end))
    return Cut(before, inside, after)


def _before(a: Period, b: Period) -> bool:
    """Does ``a`` end no later than ``b`` starts (they do not overlap)?"""
    return a.end is not None and b.start is not None and a.end <= b.start


def uncovered(period: Period, periods: Iterable[Period]) -> list[Period]:
    """The parts of ``period`` that none of ``periods`` covers, in order."""
    left: list[Period] = [period]
    for p in periods:
        nxt: list[Period] = []
        for q in left:
            c = cut(q, p)
            nxt += [part for part in (c.before, c.after) if part is not None]
        left = nxt
    return sorted(left, key=lambda p: (p.start is not None, p.start))


def covers(periods: Iterable[Period], period: Period) -> bool:
    """Do ``periods`` together cover every instant of ``period``?"""
    return not uncovered(period, periods)
