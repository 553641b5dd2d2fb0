"""Procedures: the ordered steps that stored episodes write out, parsed in Python.

A small extraction model keeps a procedure's steps as loose facts and loses their order ("the
rotor brake is released immediately after the inspection"), yet the source text states the order
plainly: ``Step 3: …`` lines, numbered lists (``1.``, ``2)``), or sentences that open with
``First,``/``Second,``/…/``Finally,``. This module reads those forms out of the episodes, so a
question about *which step comes after another* is answered by position, not by a model's memory.
Deterministic, no model call, no index (episodes are few next to facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from moot.memory.facts import match_terms

if TYPE_CHECKING:
    from moot.memory.knowledge_base import KnowledgeBase

MIN_STEPS = 3
"""Fewer ordered sentences than this are a sentence or two, not a procedure."""

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_NUMBERED = re.compile(r"(?im)^\s*(?:step\s+(\d{1,2})\s*[:.)-]|(\d{1,2})[.)]\s)\s*(.+)$")
_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")
_ORDINAL_OPENING = re.compile(r"^\s*(" + "|".join(_ORDINALS) + r"|finally|lastly)\s*,\s*(.+)$", re.I | re.S)


@dataclass(frozen=True, slots=True)
class Step:
    """One step, numbered from 1 in the order the source gives."""

    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Procedure:
    """The steps one passage of one episode lays out, in order, with where they came from."""

    title: str
    """The episode's heading (or its first sentence), which names the procedure."""
    intro: str
    """The text just before the steps ("Volunteers restart it by following these seven steps")."""
    steps: tuple[Step, ...]
    source: str
    published: str | None
    episode_id: int

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "intro": self.intro, "steps": [[s.number, s.text] for s in self.steps],
                "source": self.source, "published": self.published, "episode_id": self.episode_id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Procedure:
        return cls(str(data["title"]), str(data.get("intro") or ""),
                   tuple(Step(int(n), str(t)) for n, t in data["steps"]), str(data.get("source") or ""),
                   data.get("published"), int(data.get("episode_id") or 0))


def _title(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line:
            first = _SENTENCE.match(line)
            return (first.group() if first else line).strip()[:120]
    return ""


def _clean(text: str) -> str:
    return " ".join(text.split()).strip()


def _numbered(text: str) -> list[tuple[int, int, str]]:
    """``Step N: …`` and ``N.``/``N)`` lines: (position, number, text)."""
    found = []
    for match in _NUMBERED.finditer(text):
        number = int(match[1] or match[2])
        found.append((match.start(), number, _clean(match[3])))
    return found


def _ordinal(text: str) -> list[list[tuple[int, int, str]]]:
    """Runs of sentences that open with First, / Second, / … / Finally, — one run per procedure."""
    runs: list[list[tuple[int, int, str]]] = []
    current: list[tuple[int, int, str]] = []
    for match in _SENTENCE.finditer(text):
        opening = _ORDINAL_OPENING.match(match.group())
        if opening is None:
            continue
        word = opening[1].lower()
        body = _clean(opening[2])
        body = body[:1].upper() + body[1:]
        if word == "first":
            runs.append(current)
            current = [(match.start(), 1, body)]
        elif current and (word in ("finally", "lastly") or _ORDINALS.index(word) == len(current)):
            current.append((match.start(), len(current) + 1, body))
        else:
            runs.append(current)
            current = []
    runs.append(current)
    return [run for run in runs if len(run) >= MIN_STEPS]


def _intro(text: str, position: int) -> str:
    before = text[:position].rstrip()
    sentences = [s.strip() for s in _SENTENCE.findall(before.splitlines()[-1] if before.splitlines() else before) if s.strip()]
    if not sentences:
        lines = [line for line in before.splitlines() if line.strip() and not line.strip().startswith("#")]
        sentences = [s.strip() for s in _SENTENCE.findall(lines[-1])] if lines else []
    return _clean(sentences[-1]) if sentences else ""


def parse_procedures(text: str, *, source: str = "", published: str | None = None, episode_id: int = 0) -> list[Procedure]:
    """Every procedure written out in ``text``: numbered lines first, then ordinal sentences."""
    title = _title(text)
    procedures: list[Procedure] = []
    numbered = _numbered(text)
    run: list[tuple[int, int, str]] = []
    for item in numbered + [(len(text), 0, "")]:
        if run and item[1] != run[-1][1] + 1:
            if len(run) >= MIN_STEPS and run[0][1] == 1:
                procedures.append(Procedure(title, _intro(text, run[0][0]), tuple(Step(n, t) for _, n, t in run),
                                            source, published, episode_id))
            run = []
        if item[1] >= 1 and (run or item[1] == 1):
            run.append(item)
    for found in _ordinal(text):
        procedures.append(Procedure(title, _intro(text, found[0][0]), tuple(Step(n, t) for _, n, t in found),
                                    source, published, episode_id))
    return procedures


def find_procedures(kb: KnowledgeBase, question: str, *, limit: int = 3, max_episodes: int = 300) -> list[Procedure]:
    """The procedures in the knowledge base's episodes that share the most words with ``question``,
    best first; those sharing no word are left out."""
    wanted = match_terms(question)
    scored: list[tuple[int, int, Procedure]] = []
    for episode in kb.episodes()[-max_episodes:]:
        published = episode.published.isoformat() if episode.published else None
        for procedure in parse_procedures(episode.text, source=episode.source, published=published,
                                          episode_id=episode.id):
            score = len(wanted & match_terms(f"{procedure.title} {procedure.intro}")) * 2 + len(
                wanted & match_terms(" ".join(s.text for s in procedure.steps)))
            if score:
                scored.append((score, -episode.id, procedure))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [procedure for _, _, procedure in scored[:limit]]


__all__ = ["MIN_STEPS", "Procedure", "Step", "find_procedures", "parse_procedures"]
