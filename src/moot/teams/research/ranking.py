"""The order in which candidate source lines are shown: structure, weighted by a fitted model.

The line picker (a 0.5B model) mostly takes the first lines it is shown, so the order decides
much of what is quoted. Each candidate line is described by a few *structural* features —
does it hold the question's words, inside a condition or elsewhere; is it a condition, an
``except``, an early ``return``, a ``raise``; does its condition compare with a constant or call
a function that decides; is it a signature, docstring prose, a line in a callee or a caller —
and scored by a weighted sum. No feature names a package, a word or a pattern of one: the old
hand-set scores had an httpx-specific ``codes.X`` rule, and their eleven constants were tuned
by eye on the eval's twelve questions.

The weights start from a structural prior (conditions, raises and removals up; signatures,
prose and pure delegation down), in units of one question word (``terms`` = 1). A pairwise
logistic regression of "this line alone makes a ground-truth claim" on the features, fitted on
httpx and checked on click and the other way round (``scripts/fit_research_ranking.py --fit``),
did not beat the prior on the held-out set at any regularisation (2026-11-27: mean recall of
the top 4/8/16 lines 0.35–0.40 for the fits, 0.42 for the prior), so the prior is kept; its
recall on packages the fit never saw (``--suite``) is in docs/code-research.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.teams.research.quotes import CodeLine

FEATURES = (
    "terms",          # the question's words in the line and what it does, each weighted by its rarity
    "cond_terms",     # the question's words inside the condition itself
    "no_terms",       # none of the question's words (a deciding line offered for its structure)
    "condition",      # an if / elif / while / case / assert / conditional expression
    "handler",        # an except / catch, an else / default branch
    "raises",         # it raises, or its branch ends by raising
    "early_return",   # its branch ends by returning (an early exit)
    "returns",        # a return statement (not a branch)
    "literal",        # the condition (or line) compares with a literal or a constant
    "deciding_call",  # its condition calls a function of the repository
    "assignment",     # it sets a value
    "removal",        # it removes something (pop, del, remove, discard, clear, delete)
    "signature",      # a def / class / function line (the index section states it)
    "prose",          # a docstring or comment line
    "delegate",       # it only hands the work to another candidate definition
    "callee",         # it is in a function that a chosen definition calls
    "caller",         # it is in a function that calls a chosen definition
    "module",         # a module-level assignment
)

WEIGHTS: dict[str, float] = {
    "terms": 1.0, "cond_terms": 0.5, "no_terms": 0.0, "condition": 1.0, "handler": 0.5, "raises": 1.5,
    "early_return": 0.5, "returns": 0.25, "literal": 1.0, "deciding_call": 0.5, "assignment": 0.5,
    "removal": 1.0, "signature": -1.5, "prose": -1.0, "delegate": -1.0, "callee": 0.0, "caller": 0.0,
    "module": 0.0,
}  # fmt: skip
"""The structural prior, kept because no fitted set of weights beat it on held-out data (see
the module docstring and docs/code-research.md)."""

SPREAD = 0.5
"""How much lower each further line of one definition ranks (keeps the list spread over definitions)."""


def score(features: Mapping[str, float], weights: Mapping[str, float] | None = None) -> float:
    w = WEIGHTS if weights is None else weights
    return sum(w.get(name, 0.0) * value for name, value in features.items())


def rank(lines: Sequence[CodeLine], weights: Mapping[str, float] | None = None) -> list[CodeLine]:
    """``lines`` best first: by score, each definition's later lines :data:`SPREAD` lower a
    rank (one long function cannot fill the list), ties in the order given."""
    scored = [(score(c.features, weights), n, c) for n, c in enumerate(lines)]
    groups: dict[str, list[tuple[float, int, CodeLine]]] = {}
    for item in scored:
        groups.setdefault(item[2].symbol, []).append(item)
    ranked: list[tuple[float, int, CodeLine]] = []
    for group in groups.values():
        for position, (value, n, line) in enumerate(sorted(group, key=lambda item: (-item[0], item[1]))):
            ranked.append((value - SPREAD * position, n, line))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [line for _, _, line in ranked]


__all__ = ["FEATURES", "SPREAD", "WEIGHTS", "rank", "score"]
