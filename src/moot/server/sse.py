"""Server-Sent Events: one event as text, and the items of a queue with keep-alives between."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, TypeVar

KEEPALIVE_S = 15.0
KEEPALIVE = ": keep-alive\n\n"
"""A comment line: it keeps proxies from closing an idle stream and is ignored by clients."""

T = TypeVar("T")


def sse(event: str, data: Any, event_id: int | str | None = None) -> str:
    """One event; ``data`` as JSON (non-ASCII kept, anything else as its text)."""
    head = f"event: {event}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    return head + "data: " + json.dumps(data, ensure_ascii=False, default=str) + "\n\n"


async def queued(queue: asyncio.Queue[T | None], keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[T | str]:
    """The items put on ``queue`` until a ``None``, and :data:`KEEPALIVE` after each quiet ``keepalive_s``."""
    while True:
        try:
            item = await asyncio.wait_for(queue.get(), keepalive_s)
        except TimeoutError:
            yield KEEPALIVE
            continue
        if item is None:
            return
        yield item


__all__ = ["KEEPALIVE", "KEEPALIVE_S", "queued", "sse"]
