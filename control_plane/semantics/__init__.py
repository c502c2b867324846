"""The one meaning of each question form: what its answer is over the evidence, used to answer and to check.

``meaning.answer`` computes a reading's :class:`~control_plane.semantics.findings.Finding` over a
request's evidence (``sets`` for the intents, ``forms`` for the question forms); ``claims`` says
what a finding claims in its form's contract and checks any claim against the evidence's own;
``findings`` puts a finding into words. The offline synthesizer answers with it and the verifier
recomputes a model's claim with it (``planning.verify``). Imports ``synthesizers.base`` (the
records that cross the model seam) and ``understanding``, never the synthesizers themselves,
``planning`` or ``surfaces``.
"""
