"""One agent model call on a budget, with every attempt the wrappers under it send.

An agent sends one request; a :class:`~moot.models.retry.RetryModel` may send it five times, a
:class:`~moot.models.fallback.FallbackModel` to three models. :class:`MeteredCall` is the
:class:`~moot.models.attempts.AttemptGate` the agent puts around the call, so that each attempt
is held on the run's :class:`~moot.runtime.budget.BudgetTracker` *before* it is sent and
charged when it ends:

- the first attempt is held by :meth:`MeteredCall.start`, like every request always was;
- a failed attempt is charged what the provider said it cost (a malformed answer's usage, a
  retry wrapper's lost tokens), priced like the model's answers; when the provider said
  nothing, an HTTP error status counts as one call (providers do not bill those) and anything
  else (a timeout, a dropped connection, a garbled body) is charged everything held for it,
  since it may have been billed in full;
- the next attempt is held like a new request (priced as the model it goes to) and may wait
  for room, be cut to the ``max_tokens`` that still fits, or stop the call with
  :class:`~moot.runtime.budget.BudgetExceeded`;
- :meth:`MeteredCall.close` settles the last attempt with the rest of the call's usage.

So a retry storm or a chain of fallbacks stays inside the budget like any other request: the
total can pass a limit only by what one attempt's provider billed beyond what was held for it.
"""

from __future__ import annotations

from moot.errors import ModelError, ModelHTTPError, RequestBlockedError
from moot.models.base import Model, ModelRequest, Usage
from moot.models.pricing import Price, model_price
from moot.runtime.budget import BudgetTracker, Reservation


class MeteredCall:
    """The attempts of one agent model call, held and charged on one tracker."""

    def __init__(self, tracker: BudgetTracker, agent: str, model: Model, price: Price | None,
                 first: Reservation) -> None:
        self.tracker = tracker
        self.agent = agent
        self.model = model
        self.price = price
        self.reservation: Reservation | None = first
        """The hold of the attempt in flight (``None`` between a failure and the next hold)."""
        self.first = first
        self.attempts = 1
        self.charged = Usage()
        """Everything this call charged to the budget so far."""
        self._reported = Usage()
        """Of that, what the providers reported (the wrappers add it to the final usage too)."""

    @classmethod
    async def start(cls, tracker: BudgetTracker, agent: str, request: ModelRequest,
                    model: Model) -> tuple[MeteredCall, ModelRequest]:
        """Hold room for the first attempt (waiting while it fits only once others settle)."""
        price = model_price(model)
        reservation, request = await tracker.acquire(agent, request, price=price, model=getattr(model, "name", ""),
                                                     count=model.count_input_tokens)
        return cls(tracker, agent, model, price, reservation), request

    # ------------------------------------------------------------------ the gate

    def failed(self, error: ModelError) -> None:
        held = self.reservation
        if held is None:
            return  # already charged (a retry wrapper inside a fallback reports it first)
        if isinstance(error.usage, Usage):
            usage = self._priced(error.usage)
            self._reported = self._reported + usage
        else:
            usage = self._unreported(error, held)
        self._charge(held, usage)

    async def next(self, request: ModelRequest, model: Model | None) -> ModelRequest:
        if self.reservation is not None:  # a wrapper moved on without reporting the failure
            self._charge(self.reservation, Usage(requests=1))
        if model is not None:
            self.model, self.price = model, model_price(model)
        reservation, request = await self.tracker.acquire(
            self.agent, request, price=self.price, model=getattr(self.model, "name", ""),
            count=self.model.count_input_tokens)
        self.reservation = reservation
        self.attempts += 1
        return request

    # ------------------------------------------------------------------ the end of the call

    def close(self, usage: Usage | None) -> Usage:
        """Settle the attempt still held with ``usage`` (the call's whole usage as the wrappers
        report it, of which what was already charged is taken off); returns what the call
        charged in all."""
        held = self.reservation
        if held is not None:
            rest = usage - self._reported if usage is not None else Usage()
            self._charge(held, rest)
        return self.charged

    def abandon(self, usage: Usage) -> Usage:
        """Settle the attempt still held with ``usage`` as it is (a deadline cut it, or the task
        was cancelled); returns what the call charged in all."""
        if self.reservation is not None:
            self._charge(self.reservation, usage)
        return self.charged

    # ------------------------------------------------------------------ internals

    def _priced(self, usage: Usage) -> Usage:
        if usage.cost_usd or self.price is None:
            return usage
        return usage.model_copy(update={"cost_usd": self.price.cost(usage)})

    def _unreported(self, error: ModelError, held: Reservation) -> Usage:
        """What a failed attempt costs when its provider did not say."""
        if isinstance(error, (ModelHTTPError, RequestBlockedError)):
            # An error status (429, 5xx, 4xx) is an answer without generation: providers do not bill it.
            return Usage(requests=1)
        if held.max_tokens is not None and held.input_tokens:
            # Under a token or dollar limit: everything held for it, as it may have been billed in full.
            return Usage(requests=1, input_tokens=held.input_tokens, output_tokens=max(0, held.tokens - held.input_tokens),
                         cost_usd=held.cost_usd)
        return self._priced(Usage(requests=1, input_tokens=held.tokens - (held.max_tokens or 0)))

    def _charge(self, held: Reservation, usage: Usage) -> None:
        self.tracker.settle(held, usage)
        self.charged = self.charged + usage
        self.reservation = None


__all__ = ["MeteredCall"]
