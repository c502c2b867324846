"""Delivery surfaces: the ``kg`` command line (``cli``), the HTTP API, evidence ``pictures``, rate
limiting and the ``runtime`` that wires settings, database and planner together. The top layer.
"""
