"""Prompt sizes: what each loop round would send to DeepSeek, beside the whole-graph prompt.

Run ``python -m evals.prompt_sizes [--questions FILE] [--out out/eval]``. The loop runs with
the offline synthesizer on the bundled curriculum (as ``kg eval`` does); every round's
:class:`~control_plane.synthesizers.base.SynthesisRequest` is rendered exactly as the DeepSeek
synthesizer would render it (the compact closure form above 80 evidence edges, the full form
otherwise) and counted with cl100k_base (LlamaIndex's bundled copy: an approximation of
DeepSeek's own tokenizer, which is not available offline). The whole-graph baseline's prompt is
the full form over the snapshot as of the question's time. Prints per question type the p50 and
max prompt tokens per round, and the whole-graph prompt's size; writes ``prompt_sizes.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from llama_index.core.utils import get_tokenizer

from control_plane.evidence import EvidenceGraph
from control_plane.planning.loop import Planner
from control_plane.synthesizers.base import Draft, SynthesisRequest, SynthesizerInfo
from control_plane.synthesizers.offline import OfflineSynthesizer
from control_plane.synthesizers.prompts import COMPACT_OVER_EDGES, build_closure_messages, build_messages
from data_plane.database import connect
from data_plane.reads import GraphReader
from evals.questions import load_questions
from evals.runner import _database, default_questions

__all__ = ["main", "prompt_tokens", "table"]


def prompt_tokens(request: SynthesisRequest) -> int:
    """Prompt tokens (cl100k_base) of the messages the DeepSeek synthesizer builds for ``request``."""
    compact = len(request.evidence.edges) > COMPACT_OVER_EDGES
    messages = build_closure_messages(request) if compact else build_messages(request)
    tokenize = get_tokenizer()
    return sum(len(tokenize(m["content"])) + 4 for m in messages)


class _Counting:
    """The offline synthesizer, counting what each round's prompt would cost."""

    def __init__(self) -> None:
        self.inner = OfflineSynthesizer()
        self.sizes: list[int] = []

    @property
    def info(self) -> SynthesizerInfo:
        return self.inner.info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        self.sizes.append(prompt_tokens(request))
        return self.inner.synthesize(request)


def table(report: dict[str, Any]) -> str:
    """``prompt_sizes.json`` as a Markdown table, one row per question type."""
    whole = report["whole_graph_p50"]
    lines = [
        "| type | rounds | p50 tokens/round | max tokens/round | whole-graph tokens | max / whole |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t, row in report["by_type"].items():
        lines.append(
            f"| {t} | {row['rounds']} | {row['p50']:.0f} | {row['max']} | {whole:.0f} | {row['max'] / whole:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.prompt_sizes", description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=default_questions())
    parser.add_argument("--out", type=Path, default=Path("out/eval"))
    args = parser.parse_args(argv)
    by_type: dict[str, list[int]] = defaultdict(list)
    whole: list[int] = []
    with _database(None) as url:
        engine = connect(url)
        reader = GraphReader(engine)
        synth = _Counting()
        planner = Planner(reader, synth)
        for q in load_questions(args.questions):
            synth.sizes.clear()
            answer = planner.ask(q.question, as_of=q.as_of_time, known_at=q.known_at_time, record=False)
            by_type[q.type].extend(synth.sizes)
            if synth.sizes:
                snap = reader.snapshot(answer.as_of)
                ev: EvidenceGraph[Any, Any] = EvidenceGraph(seeds=answer.seeds)
                for c in snap.concepts:
                    ev.add_concept(c)
                for e in snap.edges:
                    ev.add_edge(e)
                base = SynthesisRequest(q.question, answer.rounds[0].focus, ev, 1, 1, answer.as_of)
                whole.append(sum(len(get_tokenizer()(m["content"])) + 4 for m in build_messages(base)))
        engine.dispose()
    whole_p50 = statistics.median(whole)
    rows = {
        t: {"rounds": len(sizes), "p50": statistics.median(sizes), "max": max(sizes)}
        for t, sizes in sorted(by_type.items())
        if sizes
    }
    report = {"tokenizer": "cl100k_base (approximation)", "whole_graph_p50": whole_p50, "by_type": rows}
    print(table(report))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "prompt_sizes.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
