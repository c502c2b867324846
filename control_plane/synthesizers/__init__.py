"""The model seam and its synthesizers.

``base`` holds the protocol (``Synthesizer``) and the records that cross it; ``offline`` is the
embedded deterministic synthesizer, ``deepseek`` the production one (with its ``prompts`` and
reply ``parsing``). Imports ``understanding``, never ``planning`` or ``surfaces``.
"""
