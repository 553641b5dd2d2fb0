"""Shared set-up for the graph team's tests: small sources (one with front matter naming its
publisher) and a model that plays the five agents, routed by the output schema each agent asks
for (never by prompt text): the answer to each item is picked from the enum the schema allows."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel

MILL = """---
title: "Mill discharge under review"
source: Varn Valley Courier
published: 2024-05-02
---
# The Ostby mill

The Ostby mill draws water from the Varn river. In 2024 the paper mill at Ostby discharges waste
into Lake Mira, because its filters are old. The Varn Valley Courier asked the mill for comment.

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


def prop(schema: dict[str, Any], name: str, definition: str | None = None) -> dict[str, Any]:
    props = schema["$defs"][definition]["properties"] if definition else schema.get("properties", {})
    spec = props.get(name, {})
    if "items" in spec:
        spec = spec["items"]
    if "$ref" in spec:
        spec = schema["$defs"][spec["$ref"].rsplit("/", 1)[-1]]
    return spec


def options(spec: dict[str, Any]) -> list[str]:
    return list(spec.get("enum") or ([spec["const"]] if "const" in spec else []))


def own(schema: dict[str, Any], key: str, answer: str) -> str:
    """``answer`` if item ``key`` of the schema offers it (every item offers only answers of its own)."""
    offered = options(schema["properties"][key])
    assert answer in offered, (answer, offered[:3])
    return answer


def enum_of(schema: dict[str, Any], definition: str, field: str) -> list[str]:
    """The ids an agent may name: the enum (or const) a definition's field allows."""
    if definition not in schema.get("$defs", {}):
        return []
    return options(prop(schema, field, definition))


TYPES = {"Ostby mill": "facility", "paper mill at Ostby": "facility", "Varn river": "place", "Lake Mira": "place",
         "Fishing": "process", "waste": "substance", "Farmers": "organisation", "barley": "organism",
         "Varn Valley Courier": "publisher or author"}
"""What the mapper calls each candidate; anything else is "too general"."""

LINKS = {"Ostby mill uses Varn river", "Ostby mill produces waste", "waste decreases Lake Mira", "Varn river supplies Lake Mira",
         "Farmers uses Varn river", "Farmers uses barley"}
"""The relation sentences the mapper picks when a pair's options offer one."""


class GraphScript:
    """Plays every agent; counts calls by schema; can make mapper calls wait for each other."""

    def __init__(self, *, types: dict[str, str] | None = None, links: set[str] | None = None, bad_mapper: int = 0,
                 barrier: asyncio.Barrier | None = None, skeptic_supports: bool = False, same: bool = True) -> None:
        self.types = TYPES if types is None else types
        self.links = LINKS if links is None else links
        self.bad_mapper = bad_mapper
        """How many mapper replies break the schema before good ones come."""
        self.barrier = barrier
        self.skeptic_supports = skeptic_supports
        self.same = same
        """Whether a new label names the first known label offered."""
        self.calls: dict[str, int] = {}
        self.tasks: dict[str, list[str]] = {}
        self.seen_pairs: list[list[str]] = []

    async def __call__(self, request: ModelRequest) -> Any:
        if request.output is None and request.settings.top_logprobs:
            # a plain question: answered as a model that gives no odds, so the run goes the listed way
            self.calls["plain"] = self.calls.get("plain", 0) + 1
            return "yes"
        assert request.output is not None, "every graph agent answers under a schema"
        name, schema = request.output.name, request.output.json_schema
        self.calls[name] = self.calls.get(name, 0) + 1
        task = str(request.messages[1].content)
        self.tasks.setdefault(name, []).append(task)
        if name == "QuestionFocus":
            subjects, objects = options(prop(schema, "subject")), options(prop(schema, "object"))
            return {"subject": subjects[0], "object": objects[-2] if len(objects) > 1 else objects[0]}
        if name == "EntityChoices":
            if self.bad_mapper:
                self.bad_mapper -= 1
                return '{"c1": 7}'
            labels = re.findall(r'^c\d+\. "(.*)" \(in', task, re.M)
            # each candidate's answers are its own ("LABEL: type"); the scripted choice picks its type among them
            return {f"c{i}": own(schema, f"c{i}", f"{label}: {self.types.get(label, 'too general')}")
                    for i, label in enumerate(labels, 1)}
        if name == "AliasChoices":
            return {k: (options(v)[0] if self.same else "different") for k, v in schema["properties"].items()}
        if name == "LinkChoices":
            if self.barrier is not None:
                await asyncio.wait_for(self.barrier.wait(), 5)  # passes only if two link calls are in flight at once
            out = {}
            for key, spec in schema["properties"].items():
                offered = options(spec)
                self.seen_pairs.append(offered)
                out[key] = next((o for o in offered if o in self.links), next(o for o in offered if o.endswith(": no link")))
            return out
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
                 "key_links": [{"source": nodes[0], "type": enum_of(schema, "HypothesisLink", "type")[0], "target": nodes[-1]}],
                 "bridge": "none", "testable_predictions": [f"{nodes[0]} changes show in {nodes[-1]} later", "nothing at all"]},
                {"name": "Lake hub", "rationale": "everything meets at the lake", "pattern": "hub_spoke",
                 "central_nodes": nodes[-1:], "testable_predictions": ["the lake changes with any input"]}]}
        raise AssertionError(f"unexpected schema {name}")


def model_for(script: GraphScript) -> FunctionModel:
    return FunctionModel(script)
