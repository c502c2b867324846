"""How much the learnt second reading (``control_plane.understanding.intent_model``) would have
caught on the blind holdouts, measured on the readers that were actually scored blind.

Two steps, because each holdout was scored on an older reader:

1. ``record``: run one split through ``kg eval`` on whatever code is importable (run it inside a
   ``git worktree`` of the blind commit, with ``PYTHONPATH`` set to that tree) and save, per
   question, the grammar's reading (intent, scope, name spans) and whether the answer was right::

       git worktree add /tmp/wt 36511c2
       (cd /tmp/wt && PYTHONPATH=$PWD python /path/to/main/evals/second_reading.py record \\
           --split holdout9 --graph curriculum --out /tmp/readings/curriculum-holdout9.json)

2. ``sweep`` (on this code): for each recorded split, train the model without that split (and,
   with ``--earlier``, without every later holdout too), score the recorded readings with it and
   print, per threshold, the right answers the check would have withheld and the wrong ones it
   would have caught::

       python -m evals.second_reading sweep /tmp/readings/*.json

The threshold in ``intent_model.DISAGREE`` was chosen this way on holdout6-11 before holdout12
and holdout13 were scored with it (docs/evals.md, "Round 4").
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

THRESHOLDS = (3.0, 4.0, 5.0, 6.0, 7.0, 8.0)


def record(split: str, graph: str, out: Path, root: Path) -> None:
    """Score ``split`` on ``graph`` with the importable code; keep each question's reading."""
    import importlib

    from evals import runner

    loop: Any = importlib.import_module("control_plane.planning.loop")  # whichever commit's loop

    readings: dict[str, dict[str, Any]] = {}
    interpret = loop.interpret

    def recording(question: str, mentions: Any, **kw: Any) -> Any:
        r = interpret(question, mentions, **kw)
        readings[question] = {
            "spans": [(m.start, m.end) for m in mentions],
            "intent": r.intent,
            "transitive": r.transitive,
            "combined": bool(r.combine) or r.intent == "before_uses" or r.hops > 1,
            "sure": r.sure,
        }
        return r

    loop.interpret = recording  # a measuring harness wraps the reader; the product never does
    questions = root / "evals" / "questions" / f"paraphrase_{graph}_{split}.jsonl"
    bundle = root / "evals" / "bundles" / "prereqmap" if graph == "prereqmap" else None
    report = runner.evaluate(
        out=out.with_suffix(".eval"), questions=questions, bundle=bundle, baselines=["loop"]
    )
    rows = []
    for q in report["questions"]:
        r = q["results"]["loop"]
        right = not q["expect"].get("abstain") and bool(r["exact_match"])
        rows.append(
            {
                "question": q["question"],
                "answered": not r["abstained"],
                "right": right,
                "reading": readings.get(q["question"]),
            }
        )
    out.write_text(json.dumps({"split": split, "graph": graph, "rows": rows}), encoding="utf-8")
    print(f"{out}: {len(rows)} questions")


def _margin(model: Any, row: dict[str, Any]) -> tuple[str, float, bool] | None:
    from control_plane.understanding.intent_model import compatible_labels, features, question_tokens
    from control_plane.understanding.lexicon import respelt
    from control_plane.understanding.names import normalise

    r = row["reading"]
    if r is None or not r["sure"]:
        return None
    labels = compatible_labels(r["intent"], transitive=r["transitive"], combined=r["combined"])
    if not labels:
        return None
    masked = {i for a, b in r["spans"] for i in range(a, b)}
    toks = tuple(t if i in masked else respelt(t) for i, t in enumerate(normalise(row["question"])))
    scores = model.scores(features(question_tokens(toks, [tuple(s) for s in r["spans"]])))
    if len({tuple(s) for s in r["spans"]}) < 2:
        scores.pop("path", None)
    best = max(scores, key=lambda k: scores[k])
    return best, scores[best] - max(scores.get(label, -math.inf) for label in labels), best in labels


def sweep(files: Sequence[Path], *, earlier: bool) -> None:
    from evals import intent_training

    totals = {t: [0, 0, 0, 0] for t in THRESHOLDS}  # right, wrong, right withheld, wrong caught
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        split = data["split"]
        without = [split]
        if earlier and (k := re.fullmatch(r"holdout(\d+)", split)):
            without += [f"holdout{j}" for j in range(int(k.group(1)) + 1, 100)]
        model = intent_training.build(without)
        margins = [(row, _margin(model, row)) for row in data["rows"] if row["answered"]]
        line = []
        for t in THRESHOLDS:
            right = sum(1 for row, _ in margins if row["right"])
            wrong = len(margins) - right
            flagged = [row for row, m in margins if m is not None and not m[2] and m[1] >= t]
            withheld = sum(1 for row in flagged if row["right"])
            caught = len(flagged) - withheld
            for i, v in enumerate((right, wrong, withheld, caught)):
                totals[t][i] += v
            if t == 5.0:
                line.append(
                    f"{right / max(1, right + wrong):.3f} -> {(right - withheld) / max(1, right - withheld + wrong - caught):.3f}"
                )
        print(f"{data['graph']:<10} {split:<10} selective accuracy at 5.0: {line[0]}")
    print("threshold  right  withheld  wrong  caught  selective accuracy")
    for t, (right, wrong, withheld, caught) in totals.items():
        before = right / max(1, right + wrong)
        after = (right - withheld) / max(1, right - withheld + wrong - caught)
        print(f"{t:>9.1f}  {right:>5}  {withheld:>8}  {wrong:>5}  {caught:>6}  {before:.3f} -> {after:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="score one split on the importable code, keep its readings")
    rec.add_argument("--split", required=True)
    rec.add_argument("--graph", choices=("curriculum", "prereqmap"), required=True)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--root", type=Path, default=Path.cwd(), help="the tree whose corpus files to use")
    sw = sub.add_parser("sweep", help="what the check would have done on recorded readings")
    sw.add_argument("files", nargs="+", type=Path)
    sw.add_argument("--earlier", action="store_true", help="train only on holdouts before each one")
    args = ap.parse_args(argv)
    if args.command == "record":
        record(args.split, args.graph, args.out, args.root)
    else:
        sweep(args.files, earlier=args.earlier)
    return 0


if __name__ == "__main__":
    sys.exit(main())
