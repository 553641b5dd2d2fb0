"""Who deliberates: domain coordinators and their specialists, each declaring what data it reads.

The default roster is the design's three coordinators. A user can write their own in TOML::

    [[coordinator]]
    domain = "health"
    keywords = ["sleep", "tired", "workout"]

    [[coordinator.specialist]]
    name = "sleep"
    focus = "sleep duration and sleep debt"
    reads = ["metrics:sleep_hours"]
    readiness = ["sleep"]

``readiness`` names the metrics that are signs of the body's readiness for effort (``-resting``:
the lower, the readier). Their change against the week is computed by Python
(:func:`moot.teams.deliberation.evidence.readiness`) and narrows the positions the specialist may
take on a physical option.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from moot.errors import MootError
from moot.files import read_bytes
from moot.teams.deliberation.data import DataSet, check_kind

MAX_ROSTER_BYTES = 1024 * 1024
"""A roster is a few dozen lines; anything larger is not one."""


@dataclass(frozen=True)
class Specialist:
    name: str
    focus: str
    """What it looks at, in a few words (goes into its prompt)."""
    reads: tuple[str, ...]
    keywords: tuple[str, ...] = ()
    readiness: tuple[str, ...] = ()
    """Metric patterns that are signs of readiness for effort, ``-`` first when lower is readier."""


@dataclass(frozen=True)
class Coordinator:
    domain: str
    specialists: tuple[Specialist, ...]
    keywords: tuple[str, ...] = ()
    """Words in a request that make this coordinator relevant (routing is done in Python)."""


@dataclass(frozen=True)
class Roster:
    coordinators: tuple[Coordinator, ...]

    def specialist(self, name: str) -> Specialist:
        for c in self.coordinators:
            for s in c.specialists:
                if s.name == name:
                    return s
        raise KeyError(name)

    def domain_of(self, name: str) -> str:
        for c in self.coordinators:
            if any(s.name == name for s in c.specialists):
                return c.domain
        raise KeyError(name)


def _s(name: str, focus: str, reads: list[str], keywords: list[str], readiness: tuple[str, ...] = ()) -> Specialist:
    return Specialist(name, focus, tuple(reads), tuple(keywords), readiness)


DEFAULT_ROSTER = Roster((
    Coordinator("health", (
        _s("recovery", "recovery, readiness, heart-rate variability and resting heart rate",
           ["metrics:recovery", "metrics:readiness", "metrics:hrv", "metrics:heart rate variability", "metrics:resting",
            "metrics:strain", "metrics:*"], ["recovery", "hrv", "rest", "tired"],
           ("recovery", "readiness", "hrv", "heart rate variability", "-resting", "-strain")),
        _s("sleep", "sleep duration and sleep debt", ["metrics:sleep", "metrics:asleep", "metrics:bed"],
           ["sleep", "bed", "tired", "night"], ("sleep", "asleep")),
        _s("glucose", "blood glucose", ["metrics:glucose"], ["glucose", "sugar"]),
        _s("blood", "blood biomarkers", ["metrics:ldl", "metrics:hba1c", "metrics:cholesterol"], ["blood", "cholesterol", "ldl"]),
        _s("activity", "steps and exercise", ["metrics:steps", "metrics:active", "metrics:exercise", "metrics:workout"],
           ["exercise", "workout", "run", "steps", "gym"]),
        _s("cardio", "cardiovascular fitness", ["metrics:vo2", "metrics:vo2max", "metrics:resting heart rate"],
           ["cardio", "heart", "fitness"]),
    ), ("health", "sleep", "tired", "rest", "exercise", "workout", "recovery", "energy", "body")),
    Coordinator("work", (
        _s("calendar", "meetings, deadlines and free time in the calendar", ["calendar"],
           ["meeting", "calendar", "deadline", "schedule", "tomorrow"]),
        _s("stress", "communication load and urgency in messages", ["messages"], ["stress", "email", "slack", "messages"]),
        _s("deep_content", "what messages and notes say about work that is due", ["notes", "messages"],
           ["deliverable", "report", "manager", "project"]),
    ), ("work", "deadline", "meeting", "manager", "project", "email", "slack", "report", "job")),
    Coordinator("lifestyle", (
        _s("nutrition", "food, caffeine and glucose", ["metrics:calories", "metrics:caffeine", "metrics:glucose"],
           ["eat", "food", "coffee", "caffeine", "diet"]),
        _s("music", "listening habits", ["metrics:listening"], ["music", "spotify", "listen"]),
        _s("context", "personal context and preferences in notes", ["notes", "metrics:mood"], ["mood", "family", "weekend", "habit"]),
    ), ("lifestyle", "habit", "mood", "food", "music", "weekend", "family")),
))
"""The design's coordinators and specialists. A metric column goes to every specialist whose
``metrics:`` words its header holds (``metrics:resting`` reads ``Resting heart rate (bpm)`` and
``resting_hr``); ``metrics:*`` takes the columns nobody else reads."""


def load_roster(path: str | Path) -> Roster:
    """Read a roster TOML file; one line naming the fix for anything wrong in it."""
    p = Path(path).expanduser()
    if not p.exists():
        raise MootError(f"roster file {str(p)!r} does not exist", fix="pass --roster FILE.toml (see docs/deliberation.md)")
    if p.is_dir():
        raise MootError(f"roster file {str(p)!r} is a folder", fix="pass --roster FILE.toml, the TOML file itself (see docs/deliberation.md)")
    # the one safe reader: a regular file only (a folder or a FIFO is one line, not a traceback or a hang)
    data = read_bytes(p, max_bytes=MAX_ROSTER_BYTES, what="roster file")
    try:
        raw = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise MootError(f"roster file {p.name} is not UTF-8 text", fix="save it as UTF-8 (e.g. iconv -t utf-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise MootError(f"roster file {p.name} is not valid TOML ({exc})", fix="fix the TOML syntax at that line") from None
    items = raw.get("coordinator")
    if not isinstance(items, list) or not items or not all(isinstance(c, dict) for c in items):
        raise MootError(f"roster file {p.name} has no [[coordinator]] tables", fix="add [[coordinator]] with domain and [[coordinator.specialist]] entries")
    coordinators: list[Coordinator] = []
    names: set[str] = set()
    for i, c in enumerate(items, 1):
        domain = str(c.get("domain", "")).strip()
        if not domain:
            raise MootError(f"coordinator #{i} in {p.name} has no domain", fix='add domain = "health" (or another name)')
        listed = c.get("specialist", []) or []
        if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
            raise MootError(f"the specialists of {domain!r} in {p.name} are not [[coordinator.specialist]] tables",
                            fix='write each as [[coordinator.specialist]] with name = "…" and reads = [\"…\"] under its [[coordinator]]')
        _check_words(c.get("keywords", []), f"coordinator {domain!r} in {p.name}")
        specialists = []
        for s in listed:
            _check_words(s.get("keywords", []), f"specialist {str(s.get('name', '')).strip()!r} of {domain!r} in {p.name}")
            name = str(s.get("name", "")).strip()
            reads = s.get("reads")
            if not name or not isinstance(reads, list) or not reads:
                raise MootError(f"a specialist of {domain!r} in {p.name} lacks a name or reads",
                                fix='give each specialist name = "…" and reads = ["metrics:hrv_ms", …]')
            for kind in reads:
                try:
                    check_kind(str(kind))
                except MootError as exc:
                    raise MootError(f"specialist {name!r} in {p.name}: {exc.message}", fix=exc.fix) from None
            if name in names:
                raise MootError(f"specialist name {name!r} appears twice in {p.name}", fix="give every specialist its own name")
            names.add(name)
            signs = s.get("readiness", [])
            if not isinstance(signs, list) or not all(isinstance(x, str) and x.strip("+- ") for x in signs):
                raise MootError(f"specialist {name!r} in {p.name}: readiness must be a list of metric names",
                                fix='write readiness = ["hrv", "-resting"] (a leading - : lower is readier)')
            specialists.append(Specialist(name, str(s.get("focus", name)), tuple(str(k) for k in reads),
                                          tuple(str(k).lower() for k in s.get("keywords", [])),
                                          tuple(x.strip().lower() for x in signs)))
        if not specialists:
            raise MootError(f"coordinator {domain!r} in {p.name} has no specialists", fix="add [[coordinator.specialist]] entries under it")
        coordinators.append(Coordinator(domain, tuple(specialists), tuple(str(k).lower() for k in c.get("keywords", []))))
    return Roster(tuple(coordinators))


def _check_words(value: object, where: str) -> None:
    """``keywords`` must be a list of words (a bare string would be read letter by letter)."""
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        raise MootError(f"{where}: keywords must be a list of words", fix='write keywords = ["sleep", "tired"]')


@dataclass
class Activation:
    """Which coordinators and specialists run, and why the others do not."""

    active: list[tuple[Coordinator, list[Specialist]]] = field(default_factory=list)
    inactive: dict[str, str] = field(default_factory=dict)
    """Domain → the reason it is not activated."""
    no_data_reason: str = ""
    """Set when no specialist has data: the answer says this, no model is called."""
    claimed: set[str] = field(default_factory=set)
    """Metric columns some specialist names (``metrics:*`` reads the others)."""


def _hits(words: set[str], keywords: tuple[str, ...]) -> int:
    return sum(1 for k in keywords if k in words or any(w.startswith(k) for w in words))


def activate(roster: Roster, data: DataSet, request: str, max_coordinators: int, per_coordinator: int = 3) -> Activation:
    """Coordinators whose specialists have data, the most data first (the roster's keywords only
    break ties), up to the mode's number; inside one, specialists with the most data first."""
    from moot.teams.deliberation.evidence import claimed_columns

    words = {w.strip(".,?!:;'\"()").lower() for w in request.split()}
    result = Activation()
    result.claimed = set().union(*(claimed_columns(data, list(s.reads)) for c in roster.coordinators for s in c.specialists))
    ranked: list[tuple[int, int, int, Coordinator, list[Specialist]]] = []
    for order, c in enumerate(roster.coordinators):
        with_data = [s for s in c.specialists if any(data.has(k, result.claimed) for k in s.reads)]
        if not with_data:
            kinds = sorted({k for s in c.specialists for k in s.reads})
            result.inactive[c.domain] = f"no data: its specialists read {', '.join(kinds)}"
            continue
        with_data.sort(key=lambda s: -sum(data.amount(k, result.claimed) for k in s.reads))
        amount = sum(data.amount(k, result.claimed) for s in with_data for k in s.reads)
        ranked.append((amount, _hits(words, c.keywords), -order, c, with_data))
    if not ranked:
        result.no_data_reason = "No coordinator has data for this request: " + "; ".join(
            f"{d}: {r}" for d, r in result.inactive.items())
        return result
    ranked.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
    for k, (_, _, _, c, specialists) in enumerate(ranked):
        if k >= max_coordinators:
            result.inactive[c.domain] = f"not needed in this mode (at most {max_coordinators} coordinator{'s' if max_coordinators > 1 else ''})"
            continue
        result.active.append((c, specialists[:per_coordinator]))
    return result


__all__ = ["DEFAULT_ROSTER", "Activation", "Coordinator", "Roster", "Specialist", "activate", "load_roster"]
