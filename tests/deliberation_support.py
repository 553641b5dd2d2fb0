"""Shared set-up for the deliberation team's tests: a function model that plays every agent,
routed by the output schema an agent asks for and the agent's name on the request (never by
prompt text), choosing from the enums the schema offers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest, ModelResponse
from moot.models.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[1]
SLEEP_VS_DEADLINE = ROOT / "examples" / "deliberation" / "sleep-vs-deadline"
RECOVERY_DAY = ROOT / "examples" / "deliberation" / "recovery-day"
REQUEST = "I have the Q4 report due at 9am tomorrow and feel wiped out. Should I keep working tonight?"
NOW = "2026-11-24T20:00"


def enum(schema: dict[str, Any], definition: str | None, prop: str) -> list[Any]:
    spec = (schema["$defs"][definition] if definition else schema)["properties"][prop]
    if "items" in spec:
        spec = spec["items"]
    if "anyOf" in spec:
        spec = next(s for s in spec["anyOf"] if "enum" in s or "const" in s)
    return list(spec.get("enum") or ([spec["const"]] if "const" in spec else []))


def choose(options: list[str], kind: str, word: str = "") -> str:
    """The first enum value that starts with ``kind`` and holds ``word`` (a "do" position on an option
    worded "do …" starts with the quoted label: ``'do the hill repeats' as planned``)."""
    found = [o for o in options if o.lstrip("'").startswith(kind) and word.lower() in o.lower()]
    assert found, f"no {kind!r} with {word!r} among {options}"
    return found[0]


def piece_of(pieces: list[str], label: str) -> str:
    """The piece of the request (the reader's enum) that holds ``label``, or ``label`` when no enum is offered
    or none holds it (a reply that breaks the schema, as a model's might)."""
    return next((p for p in pieces if label.lower() in p.lower()), label)


def ics(*events: tuple[str, str, str]) -> str:
    """An iCalendar file of ``(DTSTART, DTEND, SUMMARY)`` events."""
    body = "".join(f"BEGIN:VEVENT\nUID:{k}\nDTSTART:{a}\nDTEND:{b}\nSUMMARY:{title}\nEND:VEVENT\n"
                   for k, (a, b, title) in enumerate(events, 1))
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n{body}END:VCALENDAR\n"


READING = [("keep working tonight", "Finish Q4 report", "")]
"""The reader's answer on the sleep-vs-deadline request: one option, the report block tonight."""

POSITIONS: dict[str, tuple[str, str, str, int]] = {
    # specialist: (position kind, a word of its option, impact, confidence)
    "recovery": ("shorten", "keep working", "high", 80),
    "sleep": ("shorten", "keep working", "high", 85),
    "calendar": ("do", "keep working", "high", 75),
    "deep_content": ("do", "keep working", "medium", 70),
    "stress": ("do", "keep working", "low", 60),
    "activity": ("skip", "keep working", "low", 55),
    "cardio": ("shorten", "keep working", "medium", 65),
    "context": ("do", "keep working", "medium", 60),
}


class Deliberators:
    """Plays the reader, the specialists, the moderator, the validators, the voters and the polisher.

    ``reading``: (label, a word of its calendar event or "", a time value's start or "", optionally its
    kind) per option;
    ``positions``: specialist → (kind, option word, impact, confidence); ``compromise``: the
    moderator's slots (``compromise_type``, ``side``, ``option`` word, ``adjustment``, ``slot`` word,
    ``condition`` word); ``validate``: specialist → its round-4 vote (default +2); ``votes``: voter →
    vote on every position; ``bad``: schema names whose replies break the schema; ``unnamed``: the
    positions, in turn, of specialists whose name the request does not carry (over HTTP), one per
    specialist (known by the evidence ids its schema offers); ``physical``: a word of the option that
    is a sport (default: none of them); ``odds``: the plain "is it a sport?" question is answered with
    first-token odds that lean to yes for that option and to no for the others (else without odds,
    as a provider that gives none).
    """

    def __init__(self, *, reading: list[tuple[str, ...]] | None = None,
                 positions: dict[str, tuple[str, str, str, int]] | None = None, compromise: dict[str, str] | None = None,
                 validate: dict[str, int] | None = None, votes: dict[str, int] | None = None, bad: tuple[str, ...] = (),
                 window: str = "", polish: str = "", barrier: asyncio.Barrier | None = None,
                 slow: dict[str, float] | None = None, unnamed: list[tuple[str, str, str, int]] | None = None,
                 physical: str = "", odds: bool = False) -> None:
        self.reading = reading if reading is not None else READING
        self.positions = positions if positions is not None else POSITIONS
        self.compromise = compromise or {"compromise_type": "time_split", "side": "A", "option": "keep working"}
        self.validate, self.votes, self.bad = validate or {}, votes or {}, bad
        self.window, self.polish, self.barrier, self.slow = window, polish, barrier, slow or {}
        self.unnamed, self.answered = unnamed or [], 0
        self.physical, self.odds = physical, odds
        self.unnamed_by: dict[frozenset[str], tuple[str, str, str, int]] = {}
        self.calls: list[tuple[str, str]] = []
        """(schema, agent) per request, in order."""
        self.requests: list[ModelRequest] = []

    async def __call__(self, request: ModelRequest) -> Any:
        if request.agent == "rest_odds":  # asked plainly whether an option is rest: no option leans to yes
            self.calls.append(("plain", "rest_odds"))
            self.requests.append(request)
            return ModelResponse(text="no", top_logprobs={"yes": -1.3, "no": -0.3} if self.odds else None)
        if request.agent == "physical_odds":  # asked plainly, one token: the odds say which option is a sport
            self.calls.append(("plain", "physical_odds"))
            self.requests.append(request)
            question = request.messages[-1].content
            sport = bool(self.physical) and self.physical in question
            return ModelResponse(text="yes" if sport else "no",
                                 top_logprobs=({"yes": -0.2, "no": -1.7} if sport else {"yes": -1.1, "no": -0.4})
                                 if self.odds else None)
        assert request.output is not None, "every deliberation agent answers under a schema"
        kind, schema, agent = request.output.name, request.output.json_schema, request.agent or ""
        self.calls.append((kind, agent))
        self.requests.append(request)
        if agent in self.slow:
            await asyncio.sleep(self.slow[agent])
        if kind in self.bad:
            return '{"nothing": "useful"}'
        if kind == "OptionsInRequest":
            events, times = enum(schema, "RequestOption", "event"), enum(schema, "RequestOption", "time")
            windows, pieces = enum(schema, None, "window"), enum(schema, "RequestOption", "label")
            return {"options": [{"label": piece_of(pieces, label), "event": choose(events, "", ev) if ev else "none",
                                 "time": choose(times, t) if t else "not stated", **({"kind": kind[0]} if kind else {})}
                                for label, ev, t, *kind in self.reading],
                    "window": choose(windows, "", self.window) if self.window else "not stated"}
        if kind == "SpecialistPosition":
            if self.barrier is not None:
                await asyncio.wait_for(self.barrier.wait(), 5)
            if agent not in self.positions and self.unnamed:  # over HTTP the agent's name does not travel
                # a specialist is known by its evidence ids (its schema), so its two calls get one answer
                mine = frozenset(enum(schema, None, "evidence"))
                if mine not in self.unnamed_by:
                    self.unnamed_by[mine] = self.unnamed[self.answered % len(self.unnamed)]
                    self.answered += 1
                what, word, impact, confidence = self.unnamed_by[mine]
            else:
                what, word, impact, confidence = self.positions.get(agent, ("do", "", "low", 50))
            return {"position": choose(enum(schema, None, "position"), what, word),
                    "evidence": enum(schema, None, "evidence")[:2], "impact": impact, "confidence": confidence}
        if kind == "PhysicalOption":  # which option is a sport: the one whose label holds ``physical``, else none
            answers = enum(schema, None, "answer")
            if agent == "not_physical":  # which one is not: the first other option, when one is a sport
                return {"answer": next((a for a in answers[:-1] if self.physical and self.physical not in a), answers[-1])}
            return {"answer": next((a for a in answers if self.physical and self.physical in a), answers[-1])}
        if kind == "Compromise":
            c = self.compromise
            reply = {"compromise_type": c["compromise_type"] if c["compromise_type"] in enum(schema, None, "compromise_type")
                     else enum(schema, None, "compromise_type")[0],
                     "side": c.get("side", "A"), "option": choose(enum(schema, None, "option"), "", c.get("option", "")),
                     "adjustment": c.get("adjustment", "none")}
            if c.get("slot"):
                reply["slot"] = choose(enum(schema, None, "slot"), "", c["slot"])
            if c.get("condition"):
                reply["condition"] = choose(enum(schema, None, "condition"), "", c["condition"])
            return reply
        if kind == "CompromiseVote":
            vote = self.validate.get(agent, 2)
            return {"vote": vote, "reason": "protects my evidence" if vote > 0 else "gives up what my evidence shows"}
        if kind == "ConsensusBallot":
            ids = enum(schema, "Ballot", "insight")
            return {"votes": [{"insight": i, "vote": self.votes.get(agent, 1), "reasoning": "fits my data"} for i in ids]}
        if kind == "PolishedSentence":
            return {"sentence": self.polish}
        if kind == "OneCallDecision":  # the eval's baseline: one call with all the data
            return {"decision": enum(schema, None, "decision")[-1], "answer": "Split it: 41 % is low."}
        raise AssertionError(f"unexpected schema {kind}")


def model_for(script: Deliberators) -> FunctionModel:
    return FunctionModel(script)
