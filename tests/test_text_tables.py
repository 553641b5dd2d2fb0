"""A table's numeric columns are added up in code, and a table that states its own total is left alone."""

from __future__ import annotations

from moot.text.tables import column_totals

BRANCHES = """The year in numbers.

| Branch | Open | Meals served | Share of meals | Hours per week |
|---|---|---|---|---|
| North | Mon, Wed | 1,204 | 45% | 12 hours per week |
| Mill Lane | Tue | 986 | 29% | 8 hours per week |
| Station | Fri | 731 | 26% | 6 hours per week |

A note after the table.
"""


def test_a_column_of_counts_is_added_up_with_its_rows_and_header() -> None:
    totals = column_totals(BRANCHES)
    assert [t.header for t in totals] == ["Meals served"]  # days, shares and rates are not added
    (meals,) = totals
    assert meals.total == 2921 and meals.labels == ("North", "Mill Lane", "Station")
    assert meals.render() == "Meals served: 2,921 (1,204 + 986 + 731)"


def test_a_table_with_a_total_row_and_a_column_of_years_gives_nothing() -> None:
    text = "| Year | Income |\n|---|---|\n| 2024 | £1,200 |\n| 2025 | £1,800 |\n| Both years | £3,000 |\n"
    assert column_totals(text) == []


def test_money_keeps_its_unit_and_mixed_units_are_not_added() -> None:
    text = "| Item | Cost | Weight |\n|---|---|---|\n| Tent | £120 | 3 kg |\n| Stove | £45.50 | 800 g |\n"
    (cost,) = column_totals(text)
    assert cost.total == 165.5 and cost.render() == "Cost: £165.50 (£120 + £45.50)"


def test_prose_and_a_one_row_table_give_nothing() -> None:
    assert column_totals("We served 1,204 meals and 986 more.") == []
    assert column_totals("| Branch | Meals |\n|---|---|\n| North | 1,204 |\n") == []


def test_columns_whose_sum_means_nothing_are_not_added() -> None:
    signed = "| Month | Change |\n|---|---|\n| May | -5 |\n| June | 12 |\n| July | −3 |\n"
    turned = "| Measure | 2023 | 2024 |\n|---|---|---|\n| Meals | 1,204 | 3,500 |\n| Volunteers | 40 | 44 |\n"
    numbered = "| # | Name | Score |\n|---|---|---|\n| 1 | Ann | 7 |\n| 2 | Bo | 9 |\n| 3 | Cy | 6 |\n"
    averaged = "| Judge | Score |\n|---|---|\n| A | 3 |\n| B | 4 |\n| Mean | 3.5 |\n"
    assert column_totals(signed) == [] and column_totals(turned) == [] and column_totals(averaged) == []
    assert [t.header for t in column_totals(numbered)] == ["Score"]  # the row numbers are not added


def test_two_equal_rows_are_added_and_a_money_cell_in_words_is_no_crash() -> None:
    (equal,) = column_totals("| Shift | Hours |\n|---|---|\n| Early | 5 |\n| Late | 5 |\n")
    assert equal.total == 10
    (words,) = column_totals("| Item | Cost |\n|---|---|\n| Tent | forty pounds |\n| Stove | £12 |\n")
    assert words.total == 52 and words.shown() == "52 pounds"
