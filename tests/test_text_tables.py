"""A table's numeric columns are added up in Python, and a table that states its own total is left alone."""

from __future__ import annotations

from moot.text.tables import column_totals

BRANCHES = """The year in numbers.

| Branch | Open | Parcels given out | Share of parcels | Hours per week |
|---|---|---|---|---|
| North | Mon, Wed | 3,412 | 45% | 12 hours per week |
| Mill Lane | Tue | 2,187 | 29% | 8 hours per week |
| Station | Fri | 1,956 | 26% | 6 hours per week |

A note after the table.
"""


def test_a_column_of_counts_is_added_up_with_its_rows_and_header() -> None:
    totals = column_totals(BRANCHES)
    assert [t.header for t in totals] == ["Parcels given out"]  # days, shares and rates are not added
    (parcels,) = totals
    assert parcels.total == 7555 and parcels.labels == ("North", "Mill Lane", "Station")
    assert parcels.render() == "Parcels given out: 7,555 (3,412 + 2,187 + 1,956)"


def test_a_table_with_a_total_row_and_a_column_of_years_gives_nothing() -> None:
    text = "| Year | Income |\n|---|---|\n| 2024 | £1,200 |\n| 2025 | £1,800 |\n| Both years | £3,000 |\n"
    assert column_totals(text) == []


def test_money_keeps_its_unit_and_mixed_units_are_not_added() -> None:
    text = "| Item | Cost | Weight |\n|---|---|---|\n| Tent | £120 | 3 kg |\n| Stove | £45.50 | 800 g |\n"
    (cost,) = column_totals(text)
    assert cost.total == 165.5 and cost.render() == "Cost: £165.50 (£120 + £45.50)"


def test_prose_and_a_one_row_table_give_nothing() -> None:
    assert column_totals("We gave out 3,412 parcels and 2,187 more.") == []
    assert column_totals("| Branch | Parcels |\n|---|---|\n| North | 3,412 |\n") == []
