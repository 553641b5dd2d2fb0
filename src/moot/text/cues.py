"""Where a sentence hedges a claim or says that something is not known, read from closed word
classes of English (``data/hedges.txt``, ``data/knowing.txt``): modal verbs of possibility and
the verbs, adverbs and adjectives of likelihood and hearsay ("may", "could", "is suspected",
"reportedly"); and adjectives of not knowing ("unknown", "unclear"), a negation ("not",
"never", "no", "yet to be") before a verb of knowing or measuring ("not measured", "could not
say", "was never surveyed"), or a negative pronoun as its subject ("nobody has measured", "no one
has ever counted").

Lower-case words only: "May" mid-sentence is a month, not a modal verb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

CueKind = Literal["hedge", "unknown"]


def _load(name: str) -> frozenset[str]:
    words: set[str] = set()
    for line in (Path(__file__).with_name("data") / name).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words.update(line.split())
    return frozenset(words)


HEDGES = _load("hedges.txt")
_KNOWING = _load("knowing.txt")
_UNKNOWN_ADJECTIVES = frozenset(w for w in _KNOWING if w.startswith("un"))
_KNOWING_VERBS = _KNOWING - _UNKNOWN_ADJECTIVES
_NEGATION = r"(?:not|never|no|cannot|n't|yet\s+to\s+be)"
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NEGATED_KNOWING = re.compile(
    rf"\b{_NEGATION}\s+(?:(?:been|be|being|yet|fully|properly|reliably|directly|clearly|to|the|any)\s+){{0,3}}"
    r"(?P<verb>[a-z]+)\b")
_NOBODY_KNOWING = re.compile(
    r"\b(?:nobody|no\s+one|no-one|none\s+of\s+us|none\s+of\s+them)\s+"
    r"(?:(?:has|have|had|is|are|was|were|will|would|can|could|did|does|do|ever|yet|so|far|actually|properly|"
    r"really|reliably|been|able|to)\s+){0,4}(?P<verb>[a-z]+)\b", re.IGNORECASE)
"""A negative pronoun as the subject of a verb of knowing ("nobody has measured", "no one has ever
counted", "nobody can say"): the same as a negated verb, said the other common way."""


@dataclass(frozen=True, slots=True)
class Cue:
    """A word (or words) of one sentence that hedges or says something is not known."""

    kind: CueKind
    text: str
    start: int
    end: int


def find_cues(sentence: str) -> list[Cue]:
    """Every hedge and unknown cue in one sentence, in order."""
    found: list[Cue] = []
    for match in _WORD.finditer(sentence):
        word = match.group(0)
        if word in HEDGES:
            found.append(Cue("hedge", word, match.start(), match.end()))
        elif word in _UNKNOWN_ADJECTIVES:
            found.append(Cue("unknown", word, match.start(), match.end()))
    for pattern in (_NEGATED_KNOWING, _NOBODY_KNOWING):
        for match in pattern.finditer(sentence):
            if match.group("verb").lower() in _KNOWING_VERBS:
                found.append(Cue("unknown", match.group(0), match.start(), match.end()))
    return sorted(found, key=lambda c: c.start)


def hedged(sentence: str, start: int = 0, end: int | None = None) -> bool:
    """Whether a hedge cue lies within ``sentence[start:end]``."""
    stop = len(sentence) if end is None else end
    return any(c.kind == "hedge" and start <= c.start and c.end <= stop for c in find_cues(sentence))


def says_unknown(sentence: str) -> bool:
    """Whether the sentence says that something is not known or not measured."""
    return any(c.kind == "unknown" for c in find_cues(sentence))


__all__ = ["HEDGES", "Cue", "CueKind", "find_cues", "hedged", "says_unknown"]
