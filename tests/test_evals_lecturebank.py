"""`kg eval --set-aside`: an eval bundle with prerequisite cycles is imported as `kg import
--set-aside` imports it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from control_plane.surfaces.cli import app

ENV = {"KG_SYNTHESIZER": "offline", "DEEPSEEK_API_KEY": "", "KG_DATABASE_URL": "", "COLUMNS": "200"}


def _cyclic_bundle(folder: Path) -> Path:
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "format": "kg-bundle/1",
                "name": "cyclic",
                "defaults": {
                    "source": "test",
                    "reason": "a test map",
                    "confidence": 0.8,
                    "evidence": {"test": "a cycle"},
                    "valid_at": "2018-01-01",
                },
            }
        )
    )
    (folder / "concepts.csv").write_text("id,name\na,Alpha\nb,Beta\nc,Gamma\n")
    (folder / "concept_edges.csv").write_text(
        "source_id,target_id,relation\na,b,prerequisite\nb,a,prerequisite\nb,c,prerequisite\n"
    )
    return folder


def test_kg_eval_refuses_a_map_with_cycles_unless_told_to_set_rows_aside(tmp_path: Path) -> None:
    """`kg eval --bundle` refuses a map with a prerequisite cycle, naming --set-aside; with
    --set-aside it imports the rest, scores, and records the option; --set-aside without --bundle
    is refused."""
    bundle = _cyclic_bundle(tmp_path / "map")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "What is Gamma?",
                "type": "about",
                "expect": {"concepts": ["c"], "match": "contains"},
            }
        )
        + "\n"
    )
    base = ["eval", "--questions", str(questions), "--bundle", str(bundle), "--baseline", "loop"]
    refused = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "no")], env=ENV)
    assert refused.exit_code != 0 and "--set-aside" in refused.output
    done = CliRunner().invoke(app, [*base, "--set-aside", "--out", str(tmp_path / "yes")], env=ENV)
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "yes" / "report.json").read_text())
    assert report["meta"]["set_aside"] is True and report["meta"]["questions"] == 1
    alone = ["eval", "--questions", str(questions), "--set-aside", "--out", str(tmp_path / "x")]
    lone = CliRunner().invoke(app, alone, env=ENV)
    assert lone.exit_code != 0 and "--bundle" in lone.output
