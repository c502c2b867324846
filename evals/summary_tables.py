"""The summary tables the docs quote, built from the reports the evaluations and benchmarks write.

Pure: a report (the JSON a run wrote, as a dict) in, a Markdown table out. :mod:`evals.report_all`
runs everything and gathers these tables into one ``SUMMARY.md``; each docs page copies the table
it needs from there, with the command that rebuilds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evals.report import fmt

__all__ = [
    "breakdown_table",
    "corpus_row",
    "corpus_table",
    "group_shares",
    "import_table",
    "machine_line",
    "reuse_table",
    "serving_table",
    "systems_table",
]


def _num(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cells(values: Sequence[Any]) -> str:
    return "| " + " | ".join(str(v) for v in values) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "---") -> str:
    return "\n".join([_cells(header), "|" + f"{align}|" * len(header), *(_cells(r) for r in rows)])


def machine_line(machine: Mapping[str, Any], load: tuple[float, float]) -> str:
    """One line saying what the figures were measured on, and how busy it was."""
    return (
        f"{machine['nproc']} CPUs ({machine['cpu']}), {machine['ram_gb']} GB RAM, {machine['platform']}, "
        f"Python {machine['python']}, SQLite {machine['sqlite']}, SQLAlchemy {machine['sqlalchemy']}; "
        f"load average {load[0]:.1f} at the start, {load[1]:.1f} at the end"
    )


def systems_table(report: Mapping[str, Any]) -> str:
    """``kg eval`` with several systems: one row per system. F1, exact match and evidence recall
    over the answerable questions; abstention precision and recall, coverage, model calls (0 offline), synthesis steps and
    citation coverage over all of them."""
    summary = report["summary"]
    rows = []
    for system in report["meta"]["systems"]:
        a, o = summary["answerable"][system], summary["overall"][system]
        m = summary["multi_hop"][system]
        rows.append(
            (
                system,
                fmt(a["f1"]),
                fmt(a["exact_match"]),
                fmt(a["evidence_recall"]),
                fmt(m["f1"]),
                fmt(o["abstention_precision"]),
                fmt(o["abstention_recall"]),
                fmt(o["coverage"]),
                fmt(o["mean_llm_calls"]),
                fmt(o.get("mean_syntheses")),
                fmt(o["citation_coverage"]),
            )
        )
    header = (
        "system",
        f"F1 ({a['n']} answerable)",
        "EM",
        "evidence recall",
        f"multi-hop F1 ({m['n']})",
        f"abst. P ({o['n']} all)",
        "abst. R",
        "coverage",
        "LLM calls / question",
        "syntheses / question",
        "citation coverage",
    )
    return _table(header, rows)


def corpus_row(report: Mapping[str, Any], system: str = "loop") -> dict[str, Any]:
    """One question file's figures for ``system``: questions, coverage, selective accuracy, wrong
    answers, F1 over the answerable questions, abstention precision and recall, and recall on the
    questions naming a concept the graph does not have (``type: unanswerable``)."""
    summary = report["summary"]
    overall, answerable = summary["overall"][system], summary["answerable"][system]
    unknown = summary["by_type"].get("unanswerable", {}).get(system)
    wrong = sum(
        1
        for q in report["questions"]
        if not q["results"][system]["abstained"] and not q["results"][system]["exact_match"]
    )
    return {
        "n": overall["n"],
        "coverage": overall["coverage"],
        "selective_accuracy": overall["selective_accuracy"],
        "wrong": wrong,
        "f1": answerable["f1"],
        "abstention_precision": overall["abstention_precision"],
        "abstention_recall": overall["abstention_recall"],
        "unknown_recall": None if unknown is None else unknown["abstention_recall"],
        "unknown_n": 0 if unknown is None else unknown["n"],
        "time_accuracy": overall["time_accuracy"],
    }


def corpus_table(rows: Sequence[tuple[str, str, Mapping[str, Any]]]) -> str:
    """(graph, split, :func:`corpus_row`) rows as one table."""
    header = (
        "graph",
        "split",
        "n",
        "coverage",
        "sel. acc",
        "wrong",
        "F1 (answerable)",
        "abst. P",
        "abst. R",
        "abst. R unknown (n)",
        "time read",
    )
    body = [
        (
            graph,
            split,
            r["n"],
            fmt(r["coverage"]),
            _num(r["selective_accuracy"], 3),
            r["wrong"],
            _num(r["f1"], 3),
            fmt(r["abstention_precision"]),
            fmt(r["abstention_recall"]),
            f"{fmt(r['unknown_recall'])} ({r['unknown_n']})",
            fmt(r["time_accuracy"]),
        )
        for graph, split, r in rows
    ]
    return _table(header, body)


def group_shares(
    report: Mapping[str, Any], group_of: Mapping[str, str], system: str = "loop"
) -> dict[str, Any]:
    """Per group (``group_of``: question id -> group; questions it leaves out are not counted): the
    questions, the share answered (coverage) and the share of answers that are exact (selective
    accuracy, None when none was answered)."""
    out: dict[str, dict[str, Any]] = {}
    for q in report["questions"]:
        group = group_of.get(q["id"])
        if group is None:
            continue
        result = q["results"][system]
        g = out.setdefault(group, {"n": 0, "answered": 0, "exact": 0})
        g["n"] += 1
        if not result["abstained"]:
            g["answered"] += 1
            g["exact"] += bool(result["exact_match"])
    return {
        group: {
            "n": g["n"],
            "coverage": g["answered"] / g["n"],
            "selective_accuracy": g["exact"] / g["answered"] if g["answered"] else None,
        }
        for group, g in out.items()
    }


def breakdown_table(first: str, runs: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]]) -> str:
    """One row per group (a question type, a name style), one column per run (a split): coverage /
    selective accuracy (questions); ``runs`` are (label, {group: figures with n, coverage,
    selective_accuracy}), e.g. a report's ``summary.by_type`` for one system or
    :func:`group_shares`."""
    groups = sorted({g for _, by in runs for g in by})

    def cell(s: Mapping[str, Any] | None) -> str:
        if s is None:
            return "-"
        return f"{fmt(s['coverage'])} / {fmt(s['selective_accuracy'], missing='-')} ({s['n']})"

    return _table(
        (first, *(label for label, _ in runs)), [(g, *(cell(by.get(g)) for _, by in runs)) for g in groups]
    )


# A column of a per-run table: its header and how to read its cell from a run's report.
Column = tuple[str, Callable[[Mapping[str, Any]], Any]]


def _runs_table(first: str, columns: Sequence[Column], runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    return _table(
        (first, *(h for h, _ in columns)), [(label, *(get(r) for _, get in columns)) for label, r in runs]
    )


def _key(name: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r[name]


REUSE: tuple[Column, ...] = (
    ("asks", _key("asks")),
    ("model calls", _key("model_calls")),
    ("without reuse", _key("model_calls_without_reuse")),
    ("rounds / question", _key("rounds_per_question")),
    ("target (2 x questions x rounds)", _key("target")),
    ("reused", _key("reused")),
    ("stale", _key("stale")),
    ("asked afresh after the change", _key("afresh_after_change")),
)
SERVING: tuple[Column, ...] = (
    ("workers", _key("workers")),
    ("clients", _key("clients")),
    ("requests", _key("requests")),
    ("200", lambda r: r["status"].get("200", 0)),
    ("429", lambda r: r["status"].get("429", 0)),
    ("errors", _key("failures")),
    ("req/s", _key("requests_per_s")),
    ("p50 ms", lambda r: r["latency_ms"]["all"]["p50"]),
    ("p99 ms", lambda r: r["latency_ms"]["all"]["p99"]),
    ("reused", _key("reused_answers")),
    ("gateway calls", _key("gateway_calls")),
    ("limits exact", lambda r: "yes" if all(r["checks"].values()) else "NO"),
)


def reuse_table(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """``python -m evals.reuse_mix`` per engine: model calls against the target and stale answers."""
    return _runs_table("engine", REUSE, runs)


def serving_table(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """``tests/serving_load.py`` runs: status counts, latency and whether every limit check held."""
    return _runs_table("run", SERVING, runs)


def import_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """``python -m evals.bench_import``: import against a raw insert of the same rows, each its
    own process, with its peak RSS."""
    header = (
        "edges",
        "rows",
        "raw s",
        "raw rows/s",
        "import s",
        "import rows/s",
        "import / raw",
        "import peak RSS MB",
        "raw peak RSS MB",
    )
    body = [
        (
            f"{r['edges']:,}",
            f"{r['rows']:,}",
            r["raw"]["seconds"],
            f"{r['raw']['rows_per_s']:,}",
            r["import"]["seconds"],
            f"{r['import']['rows_per_s']:,}",
            f"{r['import']['rows_per_s'] / r['raw']['rows_per_s']:.2f}",
            r["import"]["peak_rss_mb"],
            r["raw"]["peak_rss_mb"],
        )
        for r in rows
    ]
    return _table(header, body)
