"""The task board benchmark: seeded goals over generated notes, each with gold figures.

``make_goals(n, seed)`` writes, per goal, a small folder of dated notes about invented places
(a ropeworks, a seed bank, a tram shed …), each note giving two or three counts in one of
several sentence shapes, a date, a person and filler. The goals, round-robin:

- ``summary``: summarise one note — gold: the note's counts;
- ``pair``: summarise two notes — gold: the counts of both;
- ``change``: two dated notes of one place — how did a count change? gold: both values and
  the size of the change;
- ``contrast``: one count at two places — gold: both values;
- ``missing``: a goal naming a note that is not in the folder — right when the answer (or the
  reason the goal stopped) names the missing note and gives no figure the notes do not hold.

Reported per system: goals right (every gold figure in the final text), figure recall, goals
unfinished (a goal with all its notes that ended without an answer), answers that only restate
the goal (no figure, nearly every word the goal's), calls, tokens and seconds; for the board also
goals never claimed and the slowest claim after submit.

Every folder also holds one note about another place that no goal asks about. ``score`` checks
a system's final text against the gold figures (numbers by value, whatever their spelling).

This module is written apart from the board team on purpose: it imports nothing from it, its
wording is its own, and its scorer reads numbers with its own pattern, so a team check cannot
be tuned to the generator by sharing either. :class:`OneCallBaseline` is what a user would try
first: one call with every file of the folder in the prompt.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from moot.models.base import ModelRequest, ModelResponse, ModelSettings, Usage, WrapperModel

KINDS = ("summary", "pair", "change", "contrast", "missing")

_SOUNDS = ("bar", "vel", "ost", "mir", "kan", "dru", "sel", "tor", "wen", "lo", "pem", "gra", "fen", "ul", "cas", "rin",
           "hob", "ta", "nes", "vik")
_GIVEN = ("Aldo", "Brin", "Cora", "Dagny", "Elio", "Fenna", "Gus", "Halla", "Ivo", "Juno", "Kersti", "Lior", "Maren",
          "Nils", "Oda", "Pim", "Quill", "Rena", "Sten", "Tove")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")

# place kind, and its counts: (plural noun, low, high); never under 40, so a figure is not a day or a list number
_PLACES: tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...] = (
    ("ropeworks", (("coils of rope", 300, 2400), ("orders shipped", 40, 400), ("spinner shifts", 60, 300))),
    ("seed bank", (("seed samples stored", 1200, 18000), ("requests from farms", 40, 300), ("freezer checks", 60, 240))),
    ("tram shed", (("tram repairs", 40, 260), ("wheel sets replaced", 45, 140), ("night shifts", 50, 180))),
    ("lending library", (("books lent", 900, 9000), ("new members", 40, 400), ("reading hours", 100, 1500))),
    ("apiary", (("jars of honey", 150, 3000), ("hives inspected", 40, 200), ("queen cells marked", 40, 160))),
    ("salt pans", (("tonnes of salt", 40, 900), ("rake passes", 60, 280), ("sacks delivered", 300, 6000))),
    ("glass studio", (("vases blown", 50, 700), ("workshop guests", 40, 500), ("kiln firings", 45, 220))),
    ("weather station", (("readings logged", 2000, 40000), ("rain gauge checks", 40, 120), ("balloon launches", 50, 190))),
)

_SHAPES = (
    "{Place} recorded {n} {what} in {month}.",
    "In {month}, {n} {what} were counted at {Place}.",
    "The tally of {what} for {month} stood at {n}.",
    "{Place} logged {n} {what} over {month}.",
    "By the end of {month} the count of {what} was {n}.",
)
_FILLER = (
    "The roof was mended after a windy week.",
    "Visitors asked again about the opening hours.",
    "A new kettle was bought for the back room.",
    "The path to the gate is muddy after rain.",
    "Two volunteers joined for the spring.",
)
_TEMPLATES: dict[str, tuple[str, ...]] = {
    "summary": ("Summarise {a}.", "What does {a} report? Give its figures.", "Read {a} and sum it up with its numbers."),
    "pair": ("Summarise {a} and {b}.", "Sum up {a}, then sum up {b}.", "Give the main figures of {a} and of {b}."),
    "change": ("Summarise {a}, summarise {b}, then say how the {what} changed between the two notes.",
               "How did the {what} at {Place} change from {a} to {b}?",
               "Read {a} and {b} and report by how much the {what} went up or down."),
    "contrast": ("Compare the {what} of {Place} ({a}) and {Other} ({b}).",
                 "Which recorded more {what}, {Place} or {Other}? Use {a} and {b}.",
                 "Set the {what} in {a} beside those in {b}."),
    "missing": ("Summarise {a} and {m}, then compare their {what}.",
                "How did the {what} change from {m} to {a}?",
                "Give the figures of {m} and {a}."),
}


@dataclass
class BoardGoal:
    """One seeded goal: the files of its folder, the goal's text, and what a right answer holds."""

    id: str
    kind: str
    goal: str
    files: dict[str, str]
    """File name (under the board's ``context/``) → text."""
    gold: list[str]
    """Figures a right answer gives (as written in the notes, or the computed change)."""
    missing: str | None = None
    """The note a ``missing`` goal names that is not there."""


def _word(rng: random.Random, used: set[str]) -> str:
    while True:
        word = "".join(rng.choice(_SOUNDS) for _ in range(2))
        if len(word) >= 4 and word not in used:
            used.add(word)
            return word.capitalize()


def _written(n: int) -> str:
    return f"{n:,}" if n >= 1000 else str(n)


def _note(rng: random.Random, place: str, person: str, year: int, month: int, counts: dict[str, int]) -> str:
    day = rng.randint(1, 28)
    head = rng.choice([f"# {place}, note of {day} {_MONTH_NAMES[month - 1]} {year}", f"# {place} — {year}-{month:02d}-{day:02d}"])
    month_name = _MONTH_NAMES[month - 1]
    lines = [rng.choice(_SHAPES).format(Place=place, n=_written(n), what=what, month=month_name)
             for what, n in counts.items()]
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(_FILLER))
    lines.append(f"Written by {person}.")
    sentences = " ".join(s[0].upper() + s[1:] for s in lines)
    return f"{head}\n\n{sentences}\n"


def _place(rng: random.Random, used: set[str]) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    kind, measures = rng.choice(_PLACES)
    return f"{_word(rng, used)} {kind}", measures


def _counts(rng: random.Random, measures: tuple[tuple[str, int, int], ...]) -> dict[str, int]:
    chosen = rng.sample(list(measures), rng.choice((2, 3)))
    return {what: rng.randint(low, high) for what, low, high in chosen}


def _file(rng: random.Random, place: str, year: int, month: int) -> str:
    slug = place.split()[0].lower()
    return rng.choice([f"{slug}-{year}-{month:02d}.md", f"{slug}-note-{month:02d}.md", f"{slug}-{_MONTH_NAMES[month - 1].lower()}.txt"])


def make_goal(index: int, seed: int) -> BoardGoal:
    """The ``index``-th goal of ``seed`` (its kind is ``KINDS[index % 5]``)."""
    rng = random.Random(seed * 1000 + index)
    kind = KINDS[index % len(KINDS)]
    used: set[str] = set()
    year = rng.randint(2028, 2036)
    month = rng.randint(1, 10)
    place, measures = _place(rng, used)
    person = rng.choice(_GIVEN)
    files: dict[str, str] = {}
    first = _counts(rng, measures)
    a = _file(rng, place, year, month)
    files[a] = _note(rng, place, person, year, month, first)
    what = next(iter(first))
    gold: list[str] = []
    missing = None
    fill: dict[str, str] = {"a": a, "what": what, "Place": place}
    if kind == "summary":
        gold = [_written(n) for n in first.values()]
    elif kind == "pair":
        other, other_measures = _place(rng, used)
        second = _counts(rng, other_measures)
        b = _file(rng, other, year, month)
        files[b] = _note(rng, other, rng.choice(_GIVEN), year, month, second)
        fill["b"] = b
        gold = [_written(n) for n in [*first.values(), *second.values()]]
    elif kind == "change":
        later = {k: v + rng.choice((-1, 1)) * rng.randint(max(10, v // 10), max(11, v // 3)) for k, v in first.items()}
        later_month = month + rng.randint(1, 2)
        b = _file(rng, place, year, later_month)
        files[b] = _note(rng, place, person, year, later_month, later)
        fill["b"] = b
        gold = [_written(first[what]), _written(later[what]), _written(abs(later[what] - first[what]))]
    elif kind == "contrast":
        other = f"{_word(rng, used)} {place.split(' ', 1)[1]}"
        second = {k: v + rng.choice((-1, 1)) * rng.randint(max(10, v // 10), max(11, v // 2)) for k, v in first.items()}
        b = _file(rng, other, year, month)
        files[b] = _note(rng, other, rng.choice(_GIVEN), year, month, second)
        fill.update(b=b, Other=other)
        gold = [_written(first[what]), _written(second[what])]
    else:  # missing
        m = _file(rng, place, year, month + rng.randint(1, 2))
        fill["m"] = m
        missing = m
    stranger, stranger_measures = _place(rng, used)
    stranger_month = rng.randint(1, 12)
    files[_file(rng, stranger, year, stranger_month)] = _note(rng, stranger, rng.choice(_GIVEN), year, stranger_month,
                                                              _counts(rng, stranger_measures))
    goal = rng.choice(_TEMPLATES[kind]).format(**fill)
    return BoardGoal(id=f"{kind}-{seed}-{index}", kind=kind, goal=goal, files=files, gold=gold, missing=missing)


def make_goals(n: int, seed: int = 1) -> list[BoardGoal]:
    """``n`` goals, the kinds round-robin (24 gives each kind at least four)."""
    return [make_goal(i, seed) for i in range(n)]


def write_files(goal: BoardGoal, folder: Path) -> Path:
    """The goal's notes under ``folder/context/``; returns ``folder``."""
    context = folder / "context"
    context.mkdir(parents=True, exist_ok=True)
    for name, text in goal.files.items():
        (context / name).write_text(text, encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- scoring

_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NOT_FIGURES = re.compile(r"[\w-]+\.(?:md|txt)\b|\b\d{4}-\d{2}(?:-\d{2})?\b")
"""Note names and ISO dates: their digits are no figures."""


def _values(text: str) -> set[float]:
    out = set()
    for token in _DIGITS.findall(_NOT_FIGURES.sub(" ", text or "")):
        cleaned = token.rstrip(",").replace(",", "")
        try:
            out.add(float(cleaned))
        except ValueError:
            continue
    return out


@dataclass
class Prediction:
    """Any system's outcome on one goal."""

    text: str | None
    """The final answer (or, for a goal that stopped, the reason it stopped)."""
    finished: bool
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    note: str = ""
    claim_s: float | None = None
    """For the board: seconds from the goal's submit to its claim (``None``: never claimed)."""


def _restated(goal: BoardGoal, text: str) -> bool:
    """An answer with no figure whose words nearly all come from the goal: it says nothing new."""
    words = [w[:5] for w in re.findall(r"[a-z]+", text.lower())]
    if not words or _values(text):
        return not words
    said = {w[:5] for w in re.findall(r"[a-z]+", goal.goal.lower())}
    return sum(w in said for w in words) >= 0.7 * len(words)


def score(goal: BoardGoal, pred: Prediction) -> dict[str, Any]:
    """Gold figures found, whether all were, and the cost, for one goal."""
    text = pred.text or ""
    found = _values(text)
    if goal.missing is not None:
        allowed = _values(" ".join(goal.files.values())) | _values(goal.goal)
        invented = sorted(v for v in found - allowed)
        names_it = goal.missing.lower() in text.lower()
        right = names_it and not invented
        hits, total = int(right), 1
    else:
        gold = [float(g.replace(",", "")) for g in goal.gold]
        hits, total = sum(1 for g in gold if g in found), len(gold)
        right = hits == total
        invented = []
    return {"goal": goal.id, "kind": goal.kind, "right": right, "figures": f"{hits}/{total}", "figure_recall": round(hits / total, 3),
            "unfinished": not pred.finished, "restated": pred.finished and _restated(goal, text),
            "claim_s": None if pred.claim_s is None else round(pred.claim_s, 2), "calls": pred.calls, "tokens": pred.usage.total_tokens,
            "seconds": round(pred.seconds, 2), "invented": invented, "answer": text[:600], "note": pred.note}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per system: goals right, mean figure recall, goals unfinished (missing-file goals apart), and the cost."""
    if not rows:
        return {}
    answerable = [r for r in rows if r["kind"] != "missing"]
    missing = [r for r in rows if r["kind"] == "missing"]
    return {
        "goals": len(rows),
        "right": sum(r["right"] for r in rows),
        "right_pct": round(100 * sum(r["right"] for r in rows) / len(rows), 1),
        "figure_recall": round(sum(r["figure_recall"] for r in answerable) / len(answerable), 3) if answerable else None,
        "unfinished": sum(r["unfinished"] for r in answerable),
        "missing_named": f"{sum(r['right'] for r in missing)}/{len(missing)}",
        "restated": sum(r["restated"] for r in rows),
        "by_kind": {k: f"{sum(r['right'] for r in rows if r['kind'] == k)}/{sum(1 for r in rows if r['kind'] == k)}"
                    for k in KINDS if any(r["kind"] == k for r in rows)},
        "calls": sum(r["calls"] for r in rows),
        "calls_per_goal": round(sum(r["calls"] for r in rows) / len(rows), 2),
        "tokens": sum(r["tokens"] for r in rows),
        "seconds": round(sum(r["seconds"] for r in rows), 1),
        "seconds_per_goal": round(sum(r["seconds"] for r in rows) / len(rows), 1),
        **_claims(rows),
    }


def _claims(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """For a system that claims goals (the board): how many never were, and the slowest claim."""
    timed = [r["claim_s"] for r in rows if r.get("claim_s") is not None]
    if not timed and all(r.get("claim_s") is None for r in rows if r["calls"]):
        return {}
    return {"unclaimed": sum(1 for r in rows if r.get("claim_s") is None), "slowest_claim_s": max(timed) if timed else None}


# --------------------------------------------------------------------------- systems


class GoalSystem(Protocol):
    name: str

    async def solve(self, goal: BoardGoal, folder: Path) -> Prediction: ...


@dataclass
class Metered(WrapperModel):
    """Counts what goes through a model: requests and tokens (every system is measured the same way)."""

    usage: Usage = field(default_factory=Usage)

    async def request(self, request: ModelRequest) -> ModelResponse:
        response = await self.wrapped.request(request)
        self.usage = self.usage + response.usage
        return response

    def since(self, before: Usage) -> Usage:
        return Usage(input_tokens=self.usage.input_tokens - before.input_tokens,
                     output_tokens=self.usage.output_tokens - before.output_tokens,
                     requests=self.usage.requests - before.requests)


BASELINE_PROMPT = ("You answer a task about the files below. Use only what the files say, give the figures "
                   "they state, and say so plainly when a file the task names is not among them.")


class OneCallBaseline:
    """One call, every file of the goal's folder in the prompt, a plain-text answer."""

    name = "one-call"

    def __init__(self, model: Metered) -> None:
        self.model = model

    async def solve(self, goal: BoardGoal, folder: Path) -> Prediction:
        from moot.runtime import SubAgent

        files = sorted((folder / "context").iterdir())
        shown = "\n\n".join(f"[context/{p.name}]\n{p.read_text(encoding='utf-8')}" for p in files if p.is_file())
        agent = SubAgent("one-call", "answers from the files", BASELINE_PROMPT, model=self.model, max_turns=1,
                         settings=ModelSettings(max_tokens=400, temperature=0.0))
        before = self.model.usage
        started = time.perf_counter()
        result = await agent.run(f"Files:\n{shown}\n\nTask: {goal.goal}")
        text = str(result.output or result.text or "").strip()
        used = self.model.since(before)
        return Prediction(text=text, finished=bool(text) and result.ok, calls=used.requests, usage=used,
                          seconds=time.perf_counter() - started, note=result.stop_reason)


__all__ = ["BoardGoal", "GoalSystem", "KINDS", "Metered", "OneCallBaseline", "Prediction", "make_goal", "make_goals",
           "score", "summarise", "write_files"]
