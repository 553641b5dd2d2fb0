"""The built-in ``echo`` agent: completes any task without a model, for tests and benchmarks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moot.teams.board.specs import ECHO_SPEC

if TYPE_CHECKING:
    from moot.teams.board.backend import BoardBackend
    from moot.teams.board.task import BoardTask



class EchoAgent:
    """Takes every task and answers ``{"echo": description}``.

    ``delay_s`` lets tests hold a task long enough to kill the worker that holds it.
    """

    agent_type = "echo"

    def __init__(self, *, delay_s: float = 0.0, capabilities: list[str] | None = None) -> None:
        self.delay_s = delay_s
        self.capabilities = list(capabilities) if capabilities is not None else list(ECHO_SPEC.capabilities)

    async def should_handle(self, task: BoardTask, board: BoardBackend) -> bool:
        return True

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        if self.delay_s:
            import asyncio

            await asyncio.sleep(self.delay_s)
        return {"echo": task.description}


__all__ = ["ECHO_SPEC", "EchoAgent"]
