"""Why an SQLite file cannot be written, in one line a person can act on.

SQLite reports a file it may not write as "attempt to write a readonly database", a full disk as
"database or disk is full", and either, when it cannot create its ``-wal`` or ``-shm`` file, as
"disk I/O error" or "unable to open database file": none says which file, or why. ``fault``
looks (the free space of the disk holding it, the permissions of the file, its ``-wal`` and
``-shm`` and its folder) and says; ``translated`` turns such a driver error into a
:class:`~data_plane.errors.StorageFault` naming the file (``data_plane.database`` installs it on
every SQLite engine).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path
from typing import Final

from data_plane.errors import StorageFault

# Below this much free space a disk counts as full: SQLite writes pages of 4 KiB and grows its WAL
# by many of them in one transaction.
FULL_BELOW: Final = 1 << 20
# SQLite's primary result codes that mean "cannot write or open this file", not "busy".
_CODES: Final = frozenset(
    {
        sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
    }
)


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        return "this user"


def _mode(path: Path) -> str:
    st = path.stat()
    try:
        import pwd

        owner = pwd.getpwuid(st.st_uid).pw_name
    except (ImportError, KeyError):
        owner = str(st.st_uid)
    return f"{stat.filemode(st.st_mode)}, owner {owner}"


def fault(path: Path, what: str) -> str | None:
    """Why ``what`` (e.g. "the side file") at ``path`` cannot be written, or None when nothing
    is found wrong: a full disk, or a file, ``-wal``/``-shm`` or folder this user may not write."""
    folder = path.parent
    existing = next((p for p in (path, folder, *folder.parents) if p.exists()), None)
    if existing is not None:
        free = shutil.disk_usage(existing).free
        if free < FULL_BELOW:
            return f"the disk holding {what} {path} is full ({_size(free)} free): free space on it"
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if p.exists() and not os.access(p, os.W_OK):
            return f"{what} {path} cannot be written: {p.name} is read-only for {_user()} ({_mode(p)})"
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"{what} {path} cannot be written: its folder {folder} is read-only for {_user()} "
            f"({_mode(folder)}; SQLite makes its -wal and -shm files there)"
        )
    return None


def translated(exc: BaseException, path: Path, what: str) -> StorageFault | None:
    """A :class:`StorageFault` for a driver error that says ``path`` cannot be opened or written
    (None for any other error: busy, a constraint, SQL)."""
    if not isinstance(exc, sqlite3.Error) or (exc.sqlite_errorcode & 0xFF) not in _CODES:
        return None
    said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    why = fault(path, what)
    if why is None:
        why = f"{what} {path} cannot be opened or written"
    return StorageFault(f"{why} (SQLite: {said})", path=str(path))
