"""One process-wide limit on requests in flight, per provider.

Fifty parallel sub-agents must not open fifty connections to one provider: that is how a
run turns into a 429 storm. Every model instance of a provider shares one limiter, wherever
it was built. Limits: ``MOOT_MAX_CONCURRENCY`` (``8`` for every provider, or
``openai=4,anthropic=2,local=1``), else 4 for local engines and 8 for remote providers.

asyncio locks and semaphores belong to the event loop that first used them, but one process
may run many loops over time (``asyncio.run`` per CLI command, one loop per test) and even
several at once in threads. So the limiter counts slots under a thread lock and parks each
waiter on a future of *its own* loop, handing a freed slot to the next waiter with
``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from moot.errors import ConfigError
from moot.models.base import Model, ModelRequest, ModelResponse, StreamEvent, WrapperModel
from moot.models.timing import current_clock

LOCAL_DEFAULT = 4
REMOTE_DEFAULT = 8
_LOCAL_PROVIDERS = ("local", "ollama", "openai-compatible")


class ProcessLimiter:
    """A counting semaphore that works across event loops and threads."""

    def __init__(self, key: str, limit: int) -> None:
        if limit < 1:
            raise ConfigError(f"concurrency limit for {key!r} must be at least 1, got {limit}")
        self.key = key
        self.limit = limit
        self.in_use = 0
        self.peak = 0
        """The most slots ever held at once (for tests and ``moot runs show``)."""
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.in_use < self.limit and not self._waiters:
                self._take()
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove((loop, future))
                    queued = True
                except ValueError:
                    queued = False
            if not queued and future.done() and not future.cancelled():
                self.release()  # the slot arrived just as we were cancelled: pass it on
            raise

    def _take(self) -> None:
        self.in_use += 1
        self.peak = max(self.peak, self.in_use)

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                if future.done() or loop.is_closed():
                    continue
                # The slot moves to the waiter without ever being free, so nobody can jump
                # the queue between release and wake-up.
                try:
                    loop.call_soon_threadsafe(self._grant, future)
                except RuntimeError:  # loop closed meanwhile
                    continue
                return
            self.in_use -= 1

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled after the hand-over was scheduled
            self.release()
        else:
            with self._lock:
                self.peak = max(self.peak, self.in_use)
            future.set_result(None)

    async def __aenter__(self) -> ProcessLimiter:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


_limiters: dict[str, ProcessLimiter] = {}
_registry_lock = threading.Lock()


def default_limit(key: str) -> int:
    """The limit for ``key`` from ``MOOT_MAX_CONCURRENCY`` or the built-in defaults."""
    provider = key.split(":", 1)[0]
    raw = os.environ.get("MOOT_MAX_CONCURRENCY", "").strip()
    if raw:
        try:
            if "=" not in raw:
                return int(raw)
            for part in raw.split(","):
                name, _, value = part.partition("=")
                if name.strip() in (key, provider):
                    return int(value)
        except ValueError:
            raise ConfigError(
                f"MOOT_MAX_CONCURRENCY={raw!r} is not a number or a list like openai=4,anthropic=2",
                fix="set MOOT_MAX_CONCURRENCY to a positive integer",
            ) from None
    return LOCAL_DEFAULT if provider in _LOCAL_PROVIDERS else REMOTE_DEFAULT


def limiter_for(key: str, limit: int | None = None) -> ProcessLimiter:
    """The process-wide limiter for ``key``; an explicit ``limit`` replaces the current one."""
    with _registry_lock:
        limiter = _limiters.get(key)
        if limiter is None:
            limiter = _limiters[key] = ProcessLimiter(key, limit or default_limit(key))
        elif limit is not None and limit != limiter.limit:
            limiter.limit = limit
        return limiter


def reset_limiters() -> None:
    """Forget every limiter (for tests that change ``MOOT_MAX_CONCURRENCY``)."""
    with _registry_lock:
        _limiters.clear()


def limiter_key(model: Model) -> str:
    """Models that hit the same server share a limit: the provider, plus the URL when the
    provider is a self-hosted server that two configurations may point at differently."""
    facts = model.describe()
    provider = str(facts.get("provider") or model.name.split(":", 1)[0] or "model")
    if provider in ("openai-compatible", "ollama") and facts.get("base_url"):
        return f"{provider}:{facts['base_url']}"
    return provider


@dataclass
class ConcurrencyLimitedModel(WrapperModel):
    """Holds a slot of the shared limiter for the duration of each request or stream."""

    key: str | None = None
    """Which limiter to share; default from :func:`limiter_key`."""
    limit: int | None = None
    """Explicit limit for that key; default from the environment."""
    limiter: ProcessLimiter = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.key = self.key or limiter_key(self.wrapped)
        self.limiter = limiter_for(self.key, self.limit)

    async def _acquire(self) -> None:
        started = time.perf_counter()
        await self.limiter.acquire()
        if (clock := current_clock()) is not None:  # the wait shows in the request's timing
            clock.waited(time.perf_counter() - started)

    async def request(self, request: ModelRequest) -> ModelResponse:
        await self._acquire()
        try:
            return await self.wrapped.request(request)
        finally:
            self.limiter.release()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await self._acquire()
        try:
            async for event in self.wrapped.stream(request):
                yield event
        finally:
            self.limiter.release()

    def describe(self) -> dict[str, Any]:
        return {**self.wrapped.describe(), "concurrency_limit": self.limiter.limit}
