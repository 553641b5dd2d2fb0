"""Agents whose output schema has no ``$ref``: every nested model is written out in place.

With tools, the tool-choice grammar (``moot.models.toolchoice``) nests the output schema
inside an ``anyOf`` and the engine then cannot resolve ``#/$defs/...`` references
("cannot resolve $ref"), so a researcher or verifier with a nested pydantic model failed on
the embedded model. Inlining the definitions avoids that; validation still uses the pydantic
model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moot.models.base import OutputSchema
from moot.runtime import SubAgent


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by its definition and ``$defs`` dropped."""
    defs = schema.get("$defs", {})

    def walk(node: Any, depth: int = 0) -> Any:
        if depth > 20:  # a recursive model: leave the rest open rather than loop
            return {}
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = dict(defs.get(ref.rsplit("/", 1)[1], {}))
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return walk({**target, **extra}, depth + 1)
            return {k: walk(v, depth) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v, depth) for v in node]
        return node

    return walk(schema)


@dataclass
class InlineSchemaAgent(SubAgent):
    """A :class:`SubAgent` whose structured-output schema is sent with its references inlined."""

    def output_schema(self) -> OutputSchema | None:
        schema = SubAgent.output_schema(self)
        if schema is None:
            return None
        return schema.model_copy(update={"json_schema": inline_refs(schema.json_schema)})
