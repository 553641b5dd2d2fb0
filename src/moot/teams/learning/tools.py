"""The learning team's tools: memory operations, a safe calculator and a temporal worksheet.

A 0.5B model adds badly and forgets which value came first, so the arithmetic and the
date ordering are done here, in Python, and the model gets the results as plain lines.
``calculate`` parses with :mod:`ast` and walks an allow-list of node types: it never calls
``eval()``, names and attributes are refused, and exponents and results are bounded so a
model cannot make the process spin on ``9**9**9``.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.memory import Fact, KnowledgeBase, StoredFact
from moot.runtime import Tool

MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 100
MAX_MAGNITUDE = 1e100
MAX_NODES = 100


class CalculationError(ValueError):
    """The expression is not plain arithmetic, or it is too big to compute safely."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "round": round,
    "abs": abs,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
}


def _number(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalculationError("only numbers are allowed")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise CalculationError(f"a value exceeds {MAX_MAGNITUDE:g}")
    return value


def _evaluate(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _number(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(right) > MAX_EXPONENT:
                raise CalculationError(f"exponents are limited to ±{MAX_EXPONENT}")
            if abs(left) > 1 and abs(right) * math.log10(abs(left)) > math.log10(MAX_MAGNITUDE):
                raise CalculationError(f"the result would exceed {MAX_MAGNITUDE:g}")
        try:
            return _number(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
        except OverflowError:
            raise CalculationError("the result is too large") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords:
            raise CalculationError("keyword arguments are not allowed")
        args = [_evaluate(a) for a in node.args]
        try:
            return _number(_FUNCTIONS[node.func.id](*args))
        except (TypeError, ValueError) as exc:
            raise CalculationError(f"{node.func.id}(): {exc}") from None
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
        raise CalculationError(
            "names, attributes and calls are not allowed (functions: " + ", ".join(_FUNCTIONS) + ")"
        )
    raise CalculationError(f"{type(node).__name__} is not allowed in arithmetic")


def safe_calculate(expression: str) -> float | int:
    """Evaluate plain arithmetic safely; raises :class:`CalculationError` for anything else."""
    text = expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,234 → 1234
    if not text:
        raise CalculationError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculationError(f"expressions are limited to {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(f"not an arithmetic expression: {expression!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError("the expression is too long")
    result = _evaluate(tree)
    if isinstance(result, float) and result.is_integer() and abs(result) < 1e15:
        return int(result)
    return round(result, 10) if isinstance(result, float) else result


def calculate(expression: str) -> str:
    """Compute an arithmetic expression exactly, e.g. "(14 - 9) / 9 * 100".

    Args:
        expression: Numbers with + - * / // % ** and parentheses; round, abs, min, max, sqrt.
    """
    return f"{expression.strip()} = {safe_calculate(expression)}"


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
