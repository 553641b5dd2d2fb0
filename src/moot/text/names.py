"""Proper names written in text, read by the format English gives them: capitalised words.

A run of capitalised words is a name ("Hadley Canal Trust", "Dr. Ana Ortiz"), joined
across the small words names contain ("Bank of England", "Isle of Man"). Function words at a
name's edges ("The") and the calendar's words (months and weekdays are dates, read by
:mod:`moot.text.dates`) are not part of a name, and a trailing possessive is dropped
("Quillorn's" → "Quillorn"). A single capitalised word that starts a sentence may be a name
("Norway has won…") or not ("Volunteers work…", "Sealed drains…", "Describe the…"): every
sentence's first word is capitalised. It is no name when the dictionary has it as a lower-case
word (TextBlob's tagging lexicon, 94,000 words, shipped in its wheel); otherwise it is kept, ranked
after the names the text capitalises mid-sentence. So a name that is also a word ("Rose said…")
is missed where it only ever opens a sentence, which costs less than every "Today" and
"Visitors" offered as the thing a sentence is about.
"""

from __future__ import annotations

import calendar
import functools
import importlib.util
import re
from collections.abc import Iterable
from pathlib import Path

from moot.errors import ConfigError
from moot.text.words import STOPWORDS

_CALENDAR = frozenset(
    name.lower()
    for name in [*calendar.month_name, *calendar.month_abbr, *calendar.day_name, *calendar.day_abbr]
    if name
) | frozenset(f"{d.lower()}s" for d in calendar.day_name)
_JOINERS = ("of", "the", "de", "du", "la", "le", "van", "von", "der", "den", "and", "for", "on", "upon")
_NAME = re.compile(
    r"(?<![\w'’])[A-Z][\w'’.&-]*(?:\s+(?:(?:" + "|".join(_JOINERS) + r")\s+)*[A-Z][\w'’.&-]*)*"
)
_POSSESSIVE = re.compile(r"['’]s?$")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\"“‘(—–-]\s*)$")


def _trim(words: list[str]) -> list[str]:
    while words and (words[0].lower().strip(".") in STOPWORDS or words[0].lower().strip(".") in _CALENDAR):
        words = words[1:]
    while words and (words[-1].lower().strip(".,") in STOPWORDS or words[-1].lower().strip(".,") in _CALENDAR):
        words = words[:-1]
    return words


@functools.lru_cache(maxsize=1)
def _lexicon() -> frozenset[str]:
    """The lexicon's words, read from the file in TextBlob's wheel (``word TAG`` a line) on first use.

    Read directly, not through ``textblob.en``, whose import brings NLTK's modules along: that took
    over a second, inside whichever team first met a capitalised word, on its event loop."""
    spec = importlib.util.find_spec("textblob")
    if spec is None or spec.origin is None:
        raise ConfigError("TextBlob is not installed", fix="run scripts/setup (or pip install moot) again")
    path = Path(spec.origin).parent / "en" / "en-lexicon.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.split(" ", 1)[0] for line in lines if line and not line.startswith(";;;"))


def is_dictionary_word(word: str) -> bool:
    """True when the lower-case form of ``word`` is in TextBlob's lexicon (a common word, not a name)."""
    lower = word.lower()
    return lower.isalpha() and lower in _lexicon()


def names_in(text: str) -> list[tuple[str, bool]]:
    """The capitalised runs of one sentence as ``(name, starts_the_sentence)``, in order; a single
    word that only opens the sentence and is a dictionary word is none (module doc)."""
    found: list[tuple[str, bool]] = []
    for match in _NAME.finditer(text):
        words = match.group(0).rstrip(".,;:").split()
        at_start = bool(_SENTENCE_START.search(text[: match.start()]))
        trimmed = _trim(words)
        if at_start and trimmed and trimmed[0] != words[0]:
            at_start = False  # "The Hadley Canal": the name starts after the capitalised article
        if not trimmed:
            continue
        name = _POSSESSIVE.sub("", " ".join(trimmed)).strip(" .,;:")
        single_opening = at_start and len(trimmed) == 1
        if single_opening and is_dictionary_word(name):
            continue
        if len(name) >= 2 and not name.replace(".", "").isdigit():
            found.append((name, single_opening))
    return found


def find_names(sentences: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """The names written in a document's sentences: those capitalised mid-sentence first, then
    the single words capitalised only where they start a sentence; most frequent first within each
    (ties in order of appearance). ``exclude`` drops names that are provenance (the publisher a
    document's front matter names).
    """
    skip = {e.casefold() for e in exclude if e}
    counts: dict[str, int] = {}
    mid_sentence: set[str] = set()
    order: dict[str, int] = {}
    for sentence in sentences:
        for name, at_start in names_in(sentence):
            order.setdefault(name, len(order))
            counts[name] = counts.get(name, 0) + 1
            if not at_start:
                mid_sentence.add(name)
    kept = [n for n in counts if n.casefold() not in skip]
    return sorted(kept, key=lambda n: (n not in mid_sentence, -counts[n], order[n]))


__all__ = ["find_names", "is_dictionary_word", "names_in"]
