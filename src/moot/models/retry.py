"""Retrying failed model requests, without turning a rate limit into a retry storm.

Only errors marked ``retryable`` (429, 5xx, timeouts, connection failures, garbled output)
are retried. Delays follow full-jitter exponential backoff (a random delay between 0 and the
exponential step) so that many agents that failed together do not retry together; a
``Retry-After`` from the provider is a floor, never undercut. Each delay is capped, and so is
the total time spent waiting; when a required wait would break a cap we give up instead of
retrying early.

Every attempt after the first is held against the caller's budget before it is sent (see
:mod:`moot.models.attempts`): a retry storm can cost time, never money beyond the budget.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from moot.errors import ModelError
from moot.models.attempts import current_gate
from moot.models.base import ModelRequest, ModelResponse, StreamEvent, Usage, WrapperModel

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    max_attempts: int = 5
    """Attempts in total, the first one included."""
    initial_delay_s: float = 1.0
    """The backoff step before the first retry; it doubles after each failure."""
    max_delay_s: float = 60.0
    """No single wait is longer than this (a longer Retry-After makes us give up)."""
    max_total_wait_s: float = 180.0
    """The waits of one request add up to at most this."""

    def backoff(self, failures: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(cap, initial * 2**(failures-1))]."""
        step = min(self.max_delay_s, self.initial_delay_s * (2 ** (failures - 1)))
        return rng.uniform(0.0, step)


def _gave_up(error: ModelError, attempts: int, why: str = "") -> ModelError:
    """The last error, its message extended with how many attempts were made."""
    suffix = f" (gave up after {attempts} attempt{'s' if attempts != 1 else ''}{why})"
    if not error.message.endswith(suffix):
        error.message = f"{error.message}{suffix}"
        error.args = (error.message,)
    return error


@dataclass
class RetryModel(WrapperModel):
    """Retries retryable errors of the wrapped model with jittered, Retry-After-aware backoff."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep
    """Injectable so tests can observe delays instead of waiting for them."""
    rng: random.Random = field(default_factory=random.Random)

    def _delay(self, error: ModelError, failures: int, waited: float) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` to give up."""
        if not error.retryable or failures >= self.policy.max_attempts:
            return None
        delay = self.policy.backoff(failures, self.rng)
        retry_after = getattr(error, "retry_after", None)
        if retry_after is not None:
            if retry_after > self.policy.max_delay_s:
                return None
            delay = max(delay, retry_after)
        if waited + delay > self.policy.max_total_wait_s:
            return None
        return delay

    def _give_up_reason(self, error: ModelError, failures: int) -> str:
        retry_after = getattr(error, "retry_after", None)
        if error.retryable and failures < self.policy.max_attempts:
            if retry_after is not None and retry_after > self.policy.max_delay_s:
                return f"; the provider asked to wait {retry_after:.0f}s"
            return "; retry time budget spent"
        return ""

    async def request(self, request: ModelRequest) -> ModelResponse:
        failures = 0
        waited = 0.0
        lost = Usage()  # what failed attempts cost, where the provider told us
        gate = current_gate()
        while True:
            try:
                response = await self.wrapped.request(request)
            except ModelError as error:
                failures += 1
                if gate is not None:
                    gate.failed(error)  # charged while error.usage is still this attempt's own
                if error.usage is not None:
                    lost = lost + error.usage
                if lost.requests:  # the last error carries what every failed attempt billed
                    error.usage = lost
                delay = self._delay_or_raise(error, failures, waited)
                waited += delay
                await self.sleep(delay)
                if gate is not None:
                    request = await gate.next(request, None)  # held before it is sent, or the budget stops it
                continue
            if lost.requests:
                response = response.model_copy(update={"usage": response.usage + lost})
            return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failures = 0
        waited = 0.0
        gate = current_gate()
        while True:
            yielded = False
            try:
                async for event in self.wrapped.stream(request):
                    yielded = True
                    yield event
                return
            except ModelError as error:
                # Once the caller has seen text, a retry would show it twice: fail instead.
                if yielded:
                    raise
                failures += 1
                if gate is not None:
                    gate.failed(error)
                delay = self._delay_or_raise(error, failures, waited)
                waited += delay
                await self.sleep(delay)
                if gate is not None:
                    request = await gate.next(request, None)

    def _delay_or_raise(self, error: ModelError, failures: int, waited: float) -> float:
        """How long to wait before the next attempt, or raise when no retry is left or allowed."""
        delay = self._delay(error, failures, waited)
        if delay is None:
            if failures > 1 or error.retryable:
                raise _gave_up(error, failures, self._give_up_reason(error, failures)) from error
            raise error
        return delay

    def describe(self) -> dict[str, Any]:
        return {**self.wrapped.describe(), "max_attempts": self.policy.max_attempts}
