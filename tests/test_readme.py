"""The README stays true: every example command in it runs on a fresh install, in order, and every
output line it shows is printed by its command (answer ids, times, durations and the user name
aside), at 80 columns, as a new user's terminal shows it.

How a page's examples run (``bash`` and ``console`` blocks, shell lines, ``/tmp/``): see
``doc_examples``. ``kg serve``, ``kg eval`` and ``kg bench`` are long-running and only listed.
Everything runs in a fresh folder, with a fresh user data directory, so the default database is
created by the first command, as on a new machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_examples import ROOT, examples, fresh_install, missing_line, run_page

README = ROOT / "README.md"
LIMIT = 12_000


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
    """Every example runs, in order, on a fresh install; each shown output is what is printed;
    the ids the README uses ($ANSWER_ID, $TOKEN_ID) are set by its own commands."""
    found = examples(README.read_text(encoding="utf-8"))
    assert len(found) >= 20 and sum(1 for e in found if e.shown) >= 8
    monkeypatch.chdir(tmp_path)
    session = fresh_install(tmp_path)
    run_page(session, found)
    assert session.env.get("ANSWER_ID") and session.env.get("TOKEN_ID")
    assert list(tmp_path.glob("*.json")) == [] and list(tmp_path.glob("*.html")) == []


def test_the_readme_writes_its_files_outside_the_checkout() -> None:
    """The README's commands write answers, pages and bundles into /tmp, never into the checkout."""
    for example in examples(README.read_text(encoding="utf-8")):
        words = example.command.split()
        for flag in ("--out",):
            if flag in words:
                assert words[words.index(flag) + 1].startswith("/tmp/"), example.command
        if words[:2] == ["kg", "export"]:
            assert words[2].startswith("/tmp/"), example.command


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
