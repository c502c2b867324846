"""The one name normaliser: when two spellings are the same name, for everything that compares names.

A graph brings its own names ("Edge", "C++", "k-means++", "Hooke's law", "Motion (physics)",
"机器学习"); learners type them their own way ("hookes law", "k means", "GÖDEL", "Ｃ＋＋"). The
reader, the duplicate-name check (gateway and bundle check), search and the LlamaIndex store all
compare names through :func:`normalise`, so they never disagree about which names are one.

What it **folds** (a learner cannot tell these apart, or does not type them):

* compatibility forms (NFKC: full-width letters, ligatures) and case (``casefold``: ß = ss);
* diacritics on Latin, Greek and Cyrillic letters ("Gödel" = "Godel", "μάθηση" = "μαθηση");
* a possessive or ``'s`` ("Hooke's law" = "Hookes law" = "Hooke law"); any other apostrophe,
  hyphen, slash, bracket or punctuation is a word boundary ("k-means" = "k means");
* a dot inside an abbreviation or a file-like name ("A.I." = "AI", "Node.js" = "nodejs");
* where two or more letters meet digits, a word boundary: a course code as students type it
  ("cse100", "CSE-100", "cse 100" = "CSE 100"; "math20c" = "MATH 20C"; "GPT4" = "GPT-4"); digits
  followed by letters stay one word ("20C", "3D", "1st"), and so does one letter before digits
  ("B12", "F1");
* the regular English plural of a word in Latin letters ("embeddings" = "embedding"; "loss",
  "bus", "analysis", "bias" stay).

What it **keeps** (these tell names apart): ``+`` and ``#`` ending a word ("C++" is not "C", "C#",
"k-means++" is not "k-means"), digits ("GPT-4" is not "GPT-3"), one-letter words ("C", "R"), and
letters in any script: CJK ideographs and kana are one word each, so a name in them is found inside
unspaced text ("机器学习" in "什么是机器学习").

:func:`tokenize` gives the same words with their spans in the original text (the reader needs
where each word is); :func:`confusable` refuses a name that mixes scripts inside a word to look
like another ("RАG" with a Cyrillic А). Pure; no I/O.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

__all__ = ["ARROW", "Token", "confusable", "normalise", "singular", "tokenize"]

ARROW: Final = "→"
# Endings that look plural but are not: "loss", "bus", "analysis", "bias".
_NOT_PLURAL: Final = ("ss", "us", "is", "as")
_APOSTROPHES: Final = "'’ʼ‘"
# Scripts whose diacritics a learner drops; marks on other scripts (Devanagari vowel signs, ...)
# are part of the letter and stay.
_FOLDED_SCRIPTS: Final = ("LATIN", "GREEK", "CYRILLIC")
# Scripts a word may not mix (each looks like the others: Latin "A", Greek "Α", Cyrillic "А").
_LOOKALIKE_SCRIPTS: Final = ("LATIN", "GREEK", "CYRILLIC")


def _word_pattern(letters: str) -> str:
    """One word (module docstring): ``letters`` (a run of letters and digits of any script), inside
    it a dot before a short run of letters ("a.i", "node.js", "asp.net"), at its end "'s" or "'"
    (a possessive, dropped) and a run of "+" or "#" not followed by a letter ("c++", "c#",
    "means++"). Arrows are a word of their own."""
    word = (
        rf"{letters}(?:\.[^\W\d_]{{1,3}}(?![^\W_]))*"
        rf"(?:[{_APOSTROPHES}]s(?![^\W_])|[{_APOSTROPHES}](?=\s|$|[^\w{_APOSTROPHES}]))?"
        r"(?:[+#]+(?![^\W_]))?"
    )
    return rf"{word}|->|=>|[→⟶➔➜⇒]"


_ASCII_TOKEN: Final = re.compile(_word_pattern(r"[^\W_]+"))


@cache
def _unicode_token() -> re.Pattern[str]:
    """The word pattern for any script: a word keeps its combining marks (a Devanagari vowel
    sign is part of its word). Built on the first text that is not ASCII (it lists every mark of
    the Basic Multilingual Plane)."""
    ranges: list[tuple[int, int]] = []
    for o in range(0x300, 0x10000):
        if unicodedata.category(chr(o)).startswith("M"):
            if ranges and ranges[-1][1] == o - 1:
                ranges[-1] = (ranges[-1][0], o)
            else:
                ranges.append((o, o))
    marks = "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in ranges)
    return re.compile(_word_pattern(rf"[^\W_](?:[^\W_]|[{marks}])*"))


_POSSESSIVE: Final = re.compile(rf"[{_APOSTROPHES}]s?$")


@dataclass(frozen=True)
class Token:
    """One word of a text: its normalised form and its span ``[start, end)`` in the text."""

    text: str
    start: int
    end: int


def _singular(token: str) -> str:
    if len(token) <= 3 or not token.endswith("s") or token.endswith(_NOT_PLURAL):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses", "zes")):
        return token[:-2]
    return token[:-1]


@lru_cache(maxsize=65_536)
def singular(token: str) -> str:
    """Conservative singular of a word in Latin letters: "embeddings"→"embedding",
    "queries"→"query", "batches"→"batch"; words of three letters or fewer, "-ss", "-us", "-is",
    "-as" endings, and words with digits, symbols or other scripts are left alone."""
    return _singular(token) if token.isascii() and token.isalpha() else token


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0] if name else ""


def _cjk(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0x20000 <= o <= 0x2FA1F
    )


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One character as the normaliser reads it: compatibility form, case folded, diacritics of
    Latin, Greek and Cyrillic letters dropped; a CJK character is a word of its own."""
    if _cjk(ch):
        return f" {ch} "
    out: list[str] = []
    for c in unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", ch).casefold()):
        if unicodedata.combining(c) and (not out or _script(out[-1]) in _FOLDED_SCRIPTS):
            continue
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` folded character by character, and for each folded character the index of the
    original character it came from (plus one past the end)."""
    if text.isascii():
        return text.lower(), list(range(len(text) + 1))
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        # a combining mark written apart from its letter stays when that letter's script keeps it
        keep = unicodedata.combining(ch) and i and _script(text[i - 1]) not in _FOLDED_SCRIPTS
        f = ch if keep else _fold_char(ch)
        chars.append(f)
        origin.extend([i] * len(f))
    origin.append(len(text))
    return "".join(chars), origin


def _word(raw: str) -> str:
    if raw in ("->", "=>") or (len(raw) == 1 and raw in "→⟶➔➜⇒"):
        return ARROW
    core = _POSSESSIVE.sub("", raw.rstrip("+#"))
    return singular(core.replace(".", "")) + raw[len(raw.rstrip("+#")) :]


# Where a word's letters (two or more) end and its digits begin ("cse|100", "gpt|4"): a word
# boundary. One letter and digits stay one word ("B12", "Q1", "F1", chat's "b4").
_LETTER_DIGIT: Final = re.compile(r"(?<=[^\W\d_]{2})(?=\d)")


def _pieces(raw: str, at: int) -> list[tuple[str, int, int]]:
    """``raw`` (a word as matched, starting at ``at``) split where letters meet digits: each piece
    normalised, with where it starts and ends."""
    cuts = [m.start() for m in _LETTER_DIGIT.finditer(raw)]
    if not cuts:
        word = _word(raw)
        return [(word, at, at + len(raw))] if word else []
    bounds = [0, *cuts, len(raw)]
    out = []
    for lo, hi in itertools.pairwise(bounds):
        word = _word(raw[lo:hi])
        if word:
            out.append((word, at + lo, at + hi))
    return out


def tokenize(text: str) -> tuple[Token, ...]:
    """The words of ``text`` (module docstring), each normalised, with its span in ``text``."""
    folded, origin = _folded(text)
    out: list[Token] = []
    pattern = _ASCII_TOKEN if folded.isascii() else _unicode_token()
    for m in pattern.finditer(folded):
        for word, lo, hi in _pieces(m.group(), m.start()):
            out.append(Token(word, origin[lo], origin[hi - 1] + 1))
    return tuple(out)


@lru_cache(maxsize=4096)
def normalise(text: str) -> tuple[str, ...]:
    """The normalised words of ``text`` (module docstring): the key two names are compared by;
    the words :func:`tokenize` gives, without their spans (a third of the cost: the ranking
    normalises every candidate's name and summary).

    Memoised: the same names, summaries and cue phrases are normalised on every question, and
    the result is an immutable tuple, so sharing it is safe."""
    folded = text.lower() if text.isascii() else _folded(text)[0]
    pattern = _ASCII_TOKEN if folded.isascii() else _unicode_token()
    out: list[str] = []
    for m in pattern.finditer(folded):
        raw = m.group()
        if _LETTER_DIGIT.search(raw):
            out.extend(word for word, _, _ in _pieces(raw, 0))
        elif word := _word(raw):
            out.append(word)
    return tuple(out)


# Bidirectional-text controls (embeddings, overrides, isolates, marks): invisible, they reorder
# what is shown, so "GAR\u202e" and a reversed name look alike (Trojan Source, CVE-2021-42574).
BIDI_CONTROLS: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def confusable(name: str) -> str | None:
    """Why ``name`` could pass for another name, or None: a bidirectional-text control (it
    reorders what is displayed), or a word that mixes Latin, Greek and Cyrillic letters ("RАG"
    with a Cyrillic А looks like "RAG")."""
    for ch in name:
        if ch in BIDI_CONTROLS:
            return f"it holds the bidirectional-text control U+{ord(ch):04X} {unicodedata.name(ch)}"
    for word in re.findall(r"[^\W\d_]+", unicodedata.normalize("NFKC", name)):
        scripts = {s for s in map(_script, word) if s in _LOOKALIKE_SCRIPTS}
        if len(scripts) > 1:
            return f"the word {word!r} mixes {' and '.join(sorted(s.title() for s in scripts))} letters"
    return None
