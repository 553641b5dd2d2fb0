"""Who deliberates: domain coordinators and their specialists, each declaring what data it reads.

The default roster is the design's three coordinators. A user can write their own in TOML::

    [[coordinator]]
    domain = "health"
    keywords = ["sleep", "tired", "workout"]

    [[coordinator.specialist]]
    name = "sleep"
    focus = "sleep duration and sleep debt"
    reads = ["metrics:sleep_hours"]
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from moot.errors import MootError
from moot.teams.deliberation.data import DataSet, check_kind


@dataclass(frozen=True)
class Specialist:
    name: str
    focus: str
    """What it looks at, in a few words (goes into its prompt)."""
    reads: tuple[str, ...]
    keywords: tuple[str, ...] = ()


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


def _s(name: str, focus: str, reads: list[str], keywords: list[str]) -> Specialist:
    return Specialist(name, focus, tuple(reads), tuple(keywords))


DEFAULT_ROSTER = Roster((
    Coordinator("health", (
        _s("recovery", "recovery score, heart-rate variability and resting heart rate",
           ["metrics:recovery_pct", "metrics:hrv_ms", "metrics:resting_hr"], ["recovery", "hrv", "rest", "tired"]),
        _s("sleep", "sleep duration and sleep debt", ["metrics:sleep_hours"], ["sleep", "bed", "tired", "night"]),
        _s("glucose", "blood glucose", ["metrics:glucose_mg_dl"], ["glucose", "sugar"]),
        _s("blood", "blood biomarkers", ["metrics:ldl_mg_dl", "metrics:hba1c_pct"], ["blood", "cholesterol", "ldl"]),
        _s("activity", "steps and exercise", ["metrics:steps", "metrics:active_minutes"], ["exercise", "workout", "run", "steps", "gym"]),
        _s("cardio", "cardiovascular fitness", ["metrics:vo2max", "metrics:resting_hr"], ["cardio", "heart", "fitness"]),
    ), ("health", "sleep", "tired", "rest", "exercise", "workout", "recovery", "energy", "body")),
    Coordinator("work", (
        _s("calendar", "meetings, deadlines and free time in the calendar", ["calendar"],
           ["meeting", "calendar", "deadline", "schedule", "tomorrow"]),
        _s("stress", "communication load and urgency in messages", ["messages"], ["stress", "email", "slack", "messages"]),
        _s("deep_content", "what messages and notes say about work that is due", ["notes", "messages"],
           ["deliverable", "report", "manager", "project"]),
    ), ("work", "deadline", "meeting", "manager", "project", "email", "slack", "report", "job")),
    Coordinator("lifestyle", (
        _s("nutrition", "food, caffeine and glucose", ["metrics:calories_kcal", "metrics:caffeine_mg", "metrics:glucose_mg_dl"],
           ["eat", "food", "coffee", "caffeine", "diet"]),
        _s("music", "listening habits", ["metrics:listening_minutes"], ["music", "spotify", "listen"]),
        _s("context", "personal context and preferences in notes", ["notes", "metrics:mood_1_5"], ["mood", "family", "weekend", "habit"]),
    ), ("lifestyle", "habit", "mood", "food", "music", "weekend", "family")),
))
"""The design's coordinators and specialists."""


def load_roster(path: str | Path) -> Roster:
    """Read a roster TOML file; one line naming the fix for anything wrong in it."""
    p = Path(path).expanduser()
    try:
        raw = tomllib.loads(p.read_text("utf-8"))
    except FileNotFoundError:
        raise MootError(f"roster file {str(p)!r} does not exist", fix="pass --roster FILE.toml (see docs/deliberation.md)") from None
    except tomllib.TOMLDecodeError as exc:
        raise MootError(f"roster file {p.name} is not valid TOML ({exc})", fix="fix the TOML syntax at that line") from None
    items = raw.get("coordinator")
    if not isinstance(items, list) or not items:
        raise MootError(f"roster file {p.name} has no [[coordinator]] tables", fix="add [[coordinator]] with domain and [[coordinator.specialist]] entries")
    coordinators: list[Coordinator] = []
    names: set[str] = set()
    for i, c in enumerate(items, 1):
        domain = str(c.get("domain", "")).strip()
        if not domain:
            raise MootError(f"coordinator #{i} in {p.name} has no domain", fix='add domain = "health" (or another name)')
        specialists = []
        for s in c.get("specialist", []) or []:
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
            specialists.append(Specialist(name, str(s.get("focus", name)), tuple(str(k) for k in reads),
                                          tuple(str(k).lower() for k in s.get("keywords", []))))
        if not specialists:
            raise MootError(f"coordinator {domain!r} in {p.name} has no specialists", fix="add [[coordinator.specialist]] entries under it")
        coordinators.append(Coordinator(domain, tuple(specialists), tuple(str(k).lower() for k in c.get("keywords", []))))
    return Roster(tuple(coordinators))


@dataclass
class Activation:
    """Which coordinators and specialists a request activates, and why the others are not."""

    active: list[tuple[Coordinator, list[Specialist]]] = field(default_factory=list)
    inactive: dict[str, str] = field(default_factory=dict)
    """Domain → the reason it is not activated."""
    no_data_reason: str = ""
    """Set when nothing can answer the request: the answer says this, no model is called."""


def _hits(words: set[str], keywords: tuple[str, ...]) -> int:
    return sum(1 for k in keywords if k in words or any(w.startswith(k) for w in words))


def activate(roster: Roster, data: DataSet, request: str, max_coordinators: int, slots: list[int] | None = None,
             per_coordinator: int = 3) -> Activation:
    """Coordinators with data, the most relevant to the request first (keyword hits, then data), up to the mode's number."""
    words = {w.strip(".,?!:;'\"()").lower() for w in request.split()}
    result = Activation()
    ranked: list[tuple[int, int, int, Coordinator, list[Specialist]]] = []
    asked_without_data: list[str] = []
    for order, c in enumerate(roster.coordinators):
        with_data = [s for s in c.specialists if any(data.has(k) for k in s.reads)]
        for s in c.specialists:
            if s not in with_data and _hits(words, s.keywords):
                asked_without_data.append(f"{s.name} (reads {', '.join(s.reads)})")
        if not with_data:
            kinds = sorted({k for s in c.specialists for k in s.reads})
            result.inactive[c.domain] = f"no data: its specialists read {', '.join(kinds)}"
            continue
        with_data.sort(key=lambda s: (-_hits(words, s.keywords), -sum(data.amount(k) for k in s.reads)))
        relevance = _hits(words, c.keywords) + sum(_hits(words, s.keywords) for s in with_data)
        ranked.append((relevance, sum(data.amount(k) for s in with_data for k in s.reads), -order, c, with_data))
    if not ranked:
        result.no_data_reason = "No coordinator has data for this request: " + "; ".join(
            f"{d}: {r}" for d, r in result.inactive.items())
        return result
    ranked.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
    if ranked[0][0] == 0 and asked_without_data:
        result.no_data_reason = ("No coordinator has data for this request: it asks about "
                                 + "; ".join(asked_without_data) + ", and the folder has none of that")
        return result
    for k, (_, _, _, c, specialists) in enumerate(ranked):
        if k >= max_coordinators:
            result.inactive[c.domain] = f"not needed in this mode (at most {max_coordinators} coordinator{'s' if max_coordinators > 1 else ''})"
            continue
        result.active.append((c, specialists[:per_coordinator]))
    return result


__all__ = ["DEFAULT_ROSTER", "Activation", "Coordinator", "Roster", "Specialist", "activate", "load_roster"]
