"""The data plane: a bi-temporal, grounded concept graph in SQL.

Write through :class:`WriteGateway` (the only writer), read through :class:`GraphReader`,
create or upgrade the schema with :func:`migrate` (Alembic), and move whole graphs with
:func:`import_bundle` / :func:`export_bundle`.
"""

from data_plane.bundle import ImportReport, export_bundle, import_bundle
from data_plane.clock import Clock, format_time, parse_time, utc_now
from data_plane.database import connect, migrate
from data_plane.errors import (
    BundleError,
    ConcurrentWrite,
    ConfigurationError,
    GroundingRejected,
    InactiveEndpoint,
    InputError,
    KeyExists,
    KGError,
    NotFound,
    PrerequisiteCycle,
    SelfLoop,
    TemporalConflict,
    UnknownRelation,
    WriteRejected,
)
from data_plane.gateway import KEEP, BatchResult, Write, WriteGateway
from data_plane.reads import GraphReader
from data_plane.records import (
    Concept,
    ConceptRow,
    Diff,
    Edge,
    EdgeRow,
    Grounding,
    Neighbour,
    Snapshot,
    Stamp,
    Version,
)
from data_plane.relations import RELATIONS, SYMMETRIC, edge_key
from data_plane.temporal import AsOf

__all__ = [
    "KEEP",
    "RELATIONS",
    "SYMMETRIC",
    "AsOf",
    "BatchResult",
    "BundleError",
    "Clock",
    "Concept",
    "ConceptRow",
    "ConcurrentWrite",
    "ConfigurationError",
    "Diff",
    "Edge",
    "EdgeRow",
    "GraphReader",
    "Grounding",
    "GroundingRejected",
    "ImportReport",
    "InactiveEndpoint",
    "InputError",
    "KGError",
    "KeyExists",
    "Neighbour",
    "NotFound",
    "PrerequisiteCycle",
    "SelfLoop",
    "Snapshot",
    "Stamp",
    "TemporalConflict",
    "UnknownRelation",
    "Version",
    "Write",
    "WriteGateway",
    "WriteRejected",
    "connect",
    "edge_key",
    "export_bundle",
    "format_time",
    "import_bundle",
    "migrate",
    "parse_time",
    "utc_now",
]
