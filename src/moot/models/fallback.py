"""Trying other models when one fails.

A fallback is for a provider that is down or out of quota, not for a mistake: a
:class:`ConfigError` or a blocked request (tests) is raised at once, because another model
would only hide it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from moot.errors import ModelError, RequestBlockedError
from moot.models.base import Model, ModelRequest, ModelResponse, StreamEvent, StreamDone


class AllModelsFailedError(ModelError):
    """Every model of a :class:`FallbackModel` failed."""

    fix = "check each model's error above; `moot models` shows which ones answer"


class FallbackModel(Model):
    """Asks ``primary``, then each fallback in order, until one answers."""

    def __init__(self, primary: Model, *fallbacks: Model) -> None:
        self.models: tuple[Model, ...] = (primary, *fallbacks)
        self.name = primary.name

    def _all_failed(self, failures: list[tuple[Model, ModelError]]) -> AllModelsFailedError:
        parts = "; ".join(f"{model.name}: {error.one_line()}" for model, error in failures)
        return AllModelsFailedError(f"all {len(failures)} models failed: {parts}")

    async def request(self, request: ModelRequest) -> ModelResponse:
        failures: list[tuple[Model, ModelError]] = []
        for model in self.models:
            try:
                response = await model.request(request)
            except RequestBlockedError:
                raise
            except ModelError as error:
                failures.append((model, error))
                continue
            return response if response.model else response.model_copy(update={"model": model.name})
        raise self._all_failed(failures)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failures: list[tuple[Model, ModelError]] = []
        for model in self.models:
            yielded = False
            try:
                async for event in model.stream(request):
                    yielded = True
                    if isinstance(event, StreamDone) and not event.response.model:
                        event = StreamDone(event.response.model_copy(update={"model": model.name}))
                    yield event
                return
            except RequestBlockedError:
                raise
            except ModelError as error:
                if yielded:  # the caller already saw this model's text
                    raise
                failures.append((model, error))
        raise self._all_failed(failures)

    async def aclose(self) -> None:
        for model in self.models:
            await model.aclose()

    def describe(self) -> dict[str, Any]:
        return {**self.models[0].describe(), "fallbacks": [m.name for m in self.models[1:]]}
