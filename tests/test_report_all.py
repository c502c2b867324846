"""``python -m evals.report_all`` rebuilds the reports into an ignored folder and gathers one summary
table per step, each with the commit, the machine and the command that rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals import report_all
from evals.summary_tables import corpus_row, corpus_table


def _report(results: list[tuple[str, bool, bool]]) -> dict[str, object]:
    """A ``kg eval`` report for one system with (type, abstained, right) per question."""
    from evals.metrics import Response, score, summarise

    scores = [
        score(
            f"q{i}",
            t,
            ("a",),
            t == "unanswerable",
            Response(abstained=abstained, cited=("a",) if right else ("b",)),
        )
        for i, (t, abstained, right) in enumerate(results)
    ]
    return {
        "summary": {
            "overall": {"loop": summarise(scores)},
            "answerable": {"loop": summarise([s for s in scores if not s.expect_abstain])},
            "by_type": {
                t: {"loop": summarise([s for s in scores if s.type == t])} for t in {r[0] for r in results}
            },
        },
        "questions": [
            {"results": {"loop": {"abstained": s.abstained, "exact_match": s.exact_match}}} for s in scores
        ],
    }


def test_a_question_file_row_counts_wrong_answers_and_unknown_concept_recall() -> None:
    """A row says how many answers were wrong (answered, not exact) and how many questions about
    an unknown concept were abstained on, out of how many."""
    row = corpus_row(
        _report(
            [
                ("prerequisites", False, True),
                ("prerequisites", False, False),
                ("path", True, False),
                ("unanswerable", True, True),
                ("unanswerable", False, False),
            ]
        )
    )
    assert (row["n"], row["wrong"], row["unknown_n"]) == (5, 2, 2)
    assert row["unknown_recall"] == 0.5 and row["selective_accuracy"] == pytest.approx(1 / 3)
    table = corpus_table([("curriculum", "dev", row)])
    assert table.splitlines()[2].startswith("| curriculum | dev | 5 | 0.60 | 0.333 | 2 |")


def test_question_files_are_found_per_known_graph_and_split() -> None:
    """Every graph's dev, test and holdout file holding the corpus is scored once, in that order,
    a holdout's blind rounds together; template files are no graph's."""
    found = report_all._question_files("paraphrase")
    assert found and {graph for graph, *_ in found} <= set(report_all.GRAPHS)
    curriculum = [(split, rounds) for graph, split, _, rounds in found if graph == "curriculum"]
    assert [split for split, _ in curriculum] == ["dev", "test", "holdout"]
    assert curriculum[0][1] == 0 and curriculum[2][1] > 1
    forms = report_all._question_files("forms")
    assert ("musicstats", "holdout") in {(graph, split) for graph, split, *_ in forms}


def test_a_step_writes_its_report_and_a_summary_naming_commit_machine_and_command(tmp_path: Path) -> None:
    """One quick step end to end: its full report in its own folder, and SUMMARY.md with where and
    when it ran and the command that rebuilds its table."""
    assert report_all.main(["--out", str(tmp_path), "--quick", "--only", "graphwalk"]) == 0
    assert (tmp_path / "graphwalk" / "graphwalk.json").exists()
    summary = (tmp_path / "SUMMARY.md").read_text(encoding="utf-8")
    assert "Commit `" in summary and "Machine: " in summary and "load average" in summary
    assert "`python -m evals.graphwalk --sizes 100,200 --out " in summary
    assert "| **all** | 1.00 | 1.00 |" in summary
    data = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert data["failed"] == {} and [s["title"] for s in data["sections"]] == [
        "GraphWalk-style structural benchmark (loop, offline)"
    ]


def test_a_step_whose_programs_are_missing_is_skipped_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without hyperfine and perf on PATH, the start-up step is skipped, not failed: the run says
    what it needs as it starts, exits 0, and SUMMARY.md says what to install."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert report_all.main(["--out", str(tmp_path / "out"), "--quick", "--only", "startup"]) == 0
    said = capsys.readouterr().err
    assert said.startswith("needs, besides Python: startup: hyperfine and perf")
    assert "== startup: skipped: needs hyperfine and perf, not found on PATH" in said
    summary = (tmp_path / "out" / "SUMMARY.md").read_text(encoding="utf-8")
    assert "## Steps skipped" in summary and "apt-get install hyperfine" in summary
    data = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert data["failed"] == {} and set(data["skipped"]) == {"startup"}


def test_missing_programs_are_looked_up_on_path() -> None:
    """A step's programs are found (or not) by the given lookup; steps needing none need nothing."""
    assert report_all.missing_programs("startup", which=lambda p: None) == ["hyperfine", "perf"]
    assert report_all.missing_programs("startup", which=lambda p: f"/usr/bin/{p}") == []
    assert report_all.missing_programs("graphwalk", which=lambda p: None) == []


def test_the_docs_tables_are_rewritten_between_their_markers_only() -> None:
    """A marked table is replaced by its section's run and table; text around it and blocks of
    titles the run did not make stay as they were."""
    text = (
        "intro\n<!-- summary: A -->\nold table\n<!-- /summary -->\nmiddle\n"
        "<!-- summary: B -->\nkept\n<!-- /summary -->\nend\n"
    )
    new, used = report_all.fill(text, {"A": "_run_\n\n| new |\n"})
    assert used == {"A"}
    assert new == (
        "intro\n<!-- summary: A -->\n_run_\n\n| new |\n<!-- /summary -->\nmiddle\n"
        "<!-- summary: B -->\nkept\n<!-- /summary -->\nend\n"
    )


def test_a_docs_block_names_the_command_commit_machine_and_load() -> None:
    """What a page shows above a table says how to rebuild it and where it was measured."""
    head = {
        "commit": "abc1234",
        "uncommitted_changes": False,
        "started": "2026-11-27 05:00 UTC",
        "machine": {"nproc": 2, "cpu": "AMD EPYC"},
    }
    section = {"commands": ["kg eval --out out/eval"], "load": [1.5, 2.0], "seconds": 9.4, "table": "| t |"}
    block = report_all.doc_block(section, head)
    assert block.startswith("_`kg eval --out out/eval` at `abc1234`, 2026-11-27 05:00 UTC, 2 CPUs (AMD EPYC)")
    assert "load average 1.5 → 2.0, 9 s._" in block and block.endswith("| t |\n")


def test_the_targets_are_checked_against_a_runs_reports(tmp_path: Path) -> None:
    """Each target row comes from the report that measures it, says the figure, and says "no"
    when the figure misses; a report that is not there gives no row."""

    def write(name: str, data: object) -> None:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")

    common = {"expansion_to_raw": 1.5, "import_to_raw_insert": 0.5, "loop_p50_ms": 6.0, "export_to_raw": 2.0}
    write(
        "bench/bench.json",
        {
            "results": [
                {
                    **common,
                    "edges": 1000,
                    "import_to_raw_insert": 0.1,
                    "loop_to_target": 2.0,
                    "loop_peak_rss_mb": 90,
                },
                {**common, "edges": 1_000_000, "loop_to_target": 0.9, "loop_peak_rss_mb": 160.0},
            ]
        },
    )
    write("reuse/reuse-sqlite/reuse-mix.json", {"model_calls": 51, "target": 58.0, "stale": 0, "met": True})
    rows = {what: (figure, ok) for what, _, figure, ok in report_all.target_rows(tmp_path)}
    assert rows["expansion p50 ≤ 3x raw, every size"] == ("1.50-1.50x", True)
    assert rows["import rate ≥ 1/5 of a raw insert, every size"] == (
        "0.10-0.50; below: 0.10 at 1,000 (sqlite)",
        False,
    )
    assert rows["loop ≤ 12 raw expansions + 2 ms at 10^6 (sqlite)"][1] is True
    assert rows["loop peak RSS ≤ 150 MB at 10^6 (sqlite)"] == ("160.0 MB", False)
    assert rows["reuse: model calls ≤ 2 x 30 x rounds, 0 stale (sqlite)"] == (
        "51 calls (bound 58), 0 stale",
        True,
    )
    assert not any("serving" in what or "walk" in what for what in rows)
