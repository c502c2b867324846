"""The README stays true: every example command in it runs on a fresh install, in order, and every
output line it shows is printed by its command (answer ids, times, durations and the user name
aside).

``bash`` blocks: each ``kg ...`` line runs and must succeed (``kg serve``, ``kg eval`` and ``kg
bench`` are long-running and only listed). ``console`` blocks: ``$ kg ...`` lines run, and the
lines under one are its shown output, which must appear in what it prints, in that order (a
table may be shown abridged; a line of ``…`` marks the cut). A shown output starting with
``error:`` expects the command to fail. ``$ export NAME=value`` sets the environment of the
commands after it. Everything runs through the ``kg`` command line in a fresh folder, with a
fresh user data directory, so the default database is created by the first command, as on a new
machine.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from control_plane.surfaces.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LIMIT = 12_000
# Long-running or measured elsewhere (their own tests); the README only names them.
NOT_RUN = ("serve", "eval", "bench")
ELISION = {"…", "..."}


@dataclass
class Example:
    command: str
    shown: list[str] = field(default_factory=list)


def examples(text: str) -> list[Example]:
    """Every command of the README's ``bash`` and ``console`` blocks, in order, with the output
    lines a console block shows under it."""
    found: list[Example] = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang in ("bash", "sh"):
            for line in body.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip()
                line = line.rsplit("&& ", 1)[-1]  # `pip install -e . && kg ask ...`
                line = re.sub(r"^(\w+=\S+\s+)+", "", line)  # leading VAR=value assignments
                if line.startswith("kg "):
                    found.append(Example(line))
        elif lang == "console":
            for line in body.splitlines():
                if line.startswith("$ "):
                    found.append(Example(line[2:].strip()))
                elif found and line.strip():
                    found[-1].shown.append(line)
    return found


_NORMAL = (
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    # A stamp of now (with its fraction of a second), whole or cut short by a table cell.
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z?|\d{4}-\d\d-\d\dT[\d:.]*…"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? s\b"), "<n> s"),
    (re.compile(r"\bcli:[\w.-]+"), "cli:<user>"),
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


def test_the_readme_is_short() -> None:
    """The README stays an introduction (details live in docs/): at most 12,000 characters."""
    assert len(README.read_text(encoding="utf-8")) <= LIMIT


def test_the_readme_says_the_two_commands_of_a_fresh_machine() -> None:
    """The main job, offline on the embedded default, and the test suite, as one line each."""
    text = README.read_text(encoding="utf-8")
    assert '\npip install -e . && kg ask "' in text
    assert "\npip install -e '.[test,evals]' && python -m pytest\n" in text


def test_the_readme_examples_run_and_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every example runs, in order, on a fresh install; each shown output is what is printed."""
    found = examples(README.read_text(encoding="utf-8"))
    assert len(found) >= 20 and sum(1 for e in found if e.shown) >= 8
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "KG_DATABASE_URL": "",
        "KG_SYNTHESIZER": "offline",
        "DEEPSEEK_API_KEY": "",
        "COLUMNS": "120",
    }
    ids = {"TOKEN_ID": ""}
    for example in found:
        if example.command.startswith("export "):
            name, _, value = example.command.removeprefix("export ").partition("=")
            env[name] = value
            continue
        argv = shlex.split(example.command)
        assert argv[0] == "kg", f"a console example runs kg only: {example.command}"
        if argv[1] in NOT_RUN:
            continue
        if "$ANSWER_ID" in example.command:
            listed = CliRunner().invoke(app, ["audit", "answers", "--format", "json"], env=env)
            ids["ANSWER_ID"] = json.loads(listed.stdout)[0]["answer_id"]
        argv = [re.sub(r"\$(\w+)", lambda m: ids.get(m[1], m[0]), a) for a in argv[1:]]
        result = CliRunner().invoke(app, argv, env=env)
        fails = bool(example.shown) and example.shown[0].startswith("error:")
        assert (result.exit_code != 0) == fails, f"$ {example.command}\n{result.output}"
        missing = missing_line(example.shown, result.output)
        assert missing is None, f"$ {example.command}\nshown but not printed: {missing!r}\n{result.output}"
        if argv[:2] == ["token", "create"]:
            ids["TOKEN_ID"] = re.search(r"token_id: (\w+)", result.stdout).group(1)  # type: ignore[union-attr]


def test_a_changed_output_line_is_caught() -> None:
    """The comparison fails on a shown line the command no longer prints, and lets ids, times,
    durations, the user name and an elided stretch vary."""
    printed = "a 1234567890abcdef1234567890abcdef\nskipped\nrecorded 2026-11-21T19:45:18.477722Z in 0.12 s by cli:ann"
    assert (
        missing_line(
            ["a ffffffffffffffffffffffffffffffff", "…", "recorded 2027-01-01T00:00:00.1Z in 3 s by cli:bob"],
            printed,
        )
        is None
    )
    assert missing_line(["skipped", "a 1234567890abcdef1234567890abcdef"], printed) is not None
    assert missing_line(["recorded 2026-11-21T19:45:18Z in 0.12 s"], printed) is not None
