"""Writing an eval run: ``report.json``, ``report.md`` and PNG plots (matplotlib, Agg backend).

``report.json``::

    {"meta": {...},                       # questions file, database, synthesizer, systems, notes
     "summary": {"overall": {system: Summary},
                 "by_type": {type: {system: Summary}},
                 "by_intent": {intent: {system: Summary}}},
     "questions": [{"id", "question", "type", "expect", "as_of", "known_at",
                    "results": {system: {score fields, "cited", "evidence_size", "text", ...}}}]}

A ``Summary`` is :func:`evals.metrics.summarise` (n, precision, recall, f1, exact_match,
evidence_recall, abstention_precision, abstention_recall, coverage, selective_accuracy, ece,
citation_coverage, named_uncited, mean_rounds, mean_llm_calls, mean_prompt_tokens,
mean_completion_tokens, mean_reasoning_tokens, cache_hit_rate, mean_cost_usd, total_cost_usd, mean_latency_ms, time_accuracy, crashes, ...).

:func:`intent_table` and :func:`failure_table` are the per-intent (per question form) view the
paraphrase and forms corpora are judged by: n, coverage, selective accuracy, F1 over the sets on
answerable questions, exact match, abstention precision and recall, suggestion recall (misspelt
names), time read right, citation coverage, with ``-`` where a figure is undefined; and every question a system got
wrong, with its phrasing template, its gold finding and the answer's ``result``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.metrics import calibration_bins

__all__ = [
    "INTENT_COLUMNS",
    "failure_table",
    "fmt",
    "intent_table",
    "markdown_table",
    "plot_calibration",
    "plot_f1_by_type",
    "write_report",
]

COLUMNS = (
    ("n", "n"),
    ("f1", "F1"),
    ("precision", "P"),
    ("recall", "R"),
    ("exact_match", "EM"),
    ("evidence_recall", "ev. recall"),
    ("abstention_precision", "abst. P"),
    ("abstention_recall", "abst. R"),
    ("coverage", "coverage"),
    ("selective_accuracy", "sel. acc"),
    ("citation_coverage", "cit. cov."),
    ("mean_rounds", "rounds"),
    ("mean_llm_calls", "LLM calls"),
    ("mean_syntheses", "syntheses"),
    ("mean_prompt_tokens", "prompt tok"),
    ("mean_completion_tokens", "compl. tok"),
    ("mean_reasoning_tokens", "reason. tok"),
    ("cache_hit_rate", "cache hit"),
    ("total_cost_usd", "cost USD"),
    ("mean_latency_ms", "latency ms"),
)


INTENT_COLUMNS = (
    ("n", "n"),
    ("n_answerable", "answerable"),
    ("coverage", "coverage"),
    ("selective_accuracy", "sel. acc"),
    ("f1", "F1 (sets)"),
    ("exact_match", "EM"),
    ("abstention_precision", "abst. P"),
    ("abstention_recall", "abst. R"),
    ("suggestion_recall", "suggest R"),
    ("time_accuracy", "time read"),
    ("citation_coverage", "cit. cov."),
    ("crashes", "crashes"),
)


def fmt(value: Any, *, missing: str = "n/a") -> str:
    """A table cell: ``missing`` for undefined, 2 decimals for ratios, 1 for latencies."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def _cell(key: str, value: Any, missing: str) -> str:
    # Dollar figures of a run are fractions of a cent per question: show them to the micro-dollar.
    if key.endswith("_usd") and isinstance(value, float):
        return f"{value:.6f}"
    return fmt(value, missing=missing)


def markdown_table(
    rows: Sequence[tuple[str, Mapping[str, Any]]],
    columns: Sequence[tuple[str, str]] = COLUMNS,
    *,
    missing: str = "n/a",
) -> str:
    """A Markdown table: one row per (label, summary); ``missing`` stands for an undefined figure."""
    head = "| system | " + " | ".join(title for _, title in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    body = [
        f"| {label} | " + " | ".join(_cell(k, s.get(k), missing) for k, _ in columns) + " |"
        for label, s in rows
    ]
    return "\n".join([head, rule, *body])


def intent_table(
    by_intent: Mapping[str, Mapping[str, Mapping[str, Any]]],
    overall: Mapping[str, Mapping[str, Any]],
    system: str,
) -> str:
    """One row per intent (and an ``all`` row) for ``system``, in :data:`INTENT_COLUMNS`; ``-``
    where a figure is undefined (no answers, no abstain questions, no misspelt names ...)."""
    rows = [(intent, per[system]) for intent, per in sorted(by_intent.items()) if system in per]
    rows.append(("**all**", overall[system]))
    return markdown_table(rows, INTENT_COLUMNS, missing="-").replace("| system |", "| intent |", 1)


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failure_table(questions: Sequence[Mapping[str, Any]], system: str) -> tuple[int, str]:
    """The questions ``system`` got wrong (not an exact match, or time misread): count and table."""
    head = "| id | intent | type | template | question | gold | got |\n|---|---|---|---|---|---|---|"
    lines = [head]
    for q in questions:
        r = q["results"].get(system)
        if r is None or (r["exact_match"] and r.get("time_ok") is not False):
            continue
        expect = q["expect"]
        gold = "(abstain)" if expect["abstain"] else ", ".join(expect.get("lessons") or expect["concepts"])
        gold = _finding_text(expect.get("finding")) + gold
        if expect.get("suggest"):
            gold += f" (suggest {', '.join(expect['suggest'])})"
        if r.get("crashed"):
            got = f"crashed: {r.get('error')}"
        elif r["abstained"]:
            got = f"abstained: {r.get('abstain_reason') or r.get('error')}"
            if r.get("did_you_mean"):
                got += f" (did you mean {', '.join(r['did_you_mean'])})"
        elif expect.get("lessons"):
            got = ", ".join(r.get("cited_lessons") or r["cited"]) or "(nothing cited)"
        elif r.get("result") is not None:
            result = r["result"]
            got = _finding_text({k: result.get(k) for k in expect.get("finding") or {}})
            got += ", ".join(result.get("members") or ()) or "(no members)"
        else:
            result = r.get("result") or {}
            answer_set = r["cited"] if not result else result.get("members") or []
            got = (
                ", ".join(r.get("cited_lessons") or r["cited"])
                if expect.get("lessons")
                else ", ".join(answer_set)
            )
            got = got or "(nothing cited)"
        if r.get("time_ok") is False:
            got += f" [time read as {r.get('as_of_valid')}, asked {expect.get('as_of')}]"
        lines.append(
            f"| {q['id']} | {q.get('intent') or q['type']} | {q['type']} | {q.get('template') or ''} | "
            f"{_clip(q['question'])} | {_clip(gold)} | {_clip(got)} |"
        )
    return len(lines) - 1, "\n".join(lines)


def _finding_text(finding: Mapping[str, Any] | None) -> str:
    """``holds=true; `` for a finding (JSON spelling of values), empty for none."""
    if not finding:
        return ""
    return "; ".join(f"{k}={json.dumps(v)}" for k, v in finding.items()) + "; "


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_f1_by_type(by_type: Mapping[str, Mapping[str, Mapping[str, Any]]], path: Path) -> Path:
    """Grouped bars: F1 (abstention recall for abstain-only types) per question type and system."""
    plt = _plt()
    types = sorted(by_type)
    systems = sorted({s for t in types for s in by_type[t]})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(types)), 4))
    width = 0.8 / max(1, len(systems))
    for i, system in enumerate(systems):
        vals = []
        for t in types:
            s = by_type[t].get(system, {})
            v = s.get("f1")
            vals.append(float(v if v is not None else (s.get("abstention_recall") or 0.0)))
        ax.bar([j + i * width for j in range(len(types))], vals, width, label=system)
    ax.set_xticks([j + width * (len(systems) - 1) / 2 for j in range(len(types))])
    ax.set_xticklabels(types, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1 (abstention recall for unanswerable)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_calibration(
    confidences: Sequence[float], correct: Sequence[bool], path: Path, *, title: str
) -> Path:
    """A reliability diagram: accuracy against mean confidence per bin, with the diagonal."""
    plt = _plt()
    bins = calibration_bins(confidences, correct)
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    ax.bar(
        [float(b["lo"]) for b in bins],
        [float(b["accuracy"]) for b in bins],
        width=0.1,
        align="edge",
        alpha=0.6,
        edgecolor="black",
        label="accuracy per bin",
    )
    ax.plot(
        [float(b["confidence"]) for b in bins],
        [float(b["accuracy"]) for b in bins],
        "o-",
        label="(confidence, accuracy)",
    )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("confidence")
    ax.set_ylabel("exact-match accuracy")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(out: Path, report: Mapping[str, Any], *, markdown: str) -> None:
    """Write ``report.json`` and ``report.md`` into ``out`` (created if needed)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    (out / "report.md").write_text(markdown, encoding="utf-8")
