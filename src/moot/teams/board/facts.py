"""Facts found by their format: numbers, dates and capitalised names.

The board's result checks (:mod:`moot.teams.board.answer_check`) ask one question of a result:
does it carry anything from its inputs? A fact here is a piece of text whose *form* says it is
a fact, whatever the document is about:

- a **date**: ISO (``2031-03-14``, ``2031-03``), day-month-year (``14 March 2031``),
  month-day-year (``March 14, 2031``) or month-year (``March 2031``); normalised to
  ``YYYY-MM-DD`` / ``YYYY-MM`` so that two spellings of one date meet;
- a **number**: digits with an optional thousands separator and decimals (``12,400``,
  ``3.5``), normalised to its value (``12,400`` = ``12400`` = ``12400.0``); numbers inside a
  date, a file name or a word (``B12``) are not numbers of their own;
- a **name**: a run of capitalised words (``Harbour Line``, ``Ada Lovelace``). A single
  capitalised word at the start of a sentence is just the start of a sentence and is left
  out; leading function words (``The``, ``In``) are dropped from a run.

Nothing here knows what a document is about; month names are the calendar's, not anyone's data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from moot.teams.board.similarity import STOP_WORDS

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"

_FILE_NAME = re.compile(r"(?<![\w/.-])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}(?![\w-])")
"""A path or file name: something ending in ``.ext`` (``context/notes-2031.md``)."""
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MDY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MY = re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])[-+−]?\d+(?:\.\d+)?(?![\w])")
_NAME_RUN = re.compile(r"[A-Z][\w'’-]*(?:\s+(?:of|de|van|von|la|le|du|del|da)?\s*[A-Z][\w'’-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*|[\"“(]\s*|^[-*•#>]+\s*|\n[-*•#>]+\s*)$")


def _month_number(word: str) -> int:
    prefix = word.lower()[:3]
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(prefix))


@dataclass(frozen=True)
class Fact:
    """One fact: its kind (``number``, ``date``, ``name``), its normalised key, and how it was written."""

    kind: str
    key: str
    text: str


@dataclass
class Facts:
    """Every fact in one text, in order of appearance (first spelling kept per key)."""

    items: list[Fact] = field(default_factory=list)

    def keys(self) -> set[tuple[str, str]]:
        return {(f.kind, f.key) for f in self.items}

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def of_kind(self, kind: str) -> list[Fact]:
        return [f for f in self.items if f.kind == kind]


def number_key(text: str) -> str | None:
    """The value of a written number as a canonical string (``12,400`` → ``12400``), or ``None``."""
    cleaned = text.replace(",", "").replace("−", "-").lstrip("+")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    if value != value or abs(value) > 1e15:  # NaN or absurd
        return None
    return str(int(value)) if value == int(value) else repr(round(value, 6))


def number_value(text: str) -> float | None:
    key = number_key(text)
    return None if key is None else float(key)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the spans replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _dates(text: str) -> tuple[list[tuple[int, Fact]], list[tuple[int, int]]]:
    found: list[tuple[int, Fact]] = []
    spans: list[tuple[int, int]] = []

    def taken(start: int, end: int) -> bool:
        return any(s < end and start < e for s, e in spans)

    for match in _ISO_DATE.finditer(text):
        year, month, day = match.group(1), match.group(2), match.group(3)
        if not 1 <= int(month) <= 12 or (day and not 1 <= int(day) <= 31):
            continue
        key = f"{year}-{month}-{day}" if day else f"{year}-{month}"
        found.append((match.start(), Fact("date", key, match.group(0))))
        spans.append(match.span())
    for pattern, order in ((_DMY, "dmy"), (_MDY, "mdy"), (_MY, "my")):
        for match in pattern.finditer(text):
            if taken(*match.span()):
                continue
            if order == "dmy":
                day, month, year = int(match.group(1)), _month_number(match.group(2)), match.group(3)
            elif order == "mdy":
                month, day, year = _month_number(match.group(1)), int(match.group(2)), match.group(3)
            else:
                month, day, year = _month_number(match.group(1)), 0, match.group(2)
            if day > 31:
                continue
            key = f"{year}-{month:02d}-{day:02d}" if day else f"{year}-{month:02d}"
            found.append((match.start(), Fact("date", key, match.group(0))))
            spans.append(match.span())
    return found, spans


def _names(text: str) -> list[tuple[int, Fact]]:
    found: list[tuple[int, Fact]] = []
    for match in _NAME_RUN.finditer(text):
        words = match.group(0).split()
        start = match.start()
        at_sentence_start = bool(_SENTENCE_START.search(text[:start]))
        # Leading function words ("The", "In") are the sentence's, not the name's.
        while words and words[0].lower() in STOP_WORDS:
            start = text.index(words[1], start + len(words[0])) if len(words) > 1 else start
            words = words[1:]
            at_sentence_start = False if words else at_sentence_start
        if not words:
            continue
        if len(words) == 1 and (at_sentence_start or words[0].lower() in STOP_WORDS or words[0] == "I"):
            continue
        if words[0].lower() in MONTHS and len(words) == 1:
            continue
        name = " ".join(words).strip("'’-")
        if len(name) < 2:
            continue
        found.append((start, Fact("name", name.lower(), name)))
    return found


def _without_files_and_dates(text: str) -> tuple[str, list[tuple[int, Fact]]]:
    """``text`` with file names and dates blanked (offsets kept), and the dates found."""
    plain = _blank(text, [m.span() for m in _FILE_NAME.finditer(text)])
    dated, date_spans = _dates(plain)
    return _blank(plain, date_spans), dated


def number_spans(text: str) -> list[tuple[int, int, Fact]]:
    """Every number of ``text`` with where it is written (``start, end, fact``), dates and file names aside."""
    rest, _ = _without_files_and_dates(str(text or ""))
    out = []
    for match in _NUMBER.finditer(rest):
        key = number_key(match.group(0))
        if key is not None:
            out.append((match.start(), match.end(), Fact("number", key, match.group(0).lstrip("+"))))
    return out


def extract_facts(text: str) -> Facts:
    """Every date, number and name in ``text`` (see the module docstring)."""
    text = str(text or "")
    rest, dated = _without_files_and_dates(text)
    numbers = [(start, fact) for start, _, fact in number_spans(text)]
    ordered = sorted([*dated, *numbers, *_names(rest)], key=lambda pair: pair[0])
    seen: set[tuple[str, str]] = set()
    items = []
    for _, fact in ordered:
        if (fact.kind, fact.key) not in seen:
            seen.add((fact.kind, fact.key))
            items.append(fact)
    return Facts(items)


def carried(facts: Facts, text: str) -> list[Fact]:
    """The facts of ``facts`` that ``text`` carries too (numbers and dates by value, names by words)."""
    found = extract_facts(text)
    keys = found.keys()
    lowered = " ".join(str(text).lower().split())
    out = []
    for fact in facts.items:
        if fact.kind == "name":
            if fact.key in lowered:
                out.append(fact)
        elif (fact.kind, fact.key) in keys:
            out.append(fact)
        elif fact.kind == "date" and any(k == "date" and (key.startswith(fact.key) or fact.key.startswith(key))
                                         for k, key in keys):
            out.append(fact)  # 2031-03 and 2031-03-14 are the same month
    return out


MAX_EXTRACT_CHARS = 2000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])|\n+")


def fact_sentences(text: str, *, limit: int = MAX_EXTRACT_CHARS) -> str:
    """The sentences (and lines) of ``text`` that hold a fact, in order and as written, up to ``limit`` characters.

    What a step that reports a file's facts hands on, and what a step whose model could not write
    a checked result falls back to: the source's own words, nothing made up."""
    kept: list[str] = []
    size = 0
    for piece in _SENTENCE_END.split(str(text or "")):
        sentence = " ".join(piece.split()).lstrip("#>*- ").strip()
        if not sentence or not extract_facts(sentence):
            continue
        if size + len(sentence) > limit:
            break
        kept.append(sentence if sentence[-1] in ".!?:;" else f"{sentence}.")
        size += len(sentence) + 1
    return " ".join(kept)


def sentence_of(text: str, fact: Fact) -> str:
    """The sentence of ``text`` in which ``fact`` is written (for showing a fact in context)."""
    index = text.find(fact.text)
    if index < 0:
        return ""
    start = max(text.rfind(". ", 0, index), text.rfind("\n", 0, index))
    end_candidates = [i for i in (text.find(". ", index), text.find("\n", index)) if i >= 0]
    end = min(end_candidates) if end_candidates else len(text)
    return " ".join(text[start + 1:end + 1].split())


__all__ = ["Fact", "Facts", "MAX_EXTRACT_CHARS", "MONTHS", "carried", "extract_facts", "fact_sentences", "number_key", "number_spans", "number_value", "sentence_of"]
