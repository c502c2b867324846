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

The naive Bayes threshold of 5.0 was chosen this way on holdout6-11 before holdout12 and holdout13
were scored with it (docs/evals.md, "The learnt check").

3. ``templates`` (on this code, no scoring runs): every phrasing template of every split but
   ``test``, filled with curriculum names and read by this code's grammar alone; for each split,
   the model trained without it checks the sure readings. Prints, per threshold, the right
   readings the check would withhold and the wrong ones it would catch, for the logistic model at
   each ``--regularisation`` and for the retired naive Bayes (``--baseline``). ``DISAGREE`` and
   ``REGULARISATION`` were chosen together this way (docs/evals.md, "The learnt check")::

       python -m evals.second_reading templates --regularisation 10 30 100 --baseline
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from control_plane.understanding.intent_model import DISAGREE

THRESHOLDS = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0)


def split_questions(root: Path, graph: str, split: str, scratch: Path) -> Path:
    """The paraphrase questions of ``split`` (``dev``, ``test``, ``holdout``, ``holdout2``, ...) on
    ``graph`` in the tree ``root``, as a plain JSON Lines file the blind commit's ``kg eval`` reads:
    the split's own file in a tree from before the question files were merged, else its rows of
    ``{graph}_{dev,test,holdout}.jsonl.gz`` (corpus ``paraphrase``; a holdout's blind ``round``)
    written to ``scratch`` as they were once written, without those two fields."""
    folder = root / "evals" / "questions"
    own = folder / f"paraphrase_{graph}_{split}.jsonl"
    if own.exists():
        return own
    m = re.fullmatch(r"(dev|test)|holdout(\d*)", split)
    if m is None:
        raise SystemExit(f"--split {split!r} is not dev, test, holdout or holdoutN")
    blind = None if m.group(1) else int(m.group(2) or 1)
    merged = folder / f"{graph}_{m.group(1) or 'holdout'}.jsonl.gz"
    lines = []
    for line in gzip.decompress(merged.read_bytes()).decode("utf-8").splitlines():
        row = json.loads(line) if line.strip() else {}
        if row.get("corpus") == "paraphrase" and row.get("round") == blind:
            lines.append(
                json.dumps({k: v for k, v in row.items() if k not in ("corpus", "round")}, ensure_ascii=False)
            )
    scratch.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return scratch


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
    questions = split_questions(root, graph, split, out.with_suffix(".questions.jsonl"))
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


def _model_tokens(question: str, spans: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """``question`` as the reader hands it to the check: normalised, respelt outside the names,
    each name one token."""
    from control_plane.understanding.intent_model import question_tokens
    from control_plane.understanding.lexicon import respelt
    from control_plane.understanding.names import normalise

    masked = {i for a, b in spans for i in range(a, b)}
    toks = tuple(t if i in masked else respelt(t) for i, t in enumerate(normalise(question)))
    return question_tokens(toks, spans)


def _margin(model: Any, row: dict[str, Any]) -> tuple[str, float] | None:
    """The model's rival to a recorded sure reading, and its margin (None: no rival)."""
    from control_plane.understanding.intent_model import compatible_labels, rival

    r = row["reading"]
    if r is None or not r["sure"]:
        return None
    spans = [(a, b) for a, b in r["spans"]]
    labels = compatible_labels(r["intent"], transitive=r["transitive"], combined=r["combined"])
    return rival(model, _model_tokens(row["question"], spans), labels, concepts=len(set(spans)))


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
            flagged = [row for row, m in margins if m is not None and m[1] >= t]
            withheld = sum(1 for row in flagged if row["right"])
            caught = len(flagged) - withheld
            for i, v in enumerate((right, wrong, withheld, caught)):
                totals[t][i] += v
            if t == DISAGREE:
                line.append(
                    f"{right / max(1, right + wrong):.3f} -> {(right - withheld) / max(1, right - withheld + wrong - caught):.3f}"
                )
        print(f"{data['graph']:<10} {split:<10} selective accuracy at {DISAGREE}: {line[0]}")
    print("threshold  right  withheld  wrong  caught  selective accuracy")
    for t, (right, wrong, withheld, caught) in totals.items():
        before = right / max(1, right + wrong)
        after = (right - withheld) / max(1, right - withheld + wrong - caught)
        print(f"{t:>9.1f}  {right:>5}  {withheld:>8}  {wrong:>5}  {caught:>6}  {before:.3f} -> {after:.3f}")


# Names the templates are filled with (curriculum concepts; {y} only in path phrasings).
_FILL = (("Retrieval-augmented generation", "Embeddings"), ("Chunking", "Agent orchestration"))
_RELATIONS = {"prerequisite": 40, "builds_on": 30, "part_of": 10, "related": 5, "contrasts_with": 5}


class NaiveBayes:
    """The retired check (multinomial naive Bayes, additive smoothing 0.5), kept as a baseline."""

    def __init__(self, examples: Sequence[tuple[Sequence[str], str]]) -> None:
        from collections import Counter

        from control_plane.understanding.intent_model import features

        self.documents: Counter[str] = Counter()
        self.counts: dict[str, Counter[str]] = {}
        for tokens, label in examples:
            self.documents[label] += 1
            self.counts.setdefault(label, Counter()).update(features(tokens))
        self.vocabulary = {f for c in self.counts.values() for f in c}
        alpha = 0.5
        total = sum(self.documents.values())
        self.prior = {k: math.log(n / total) for k, n in self.documents.items()}
        self.cell = {
            k: {
                f: math.log((self.counts[k][f] + alpha) / (sum(c.values()) + alpha * len(self.vocabulary)))
                for f in self.vocabulary
            }
            for k, c in self.counts.items()
        }

    def evidence(self, feats: Any) -> dict[str, float]:
        """Naive Bayes checked with its prior, as it was."""
        seen = [f for f in feats if f in self.vocabulary]
        return {k: p + sum(self.cell[k][f] for f in seen) for k, p in self.prior.items()}


def _template_readings() -> dict[str, list[tuple[str, tuple[str, ...], bool, list[tuple[int, int]]]]]:
    """Per split: (question, the labels its grammar reading answers, whether its own label is
    among them, the names' token spans) for every sure reading the corpus has a label for."""
    import csv
    from datetime import UTC, datetime

    from control_plane.understanding.intent_model import compatible_labels
    from control_plane.understanding.interpretation import interpret, mentions_in
    from control_plane.understanding.names import NameIndex
    from evals import intent_training

    root = Path(__file__).resolve().parent.parent
    with (root / "data_plane" / "curriculum" / "concepts.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    index = NameIndex.from_names(
        (r["id"], r["name"], tuple(a for a in (r.get("aliases") or "").split("|") if a)) for r in rows
    )
    now = datetime(2026, 11, 23, 15, 0, tzinfo=UTC)
    out: dict[str, list[tuple[str, tuple[str, ...], bool, list[tuple[int, int]]]]] = {}
    for source in intent_training.sources():
        split = source.split
        if split == "test":
            continue
        for row in source.rows:
            if row["kind"] not in ("intent", "time"):
                continue
            for x, y in _FILL:
                q = row["text"].replace("{x}", x).replace("{y}", y)
                mentions = mentions_in(q, index)
                reading = interpret(q, mentions, now=now, relations=_RELATIONS, model=None)
                combined = bool(reading.combine) or reading.intent == "before_uses" or reading.hops > 1
                labels = compatible_labels(reading.intent, transitive=reading.transitive, combined=combined)
                if reading.sure and labels:
                    spans = [(m.start, m.end) for m in mentions]
                    out.setdefault(split, []).append((q, labels, row["intent"] in labels, spans))
    return out


def templates(regularisations: Sequence[float], *, baseline: bool) -> None:
    from control_plane.understanding.intent_model import rival, train
    from evals import intent_training

    readings = _template_readings()
    candidates: list[tuple[str, Any]] = [(f"logistic C={c:g}", c) for c in regularisations]
    if baseline:
        candidates.append(("naive Bayes", None))
    for title, c in candidates:
        totals = {t: [0, 0, 0, 0] for t in THRESHOLDS}  # right, withheld, wrong, caught
        for split, items in readings.items():
            examples = list(intent_training.examples(intent_training.training_sources([split])))
            model: Any = NaiveBayes(examples) if c is None else train(examples, regularisation=c)
            for q, labels, right, spans in items:
                found = rival(model, _model_tokens(q, spans), labels, concepts=len(set(spans)))
                margin = -math.inf if found is None else found[1]
                for t, row in totals.items():
                    hit = int(margin >= t)
                    if right:
                        row[0] += 1
                        row[1] += hit
                    else:
                        row[2] += 1
                        row[3] += hit
        print(title)
        print("  threshold  right  withheld  wrong  caught")
        for t, (n_right, withheld, n_wrong, caught) in totals.items():
            print(f"  {t:>9.1f}  {n_right:>5}  {withheld:>8}  {n_wrong:>5}  {caught:>6}")


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
    tp = sub.add_parser("templates", help="leave-one-split-out over the phrasing templates, this grammar")
    tp.add_argument("--regularisation", nargs="+", type=float, default=[30.0])
    tp.add_argument("--baseline", action="store_true", help="also the retired naive Bayes check")
    args = ap.parse_args(argv)
    if args.command == "record":
        record(args.split, args.graph, args.out, args.root)
    elif args.command == "sweep":
        sweep(args.files, earlier=args.earlier)
    else:
        templates(args.regularisation, baseline=args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
