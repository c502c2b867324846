"""The question-set format: JSON Lines, one question per line.

Each line is an object::

    {"id": "q001", "question": "What must I master before RAG?", "type": "needed_before",
     "expect": {"concepts": ["llm_basics", ...], "abstain": false},
     "as_of": "2025-01-01", "known_at": "2025-07-01T00:00:00Z"}

``as_of`` (valid time) and ``known_at`` (recorded time) are optional ISO 8601 times handed to the
system; missing means now. ``expect.concepts`` is the gold set of concept ids the answer should
cite; it is empty when ``expect.abstain`` is true (the only correct response is to abstain).

Optional fields (the paraphrase corpus uses them; older files leave them out):

* ``intent``: what the question asks (``prerequisites``, ``needed_before``, ``dependents``, ...;
  see docs/evals.md); defaults to ``type``. ``type`` stays the reporting category
  (``temporal``, ``unanswerable``, ``bad_input``, ``absent_relation`` or the intent itself).
* ``template``: the id of the phrasing template the question was instantiated from.
* ``expect.lessons``: the gold set of lesson ids, for questions whose answer is lessons.
* ``expect.as_of`` / ``expect.as_of_end``: the valid time the question's own words mean
  ("back in 2018"), as a window ``[as_of, as_of_end)`` (``as_of_end`` defaults to one day later).
  Gold was computed at that time. Unlike top-level ``as_of`` it is NOT handed to the system: the
  system must read the time from the words; the scorer checks the time it says it used.
* ``expect.match``: ``exact`` (default: the cited set must equal the gold set) or ``contains``
  (the gold ids must be among the cited ones; for "tell me about X").
* ``expect.finding``: what the answer's ``result`` must say besides its concept set, an object
  with one or more of ``holds`` (true/false), ``direct`` (true/false), ``count`` (an integer >= 0),
  ``first`` (a concept id or null) and ``how`` (``path``, ``shared_foundations``, ``direct`` or
  ``none``); each key must equal the answer's ``result`` key for an exact match (the question
  forms: check, count, why, order, relate; docs/evals.md, "Question forms corpus").
* ``expect.suggest``: concept ids the system should offer ("did you mean ...") when it abstains
  because a name is misspelt; only on a question that must be abstained on.
* ``expect.set_aside``: ``true`` when the right answer answers the graph question AND says it set
  aside a part it could not answer (an off-topic aside or second request: "... Also, any tips for
  finals week?"); the gold is the graph part's answer. Such an answer is an exact match only if its
  top-level ``set_aside`` list (the parts of the question it did not answer, as text) is non-empty,
  besides the usual set and finding match (:mod:`evals.metrics`). ``false`` (the default) asks
  nothing of that list. Only on a question that is answered (``expect.abstain`` false).
* ``expect.one_of``, ``expect.unmet``, ``expect.requirements`` (a graph with requirement groups,
  docs/control-plane.md "Requirements with alternatives"): the group a check's concept is one of
  the ways to meet (a group id); the groups a readiness or "what is left" question leaves unmet,
  and the groups a prerequisites or needed-before answer must list (lists of group ids, possibly
  empty). Each, when given, must equal the answer's ``result`` key (:mod:`evals.metrics`); only
  on a question that is answered.
* ``question`` may be empty or blank only for a ``bad_input`` question that must be abstained on.
* ``corpus``: which corpus the question belongs to, in a file that holds several (``paraphrase``
  or ``forms`` in ``evals/questions/{graph}_{split}.jsonl.gz``); ``round``: the blind round a
  holdout question was written in (an integer >= 1). ``kg eval --corpus/--round`` select by them
  (:func:`select`).

A file whose name ends in ``.gz`` is gzip-compressed JSON Lines; it is read and written the same
way otherwise.

An answerable question (``expect.abstain`` false) needs at least one gold concept, lesson or
finding. Every malformed field is refused with an ``InputError`` naming it.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from data_plane.clock import parse_time
from data_plane.errors import InputError

__all__ = [
    "FINDINGS",
    "HOWS",
    "MATCHES",
    "Question",
    "dump_questions",
    "load_questions",
    "parse_question",
    "read_rows",
    "read_text",
    "select",
    "write_or_check",
    "write_text",
]

MATCHES = ("exact", "contains")
HOWS = ("path", "shared_foundations", "direct", "none")
"""How two concepts can be related (the ``how`` of a relate answer), in the order gold tries them."""

Finding = tuple[tuple[str, Any], ...]


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_first(v: Any) -> bool:
    return v is None or (isinstance(v, str) and bool(v))


FINDINGS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "holds": (_is_bool, "true or false"),
    "direct": (_is_bool, "true or false"),
    "count": (_is_count, "an integer >= 0"),
    "first": (_is_first, "a concept id or null"),
    "how": (lambda v: v in HOWS, f"one of {HOWS}"),
}
"""The ``result`` keys a question's ``expect.finding`` may name, with the values each may take."""


@dataclass(frozen=True)
class Question:
    """One evaluation question with its gold answer."""

    id: str
    question: str
    type: str
    concepts: tuple[str, ...]
    abstain: bool
    as_of: str | None = None
    known_at: str | None = None
    intent: str | None = None
    template: str | None = None
    lessons: tuple[str, ...] = ()
    expect_as_of: str | None = None
    expect_as_of_end: str | None = None
    match: str = "exact"
    finding: Finding = ()
    suggest: tuple[str, ...] = ()
    corpus: str | None = None
    round: int | None = None
    set_aside: bool = False
    one_of: str | None = None
    unmet: tuple[str, ...] | None = None
    requirements: tuple[str, ...] | None = None

    @property
    def findings(self) -> dict[str, Any]:
        """``expect.finding`` as a dict (empty when the question names none)."""
        return dict(self.finding)

    @property
    def asks(self) -> str:
        """The intent, falling back to the type for question sets written before intents."""
        return self.intent or self.type

    @property
    def time_window(self) -> tuple[datetime, datetime] | None:
        """The valid-time window the question's words mean, if they name one."""
        if self.expect_as_of is None:
            return None
        start = parse_time(self.expect_as_of, field="expect.as_of")
        if self.expect_as_of_end is None:
            return start, start + timedelta(days=1)
        return start, parse_time(self.expect_as_of_end, field="expect.as_of_end")

    @property
    def as_of_time(self) -> datetime | None:
        return None if self.as_of is None else parse_time(self.as_of, field="as_of")

    @property
    def known_at_time(self) -> datetime | None:
        return None if self.known_at is None else parse_time(self.known_at, field="known_at")

    def to_dict(self) -> dict[str, Any]:
        expect: dict[str, Any] = {"concepts": list(self.concepts)}
        if self.lessons:
            expect["lessons"] = list(self.lessons)
        if self.finding:
            expect["finding"] = self.findings
        if self.one_of is not None:
            expect["one_of"] = self.one_of
        for name in ("unmet", "requirements"):
            if (ids := getattr(self, name)) is not None:
                expect[name] = list(ids)
        if self.suggest:
            expect["suggest"] = list(self.suggest)
        if self.set_aside:
            expect["set_aside"] = True
        expect["abstain"] = self.abstain
        if self.expect_as_of is not None:
            expect["as_of"] = self.expect_as_of
        if self.expect_as_of_end is not None:
            expect["as_of_end"] = self.expect_as_of_end
        if self.match != "exact":
            expect["match"] = self.match
        out: dict[str, Any] = {"id": self.id, "question": self.question, "type": self.type}
        if self.intent is not None:
            out["intent"] = self.intent
        if self.template is not None:
            out["template"] = self.template
        out["expect"] = expect
        if self.as_of is not None:
            out["as_of"] = self.as_of
        if self.known_at is not None:
            out["known_at"] = self.known_at
        if self.corpus is not None:
            out["corpus"] = self.corpus
        if self.round is not None:
            out["round"] = self.round
        return out

    def to_line(self) -> str:
        """The question as one JSON Lines record (no newline)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _text(obj: dict[str, Any], name: str, where: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: {name!r} must be non-empty text", field=name, value=value)
    return value


def parse_question(obj: Any, *, where: str = "question") -> Question:
    """Validate one decoded JSON object; raises InputError naming the field."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object", value=obj)
    expect = obj.get("expect")
    if not isinstance(expect, dict):
        raise InputError(f"{where}: 'expect' must be an object", field="expect", value=expect)
    concepts = expect.get("concepts", [])
    if not isinstance(concepts, list) or not all(isinstance(c, str) and c for c in concepts):
        raise InputError(f"{where}: expect.concepts must be a list of ids", field="expect.concepts")
    lessons = expect.get("lessons", [])
    if not isinstance(lessons, list) or not all(isinstance(c, str) and c for c in lessons):
        raise InputError(f"{where}: expect.lessons must be a list of lesson ids", field="expect.lessons")
    abstain = expect.get("abstain", False)
    if not isinstance(abstain, bool):
        raise InputError(f"{where}: expect.abstain must be true or false", field="expect.abstain")
    finding = _finding(expect, where)
    suggest = expect.get("suggest", [])
    if not isinstance(suggest, list) or not all(isinstance(c, str) and c for c in suggest):
        raise InputError(f"{where}: expect.suggest must be a list of concept ids", field="expect.suggest")
    if suggest and not abstain:
        raise InputError(
            f"{where}: expect.suggest is only for a question that must be abstained on",
            field="expect.suggest",
        )
    set_aside = expect.get("set_aside", False)
    if not isinstance(set_aside, bool):
        raise InputError(f"{where}: expect.set_aside must be true or false", field="expect.set_aside")
    if set_aside and abstain:
        raise InputError(
            f"{where}: expect.set_aside is only for a question that is answered (abstain false)",
            field="expect.set_aside",
        )
    one_of, unmet, requirements = _groups(expect, abstain, where)
    if not abstain and not (concepts or lessons or finding or one_of or unmet or requirements):
        raise InputError(
            f"{where}: an answerable question needs at least one gold concept, lesson, finding or group",
            field="expect.concepts",
        )
    match = expect.get("match", "exact")
    if match not in MATCHES:
        raise InputError(f"{where}: expect.match must be one of {MATCHES}", field="expect.match", value=match)
    times = {name: _time(obj, name, where) for name in ("as_of", "known_at")}
    qtype = _text(obj, "type", where)
    text = obj.get("question")
    if not (abstain and qtype == "bad_input" and isinstance(text, str)):
        text = _text(obj, "question", where)
    intent, template, corpus = obj.get("intent"), obj.get("template"), obj.get("corpus")
    for name, value in (("intent", intent), ("template", template), ("corpus", corpus)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"{where}: {name!r} must be non-empty text", field=name, value=value)
    blind = obj.get("round")
    if blind is not None and not (_is_count(blind) and blind >= 1):
        raise InputError(f"{where}: 'round' must be an integer >= 1", field="round", value=blind)
    return Question(
        id=_text(obj, "id", where),
        question=text,
        type=qtype,
        concepts=tuple(dict.fromkeys(concepts)),
        abstain=abstain,
        as_of=times["as_of"],
        known_at=times["known_at"],
        intent=intent,
        template=template,
        lessons=tuple(dict.fromkeys(lessons)),
        expect_as_of=_time(expect, "as_of", where, prefix="expect."),
        expect_as_of_end=_time(expect, "as_of_end", where, prefix="expect."),
        match=match,
        finding=finding,
        suggest=tuple(dict.fromkeys(suggest)),
        corpus=corpus,
        round=blind,
        set_aside=set_aside,
        one_of=one_of,
        unmet=unmet,
        requirements=requirements,
    )


def _groups(
    expect: dict[str, Any], abstain: bool, where: str
) -> tuple[str | None, tuple[str, ...] | None, tuple[str, ...] | None]:
    """``expect.one_of`` (a group id), ``expect.unmet`` and ``expect.requirements`` (lists of group
    ids), each None when absent; only on a question that is answered."""
    given = [name for name in ("one_of", "unmet", "requirements") if name in expect]
    if given and abstain:
        raise InputError(
            f"{where}: expect.{given[0]} is only for a question that is answered (abstain false)",
            field=f"expect.{given[0]}",
        )
    one_of = expect.get("one_of")
    if one_of is not None and not (isinstance(one_of, str) and one_of):
        raise InputError(f"{where}: expect.one_of must be a group id", field="expect.one_of", value=one_of)
    lists: dict[str, tuple[str, ...] | None] = {}
    for name in ("unmet", "requirements"):
        ids = expect.get(name)
        if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) and i for i in ids)):
            raise InputError(f"{where}: expect.{name} must be a list of group ids", field=f"expect.{name}")
        lists[name] = None if ids is None else tuple(dict.fromkeys(ids))
    return one_of, lists["unmet"], lists["requirements"]


def _finding(expect: dict[str, Any], where: str) -> Finding:
    raw = expect.get("finding")
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise InputError(
            f"{where}: expect.finding must be an object naming at least one result key",
            field="expect.finding",
            value=raw,
        )
    for key, value in raw.items():
        if key not in FINDINGS:
            raise InputError(
                f"{where}: expect.finding.{key} is not a result key (one of {', '.join(FINDINGS)})",
                field="expect.finding",
                value=key,
            )
        valid, what = FINDINGS[key]
        if not valid(value):
            raise InputError(
                f"{where}: expect.finding.{key} must be {what}", field=f"expect.finding.{key}", value=value
            )
    return tuple(raw.items())


def _time(obj: dict[str, Any], name: str, where: str, *, prefix: str = "") -> str | None:
    raw = obj.get(name)
    if raw is not None:
        if not isinstance(raw, str):
            raise InputError(
                f"{where}: {prefix}{name!r} must be an ISO 8601 string", field=prefix + name, value=raw
            )
        parse_time(raw, field=prefix + name)
    return raw


def read_text(path: str | Path) -> str:
    """The text of a JSON Lines file, decompressed when its name ends in ``.gz``."""
    data = Path(path).read_bytes()
    return (gzip.decompress(data) if Path(path).suffix == ".gz" else data).decode("utf-8")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """A JSON Lines file's objects (blank lines skipped; gzip when named ``*.gz``)."""
    return [json.loads(line) for line in read_text(path).splitlines() if line.strip()]


def write_text(path: str | Path, text: str) -> None:
    """Write JSON Lines ``text``, gzip-compressed when the name ends in ``.gz``: no file name and
    no time stamp in the header, so the same text gives the same bytes with the same zlib."""
    data = text.encode("utf-8")
    if Path(path).suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    Path(path).write_bytes(data)


def write_or_check(files: Mapping[Path, str], *, check: bool, script: str) -> int:
    """A builder's last step: write each file whose text changed (saying how many questions each
    holds), or, with ``check``, only say which committed files differ (exit status 1) and that
    ``script`` rebuilds them."""
    stale = [p.name for p, text in files.items() if not p.exists() or read_text(p) != text]
    if check:
        print(f"stale: {', '.join(stale)}: rerun {script}" if stale else "up to date")
        return 1 if stale else 0
    for path, text in files.items():
        if path.name in stale:
            write_text(path, text)
        print(f"{path}: {text.count(chr(10))} questions")
    return 0


def load_questions(path: str | Path) -> list[Question]:
    """Read a JSON Lines question set (gzip when named ``*.gz``); blank lines are skipped, ids must
    be unique."""
    path = Path(path)
    try:
        lines = read_text(path).splitlines()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:  # unreadable, or not gzip/UTF-8
        why = getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot read question set {path}: {why}", field="questions") from exc
    out: list[Question] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: not valid JSON ({exc.msg})", field="questions") from exc
        q = parse_question(obj, where=where)
        if q.id in seen:
            raise InputError(f"{where}: duplicate question id {q.id!r}", field="id", value=q.id)
        seen.add(q.id)
        out.append(q)
    return out


def dump_questions(questions: Iterable[Question], path: str | Path) -> None:
    """Write questions as JSON Lines (stable key order, one per line; gzip when named ``*.gz``)."""
    write_text(path, "".join(q.to_line() + "\n" for q in questions))


def select(
    questions: Sequence[Question], *, corpus: str | None = None, round: int | None = None
) -> list[Question]:
    """The questions of ``corpus`` and blind ``round`` (None: any), in their order."""
    return [
        q for q in questions if (corpus is None or q.corpus == corpus) and (round is None or q.round == round)
    ]
