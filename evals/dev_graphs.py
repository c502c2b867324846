"""Where the real development graphs are: public prerequisite maps the project measures against
but does not ship.

They live beside the checkout, in ``../shared/dev-graphs/<name>/`` (one ``kg-bundle/1`` folder
each, described in that folder's README); ``KG_DEV_GRAPHS`` names another folder holding them.
Whoever reads one (a question builder, ``evals.report_all``, a test) asks :func:`dev_graph` and
says what it skipped when the answer is None: the graphs are not copied into the project.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["ENV", "dev_graph", "dev_graphs_folder"]

ENV = "KG_DEV_GRAPHS"
_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "dev-graphs"


def dev_graphs_folder(environ: Mapping[str, str]) -> Path:
    """The folder holding the development graphs: ``$KG_DEV_GRAPHS``, else ``../shared/dev-graphs``
    next to the checkout."""
    given = environ.get(ENV, "").strip()
    return Path(given) if given else _DEFAULT


def dev_graph(name: str, environ: Mapping[str, str]) -> Path | None:
    """The bundle folder of development graph ``name``, or None when it is not there."""
    folder = dev_graphs_folder(environ) / name
    return folder if (folder / "manifest.json").is_file() else None
