"""``python -m control_plane.surfaces.cli``: the ``kg`` command."""

from control_plane.surfaces.cli import app

app()
