"""The control plane: a plain-Python planning loop that answers with an evidence sub-graph, or abstains.

Ask with :class:`Planner` over a :class:`~data_plane.GraphReader` and a :class:`Synthesizer`
(the embedded :class:`OfflineSynthesizer`, or DeepSeek via :func:`build_synthesizer` with
:class:`Settings` read once at the edge). Every call returns an :class:`Answer` (schema
``answer/1``); :func:`replay` re-runs a recorded one.

Layout, arrows pointing down only (``tests/test_import_graph.py`` checks it)::

    surfaces/        kg CLI, HTTP API, evidence pictures, rate limiting, runtime wiring
    planning/        the loop's steps: loop, expansion, ranking, verify, answer, replay, graph_store
    synthesizers/    the model seam (base) and its synthesizers: offline, deepseek (+ prompts, parsing)
    understanding/   reading a question: concept names, intent, direction, time
    evidence, errors, settings, testing   shared by every layer

The LlamaIndex property-graph store (``control_plane.planning.graph_store``), the CLI and the HTTP
API are imported from their modules, so that importing this package never pays for LlamaIndex,
Typer or FastAPI.
"""

from control_plane.errors import LLMError, LLMRejected, LLMUnavailable
from control_plane.evidence import EvidenceGraph
from control_plane.planning.answer import Answer, RoundTrace
from control_plane.planning.expansion import Expander, ReaderExpander
from control_plane.planning.loop import Planner
from control_plane.planning.replay import replay
from control_plane.settings import LLMSettings, Settings
from control_plane.synthesizers.base import (
    Draft,
    Focus,
    SynthesisRequest,
    Synthesizer,
    SynthesizerInfo,
    Usage,
)
from control_plane.synthesizers.deepseek import DeepSeekSynthesizer, build_synthesizer
from control_plane.synthesizers.offline import OfflineSynthesizer

__all__ = [
    "Answer",
    "DeepSeekSynthesizer",
    "Draft",
    "EvidenceGraph",
    "Expander",
    "Focus",
    "LLMError",
    "LLMRejected",
    "LLMSettings",
    "LLMUnavailable",
    "OfflineSynthesizer",
    "Planner",
    "ReaderExpander",
    "RoundTrace",
    "Settings",
    "SynthesisRequest",
    "Synthesizer",
    "SynthesizerInfo",
    "Usage",
    "build_synthesizer",
    "replay",
]
