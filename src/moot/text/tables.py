"""Totals of a Markdown table's columns, worked out in code.

A table that lists one figure a row (meals per branch, hours per volunteer) invites "how many
altogether" and "what share of the whole", and a small model adds three four-digit numbers badly.
So the code adds each numeric column up and says how: the reader sees the total beside the rows it
came from, and the checker counts it as worked out from the sources.

A column counts when every data row's cell holds exactly one number, all of one unit, none of them
a year, a percentage, a temperature or a rate (adding shares or speeds means nothing), none written
with a sign, and not the rows' own numbers (1, 2, 3 …); a column headed by a number or a year (a
table turned on its side, whose rows are different measures) does not. A table whose last row is
the others' sum or average states its own: nothing is added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from moot.text.numbers import Quantity, find_quantities, is_money, unit_key
from moot.text.sentences import split_units

MIN_ROWS = 2
_SIGNED = re.compile(r"(?:^|\s|\()[-−+]\s?[£$€]?\d")
"""A figure written with its sign: "-5", "−£3", "+12"."""


@dataclass(frozen=True, slots=True)
class ColumnTotal:
    """One numeric column of a table, added up."""

    header: str
    """The column's header cell (empty when the table has none)."""
    cells: tuple[str, ...]
    """Each data row's cell as written, in order."""
    labels: tuple[str, ...]
    """Each data row's first cell (what the row is about)."""
    total: float
    unit: str

    sign: str = ""
    """A currency's sign as the cells write it (``£``), for a column of money."""

    def shown(self) -> str:
        """The total as the column writes its figures: ``2,921``, ``£165.50``, ``14 kg``."""
        if self.sign:
            return f"{self.sign}{self.total:,.2f}" if not float(self.total).is_integer() else f"{self.sign}{_fmt(self.total)}"
        return f"{_fmt(self.total)}{' ' + self.unit if self.unit else ''}"

    def render(self) -> str:
        """``Meals served: 2,921 (1,204 + 986 + 731)``."""
        return f"{self.header or 'the column'}: {self.shown()} ({' + '.join(self.cells)})"


def _fmt(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [" ".join(c.split()) for c in inner.split("|")]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _counts(header: str, cells: list[str], quantities: list[Quantity]) -> bool:
    """Whether a column's figures are parts of one whole that adding up means something."""
    unit = quantities[0].unit
    if find_quantities(header) or "%" in header or "#" in header:
        return False  # a column headed by a year or a number (a table turned on its side), shares, numbers of rows
    if any(q.year is not None or "%" in q.unit or "°" in q.unit or "per" in q.unit.lower().split() or "/" in q.unit
           or unit_key(q.unit) != unit_key(unit) for q in quantities):
        return False  # years, shares, temperatures and rates are not added; nor are different units
    if any(_SIGNED.search(cell) for cell in cells):
        return False  # a signed figure (a change, a balance): its sign is not read, so no total
    values = [q.value for q in quantities]
    if len(values) >= 3 and values == [float(i) for i in range(1, len(values) + 1)]:
        return False  # 1, 2, 3 …: the rows' numbers, not amounts
    return True


def _stated(values: list[float]) -> bool:
    """Whether the table states its own total or average in its last row."""
    if len(values) < 3:
        return False
    rest = values[:-1]
    return _close(values[-1], sum(rest)) or _close(values[-1], sum(rest) / len(rest))


def column_totals(text: str) -> list[ColumnTotal]:
    """The totals of every table of ``text`` whose columns count (see the module docstring), in order."""
    rows_by_table: dict[int, list[tuple[str, list[str]]]] = {}
    for unit in split_units(text):
        if unit.kind == "row":
            rows_by_table.setdefault(unit.block, []).append((unit.header, _cells(unit.text)))
    totals: list[ColumnTotal] = []
    for rows in rows_by_table.values():
        if len(rows) < MIN_ROWS:
            continue
        header = _cells(rows[0][0]) if rows[0][0] else []
        width = min(len(cells) for _, cells in rows)
        for column in range(width):
            cells = [cells[column] for _, cells in rows]
            found = [find_quantities(cell) for cell in cells]
            if any(len(q) != 1 for q in found):
                continue
            quantities = [q[0] for q in found]
            name = header[column] if column < len(header) else ""
            values = [q.value for q in quantities]
            if not _counts(name, cells, quantities) or _stated(values):
                continue
            unit = quantities[0].unit
            first = quantities[0].text
            digit = next((i for i, c in enumerate(first) if c.isdigit()), 0)
            sign = first[:digit].strip() if is_money(unit) else ""
            totals.append(ColumnTotal(name, tuple(cells), tuple(cells[0] for _, cells in rows), sum(values), unit, sign))
    return totals


__all__ = ["ColumnTotal", "column_totals"]
