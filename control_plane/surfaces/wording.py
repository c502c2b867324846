"""How the surfaces say a count in words: "1 edge", "2 edges", "no model calls". Pure; imports
nothing of the project, so the command line's quick paths can use it."""

from __future__ import annotations

__all__ = ["calls_text", "counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``plural``: an irregular one)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def calls_text(n: int) -> str:
    """Model calls as the answer's meta line says them: "no model calls", "1 model call"."""
    return "no model calls" if n == 0 else counted(n, "model call")
