"""The paginated listings behind ``/concepts``, ``/edges``, ``/answers``, ``/snapshot`` and
``/diff`` (and the MCP tools of the same names): one function each, from (reader, filters, limit,
cursor) to (page body, next cursor).

Every walk is pinned to the point in time its first page was read at (the cursor carries it),
so paging through a graph that others are writing to yields each item exactly once and never
mixes two versions of the graph. ``/concepts`` and ``/answers`` page in SQL (keyset on the
concept id; on recorded time and version id); ``/edges`` pages one concept's neighbourhood;
``/snapshot`` and ``/diff`` read their (pinned) whole and return ``limit`` items of each section
per page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from control_plane.surfaces.lookup import listing
from control_plane.surfaces.pagination import Cursor, Section, keyset_sections
from data_plane.clock import ensure_utc, format_time, parse_time
from data_plane.errors import InputError
from data_plane.reads import DIFF_TABLES, GraphReader
from data_plane.records import Version
from data_plane.relations import RELATIONS
from data_plane.temporal import AsOf

__all__ = ["ConceptFilter", "answers_page", "concepts_page", "diff_page", "edges_page", "snapshot_page"]

Page = tuple[Any, str | None]


def _bad(kind: str) -> InputError:
    return InputError(f"cursor is not a {kind} cursor; pass next_cursor back unchanged", field="cursor")


def _point(
    reader: GraphReader, cur: Cursor | None, as_of: datetime | None, known_at: datetime | None
) -> AsOf:
    if cur is None:
        return reader.as_of(as_of, known_at)
    at = cur.at
    if not isinstance(at, dict) or not isinstance(at.get("v"), str) or not isinstance(at.get("r"), str):
        raise _bad(cur.kind)
    return AsOf(parse_time(at["v"], field="cursor"), parse_time(at["r"], field="cursor"))


def _pinned(cur: Cursor | None, kind: str, query: dict[str, Any], point: AsOf) -> Cursor:
    return cur or Cursor(kind, query, {"v": format_time(point.valid_at), "r": format_time(point.recorded_at)})


def _key(cur: Cursor | None) -> str | None:
    if cur is None:
        return None
    if not isinstance(cur.pos, str):
        raise _bad(cur.kind)
    return cur.pos


@dataclass(frozen=True)
class ConceptFilter:
    """What ``kg concept list`` filters on: an edge of ``relation``, and a degree (active edges
    touching the concept, in and out, any relation) of at least ``min_degree`` and at most
    ``max_degree``. None: not asked."""

    relation: str | None = None
    min_degree: int | None = None
    max_degree: int | None = None

    def query(self) -> dict[str, Any]:
        return {"relation": self.relation, "min_degree": self.min_degree, "max_degree": self.max_degree}

    @classmethod
    def of(cls, query: dict[str, Any]) -> ConceptFilter:
        """The filters a cursor carries (its query, which a client could have forged)."""
        relation, low, high = query.get("relation"), query.get("min_degree"), query.get("max_degree")
        if (relation is not None and relation not in RELATIONS) or not all(
            d is None or (type(d) is int and d >= 0) for d in (low, high)
        ):
            raise _bad("concepts")
        return cls(relation, low, high)


def concepts_page(
    reader: GraphReader,
    as_of: datetime | None,
    known_at: datetime | None,
    limit: int,
    cursor: str | None,
    only: ConceptFilter = ConceptFilter(),
) -> Page:
    """Concepts in force, by id (with ``only``: those ``kg concept list`` would list; a cursor
    carries its walk's filters, so a client need not repeat them)."""
    query = {"as_of": format_time(as_of), "known_at": format_time(known_at), **only.query()}
    cur = Cursor.resume(cursor, "concepts", query)
    point = _point(reader, cur, as_of, known_at)
    if cur is not None:
        only = ConceptFilter.of(cur.query)
    if only != ConceptFilter():
        page, after = listing(
            reader,
            point,
            after=_key(cur),
            limit=limit,
            relation=only.relation,
            min_degree=only.min_degree or 0,
            max_degree=only.max_degree,
        )
        items = [item.concept for item in page]
    else:
        found = reader.all_concepts(as_of=point, after=_key(cur), limit=limit + 1)
        items = found[:limit]
        after = items[-1].concept_id if len(found) > limit else None
    nxt = _pinned(cur, "concepts", query, point).advanced(after).encode() if after is not None else None
    return [c.to_dict() for c in items], nxt


def edges_page(
    reader: GraphReader,
    concept: str,
    as_of: datetime | None,
    known_at: datetime | None,
    limit: int,
    cursor: str | None,
) -> Page:
    """Edges in force touching ``concept``, by key; 404 for an unknown concept (not an empty list)."""
    query = {"concept": concept, "as_of": format_time(as_of), "known_at": format_time(known_at)}
    cur = Cursor.resume(cursor, "edges", query)
    point = _point(reader, cur, as_of, known_at)
    reader.concept(concept, as_of=point)
    after = _key(cur)
    edges = {n.edge.key: n.edge for n in reader.neighbourhood([concept], as_of=point)}
    keys = sorted(k for k in edges if after is None or k > after)
    items = keys[:limit]
    nxt = _pinned(cur, "edges", query, point).advanced(items[-1]).encode() if len(keys) > limit else None
    # The neighbourhood reads thin rows; this page's edges are grounded in one batched statement.
    full, _ = reader.records(edge_versions=[edges[k].version_id for k in items])
    return [full[edges[k].version_id].to_dict() for k in items], nxt


def answers_page(reader: GraphReader, since: datetime | None, limit: int, cursor: str | None) -> Page:
    """Recorded answers, newest first (each page continues strictly after the previous one)."""
    query = {"since": format_time(since)}
    cur = Cursor.resume(cursor, "answers", query)
    before: tuple[datetime, int] | None = None
    if cur is not None:
        pos = cur.pos
        if not (isinstance(pos, list) and len(pos) == 2 and isinstance(pos[0], str) and type(pos[1]) is int):
            raise _bad("answers")
        before = (parse_time(pos[0], field="cursor"), pos[1])
    found = reader.answers(since=since, limit=limit + 1, before=before)
    items = found[:limit]
    nxt = None
    if len(found) > limit:
        last = items[-1].stamp
        nxt = (
            (cur or Cursor("answers", query))
            .advanced([format_time(last.recorded_at), last.version_id])
            .encode()
        )
    return [dict(v.content["payload"]) for v in items], nxt


def _key_of(pos: Any, size: int) -> tuple[str, ...]:
    """A cursor position as a key of ``size`` strings, or a 400 naming the cursor."""
    if isinstance(pos, list) and len(pos) == size and all(isinstance(x, str) for x in pos):
        return tuple(pos)
    raise InputError("cursor positions do not match this listing", field="cursor")


def snapshot_page(
    reader: GraphReader, as_of: datetime | None, known_at: datetime | None, limit: int, cursor: str | None
) -> dict[str, Any]:
    """Up to ``limit`` concepts, edges, lessons, lesson links, requirement groups and members of
    the graph as of a point, each
    section streamed from SQL after its last key (keyset pages: a page never reads the graph)."""
    query = {"as_of": format_time(as_of), "known_at": format_time(known_at)}
    cur = Cursor.resume(cursor, "snapshot", query)
    point = _point(reader, cur, as_of, known_at)

    def section(
        size: int, read: Callable[[Any, int], Iterator[Any]], key: Callable[[Any], list[str]]
    ) -> Section[Any]:
        """A section whose positions are keys of ``size`` strings (checked before any read)."""
        return (lambda pos, n: read(None if pos is None else _key_of(pos, size), n)), key

    def version_key(v: Version) -> list[str]:
        return list(v.key)

    sections: dict[str, Section[Any]] = {
        "concepts": section(
            1, lambda k, n: reader.stream_concepts(point, after=k and k[0], limit=n), lambda c: [c.concept_id]
        ),
        "edges": section(
            3,
            lambda k, n: reader.stream_edges(point, after=k, limit=n),
            lambda e: [e.source_id, e.relation, e.target_id],
        ),
        "lessons": section(
            1, lambda k, n: reader.stream_versions("lessons", point, after=k, limit=n), version_key
        ),
        "lesson_links": section(
            2, lambda k, n: reader.stream_versions("lesson_concepts", point, after=k, limit=n), version_key
        ),
        "requirement_groups": section(
            1, lambda k, n: reader.stream_versions("requirement_groups", point, after=k, limit=n), version_key
        ),
        "requirement_members": section(
            3,
            lambda k, n: reader.stream_versions("requirement_members", point, after=k, limit=n),
            version_key,
        ),
    }
    page, positions = keyset_sections(sections, cur.pos if cur else None, limit)
    body: dict[str, Any] = {
        "valid_at": format_time(point.valid_at),
        "recorded_at": format_time(point.recorded_at),
    }
    body |= {name: [item.to_dict() for item in items] for name, items in page.items()}
    body["next_cursor"] = (
        _pinned(cur, "snapshot", query, point).advanced(positions).encode() if positions is not None else None
    )
    return body


def diff_page(
    reader: GraphReader,
    since: datetime,
    until: datetime | None,
    now: datetime,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    """Up to ``limit`` asserted, revised, invalidated and retracted versions recorded in (since, until]."""
    query = {"from": format_time(since), "to": format_time(until)}
    cur = Cursor.resume(cursor, "diff", query)
    # No later than the latest committed write, so every page (and a repeat) reads the same.
    end = reader.known_at(until or now)
    if cur is not None:
        if not isinstance(cur.at, str):
            raise _bad("diff")
        end = parse_time(cur.at, field="cursor")
    since = ensure_utc(since, field="from")

    def changes(op: str) -> Section[tuple[int, Version]]:
        """One operation's versions across the diff tables, in table order, then (recorded_at,
        version id); a position is [table index, last version id]."""

        def read(pos: Any, n: int) -> Iterator[tuple[int, Version]]:
            if pos is None:
                table_no, after = 0, None
            elif isinstance(pos, list) and len(pos) == 2 and all(type(x) is int and x >= 0 for x in pos):
                table_no, after = pos
            else:
                raise InputError("cursor positions do not match this listing", field="cursor")
            for i, table in enumerate(DIFF_TABLES[table_no:], start=table_no):
                for v in reader.stream_changes(table, since, end, op=op, after=after, limit=n):
                    yield i, v
                    n -= 1
                if n <= 0:
                    return
                after = None

        return read, lambda item: [item[0], item[1].stamp.version_id]

    sections = {
        "asserted": changes("assert"),
        "revised": changes("revise"),
        "invalidated": changes("invalidate"),
        "retracted": changes("retract"),
    }
    page, positions = keyset_sections(sections, cur.pos if cur else None, limit)
    body: dict[str, Any] = {"from": format_time(since), "to": format_time(end)}
    body |= {name: [v.to_dict() for _, v in items] for name, items in page.items()}
    walk = cur or Cursor("diff", query, format_time(end))
    body["next_cursor"] = walk.advanced(positions).encode() if positions is not None else None
    return body
