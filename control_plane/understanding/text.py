"""A question's text, tokenised once: what every rule of the reader reads.

The reader (``reader.understand``) builds one :class:`Text` per question; the name index finds
names in it, the time words are read from it, and the parse (``analysis.Parse``) and every
grammar rule read its words and their character spans from it. No rule tokenises the raw text
again (``tests/test_parse_once.py`` counts it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from data_plane.names import Token, tokenize

__all__ = ["Text"]


@dataclass(frozen=True, eq=False)
class Text:
    """``raw``, and its words (normalised, ``data_plane.names.tokenize``) with where each stands."""

    raw: str
    tokens: tuple[Token, ...]

    @classmethod
    def of(cls, raw: str | Text) -> Text:
        """The text of ``raw`` (itself when it is one already)."""
        return raw if isinstance(raw, Text) else cls(raw, tokenize(raw))

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The normalised words (``data_plane.names.normalise``)."""
        return tuple(t.text for t in self.tokens)

    @cached_property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Where each word stands in ``raw`` (characters ``[start, end)``), in order."""
        return tuple((t.start, t.end) for t in self.tokens)

    def surface(self, start: int, end: int) -> str:
        """The words ``[start, end)`` as written ("" for an empty or out-of-range span); a bracket
        the words open is closed with them ("Motion (physics)", not "Motion (physics")."""
        spans, raw = self.spans, self.raw
        if start >= len(spans) or end > len(spans) or start >= end:
            return ""
        lo, hi = spans[start][0], spans[end - 1][1]
        while raw.count("(", lo, hi) > raw.count(")", lo, hi) and raw[hi : hi + 1] == ")":
            hi += 1
        return raw[lo:hi]

    def gap(self, before: int, after: int) -> str:
        """The characters between the end of word ``before`` and the start of word ``after``."""
        return self.raw[self.spans[before][1] : self.spans[after][0]]
