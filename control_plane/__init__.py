"""The control plane: a plain-Python planning loop that answers with an evidence sub-graph, or abstains.

Ask with :class:`Planner` over a :class:`~data_plane.GraphReader` and a :class:`Synthesizer`
(the embedded :class:`OfflineSynthesizer`, or DeepSeek via :func:`build_synthesizer` with
:class:`Settings` read once at the edge). Every call returns an :class:`Answer` (schema
``answer/1``); :func:`replay` re-runs a recorded one. The LlamaIndex property-graph store
(``control_plane.graph_store.SQLPropertyGraphStore``), the CLI (``control_plane.cli``) and the
HTTP API (``control_plane.api.create_app``) are imported from their modules, so that importing
this package never pays for LlamaIndex, Typer or FastAPI.
"""

from control_plane.answer import Answer, RoundTrace
from control_plane.deepseek import DeepSeekSynthesizer, build_synthesizer
from control_plane.errors import LLMError, LLMRejected, LLMUnavailable
from control_plane.evidence import EvidenceGraph
from control_plane.loop import Expander, Planner, ReaderExpander
from control_plane.offline import OfflineSynthesizer
from control_plane.replay import replay
from control_plane.settings import LLMSettings, Settings
from control_plane.synthesis import Draft, Focus, SynthesisRequest, Synthesizer, SynthesizerInfo, Usage

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
