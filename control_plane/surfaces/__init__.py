"""Delivery surfaces: the ``kg`` command line (``cli``), the HTTP API (``http``), the MCP server for
agents (``mcp``), evidence ``pictures``, and what they share: who may call (``access``), rate
limiting, curation writes (``writes``), paged ``listings``, one-line ``messages``, and the
``runtime`` that wires settings, database and planner together. The top layer.
"""
