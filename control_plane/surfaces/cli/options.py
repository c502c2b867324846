"""The option and argument types the ``kg`` commands share, so that one flag reads and behaves the
same in every command that takes it."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

__all__ = [
    "AllowDuplicateNameOpt",
    "AsOfOpt",
    "AskFormat",
    "ConfidenceOpt",
    "DataFormat",
    "DataFormatOpt",
    "EdgeArg",
    "EvidenceOpt",
    "EvidenceShown",
    "InvalidAtOpt",
    "KnownAtOpt",
    "ReasonOpt",
    "RetractOpt",
    "Scope",
    "SinceOpt",
    "SourceOpt",
    "SynthChoice",
    "ValidAtOpt",
]


class AskFormat(StrEnum):
    text = "text"
    json = "json"
    mermaid = "mermaid"
    dot = "dot"
    html = "html"


class EvidenceShown(StrEnum):
    """How much of an answer's evidence ``kg ask`` prints (``cli.answer_text``)."""

    none = "none"
    summary = "summary"
    cited = "cited"
    all = "all"


class DataFormat(StrEnum):
    text = "text"
    json = "json"


class SynthChoice(StrEnum):
    offline = "offline"
    deepseek = "deepseek"


class Scope(StrEnum):
    read = "read"
    write = "write"


# Bi-temporal reads: valid time and recorded time.
AsOfOpt = Annotated[str | None, typer.Option("--as-of", help="Valid time (ISO 8601).")]
KnownAtOpt = Annotated[str | None, typer.Option("--known-at", help="Recorded time (ISO 8601).")]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Recorded at or after (ISO 8601).")]
DataFormatOpt = Annotated[DataFormat, typer.Option("--format", help="text for people, json for programs.")]

# Grounding: every write says why, on what evidence, from whom, how sure.
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why this is true.")]
EvidenceOpt = Annotated[
    str, typer.Option("--evidence", help='Evidence as JSON text, e.g. \'{"doc": "..."}\'.')
]
SourceOpt = Annotated[
    str | None, typer.Option("--source", help="Who asserts it. Default: cli:LOGIN (your login name).")
]
ConfidenceOpt = Annotated[float, typer.Option("--confidence", help="Confidence in [0, 1].")]

# Valid time of a write.
ValidAtOpt = Annotated[str | None, typer.Option("--valid-at", help="True from (ISO 8601). Default: now.")]
InvalidAtOpt = Annotated[
    str | None, typer.Option("--invalid-at", help="No longer true from (ISO 8601). Default: now.")
]
RetractOpt = Annotated[
    bool,
    typer.Option("--retract", help="Withdraw the belief altogether (it never held), instead of ending it."),
]
AllowDuplicateNameOpt = Annotated[
    bool,
    typer.Option(
        "--allow-duplicate-name",
        help="Accept a name or alias that reads the same as another concept's (both are meant).",
    ),
]

EdgeArg = Annotated[str, typer.Argument(help="source>relation>target, e.g. 'rag>builds_on>embeddings'.")]
