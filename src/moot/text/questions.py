"""A question's own clauses, where one question asks two things ("Which function parses it, and
where is it called?"; "Why did A fall, and what links B to it?").

A clause ends at a question mark or a semicolon, or at a comma or an "and" that an interrogative
word follows (what, which, who, whom, whose, why, how, when, where): closed classes of the language,
never one text's wording. So "How did rainfall, prices and tourism change?" stays one clause, and
"In Quell, how did the dredge change prices?" is one clause of three words or more, since "In
Quell" is too short to ask anything.
"""

from __future__ import annotations

import re

from moot.text.words import words

INTERROGATIVES: frozenset[str] = frozenset({"what", "which", "who", "whom", "whose", "why", "how", "when", "where"})
"""The interrogative words a question's clause opens with."""

_CONJUNCTIONS = frozenset({"and", "but", "or", "so"})
_WH = "(?:" + "|".join(sorted(INTERROGATIVES) + ["in which", "from where"]) + ")"
_BREAKS = re.compile(rf"\?\s*|;\s*|,?\s+and\s+(?={_WH}\b)|,\s+(?={_WH}\b)", re.I)


def question_clauses(question: str, min_words: int = 3) -> list[str]:
    """The question's clauses in order, spaces folded and the commas around them dropped, each of
    at least ``min_words`` words."""
    parts = [" ".join(p.split()).strip(" ,") for p in _BREAKS.split(question)]
    return [p for p in parts if len(p.split()) >= min_words]


_AUXILIARIES = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "do", "does", "did",
                          "have", "has", "had", "having"})
"""Verbs of tense, voice and support (closed class): never the verb a clause is about."""


def predicate(clause: str) -> str:
    """What a clause says happened, from its last main verb on, as written ("Why is the harbour board
    shutting its net loft" → "shutting its net loft"; "What led the council to sell the old quay" →
    "sell the old quay"); "" when the tagger reads no verb but an auxiliary. A reader
    names such an event by its verb and what the verb acts on ("the closure of the net loft", "the
    quay sale"), not by who did it."""
    from moot.text.phrases import tag

    tokens = tag(clause)
    verbs = [t for t in tokens if t[1].startswith("VB") and t[0].lower() not in _AUXILIARIES]
    return clause[verbs[-1][3]:].strip(" ?.!,;") if verbs else ""


def opens_question(clause: str) -> bool:
    """Whether a clause asks: its first word, after a conjunction, is an interrogative word
    ("and what links …" asks; "Answer with one word" does not)."""
    tokens = words(clause)
    while tokens and tokens[0] in _CONJUNCTIONS:
        tokens = tokens[1:]
    return bool(tokens) and tokens[0] in INTERROGATIVES


__all__ = ["INTERROGATIVES", "opens_question", "question_clauses"]
