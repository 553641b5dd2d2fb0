"""Clock times written in text, and the moment they mean."""

from __future__ import annotations

from datetime import datetime, timezone

from moot.text.clock import find_clock_times, next_occurrence

NOW = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)


def test_written_times_of_day_are_found_and_bare_numbers_are_left_alone() -> None:
    found = find_clock_times("Run at 7am or 6:30 p.m., rehearse 07:45, lunch at noon; page 7, at 7 sharp, 14:00 pm")
    assert [(c.text, c.hour, c.minute) for c in found] == [
        ("7am", 7, 0), ("6:30 p.m.", 18, 30), ("07:45", 7, 45), ("noon", 12, 0)]  # "14:00 pm" is no time
    assert [c.hour for c in find_clock_times("12 am and 12 pm")] == [0, 12]


def test_a_time_is_placed_on_the_day_the_text_names_else_the_next_one() -> None:
    text = "Tomorrow at 7am, run or rehearse?"
    [seven] = find_clock_times(text)
    assert next_occurrence(seven, text, NOW) == datetime(2026, 11, 25, 7, 0, tzinfo=timezone.utc)
    [late] = find_clock_times("at 21:30")
    assert next_occurrence(late, "at 21:30", NOW) == datetime(2026, 11, 24, 21, 30, tzinfo=timezone.utc)
    [early] = find_clock_times("at 6:15")
    assert next_occurrence(early, "at 6:15", NOW) == datetime(2026, 11, 25, 6, 15, tzinfo=timezone.utc)
