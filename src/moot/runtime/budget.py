"""Budgets: model calls, tokens, dollars and a wall-clock deadline, per run and per agent.

A :class:`BudgetTracker` is shared by every agent of a run. An agent *reserves* room for a
request before sending it (its estimated prompt size plus ``max_tokens``) and *settles* the
reservation with the real usage afterwards. A reservation that would cross a limit raises
:class:`BudgetExceeded` before anything is sent, so a budget is never overrun by the request
that breaks it (the lesson from budgets that are checked only after the fact).

Everything runs on one event loop and ``reserve`` never awaits, so check-and-reserve is
atomic without a lock even with many agents in flight.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from moot.errors import ConfigError, MootError
from moot.models.base import ModelRequest, Usage
from moot.models.pricing import Price

PRESETS: dict[str, dict[str, Any]] = {
    # The deliberation design's execution modes: max API calls and timeout per mode.
    "quick": {"max_calls": 4, "deadline_s": 15.0},
    "standard": {"max_calls": 10, "deadline_s": 30.0},
    "deep": {"max_calls": 20, "deadline_s": 60.0},
}
"""Named budgets every team can use; override any field with :meth:`Budget.override`.

Their deadlines are for a hosted model; :meth:`Budget.preset` with ``model=`` (or
:meth:`Budget.fit_to`) gives a model that runs on this machine :data:`LOCAL_DEADLINE_FACTOR`
times as long."""

LOCAL_DEADLINE_FACTOR = 20
"""How much longer a deadline is for a model that runs on this machine (the embedded model,
a ``local:`` file): one call of the 0.5B embedded model on two shared cores takes 10-60 s where
a hosted model takes 1-3 s, so the presets' 15/30/60 s become 300/600/1200 s. Measured on the
README's example: ``moot ask`` at 30 s stopped on time for 1 of 14 answers on a quiet 2-core
machine and 5 of 39 under load (issue #22)."""


def runs_locally(model: Any) -> bool:
    """Whether ``model`` (a :class:`Model`, a model string, or ``None`` for the default) runs on
    this machine: the embedded model or a ``local:`` file (wrappers are looked through)."""
    if model is None:
        from moot.models.registry import default_model

        model = default_model()
    name = model if isinstance(model, str) else str(getattr(getattr(model, "innermost", model), "name", ""))
    return name == "local" or name.startswith(("local-", "local:"))

DEFAULT_OUTPUT_ALLOWANCE = 1024
"""Output tokens held (and sent as ``max_tokens``) for a request that sets no ``max_tokens``
when a token or dollar limit applies."""

INPUT_MARGIN = 1.5
"""Prompt tokens held per token of moot's estimate (characters / 3.5): providers' tokenizers
count up to about 1.3 times more, and a budget must hold for them too."""

_LIMIT_NAMES = {
    "calls": "model calls",
    "tokens": "tokens",
    "cost": "dollars",
    "deadline": "deadline",
}


@dataclass(frozen=True)
class Budget:
    """Limits for a run (and, through ``per_agent``, for single agents). ``None`` = no limit."""

    max_calls: int | None = None
    """Most model requests."""
    max_tokens: int | None = None
    """Most input + output tokens, counting the estimated size of a request before it is sent."""
    max_cost_usd: float | None = None
    """Most dollars; a request is refused when the spend so far plus its estimate would exceed it."""
    deadline_s: float | None = None
    """Wall-clock seconds from the start of the run (or of the agent, in ``per_agent``)."""
    per_agent: Mapping[str, Budget] | None = None
    """Extra limits for single agents, by agent name."""
    warn_at: float = 0.8
    """Fraction of a limit at which a ``budget_warning`` event is emitted once."""
    fits_model: bool = False
    """A preset whose deadline is still to fit the model: the run that uses it fits it
    (:meth:`fit_to`) to the model its agents run on, so ``Budget.preset("standard")`` gives the
    embedded model its longer deadline in Python as on the command line."""

    @classmethod
    def preset(cls, name: str, *, model: Any = None) -> Budget:
        """``quick`` (4 calls, 15 s), ``standard`` (10 calls, 30 s) or ``deep`` (20 calls, 60 s).

        The deadline fits the model (:meth:`fit_to`): a model running on this machine gets
        :data:`LOCAL_DEADLINE_FACTOR` times the seconds. Without ``model`` the run fits it to the
        model its agents use (the embedded model by default) when it starts.
        """
        try:
            budget = cls(**PRESETS[name])
        except KeyError:
            raise ConfigError(
                f"unknown budget preset {name!r}", fix=f"use one of: {', '.join(PRESETS)}"
            ) from None
        return budget.fit_to(model) if model is not None else replace(budget, fits_model=True)

    def fit_to(self, model: Any) -> Budget:
        """This budget with its deadlines (the run's and each agent's) made
        :data:`LOCAL_DEADLINE_FACTOR` times longer when ``model`` (a model, a model string, or
        ``None`` for the default) runs on this machine. The one place a deadline is fitted: the
        command line, the teams and a run given a preset all come here."""
        if not runs_locally(model):
            return replace(self, fits_model=False) if self.fits_model else self
        per_agent = {k: b.fit_to(model) for k, b in self.per_agent.items()} if self.per_agent else self.per_agent
        deadline = None if self.deadline_s is None else self.deadline_s * LOCAL_DEADLINE_FACTOR
        return replace(self, deadline_s=deadline, per_agent=per_agent, fits_model=False)

    def fit_to_any(self, models: Any) -> Budget:
        """:meth:`fit_to` for a run of several models: the deadline fits the slowest, so one
        agent on the embedded model gives the run the local deadline. Only a preset that still
        :attr:`fits_model` changes; limits the caller set stay as they are."""
        if not self.fits_model:
            return self
        chosen = list(models) or [None]
        local = [m for m in chosen if runs_locally(m)]
        return self.fit_to(local[0] if local else chosen[0])

    def override(self, **changes: Any) -> Budget:
        """A copy with some fields changed: ``Budget.preset("quick").override(max_calls=8)``.
        A deadline given here is kept as it is (it is no longer fitted to the model)."""
        if "deadline_s" in changes and self.fits_model:
            changes.setdefault("fits_model", False)
        return replace(self, **changes)

    def is_unlimited(self) -> bool:
        return all(
            v is None for v in (self.max_calls, self.max_tokens, self.max_cost_usd, self.deadline_s)
        ) and not self.per_agent

    def describe(self) -> dict[str, Any]:
        """The limits as plain JSON (for events and the run store)."""
        data: dict[str, Any] = {
            "max_calls": self.max_calls,
            "max_tokens": self.max_tokens,
            "max_cost_usd": self.max_cost_usd,
            "deadline_s": self.deadline_s,
        }
        if self.per_agent:
            data["per_agent"] = {name: b.describe() for name, b in self.per_agent.items()}
        return data


class BudgetExceeded(MootError):
    """A request was refused (or cancelled, for the deadline) because a budget limit was hit."""

    fix = "raise the limit (Budget(...).override(...)) or use a bigger preset"
    exit_code = 1  # the work stopped short: a runtime failure, not a usage mistake

    def __init__(self, message: str, *, which: str, scope: str = "run") -> None:
        super().__init__(message)
        self.which = which
        """``calls``, ``tokens``, ``cost`` or ``deadline``."""
        self.scope = scope
        """``run`` for the run's budget, else the name of the agent whose own budget was hit."""

    @property
    def stop_reason(self) -> str:
        return f"budget:{self.which}"


@dataclass
class _Ledger:
    """Spent and reserved amounts for one scope (the run, or one agent)."""

    budget: Budget
    started_at: float
    spent: Usage = field(default_factory=Usage)
    reserved_calls: int = 0
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    warned: set[str] = field(default_factory=set)


class Reservation:
    """Room held for one request until :meth:`BudgetTracker.settle` replaces it with real usage.

    ``tokens`` (the prompt's size with its safety margin, plus the answer's allowance) and
    ``cost_usd`` are what was held. When no token or dollar limit applies to the request,
    nothing but the call itself needs holding, so the prompt is not measured up front:
    ``tokens`` and ``cost_usd`` are worked out on first read.
    """

    __slots__ = (
        "agent", "settled", "_tokens", "_cost_usd", "_request", "_rate", "_held",
        "input_tokens", "raw_input_tokens", "max_tokens", "model",
    )

    def __init__(self, agent: str, tokens: int, cost_usd: float, settled: bool = False) -> None:
        self.agent = agent
        self.settled = settled
        self._tokens: int | None = tokens
        self._cost_usd: float | None = cost_usd
        self._request: ModelRequest | None = None
        self._rate = 0.0
        self._held = True
        """Whether ``tokens`` and ``cost_usd`` were added to the ledgers (and must be released)."""
        self.input_tokens = 0
        """The prompt tokens held (moot's estimate times the safety margin)."""
        self.raw_input_tokens = 0
        """moot's own estimate of the prompt (characters / 3.5), before the margin."""
        self.max_tokens: int | None = None
        """The ``max_tokens`` sent with the request."""
        self.model = ""
        """The model the request went to (observed prices are kept per model)."""

    @classmethod
    def _unmeasured(cls, agent: str, request: ModelRequest, rate: float) -> Reservation:
        reservation = cls(agent, 0, 0.0)
        reservation._tokens = reservation._cost_usd = None
        reservation._request, reservation._rate, reservation._held = request, rate, False
        reservation.max_tokens = request.settings.max_tokens
        return reservation

    @property
    def tokens(self) -> int:
        if self._tokens is None:
            request = self._request
            assert request is not None
            self._tokens = request.estimated_input_tokens() + (request.settings.max_tokens or 0)
            self._request = None
        return self._tokens

    @property
    def cost_usd(self) -> float:
        if self._cost_usd is None:
            self._cost_usd = self.tokens * self._rate
        return self._cost_usd

    def __repr__(self) -> str:
        return f"Reservation(agent={self.agent!r}, tokens={self.tokens}, cost_usd={self.cost_usd}, settled={self.settled})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reservation):
            return NotImplemented
        return (self.agent, self.tokens, self.cost_usd, self.settled) == (
            other.agent, other.tokens, other.cost_usd, other.settled
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces


class _MustWait(Exception):
    """Internal: the request fits once requests already in flight settle; wait, then retry."""


class BudgetTracker:
    """Enforces one :class:`Budget` across every agent of a run."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        on_warning: Callable[[str, str, str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget or Budget()
        self._clock = clock
        self._run = _Ledger(self.budget, clock())
        self._agents: dict[str, _Ledger] = {}
        self._warning_listeners: list[Callable[[str, str, str], None]] = [on_warning] if on_warning else []
        self.run_stop: BudgetExceeded | None = None
        """Set when a run-wide limit was hit: the run starts no new task after that."""
        self.usage_by_agent: dict[str, Usage] = {}
        # What the run has learnt about its providers, to keep reservations conservative.
        self._answers_seen = 0
        self._longest_answer = 0
        """The most output tokens any answer of this run used: a provider may ignore
        ``max_tokens``, so no request is sent unless an answer this long still fits."""
        self._ignores_max_tokens = False
        """Set once an answer came back longer than the ``max_tokens`` it was sent with."""
        self._kept_to_max_tokens = False
        """Set once an answer came back cut exactly at its ``max_tokens``: the provider keeps to it."""
        self._input_factor = INPUT_MARGIN
        """Provider prompt tokens per moot-estimated token, never below :data:`INPUT_MARGIN`."""
        self._observed_rate: dict[str, float] = {}
        """Highest dollars per token seen, per model without a known price."""
        self._in_flight = 0
        self._settled: asyncio.Event | None = None

    def add_warning_listener(self, listener: Callable[[str, str, str], None]) -> None:
        """Also call ``listener(scope, which, detail)`` on each budget warning (a run sharing
        this tracker announces the warnings on its own bus)."""
        self._warning_listeners.append(listener)

    def remove_warning_listener(self, listener: Callable[[str, str, str], None]) -> None:
        if listener in self._warning_listeners:
            self._warning_listeners.remove(listener)

    # ------------------------------------------------------------------ queries

    @property
    def usage(self) -> Usage:
        return self._run.spent

    def _agent_ledger(self, agent: str, extra: Budget | None = None) -> _Ledger | None:
        ledger = self._agents.get(agent)
        if ledger is None:
            limits = (self.budget.per_agent or {}).get(agent) or extra
            if limits is None:
                return None
            ledger = self._agents[agent] = _Ledger(limits, self._clock())
        return ledger

    def register_agent(self, agent: str, budget: Budget | None = None) -> None:
        """Start an agent's own clock (its ``deadline_s`` counts from here)."""
        self._agent_ledger(agent, budget)

    def out_of_room(self) -> bool:
        """Whether no further call can be made on the run's budget (its calls are spent, or its
        deadline passed); marks the run stopped with the reason when so. Calls in flight count."""
        if self.run_stop is not None:
            return True
        left = self.time_left()
        if left is not None and left <= 0:
            self.deadline_error()
            return True
        calls = self.budget.max_calls
        if calls is not None and self._run.spent.requests + self._run.reserved_calls >= calls:
            try:
                self._refuse("run", "calls", self._run, f"{self._run.spent.requests} calls already made")
            except BudgetExceeded:
                return True
        return False

    def calls_left(self, agent: str | None = None) -> int | None:
        """Model calls the run's limits and the agent's own still allow (calls in flight count),
        ``None`` when neither limits calls."""
        lefts = []
        for ledger in (self._run, self._agent_ledger(agent) if agent else None):
            if ledger is not None and ledger.budget.max_calls is not None:
                lefts.append(ledger.budget.max_calls - ledger.spent.requests - ledger.reserved_calls)
        return max(0, min(lefts)) if lefts else None

    def time_left(self, agent: str | None = None) -> float | None:
        """Seconds until the nearest deadline (run or agent), ``None`` when there is none."""
        now = self._clock()
        candidates = []
        for ledger in (self._run, self._agents.get(agent or "")):
            if ledger is not None and ledger.budget.deadline_s is not None:
                candidates.append(ledger.started_at + ledger.budget.deadline_s - now)
        return max(0.0, min(candidates)) if candidates else None

    def deadline_error(self, agent: str | None = None) -> BudgetExceeded:
        """The error for a deadline that has just passed: the agent's own, or else the run's."""
        run_left = self._deadline_left(self._run)
        ledger = self._agents.get(agent or "")
        agent_left = self._deadline_left(ledger) if ledger is not None else None
        if agent_left is not None and (run_left is None or agent_left < run_left):
            assert ledger is not None and ledger.budget.deadline_s is not None
            return BudgetExceeded(
                f"agent {agent!r} reached its deadline of {ledger.budget.deadline_s:g} s",
                which="deadline",
                scope=agent or "run",
            )
        err = BudgetExceeded(
            f"the run's deadline of {self.budget.deadline_s:g} s was reached", which="deadline"
        )
        self.run_stop = self.run_stop or err
        return err

    def _deadline_left(self, ledger: _Ledger) -> float | None:
        if ledger.budget.deadline_s is None:
            return None
        return ledger.started_at + ledger.budget.deadline_s - self._clock()

    # ------------------------------------------------------------------ reserve / settle

    async def acquire(
        self, agent: str, request: ModelRequest, *, price: Price | None = None, model: str = "",
        count: Callable[[ModelRequest], int | None] | None = None,
    ) -> tuple[Reservation, ModelRequest]:
        """:meth:`reserve`, waiting while the request fits only once requests already in
        flight settle (so parallel agents take turns instead of stopping the run)."""
        while True:
            try:
                return self._reserve(agent, request, price=price, model=model, may_wait=True, count=count)
            except _MustWait:
                if self._settled is None or self._settled.is_set():
                    self._settled = asyncio.Event()
                try:
                    async with asyncio.timeout(self.time_left(agent)):
                        await self._settled.wait()
                except TimeoutError:
                    raise self.deadline_error(agent) from None

    def reserve(
        self, agent: str, request: ModelRequest, *, price: Price | None = None, model: str = "",
        count: Callable[[ModelRequest], int | None] | None = None,
    ) -> tuple[Reservation, ModelRequest]:
        """Hold room for ``request`` or raise :class:`BudgetExceeded` before it is sent.

        Under a token or dollar limit the hold is conservative: the prompt counts with a
        safety margin (providers' tokenizers count more than moot's estimate), the answer
        counts at its ``max_tokens`` (or :data:`DEFAULT_OUTPUT_ALLOWANCE` when none is set)
        and at least as long as the longest answer of the run (providers may ignore
        ``max_tokens``), and dollars are priced with ``price`` (the model's price table
        entry, known before any call) or else the highest rate seen from that model. The
        returned request has ``max_tokens`` lowered to what the budget still allows.
        ``count``: the model's own token count of a prompt (the embedded model reads its
        tokenizer), used instead of moot's estimate when it gives one.
        """
        return self._reserve(agent, request, price=price, model=model, may_wait=False, count=count)

    def _reserve(
        self, agent: str, request: ModelRequest, *, price: Price | None, model: str, may_wait: bool,
        count: Callable[[ModelRequest], int | None] | None = None,
    ) -> tuple[Reservation, ModelRequest]:
        if self.run_stop is not None:
            raise self.run_stop
        ledgers = [("run", self._run)]
        agent_ledger = self._agents.get(agent)
        if agent_ledger is not None:
            ledgers.append((agent, agent_ledger))
        if not any(ledger.budget.max_tokens is not None or ledger.budget.max_cost_usd is not None for _, ledger in ledgers):
            reservation = self._reserve_call(agent, request, ledgers)
            reservation.model = model
            self._in_flight += 1
            return reservation, request
        others = self._in_flight > 0
        if may_wait and others and self._answers_seen == 0:
            # Until one answer came back nothing is known about how long answers are or
            # how the provider counts: the first request under a limit goes alone.
            raise _MustWait
        raw_input = (count(request) if count is not None else None) or request.estimated_input_tokens()
        input_tokens = math.ceil(raw_input * self._input_factor)
        in_rate, out_rate, unpriced = self._rates(price, model)
        priced_limit = any(ledger.budget.max_cost_usd is not None for _, ledger in ledgers)
        if unpriced and priced_limit and others and may_wait:
            raise _MustWait  # a model with no known price goes alone until its rate is seen
        input_cost = input_tokens * in_rate
        wanted = request.settings.max_tokens or DEFAULT_OUTPUT_ALLOWANCE
        # The smallest answer worth sending for: a request is never cut below the answer it
        # asked for (up to the default allowance; a cut answer is mostly wasted), and once
        # a provider was caught ignoring max_tokens, never below the longest answer seen.
        if self._ignores_max_tokens:
            floor = max(self._longest_answer, DEFAULT_OUTPUT_ALLOWANCE)
        else:
            floor = max(1, min(wanted, max(self._longest_answer, DEFAULT_OUTPUT_ALLOWANCE)))

        def cap(with_reserved: bool, want: int | None = None) -> tuple[int, tuple[str, str, _Ledger, str] | None]:
            """The largest answer (up to ``want``, default the request's) the budget allows, and the
            first limit that forbids one."""
            best = wanted if want is None else want
            for scope, ledger in ledgers:
                b = ledger.budget
                if b.max_tokens is not None:
                    held = ledger.reserved_tokens if with_reserved else 0
                    room = b.max_tokens - ledger.spent.total_tokens - held - input_tokens
                    if room < floor:
                        return room, (scope, "tokens", ledger, f"the next request needs about {input_tokens} input tokens and up to {floor} output tokens")
                    best = min(best, room)
                if b.max_cost_usd is not None:
                    held_cost = ledger.reserved_cost if with_reserved else 0.0
                    dollars = b.max_cost_usd - ledger.spent.cost_usd - held_cost - input_cost
                    if out_rate > 0:
                        room = math.floor(dollars / out_rate + 1e-9)
                    else:
                        room = best if dollars >= -1e-12 else -1
                    if room < floor:
                        return room, (scope, "cost", ledger, f"${ledger.spent.cost_usd:.4f} spent, next request ~${input_cost + floor * out_rate:.4f}")
                    best = min(best, room)
            return best, None

        max_out, refusal = cap(with_reserved=True)
        if may_wait and others:
            alone, alone_refusal = cap(with_reserved=False)
            if alone_refusal is None and (refusal is not None or alone > max_out):
                raise _MustWait  # it fits (or fits better) once the others settle
        # Until an answer shows whether the provider keeps to max_tokens (one cut at it, or one past
        # it), a request beside others is held at the default allowance at least, and waits until
        # that much room is free: a provider that ignores the cap must not overrun the budget
        # through several small requests sent side by side.
        unproven = not (self._ignores_max_tokens or self._kept_to_max_tokens)
        allowance = DEFAULT_OUTPUT_ALLOWANCE if unproven and others else 0
        if allowance and may_wait and refusal is None and cap(with_reserved=True, want=allowance)[0] < allowance:
            raise _MustWait
        self._check_deadline_and_calls(agent, ledgers)
        if refusal is not None:
            scope, which, ledger, detail = refusal
            self._refuse(scope, which, ledger, detail)
        if max_out != request.settings.max_tokens:
            request = request.model_copy(
                update={"settings": request.settings.model_copy(update={"max_tokens": max_out})}
            )
        held_out = max(max_out, self._longest_answer, floor if self._ignores_max_tokens else 0, allowance)
        tokens = input_tokens + held_out
        cost = input_cost + held_out * out_rate
        for _, ledger in ledgers:
            ledger.reserved_calls += 1
            ledger.reserved_tokens += tokens
            ledger.reserved_cost += cost
        reservation = Reservation(agent=agent, tokens=tokens, cost_usd=cost)
        reservation.input_tokens, reservation.raw_input_tokens = input_tokens, raw_input
        reservation.max_tokens, reservation.model = max_out, model
        self._in_flight += 1
        return reservation, request

    def _rates(self, price: Price | None, model: str) -> tuple[float, float, bool]:
        """Dollars per input and per output token, and whether the model's price is unknown."""
        if price is not None:
            return price.input / 1_000_000, price.output / 1_000_000, False
        rate = self._observed_rate.get(model)
        if rate is None:
            return 0.0, 0.0, True
        return rate, rate, False

    def _check_deadline_and_calls(self, agent: str, ledgers: list[tuple[str, _Ledger]]) -> None:
        """Refuse the next request when the deadline passed or it would be one call too many."""
        left = self.time_left(agent)
        if left is not None and left <= 0:
            raise self.deadline_error(agent)
        for scope, ledger in ledgers:
            calls = ledger.budget.max_calls
            if calls is not None and ledger.spent.requests + ledger.reserved_calls + 1 > calls:
                self._refuse(scope, "calls", ledger, f"{calls} call{'s' if calls != 1 else ''} already made")

    def _reserve_call(self, agent: str, request: ModelRequest, ledgers: list[tuple[str, _Ledger]]) -> Reservation:
        """``reserve`` when no token or dollar limit applies: only the call counts, so the
        prompt's size is not estimated (the reservation measures it if someone asks)."""
        self._check_deadline_and_calls(agent, ledgers)
        for _, ledger in ledgers:
            ledger.reserved_calls += 1
        spent = self._run.spent
        rate = 0.0 if spent.total_tokens == 0 or spent.cost_usd == 0 else spent.cost_usd / spent.total_tokens
        return Reservation._unmeasured(agent, request, rate)

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        """Release a reservation and book the real usage (``None`` when nothing was spent)."""
        if reservation.settled:
            return
        reservation.settled = True
        self._in_flight = max(0, self._in_flight - 1)
        usage = usage or Usage()
        scopes = [("run", self._run)]
        agent_ledger = self._agents.get(reservation.agent)
        if agent_ledger is not None:
            scopes.append((reservation.agent, agent_ledger))
        held = reservation._held
        for scope, ledger in scopes:
            ledger.reserved_calls -= 1
            if held:
                ledger.reserved_tokens -= reservation.tokens
                ledger.reserved_cost -= reservation.cost_usd
            ledger.spent = ledger.spent + usage
            self._maybe_warn(scope, ledger)
        self.usage_by_agent[reservation.agent] = self.usage_by_agent.get(reservation.agent, Usage()) + usage
        self._learn(reservation, usage)
        if self._settled is not None:
            self._settled.set()

    def _learn(self, reservation: Reservation, usage: Usage) -> None:
        """Keep what a real answer says about the provider, so later holds stay conservative."""
        if usage.requests == 0 or (usage.input_tokens == 0 and usage.output_tokens == 0):
            return
        self._answers_seen += 1
        self._longest_answer = max(self._longest_answer, usage.output_tokens)
        if reservation.max_tokens is not None and usage.output_tokens > reservation.max_tokens:
            self._ignores_max_tokens = True
        elif reservation.max_tokens is not None and usage.output_tokens == reservation.max_tokens:
            self._kept_to_max_tokens = True
        if reservation.raw_input_tokens and usage.input_tokens:
            self._input_factor = max(self._input_factor, usage.input_tokens / reservation.raw_input_tokens * 1.1)
        if usage.total_tokens and reservation.model:
            rate = usage.cost_usd / usage.total_tokens
            self._observed_rate[reservation.model] = max(self._observed_rate.get(reservation.model, 0.0), rate)

    # ------------------------------------------------------------------ internals

    def _refuse(self, scope: str, which: str, ledger: _Ledger, detail: str) -> None:
        limit = {
            "calls": ledger.budget.max_calls,
            "tokens": ledger.budget.max_tokens,
            "cost": ledger.budget.max_cost_usd,
        }[which]
        owner = "the run's" if scope == "run" else f"agent {scope!r}'s"
        shown = f"${limit:g}" if which == "cost" else f"{limit}"
        err = BudgetExceeded(
            f"{owner} budget of {shown} {_LIMIT_NAMES[which]} would be exceeded ({detail})",
            which=which,
            scope=scope,
        )
        if scope == "run":
            self.run_stop = err
        raise err

    def _maybe_warn(self, scope: str, ledger: _Ledger) -> None:
        b = ledger.budget
        if not self._warning_listeners or not (b.max_calls or b.max_tokens or b.max_cost_usd):
            return
        checks = [
            ("calls", ledger.spent.requests, b.max_calls),
            ("tokens", ledger.spent.total_tokens, b.max_tokens),
            ("cost", ledger.spent.cost_usd, b.max_cost_usd),
        ]
        for which, used, limit in checks:
            if limit and which not in ledger.warned and used >= b.warn_at * limit:
                ledger.warned.add(which)
                for listener in tuple(self._warning_listeners):
                    listener(scope, which, f"{used:g} of {limit:g} {_LIMIT_NAMES[which]} used")


__all__ = ["DEFAULT_OUTPUT_ALLOWANCE", "INPUT_MARGIN", "LOCAL_DEADLINE_FACTOR", "PRESETS", "runs_locally", "Budget", "BudgetExceeded", "BudgetTracker", "Reservation"]
