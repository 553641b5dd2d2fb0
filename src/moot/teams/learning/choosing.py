"""One way for a specialist to let the model choose: an enum of options under a schema.

Every specialist that resolves a question in Python still leaves the *choice* to the model where
Python cannot tell (which of two procedures, which name is the bridge, which sentence states the
cause, which date is the event's). The model fills one field constrained to the listed options,
so it cannot answer anything else; a failed call is no choice, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, create_model

from moot.models.base import Usage
from moot.runtime import EventBus, SubAgent


async def choose(agent: SubAgent, message: str, fields: Mapping[str, tuple[Sequence[str], str | None]], *, budget: Any,
                 bus: EventBus | None, run_id: str | None, task_id: str | None, prompt: str | None = None,
                 name: str = "Choice") -> tuple[dict[str, str] | None, Usage, int]:
    """Ask ``agent``'s model to fill ``fields`` — each ``name: (options, description)`` an enum of
    its options (``description`` None: none in the schema) — under ``agent``'s name, settings and
    budget (``prompt`` replaces its system prompt). Returns the choices (None when the call
    failed), the usage and the turns."""
    schema = create_model(name, **{  # type: ignore[call-overload]
        field: (Literal[tuple(options)], ... if description is None else Field(description=description))  # type: ignore[valid-type]
        for field, (options, description) in fields.items()})
    chooser = SubAgent(agent.name, agent.role, prompt if prompt is not None else agent.system_prompt, (),
                       agent._model or agent.model, output_type=schema, max_turns=2, settings=agent.settings)
    result = await chooser.run(message, budget=budget, bus=bus, run_id=run_id, task_id=task_id)
    if not result.ok:
        return None, result.usage, result.turns
    return {k: str(v) for k, v in result.output.model_dump().items()}, result.usage, result.turns


async def choose_one(agent: SubAgent, message: str, options: Sequence[str], *, budget: Any, bus: EventBus | None,
                     run_id: str | None, task_id: str | None, description: str = "") -> tuple[str | None, Usage, int]:
    """:func:`choose` with one field, ``choice``."""
    picked, usage, turns = await choose(agent, message, {"choice": (options, description)}, budget=budget, bus=bus,
                                        run_id=run_id, task_id=task_id)
    return (picked["choice"] if picked else None), usage, turns


async def choose_each(agent: SubAgent, heading: str, question: str, lists: Mapping[str, tuple[Sequence[Any], str]], *,
                      prompt: str, name: str, budget: Any, bus: EventBus | None, run_id: str | None,
                      task_id: str | None) -> tuple[dict[str, str] | None, Usage, int]:
    """One item per role, each from that role's own ranked list (``role: (items, description)``;
    items have ``id`` and ``render()``): the first of each, without a call, when every list holds
    one; otherwise the model chooses among the listed items, shown once each under ``heading``."""
    if all(len(items) == 1 for items, _ in lists.values()):
        return {role: items[0].id for role, (items, _) in lists.items()}, Usage(), 0
    shown = {item.id: item for items, _ in lists.values() for item in items}.values()
    menu = "\n".join(item.render() for item in shown)
    return await choose(agent, f"{heading}:\n{menu}\n\nQuestion: {question}",
                        {role: ([item.id for item in items], what) for role, (items, what) in lists.items()},
                        prompt=prompt, name=name, budget=budget, bus=bus, run_id=run_id, task_id=task_id)


__all__ = ["choose", "choose_each", "choose_one"]
