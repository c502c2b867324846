"""The control plane: a plain-Python planning loop that answers with an evidence sub-graph, or abstains.

Ask with :class:`Planner` over a :class:`~data_plane.GraphReader` and a :class:`Synthesizer`
(the embedded :class:`OfflineSynthesizer`, or DeepSeek via :func:`build_synthesizer` with
:class:`Settings` read once at the edge). Every call returns an :class:`Answer` (schema
``answer/1``); :func:`replay` re-runs a recorded one.

Layout, arrows pointing down only (``tests/test_import_graph.py`` checks it)::

    surfaces/        kg CLI, HTTP API, MCP server, evidence pictures, access and rate limits, runtime wiring
    planning/        the loop's steps: loop, expansion, ranking, verify, answer, replay, graph_store
    synthesizers/    the model seam (base) and its synthesizers: offline, deepseek (+ prompts, parsing)
    understanding/   reading a question: concept names, intent, direction, time
    evidence, errors, settings, testing   shared by every layer

The LlamaIndex property-graph store (``control_plane.planning.graph_store``), the CLI and the HTTP
API are imported from their modules, so that importing this package never pays for LlamaIndex,
Typer or FastAPI; the names below are imported from their modules on first use
(:mod:`data_plane.lazy`), so importing the package costs nothing until one is touched.
"""

import typing

from data_plane import lazy

if typing.TYPE_CHECKING:
    from control_plane.errors import LLMError as LLMError
    from control_plane.errors import LLMRejected as LLMRejected
    from control_plane.errors import LLMUnavailable as LLMUnavailable
    from control_plane.evidence import EvidenceGraph as EvidenceGraph
    from control_plane.planning.answer import Answer as Answer
    from control_plane.planning.answer import RoundTrace as RoundTrace
    from control_plane.planning.expansion import Expander as Expander
    from control_plane.planning.expansion import ReaderExpander as ReaderExpander
    from control_plane.planning.loop import Planner as Planner
    from control_plane.planning.replay import replay as replay
    from control_plane.settings import LLMSettings as LLMSettings
    from control_plane.settings import Settings as Settings
    from control_plane.synthesizers.base import Draft as Draft
    from control_plane.synthesizers.base import Focus as Focus
    from control_plane.synthesizers.base import SynthesisRequest as SynthesisRequest
    from control_plane.synthesizers.base import Synthesizer as Synthesizer
    from control_plane.synthesizers.base import SynthesizerInfo as SynthesizerInfo
    from control_plane.synthesizers.base import Usage as Usage
    from control_plane.synthesizers.deepseek import DeepSeekSynthesizer as DeepSeekSynthesizer
    from control_plane.synthesizers.deepseek import build_synthesizer as build_synthesizer
    from control_plane.synthesizers.offline import OfflineSynthesizer as OfflineSynthesizer

# The module each public name lives in (the imports above say the same to type checkers).
_HOMES: dict[str, tuple[str, ...]] = {
    "errors": ("LLMError", "LLMRejected", "LLMUnavailable"),
    "evidence": ("EvidenceGraph",),
    "planning.answer": ("Answer", "RoundTrace"),
    "planning.expansion": ("Expander", "ReaderExpander"),
    "planning.loop": ("Planner",),
    "planning.replay": ("replay",),
    "settings": ("LLMSettings", "Settings"),
    "synthesizers.base": ("Draft", "Focus", "SynthesisRequest", "Synthesizer", "SynthesizerInfo", "Usage"),
    "synthesizers.deepseek": ("DeepSeekSynthesizer", "build_synthesizer"),
    "synthesizers.offline": ("OfflineSynthesizer",),
}
if not typing.TYPE_CHECKING:  # checkers see the imports above, not a catch-all __getattr__
    __all__, __getattr__, __dir__ = lazy.lazy_exports(__name__, _HOMES)
