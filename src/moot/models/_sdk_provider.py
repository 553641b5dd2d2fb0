"""What the OpenAI and Anthropic providers share: the SDK client's life cycle and error mapping."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

from moot.models._provider_errors import map_sdk_error
from moot.models.base import Model

NO_KEY = "no-key"
"""Given to an SDK when no key is needed, so it never falls back to a key from the environment
(and never sends, say, ``OPENAI_API_KEY`` to a third-party server)."""


class SDKProviderModel(Model):
    """A provider on an official SDK. Subclasses set ``_sdk`` and ``_client_class`` and, in
    ``__init__``: ``name``, ``base_url``, ``timeout_s``, ``api_key_env``, ``_api_key``,
    ``_http_client``, and ``_client = None``."""

    _sdk: ModuleType
    _client_class: str
    name: str
    base_url: str | None
    timeout_s: float | None
    api_key_env: str | None
    _api_key: str
    _http_client: Any
    _client: Any = None
    _client_loop: asyncio.AbstractEventLoop | None = None

    def _sdk_client(self) -> Any:
        """The SDK client, rebuilt when the event loop changed (connection pools are bound to
        the loop that opened them; tests and ``asyncio.run`` callers use a loop each)."""
        loop = asyncio.get_running_loop()
        if self._client is None or (self._http_client is None and self._client_loop is not loop):
            self._client = getattr(self._sdk, self._client_class)(
                # Always explicit: the SDK would otherwise look for keys and config files itself.
                api_key=self._api_key or NO_KEY,
                base_url=self.base_url,
                max_retries=0,  # moot's RetryModel retries; the SDK must not retry underneath it
                timeout=self.timeout_s,
                http_client=self._http_client,
            )
            self._client_loop = loop
        return self._client

    def _error(self, exc: BaseException) -> BaseException:
        return map_sdk_error(
            exc,
            sdk=self._sdk,
            model_name=self.name,
            base_url=self.base_url,
            key_env=self.api_key_env,
            secrets=(self._api_key,),
        )

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._http_client is None:
            try:
                await client.close()
            except RuntimeError:  # its event loop is gone; nothing left to release
                pass
