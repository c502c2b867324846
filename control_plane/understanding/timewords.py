"""Time words in a question: the valid time a learner asks about ("back in 2018", "as of January
2025", "at the start of 2025", "in mid-2024", "two years ago", "today").

Pure: ``now`` is passed in (the planner's clock), nothing reads the clock. Finding and reading a
date is left to ``dateparser`` (a maintained library that knows month names, numeric dates and
relative phrases); this module only

* hides concept names first (``masked`` token spans from the name index), so "GPT-4", "Llama 3"
  or a concept called "May" are never read as dates;
* keeps a hit only when it names a year (19xx/20xx) or is a relative word ("today", "now",
  "ago", "last year"): a bare number ("within 2 hops") or a lone month is not a time point;
* applies the part-of-period words the parser does not ("start/beginning/early" → the first
  day, "mid/middle" → the middle, "end/late" → the last day of that year or month).
"""

from __future__ import annotations

import calendar
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from control_plane.understanding.text import Text

__all__ = ["TimePoint", "find_time"]

_YEAR: Final = re.compile(r"\b(19|20)\d\d\b")
_RELATIVE: Final = re.compile(
    r"\b(today|now|yesterday|ago|last|this|current|currently|present)\b", re.IGNORECASE
)
# A cheap pre-check: a digit, a month, or a relative time word must occur for a time point.
_MAYBE_TIME: Final = re.compile(
    r"\d|\b(today|now|yesterday|ago|last|this|current|currently|present|jan|feb|mar|apr|may|jun|jul|aug|"
    r"sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|"
    r"december)\b",
    re.IGNORECASE,
)
_START: Final = frozenset({"start", "beginning", "early", "begin"})
_MIDDLE: Final = frozenset({"mid", "middle"})
_END: Final = frozenset({"end", "late", "close"})
# Years said in words ("twenty nineteen", "two thousand and twenty", "nineteen ninety-nine").
_UNITS: Final = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS: Final = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                 "eighteen", "nineteen")  # fmt: skip
_TENS: Final = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_VALUE: Final = {
    **{w: i + 1 for i, w in enumerate(_UNITS)},
    **{w: i + 10 for i, w in enumerate(_TEENS)},
    **{w: (i + 2) * 10 for i, w in enumerate(_TENS)},
}
_TWO_DIGITS: Final = rf"(?:(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|oh[- ](?:{'|'.join(_UNITS)}))"
_SPELT_YEAR: Final = re.compile(
    rf"\b(?:(?P<century>nineteen|twenty)[- ](?P<rest>{_TWO_DIGITS})"
    rf"|two thousand(?: and)?(?: (?P<after>{_TWO_DIGITS}|{'|'.join(_UNITS)}))?)\b",
    re.IGNORECASE,
)


def _number(words: str) -> int:
    """The value of a spelt number below 100 ("twenty-three", "oh five", "eleven")."""
    return sum(_WORD_VALUE.get(w, 0) for w in re.split(r"[- ]", words.lower()))


def _full_year(match: re.Match[str]) -> str:
    """A year cut to two digits after an apostrophe: '99 is 1999, '25 is 2025 (up to this
    century's next ten years: '35 would be 2035, '40 1940)."""
    short = int(match.group(1))
    return str(2000 + short if short < 40 else 1900 + short)


def _digits(match: re.Match[str]) -> str:
    if match.group("century"):
        return str(
            (19 if match.group("century").lower() == "nineteen" else 20) * 100 + _number(match.group("rest"))
        )
    return str(2000 + (_number(match.group("after")) if match.group("after") else 0))


# Days named for a feast fixed on the calendar everywhere the name is used: the parser knows none.
# (Movable feasts, Easter or Thanksgiving, are not read: their date needs a rule per year and
# country, and a wrong date is worse than the question's own "no time words".)
_FIXED_DAYS: Final = (
    (re.compile(r"\bnew\s+year['’]?s\s+eve\b", re.IGNORECASE), "31 December"),
    (re.compile(r"\bnew\s+year['’]?s(?:\s+day)?\b", re.IGNORECASE), "1 January"),
    (re.compile(r"\bchristmas\s+eve\b", re.IGNORECASE), "24 December"),
    (re.compile(r"\b(?:christmas|xmas)(?:\s+day)?\b", re.IGNORECASE), "25 December"),
    (re.compile(r"\bboxing\s+day\b", re.IGNORECASE), "26 December"),
    (re.compile(r"\bvalentine['’]?s(?:\s+day)?\b", re.IGNORECASE), "14 February"),
    (re.compile(r"\bhalloween\b", re.IGNORECASE), "31 October"),
)
# "the month of January 2025", "the year 2023": the parser's search finds no date behind the
# period noun; the noun adds nothing to the date after it.
_PERIOD_NOUN: Final = re.compile(
    r"\b(?:the\s+)?(?:year\s+(?=(?:19|20)\d\d\b)|month\s+of\s+(?=[A-Za-z]{3,}))", re.IGNORECASE
)

# A month's name, whole or cut short.
_MONTH_WORD: Final = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# "the first day of 2025", "the last day of March 2025": the parser finds the year or month and
# drops the day; written as the date it names instead.
_ORDINAL_DAY: Final = re.compile(
    r"\b(?:the\s+)?(?P<which>first|1st|last|final)\s+day\s+of\s+(?:the\s+year\s+)?"
    rf"(?:(?P<month>{_MONTH_WORD})\s+)?(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_MONTHS: Final = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

# A day of the month written as an ordinal word ("the fifteenth of January", "March the
# twenty-first"): the parser reads "15th" but not "fifteenth" (it kept only the month).
_ORDINAL_WORDS: Final = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
                         "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
                         "seventeenth", "eighteenth", "nineteenth")  # fmt: skip
_ORDINAL_VALUE: Final = {
    **{w: i + 1 for i, w in enumerate(_ORDINAL_WORDS)},
    "twentieth": 20,
    "thirtieth": 30,
    **{f"twenty {w}": 20 + i + 1 for i, w in enumerate(_ORDINAL_WORDS[:9])},
    "thirty first": 31,
}
_ORDINAL: Final = "|".join(w.replace(" ", r"[- ]") for w in sorted(_ORDINAL_VALUE, key=len, reverse=True))
_ORDINAL_OF_MONTH: Final = re.compile(
    rf"\b(?:the\s+)?(?P<day>{_ORDINAL})\s+(?:day\s+)?of\s+(?P<month>{_MONTH_WORD})\b", re.IGNORECASE
)
_MONTH_ORDINAL: Final = re.compile(
    rf"\b(?P<month>{_MONTH_WORD})\s+(?:the\s+)?(?P<day>{_ORDINAL})\b", re.IGNORECASE
)


def _day_number(match: re.Match[str]) -> str:
    day = _ORDINAL_VALUE[re.sub(r"[- ]+", " ", match.group("day").lower())]
    return f"{day} {match.group('month')}"


def _ordinal_day(match: re.Match[str]) -> str:
    year = int(match.group("year"))
    month_word = match.group("month")
    first = match.group("which").lower() in ("first", "1st")
    month = _MONTHS.index(month_word[:3].lower()) + 1 if month_word else (1 if first else 12)
    day = 1 if first else calendar.monthrange(year, month)[1]
    return f"{day} {calendar.month_name[month]} {year}"


# Words that only mean "the present": the reading records them, the time stays now.
_TODAY: Final = re.compile(r"\W*(?:right\s+)?(?:now|today)\W*", re.IGNORECASE)
_NOW_WORDS: Final = re.compile(r"\b(currently|at present|these days|right now|nowadays)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TimePoint:
    """A valid time read from the question, and the words it came from."""

    valid_at: datetime
    words: str

    def to_dict(self) -> dict[str, Any]:
        return {"valid_at": self.valid_at.isoformat().replace("+00:00", "Z"), "words": self.words}


def _mask(text: Text, masked: Iterable[tuple[int, int]]) -> str:
    """``text`` with each masked token span (a concept's name) written as the neutral word "thing":
    its digits are no date ("GPT-4", "Llama 3"), and the parser's search still sees a word there
    (with only blanks, "before <blank> on 3 June 2023" was read as "June" and "2023" apart)."""
    spans = list(masked)
    if not spans:
        return text.raw
    tokens = text.spans  # the same words as the names'
    chars = list(text.raw)
    for start, end in spans:
        for lo, hi in tokens[start:end]:
            for i in range(lo, hi):
                chars[i] = ""
        if start < end <= len(tokens):
            chars[tokens[start][0]] = " thing "
    return "".join(chars)


def _settings(now: datetime, *, explicit_year: bool) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "RELATIVE_BASE": now.astimezone(UTC).replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "RETURN_AS_TIMEZONE_AWARE": True,
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
    }
    if explicit_year:
        # "in 2018" is the start of 2018, not today's month and day in 2018.
        settings |= {"PREFER_DAY_OF_MONTH": "first", "PREFER_MONTH_OF_YEAR": "first"}
    return settings


def _period(words_before: list[str], hit: str, when: datetime) -> datetime:
    """Apply "start of / mid / end of" to the year or month the hit names."""
    lead = {w.lower() for w in words_before[-3:]}
    if lead & _START and not (words_before[-1:] and words_before[-1].lower() in {"early", "of"}):
        lead -= _START  # "start of 2025", "early 2025"; not "what can I start learning today"
    year_only = bool(re.fullmatch(r"\W*(?:\w+\s+)?(19|20)\d\d\W*", hit)) and not re.search(
        r"[A-Za-z]{3,}", re.sub(r"^(in|of|on|at|by)\s+", "", hit.strip(), flags=re.IGNORECASE)
    )
    if lead & _START:
        return when.replace(month=1, day=1) if year_only else when.replace(day=1)
    if lead & _MIDDLE:
        return when.replace(month=7, day=1) if year_only else when.replace(day=15)
    if lead & _END:
        if year_only:
            return when.replace(month=12, day=31)
        return when.replace(day=calendar.monthrange(when.year, when.month)[1])
    return when


def _parse_one(text: str, now: datetime) -> datetime | None:
    try:
        import dateparser

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            when: datetime | None = dateparser.parse(
                text, languages=["en"], settings=_settings(now, explicit_year=bool(_YEAR.search(text)))
            )
            return when
    except Exception:  # the parser is third-party: a failure there is "no time words"
        return None


def find_time(text: str | Text, now: datetime, masked: Iterable[tuple[int, int]] = ()) -> TimePoint | None:
    """The valid time ``text`` names, if any (module docstring); never raises on any text.
    ``masked``: token spans (of ``text``'s words) that are names, not time words."""
    if not (text.raw if isinstance(text, Text) else text).strip():
        return None
    plain = _mask(Text.of(text), masked)
    # "mid-2024", "mid-March" are one token to the parser; split the period word off.
    plain = re.sub(r"\b(mid|early|late)-(?=\w)", r"\1 ", plain, flags=re.IGNORECASE)
    plain = _SPELT_YEAR.sub(_digits, plain)  # "back in twenty nineteen" -> "back in 2019"
    plain = re.sub(r"(?<![\w'])['’](\d\d)\b", _full_year, plain)  # "Jan '25" -> "Jan 2025"
    plain = _PERIOD_NOUN.sub("", plain)  # "in (the) year 2023", "the month of January 2025"
    for day, date in _FIXED_DAYS:  # "on New Year's Day 2025" -> "on 1 January 2025"
        plain = day.sub(date, plain)
    plain = _ORDINAL_DAY.sub(_ordinal_day, plain)  # "the last day of 2023" -> "31 December 2023"
    plain = _ORDINAL_OF_MONTH.sub(_day_number, plain)  # "the fifteenth of January" -> "15 January"
    plain = _MONTH_ORDINAL.sub(_day_number, plain)  # "March the third" -> "3 March"
    now_word = _NOW_WORDS.search(plain)
    if not _MAYBE_TIME.search(plain):
        # Most questions name no time: skip the parser (several milliseconds a call).
        return TimePoint(now.astimezone(UTC), now_word.group(0)) if now_word else None
    try:
        from dateparser.search import search_dates

        with warnings.catch_warnings():
            # dateparser's own dependencies warn about their internals on some versions.
            warnings.simplefilter("ignore")
            hits = search_dates(plain, languages=["en"], settings=_settings(now, explicit_year=True)) or []
    except Exception:  # the parser is third-party: a failure there is "no time words"
        hits = []
    for hit, _ in hits:
        if not (_YEAR.search(hit) or _RELATIVE.search(hit)):
            continue
        when = None
        # The search may glue a preposition onto the date ("after in january 2025" once a name
        # between them is masked): drop leading words until the rest parses.
        words_of_hit = hit.split()
        for k in range(len(words_of_hit)):
            tail = " ".join(words_of_hit[k:])
            if not (_YEAR.search(tail) or _RELATIVE.search(tail)):
                break
            when = _parse_one(tail, now)
            if when is not None:
                hit = tail
                break
        if when is None:
            continue
        at = plain.find(hit)
        before = re.findall(r"[A-Za-z]+", plain[: max(at, 0)])
        today = bool(_TODAY.fullmatch(hit))
        # "can I start now": now is a moment, not a period's first day at midnight
        when = now.astimezone(UTC) if today else _period(before, hit, when.astimezone(UTC))
        lead = [w for w in before[-3:]]
        leads = {"as", "back"} if today else _START | _MIDDLE | _END | {"as", "back"}
        period = [i for i, w in enumerate(lead) if w.lower() in leads]
        hit_words = re.sub(r"^(?:on|of)\s+(?=\S)", "", hit.strip(), flags=re.IGNORECASE)
        words = " ".join([*lead[period[0] :], hit.strip()]) if period else hit_words
        return TimePoint(when, words)
    if now_word is not None:
        return TimePoint(now.astimezone(UTC), now_word.group(0))
    return None
