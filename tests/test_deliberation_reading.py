"""The request's reading checked and completed in Python: the whole set of choices, events by shared words."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace

from moot.teams.deliberation.data import CalendarEvent
from moot.teams.deliberation.options import NO_EVENT, NOT_STATED, choices_for, reader_output, resolve

NOW = datetime(2027, 6, 8, 16, 30)
SQUASH = CalendarEvent("Squash w/ Tom", NOW + timedelta(hours=14, minutes=15), NOW + timedelta(hours=15), "cal.ics")
DEBRIEF = CalendarEvent("Trip debrief with Carla", NOW + timedelta(hours=17, minutes=30), NOW + timedelta(hours=18, minutes=30), "cal.ics")
REQUEST = "Got home at 1am from Boston. Should I sleep in or go to the 6:45 squash with Tom?"


def reading(picks: list[tuple[str, str]], request: str = REQUEST, events: list[CalendarEvent] | None = None):
    choices = choices_for(request, [SQUASH, DEBRIEF] if events is None else events, NOW)
    schema = reader_output(choices)
    option = schema.model_fields["options"].annotation.__args__[0]
    output = schema(options=[option(label=label, event=event, time=NOT_STATED) for label, event in picks], window=NOT_STATED)
    return resolve(output, request, choices, NOW)


def test_one_choice_picked_gives_the_whole_set_the_request_offers() -> None:
    r = reading([("go to the 6:45 squash with Tom", NO_EVENT)])
    assert [o.label for o in r.options] == ["sleep in", "go to the 6:45 squash with Tom"]
    assert "added the option 'sleep in'" in r.note
    # the squash is tied to its event by the word they share, the other option shares none
    assert r.options[1].event == "Squash w/ Tom" and r.options[0].event is None
    assert "linked the option 'go to the 6:45 squash with Tom' to the calendar's 'Squash w/ Tom'" in r.note


def test_a_pick_outside_the_set_most_picks_belong_to_is_left_out() -> None:
    request = "Match day vs Riverside - should I play the match or rest my ankle?"
    r = reading([("play the match", NO_EVENT), ("Riverside", NO_EVENT), ("rest my ankle", NO_EVENT)], request, events=[])
    assert [o.label for o in r.options] == ["play the match", "rest my ankle"]
    assert "left out 'Riverside'" in r.note


def test_an_event_shared_by_two_options_words_is_tied_to_neither() -> None:
    request = "Should I go to the squash ladder or watch Tom's squash final?"
    r = reading([("go to the squash ladder", NO_EVENT)], request)
    assert [o.label for o in r.options] == ["go to the squash ladder", "watch Tom's squash final"]
    assert all(o.event is None for o in r.options)


def test_the_models_event_stands_and_is_not_given_twice() -> None:
    first = next(k for k in choices_for(REQUEST, [SQUASH, DEBRIEF], NOW).events if "Squash" in k)
    r = reading([("go to the 6:45 squash with Tom", first), ("sleep in", NO_EVENT)])
    assert [(o.label, o.event) for o in r.options] == [("sleep in", None), ("go to the 6:45 squash with Tom", "Squash w/ Tom")]


def test_an_option_without_a_time_of_its_own_competes_for_the_slot_of_the_one_it_is_set_against() -> None:
    r = reading([("go to the 6:45 squash with Tom", NO_EVENT)])
    rest, squash = r.options
    assert squash.time_from == "calendar" and (squash.window.start, squash.window.end) == (SQUASH.start, SQUASH.end)
    assert rest.time_from == "alternative" and rest.window == squash.window
    # without an alternation there is no set to share a slot: an untimed option keeps the decision window
    alone = reading([("keep working tonight", NO_EVENT)], "Should I keep working tonight?", events=[])
    assert [o.time_from for o in alone.options] == ["decision window"]
