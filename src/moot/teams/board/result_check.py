"""The cheap, deterministic half of goal validation: does a result report a failure?

The seed validated every result with a model call ("does this advance the goal? YES/NO"). On the
embedded 0.5B model that check accepted ``no file 'results/wind.md' in the workspace`` as a
valid summary of a document. A result that *says* it failed is recognisable without a model:
this module looks for the phrases our own tools and small models use to report failure, and
:meth:`moot.teams.board.agents.BaseAgent.process` rejects such a result before it spends a
model call on the goal check.

The patterns are deliberately narrow so that a real answer which mentions an error in passing
("the error rate of panels is 0.5 % a year") is not rejected:

- the result is empty or only punctuation;
- the result *opens* with a failure report ("no file …", "error: …", "I cannot …", "not found");
- a short result (one or two sentences) contains a strong failure phrase anywhere
  ("does not exist", "could not find", "no such file", "unable to" …) — a long answer that
  quotes such a phrase is left to the model check.
"""

from __future__ import annotations

import re

SHORT_RESULT_CHARS = 240
"""Up to this length a strong failure phrase anywhere rejects the result."""

_OPENERS = re.compile(
    r"""^\W*(?:
        no\s+(?:such\s+)?(?:file|folder|directory|document|local\s+document|results?|matches|match|information|data|content)\b
      | nothing\s+(?:was\s+)?found\b
      | not\s+found\b
      | (?:an?\s+)?error\b
      | exception\b
      | traceback\b
      | failed\b
      | fail(?:ure)?\s*:
      | (?:i\s+)?(?:cannot|can't|can\s*not|could\s+not|couldn't|am\s+unable|was\s+unable|unable)\b
      | i\s+(?:do\s+not|don't)\s+(?:have|know|see)\b
      | (?:i'm|i\s+am)\s+(?:sorry|afraid|unable|not\s+able)\b
      | sorry\b
      | unfortunately\b
      | the\s+(?:file|folder|document|path)\s+\S+\s+(?:does\s+not|doesn't)\s+exist\b
      | there\s+(?:is|are)\s+no\s+(?:file|folder|document|results?|information|data)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""A result that begins like this reports a failure, whatever follows."""

_STRONG = re.compile(
    r"""(?:
        \bno\s+(?:such\s+)?file\b
      | \bno\s+folder\b
      | \bno\s+local\s+document\s+mentions\b
      | \b(?:does\s+not|doesn't|did\s+not|didn't)\s+exist\b
      | \bnot\s+found\b
      | \b(?:could\s+not|couldn't|cannot|can't|unable\s+to)\s+(?:find|locate|read|open|access|load|complete|perform|do)\b
      | \bno\s+(?:relevant\s+)?(?:information|results?|data)\s+(?:was\s+|were\s+)?(?:found|available)\b
      | \berror:\s
      | \btraceback\s+\(most\s+recent\s+call\s+last\)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
"""Phrases that, in a short result, mean the work was not done."""


def failure_reason(output: str) -> str | None:
    """Why ``output`` reports a failure instead of a result, or ``None`` when it looks like a result."""
    text = " ".join(str(output or "").split())
    if not re.search(r"\w", text):
        return "the result is empty"
    quoted = text if len(text) <= 120 else text[:117] + "..."
    if _OPENERS.search(text):
        return f"the result reports a failure: {quoted!r}"
    if len(text) <= SHORT_RESULT_CHARS:
        match = _STRONG.search(text)
        if match:
            return f"the result reports a failure ({match.group(0).strip()!r}): {quoted!r}"
    return None


__all__ = ["SHORT_RESULT_CHARS", "failure_reason"]
