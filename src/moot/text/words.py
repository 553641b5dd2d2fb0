"""Words, stop words and stems: the one tokenizer and stemmer the teams match text with.

Stems come from the Snowball English stemmer (``snowballstemmer``), so "registered",
"registers" and "registration" meet at "regist" and "volunteers" at "volunt"; the stop words
are English function words (``data/stopwords.txt``), closed classes of the language.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from pathlib import Path

import snowballstemmer

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_STEMMER = snowballstemmer.stemmer("english")


def _load_words(name: str) -> frozenset[str]:
    path = Path(__file__).with_name("data") / name
    entries: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            entries.update(line.split())
    return frozenset(entries)


STOPWORDS: frozenset[str] = _load_words("stopwords.txt")
"""English function words (articles, pronouns, auxiliaries, prepositions, conjunctions)."""

ARTICLES: frozenset[str] = frozenset({"a", "an", "the"})
"""The articles: the words a noun phrase opens with before its own words."""

REFERRING: frozenset[str] = _load_words("referring.txt")
"""Third-person pronouns and demonstratives: opening a sentence, they point back."""

PERSONAL: frozenset[str] = frozenset("he him his she her hers".split())
"""The referring words that point to a person (never to an amount)."""


def fold(text: str) -> str:
    """Unicode-normalised and case-folded, for comparing words."""
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    """The words of a text, case-folded, in order (an apostrophe inside a word is kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(fold(text))]


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of one word (case-folded first)."""
    folded = fold(word).replace("’", "'")
    if folded.endswith("'s"):
        folded = folded[:-2]
    return _STEMMER.stemWord(folded)


def content_words(text: str, *, stems: bool = True, numbers: bool = True) -> list[str]:
    """The words that carry meaning: stop words dropped, stemmed unless ``stems=False``.

    Numbers are kept (``numbers=False`` drops them); order is kept and repeats are not removed.
    """
    out = []
    for word in words(text):
        if word in STOPWORDS or (not numbers and word.replace(".", "").isdigit()):
            continue
        out.append(stem(word) if stems else word)
    return out


def refers_back(sentence: str) -> str:
    """The word a sentence opens with when it points back ("It rose…", "That number…", "She said…"), else ""."""
    first = words(sentence[:40])
    return first[0] if first and first[0] in REFERRING else ""


__all__ = ["ARTICLES", "PERSONAL", "REFERRING", "STOPWORDS", "content_words", "fold", "refers_back", "stem", "words"]
