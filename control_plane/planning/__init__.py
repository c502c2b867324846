"""The planning loop's steps: seeding and ``expansion``, ``ranking``, ``verify``, the ``Answer``,
``replay``, and the LlamaIndex ``graph_store`` over our SQL graph. Imports ``synthesizers`` and
``understanding``, never ``surfaces``.
"""
