"""Every attempt a wrapper sends is counted: the seam between wrappers and budgets.

A budget (in ``moot.runtime``) holds room for a request before the agent sends it. But the
agent sends *one* request, and the wrappers under it may send several: :class:`RetryModel`
repeats a failed or malformed answer, :class:`FallbackModel` asks the next model. Each of
those attempts is billed by the provider, so each must be held and charged like the first.

The runtime puts an :class:`AttemptGate` in a context variable around each model call
(:func:`attempts_counted_by`); a wrapper that is about to send another attempt asks it first:

- :meth:`AttemptGate.failed` when an attempt failed: its cost (the error's usage, or a
  conservative charge when the provider said nothing) is booked and its hold released;
- :meth:`AttemptGate.next` before the next attempt is sent: room is held for it (which may
  wait for other requests to settle, lower its ``max_tokens``, or raise the budget's error,
  which is not a :class:`moot.errors.ModelError`, so no wrapper retries it).

Without a gate (a direct call, no budget) the wrappers behave as before. Nothing here knows
what a budget is; the models layer only knows that someone may be counting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from moot.errors import ModelError
    from moot.models.base import Model, ModelRequest


class AttemptGate(Protocol):
    """What a wrapper tells whoever counts attempts (the runtime's budget)."""

    def failed(self, error: ModelError) -> None:
        """The attempt in flight failed with ``error`` (whose ``usage`` is that attempt's own, when
        known). Called at most once per attempt; a second call for the same attempt is ignored."""

    async def next(self, request: ModelRequest, model: Model | None) -> ModelRequest:
        """Hold room for one more attempt of ``request`` to ``model`` (``None``: the model of the
        attempt that failed, as for a retry); returns the request to send (``max_tokens`` may be
        lowered to what the budget allows)."""


_gate: ContextVar[AttemptGate | None] = ContextVar("moot_attempt_gate", default=None)


def current_gate() -> AttemptGate | None:
    """The gate of the model call in progress in this task, or ``None``."""
    return _gate.get()


@contextmanager
def attempts_counted_by(gate: AttemptGate | None) -> Iterator[None]:
    """Make ``gate`` the one every wrapper under this call reports its attempts to."""
    token = _gate.set(gate)
    try:
        yield
    finally:
        _gate.reset(token)


__all__ = ["AttemptGate", "attempts_counted_by", "current_gate"]
