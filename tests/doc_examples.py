"""Running a docs page's examples as a person would: every command in order, in one folder, in one
shell session, each printing what the page shows.

``bash`` blocks: each ``kg ...`` line runs and must succeed; so does a line that sets a variable
from a ``kg`` command (``NAME=$(kg ... | cut ...)``) or exports one. Other lines (``pip install``,
``python -m pytest``) are only listed. ``console`` blocks: every ``$ ...`` line runs, and the lines
under one are its shown output, which must appear in what it prints, in that order (a line of
``…`` marks a cut). A shown output starting with ``error:`` expects the command to fail.

A plain ``kg`` command (no pipe, no substitution; ``$NAME`` is filled in from the session) runs in
this process through Typer's runner, which is fast; any other line runs in ``bash`` with ``kg`` on
``PATH`` (this checkout's code) and the variables the page set so far, and the variables it sets
are kept. ``/tmp/`` in a command is the session's own scratch folder, so examples that write there
leave nothing behind. Answer ids, times, durations, user names, secrets and retry delays vary
from run to run and are compared as placeholders.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from typer.testing import CliRunner

from control_plane.surfaces.cli import app

ROOT: Final = Path(__file__).resolve().parent.parent
ELISION: Final = {"…", "..."}
# A line of a bash block that runs: a kg command, a variable set from one, an export.
_RUNS: Final = re.compile(r"^(kg |export |\w+=\$\(kg )")
# A kg command the runner can take as it is: no shell syntax but $NAME.
_PLAIN: Final = re.compile(r"^kg (?:[^|&;<>()`$]|\$\w+)*$")
# Variables bash sets by itself: not the page's.
_SHELL_OWN: Final = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})


@dataclass
class Example:
    command: str
    shown: list[str] = field(default_factory=list)


def examples(text: str) -> list[Example]:
    """Every command of the page's ``bash`` and ``console`` blocks, in order, with the output
    lines a console block shows under it."""
    found: list[Example] = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang in ("bash", "sh"):
            for line in body.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip()
                line = line.rsplit("&& ", 1)[-1]  # `pip install -e . && kg ask ...`
                if _RUNS.match(line):
                    found.append(Example(line))
        elif lang == "console":
            for line in body.splitlines():
                if line.startswith("$ "):
                    found.append(Example(line[2:].strip()))
                elif found and line.strip():
                    found[-1].shown.append(line)
    return found


_NORMAL: Final = (
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    # A stamp of now (with its fraction of a second), whole or cut short by a table cell.
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z?|\d{4}-\d\d-\d\dT[\d:.]*…"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? s\b"), "<n> s"),
    (re.compile(r"\bcli:[\w.-]+"), "cli:<user>"),
    # A secret, or its first characters before "..." (which may all be lower case, like a
    # metric's name: "kg_baw..."); not a metric's name ("kg_answers_total").
    (re.compile(r"\bkg_(?:(?=[\w-]*[A-Z0-9])[\w-]{3,}|[\w-]{3,}(?=\.\.\.))"), "kg_<secret>"),
    (re.compile(r"(?i)^retry-after: \d+"), "retry-after: <n>"),
)


def normal(line: str) -> str:
    for pattern, replacement in _NORMAL:
        line = pattern.sub(replacement, line)
    return line.rstrip()


def missing_line(shown: list[str], printed: str) -> str | None:
    """The first shown line that is not printed in order after the ones before it, or None."""
    lines = [normal(line) for line in printed.splitlines()]
    at = 0
    for want in (normal(s) for s in shown):
        if want.strip() in ELISION:
            continue
        while at < len(lines) and lines[at] != want:
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


class Session:
    """One folder and one environment in which a page's commands run in order (module docstring).
    ``env`` holds what the page's commands see beyond the process's own environment."""

    def __init__(
        self, folder: Path, env: Mapping[str, str], *, swaps: Mapping[str, str] | None = None
    ) -> None:
        self.folder = folder
        self.env = dict(env)
        # Text of a command replaced before it runs: /tmp/, and what a test adds (a server's port).
        self.swaps = {"/tmp/": f"{folder}/tmp/", **(swaps or {})}
        (folder / "tmp").mkdir(parents=True, exist_ok=True)
        bin_ = folder / ".bin"
        bin_.mkdir(exist_ok=True)
        shim = bin_ / "kg"
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m control_plane.surfaces.cli "$@"\n')
        shim.chmod(0o755)
        self._bin = bin_

    def local(self, command: str) -> str:
        """``command`` with ``/tmp/`` pointing into the session's scratch folder (and the test's
        other swaps made)."""
        for text, instead in self.swaps.items():
            command = command.replace(text, instead)
        return command

    def run(self, command: str) -> tuple[int, str]:
        """Run one command; its exit code and what it printed (stdout and stderr)."""
        command = self.local(command)
        if command.startswith("export ") and "$(" not in command:
            for name, _, value in (w.partition("=") for w in shlex.split(command.removeprefix("export "))):
                self.env[name] = value
            return 0, ""
        if _PLAIN.match(command):
            filled = re.sub(r"\$(\w+)", lambda m: self.env.get(m[1], ""), command)
            result = CliRunner().invoke(app, shlex.split(filled)[1:], env=self.env)
            return result.exit_code, result.output
        return self._bash(command)

    def _bash(self, command: str) -> tuple[int, str]:
        import os

        dump = self.folder / ".env"
        script = f"set -a\n{command}\n__status=$?\nenv -0 > {shlex.quote(str(dump))}\nexit $__status\n"
        env = {
            **os.environ,
            **self.env,
            "PATH": f"{self._bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
        }
        proc = subprocess.run(
            ["bash", "-c", script], cwd=self.folder, env=env, capture_output=True, text=True, timeout=300
        )
        if dump.exists():
            for item in dump.read_text().split("\0"):
                name, sep, value = item.partition("=")
                if sep and name not in _SHELL_OWN and env.get(name) != value:
                    self.env[name] = value
        return proc.returncode, proc.stdout + proc.stderr


def check(session: Session, example: Example) -> None:
    """Run ``example``: it succeeds (or fails, when it shows ``error:``) and prints what it shows."""
    code, printed = session.run(example.command)
    fails = bool(example.shown) and example.shown[0].startswith("error:")
    assert (code != 0) == fails, f"$ {example.command}\n{printed}"
    missing = missing_line(example.shown, printed)
    assert missing is None, f"$ {example.command}\nshown but not printed: {missing!r}\n{printed}"


# Long-running or serving: their own tests run them; a page only names them.
NOT_RUN: Final = ("serve", "eval", "bench")


def fresh_install(folder: Path) -> Session:
    """A session as on a new machine, in ``folder`` (the working folder): a fresh user data folder
    (the first ``kg ask`` creates the default database), offline, 80 columns, and ``docs/``
    reachable as from the checkout."""
    (folder / "docs").symlink_to(ROOT / "docs")
    env = {
        "XDG_DATA_HOME": str(folder / "data"),
        "KG_DATABASE_URL": "",
        "KG_SYNTHESIZER": "offline",
        "DEEPSEEK_API_KEY": "",
        "COLUMNS": "80",
    }
    return Session(folder, env)


def run_page(session: Session, found: list[Example]) -> None:
    """Check every example in order, leaving out the long-running commands (:data:`NOT_RUN`)."""
    for example in found:
        if example.command.split()[:2] in (["kg", word] for word in NOT_RUN):
            continue
        check(session, example)
