"""Lexical similarity of task descriptions: the free pre-filter of de-duplication and step coverage.

Used by the breakdown agent (:mod:`moot.teams.board.breakdown`) to find clear duplicates
without a model call, by :mod:`moot.teams.board.plan` to merge repeated steps, and by the
result checks (:mod:`moot.teams.board.answer_check`) to see what a result adds to its task.
"""

from __future__ import annotations

import difflib
import re

STOP_WORDS = frozenset(
    "a an the and or of to in on for with by from at as is are be it its this that these those "
    "into about over all any each some then than so do does".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> list[str]:
    """Lower-cased words in order, without stop words, plurals folded (``tasks`` → ``task``)."""
    words = (w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in _WORD.findall(text.lower()))
    return [w for w in words if w not in STOP_WORDS]


def content_tokens(text: str) -> set[str]:
    return set(content_words(text))


def similarity(a: str, b: str) -> float:
    """The larger of token Jaccard and ``difflib``'s ratio over the word sequences (0-1).

    Words, not characters: character similarity calls "collect grooming advice" and "collect
    feeding advice" near-identical, which is exactly the pair a model should judge.
    """
    wa, wb = content_words(a), content_words(b)
    ta, tb = set(wa), set(wb)
    jaccard = len(ta & tb) / len(ta | tb) if ta | tb else 1.0
    ratio = difflib.SequenceMatcher(None, wa, wb, autojunk=False).ratio()
    return max(jaccard, ratio)


__all__ = ["STOP_WORDS", "content_tokens", "content_words", "similarity"]
