"""Shared set-up for the graph team's tests: two small sources and a model that plays the five
agents, routed by the output schema each agent asks for (never by prompt text)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel

MILL = """# The Ostby mill

The Ostby mill draws water from the Varn river. In 2024 the paper mill at Ostby discharges waste
into Lake Mira, because its filters are old.

Fishing near Lake Mira declined, but the reason is unclear.
"""

RIVER = """# The Varn river

The Varn river supplies Lake Mira. Farmers along the Varn river use its water for barley.
"""


def make_sources(root: Path) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "mill.md").write_text(MILL)
    (root / "river.md").write_text(RIVER)
    return [root / "mill.md", root / "river.md"]


def enum_of(schema: dict[str, Any], definition: str, prop: str) -> list[str]:
    """The ids an agent may name: the enum (or const) the per-call schema allows."""
    defs = schema.get("$defs", {})
    spec = defs[definition]["properties"][prop] if definition in defs else {}
    if "items" in spec:
        spec = spec["items"]
    return list(spec.get("enum") or ([spec["const"]] if "const" in spec else []))


MAPPING = {
    "entities": [
        {"label": "Ostby mill", "why_relevant": "the polluter", "quote": "The Ostby mill draws water from the Varn river"},
        {"label": "Varn river", "why_relevant": "water source", "quote": "Varn river"},
        {"label": "the paper mill at Ostby", "why_relevant": "same mill", "quote": "the paper mill at Ostby discharges waste"},
        {"label": "Lake Mira", "why_relevant": "the lake", "quote": "into Lake Mira"},
        {"label": "Fishing", "why_relevant": "declined", "quote": "Fishing near Lake Mira declined"},
        {"label": "Quantum reactor", "why_relevant": "invented", "quote": "a quantum reactor cools the lake"},
    ],
    "relationships": [
        {"quote": "The Ostby mill draws water from the Varn river", "source": "Ostby mill", "type": "uses", "target": "Varn river"},
        {"quote": "discharges waste into Lake Mira", "source": "the paper mill at Ostby", "type": "decreases", "target": "Lake Mira"},
        {"quote": "the river feeds the lake", "source": "Varn river", "type": "supplies", "target": "Lake Mira"},
        {"quote": "made up", "source": "Fishing", "type": "correlates_with", "target": "Ostby mill"},
    ],
    "gaps": [{"quote": "Fishing near Lake Mira declined, but the reason is unclear", "between": ["Lake Mira", "Fishing"]},
             {"quote": "The Varn river supplies Lake Mira", "between": ["Varn river"]}],  # states no doubt: no gap
}
"""What the mapper "sees": its entities call gets ``entities``; its links call gets the
relationships and gaps whose labels the call's schema allows."""


class GraphScript:
    """Plays every agent; counts calls by schema; can make mapper calls wait for each other."""

    def __init__(self, *, mapping: dict[str, Any] | None = None, bad_mapper: int = 0,
                 barrier_after: int | None = None, barrier: asyncio.Barrier | None = None,
                 skeptic_supports: bool = False) -> None:
        self.mapping = mapping if mapping is not None else MAPPING
        self.bad_mapper = bad_mapper
        """How many mapper replies break the schema before good ones come."""
        self.barrier_after, self.barrier = barrier_after, barrier
        self.skeptic_supports = skeptic_supports
        self.calls: dict[str, int] = {}
        self.tasks: dict[str, list[str]] = {}

    async def __call__(self, request: ModelRequest) -> Any:
        assert request.output is not None, "every graph agent answers under a schema"
        name, schema = request.output.name, request.output.json_schema
        self.calls[name] = self.calls.get(name, 0) + 1
        self.tasks.setdefault(name, []).append(str(request.messages[1].content))
        if name == "MapperOutput":
            if self.bad_mapper:
                self.bad_mapper -= 1
                return '{"entities": "not a list"}'
            if self.barrier is not None and self.calls[name] > (self.barrier_after or 0):
                await asyncio.wait_for(self.barrier.wait(), 5)  # passes only if two mappers are in flight at once
            return {"entities": self.mapping["entities"]}
        if name == "LinksOutput":
            if self.barrier is not None and self.calls[name] > (self.barrier_after or 0):
                await asyncio.wait_for(self.barrier.wait(), 5)
            allowed = set(enum_of(schema, "MappedRelation", "source"))
            return {"relationships": [r for r in self.mapping.get("relationships", [])
                                      if {r["source"], r["target"]} <= allowed],
                    "gaps": [g for g in self.mapping.get("gaps", []) if set(g["between"]) <= allowed]}
        if name == "MergeOutput":
            n = str(request.messages[1].content).count('" and "')
            return {"decisions": [{"pair": i, "same": True} for i in range(1, n + 1)]}
        if name == "QuantifierOutput":
            return {"relationships": [{"id": i, "evidence_kind": "causal", "theoretical_basis": True, "counter_evidence": False}
                                      for i in enum_of(schema, "EdgeLabel", "id")],
                    "entities": [{"id": i, "source_kind": "study"} for i in enum_of(schema, "EntityLabel", "id")]}
        if name == "SkepticOutput":
            ids = enum_of(schema, "Challenge", "id")
            return {"challenges": [{"id": i, "supported": self.skeptic_supports or k > 0,
                                    "would_disconfirm": f"a source saying {i} is wrong"} for k, i in enumerate(ids)]}
        if name == "PlaceholderOutput":
            return {"placeholders": [{"gap": g, "label": "overfishing or pollution", "confirm": "catch records",
                                      "disconfirm": "stable catches"} for g in enum_of(schema, "PlaceholderProposal", "gap")]}
        if name == "HypothesizerOutput":
            nodes = enum_of(schema, "HypothesisOut", "central_nodes")
            return {"hypotheses": [
                {"name": "River chain", "rationale": "water flows one way", "pattern": "linear", "central_nodes": nodes[:2],
                 "placeholders": [], "testable_predictions": ["upstream changes show downstream later"]},
                {"name": "Lake hub", "rationale": "everything meets at the lake", "pattern": "hub_spoke",
                 "central_nodes": nodes[-1:], "placeholders": [{"label": "runoff", "reason": "farms", "position": "bridge"}],
                 "testable_predictions": ["the lake changes with any input"]}]}
        raise AssertionError(f"unexpected schema {name}")


def model_for(script: GraphScript) -> FunctionModel:
    return FunctionModel(script)
