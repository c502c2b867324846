"""The offline synthesizer: deterministic, graph-grounded answers without a model.

It answers FROM THE READING (``control_plane.understanding.interpretation``) with the one meaning
of each question form (``control_plane.semantics``): the intent, the subjects and their roles,
the direction, direct or transitive, and the relations the reading fitted to the graph, over the
evidence sub-graph only, with a confidence that reflects how complete that evidence is. It counts
as the round's one synthesis call (``usage.calls == 1``, zero tokens, no model call). A request
without a reading (a caller that did not interpret the question) is read here from the
evidence's seeds.

Its draft is the finding's words and claim (``semantics.meaning.draft_of``): the text is written
from the finding, so it never names a concept the draft does not cite; the claim is what the
verifier recomputes from the evidence, with the same meaning, before it becomes an answer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from control_plane.semantics.findings import Ask
from control_plane.semantics.meaning import answer, draft_of
from control_plane.synthesizers.base import Draft, SynthesisRequest, SynthesizerInfo
from control_plane.understanding.interpretation import Reading, interpret, mentions_in
from control_plane.understanding.names import NameIndex

__all__ = ["RULES_VERSION", "OfflineSynthesizer", "read_request"]

RULES_VERSION: Final = "offline-rules-5"


def read_request(request: SynthesisRequest) -> Reading:
    """The request's reading, or one made here from the seeds when the caller gave none."""
    if request.reading is not None:
        return request.reading
    ev = request.evidence
    seeds = [ev.concepts[s] for s in ev.seeds if s in ev.concepts]
    index = NameIndex.build(seeds)
    now: datetime = request.as_of.valid_at
    return interpret(request.question, mentions_in(request.question, index), now=now)


class OfflineSynthesizer:
    """Deterministic answers from the evidence sub-graph (see the module docstring)."""

    def __init__(self) -> None:
        self._info = SynthesizerInfo("offline", "graph-rules-v4", RULES_VERSION, offline=True)

    @property
    def info(self) -> SynthesizerInfo:
        return self._info

    def synthesize(self, request: SynthesisRequest) -> Draft:
        ask = Ask(request, read_request(request))
        return draft_of(answer(ask), ask)
