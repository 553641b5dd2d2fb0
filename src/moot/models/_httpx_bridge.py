"""Let an ``httpx.AsyncClient`` serve an SDK that only accepts ``httpx2`` clients.

The ``anthropic`` SDK (2.x) refuses clients from the ``httpx`` package, while ``openai``
accepts both. moot's seam for tests and cassettes is a plain ``httpx.AsyncClient`` (a mock
transport is just another transport), so this bridge forwards each ``httpx2`` request through
such a client and streams the answer back, headers and body untouched (compressed bodies stay
compressed; ``httpx2`` decodes them). Timeouts keep working because the SDKs map the
``httpx`` exceptions too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2


class _ForwardedStream(httpx2.AsyncByteStream):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._response.is_stream_consumed:  # a transport that built it from bytes
            yield self._response.content
            return
        async for chunk in self._response.aiter_raw():
            yield chunk

    async def aclose(self) -> None:
        await self._response.aclose()


class LegacyClientTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that sends through an ``httpx.AsyncClient``."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        content = await request.aread()
        timeout: Any = request.extensions.get("timeout")
        legacy = self.client.build_request(
            request.method,
            str(request.url),
            headers=request.headers.multi_items(),
            content=content,
            timeout=httpx.Timeout(**timeout) if isinstance(timeout, dict) else httpx.USE_CLIENT_DEFAULT,
        )
        response = await self.client.send(legacy, stream=True)
        return httpx2.Response(
            response.status_code,
            headers=response.headers.multi_items(),
            stream=_ForwardedStream(response),
            request=request,
        )

    async def aclose(self) -> None:
        await self.client.aclose()


def as_httpx2_client(client: Any) -> Any:
    """``client`` itself if it is an ``httpx2`` client (or ``None``), else a bridge to it."""
    if client is None or isinstance(client, httpx2.AsyncClient):
        return client
    if isinstance(client, httpx.AsyncClient):
        return httpx2.AsyncClient(transport=LegacyClientTransport(client))
    raise TypeError(f"http_client must be an httpx.AsyncClient or httpx2.AsyncClient, not {type(client).__name__}")
