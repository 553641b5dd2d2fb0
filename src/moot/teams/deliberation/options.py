"""Reading the request: the options it names and the decision's time window.

One model call, under a schema Python builds for this request: each option is one of the pieces
the request is made of (an enum), tied to one of the calendar's coming events (an enum) or to one
of the clock times the request writes (an enum, read by :func:`moot.text.clock.find_clock_times`),
and the window is one of the coming parts of the day (an enum). The 0.5B model, asked to write the options in the
request's words, copied the whole question ("Should I ... or ...") as one option; choosing among
the pieces it cannot.

The pieces are the choices the request sets against each other with an alternation ("or", "vs",
"instead of"), read by :func:`moot.text.phrases.choice_sets`, whole: "stay in and rest" is one
choice. Only a request with no alternation is offered the finer runs between its conjunctions,
modal verbs and punctuation (:func:`moot.text.alternatives`). Either way a piece that only says
when or opens with a preposition is not offered. Cut at every conjunction, a choice holding "and"
became two options, and the request's context sentences ("Got home at 1am") became options too.

The code then checks and completes the reading: an option whose words are neither in the request
nor in its event is dropped (the model made it up), repeats are merged, and the options are the
whole set of choices the model's picks belong to (the set most of them belong to), since the
request offers them as alternatives. An option without an event is tied to the one coming event
that shares a word with it and with no other option. An option gets its event's time, else the
request's time (an hour long), else the time of the first timed option it is set against (the
alternatives compete for one slot), else the decision window; a window left unstated is the span
of the options' times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.teams.deliberation.data import CalendarEvent
from moot.teams.deliberation.models import RequestReading
from moot.teams.deliberation.plan import DEFAULT_OPTION_MINUTES, Option, TimeWindow
from moot.text.clock import find_clock_times, next_occurrence
from moot.text.dates import find_dates
from moot.text.phrases import alternatives, choice_sets, tag
from moot.text.words import STOPWORDS, content_words

NOT_STATED = "not stated"
NO_EVENT = "none"
MAX_OPTIONS = 4
EVENT_HOURS = 48
_PARTS = (("morning", 6, 12), ("afternoon", 12, 17), ("evening", 17, 22), ("night", 22, 30))
_DAY_WORDS = frozenset({name for name, _, _ in _PARTS} | {"tonight", "today", "tomorrow", "now"})
MAX_PIECE = 80


@dataclass
class Choices:
    """The enums of one request's reading schema, and what each value stands for."""

    pieces: list[str] = field(default_factory=list)
    """The request's pieces an option is chosen from; empty when none could be read (the label is then free text)."""
    sets: list[tuple[str, ...]] = field(default_factory=list)
    """The choices the request sets against each other, one tuple per alternation; the pieces are theirs when any."""
    events: dict[str, CalendarEvent] = field(default_factory=dict)
    times: dict[str, datetime] = field(default_factory=dict)
    windows: dict[str, TimeWindow] = field(default_factory=dict)

    def listing(self) -> str:
        """The choices as the reader's prompt shows them."""
        return (("Pieces of the request:\n" + "\n".join(f"- {p}" for p in self.pieces) + "\n" if self.pieces else "")
                + "Calendar events:\n" + ("\n".join(f"- {e}" for e in self.events) or "- (none)")
                + "\nTimes in the request:\n" + ("\n".join(f"- {t}" for t in self.times) or "- (none)")
                + "\nParts of the day:\n" + "\n".join(f"- {w}" for w in self.windows))


def day_parts(now: datetime, hours: int = 36) -> dict[str, TimeWindow]:
    """The coming parts of the day (``tomorrow morning (Wed 06:00–12:00)``) from ``now`` for ``hours``."""
    out: dict[str, TimeWindow] = {}
    horizon = now + timedelta(hours=hours)
    day = now.date() - timedelta(days=1)
    while day <= horizon.date():
        base = datetime.combine(day, time(0), tzinfo=now.tzinfo)
        for name, h0, h1 in _PARTS:
            start, end = base + timedelta(hours=h0), base + timedelta(hours=h1)
            if end <= now or start >= horizon:
                continue
            start = max(start, now.replace(second=0, microsecond=0))
            offset = (day - now.date()).days
            if offset == 0 and name in ("evening", "night"):
                which = "tonight" if name == "evening" else "tonight, late"
            elif offset == -1:
                which = "tonight, late"
            else:
                which = f"{'today' if offset == 0 else 'tomorrow' if offset == 1 else f'{day:%A}'} {name}"
            out[f"{which} ({TimeWindow(start=start, end=end).label()})"] = TimeWindow(start=start, end=end)
        day += timedelta(days=1)
    return out


def says_only_when(piece: str) -> bool:
    """Whether a piece of a request only says when ("Tomorrow at 8am", "this evening at 7"): its words,
    less clock times and dates, are parts of the day or small words."""
    spans = sorted([(m.start, m.end) for m in find_clock_times(piece)] + [(m.start, m.end) for m in find_dates(piece)])
    rest, at = [], 0
    for a, b in spans:
        if a >= at:
            rest.append(piece[at:a])
            at = b
    rest.append(piece[at:])
    words = [w for w in re.findall(r"[a-z]+", " ".join(rest).lower()) if w not in STOPWORDS]
    return all(w in _DAY_WORDS for w in words)


def _shortened(text: str) -> str:
    """A piece cut to :data:`MAX_PIECE` characters at a word's end, never inside a word."""
    text = text.strip()
    if len(text) <= MAX_PIECE:
        return text
    return text[:MAX_PIECE].rsplit(" ", 1)[0].rstrip(" ,;:")


def request_sets(request: str) -> list[tuple[str, ...]]:
    """The choices the request sets against each other (:func:`moot.text.phrases.choice_sets`),
    one tuple per alternation, each choice once; a set with a choice that only says when ("tonight
    or tomorrow?") or opens with a preposition is a choice of time or place, not of options."""
    opening = {start: pos for _, pos, _, start, _ in tag(request)}
    out: list[tuple[str, ...]] = []
    for found in choice_sets(request):
        texts = tuple(dict.fromkeys(_shortened(p.text) for p in found))
        if (len(texts) > 1 and not any(says_only_when(t) for t in texts)
                and all(opening.get(p.start) != "IN" for p in found) and texts not in out):
            out.append(texts)
    return out


def request_pieces(request: str) -> list[str]:
    """The pieces of the request an option may be (see the module docstring), each once, in order:
    the choices of its alternations, else the runs between its conjunctions. A piece that opens with
    a preposition ("at lunch today", "after work") says when or where something happens, not what:
    it is not offered (the 0.5B reader took "At lunch today" for an option, and the answer said to
    do it as planned)."""
    return _pieces(request, request_sets(request))


def _pieces(request: str, sets: list[tuple[str, ...]]) -> list[str]:
    if sets:
        return list(dict.fromkeys(t for found in sets for t in found))
    opening = {start: pos for _, pos, _, start, _ in tag(request)}  # the request's tagging (cached), read in context
    out: list[str] = []
    for piece in alternatives(request):
        text = _shortened(piece.text)
        if text and text not in out and not says_only_when(text) and opening.get(piece.start) != "IN":
            out.append(text)
    return out


def choices_for(request: str, events: list[CalendarEvent], now: datetime) -> Choices:
    sets = request_sets(request)
    c = Choices(pieces=_pieces(request, sets), sets=sets)
    for e in events:
        if e.end > now and e.start < now + timedelta(hours=EVENT_HOURS) and len(c.events) < 12:
            c.events.setdefault(f"{TimeWindow(start=e.start, end=e.end).label()} {e.title[:60]}", e)
    for clock in find_clock_times(request):
        moment = next_occurrence(clock, request, now)
        c.times.setdefault(f"{moment:%a %H:%M}", moment)
    c.windows = day_parts(now)
    return c


def _enum(values: list[str]) -> Any:
    return Literal[tuple(values)]  # type: ignore[valid-type]


def reader_output(choices: Choices) -> type[BaseModel]:
    """The reading schema: options from the request's pieces, with an event and a time from the enums, and a window."""
    label: Any = (_enum(choices.pieces), Field(description="the option: one piece of the request")) if choices.pieces \
        else (str, Field(max_length=MAX_PIECE, description="the option in the request's own words"))
    option = create_model(
        "RequestOption",
        label=label,
        event=(_enum([*choices.events, NO_EVENT]), NO_EVENT),
        time=(_enum([*choices.times, NOT_STATED]), NOT_STATED),
    )
    return create_model("OptionsInRequest", options=(list[option], Field(min_length=1, max_length=MAX_OPTIONS)),  # type: ignore[valid-type]
                        window=(_enum([*choices.windows, NOT_STATED]), NOT_STATED))


def _clean(label: str) -> str:
    return " ".join(label.strip().strip("\"'“”‘’.,;:!?").split())


Picked = list[tuple[str, CalendarEvent | None, datetime | None]]


def _whole_set(picked: Picked, choices: Choices, notes: list[str]) -> Picked:
    """The options as the whole set of choices the picks belong to: the set holding most picks (the
    earliest pick's on a tie), in the request's order; a choice the model left out is added, a pick
    from another set is left out. Picks that belong to no set are kept as they are."""
    labels = [label for label, _, _ in picked]
    sets = [tuple(_clean(t) for t in found) for found in choices.sets]

    def hits(found: tuple[str, ...]) -> tuple[int, int]:
        return sum(label in found for label in labels), -min((labels.index(t) for t in found if t in labels), default=len(labels))

    best = max(sets, key=hits)
    if hits(best)[0] == 0:
        return picked
    by_label = {p[0]: p for p in reversed(picked)}  # the first pick of a label wins
    added = [t for t in best if t not in by_label]
    left = [label for label in labels if label not in best]
    if added:
        notes.append(f"added the option{'s' if len(added) > 1 else ''} {', '.join(repr(t) for t in added)}: "
                     "the request sets it against the options read")
    if left:
        notes.append(f"left out {', '.join(repr(t) for t in left)}: not among the choices the request sets against each other")
    return [by_label.get(t, (t, None, None)) for t in best[:MAX_OPTIONS]]


def _linked_by_words(picked: Picked, choices: Choices, notes: list[str]) -> Picked:
    """An option with neither event nor time tied to the one coming event that shares a word with it,
    when that event is no other option's and shares no word with another option."""
    words = [set(content_words(label, numbers=False)) for label, _, _ in picked]
    taken = {id(e) for _, e, _ in picked if e is not None}
    out = list(picked)
    for k, (label, event, moment) in enumerate(picked):
        if event is not None or moment is not None:
            continue
        others = set().union(*(w for j, w in enumerate(words) if j != k))
        sharing = [e for e in choices.events.values() if id(e) not in taken
                   and words[k] & (title := set(content_words(e.title, numbers=False))) and not others & title]
        if len(sharing) == 1:
            out[k] = (label, sharing[0], None)
            taken.add(id(sharing[0]))
            notes.append(f"linked the option {label!r} to the calendar's '{sharing[0].title}'")
    return out


def resolve(output: Any, request: str, choices: Choices, now: datetime) -> RequestReading:
    """The reader's choices checked and completed in Python (see the module docstring)."""
    notes: list[str] = []
    request_words = set(content_words(request, numbers=False))
    picked: Picked = []
    seen: set[frozenset[str]] = set()
    for item in getattr(output, "options", []) or []:
        label = _clean(item.label)
        event = choices.events.get(item.event)
        words = set(content_words(label, numbers=False))
        own = request_words | (set(content_words(event.title, numbers=False)) if event else set())
        if not label or not words & own:
            notes.append(f"dropped the option {label or '(empty)'!r}: none of its words are in the request"
                         + (" or its event" if event else ""))
            continue
        if frozenset(words) in seen:
            continue
        moment = choices.times.get(item.time)
        if event is None and moment is not None:
            # the reader left it unlinked, but exactly one event at the option's time shares a word with it
            # ("interval session" at 7:00 and "Track session: 6x800m intervals" 07:00–08:00): that event is the option
            sharing = [e for e in choices.events.values() if e.start <= moment < e.end
                       and words & set(content_words(e.title, numbers=False))]
            if len(sharing) == 1:
                event = sharing[0]
                notes.append(f"linked the option {label!r} to the calendar's '{event.title}'")
        seen.add(frozenset(words))
        picked.append((label, event, moment))
    if choices.sets and picked:
        picked = _whole_set(picked, choices, notes)
    picked = _linked_by_words(picked, choices, notes)
    window_label = getattr(output, "window", NOT_STATED)
    window = choices.windows.get(window_label)
    if window is None:
        timed = [(e.start, e.end) if e else (t, t + timedelta(minutes=DEFAULT_OPTION_MINUTES))
                 for _, e, t in picked if e or t]
        if timed:
            window = TimeWindow(start=min(s for s, _ in timed), end=max(e for _, e in timed))
            window_label = f"the options' time ({window.label()})"
        else:
            window_label, window = next(iter(choices.windows.items()))
            notes.append(f"the request gives no time: the decision is taken for {window_label}")
    if not picked:
        inside = [(e.title, e) for e in choices.events.values() if e.start < window.end and e.end > window.start]
        picked = [(title, e, None) for title, e in inside[:MAX_OPTIONS]]
        if picked:
            notes.append("no option could be read from the request: the calendar's events in the window are the options")
    spans: list[tuple[TimeWindow | None, str]] = []
    for _, event, moment in picked[:MAX_OPTIONS]:
        if event is not None:
            spans.append((TimeWindow(start=event.start, end=event.end), "calendar"))
        elif moment is not None:
            spans.append((TimeWindow(start=moment, end=moment + timedelta(minutes=DEFAULT_OPTION_MINUTES)), "request"))
        else:
            spans.append((None, "decision window"))
    # the request sets its options against each other: one without a time of its own competes for the slot of
    # the first one that has a time ("stay in and rest tonight, or boxing at 7?": resting is at 7 too)
    timed = next((span for span, _ in spans if span is not None), None) if choices.sets else None
    options = []
    for k, ((label, event, _), (span, source)) in enumerate(zip(picked[:MAX_OPTIONS], spans), 1):
        if span is None:
            span, source = (timed, "alternative") if timed is not None else (window, "decision window")
        options.append(Option(option_id=f"O{k}", label=label, event=event.title if event else None, window=span,
                              time_from=source))  # type: ignore[arg-type]
    return RequestReading(options=options, window=window, window_label=window_label, note="; ".join(notes))


__all__ = ["NOT_STATED", "NO_EVENT", "Choices", "choices_for", "day_parts", "reader_output", "request_pieces", "request_sets", "resolve",
           "says_only_when"]
