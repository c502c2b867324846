"""What a change does to recorded answers.

:func:`touching` lists the recorded answers that cited or read any version of some facts (a
concept, an edge, a lesson or a lesson link): *cited*, when the answer's evidence cites it;
*read*, when the answer gathered it or, as its reuse entry records (``data_plane.reuse.Reads``),
read a neighbourhood or the lesson links it belongs to. :func:`impact` replays them and groups
them by how they changed (:data:`CHANGES`), as ``kg audit replay`` compares an answer as it was
known with the same question asked now. :func:`rehearse` is a write's dry run: what the writes
would write, and which of the answers touching the facts they change would answer differently
once they are written (each asked now before, and now after, the rehearsed writes, which are
then rolled back: nothing is written).

Replays cost what asking costs (model calls with DeepSeek), so at most :data:`MAX_REPLAYS`
answers are replayed, newest first; the rest are listed as not replayed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from control_plane.planning.answer import Answer
from control_plane.planning.loop import Planner
from control_plane.planning.replay import compare
from control_plane.synthesizers.base import Synthesizer
from data_plane.clock import Clock, format_time, parse_time, utc_now
from data_plane.errors import InputError, NotFound
from data_plane.gateway import BatchResult, Write, WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import Version
from data_plane.relations import canonical_edge
from data_plane.reuse import AnswerIndex, Reads
from data_plane.temporal import AsOf

__all__ = ["CHANGES", "MAX_REPLAYS", "Impact", "Touched", "fact", "impact", "rehearse", "touching"]

Fact = tuple[str, tuple[str, ...]]
"""``(table, key)`` of a fact: ``("concepts", (id,))``, ``("concept_edges", (s, t, relation))``,
``("lessons", (id,))`` or ``("lesson_concepts", (lesson, concept))``."""

# How a replayed answer changed, most serious first.
CHANGES: Final = ("now abstains", "now answers", "answer changed", "evidence changed", "unchanged")
MAX_REPLAYS: Final = 20
_PAGE: Final = 500


def fact(text: str) -> Fact:
    """A fact named as the command line names it: ``source>relation>target`` (an edge),
    ``lesson/concept`` (a lesson link), ``lesson:ID`` (a lesson) or a concept id."""
    text = text.strip()
    if ">" in text:
        parts = text.split(">")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise InputError(f"edge {text!r} must be source>relation>target", field="key", value=text)
        s, r, t = (p.strip() for p in parts)
        return ("concept_edges", canonical_edge(s, t, r))
    if text.startswith("lesson:") and text[7:].strip():
        return ("lessons", (text[7:].strip(),))
    if "/" in text:
        lesson, _, concept = text.partition("/")
        if not lesson.strip() or not concept.strip():
            raise InputError(f"lesson link {text!r} must be lesson/concept", field="key", value=text)
        return ("lesson_concepts", (lesson.strip(), concept.strip()))
    if not text:
        raise InputError("name a concept, an edge (source>relation>target) or a lesson link", field="key")
    return ("concepts", (text,))


def describe(f: Fact) -> str:
    table, key = f
    if table == "concept_edges":
        return f"{key[0]}>{key[2]}>{key[1]}"
    if table == "lessons":
        return f"lesson:{key[0]}"
    return "/".join(key)


@dataclass(frozen=True)
class Touched:
    """A recorded answer that cited (or read) one of the facts."""

    answer_id: str
    question: str
    created_at: str
    how: str  # "cited" or "read"
    facts: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_id": self.answer_id,
            "question": self.question,
            "created_at": self.created_at,
            "how": self.how,
            "facts": list(self.facts),
        }


def _edge_keys(items: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str, str]]:
    return {
        str(e.get("edge_id", "")): (e["source_id"], e["target_id"], e["relation"])
        for e in items
        if {"source_id", "target_id", "relation"} <= set(e)
    }


def _stamps(v: Version) -> tuple[Any, ...]:
    st = v.stamp
    return (st.valid_at, st.invalid_at, st.recorded_at, st.expired_at, st.op)


def _point(payload: Mapping[str, Any]) -> AsOf:
    at = payload["as_of"]
    return AsOf(parse_time(at["valid_at"], field="as_of"), parse_time(at["recorded_at"], field="known_at"))


def _how(f: Fact, payload: Mapping[str, Any], reads: Reads | None) -> str | None:
    """Whether an answer cited a fact, gathered it ("read"), or read where it lies ("region",
    from its reuse reads); None: neither."""
    table, key = f
    evidence = payload.get("evidence") or {}
    edges = _edge_keys(evidence.get("edges") or ())
    cited_edges = {edges[i] for i in payload.get("cited_edges") or () if i in edges}
    cited_concepts = {c.get("id") for c in payload.get("cited_concepts") or ()}
    gathered_concepts = {c.get("concept_id") for c in evidence.get("concepts") or ()}
    lessons = set(payload.get("cited_lessons") or ())
    expanded = reads.expanded if reads is not None else frozenset()
    if table == "concepts":
        cited, read = key[0] in cited_concepts, key[0] in gathered_concepts
        near = reads is not None and key[0] in expanded | reads.concepts
    elif table == "concept_edges":
        key3 = (key[0], key[1], key[2])
        cited, read = key3 in cited_edges, key3 in edges.values()
        near = bool({key[0], key[1]} & expanded)
    elif table == "lessons":
        cited, read, near = key[0] in lessons, False, False
    else:
        cited, read = key[0] in lessons and key[1] in cited_concepts, False
        near = reads is not None and key[1] in reads.lessons_of
    return "cited" if cited else ("read" if read else ("region" if near else None))


def _answers(reader: GraphReader) -> Iterator[Version]:
    """Every recorded answer (current versions), newest first, a page at a time."""
    before = None
    while True:
        page = reader.answers(limit=_PAGE, before=before)
        yield from page
        if len(page) < _PAGE:
            return
        before = (page[-1].stamp.recorded_at, page[-1].stamp.version_id)


def touching(reader: GraphReader, facts: Iterable[Fact], *, region: bool = False) -> list[Touched]:
    """The recorded answers that cited or read any version of ``facts``, newest first.

    An answer read a fact when it gathered it, or when the fact lies in what it read (a
    neighbourhood it expanded, the lesson links of a concept) and a version of it was in force
    at the answer's point. With ``region``, lying in what it read is enough: a new fact there
    (one a write would add) can change the answer too."""
    wanted = sorted(set(facts))
    reads = dict(AnswerIndex(reader).all_reads())
    histories: dict[Fact, list[Version]] = {}

    def held(f: Fact, point: AsOf) -> bool:
        if f not in histories:
            try:
                histories[f] = reader.history(*f)
            except NotFound:
                histories[f] = []
        return any(point.holds(*_stamps(h)) for h in histories[f])

    out: list[Touched] = []
    for v in _answers(reader):
        payload = v.content["payload"]
        point = _point(payload)
        found = []
        for f in wanted:
            how = _how(f, payload, reads.get(v.key[0]))
            if how == "region" and (region or held(f, point)):
                how = "read"
            if how in ("cited", "read"):
                found.append((f, how))
        if found:
            how = "cited" if any(h == "cited" for _, h in found) else "read"
            out.append(
                Touched(
                    v.key[0],
                    str(v.content["question"]),
                    format_time(v.stamp.recorded_at) or "",
                    how,
                    tuple(describe(f) for f, _ in found),
                )
            )
    return out


def change_of(before: Answer, after: Answer) -> str:
    """How ``after`` differs from ``before`` (one of :data:`CHANGES`)."""
    diff = compare(before, after)
    if after.abstained and not before.abstained:
        return "now abstains"
    if before.abstained and not after.abstained:
        return "now answers"
    if diff["answer_changed"] or diff["members"]["added"] or diff["members"]["removed"]:
        return "answer changed"
    edges = diff["evidence_edges"]
    if any(edges[k] for k in ("added_keys", "removed_keys", "revised_keys")):
        return "evidence changed"
    return "unchanged"


@dataclass
class Impact:
    """The answers touching some facts, and (when replayed) how each changed."""

    facts: list[str]
    touched: list[Touched]
    changes: dict[str, list[str]] | None = None  # change -> answer ids; None: not replayed
    not_replayed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"facts": self.facts, "answers": [t.to_dict() for t in self.touched]}
        if self.changes is not None:
            out["changes"] = {c: self.changes.get(c, []) for c in CHANGES}
            out["not_replayed"] = self.not_replayed
        return out

    def lines(self) -> list[str]:
        """For people: the answers, then (when replayed) the groups."""
        if not self.touched:
            return [f"no recorded answer cited or read {', '.join(self.facts)}"]
        lines = [f"{len(self.touched)} recorded answer(s) cited or read {', '.join(self.facts)}:"]
        questions = {t.answer_id: t.question for t in self.touched}
        lines += [f"  {t.answer_id}  {t.how:<5}  {t.created_at}  {t.question}" for t in self.touched]
        if self.changes is None:
            return lines
        for change in CHANGES:
            ids = self.changes.get(change, [])
            if ids:
                lines.append(f"{change} ({len(ids)}):")
                lines += [f"  {i}  {questions[i]}" for i in ids]
        if self.not_replayed:
            lines.append(f"not replayed (over {MAX_REPLAYS}): {len(self.not_replayed)}")
        return lines


def _replayed(
    touched: Sequence[Touched], ask: Callable[[Touched], tuple[Answer, Answer]]
) -> tuple[dict[str, list[str]], list[str]]:
    changes: dict[str, list[str]] = {}
    for t in touched[:MAX_REPLAYS]:
        before, after = ask(t)
        changes.setdefault(change_of(before, after), []).append(t.answer_id)
    return changes, [t.answer_id for t in touched[MAX_REPLAYS:]]


def impact(
    reader: GraphReader,
    facts: Sequence[Fact],
    *,
    synthesizer: Synthesizer | None = None,
    clock: Clock = utc_now,
) -> Impact:
    """The answers touching ``facts``; with a ``synthesizer``, each replayed: as it was known when
    it was answered, and asked now (as ``kg audit replay`` does), grouped by how it changed."""
    touched = touching(reader, facts)
    out = Impact([describe(f) for f in facts], touched)
    if synthesizer is None:
        return out
    planner = Planner(reader, synthesizer, clock=clock)

    def ask(t: Touched) -> tuple[Answer, Answer]:
        point = _point(reader.answer(t.answer_id).content["payload"])
        then = planner.ask(t.question, as_of=point.valid_at, known_at=point.recorded_at, record=False)
        return then, planner.ask(t.question, record=False)

    out.changes, out.not_replayed = _replayed(touched, ask)
    return out


def _facts_of(result: BatchResult) -> list[Fact]:
    return sorted({(v.table, v.key) for v in (*result.written, *result.kept, *result.cascaded)})


def rehearse(
    gateway: WriteGateway,
    reader: GraphReader,
    writes: Sequence[Write],
    synthesizer: Synthesizer,
    *,
    allow_duplicate_names: bool = False,
    clock: Clock = utc_now,
) -> tuple[BatchResult, Impact]:
    """A dry run of ``writes``: what they would write (checked, then rolled back) and which
    recorded answers touching what they change would answer differently now once written."""
    with gateway.rehearse(writes, allow_duplicate_names=allow_duplicate_names) as (result, _):
        facts = _facts_of(result)
    touched = touching(reader, facts, region=True)
    out = Impact([describe(f) for f in facts], touched)
    before = {
        t.answer_id: Planner(reader, synthesizer, clock=clock).ask(t.question, record=False)
        for t in touched[:MAX_REPLAYS]
    }
    after: dict[str, Answer] = {}
    with (
        gateway.rehearse(writes, allow_duplicate_names=allow_duplicate_names) as (_, conn),
        reader.pinned_to(conn),
    ):
        # A planner of its own: nothing it caches may outlive the rolled-back writes.
        planner = Planner(reader, synthesizer, clock=clock)
        after = {t.answer_id: planner.ask(t.question, record=False) for t in touched[:MAX_REPLAYS]}
    out.changes, out.not_replayed = _replayed(touched, lambda t: (before[t.answer_id], after[t.answer_id]))
    return result, out
