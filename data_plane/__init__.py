"""The data plane: a bi-temporal, grounded concept graph in SQL.

Write through :class:`WriteGateway` (the only writer), read through :class:`GraphReader`,
create or upgrade the schema with :func:`migrate` (Alembic), and move whole graphs with
:func:`import_bundle` / :func:`export_bundle` (:func:`check_bundle` is the dry run).

Importing the package imports none of that: each name is loaded from its module on first use
(PEP 562), so a light caller (``kg --help``, the error tree) does not pay for SQLAlchemy.
"""

import typing

from data_plane import lazy

if typing.TYPE_CHECKING:
    from data_plane.bundle import ImportPolicy as ImportPolicy
    from data_plane.bundle import ImportReport as ImportReport
    from data_plane.bundle import check_bundle as check_bundle
    from data_plane.bundle import export_bundle as export_bundle
    from data_plane.bundle import import_bundle as import_bundle
    from data_plane.clock import Clock as Clock
    from data_plane.clock import format_time as format_time
    from data_plane.clock import parse_time as parse_time
    from data_plane.clock import utc_now as utc_now
    from data_plane.database import connect as connect
    from data_plane.database import migrate as migrate
    from data_plane.errors import BundleError as BundleError
    from data_plane.errors import BundleRejected as BundleRejected
    from data_plane.errors import ConcurrentWrite as ConcurrentWrite
    from data_plane.errors import ConfigurationError as ConfigurationError
    from data_plane.errors import DuplicateName as DuplicateName
    from data_plane.errors import GroundingRejected as GroundingRejected
    from data_plane.errors import InactiveEndpoint as InactiveEndpoint
    from data_plane.errors import InputError as InputError
    from data_plane.errors import KeyExists as KeyExists
    from data_plane.errors import KGError as KGError
    from data_plane.errors import NotFound as NotFound
    from data_plane.errors import PrerequisiteCycle as PrerequisiteCycle
    from data_plane.errors import Problem as Problem
    from data_plane.errors import RequirementRejected as RequirementRejected
    from data_plane.errors import SelfLoop as SelfLoop
    from data_plane.errors import StorageFault as StorageFault
    from data_plane.errors import TemporalConflict as TemporalConflict
    from data_plane.errors import UnknownRelation as UnknownRelation
    from data_plane.errors import WriteRejected as WriteRejected
    from data_plane.gateway import KEEP as KEEP
    from data_plane.gateway import BatchResult as BatchResult
    from data_plane.gateway import RequirementWrite as RequirementWrite
    from data_plane.gateway import Write as Write
    from data_plane.gateway import WriteGateway as WriteGateway
    from data_plane.reads import GraphReader as GraphReader
    from data_plane.records import Concept as Concept
    from data_plane.records import ConceptRow as ConceptRow
    from data_plane.records import Diff as Diff
    from data_plane.records import Edge as Edge
    from data_plane.records import EdgeRow as EdgeRow
    from data_plane.records import Grounding as Grounding
    from data_plane.records import Neighbour as Neighbour
    from data_plane.records import RequirementGroup as RequirementGroup
    from data_plane.records import RequirementMember as RequirementMember
    from data_plane.records import Snapshot as Snapshot
    from data_plane.records import Stamp as Stamp
    from data_plane.records import Version as Version
    from data_plane.relations import RELATIONS as RELATIONS
    from data_plane.relations import SYMMETRIC as SYMMETRIC
    from data_plane.relations import edge_key as edge_key
    from data_plane.temporal import AsOf as AsOf

# The module each public name lives in (the imports above say the same to type checkers).
_HOMES: dict[str, tuple[str, ...]] = {
    "bundle": ("ImportPolicy", "ImportReport", "check_bundle", "export_bundle", "import_bundle"),
    "clock": ("Clock", "format_time", "parse_time", "utc_now"),
    "database": ("connect", "migrate"),
    "errors": (
        "BundleError",
        "BundleRejected",
        "ConcurrentWrite",
        "ConfigurationError",
        "DuplicateName",
        "GroundingRejected",
        "InactiveEndpoint",
        "InputError",
        "KeyExists",
        "KGError",
        "NotFound",
        "PrerequisiteCycle",
        "Problem",
        "RequirementRejected",
        "SelfLoop",
        "StorageFault",
        "TemporalConflict",
        "UnknownRelation",
        "WriteRejected",
    ),
    "gateway": ("KEEP", "BatchResult", "RequirementWrite", "Write", "WriteGateway"),
    "reads": ("GraphReader",),
    "records": (
        "Concept",
        "ConceptRow",
        "Diff",
        "Edge",
        "EdgeRow",
        "Grounding",
        "Neighbour",
        "RequirementGroup",
        "RequirementMember",
        "Snapshot",
        "Stamp",
        "Version",
    ),
    "relations": ("RELATIONS", "SYMMETRIC", "edge_key"),
    "temporal": ("AsOf",),
}
if not typing.TYPE_CHECKING:  # checkers see the imports above, not a catch-all __getattr__
    __all__, __getattr__, __dir__ = lazy.lazy_exports(__name__, _HOMES)
