"""Bundle export streams rows to the files and never leaves a partial bundle behind."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from data_plane import BundleError, GraphReader, WriteGateway
from data_plane.bundle import export_bundle
from data_plane.testing import build_graph, grounding


def test_refused_export_leaves_no_files(gateway: WriteGateway, reader: GraphReader, tmp_path: Path) -> None:
    """A summary longer than a bundle can read back (the CSV field limit) is refused, naming the
    concept, and no bundle file (not even a partial one) is left in the folder. (An alias holding
    '|', the other text the format cannot hold, is refused by the gateway already.)"""
    build_graph(
        gateway, ["a", "b", "c"], [("a", "b", "prerequisite")], valid_at=datetime(2024, 1, 1, tzinfo=UTC)
    )
    gateway.revise_concept("b", summary="y" * (csv.field_size_limit() + 1), grounding=grounding("long"))
    with pytest.raises(BundleError, match="'b'"):
        export_bundle(reader, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_export_streams_every_table(gateway: WriteGateway, reader: GraphReader, tmp_path: Path) -> None:
    """Exported rows come from the streamed reads: the edge file lists every edge in force, in
    (source, relation, target) order."""
    ids = [f"c{i:02d}" for i in range(30)]
    edges = [(ids[i], ids[i + 1], "prerequisite") for i in range(29)]
    build_graph(gateway, ids, edges, valid_at=datetime(2024, 1, 1, tzinfo=UTC))
    counts = export_bundle(reader, tmp_path / "out")
    assert counts["concept_edges"] == 29 and counts["concepts"] == 30
    lines = (tmp_path / "out" / "concept_edges.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [tuple(line.split(",")[:3]) for line in lines] == sorted(edges)
