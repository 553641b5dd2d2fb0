"""Evidence: what the data shows, computed or quoted by Python for the specialists and the answer.

- a metric: its latest value against the mean of the seven days before it
  (``recovery score 34 % today against a weekly average of 56 %``), rounded as the data is written,
  and a three-day run when it rose or fell every day (``… has fallen day after day: 58 → 49 → 41``);
  for a metric its specialist declares a sign of readiness (the roster's ``readiness``), what the
  change says: ``lower`` or ``higher`` readiness for effort when it moved at least
  :data:`READINESS_CHANGE` of its week's mean the bad or the good way, else ``usual``;
- the calendar: the events of the next 36 hours by title and time, and the free time between them;
- messages: the newest few of the last day (or week), quoted with sender, source and time;
- notes: the sentences of the newest dated section (or the first ones), quoted.

Nothing here reads what a text *means*: notes and messages are quoted for the model to judge, and
a number in the evidence is a value of the data or a mean of its values — the answer's numbers are
checked against the data by the eval (``moot eval deliberation --scenarios``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from types import SimpleNamespace

from moot.teams.deliberation.data import CalendarEvent, DataSet, Message, MetricColumn
from moot.teams.deliberation.models import Evidence, EvidenceKind, Readiness
from moot.teams.deliberation.plan import TimeWindow, free_slots
from moot.text import find_dates, read_front_matter, split_units

HORIZON_HOURS = 36
BASELINE_DAYS = 7
MIN_BASELINE_VALUES = 3
READINESS_CHANGE = 0.10
"""A readiness metric that moved this share of its week's mean is a sign (the design's example calls
an HRV 15 % below baseline a reason to rest); a smaller move is the person's usual level."""


def found(kind: EvidenceKind, text: str, source: str, label: str = "", value: float | None = None,
          baseline: float | None = None, unit: str = "", shown_value: str = "", shown_baseline: str = "",
          polarity: int | None = None) -> Evidence:
    """Evidence before it gets its run-wide id (the team numbers it ``E1``, ``E2``, …). ``polarity``:
    +1 when a higher value means more readiness, −1 when a lower one does, ``None`` when the metric
    says nothing of readiness."""
    change = (value - baseline) / abs(baseline) if value is not None and baseline else None
    return Evidence(evidence_id="", kind=kind, text=text, source=source, label=label, value=value, baseline=baseline,
                    unit=unit, shown_value=shown_value, shown_baseline=shown_baseline, change=change,
                    readiness=readiness(change, polarity))


def readiness(change: float | None, polarity: int | None) -> Readiness | None:
    """What a metric's change against its week says of readiness for effort (see :data:`READINESS_CHANGE`)."""
    if change is None or polarity is None:
        return None
    signed = change * polarity
    return "higher" if signed >= READINESS_CHANGE else "lower" if signed <= -READINESS_CHANGE else "usual"


def shown(value: float, decimals: int) -> str:
    """A value rounded as its column is written (``56``, ``6.4``)."""
    return f"{value:.{decimals}f}"


def with_unit(number: str, unit: str) -> str:
    return f"{number} {unit}" if unit else number


def _when(day: date, today: date) -> str:
    if day == today:
        return "today"
    if day == today - timedelta(days=1):
        return "yesterday"
    return f"on {day:%a} {day.isoformat()}"


@dataclass(frozen=True)
class ReadinessSignal:
    """What a specialist's readiness metrics say together, and the stance Python takes from it."""

    direction: Readiness
    evidence_ids: list[str]
    change: float
    """The largest move of a readiness metric against its week, as a share (0.36: 36 %)."""
    why: str

    def stance(self) -> SimpleNamespace:
        """The evidence, impact and confidence of a position taken from the signal alone: confidence
        50 % plus the largest move in points (a 36 % drop: 86 %), at most 90 %; 50 % at the usual
        level; impact high from a 25 % move, medium from 10 %, low at the usual level."""
        size = abs(self.change) if self.direction != "usual" else 0.0
        confidence = min(90.0, 50.0 + 100.0 * size)
        impact = "high" if size >= 0.25 else "medium" if size >= READINESS_CHANGE else "low"
        return SimpleNamespace(evidence=self.evidence_ids[:3], impact=impact, confidence=round(confidence))


def readiness_signal(evidence: Sequence[Evidence]) -> ReadinessSignal | None:
    """The direction a specialist's readiness evidence points: ``lower`` or ``higher`` when its signs
    agree, ``usual`` when every one is at its usual level; ``None`` without readiness evidence or
    when the signs disagree (the model then weighs the evidence)."""
    signs = [e for e in evidence if e.readiness is not None and e.change is not None]
    if not signs:
        return None
    ways = {e.readiness for e in signs} - {"usual"}
    if len(ways) > 1:
        return None
    direction: Readiness = ways.pop() if ways else "usual"
    moved = sorted((e for e in signs if e.readiness == direction), key=lambda e: -abs(e.change or 0.0))
    change = max(abs(e.change or 0.0) for e in signs)
    what = "; ".join(e.text for e in moved[:2])
    why = f"readiness {'at its usual level' if direction == 'usual' else direction + ' than usual'} ({what})"
    return ReadinessSignal(direction, [e.evidence_id for e in moved], change, why)


def metric_evidence(column: MetricColumn, series: list[tuple[date, float]], today: date,
                    polarity: int | None = None) -> list[Evidence]:
    """The latest value against the mean of the week before it, and a three-day rise or fall."""
    known = [(d, v) for d, v in series if d <= today]
    if not known:
        return []
    day, value = known[-1]
    dec = column.decimals
    baseline = [v for d, v in known[:-1] if day - timedelta(days=BASELINE_DAYS) <= d < day]
    text = f"{column.label} {with_unit(shown(value, dec), column.unit)} {_when(day, today)}"
    mean, mdec = None, dec
    if len(baseline) >= MIN_BASELINE_VALUES:
        mean = sum(baseline) / len(baseline)
        # one more decimal than the data when rounding would make the two look equal
        mdec = dec if shown(mean, dec) != shown(value, dec) or value == mean else dec + 1
        text += f" against a weekly average of {with_unit(shown(mean, mdec), column.unit)}"
    out = [found("metric", text, column.file, column.label, value, mean, column.unit, shown(value, dec),
                 shown(mean, mdec) if mean is not None else "", polarity)]
    last3 = [v for _, v in known[-3:]]
    if len(last3) == 3 and (last3[0] < last3[1] < last3[2] or last3[0] > last3[1] > last3[2]):
        way = "risen" if last3[2] > last3[0] else "fallen"
        out.append(found("trend", f"{column.label} has {way} day after day: " + " → ".join(shown(v, dec) for v in last3),
                         column.file, column.label))
    return out


def upcoming(events: list[CalendarEvent], now: datetime, hours: int = HORIZON_HOURS) -> list[CalendarEvent]:
    return [e for e in events if e.end > now and e.start < now + timedelta(hours=hours)]


def calendar_evidence(events: list[CalendarEvent], now: datetime, limit: int = 6) -> list[Evidence]:
    """The next events by title and time, then the free time between them."""
    soon = upcoming(events, now)
    out = [found("event", f"calendar: '{e.title}' {TimeWindow(start=e.start, end=e.end).label()}", e.file)
           for e in soon[:limit]]
    free = free_slots([TimeWindow(start=e.start, end=e.end) for e in events], now, HORIZON_HOURS)
    if free:
        out.append(found("free_time", "free time in the calendar: " + ", ".join(w.label() for w in free[:4]),
                         soon[0].file if soon else (events[0].file if events else "calendar")))
    elif soon:
        out.append(found("free_time", "no free half hour in the calendar between 06:00 and 22:00 in the next 36 hours",
                         soon[0].file))
    return out


def message_evidence(messages: list[Message], now: datetime, limit: int = 3) -> list[Evidence]:
    """The newest messages of the last day (else of the last week), quoted."""
    recent = [m for m in messages if now - timedelta(hours=24) <= m.time <= now]
    if not recent:
        recent = [m for m in messages if now - timedelta(days=7) <= m.time <= now]
    chosen = sorted(recent, key=lambda m: m.time, reverse=True)[:limit]
    return [found("message", f"message from {m.sender or 'someone'} ({m.source}, {m.time:%a %H:%M}): “{m.text[:200]}”",
                  m.source) for m in chosen]


def note_sentences(text: str, today: date, limit: int = 4) -> list[str]:
    """The sentences of the newest section headed by a date not after ``today``; else the first ones."""
    units = split_units(read_front_matter(text).body)
    sections: list[tuple[date, int]] = []
    for u in units:
        if u.kind == "heading":
            days = [d.day for d in find_dates(u.text, anchor=today) if d.precision == "day" and d.day <= today]
            if days:
                sections.append((max(days), u.index))
    start = max(sections)[1] + 1 if sections else 0
    out = []
    for u in units[start:]:
        if u.kind == "heading":
            if sections:
                break
            continue
        if len(u.text) > 3:
            out.append(u.render())
        if len(out) >= limit:
            break
    return out


def note_evidence(notes: dict[str, str], today: date) -> list[Evidence]:
    return [found("note", f"note ({name}): “{s[:200]}”", name) for name, text in notes.items()
            for s in note_sentences(text, today)]


def polarity_of(data: DataSet, key: str, signs: Sequence[str]) -> int | None:
    """+1 or −1 when one of a specialist's readiness patterns names the column (``-resting``: a
    lower value is more ready), else ``None``."""
    for sign in signs:
        pattern = sign.lstrip("+-").strip()
        if pattern and key in data.metric_columns(pattern):
            return -1 if sign.startswith("-") else 1
    return None


def evidence_for(data: DataSet, reads: list[str], now: datetime, claimed: set[str] | None = None,
                 limit: int = 8, readiness_signs: Sequence[str] = ()) -> list[Evidence]:
    """What one specialist reads: its metric columns, the calendar, messages and notes."""
    out: list[Evidence] = []
    for kind in reads:
        if kind.startswith("metrics:"):
            for key in data.metric_columns(kind.split(":", 1)[1].strip(), claimed):
                out += metric_evidence(data.columns[key], data.metrics.get(key, []), now.date(),
                                       polarity_of(data, key, readiness_signs))
        elif kind == "calendar":
            out += calendar_evidence(data.events, now)
        elif kind == "messages":
            out += message_evidence(data.messages, now)
        elif kind == "notes":
            out += note_evidence(data.notes, now.date())
    unique = list({f.text: f for f in out}.values())
    return unique[:limit]


def claimed_columns(data: DataSet, reads: list[str]) -> set[str]:
    """The columns named by patterns other than ``*`` (what ``metrics:*`` leaves to the others)."""
    return {k for kind in reads if kind.startswith("metrics:") and kind.split(":", 1)[1].strip() != "*"
            for k in data.metric_columns(kind.split(":", 1)[1].strip())}


__all__ = ["READINESS_CHANGE", "ReadinessSignal", "found", "calendar_evidence", "claimed_columns", "evidence_for", "message_evidence",
           "metric_evidence", "note_evidence", "note_sentences", "polarity_of", "readiness", "readiness_signal", "shown",
           "upcoming"]
