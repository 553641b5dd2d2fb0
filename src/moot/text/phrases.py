"""Noun phrases of one sentence, read by TextBlob's rule-based tagger and chunker.

TextBlob ships the Brill-style lexicon and contextual rules of the Pattern parser inside its
wheel, so nothing is downloaded at run time (spaCy, NLTK's tagger, stanza and flair all fetch
their models). A noun phrase comes back as written in the sentence, with its character span:
leading determiners and possessive pronouns are dropped ("the paper mill" → "paper mill"),
a phrase that is only a pronoun, a number or a date is no phrase, and two noun phrases joined
by "of", "at" or a possessive are offered once more as one ("the paper mill at Ostby", "Duchy of
Quellan", "Tolvik's Quay fish market"), since names are often written that way; so is a lone common
noun with the preposition that completes it ("the rise in fares"). Three of the tagger's slips
inside a phrase are mended first, by grammar (:func:`_retagged`).

The same tagging reads the choices a question offers: the runs between its conjunctions, modal
verbs and punctuation (:func:`alternatives`), and the choices it sets against each other with an
alternation, "or", "vs", "instead of" (:func:`choice_sets`; a closed word class, in
``data/alternation.txt``), each read whole ("stay in and rest").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from moot.text.dates import find_dates
from moot.text.words import STOPWORDS

PhraseKind = Literal["np", "joined", "alternative"]

_DROP_LEADING = frozenset({"DT", "PRP$", "PDT", "WDT", "WP$", "CD", "POS"})
_DROP_TRAILING = frozenset({"POS", "CD"})
_NOT_A_PHRASE = frozenset({"PRP", "WP", "EX", "CD", "DT", "POS", "SYM", "LS"})
_JOINERS = frozenset({"of", "at"})
_COMPLEMENTS = frozenset({"in", "on", "from", "to", "for", "over"})
"""Prepositions that complete a lone common noun ("the rise in fares", "strain on the cable", "spill
from the tanker"): such a noun names an event or a state, and alone it says little."""


@dataclass(frozen=True, slots=True)
class Phrase:
    """One noun phrase of a sentence."""

    text: str
    """As written in the sentence."""
    start: int
    end: int
    head: str
    """Its last word (the noun the phrase is about, in English)."""
    kind: PhraseKind = "np"


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    from textblob.en import parse  # imported on first use: it brings NLTK's modules along

    return parse


def warm() -> None:
    """Load the tagger now (about a second on 2 cores, NLTK's modules with it), so that the first
    sentence read inside a deadline-bound run does not pay it on the event loop."""
    _parser()


@functools.lru_cache(maxsize=4096)
def tag(sentence: str) -> tuple[tuple[str, str, str, int, int], ...]:
    """The sentence's tokens as ``(word, tag, chunk, start, end)``; chunk is ``B-NP``, ``I-VP``, ``O``, …

    A token the tagger rewrote so that it cannot be found in the sentence any more is left out.
    """
    parsed = _parser()(sentence, tokenize=True, tags=True, chunks=True, relations=False, lemmata=False)
    out: list[tuple[str, str, str, int, int]] = []
    cursor = 0
    for part in parsed.split():
        for token in part:
            word = token[0].replace("&slash;", "/")
            at = sentence.find(word, cursor)
            if at < 0 or at - cursor > 12:
                continue
            cursor = at + len(word)
            out.append((word, token[1], token[2], at, cursor))
    return tuple(out)


def _trimmed(tokens: list[tuple[str, str, str, int, int]]) -> list[tuple[str, str, str, int, int]]:
    while tokens and (tokens[0][1] in _DROP_LEADING or tokens[0][1] == "PRP" or tokens[0][0].lower() in STOPWORDS):
        tokens = tokens[1:]
    while tokens and (tokens[-1][1] in _DROP_TRAILING or not tokens[-1][0][:1].isalnum()):
        tokens = tokens[:-1]
    return tokens


_ARTICLES = frozenset({"a", "an", "the"})
_NOUN = ("NN", "NNS", "NNP", "NNPS")
_VERB_FORMS = frozenset({"VB", "VBP", "VBD", "VBN", "VBG"})
_APOSTROPHES = frozenset({"'", "\u2019"})


def _in_np(token: tuple[str, str, str, int, int], pos: str | None = None, *, opens: bool = False) -> tuple[str, str, str, int, int]:
    return (token[0], pos or token[1], "B-NP" if opens else "I-NP", token[3], token[4])


def _retagged(tokens: tuple[tuple[str, str, str, int, int], ...]) -> tuple[tuple[str, str, str, int, int], ...]:
    """The tagger's tokens with three of its commonest slips inside a noun phrase mended, by the
    grammar of the language, not by any word list of a text:

    * an article or a possessive determiner is never followed by a verb, so a verb form right after
      one is a modifier when a noun follows ("the returned parcels") and the head noun when none does
      ("the strain on the cable", "the lining");
    * a past participle right after a preposition other than "that" and before a noun is a modifier
      ("of damaged pipes"); after "that" it may be a relative clause's verb ("that caused floods");
    * a base-form verb right after a singular noun that an article opens is part of the phrase ("the
      ice cover on the harbour"), where a subject's verb would agree ("the ice covers") unless an object
      follows it.

    (A possessive the tagger split at its apostrophe is joined in :func:`_groups`, like "of".)
    """
    out = list(tokens)
    n = len(out)
    for k in range(1, n):
        word, pos = out[k][0], out[k][1]
        before = out[k - 1]
        after = out[k + 1] if k + 1 < n else None
        if pos in _VERB_FORMS and (before[0].lower() in _ARTICLES or before[1] == "PRP$") and word.islower():
            if after is not None and (after[1] in _NOUN or after[1] == "JJ"):
                out[k] = _in_np(out[k], "JJ")
                out[k + 1] = _in_np(after)
            elif pos != "VBD" and pos != "VBN":
                out[k] = _in_np(out[k], "NN")
            else:
                continue
            out[k - 1] = _in_np(before, opens=not before[2].endswith("-NP") or before[2].startswith("B-"))
        elif (pos == "VBN" and before[1] == "IN" and before[0].lower() != "that" and word.islower() and after is not None
              and after[1] in ("NN", "NNS")):
            out[k] = _in_np(out[k], "JJ", opens=True)
            out[k + 1] = _in_np(after)
        elif (pos == "VB" and before[1] == "NN" and k >= 2 and out[k - 2][0].lower() in _ARTICLES and word.islower()
              and after is not None and after[1] in ("IN", "MD", "VBZ", "VBD")):
            out[k] = _in_np(out[k], "NN")
    return tuple(out)


def _possessive(tokens: tuple[tuple[str, str, str, int, int], ...], k: int) -> bool:
    """Whether the ``k``-th token is the apostrophe of a possessive the tagger split off a noun
    ("Tolvik ' s Quay"): the noun before it and the phrase after it are then joined like "of"."""
    return (tokens[k][0] in _APOSTROPHES and k > 0 and tokens[k - 1][1] in _NOUN and k + 1 < len(tokens)
            and tokens[k + 1][0] == "s")


def _bare_noun(tokens: list[tuple[str, str, str, int, int]]) -> bool:
    """Whether a run of tokens is one common noun, less its determiner ("the drop", "its downgrade")."""
    kept = _trimmed(tokens)
    return len(kept) == 1 and kept[0][1] in ("NN", "NNS") and kept[0][0].islower()


def _groups(tokens: tuple[tuple[str, str, str, int, int], ...]) -> list[tuple[str, list[tuple[str, str, str, int, int]]]]:
    """Runs of tokens: ``("np", tokens)``, ``("join", [a preposition])`` or ``("other", tokens)``."""
    groups: list[tuple[str, list[tuple[str, str, str, int, int]]]] = []
    tokens = _retagged(tokens)
    for k, token in enumerate(tokens):
        if _possessive(tokens, k) and groups and groups[-1][0] == "np":
            groups.append(("join", [token]))  # "Tolvik's Quay fish market", offered besides its parts
            continue
        word, pos, chunk = token[0], token[1], token[2]
        if chunk.endswith("-NP") and (pos == "CC" or word == ","):
            groups.append(("other", [token]))  # "Lucas and Mia" are two phrases
        elif chunk.endswith("-NP"):
            # a determiner inside a chunk opens a new phrase ("in 2024 the paper mill")
            if chunk.startswith("B-") or not groups or groups[-1][0] != "np" or pos == "DT":
                groups.append(("np", [token]))
            else:
                groups[-1][1].append(token)
        elif word.lower() in _JOINERS or (word.lower() in _COMPLEMENTS and groups and groups[-1][0] == "np"
                                          and _bare_noun(groups[-1][1])):
            groups.append(("join", [token]))
        elif groups and groups[-1][0] == "other":
            groups[-1][1].append(token)
        else:
            groups.append(("other", [token]))
    return _verb_in_noun_run(groups)


def _verb_like(tokens: list[Any], k: int, following: str = "") -> bool:
    """Whether the ``k``-th token of a noun run in a clause without a verb reads as its verb: a
    lower-case noun or verb form after a proper noun ("Ostby discharges waste"), or after any noun
    and before the start of another noun phrase ("the river supplies Lake Mira", "farmers use its water").
    ``following`` is the tag of the token after the run: a run's last word is before the start of
    another phrase when a determiner opens the next run ("the dam board sets the limits")."""
    word, pos = tokens[k][0], tokens[k][1]
    if not word.islower() or pos not in ("NN", "NNS", "VBZ", "VBP"):
        return False
    before = tokens[k - 1][1]
    after = tokens[k + 1][1] if k + 1 < len(tokens) else following
    if before.startswith("NNP") and pos in ("NNS", "VBZ"):
        return True
    return before.startswith("NN") and after in ("DT", "PRP$", "NNP", "NNPS", "CD")


def _verb_in_noun_run(groups: list[tuple[str, list[Any]]]) -> list[tuple[str, list[Any]]]:
    """A clause the tagger left without any verb ("Ostby discharges waste") has its verb inside a
    noun run: the plural-looking word after a proper noun is the verb, so the run is cut there."""
    clauses: list[list[int]] = [[]]
    for i, (kind, tokens) in enumerate(groups):
        clauses[-1].append(i)
        if kind == "other" and any(t[0] in ",;:" for t in tokens):
            clauses.append([])
    cut: dict[int, int] = {}
    for members in clauses:
        if any(t[1].startswith("VB") or t[1] == "MD" for i in members for t in groups[i][1]):
            continue
        for i in members:
            tokens = groups[i][1]
            following = groups[i + 1][1][0][1] if i + 1 < len(groups) and groups[i + 1][1] else ""
            at = next((k for k in range(1, len(tokens)) if _verb_like(tokens, k, following)), None)
            if groups[i][0] == "np" and at is not None:
                cut[i] = at
                break
    out: list[tuple[str, list[Any]]] = []
    for i, (kind, tokens) in enumerate(groups):
        if i in cut:
            at = cut[i]
            out += [("np", tokens[:at]), ("other", [tokens[at]])] + ([("np", tokens[at + 1:])] if tokens[at + 1:] else [])
        else:
            out.append((kind, tokens))
    return out


def noun_phrases(sentence: str) -> list[Phrase]:
    """The noun phrases of one sentence, in order (see the module docstring)."""
    dates = [(m.start, m.end) for m in find_dates(sentence)]
    phrases: list[Phrase] = []
    previous: Phrase | None = None
    last_joined: Phrase | None = None
    joined = possessive = False
    for kind, tokens in _groups(tag(sentence)):
        if kind == "join":
            joined = previous is not None
            possessive = tokens[0][0] in _APOSTROPHES
            continue
        if kind == "other":
            previous, last_joined, joined = None, None, False
            continue
        kept = _trimmed(list(tokens))
        start, end = (kept[0][3], kept[-1][4]) if kept else (0, 0)
        if (not kept or all(t[1] in _NOT_A_PHRASE for t in kept)
                or any(a <= start and end <= b for a, b in dates)):
            previous, last_joined, joined = None, None, False
            continue
        phrase = Phrase(sentence[start:end], start, end, kept[-1][0])
        if joined and previous is not None:
            # "sale of the mill": the sale; "Tolvik's Quay market": the market, and the sale of it
            head = phrase.head if possessive else previous.head
            whole = Phrase(sentence[previous.start:end], previous.start, end, head, "joined")
            phrases.append(whole)
            if possessive and last_joined is not None and last_joined.end == previous.end:
                phrases.append(Phrase(sentence[last_joined.start:end], last_joined.start, end, last_joined.head, "joined"))
            last_joined = whole
        else:
            last_joined = None
        phrases.append(phrase)
        previous, joined = phrase, False
    return phrases


_CLAUSE_BREAKS = frozenset({"CC", "MD"})
_CLAUSE_LEADING = frozenset({"PRP", "TO", "WP", "WRB", "WDT", "RB"})


def alternatives(text: str) -> list[Phrase]:
    """The runs of a text between its coordinating conjunctions, modal verbs and punctuation, as
    written: the pieces a question that offers a choice is made of ("should I finish the report or go
    for a run at 7pm?" → "finish the report", "go for a run at 7pm"). Leading pronouns, "to",
    adverbs and wh-words are dropped, so a piece starts at its verb or noun; an apostrophe is not
    punctuation here ("Ana's party"). Which pieces are the things chosen between is not decided
    here: that is a reading of the sentence, the model's under a schema."""
    pieces: list[list[tuple[str, str, str, int, int]]] = [[]]
    for token in tag(text):
        word, pos = token[0], token[1]
        if pos in _CLAUSE_BREAKS or not any(ch.isalnum() or ch in "'’" for ch in word):
            pieces.append([])
        else:
            pieces[-1].append(token)
    out: list[Phrase] = []
    for tokens in pieces:
        while tokens and tokens[0][1] in _CLAUSE_LEADING:
            tokens = tokens[1:]
        if tokens and any(ch.isalpha() for t in tokens for ch in t[0]):
            start, end = tokens[0][3], tokens[-1][4]
            out.append(Phrase(text[start:end], start, end, tokens[-1][0], "alternative"))
    return out


def _alternations() -> tuple[tuple[str, ...], ...]:
    lines = (Path(__file__).with_name("data") / "alternation.txt").read_text(encoding="utf-8").splitlines()
    return tuple(tuple(line.lower().split()) for line in lines if line.strip() and not line.startswith("#"))


_ALTERNATIONS = _alternations()
_JOINING = frozenset({"and", "&", "n", "plus"})
"""Coordinators that join the words of one choice ("stay in and rest"), not two choices."""
_OPENING_CHOICE = frozenset({"either", "whether"})
"""The correlatives that open the first of two choices ("either A or B")."""
_AUXILIARIES = frozenset({"is", "are", "was", "were", "am", "do", "does", "did", "have", "has"})
"""The auxiliaries a question's inverted frame opens with ("is it better to", "do I")."""


def _marker_at(tokens: tuple[tuple[str, str, str, int, int], ...], k: int) -> int:
    """How many tokens from ``k`` on spell an alternation ("or", "instead of"); 0 when none does.
    A full stop the tagger split off "vs." belongs to the marker."""
    for marker in _ALTERNATIONS:
        n = len(marker)
        if tuple(t[0].lower() for t in tokens[k:k + n]) == marker:
            return n + (1 if k + n < len(tokens) and tokens[k + n][0] == "." and tokens[k + n][3] == tokens[k + n - 1][4] else 0)
    return 0


def _is_break(tokens: tuple[tuple[str, str, str, int, int], ...], k: int) -> bool:
    """Whether the ``k``-th token ends the run of one choice: punctuation (a full stop inside the
    sentence closes an abbreviation, "Co.", and does not), a modal verb, or a coordinator that does
    not join the words of one choice ("but", "so", "or")."""
    word, pos = tokens[k][0], tokens[k][1]
    if word == "." and k + 1 < len(tokens):
        return False
    if word.lower() in _JOINING:
        return False
    if not any(ch.isalnum() or ch in "'’" for ch in word):
        return True
    return pos in ("MD", "CC") or _marker_at(tokens, k) > 0


def _choice(sentence: str, tokens: list[tuple[str, str, str, int, int]], offset: int) -> Phrase | None:
    while tokens and (tokens[0][1] in _CLAUSE_LEADING or tokens[0][1] in ("MD", "CC") or tokens[0][0].lower() in _OPENING_CHOICE):
        tokens = tokens[1:]
    if len(tokens) > 2 and tokens[0][0].lower() in _AUXILIARIES and tokens[1][1] == "PRP":
        # a question's inverted frame ("is it better to X", "do I X"): the choice is what follows
        to = next((i for i, t in enumerate(tokens) if t[1] == "TO"), None)
        tokens = tokens[to + 1:] if to is not None and to + 1 < len(tokens) and tokens[to + 1][1].startswith("VB") else tokens[2:]
    while tokens and not any(ch.isalnum() for ch in tokens[-1][0]):
        tokens = tokens[:-1]
    if not tokens or not any(ch.isalpha() for t in tokens for ch in t[0]):
        return None
    start, end = tokens[0][3], tokens[-1][4]
    return Phrase(sentence[start:end], offset + start, offset + end, tokens[-1][0], "alternative")


def choice_sets(text: str) -> list[tuple[Phrase, ...]]:
    """The choices a text sets against each other, one tuple per run of alternations in a sentence
    ("should I go to the pool or stay in and rest?" → ("go to the pool", "stay in and rest");
    "A, B or C" gives ("B", "C"), the comma ending a choice). Each choice runs from the alternation to
    the nearest break of the sentence on either side (see :func:`_is_break`), less leading pronouns,
    modal verbs, "to" and adverbs; "and" stays inside a choice. Which set, if several, is the one
    the request asks about is not decided here: that is the model's reading, under a schema. Spans
    are the text's where its sentences are found in it as pysbd returns them (whitespace single)."""
    from moot.text.sentences import split_sentences

    out: list[tuple[Phrase, ...]] = []
    cursor = 0
    for sentence in split_sentences(text):
        at = text.find(sentence, cursor)
        offset = max(at, 0)
        cursor = offset + len(sentence) if at >= 0 else cursor
        tokens = tag(sentence)
        current: list[Phrase] = []
        k = 0
        while k < len(tokens):
            n = _marker_at(tokens, k)
            if not n:
                k += 1
                continue
            left = k - 1
            while left >= 0 and tokens[left][0] in ",;":  # "A, or B"
                left -= 1
            while left >= 0 and not _is_break(tokens, left):
                left -= 1
            right = k + n
            while right < len(tokens) and (tokens[right][1] in _CLAUSE_LEADING or tokens[right][1] == "MD"):
                right += 1
            end = right
            while end < len(tokens) and not _is_break(tokens, end):
                end += 1
            before = _choice(sentence, list(tokens[left + 1:k]), offset)  # trailing commas trimmed there
            after = _choice(sentence, list(tokens[right:end]), offset)
            if before is not None and after is not None:
                if current and current[-1].end >= before.start and current[-1].text == before.text:
                    current.append(after)  # "A or B or C": one set of three
                else:
                    if len(current) > 1:
                        out.append(tuple(current))
                    current = [before, after]
            k += n
        if len(current) > 1:
            out.append(tuple(current))
    return out


__all__ = ["Phrase", "PhraseKind", "alternatives", "choice_sets", "noun_phrases", "tag"]
