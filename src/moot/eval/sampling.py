"""Per-run sampling: the only thing that differs between the runs of a question.

The model layer exposes ``temperature`` and ``seed`` in :class:`ModelSettings`. The teams pin
temperature 0 for their calls, and at temperature 0 the embedded model gives the same answer
to the same request — so N runs at temperature 0 would be N copies. ``SeededModel`` sets the
seed (and, when asked, the temperature) on every request, so each run samples differently
yet reproducibly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from moot.models.base import ModelRequest, ModelResponse, StreamEvent, WrapperModel


@dataclass
class SeededModel(WrapperModel):
    """Sets ``seed`` and, if given, ``temperature`` on every request to the wrapped model."""

    seed: int | None = field(default=None)
    temperature: float | None = field(default=None)

    def _apply(self, request: ModelRequest) -> ModelRequest:
        changes: dict[str, object] = {}
        if self.seed is not None:
            changes["seed"] = self.seed
        if self.temperature is not None:
            changes["temperature"] = self.temperature
        if not changes:
            return request
        return request.model_copy(update={"settings": request.settings.model_copy(update=changes)})

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self.wrapped.request(self._apply(request))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.wrapped.stream(self._apply(request)):
            yield event

    async def aclose(self) -> None:
        """The wrapped model belongs to whoever made it; a run's wrapper closes nothing."""


__all__ = ["SeededModel"]
