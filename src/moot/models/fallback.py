"""Trying other models when one fails.

A fallback is for a provider that is down or out of quota, not for a mistake: a
:class:`ConfigError` or a blocked request (tests) is raised at once, because another model
would only hide it.

Each fallback attempt is held against the caller's budget before it is sent, priced as the
model it goes to (see :mod:`moot.models.attempts`), and what the failed models billed is kept
in the usage of the answer (or of the final error).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from moot.errors import ModelError, RequestBlockedError
from moot.models.attempts import current_gate
from moot.models.base import Model, ModelRequest, ModelResponse, StreamDone, StreamEvent, Usage


def _lost(failures: list[tuple[Model, ModelError]]) -> Usage | None:
    """What the failed models billed, where they said (``None`` when none did)."""
    known = [error.usage for _, error in failures if isinstance(error.usage, Usage)]
    return sum(known, Usage()) if known else None


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
        error = AllModelsFailedError(f"all {len(failures)} models failed: {parts}")
        error.usage = _lost(failures)
        return error

    async def request(self, request: ModelRequest) -> ModelResponse:
        failures: list[tuple[Model, ModelError]] = []
        gate = current_gate()
        for index, model in enumerate(self.models):
            if index and gate is not None:
                request = await gate.next(request, model)  # held, priced as this model, before it is sent
            try:
                response = await model.request(request)
            except RequestBlockedError:
                raise
            except ModelError as error:
                if gate is not None:
                    gate.failed(error)  # ignored when a retry wrapper inside already reported it
                failures.append((model, error))
                continue
            if failures and (lost := _lost(failures)) is not None:
                response = response.model_copy(update={"usage": response.usage + lost})
            return response if response.model else response.model_copy(update={"model": model.name})
        raise self._all_failed(failures)

    def count_input_tokens(self, request: ModelRequest) -> int | None:
        return self.models[0].count_input_tokens(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failures: list[tuple[Model, ModelError]] = []
        gate = current_gate()
        for index, model in enumerate(self.models):
            if index and gate is not None:
                request = await gate.next(request, model)
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
                if gate is not None:
                    gate.failed(error)
                failures.append((model, error))
        raise self._all_failed(failures)

    async def aclose(self) -> None:
        for model in self.models:
            await model.aclose()

    def describe(self) -> dict[str, Any]:
        return {**self.models[0].describe(), "fallbacks": [m.name for m in self.models[1:]]}
