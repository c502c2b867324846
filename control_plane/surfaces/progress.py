"""Progress bars for commands that take more than a couple of seconds (import, export, eval, bench).

Drawn with Rich on stderr, so stdout stays clean for reports and JSON; drawn only when stderr
is a terminal (in CI, pipes and tests the bar is silent). Work that can count its steps reports
``(done, total, what)`` through the callback it is given; work that cannot (one bundle import,
one transaction) gets an indeterminate bar with the elapsed time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["Advance", "progress_bar"]

# (done, total, what): how far the work is, and what it is doing now.
Advance = Callable[[int, int, str], None]


def _silent(_done: int, _total: int, _what: str) -> None:
    return None


@contextmanager
def progress_bar(description: str) -> Iterator[Advance]:
    """A transient progress bar on stderr for the duration of the block; yields its callback."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal:
        yield _silent
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[what]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=None, what="")

        def advance(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, what=what)

        yield advance
