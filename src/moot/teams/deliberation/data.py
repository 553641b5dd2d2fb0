"""Loading a folder of ordinary exports and summarising it in Python for the specialists.

Four kinds of file, by extension:

- ``*.csv`` — a ``date`` column (ISO date or date-time) and metric columns (:data:`METRICS` is the
  documented vocabulary; other numeric columns are kept under their own names);
- ``*.ics`` — iCalendar events, parsed with the ``icalendar`` package;
- ``*.jsonl`` — message exports, one ``{"time", "source", "from", "text"}`` object per line;
- ``*.md`` / ``*.txt`` — notes.

A bad row, line or file is skipped with its file and line named (:class:`SkippedInput`); the rest
is used. The specialists never see raw rows: they get numbered *facts* (averages, changes against
the 7-day baseline, counts, upcoming events) that Python computed here.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.files import UnsafeFileError, read_bytes, regular_files
from moot.teams.deliberation.models import SkippedInput, TimeWindow

METRICS: dict[str, str] = {
    "recovery_pct": "recovery score, %",
    "hrv_ms": "heart-rate variability, ms",
    "resting_hr": "resting heart rate, bpm",
    "sleep_hours": "hours slept",
    "steps": "steps walked",
    "glucose_mg_dl": "blood glucose, mg/dL",
    "active_minutes": "minutes of exercise",
    "vo2max": "VO2max, ml/kg/min",
    "ldl_mg_dl": "LDL cholesterol, mg/dL",
    "hba1c_pct": "HbA1c, %",
    "calories_kcal": "calories eaten, kcal",
    "caffeine_mg": "caffeine, mg",
    "listening_minutes": "minutes of music listened",
    "mood_1_5": "self-rated mood, 1-5",
}
"""The documented metric columns of a CSV export (any other numeric column is kept too)."""

DATA_KINDS = ("metrics", "calendar", "messages", "notes")
"""What a specialist can read: ``metrics:<column>``, ``calendar``, ``messages``, ``notes``."""

URGENT_WORDS = ("urgent", "asap", "deadline", "due", "tonight", "tomorrow", "blocking", "critical")


@dataclass
class CalendarEvent:
    title: str
    start: datetime
    end: datetime
    file: str


@dataclass
class Message:
    time: datetime
    source: str
    sender: str
    text: str


@dataclass
class DataSet:
    """Everything read from one folder."""

    folder: Path
    metrics: dict[str, list[tuple[date, float]]] = field(default_factory=dict)
    """Column → (day, value), sorted by day."""
    events: list[CalendarEvent] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    """File name → text."""
    skipped: list[SkippedInput] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def has(self, kind: str) -> bool:
        """Whether there is data of a kind (``metrics:hrv_ms``, ``calendar``, ``messages``, ``notes``)."""
        if kind.startswith("metrics:"):
            return bool(self.metrics.get(kind.split(":", 1)[1]))
        return bool({"calendar": self.events, "messages": self.messages, "notes": self.notes}.get(kind))

    def amount(self, kind: str) -> int:
        if kind.startswith("metrics:"):
            return len(self.metrics.get(kind.split(":", 1)[1], []))
        return len({"calendar": self.events, "messages": self.messages, "notes": self.notes}.get(kind, []))


def check_kind(kind: str) -> None:
    """Raise a one-line error for a data kind a roster may not name."""
    if kind in ("calendar", "messages", "notes"):
        return
    if kind.startswith("metrics:") and kind.split(":", 1)[1].strip():
        return
    raise MootError(f"unknown data kind {kind!r}",
                    fix="use metrics:<column> (e.g. metrics:hrv_ms), calendar, messages or notes")


# --------------------------------------------------------------------------- loading


MAX_DATA_FILE_BYTES = 32 * 1024 * 1024
"""One export larger than this is skipped (a year of minute-level readings is about 20 MB)."""

_SUFFIXES = (".csv", ".ics", ".jsonl", ".md", ".txt")


def load_folder(folder: str | Path, *, tz: Any = None) -> DataSet:
    """Read every export in ``folder`` (not recursive); bad rows and files are skipped and listed.

    Files are read through the one safe reader with the folder as the root: a link that leads out
    of the folder, a FIFO or device, a file over :data:`MAX_DATA_FILE_BYTES`, a credentials file
    or one holding a key or token is skipped with its reason, never read for a model."""
    given = Path(folder).expanduser()
    if not given.exists():
        raise MootError(f"data folder {str(given)!r} does not exist", fix="pass --data DIR, a folder of .csv, .ics, .jsonl or .md exports")
    if not given.is_dir():
        raise MootError(f"{str(given)!r} is not a folder", fix="pass --data DIR, a folder of .csv, .ics, .jsonl or .md exports")
    root = given.resolve()
    data = DataSet(folder=given)
    tz = tz or _local_tz()
    files = [(name, kind) for name, kind in regular_files(root) if Path(name).suffix.lower() in _SUFFIXES]
    for name, refused in files:
        suffix = Path(name).suffix.lower()
        if refused is not None:
            data.skipped.append(SkippedInput(file=name, reason="a folder" if refused == "folder" else "not a regular file"))
            continue
        try:
            raw = read_bytes(name, root=root, max_bytes=MAX_DATA_FILE_BYTES, what="data file")
        except UnsafeFileError as exc:
            data.skipped.append(SkippedInput(file=name, reason=exc.detail))
            continue
        try:
            if suffix == ".csv":
                _load_csv(name, raw.decode("utf-8-sig"), data)
            elif suffix == ".ics":
                _load_ics(name, raw, data, tz)
            elif suffix == ".jsonl":
                _load_jsonl(name, raw.decode("utf-8-sig"), data, tz)
            else:
                text = raw.decode("utf-8-sig", errors="replace").strip()
                if text:
                    data.notes[name] = text
        except UnicodeDecodeError:
            data.skipped.append(SkippedInput(file=name, reason="not UTF-8 text"))
            continue
        data.files.append(name)
    for values in data.metrics.values():
        values.sort()
    data.events.sort(key=lambda e: e.start)
    data.messages.sort(key=lambda m: m.time)
    if not (data.metrics or data.events or data.messages or data.notes):
        what = "is empty" if not files else "holds no usable .csv, .ics, .jsonl or .md data"
        detail = "" if not data.skipped else f" ({len(data.skipped)} thing(s) skipped: {data.skipped[0].file}: {data.skipped[0].reason})"
        raise MootError(f"data folder {str(root)!r} {what}{detail}",
                        fix="add exports: CSV with a date column, .ics calendars, .jsonl messages or .md notes")
    return data


def _local_tz() -> Any:
    return datetime.now().astimezone().tzinfo or timezone.utc


def _number(text: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    value = float(text)
    if math.isnan(value) or math.isinf(value):
        raise ValueError("not a finite number")
    return value


def _parse_day(text: str) -> date:
    text = text.strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return datetime.fromisoformat(text).date()


def _load_csv(file: str, text: str, data: DataSet) -> None:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        data.skipped.append(SkippedInput(file=file, reason="empty CSV"))
        return
    columns = [h.strip().lower() for h in header]
    if "date" not in columns:
        data.skipped.append(SkippedInput(file=file, line=1, reason="no 'date' column (the header must name one)"))
        return
    at = columns.index("date")
    for number, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(columns):
            data.skipped.append(SkippedInput(file=file, line=number,
                                             reason=f"{len(row)} values for {len(columns)} columns"))
            continue
        try:
            day = _parse_day(row[at])
        except ValueError:
            data.skipped.append(SkippedInput(file=file, line=number, reason=f"date {row[at]!r} is not YYYY-MM-DD"))
            continue
        parsed: dict[str, float] = {}
        bad = None
        for name, cell in zip(columns, row):
            if name == "date":
                continue
            try:
                value = _number(cell)
            except ValueError:
                bad = f"{name} {cell!r} is not a number"
                break
            if value is not None:
                parsed[name] = value
        if bad:
            data.skipped.append(SkippedInput(file=file, line=number, reason=bad))
            continue
        for name, value in parsed.items():
            data.metrics.setdefault(name, []).append((day, value))


def _as_datetime(value: Any, tz: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=tz)
    raise ValueError(f"not a date: {value!r}")


def _load_ics(name: str, raw: bytes, data: DataSet, tz: Any) -> None:
    import icalendar

    try:
        calendar = icalendar.Calendar.from_ical(raw)
    except Exception as exc:  # the library raises ValueError and friends; any means unparseable
        data.skipped.append(SkippedInput(file=name, reason=f"not a readable iCalendar file ({type(exc).__name__}: {str(exc)[:80]})"))
        return
    found = 0
    for component in calendar.walk("VEVENT"):
        try:
            start = _as_datetime(component.decoded("DTSTART"), tz)
            if component.get("DTEND") is not None:
                end = _as_datetime(component.decoded("DTEND"), tz)
            elif component.get("DURATION") is not None:
                end = start + component.decoded("DURATION")
            else:
                end = start + timedelta(hours=1)
        except Exception as exc:
            data.skipped.append(SkippedInput(file=name, reason=f"an event without a usable start ({str(exc)[:60]})"))
            continue
        title = str(component.get("SUMMARY", "(no title)")).strip() or "(no title)"
        data.events.append(CalendarEvent(title=title[:100], start=start, end=max(end, start), file=name))
        found += 1
    if not found and not any(s.file == name for s in data.skipped):
        data.skipped.append(SkippedInput(file=name, reason="no events in the calendar"))


def _load_jsonl(name: str, text: str, data: DataSet, tz: Any) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            data.skipped.append(SkippedInput(file=name, line=number, reason="not JSON"))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("time"), str) or not isinstance(item.get("text"), str):
            data.skipped.append(SkippedInput(file=name, line=number, reason='needs "time" and "text" strings'))
            continue
        try:
            when = _as_datetime(datetime.fromisoformat(item["time"].replace("Z", "+00:00")), tz)
        except ValueError:
            data.skipped.append(SkippedInput(file=name, line=number, reason=f"time {item['time'][:40]!r} is not ISO 8601"))
            continue
        data.messages.append(Message(time=when, source=str(item.get("source", "")) or Path(name).stem,
                                     sender=str(item.get("from", "")), text=" ".join(item["text"].split())[:300]))


# --------------------------------------------------------------------------- time slots


@dataclass(frozen=True)
class Slot:
    """A time a recommendation can be tied to: a calendar event or a part of the day."""

    label: str
    window: TimeWindow


def time_slots(data: DataSet, now: datetime, hours: int = 24) -> list[Slot]:
    """Parts of the day from ``now`` for ``hours``, then the calendar's events in that span."""
    slots: list[Slot] = []
    parts = (("morning", 7, 12), ("afternoon", 12, 17), ("evening", 17, 22), ("night", 22, 31))
    horizon = now + timedelta(hours=hours)
    day = now.date() - timedelta(days=1)
    while day <= horizon.date():
        for name, h0, h1 in parts:
            start = datetime.combine(day, time(0), tzinfo=now.tzinfo) + timedelta(hours=h0)
            end = datetime.combine(day, time(0), tzinfo=now.tzinfo) + timedelta(hours=h1)
            if end <= now or start >= horizon:
                continue
            start = max(start, now)
            which = "tonight" if name in ("evening", "night") and day == now.date() else \
                ("today" if day == now.date() else ("tomorrow" if day == now.date() + timedelta(days=1) else f"{day:%a}"))
            label = f"{which} {name} {start:%H:%M}-{end:%H:%M}" if which != "tonight" else f"tonight ({name}) {start:%H:%M}-{end:%H:%M}"
            slots.append(Slot(label, TimeWindow(start=start, end=end)))
        day += timedelta(days=1)
    for event in data.events:
        if event.end > now and event.start < horizon:
            slots.append(Slot(f"{event.start:%a %H:%M}-{event.end:%H:%M} {event.title[:40]}",
                              TimeWindow(start=event.start, end=event.end)))
    seen: set[str] = set()
    unique = []
    for s in slots:
        if s.label not in seen:
            seen.add(s.label)
            unique.append(s)
    return unique


# --------------------------------------------------------------------------- facts


def facts_for(data: DataSet, reads: list[str], now: datetime, *, limit: int = 8) -> list[str]:
    """Short numbered-ready facts a specialist reads, computed here (the model does no arithmetic)."""
    facts: list[str] = []
    for kind in reads:
        if kind.startswith("metrics:"):
            facts += metric_facts(kind.split(":", 1)[1], data.metrics.get(kind.split(":", 1)[1], []), now.date())
        elif kind == "calendar":
            facts += calendar_facts(data.events, now)
        elif kind == "messages":
            facts += message_facts(data.messages, now)
        elif kind == "notes":
            facts += note_facts(data.notes)
    return facts[:limit]


def _fmt(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.1f}"


def metric_facts(name: str, series: list[tuple[date, float]], today: date) -> list[str]:
    """The latest value against the 7-day baseline before it, and the 3-day trend."""
    known = [(d, v) for d, v in series if d <= today]
    if not known:
        return []
    day, value = known[-1]
    unit = METRICS.get(name, name)
    when = "today" if day == today else ("yesterday" if day == today - timedelta(days=1) else f"on {day.isoformat()}")
    baseline = [v for d, v in known[:-1] if day - timedelta(days=7) <= d < day]
    facts = []
    if baseline:
        mean = sum(baseline) / len(baseline)
        change = 0.0 if mean == 0 else (value - mean) / abs(mean) * 100
        direction = "above" if change > 0 else "below"
        if abs(change) < 5:
            facts.append(f"{name} ({unit}) {when}: {_fmt(value)}, about its 7-day average of {_fmt(mean)}")
        else:
            facts.append(f"{name} ({unit}) {when}: {_fmt(value)}, {abs(change):.0f}% {direction} its 7-day average of {_fmt(mean)}")
    else:
        facts.append(f"{name} ({unit}) {when}: {_fmt(value)}")
    last3 = [v for _, v in known[-3:]]
    if len(last3) == 3 and (last3[0] < last3[1] < last3[2] or last3[0] > last3[1] > last3[2]):
        trend = "rising" if last3[2] > last3[0] else "falling"
        facts.append(f"{name} has been {trend} for 3 days: {', '.join(_fmt(v) for v in last3)}")
    return facts


def calendar_facts(events: list[CalendarEvent], now: datetime) -> list[str]:
    upcoming = [e for e in events if e.end > now and e.start < now + timedelta(hours=36)]
    facts = []
    for e in upcoming[:5]:
        hours = (e.start - now).total_seconds() / 3600
        when = "now" if hours <= 0 else f"in {hours:.0f} h" if hours >= 1 else f"in {hours * 60:.0f} min"
        facts.append(f"calendar: '{e.title}' {e.start:%a %H:%M}-{e.end:%H:%M} ({when})")
    today = [e for e in events if e.start.date() == now.date()]
    busy = sum((e.end - e.start).total_seconds() for e in today) / 3600
    if today:
        facts.append(f"calendar: {len(today)} events today, {busy:.1f} h booked")
    if not upcoming:
        facts.append("calendar: nothing booked in the next 36 hours")
    return facts


def message_facts(messages: list[Message], now: datetime) -> list[str]:
    recent = [m for m in messages if now - timedelta(hours=24) <= m.time <= now]
    week = [m for m in messages if now - timedelta(days=8) <= m.time < now - timedelta(hours=24)]
    facts = []
    if recent or week:
        per_day = len(week) / 7 if week else 0.0
        compare = f", against {per_day:.0f} a day over the week before" if week else ""
        facts.append(f"messages: {len(recent)} in the last 24 h{compare}")
    urgent = [m for m in recent if any(w in m.text.lower() for w in URGENT_WORDS)]
    if urgent:
        facts.append(f"messages: {len(urgent)} of the last 24 h mention a deadline or urgency")
    for m in sorted(urgent or recent, key=lambda m: m.time, reverse=True)[:3]:
        facts.append(f"message from {m.sender or 'someone'} ({m.source}, {m.time:%a %H:%M}): \"{m.text[:140]}\"")
    return facts


def note_facts(notes: dict[str, str]) -> list[str]:
    facts = []
    for name, text in notes.items():
        for line in text.splitlines():
            line = line.strip().lstrip("#-* ").strip()
            if len(line) > 12:
                facts.append(f"note ({name}): {line[:160]}")
            if len(facts) >= 4:
                return facts
    return facts


__all__ = [
    "DATA_KINDS", "METRICS", "CalendarEvent", "DataSet", "Message", "Slot", "check_kind", "facts_for", "load_folder",
    "metric_facts", "time_slots",
]
