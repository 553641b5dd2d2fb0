"""Recall: what the knowledge base holds for a question, found in Python before any model call.

Two kinds of evidence, both from :mod:`moot.memory`: the *passages* — units of the stored
sources (sentences, list items, table rows) ranked against the question, or the sources whole
when they fit a small model's prompt — and the *facts* the knowledge base retrieves, with their
histories (a fact a later report superseded is marked as earlier). Whether anything relevant was
found is decided on this evidence alone: a question is unknown only when no passage shares a
distinctive word with it, never because one of its words is missing from the knowledge base.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any
from datetime import date, datetime
from pydantic import BaseModel, Field

from moot.memory import KnowledgeBase
from moot.memory.units import SourceUnit, rank_units, source_units, whole_sources
from moot.text.tables import ColumnTotal, column_totals
from moot.text.words import content_words

WHOLE_SOURCES_TOKENS = 1800
"""Sources up to this size (estimated tokens, all together) are given to the drafts whole."""
MAX_UNITS = 24
"""Otherwise, the best-matching units (in source order), at most this many."""
COMMON_SHARE = 0.6
"""A word stem in more than this share of all units says nothing about relevance ("river")."""
MAX_FACTS = 12


class Passage(BaseModel):
    """One unit of a source, as the drafts see it: ``s<id>`` is how a specialist names it."""

    id: str
    source: str
    published: str | None = None
    text: str
    kind: str = "sentence"
    block: int = 0
    episode_id: int = 0
    score: float = 0.0
    earlier: bool = False
    """A later report superseded the value this unit states."""


class Document(BaseModel):
    """One source whole, as stored (front matter read off into its name and date)."""

    source: str
    published: str | None = None
    text: str


class StepList(BaseModel):
    """A list written in a source (a numbered or bulleted procedure), whole and in order."""

    id: str
    source: str
    published: str | None = None
    title: str = ""
    """The heading or sentence just before the list."""
    items: list[str] = Field(default_factory=list)


class FactRef(BaseModel):
    id: int
    content: str
    source: str = ""
    source_date: str | None = None
    current: bool = True


class TableTotal(BaseModel):
    """A column of a source's table, added up in code (:mod:`moot.text.tables`)."""

    source: str
    published: str | None = None
    total: ColumnTotal


class Recall(BaseModel):
    """The evidence for one question."""

    question: str
    relevant: bool
    why: str
    """How relevance was decided, in words (for the trace)."""
    passages: list[Passage] = Field(default_factory=list)
    """The units the drafts read, in source order (all of them when the sources are given whole)."""
    whole: bool = False
    """Whether ``passages`` are the sources whole (they fit the prompt) or the best-matching units."""
    documents: list[Document] = Field(default_factory=list)
    """When they fit (``whole``): every source whole, oldest first (undated ones first, then by date;
    sources of one date in the order learned)."""
    facts: list[FactRef] = Field(default_factory=list)
    lists: list[StepList] = Field(default_factory=list)
    """The lists the sources write out (procedures), whole, oldest source first."""
    tables: list[TableTotal] = Field(default_factory=list)
    """The column totals of the sources' tables: every one when the sources are given whole, else
    those of tables a row of which is among the passages."""
    strategy: str = ""
    sources: int = 0

    def passage(self, pid: str) -> Passage | None:
        return next((p for p in self.passages if p.id == pid), None)

    def render(self, *, ids: bool = False) -> str:
        """The passages grouped by source, the newest source first (what is current comes first), with
        each source's date; within a source, in the source's order."""
        lines: list[str] = []
        current: tuple[str, str | None] | None = None
        order = {key: i for i, key in enumerate(dict.fromkeys((p.source, p.published) for p in self.passages))}
        newest_first = sorted(self.passages, key=lambda p: (p.published or "", -order[(p.source, p.published)]), reverse=True)
        for p in newest_first:
            if (p.source, p.published) != current:
                lines += self._totals_line(current)
                current = (p.source, p.published)
                lines.append(f"\n[{p.source}{', ' + p.published if p.published else ''}]")
            mark = " (an earlier value: a later report changed it)" if p.earlier else ""
            lines.append(f"{p.id}. {p.text}{mark}" if ids else f"{p.text}{mark}")
        lines += self._totals_line(current)
        return "\n".join(lines).strip()

    def _totals_line(self, source: tuple[str, str | None] | None) -> list[str]:
        totals = [t.total for t in self.tables if source is not None and (t.source, t.published) == source]
        return [totals_note(totals)] if totals else []

    def render_documents(self) -> str:
        """The sources whole, oldest first, each under its name and date: the text as the user gave
        it, which a small model reads better than sentences regrouped newest first (measured on the
        development suite: docs/eval.md)."""
        return sources_block((d.source, d.published, "\n\n".join([d.text.rstrip(), *self._totals_line((d.source, d.published))]))
                             for d in self.documents)

    def text(self) -> str:
        """All evidence text, for the checker."""
        return "\n".join([*(p.text for p in self.passages), *(f.content for f in self.facts)])


def totals_note(totals: list[ColumnTotal]) -> str:
    """Column totals as one line, marked as worked out, not written (a small model adds three
    four-digit numbers badly)."""
    return f"(Column totals worked out from the table, not written in the source: {'; '.join(t.render() for t in totals)}.)"


def table_row(table: TableTotal, passages: Iterable[Passage]) -> Passage | None:
    """The first of ``passages`` that is a row of ``table``: of its source and date, its first cell
    one of the table's."""
    return next((p for p in passages if p.kind == "row" and p.source == table.source
                 and (p.published or "")[:10] == (table.published or "")
                 and any(label and f"| {label} |" in p.text for label in table.total.labels)), None)


def _tables(stored: list[Any], passages: list[Passage], whole: bool) -> list[TableTotal]:
    """The column totals of the stored sources' tables; when the passages are a selection, only
    those of tables one of whose rows is among them."""
    found = [TableTotal(source=s.source, published=(_iso(s.published) or "")[:10] or None, total=total)
             for s in stored for total in column_totals(s.text)]
    return found if whole else [t for t in found if table_row(t, passages) is not None]


def sources_block(documents: Iterable[tuple[str, object, str]]) -> str:
    """Documents as one prompt block, each under ``[name, date]``: the layout of the plain draft's
    sources and of the one-call baseline's articles alike."""
    return "\n\n".join(f"[{source}{', ' + str(day) if day else ''}]\n{text.strip()}" for source, day, text in documents)


def _iso(day: date | datetime | None) -> str | None:
    return day.isoformat() if day is not None else None


def _distinctive(units: list[SourceUnit], question: str) -> set[str]:
    """The question's word stems that some unit holds and that are not in most units.

    A table row's unit carries its table's header ("| Branch | Meals | | North | 1,204 |"), so the
    header is counted once, as a unit of its own, and each row by its own cells: otherwise a
    column's name is in every row and counts as common in a source that is mostly a table."""
    wanted = set(content_words(question))
    if not units:
        return set()
    rows: dict[tuple[str, int, int], list[str]] = {}
    for u in units:
        if u.kind == "row":
            rows.setdefault((u.source, u.episode_id, u.block), []).append(u.text)
    headers = {key: _header(texts) for key, texts in rows.items()}
    held = [set(content_words(u.text[len(headers.get((u.source, u.episode_id, u.block), "")):] if u.kind == "row"
                              else u.text)) for u in units]
    held += [set(content_words(header)) for header in headers.values() if header]
    share = {w: sum(w in h for h in held) / len(held) for w in wanted}
    return {w for w, s in share.items() if 0 < s <= COMMON_SHARE or (0 < s and len(held) < 4)}


def _header(texts: list[str]) -> str:
    """The header the rows of one table all begin with, up to its last cell border ("" for one row)."""
    if len(texts) < 2:
        return ""
    prefix = os.path.commonprefix(texts)
    return prefix[:prefix.rfind("|") + 1]


def recall(kb: KnowledgeBase, question: str) -> Recall:
    """The evidence for ``question`` (see the module docstring); no model call."""
    units = [u for u in source_units(kb) if u.kind != "code"]
    sources = {u.source for u in units}
    distinctive = _distinctive(units, question)
    if not units:
        return Recall(question=question, relevant=False, why="the knowledge base holds no source text")
    if not distinctive:
        return Recall(question=question, relevant=False, sources=len(sources),
                      why=f"no passage of the {len(sources)} source(s) shares a distinctive word with the question")
    retrieval = kb.retrieve(question, limit=MAX_FACTS)
    facts = retrieval.facts[:MAX_FACTS]
    earlier_texts = {" ".join(f.content.split()) for f in kb.facts(include_superseded=True) if not f.is_current}
    stored = whole_sources(kb)
    total = sum(s.tokens for s in stored)
    whole = total <= WHOLE_SOURCES_TOKENS
    if whole:
        chosen = [u for u in units if u.kind != "heading" or u.text]
        scores = {u.position: u.score for u in rank_units(units, question)}
    else:
        ranked = rank_units(units, question)
        keep = {u.position for u in ranked[:MAX_UNITS]}
        chosen = [u for u in units if u.position in keep]
        scores = {u.position: u.score for u in ranked}
    passages = [
        Passage(id=f"s{u.position + 1}", source=u.source, published=_iso(u.published), text=u.text, kind=u.kind,
                block=u.block, episode_id=u.episode_id, score=round(scores.get(u.position, 0.0), 3),
                earlier=" ".join(u.text.split()) in earlier_texts)
        for u in chosen
    ]
    return Recall(
        question=question,
        relevant=True,
        lists=step_lists(units),
        why=(f"{len(distinctive)} distinctive word(s) of the question in the sources; "
             + (f"all {len(sources)} source(s) fit the prompt whole ({total} tokens)" if whole
                else f"the {len(passages)} best-matching passages of {len(sources)} sources")),
        passages=passages,
        whole=whole,
        documents=[Document(source=s.source, published=(_iso(s.published) or "")[:10] or None, text=s.text)
                   for s in stored] if whole else [],
        tables=_tables(stored, passages, whole),
        facts=[FactRef(id=int(f.id or 0), content=f.content, source=f.source, source_date=_iso(f.source_date),
                       current=f.is_current) for f in facts],
        strategy=f"{retrieval.strategy}: {retrieval.note}",
        sources=len(sources),
    )


def step_lists(units: list[SourceUnit]) -> list[StepList]:
    """Every list of two or more items in the sources, with the unit before it as its title."""
    lists: list[StepList] = []
    run: list[SourceUnit] = []

    def close(before: SourceUnit | None) -> None:
        if len(run) >= 2:
            lists.append(StepList(id=f"p{len(lists) + 1}", source=run[0].source, published=_iso(run[0].published),
                                  title=before.text if before is not None else "", items=[u.text for u in run]))

    previous: SourceUnit | None = None
    before: SourceUnit | None = None
    for unit in units:
        same = run and unit.kind == "item" and unit.episode_id == run[-1].episode_id and unit.position == run[-1].position + 1
        if unit.kind == "item" and (same or not run):
            if not run:
                before = previous
            run.append(unit)
        else:
            close(before)
            run = [unit] if unit.kind == "item" else []
            before = previous if unit.kind == "item" else None
        previous = unit
    close(before)
    return lists


__all__ = ["Document", "FactRef", "StepList", "step_lists", "MAX_UNITS", "Passage", "Recall", "WHOLE_SOURCES_TOKENS", "recall", "sources_block"]
