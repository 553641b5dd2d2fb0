"""``auto`` mode: pick single-agent or the multi-agent pipeline from the question's shape.

The code-research design's heuristics, in this order (the first rule that matches decides, and its name is
reported with the result):

1. ``architecture-word``: "end-to-end", "flow", "architecture", "pipeline", "lifecycle",
   "interact", "overall" → multi (the answer spans subsystems);
2. ``symbol-lookup``: a short question (≤ 10 words) naming one code symbol (``snake_case``,
   ``CamelCase``, ``dotted.name`` or ``name()``) → single (a fact check: 1 agent, a few calls);
3. ``long-question``: more than 15 words → multi;
4. ``how-why``: starts with or contains "how" or "why" → multi;
5. ``default``: anything else → single (multi-agent overhead hurts simple questions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_BROAD = re.compile(r"\b(end[- ]to[- ]end|flows?|architecture|pipeline|lifecycle|interacts?|interaction|overall|subsystems?)\b", re.I)
_SYMBOL = re.compile(r"`[^`]+`|\b\w+\(\)|\b[a-z]+_[a-z_0-9]+\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b\w+\.\w+\b")
_HOW_WHY = re.compile(r"\b(how|why)\b", re.I)


@dataclass(frozen=True)
class Route:
    mode: Literal["single", "multi"]
    rule: str
    """The rule's name (see the module docstring)."""
    reason: str


def route(question: str) -> Route:
    """The mode ``auto`` uses for ``question``, with the rule that chose it."""
    words = question.split()
    if m := _BROAD.search(question):
        return Route("multi", "architecture-word", f"mentions {m.group(0)!r}: the answer spans subsystems")
    if len(words) <= 10 and (m := _SYMBOL.search(question)):
        return Route("single", "symbol-lookup", f"a short question about the symbol {m.group(0)!r}")
    if len(words) > 15:
        return Route("multi", "long-question", f"{len(words)} words (> 15): a broad question")
    if _HOW_WHY.search(question):
        return Route("multi", "how-why", "a how/why question needs several parts of the code")
    return Route("single", "default", "a short factual question: one agent is enough")
