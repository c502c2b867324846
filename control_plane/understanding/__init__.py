"""Reading a question: which concepts it names (``names``) and how it is meant.

The lowest control-plane layer: it imports only the data plane and ``control_plane.evidence``.
"""
