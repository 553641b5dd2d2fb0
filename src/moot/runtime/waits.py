"""Where a recorded run's time went, from its events: each model request's wait, prompt and
generation, and how much of the run's wall time it spent only waiting.

Each ``model_response`` event carries its request's ``latency_s`` split into ``queue_s``,
``prompt_s`` and ``generation_s`` (see :mod:`moot.models.timing`). A run of four parallel
agents can wait 40 s in all within 10 s of wall time, so the run's summary also says how many
seconds of wall time passed with requests waiting and none being computed: the time the run
lost to a busy engine or a concurrency limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from moot.runtime.events import Event, EventType


@dataclass(frozen=True)
class CallTiming:
    """One model request of a run, as recorded."""

    task_id: str | None
    agent: str | None
    finished: float
    latency_s: float
    queue_s: float | None
    """``None`` for runs recorded before requests were timed."""
    prompt_s: float | None
    generation_s: float | None

    @property
    def started(self) -> float:
        return self.finished - self.latency_s


@dataclass(frozen=True)
class WaitSummary:
    """A run's model time, added up."""

    calls: int
    timed_calls: int
    """Of ``calls``, those that recorded the split (older runs did not)."""
    model_s: float
    """The requests' latencies, summed (parallel requests count each)."""
    queue_s: float
    prompt_s: float
    generation_s: float
    wall_s: float
    waiting_wall_s: float
    """Wall time with at least one request waiting and none being computed."""

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}

    def sentence(self) -> str:
        """One line for ``moot runs show`` and the page."""
        if not self.timed_calls:
            return "no model request of this run recorded where its time went"
        share = self.waiting_wall_s / self.wall_s * 100 if self.wall_s > 0 else 0.0
        return (f"{_secs(self.waiting_wall_s)} of {_secs(self.wall_s)} wall time ({share:.0f} %) only waited for the model; "
                f"{self.timed_calls} requests took {_secs(self.model_s)}: {_secs(self.queue_s)} waiting, "
                f"{_secs(self.prompt_s)} prompt, {_secs(self.generation_s)} generation")


def _secs(value: float) -> str:
    if value < 1:
        return f"{value * 1000:.0f} ms"
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def call_timings(events: Iterable[Event]) -> list[CallTiming]:
    """Every model request of the events, in order."""
    calls = []
    for e in events:
        if e.type is not EventType.MODEL_RESPONSE:
            continue
        p = e.payload
        latency = _float(p.get("latency_s")) or 0.0
        calls.append(CallTiming(task_id=e.task_id, agent=e.agent, finished=e.ts, latency_s=latency,
                                queue_s=_float(p.get("queue_s")), prompt_s=_float(p.get("prompt_s")),
                                generation_s=_float(p.get("generation_s"))))
    return calls


def waiting_wall_time(calls: Iterable[CallTiming]) -> float:
    """Seconds during which some request waited and none was computed (a request is taken to
    wait first, then compute: llama.cpp evaluates a prompt as soon as it has a slot)."""
    edges: list[tuple[float, int, int]] = []  # (time, Δwaiting, Δcomputing)
    for c in calls:
        if c.queue_s is None or c.latency_s <= 0:
            continue
        turn = c.started + min(c.queue_s, c.latency_s)
        edges += [(c.started, 1, 0), (turn, -1, 1), (c.finished, 0, -1)]
    edges.sort()
    waiting = computing = 0
    total, last = 0.0, None
    for t, dw, dc in edges:
        if last is not None and waiting > 0 and computing == 0:
            total += t - last
        waiting += dw
        computing += dc
        last = t
    return total


def wait_summary(events: list[Event], *, started: float, finished: float | None) -> WaitSummary:
    """The run's model time from its events; ``finished`` ``None`` for a run still going."""
    calls = call_timings(events)
    timed = [c for c in calls if c.queue_s is not None]
    end = finished if finished is not None else max([e.ts for e in events] + [started])
    return WaitSummary(
        calls=len(calls), timed_calls=len(timed), model_s=sum(c.latency_s for c in timed),
        queue_s=sum(c.queue_s or 0.0 for c in timed), prompt_s=sum(c.prompt_s or 0.0 for c in timed),
        generation_s=sum(c.generation_s or 0.0 for c in timed), wall_s=max(0.0, end - started),
        waiting_wall_s=waiting_wall_time(timed),
    )


__all__ = ["CallTiming", "WaitSummary", "call_timings", "wait_summary", "waiting_wall_time"]
