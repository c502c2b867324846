"""An answer as a terminal shows it: the answer first, then how it was read, one meta line, and the
evidence, each line wrapped to the terminal's width. Pure: from the ``answer/1`` payload to lines.

How much evidence (``--evidence``):

* ``none``: no evidence section;
* ``summary`` (the default): the counts, the cited edges one line each (by name) or, when they
  would not fit in :data:`SCREEN` lines with the rest, a compact list (the sources of one
  relation into one target on one line), and the options that show the full grounding. The whole
  output of an answer whose text fits stays within :data:`SCREEN` lines;
* ``cited``: the grounding of every cited edge and concept, grouped by what they share (reason,
  source, confidence), so a reason shared by thirty rows is written once;
* ``all``: the same for every edge gathered, the cited ones starred.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from control_plane.semantics.findings import LONG_SET
from control_plane.surfaces.cli.options import EvidenceShown
from control_plane.surfaces.wording import calls_text, counted

__all__ = ["MORE", "SCREEN", "answer_lines", "grounding_lines", "head_lines", "summary_lines"]

# The lines a default answer takes at most: it must fit a terminal without scrolling.
SCREEN: Final = 60
# What the summary says to see the full grounding.
MORE: Final = "grounding: --evidence cited · all gathered: --evidence all · page: --format html"
_INDENT: Final = "  "


def _wrap(text: str, width: int, *, indent: str = "", hang: str = "    ") -> list[str]:
    """``text`` wrapped to ``width``; words are never broken (a long id may overrun)."""
    return textwrap.wrap(
        text,
        width=max(width, 20),
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _fit(text: str, width: int) -> str:
    """One line, cut to ``width`` with an ellipsis."""
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def _joined(parts: Sequence[str], width: int, sep: str = " · ") -> list[str]:
    """``parts`` joined by ``sep``, broken into lines only between parts."""
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
        else:
            lines[-1] += sep.rstrip()
            lines.append(part)
    return lines


def head_lines(answer: Mapping[str, Any], width: int, *, model_calls: int) -> list[str]:
    """The answer (or the abstention and why), how the question was read, the names offered for a
    name that matched nothing, and one meta line."""
    if answer["abstained"]:
        lines = _wrap(f"Abstained: {answer.get('abstain_reason')}", width, hang="")
    else:
        lines = _wrap(f"Answer: {answer['text']}", width, hang="")
    lines += _rest(answer, width)
    reading = answer.get("reading") or {}
    if reading.get("read_as"):
        lines += _wrap(f"read as: {reading['read_as']}{_as_of(answer)}", width)
    offered = [f"{d['name']} ({d['id']})" for d in answer.get("did_you_mean") or ()]
    if offered and "did you mean" not in str(reading.get("read_as", "")):
        lines += _wrap(f"did you mean: {', '.join(offered)}?", width)
    synth = answer["synthesizer"]
    meta = [
        f"confidence {answer['confidence']:.2f}",
        counted(len(answer["rounds"]), "round"),
        calls_text(model_calls),
        f"synthesizer {synth['name']}",
        f"answer {answer['answer_id']}",
    ]
    if answer.get("reused_from"):
        meta.append(f"reused from {answer['reused_from']}")
    return lines + _joined(meta, width)


def _rest(answer: Mapping[str, Any], width: int) -> list[str]:
    """Where to read every member of an answer set too long to name (the text names the first)."""
    members = (answer.get("result") or {}).get("members") or ()
    if answer["abstained"] or len(members) <= LONG_SET:
        return []
    where = f"all {len(members):,}: --format json (result.members), or GET /answers/{answer['answer_id']}"
    return _wrap(where, width)


def _as_of(answer: Mapping[str, Any]) -> str:
    """ ", as of DATE" when the answer was asked about another valid time than when it was asked
    (``--as-of``, ``as_of``): the reading says what was asked, this line says when it was about."""
    valid = (answer.get("as_of") or {}).get("valid_at")
    if not valid or valid == answer.get("created_at"):
        return ""
    shown = valid.removesuffix("T00:00:00Z")
    return "" if shown in str((answer.get("reading") or {}).get("read_as", "")) else f", as of {shown}"


def _names(answer: Mapping[str, Any]) -> dict[str, str]:
    return {c["concept_id"]: str(c["name"]) for c in answer["evidence"]["concepts"]}


def _cited_edges(answer: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    cited = set(answer.get("cited_edges", []))
    return [e for e in answer["evidence"]["edges"] if e["edge_id"] in cited]


def _by_name(e: Mapping[str, Any], names: Mapping[str, str]) -> str:
    return f"{names.get(e['source_id'], e['source_id'])} -{e['relation']}-> {names.get(e['target_id'], e['target_id'])}"


def _compact(edges: Sequence[Mapping[str, Any]], names: Mapping[str, str], width: int) -> list[str]:
    """The edges as few lines: the sources of one relation into one target together."""
    into: dict[tuple[str, str], list[str]] = {}
    for e in edges:
        into.setdefault((e["target_id"], e["relation"]), []).append(names.get(e["source_id"], e["source_id"]))
    lines: list[str] = []
    for (target, relation), sources in into.items():
        lines += _wrap(
            f"{', '.join(sources)} -{relation}-> {names.get(target, target)}", width, indent=_INDENT
        )
    return lines


def _cited_groups(answer: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    cited = set(answer.get("cited_requirements", []))
    return [g for g in answer["evidence"].get("requirements", []) if g["group_id"] in cited]


def _group_line(g: Mapping[str, Any], names: Mapping[str, str]) -> str:
    options = " | ".join(" + ".join(names.get(c, c) for c in o) for o in g["options"])
    return f"{names.get(g['target_id'], g['target_id'])} needs {g['needs']} of: {options}"


def summary_lines(answer: Mapping[str, Any], width: int, room: int) -> list[str]:
    """The evidence in at most ``room`` lines (never fewer than three): the counts, the cited
    edges and requirement groups, and how to see their grounding."""
    edges = answer["evidence"]["edges"]
    groups = _cited_groups(answer)
    if not edges and not groups:
        return ["evidence: none"]
    cited = _cited_edges(answer)
    gathered = counted(len(edges), "edge")
    if not cited and not groups:
        return [f"evidence: nothing cited ({gathered} gathered: --evidence all)"]
    concepts = len(answer.get("cited_concepts", []))
    also = f", {counted(len(groups), 'requirement group')}" if groups else ""
    head = _wrap(
        f"Evidence: {counted(len(cited), 'edge')}{also} and {counted(concepts, 'concept')} cited, of {gathered} gathered",
        width,
    )
    more = _wrap(MORE, width)
    names = _names(answer)
    space = max(room - len(head) - len(more), 1)
    body = [_fit(f"{_INDENT}{g['ref']:<5} {_group_line(g, names)}", width) for g in groups]
    body += [_fit(f"{_INDENT}{e['edge_id']:<5} {_by_name(e, names)}", width) for e in cited]
    if len(body) > space:
        body = _compact(cited, names, width)
    if len(body) > space:
        shown = body[: space - 1]
        body = [*shown, f"{_INDENT}… and more: {counted(len(cited), 'cited edge')} in all (--evidence cited)"]
    return head + body + more


_Shared = dict[tuple[str, float], dict[str, list[tuple[str, str]]]]


def _shared(rows: Iterable[tuple[str, str, Mapping[str, Any]]]) -> _Shared:
    """Rows (kind, what to print, the grounded record) by source and confidence, then by reason,
    in order of first appearance."""
    out: _Shared = {}
    for kind, shown, record in rows:
        g = record["grounding"]
        reasons = out.setdefault((str(g["source"]), float(g["confidence"])), {})
        reasons.setdefault(str(g["reason"]), []).append((kind, shown))
    return out


def _reason_lines(reason: str, items: Sequence[tuple[str, str]], width: int) -> list[str]:
    """One reason and what it grounds: a lone row above its reason; a reason shared by several
    rows once, above them (edges one a line, concepts as one list)."""
    deep = _INDENT * 2 + "  "
    if len(items) == 1:
        return _wrap(items[0][1], width, indent=_INDENT) + _wrap(reason, width, indent=deep, hang="")
    lines = _wrap(reason, width, indent=_INDENT, hang="")
    edges = [shown for kind, shown in items if kind in ("edge", "requirement")]
    concepts = [shown for kind, shown in items if kind == "concept"]
    lines += [line for shown in edges for line in _wrap(shown, width, indent=deep)]
    if concepts:
        lines += _wrap(
            f"{counted(len(concepts), 'concept')}: {', '.join(concepts)}", width, indent=deep, hang="  "
        )
    return lines


def grounding_lines(answer: Mapping[str, Any], width: int, *, everything: bool) -> list[str]:
    """Every cited edge and concept (``everything``: every edge gathered, cited ones starred)
    with its grounding, grouped by what they share: a source and confidence once, and under it
    each reason once, with the edges (by key) and concepts it grounds."""
    edges = answer["evidence"]["edges"]
    groups = _cited_groups(answer)
    if not edges and not groups:
        return ["evidence: none"]
    cited = {e["edge_id"] for e in _cited_edges(answer)}
    names = _names(answer)
    rows: list[tuple[str, str, Mapping[str, Any]]]
    if everything:
        title = f"Evidence gathered: {counted(len(edges), 'edge')} (* cited)"
        rows = [
            ("edge", f"{e['edge_id']}{' *' if e['edge_id'] in cited else ''}  {e['key']}", e) for e in edges
        ]
    else:
        records = {c["concept_id"]: c for c in answer["evidence"]["concepts"]}
        concepts = [records[c["id"]] for c in answer.get("cited_concepts", []) if c["id"] in records]
        also = f"{counted(len(groups), 'requirement group')}, " if groups else ""
        title = (
            f"Evidence cited: {counted(len(cited), 'edge')}, {also}{counted(len(concepts), 'concept')} "
            f"({counted(len(edges), 'edge')} gathered: --evidence all)"
        )
        rows = [("requirement", f"{g['ref']}  {_group_line(g, names)}", g) for g in groups]
        rows += [("edge", f"{e['edge_id']}  {e['key']}", e) for e in edges if e["edge_id"] in cited]
        rows += [("concept", f"{c['name']} ({c['concept_id']})", c) for c in concepts]
    if not rows:
        return [f"evidence: nothing cited ({counted(len(edges), 'edge')} gathered: --evidence all)"]
    lines = _wrap(title, width)
    for (source, confidence), reasons in _shared(rows).items():
        lines.append("")
        lines += _wrap(f"from {source}, confidence {confidence:.2f}:", width)
        for reason, items in reasons.items():
            lines += _reason_lines(reason, items, width)
    return lines


def answer_lines(
    answer: Mapping[str, Any],
    *,
    width: int,
    evidence: EvidenceShown = EvidenceShown.summary,
    model_calls: int,
) -> list[str]:
    """The lines of ``answer`` for a terminal ``width`` columns wide (module docstring).
    ``model_calls``: what the answer's model calls are read as (older recordings counted offline
    syntheses)."""
    lines = head_lines(answer, width, model_calls=model_calls)
    if evidence is EvidenceShown.none:
        return lines
    if evidence is EvidenceShown.summary:
        return lines + summary_lines(answer, width, SCREEN - len(lines))
    return lines + grounding_lines(answer, width, everything=evidence is EvidenceShown.all)
