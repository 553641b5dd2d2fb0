"""Where a model request's time went: waiting, prompt evaluation, generation.

A request that takes 2 minutes for 170 tokens mostly waited: for a slot of the process-wide
concurrency limit, or for one of the shared engine's slots while other clients decode. The
runtime puts a :class:`RequestClock` in a context variable around each model call
(:func:`timed_by`); the layers under it report what they know:

- :class:`moot.models.concurrency.ConcurrencyLimitedModel` reports how long it waited for a slot;
- the embedded model reports the engine's own prompt-evaluation and generation times (llama.cpp's
  ``timings`` on the last chunk of a stream), summed over every attempt a wrapper sent.

:meth:`RequestClock.split` turns the request's measured latency into three parts that add up
to it. Nothing here knows about runs or budgets.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass
class RequestTiming:
    """One request's latency in three parts; ``queue_s + (prompt_s or 0) + generation_s`` is the
    latency (to rounding)."""

    queue_s: float
    """Waiting: for a concurrency slot, for an engine slot, for the engine to start or answer."""
    prompt_s: float | None
    """Evaluating the prompt; ``None`` when the provider does not report it (then it is in
    ``generation_s``)."""
    generation_s: float
    """Generating the answer (with the prompt's evaluation when ``prompt_s`` is ``None``)."""
    reported: bool
    """True when the engine reported prompt and generation times; False when they are the
    latency less the measured waits."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "queue_s": round(self.queue_s, 4),
            "prompt_s": None if self.prompt_s is None else round(self.prompt_s, 4),
            "generation_s": round(self.generation_s, 4),
            "timing_reported": self.reported,
        }


@dataclass
class RequestClock:
    """What the layers under one model call measured, added up over its attempts."""

    waited_s: float = 0.0
    prompt_s: float = 0.0
    generation_s: float = 0.0
    engine_reports: int = 0

    def waited(self, seconds: float) -> None:
        self.waited_s += max(0.0, seconds)

    def engine(self, prompt_s: float, generation_s: float) -> None:
        self.prompt_s += max(0.0, prompt_s)
        self.generation_s += max(0.0, generation_s)
        self.engine_reports += 1

    def split(self, latency_s: float) -> RequestTiming:
        """``latency_s`` as waiting + prompt + generation.

        With the engine's own times, everything else in the latency was waiting (a slot, the
        socket, other clients' decoding). Without them, the measured waits are waiting and the
        rest is the provider's time, reported as generation."""
        latency_s = max(0.0, latency_s)
        if self.engine_reports:
            busy = min(latency_s, self.prompt_s + self.generation_s)
            prompt = min(self.prompt_s, busy)
            return RequestTiming(queue_s=latency_s - busy, prompt_s=prompt, generation_s=busy - prompt, reported=True)
        queue = min(self.waited_s, latency_s)
        return RequestTiming(queue_s=queue, prompt_s=None, generation_s=latency_s - queue, reported=False)


_clock: ContextVar[RequestClock | None] = ContextVar("moot_request_clock", default=None)


def current_clock() -> RequestClock | None:
    """The clock of the model call in progress in this task, or ``None``."""
    return _clock.get()


@contextmanager
def timed_by(clock: RequestClock | None) -> Iterator[None]:
    """Make ``clock`` the one every layer under this call reports its times to."""
    token = _clock.set(clock)
    try:
        yield
    finally:
        _clock.reset(token)


def engine_times(chunk: dict[str, Any]) -> tuple[float, float] | None:
    """``(prompt_s, generation_s)`` from a llama.cpp chunk's ``timings``, or ``None``."""
    raw = chunk.get("timings")
    if not isinstance(raw, dict):
        return None
    try:
        return float(raw.get("prompt_ms") or 0.0) / 1000, float(raw.get("predicted_ms") or 0.0) / 1000
    except (TypeError, ValueError):
        return None


__all__ = ["RequestClock", "RequestTiming", "current_clock", "engine_times", "timed_by"]
