"""The learning team's tools: memory operations, the runtime's safe calculator and a temporal worksheet.

A 0.5B model adds badly and forgets which value came first, so the arithmetic and the
date ordering are done here, in Python, and the model gets the results as plain lines.
``calculate`` parses with :mod:`ast` and walks an allow-list of node types: it never calls
``eval()``, names and attributes are refused, and exponents and results are bounded so a
model cannot make the process spin on ``9**9**9``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.memory import Fact, KnowledgeBase, StoredFact
from moot.runtime import Tool
from moot.runtime.calculator import CalculationError, calculate, safe_calculate  # re-exported for the team


# --------------------------------------------------------------------------- temporal worksheet

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def parse_number(text: str) -> float | None:
    """The first number in a value like "12", "1,204 km" or "up 5.5%", else ``None``."""
    match = _NUMBER.search(text or "")
    if not match:
        return None
    try:
        return float(match.group().replace(",", ""))
    except ValueError:
        return None


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


@dataclass
class WorksheetRow:
    when: str
    value: str
    change: str
    source: str


@dataclass
class WorksheetSeries:
    """One entity/attribute over time, oldest first, with the change at every step."""

    entity: str
    attribute: str
    rows: list[WorksheetRow] = field(default_factory=list)
    total_change: str = ""

    def render(self) -> str:
        lines = [f"{self.entity} — {self.attribute}:"]
        for row in self.rows:
            lines.append(f"  {row.when}: {row.value}{f' ({row.change})' if row.change else ''}")
        if self.total_change:
            lines.append(f"  overall: {self.total_change}")
        return "\n".join(lines)


def _order_key(fact: Mapping[str, Any]) -> tuple[int, str, int]:
    index = fact.get("temporal_index")
    return (index if isinstance(index, int) else 0, str(fact.get("source_date") or ""), int(fact.get("id") or 0))


def temporal_worksheet(facts: Iterable[Mapping[str, Any]]) -> list[WorksheetSeries]:
    """Group facts by entity and attribute, order each group in time and compute every change.

    Only groups with at least two dated or indexed values are returned: one value has no
    change to explain. Differences and percentages are computed here, not by the model.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for fact in facts:
        entity, attribute = str(fact.get("entity") or ""), str(fact.get("attribute") or "")
        if entity and attribute:
            groups.setdefault((entity.lower(), attribute.lower()), []).append(fact)
    series: list[WorksheetSeries] = []
    for group in groups.values():
        ordered = sorted({int(f.get("id") or 0): f for f in group}.values(), key=_order_key)
        if len(ordered) < 2:
            continue
        one = WorksheetSeries(entity=str(ordered[0]["entity"]), attribute=str(ordered[0]["attribute"]))
        previous: float | None = None
        first: float | None = None
        for fact in ordered:
            number = parse_number(str(fact.get("value") or ""))
            change = ""
            if number is not None and previous is not None:
                delta = number - previous
                change = f"{'+' if delta >= 0 else ''}{_fmt(delta)} from {_fmt(previous)}"
            when = str(fact.get("source_date") or fact.get("source") or f"#{fact.get('id')}")
            one.rows.append(WorksheetRow(when=when, value=str(fact.get("value") or ""), change=change,
                                         source=str(fact.get("source") or "")))
            if number is not None:
                first = number if first is None else first
                previous = number
        if first is not None and previous is not None and len(one.rows) >= 2:
            delta = previous - first
            pct = f", {'+' if delta >= 0 else ''}{_fmt(delta / first * 100)}%" if first else ""
            one.total_change = f"{'+' if delta >= 0 else ''}{_fmt(delta)} ({_fmt(first)} → {_fmt(previous)}{pct})"
        series.append(one)
    return series


def render_worksheet(series: Sequence[WorksheetSeries]) -> str:
    return "\n".join(s.render() for s in series)


# --------------------------------------------------------------------------- memory tools


def fact_record(fact: StoredFact) -> dict[str, Any]:
    """A fact as plain data for task outputs and traces (no objects cross task boundaries)."""
    return {
        "id": fact.id,
        "content": fact.content,
        "source": fact.source,
        "source_date": fact.source_date.isoformat() if fact.source_date else None,
        "entity": fact.entity,
        "attribute": fact.attribute,
        "value": fact.value,
        "temporal_index": fact.temporal_index,
        "is_current": fact.is_current,
    }


def memory_tools(kb: KnowledgeBase) -> list[Tool]:
    """The MemoryAgent's tools over one knowledge base: store, search, summary, consolidate."""

    def store_fact(content: str, entity: str = "", attribute: str = "", value: str = "", source: str = "user") -> str:
        """Store one fact in the knowledge base.

        Args:
            content: The fact in one plain sentence.
            entity: What it is about (e.g. "Norway").
            attribute: Which property (e.g. "gold medals").
            value: The value (e.g. "12").
            source: Where it came from.
        """
        stored = kb.add_fact(Fact(content, entity=entity, attribute=attribute, value=value, source=source))
        return f"stored fact #{stored.id}"

    def search_memory(query: str, limit: int = 8) -> str:
        """Search the knowledge base and return the best matching facts, one a line.

        Args:
            query: Words to look for.
            limit: Most facts to return.
        """
        hits = kb.search(query, limit=max(1, min(limit, 20)))
        if not hits:
            return "no facts match"
        return "\n".join(f"#{h.fact.id} {h.fact.content} [{h.fact.source}]" for h in hits)

    def memory_summary() -> str:
        """Summarise what the knowledge base holds: counts, main entities, sources, dates."""
        import json

        return json.dumps(kb.summary().to_dict(), default=str)[:2000]

    def consolidate() -> str:
        """Merge near-duplicate facts and prune weak superseded ones."""
        return kb.consolidate().describe()

    return [Tool.from_function(f) for f in (store_fact, search_memory, memory_summary, consolidate)]


__all__ = [
    "CalculationError",
    "WorksheetSeries",
    "calculate",
    "fact_record",
    "memory_tools",
    "parse_number",
    "render_worksheet",
    "safe_calculate",
    "temporal_worksheet",
]
