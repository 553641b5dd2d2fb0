"""The board's event stream: one watcher for every open stream, sending changes, not snapshots.

``GET /api/board/events`` used to re-read and re-encode the whole board for each open stream
twice a second (20 streams on a 1,000-task board kept a core busy). Now one :class:`BoardWatch`
per server polls for all of them: it asks the backend for its cheap change token
(:meth:`~moot.teams.board.backend.BoardBackend.version`), reads the board only when the token
moved (or every :data:`FULL_READ_S`, in case a change slipped between two looks), and sends each
stream the tasks that changed, encoded once. A new stream gets the columns once, then changes.
At most ``max_streams`` streams are open at a time; one more is refused with 429.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from moot.errors import MootError
from moot.server.sse import queued, sse

POLL_S = 0.5
"""How often the watcher looks at the change token while a stream is open."""
FULL_READ_S = 5.0
"""The longest the watcher goes without reading every task, whatever the token says."""
MAX_BOARD_STREAMS = 8
"""Board streams open at once by default (``moot serve --max-board-streams``)."""

Columns = dict[str, Any]


class TooManyStreams(MootError):
    """Every board stream the server allows is open."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} board streams are open, the most this server allows",
                         fix="close another board page, or start moot serve with a larger --max-board-streams")
        self.retry_after_s = 5


class BoardWatch:
    """Polls one board for every open stream and hands each the changes."""

    def __init__(self, read: Callable[[], tuple[Columns, str | None]], version: Callable[[], str | None], *,
                 max_streams: int = MAX_BOARD_STREAMS, poll_s: float = POLL_S, full_read_s: float = FULL_READ_S) -> None:
        self._read = read
        """Blocking: the board's columns (``{"board", "counts", "pending": [...], …}``) and its token."""
        self._version = version
        """Blocking: the board's change token."""
        self.max_streams = max_streams
        self.poll_s = poll_s
        self.full_read_s = full_read_s
        self._queues: set[asyncio.Queue[str | None]] = set()
        self._tasks: dict[str, str] = {}
        """Task id → its JSON as last sent (what a change is measured against)."""
        self._columns: Columns | None = None
        self._token: str | None = None
        self._read_at = 0.0
        self._poller: asyncio.Task[None] | None = None
        self.reads = 0
        """Full reads of the board so far (one per change, however many streams are open)."""

    @property
    def open_streams(self) -> int:
        return len(self._queues)

    async def _refresh(self) -> str | None:
        """Read the board; the encoded ``change`` event when anything changed since the last read."""
        columns, token = await asyncio.to_thread(self._read)
        self.reads += 1
        self._read_at = time.monotonic()
        self._token = token
        current: dict[str, str] = {}
        by_id: dict[str, Any] = {}
        for column in ("pending", "active", "completed", "failed"):
            for task in columns.get(column, ()):
                current[task["id"]] = json.dumps(task, sort_keys=True, ensure_ascii=False, default=str)
                by_id[task["id"]] = task
        changed = [by_id[i] for i, text in current.items() if self._tasks.get(i) != text]
        removed = [i for i in self._tasks if i not in current]
        first = self._columns is None
        self._tasks, self._columns = current, columns
        if first or not (changed or removed):
            return None
        return sse("change", {"board": columns.get("board"), "counts": columns.get("counts"),
                              "changed": changed, "removed": removed})

    async def _poll(self) -> None:
        try:
            while self._queues:
                await asyncio.sleep(self.poll_s)
                if not self._queues:
                    break
                try:
                    token = await asyncio.to_thread(self._version)
                    stale = time.monotonic() - self._read_at >= self.full_read_s
                    if token is None or token != self._token or stale:
                        event = await self._refresh()
                        if event is not None:
                            for queue in list(self._queues):
                                queue.put_nowait(event)
                except MootError:
                    continue  # the board is away for a moment (a database restart): look again later
        finally:
            self._poller = None

    def stream(self) -> AsyncIterator[str]:
        """The events of one client: the columns once, then changes (and keep-alives)."""
        if len(self._queues) >= self.max_streams:
            raise TooManyStreams(self.max_streams)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._queues.add(queue)
        events = self._events(queue)
        # A client that hangs up before its stream started never runs the generator's `finally`:
        # its place is given back when the generator is dropped.
        weakref.finalize(events, self._queues.discard, queue)
        return events

    async def _events(self, queue: asyncio.Queue[str | None]) -> AsyncIterator[str]:
        try:
            if self._columns is None or time.monotonic() - self._read_at > self.poll_s:
                event = await self._refresh()
                if event is not None:  # another stream's view moved on: tell the others too
                    for other in list(self._queues):
                        if other is not queue:
                            other.put_nowait(event)
            yield sse("board", self._columns)
            if self._poller is None:
                self._poller = asyncio.create_task(self._poll(), name="board-watch")
            async for item in queued(queue):
                yield item
        finally:
            self._queues.discard(queue)
            if not self._queues and self._poller is not None:
                self._poller.cancel()

    async def close(self) -> None:
        for queue in list(self._queues):
            queue.put_nowait(None)
        if self._poller is not None:
            self._poller.cancel()


__all__ = ["BoardWatch", "MAX_BOARD_STREAMS", "TooManyStreams"]
