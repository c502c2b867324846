"""The UC San Diego catalogue imports with its requirement groups, and every course's requirement
expression round-trips: requirements.json -> groups and edges in the database -> an expression
read back that equals the original normalised, computed here independently from the JSON.

The catalogue is a development graph beside the checkout (``../shared/dev-graphs``, or
``$KG_DEV_GRAPHS``); without it these tests are skipped with a note."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from data_plane import GraphReader, WriteGateway, export_bundle, import_bundle
from data_plane.testing import ManualClock
from evals.catalogue_groups import convert
from evals.dev_graphs import dev_graph, dev_graphs_folder

CATALOGUE = dev_graph("ucsd-catalogue", os.environ)
pytestmark = pytest.mark.skipif(
    CATALOGUE is None or not (CATALOGUE / "requirements.json").is_file(),
    reason=f"no UCSD catalogue in {dev_graphs_folder(os.environ)} (../shared/dev-graphs, or set "
    "KG_DEV_GRAPHS): the round trip is checked where the catalogue is",
)

Canonical = tuple[frozenset[str], frozenset[tuple[int, frozenset[frozenset[str]]]]]


def _expected(course: str, expression: Any, ids: set[str]) -> Canonical:
    """The expression as plain courses and one-of groups, by sets (independent of
    data_plane.requirements): a course naming itself is dropped, an unlisted code is its slug."""

    def ident(code: str) -> str:
        return code if code in ids else re.sub(r"[^a-z0-9]+", "_", code.lower()).strip("_")

    def ways(e: Any) -> set[frozenset[str]]:
        if isinstance(e, str):
            return {frozenset()} if e == course else {frozenset({ident(e)})}
        assert e["type"] in ("all", "one"), e  # the catalogue has no two-of
        parts = [ways(c) for c in e["courses"]]
        if e["type"] == "one":
            return set().union(*parts) - {frozenset()} or {frozenset()}
        out = {frozenset()}
        for p in parts:
            out = {a | b for a in out for b in p}
        return out

    def conjuncts(e: Any) -> list[Any]:
        if isinstance(e, dict) and e["type"] == "all":
            return [c for part in e["courses"] for c in conjuncts(part)]
        return [e]

    plain: set[str] = set()
    groups: set[tuple[int, frozenset[frozenset[str]]]] = set()
    for part in conjuncts(expression):
        alternatives = ways(part)
        if len(alternatives) == 1:
            plain |= next(iter(alternatives))
        else:
            groups.add((1, frozenset(alternatives)))
    return frozenset(plain), frozenset(groups)


def _stored(reader: GraphReader, course: str, edges: dict[str, set[str]]) -> Canonical:
    groups = reader.requirements([course]).get(course, ())
    return (
        frozenset(edges.get(course, set())),
        frozenset((g.needs, frozenset(frozenset(o) for o in g.options)) for g in groups),
    )


@pytest.fixture
def clock() -> ManualClock:
    """A clock after the catalogue's valid time (2025-08-13)."""
    return ManualClock(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def converted(tmp_path: Path) -> Path:
    assert CATALOGUE is not None
    out = tmp_path / "ucsd-groups"
    convert(CATALOGUE, out)
    return out


def test_every_course_requirement_round_trips_through_the_database(
    gateway: WriteGateway, reader: GraphReader, converted: Path
) -> None:
    """Each of the catalogue's 613 expressions reads back from edges and groups exactly as it normalises."""
    assert CATALOGUE is not None
    report = import_bundle(gateway, converted)
    assert report.counts["requirement_groups"].asserted == 366
    expressions = json.loads((CATALOGUE / "requirements.json").read_text(encoding="utf-8"))["requirements"]
    ids = {
        line.split(",", 1)[0]
        for line in (CATALOGUE / "concepts.csv").read_text(encoding="utf-8").splitlines()[1:]
    }
    edges: dict[str, set[str]] = {}
    for e in reader.stream_edges():
        if e.relation == "prerequisite":
            edges.setdefault(e.target_id, set()).add(e.source_id)
    wrong = [c for c, x in sorted(expressions.items()) if _stored(reader, c, edges) != _expected(c, x, ids)]
    assert not wrong, wrong[:5]
    cse_101 = reader.requirements(["cse_101"])["cse_101"]
    assert {g.options for g in cse_101} == {
        (("cse_12",), ("dsc_30",)),
        (("cse_21",), ("math_154",), ("math_158",), ("math_184",), ("math_188",)),
    }


def test_the_catalogue_reimports_as_nothing_new_and_exports_its_groups_byte_for_byte(
    gateway: WriteGateway, converted: Path, tmp_path: Path
) -> None:
    """A second import writes nothing; an export re-imported and exported again gives the same group files."""
    import_bundle(gateway, converted)
    assert import_bundle(gateway, converted).new_versions == 0
    first = tmp_path / "e1"
    export_bundle(gateway.reader(), first)
    assert import_bundle(gateway, first).new_versions == 0
    second = tmp_path / "e2"
    export_bundle(gateway.reader(), second)
    for name in ("requirement_groups.csv", "requirement_members.csv", "concept_edges.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
