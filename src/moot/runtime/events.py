"""A typed event bus: everything a run does, as events that subscribers (the run store, a
progress display, OpenTelemetry) can watch.

Model events carry usage and latency, never the prompt or the answer, unless the bus was made
with ``record_content=True``: what a run sends to a model can be sensitive, so recording it is
an explicit choice.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Union

log = logging.getLogger("moot.runtime.events")


class EventType(str, Enum):
    """Every kind of event the runtime emits."""

    RUN_STARTED = "run_started"
    RUN_FINISHED = "run_finished"
    RUN_FAILED = "run_failed"
    TASK_STARTED = "task_started"
    TASK_FINISHED = "task_finished"
    TASK_FAILED = "task_failed"
    TASK_SKIPPED = "task_skipped"
    AGENT_STARTED = "agent_started"
    AGENT_FINISHED = "agent_finished"
    AGENT_FAILED = "agent_failed"
    MODEL_REQUEST = "model_request"
    MODEL_RESPONSE = "model_response"
    TOOL_CALL = "tool_call"
    BUDGET_WARNING = "budget_warning"
    BUDGET_STOP = "budget_stop"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _missing_(cls, value: object) -> EventType | None:
        """A team's own event: a dotted lower-case name (``nlr.graph.node_added``).

        Teams announce what they do in their own words (a node added to a graph, a gap found)
        on the same bus, so the run store records and replays those events like the runtime's.
        Each name becomes one member, made on first use; anything else is still refused.
        """
        if not isinstance(value, str) or not _TEAM_EVENT.fullmatch(value):
            return None
        member = cls._value2member_map_.get(value)
        if member is None:
            member = str.__new__(cls, value)
            member._name_ = value.upper().replace(".", "_")
            member._value_ = value
            cls._value2member_map_[value] = member
        return member  # type: ignore[return-value]


_TEAM_EVENT = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")


@dataclass(frozen=True)
class Event:
    """One thing that happened in a run."""

    type: EventType
    run_id: str | None = None
    task_id: str | None = None
    agent: str | None = None
    ts: float = field(default_factory=time.time)
    """Wall-clock seconds (``time.time()``)."""
    payload: dict[str, Any] = field(default_factory=dict)
    """Details: tokens, cost, latency, tool name/arguments/result summary, error, reason."""
    seq: int = 0
    """Order of emission on its bus (timestamps can tie)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "type": self.type.value,
            "ts": self.ts,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "agent": self.agent,
            "payload": self.payload,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            type=EventType(data["type"]),
            run_id=data.get("run_id"),
            task_id=data.get("task_id"),
            agent=data.get("agent"),
            ts=float(data.get("ts", 0.0)),
            payload=dict(data.get("payload") or {}),
            seq=int(data.get("seq", 0)),
        )


Subscriber = Callable[[Event], Union[None, Awaitable[None]]]
"""A sync function, or an async one, that receives every event."""


class EventBus:
    """Delivers events to subscribers, in order; a failing subscriber is logged, never fatal.

    Sync subscribers run inline. Async subscribers run as tasks on the running loop; call
    :meth:`flush` to wait for them (the graph executor does so at the end of a run).
    """

    def __init__(self, *, record_content: bool = False) -> None:
        self.record_content = record_content
        """Whether model request/response events include messages and answers."""
        # A tuple, replaced on (un)subscribe: delivery iterates a snapshot without copying it,
        # so a subscriber may unsubscribe while an event is being delivered.
        self._subscribers: tuple[Subscriber, ...] = ()
        self._pending: set[asyncio.Task[None]] = set()
        self._seq = itertools.count(1)

    @property
    def active(self) -> bool:
        """Whether anyone subscribes: bound emitters build no event while this is false."""
        return bool(self._subscribers)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it again."""
        self._subscribers = (*self._subscribers, subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                remaining = list(self._subscribers)
                remaining.remove(subscriber)
                self._subscribers = tuple(remaining)

        return unsubscribe

    def emit(
        self,
        type: EventType,
        *,
        run_id: str | None = None,
        task_id: str | None = None,
        agent: str | None = None,
        **payload: Any,
    ) -> Event:
        """Build an event and deliver it to every subscriber."""
        event = Event(
            type=type if type.__class__ is EventType else EventType(type),
            run_id=run_id,
            task_id=task_id,
            agent=agent,
            payload=payload,
            seq=next(self._seq),
        )
        self.publish(event)
        return event

    def publish(self, event: Event) -> None:
        for subscriber in self._subscribers:
            try:
                outcome = subscriber(event)
                if inspect.isawaitable(outcome):
                    task = asyncio.ensure_future(outcome)
                    self._pending.add(task)
                    task.add_done_callback(self._async_done)
            except Exception:  # a broken subscriber must never break the run
                log.exception("event subscriber %r failed on %s", subscriber, event.type)

    def _async_done(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async event subscriber failed", exc_info=task.exception())

    async def flush(self) -> None:
        """Wait until every async subscriber has handled the events emitted so far."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    def bind(self, **fields: str | None) -> BoundEmitter:
        """An emitter that fills in ``run_id``, ``task_id`` and ``agent`` for every event."""
        return BoundEmitter(self, dict(fields))


@dataclass(frozen=True)
class BoundEmitter:
    """Emits events with some fields fixed; ``None`` bus makes a silent emitter.

    While the bus has no subscriber, :meth:`emit` returns at once: an event that nobody would
    receive is not built and takes no ``seq`` number (the runtime emits several per task).
    """

    bus: EventBus | None
    fields: dict[str, str | None]

    @property
    def record_content(self) -> bool:
        return bool(self.bus and self.bus.record_content)

    @property
    def active(self) -> bool:
        """Whether an event emitted now reaches anyone (check it before building a costly payload)."""
        return self.bus is not None and bool(self.bus._subscribers)

    def emit(self, type: EventType, **payload: Any) -> None:
        bus = self.bus
        if bus is not None and bus._subscribers:
            bus.emit(type, **self.fields, **payload)  # type: ignore[arg-type]

    def bind(self, **fields: str | None) -> BoundEmitter:
        return BoundEmitter(self.bus, {**self.fields, **fields})


def summarize(value: Any, limit: int = 200) -> str:
    """A short, single-line text for event payloads (tool arguments, results)."""
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["BoundEmitter", "Event", "EventBus", "EventType", "Subscriber", "summarize"]
