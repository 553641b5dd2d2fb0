"""Loading a folder of ordinary exports, by format.

Four kinds of file, by extension:

- ``*.csv`` — one column of dates (ISO date or date-time; found by its values, whatever its
  header says) and numeric columns, each a metric named by its header (``Recovery score %``,
  ``Heart rate variability (ms)``, ``hrv_ms``): the unit comes from the header's ``%``,
  ``(unit)`` or ``[unit]``, the name from the rest;
- ``*.ics`` — iCalendar events, parsed with the ``icalendar`` package;
- ``*.jsonl`` — message exports, one ``{"time", "source", "from", "text"}`` object per line (the time
  may be called ``timestamp``, ``datetime``, ``date``, ``sent_at``, ``created_at`` or ``ts``, and be
  seconds or milliseconds since 1970; the text ``body``, ``message`` or ``content``; the sender ``sender``, ``author`` or ``user``);
- ``*.md`` / ``*.txt`` — notes.

A bad row, line or file is skipped with its file and line named (:class:`SkippedInput`); the rest
is used. What the data *shows* is computed from these in :mod:`moot.teams.deliberation.evidence`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.files import UnsafeFileError, read_bytes, regular_files, wide_unicode
from moot.teams.deliberation.models import SkippedInput
from moot.text.words import content_words

METRICS: dict[str, tuple[str, str]] = {
    "recovery_pct": ("recovery score", "%"),
    "hrv_ms": ("heart-rate variability", "ms"),
    "resting_hr": ("resting heart rate", "bpm"),
    "sleep_hours": ("sleep", "h"),
    "steps": ("steps", ""),
    "glucose_mg_dl": ("blood glucose", "mg/dL"),
    "active_minutes": ("exercise", "min"),
    "vo2max": ("VO2max", "ml/kg/min"),
    "ldl_mg_dl": ("LDL cholesterol", "mg/dL"),
    "hba1c_pct": ("HbA1c", "%"),
    "calories_kcal": ("calories eaten", "kcal"),
    "caffeine_mg": ("caffeine", "mg"),
    "listening_minutes": ("music listened", "min"),
    "mood_1_5": ("self-rated mood (1-5)", ""),
}
"""moot's own column names, with the words and unit they are shown with. Any other numeric
column is read too, named and measured by its header."""

DATA_KINDS = ("metrics", "calendar", "messages", "notes")
"""What a specialist can read: ``metrics:<column or words>``, ``metrics:*``, ``calendar``, ``messages``, ``notes``."""

_UNIT_IN_BRACKETS = re.compile(r"^(?P<name>.*?)\s*[(\[](?P<unit>[^()\[\]]{1,16})[)\]]\s*$")
_UNIT_PERCENT = re.compile(r"^(?P<name>.*?)\s*(?:%|\bpct\b|\bpercent\b)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class MetricColumn:
    """One numeric column of a CSV export."""

    key: str
    """The header, normalised (``recovery_score``; moot's own names as they are)."""
    label: str
    """In words, for the evidence (``recovery score``)."""
    unit: str
    header: str
    file: str
    decimals: int = 0
    """The most decimals a value of it is written with (the evidence rounds like the data)."""

    def words(self) -> set[str]:
        return set(content_words(f"{self.key.replace('_', ' ')} {self.label}"))


def describe_header(header: str) -> tuple[str, str, str]:
    """``(key, label, unit)`` of a CSV header: ``Recovery score %`` → ``recovery_score``, ``recovery score``, ``%``."""
    text = " ".join(header.strip().split())
    key = re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "column"
    if key in METRICS:
        label, unit = METRICS[key]
        return key, label, unit
    name, unit = text, ""
    m = _UNIT_IN_BRACKETS.match(text)
    if m and m.group("name"):
        name, unit = m.group("name"), m.group("unit").strip()
    else:
        m = _UNIT_PERCENT.match(text)
        if m and m.group("name"):
            name, unit = m.group("name"), "%"
    label = " ".join(name.replace("_", " ").split()).lower() or key
    return re.sub(r"[^0-9a-z]+", "_", label).strip("_") or key, label, unit


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
    """Column key → (day, value), sorted by day."""
    columns: dict[str, MetricColumn] = field(default_factory=dict)
    events: list[CalendarEvent] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    """File name → text."""
    skipped: list[SkippedInput] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def metric_columns(self, pattern: str, claimed: set[str] | None = None) -> list[str]:
        """The columns ``metrics:<pattern>`` reads: the column of that key, else every column whose
        name holds all of the pattern's words (stemmed); ``*``: every column no other pattern claims."""
        if pattern == "*":
            return [k for k in self.columns if k not in (claimed or set())]
        key = re.sub(r"[^0-9a-z]+", "_", pattern.lower()).strip("_")
        if key in self.columns:
            return [key]
        wanted = set(content_words(pattern.replace("_", " ")))
        return [k for k, c in self.columns.items() if wanted and wanted <= c.words()]

    def has(self, kind: str, claimed: set[str] | None = None) -> bool:
        """Whether there is data of a kind (``metrics:hrv``, ``calendar``, ``messages``, ``notes``)."""
        if kind.startswith("metrics:"):
            return bool(self.metric_columns(kind.split(":", 1)[1].strip(), claimed))
        return bool({"calendar": self.events, "messages": self.messages, "notes": self.notes}.get(kind))

    def amount(self, kind: str, claimed: set[str] | None = None) -> int:
        if kind.startswith("metrics:"):
            return sum(len(self.metrics.get(k, [])) for k in self.metric_columns(kind.split(":", 1)[1].strip(), claimed))
        return len({"calendar": self.events, "messages": self.messages, "notes": self.notes}.get(kind, []))


def check_kind(kind: str) -> None:
    """Raise a one-line error for a data kind a roster may not name."""
    if kind in ("calendar", "messages", "notes"):
        return
    if kind.startswith("metrics:") and kind.split(":", 1)[1].strip():
        return
    raise MootError(f"unknown data kind {kind!r}",
                    fix="use metrics:<column or words> (e.g. metrics:hrv_ms, metrics:resting heart rate), calendar, messages or notes")


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
    entries = list(regular_files(root))
    files = [(name, kind) for name, kind in entries if Path(name).suffix.lower() in _SUFFIXES]
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
        text = _text_of(raw)
        if isinstance(text, _Refused):
            data.skipped.append(SkippedInput(file=name, reason=text.reason))
            continue
        if suffix == ".csv":
            _load_csv(name, text, data)
        elif suffix == ".ics":
            _load_ics(name, text, data, tz)
        elif suffix == ".jsonl":
            _load_jsonl(name, text, data, tz)
        elif text.strip():
            data.notes[name] = text.strip()
        data.files.append(name)
    for values in data.metrics.values():
        values.sort()
    data.events.sort(key=lambda e: e.start)
    data.messages.sort(key=lambda m: m.time)
    if not (data.metrics or data.events or data.messages or data.notes):
        what = "holds no usable .csv, .ics, .jsonl or .md data" if files else _no_exports(entries)
        detail = "" if not data.skipped else f" ({len(data.skipped)} thing(s) skipped: {data.skipped[0].file}: {data.skipped[0].reason})"
        fix = "add exports: CSV with a date column, .ics calendars, .jsonl messages or .md notes"
        sub = next((name for name, kind in entries if kind == "folder"), None)
        if not files and sub is not None:
            fix = f"pass the folder that holds the exports (e.g. --data {given / sub}), or {fix}"
        raise MootError(f"data folder {str(root)!r} {what}{detail}", fix=fix)
    return data


@dataclass(frozen=True)
class _Refused:
    reason: str


def _text_of(raw: bytes) -> str | _Refused:
    """A data file's text: UTF-8 (a BOM dropped). A file in UTF-16 or UTF-32, a binary file or
    text in another encoding is refused with the conversion that fixes it, never read as
    replacement characters (a note of mojibake would go to the model as if it were the user's)."""
    wide = wide_unicode(raw)
    if wide is not None:
        return _Refused(f"{wide.upper()} text, not UTF-8: convert it, e.g. iconv -f {wide} -t utf-8")
    if b"\x00" in raw[:8192]:
        return _Refused("a binary file, not a text export")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _Refused("not UTF-8 text: convert it, e.g. iconv -f latin1 -t utf-8 (or save it as UTF-8)")


def _no_exports(entries: list[tuple[str, Any]]) -> str:
    """Why a folder gave no data files: empty, or what it holds instead (a folder of spreadsheets
    or of sub-folders is not "empty", and saying so would send the user looking in the wrong place)."""
    if not entries:
        return "is empty"
    shown = ", ".join(name + ("/" if kind == "folder" else "") for name, kind in entries[:3]) + (", …" if len(entries) > 3 else "")
    inside = "; folders inside it are not read" if any(kind == "folder" for _, kind in entries) else ""
    return f"has no .csv, .ics, .jsonl, .md or .txt files (it holds {shown}{inside})"


def _local_tz() -> Any:
    return datetime.now().astimezone().tzinfo or timezone.utc


_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-", "\u2013", "\u2014"})
"""How exports write a value that was not measured (R ``NA``, pandas ``NaN``, JSON ``null``, a dash)."""

_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_DELIMITERS = (",", ";", "\t", "|")
"""What separates a CSV export's columns: a comma, or, where the comma is the decimal mark, a semicolon; tabs and bars too."""


def _number(text: str) -> float | None:
    text = text.strip()
    if text.lower() in _MISSING:
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


def _is_day(text: str) -> bool:
    try:
        _parse_day(text)
    except ValueError:
        return False
    return True


def _is_number(text: str) -> bool:
    try:
        return _number(text) is not None
    except ValueError:
        return False


def _decimals(text: str) -> int:
    text = text.strip()
    return len(text.split(".", 1)[1]) if "." in text and "e" not in text.lower() else 0


def _delimiter(text: str) -> str:
    """The column separator: of ``, ; tab |``, the one that cuts the first line into the most
    fields (a comma on a tie), so an export from a locale whose decimal mark is a comma
    (``date;sleep;…`` with ``7,4``) is read by column."""
    first = next(iter(text.splitlines()), "")
    return max(_DELIMITERS, key=lambda d: len(next(csv.reader([first], delimiter=d), [])))


def _csv_rows(file: str, text: str, delimiter: str, data: DataSet) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of each row; a row the csv module cannot read (a cell over its 128 KB
    field limit) is skipped with its line, and the rows after it are still read."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            data.skipped.append(SkippedInput(file=file, line=reader.line_num, reason=f"not a readable CSV row ({exc})"))
            continue
        yield reader.line_num, row


def _load_csv(file: str, text: str, data: DataSet) -> None:
    """The date column is the first whose values are ISO dates; a column whose values are mostly
    numbers is a metric; other columns (time zones, free text) are left out and named once.
    Columns are separated by commas, or by semicolons, tabs or bars (:func:`_delimiter`); where
    they are not separated by commas, ``7,4`` is 7.4; ``NA``, ``NaN``, ``null`` or ``-`` is a value not measured."""
    delimiter = _delimiter(text)
    rows = [(n, r) for n, r in _csv_rows(file, text, delimiter, data) if any(c.strip() for c in r)]
    if delimiter != ",":
        rows = [(n, [c.replace(",", ".") if _DECIMAL_COMMA.fullmatch(c.strip()) else c for c in r]) for n, r in rows]
    if not rows:
        data.skipped.append(SkippedInput(file=file, reason="empty CSV"))
        return
    (first, header), body = rows[0], rows[1:]
    if not body and not _is_day(header[0]):
        data.skipped.append(SkippedInput(file=file, line=first, reason="a header and no rows of values"))
        return
    width = len(header)
    sample = [r for _, r in body if len(r) == width]

    def share(col: int, test: Any) -> float:
        cells = [r[col] for r in sample if r[col].strip().lower() not in _MISSING]
        return sum(1 for c in cells if test(c)) / len(cells) if cells else 0.0

    at = next((i for i in range(width) if share(i, _is_day) >= 0.5), None)
    if at is None and _is_day(header[0]):
        at = 0  # no header row: the first row's first cell is a date (caught just below)
    if at is None:
        data.skipped.append(SkippedInput(file=file, line=first, reason="no column of dates (YYYY-MM-DD) to put the values on"))
        return
    if _is_day(header[at]):
        # the first row is a row of values: read as names it would lose that day and call the
        # metrics "50" and "7.4", which no specialist asks for
        data.skipped.append(SkippedInput(file=file, line=first, reason="the first row holds values, not column names: "
                                         "add a header row naming the columns (e.g. date,sleep_hours,resting_hr)"))
        return
    numeric = [i for i in range(width) if i != at and share(i, _is_number) >= 0.5]
    left_out = [header[i].strip() for i in range(width) if i != at and i not in numeric and header[i].strip()]
    if not numeric and not left_out:
        data.skipped.append(SkippedInput(file=file, line=first, reason="no columns of values beside the dates "
                                         "(separate the columns with commas or semicolons)"))
        return
    if left_out:
        data.skipped.append(SkippedInput(file=file, line=first, reason="not numbers, left out: " + ", ".join(left_out[:6])))
    described = {i: describe_header(header[i]) for i in numeric}
    decimals: dict[int, int] = {i: 0 for i in numeric}
    for number, row in body:
        if len(row) != width:
            data.skipped.append(SkippedInput(file=file, line=number, reason=f"{len(row)} values for {width} columns"))
            continue
        try:
            day = _parse_day(row[at])
        except ValueError:
            data.skipped.append(SkippedInput(file=file, line=number, reason=f"date {row[at]!r} is not YYYY-MM-DD"))
            continue
        parsed: dict[int, float] = {}
        bad = None
        for i in numeric:
            try:
                value = _number(row[i])
            except ValueError:
                bad = f"{header[i].strip()} {row[i]!r} is not a number"
                break
            if value is not None:
                parsed[i] = value
                decimals[i] = max(decimals[i], _decimals(row[i]))
        if bad:
            data.skipped.append(SkippedInput(file=file, line=number, reason=bad))
            continue
        for i, value in parsed.items():
            data.metrics.setdefault(described[i][0], []).append((day, value))
    for i, (key, label, unit) in described.items():
        if key in data.metrics:
            known = data.columns.get(key)
            data.columns[key] = MetricColumn(key=key, label=label, unit=unit, header=header[i].strip(), file=file,
                                             decimals=max(decimals[i], known.decimals if known else 0))


def _as_datetime(value: Any, tz: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=tz)
    raise ValueError(f"not a date: {value!r}")


def _load_ics(name: str, text: str, data: DataSet, tz: Any) -> None:
    import icalendar

    try:
        calendar = icalendar.Calendar.from_ical(text)
    except Exception as exc:  # the library raises ValueError and friends; any means unparseable
        data.skipped.append(SkippedInput(file=name, reason=f"not a readable iCalendar file ({type(exc).__name__}: {str(exc)[:80]})"))
        return
    found = 0
    for component in calendar.walk("VEVENT"):
        title = str(component.get("SUMMARY", "(no title)")).strip() or "(no title)"
        field = "DTSTART"
        try:
            if component.get("DTSTART") is None:
                raise ValueError("no DTSTART")
            start = _as_datetime(component.decoded("DTSTART"), tz)
            field = "DTEND"
            if component.get("DTEND") is not None:
                end = _as_datetime(component.decoded("DTEND"), tz)
            elif component.get("DURATION") is not None:
                field = "DURATION"
                end = start + component.decoded("DURATION")
            else:
                end = start + timedelta(hours=1)
        except Exception as exc:
            what = "start" if field == "DTSTART" else "end"
            data.skipped.append(SkippedInput(file=name, reason=f"event {title[:40]!r} has no usable {what} "
                                                               f"({field}: {str(exc)[:60]})"))
            continue
        data.events.append(CalendarEvent(title=title[:100], start=start, end=max(end, start), file=name))
        found += 1
    if not found and not any(s.file == name for s in data.skipped):
        data.skipped.append(SkippedInput(file=name, reason="no events in the calendar"))


TIME_FIELDS = ("time", "timestamp", "datetime", "date", "sent_at", "created_at", "ts")
"""Where a message export keeps its time, in the order looked for (the names chat and mail exports use)."""
TEXT_FIELDS = ("text", "body", "message", "content")
SENDER_FIELDS = ("from", "sender", "author", "user")


def _first(item: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    return next(((n, item[n]) for n in names if item.get(n) not in (None, "")), None)


EPOCH_MS = 1e11
"""A count since 1970 this large is milliseconds (JavaScript's ``Date.now()``): in seconds it would
be the year 5138."""


def _message_time(value: Any, tz: Any) -> datetime:
    """An ISO 8601 string, or seconds or milliseconds since 1970 (a number, or a string of one, as
    chat exports write)."""
    if isinstance(value, bool):
        raise ValueError("not a time")
    if isinstance(value, (int, float)) or isinstance(value, str) and re.fullmatch(r"\d{9,14}(\.\d+)?", value.strip()):
        seconds = float(value) / (1000 if float(value) >= EPOCH_MS else 1)
        # in the folder's time zone, or the machine's local time as the other naive times are read
        return datetime.fromtimestamp(seconds, tz=tz) if tz is not None else datetime.fromtimestamp(seconds)
    if isinstance(value, str):
        return _as_datetime(datetime.fromisoformat(value.strip().replace("Z", "+00:00")), tz)
    raise ValueError("not a time")


def _load_jsonl(name: str, text: str, data: DataSet, tz: Any) -> None:
    # lines end at "\n" only: str.splitlines would also cut at U+2028 and the other separators
    # that JSON allows unescaped inside a string (chat exports hold them), breaking that message in two
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            data.skipped.append(SkippedInput(file=name, line=number, reason="not JSON"))
            continue
        stamp = _first(item, TIME_FIELDS) if isinstance(item, dict) else None
        body = _first(item, TEXT_FIELDS) if stamp is not None else None
        if body is None or not isinstance(body[1], str):
            data.skipped.append(SkippedInput(file=name, line=number,
                                             reason='needs a time ("time" or "timestamp", ISO 8601) and a "text" string'))
            continue
        try:
            when = _message_time(stamp[1], tz)
        except (ValueError, OverflowError, OSError):
            data.skipped.append(SkippedInput(file=name, line=number, reason=f"{stamp[0]} {str(stamp[1])[:40]!r} is not ISO 8601 "
                                                                                       "nor seconds or milliseconds since 1970"))
            continue
        sender = _first(item, SENDER_FIELDS)
        data.messages.append(Message(time=when, source=str(item.get("source", "")) or Path(name).stem,
                                     sender=str(sender[1]) if sender else "", text=" ".join(body[1].split())[:300]))


