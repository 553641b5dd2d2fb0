"""Shared by the learning team's specialist tests: one question to a team on scripted models."""

from __future__ import annotations

import re
from typing import Any

from moot.memory import KnowledgeBase
from moot.models.testing import FunctionModel, by_agent
from moot.teams.learning import LearningTeam

DONT_KNOW = "I do not know."


def ask(kb: KnowledgeBase, question: str, routes: dict[str, Any], mode: str = "multi",
        default: Any = DONT_KNOW) -> tuple[Any, FunctionModel]:
    """The team's reply to ``question`` and the model (for its requests). Agents without a route in
    ``routes`` answer ``default``; ``default=None`` makes an unrouted agent fail the test."""
    model = FunctionModel(by_agent(routes, default=default))
    return LearningTeam(kb, model=model, store=False).ask_sync(question, mode=mode), model


def _options(slot: dict[str, Any]) -> list[str]:
    return list(slot.get("enum") or [slot.get("const", "")])


def choose_labels(schema: dict[str, Any], task: str) -> dict[str, Any]:
    """What the fact labeller answers, chosen only among the options the schema offers each numbered
    sentence of ``task``: the first name; the word right after the sentence's first number (else the
    first word offered); the first thing a pointing word may mean. Deterministic, for tests."""
    items = schema["properties"]["labels"].get("prefixItems", [])
    lines = [line for line in task.splitlines() if re.match(r"^\d+\. ", line)]
    assert len(items) == len(lines), (len(items), len(lines))
    labels = []
    for item, line in zip(items, lines):
        slots = [_options(slot) for slot in item["prefixItems"]]
        entity = next((o for o in slots[0] if o), "")
        after = re.search(r"(?<![\w])\d[\d,.]* ([a-z]+)", line.split(". ", 1)[1])
        prop = after.group(1) if after and after.group(1) in slots[1] else next((o for o in slots[1] if o), "")
        labels.append([entity, prop, *([next((o for o in slots[2] if o), "")] if len(slots) > 2 else [])])
    return {"labels": labels}


def label_units(request: Any) -> dict[str, Any]:
    """A FunctionModel route for the ``fact-labeller`` agent (see :func:`choose_labels`)."""
    assert request.output is not None and request.output.name == "SentenceLabels"
    return choose_labels(request.output.json_schema, request.messages[-1].content)


def label_body(body: dict[str, Any]) -> str | None:
    """For an OpenAI-compatible stub server: the labeller's JSON answer when ``body`` is a labelling
    request (its response format is the SentenceLabels schema), else ``None``."""
    response_format = body.get("response_format") or {}
    schema = (response_format.get("json_schema") or {})
    if schema.get("name") != "SentenceLabels":
        return None
    import json

    return json.dumps(choose_labels(schema["schema"], body["messages"][-1]["content"]))
