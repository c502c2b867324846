"""The before/after dump of every reading and answer: two runs of the same code are identical,
and a changed answer is named by its question's id and where it differs, not by its text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.answer_dump import compare, dump


def test_two_dumps_of_the_same_code_are_identical_and_a_change_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    count = dump(first, only=["curriculum.jsonl"], workers=1)
    assert count == 2 * 99  # every question, in both loop configurations
    dump(second, only=["curriculum.jsonl"], workers=1)
    assert compare(first, second) == 0

    lines = second.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[5])
    assert row["answer"]["reading"]["intent"] and "latency_ms" not in row["answer"]
    row["answer"]["reading"]["intent"] = "changed"
    lines[5] = json.dumps(row, sort_keys=True)
    second.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert compare(first, second) == 1
    shown = capsys.readouterr().out
    assert f"{row['set']} {row['config']} {row['id']}: reading.intent" in shown
    assert f"  {row['set']} {row['config']}: 1 changed" in shown
    assert row["question"] not in shown

    # matched by set, configuration and id, not by line: a reordered dump is the same dump, an
    # answer that now abstains says so, and a question one side lacks is named
    flipped = json.loads(lines[7])
    flipped["answer"]["abstained"] = not flipped["answer"]["abstained"]
    lines[7] = json.dumps(flipped, sort_keys=True)
    second.write_text("\n".join(reversed(lines[1:])) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert compare(first, second) == 3
    shown = capsys.readouterr().out
    assert (
        f"{flipped['id']}: answered -> abstained" in shown
        or f"{flipped['id']}: abstained -> answered" in shown
    )
    gone = json.loads(lines[0])
    assert f"{gone['set']} {gone['config']} {gone['id']}: only before" in shown
