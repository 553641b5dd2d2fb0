"""Reducers: how a task's dependency outputs are combined before the task sees them.

A reducer takes ``{dependency id: output}`` (in ``depends_on`` order) and returns one value.
Every fan-in goes through one, so parallel results are never silently overwritten: the
default keeps each output under its id, and :func:`merge_dicts_strict` refuses to pick a
winner when two branches disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from moot.errors import MootError

Reducer = Callable[[Mapping[str, Any]], Any]
"""``(dependency outputs by task id) -> value given to the task``."""


class ReducerConflict(MootError):
    """Two dependencies produced different values for the same key."""

    fix = "use the default reducer (keeps each result under its task id) or a custom one"


def collect(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """Each dependency's output under its task id (the default)."""
    return dict(outputs)


def concat_text(outputs: Mapping[str, Any]) -> str:
    """All outputs as one text, each under a ``[task id]`` heading, in dependency order."""
    from moot.runtime.agent import render_value

    return "\n\n".join(f"[{task_id}]\n{render_value(value)}" for task_id, value in outputs.items())


def merge_lists(outputs: Mapping[str, Any]) -> list[Any]:
    """One list: list outputs are concatenated, other outputs appended, in dependency order."""
    merged: list[Any] = []
    for value in outputs.values():
        if isinstance(value, (list, tuple)):
            merged.extend(value)
        elif value is not None:
            merged.append(value)
    return merged


def merge_dicts_strict(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """One dict from dict outputs; a key that two outputs set to different values is an error."""
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for task_id, value in outputs.items():
        if hasattr(value, "model_dump"):
            value = value.model_dump()
        if not isinstance(value, Mapping):
            raise ReducerConflict(f"merge_dicts_strict: output of {task_id!r} is a {type(value).__name__}, not a dict")
        for key, item in value.items():
            if key in merged and merged[key] != item:
                raise ReducerConflict(
                    f"merge_dicts_strict: key {key!r} is {merged[key]!r} in {owner[key]!r} "
                    f"but {item!r} in {task_id!r}"
                )
            merged[key] = item
            owner.setdefault(key, task_id)
    return merged


__all__ = ["Reducer", "ReducerConflict", "collect", "concat_text", "merge_dicts_strict", "merge_lists"]
