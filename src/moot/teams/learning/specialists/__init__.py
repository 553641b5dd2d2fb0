"""The learning team's specialists: one module each, one line each in :data:`REGISTRY`.

The plain draft comes first and always runs; the others run where their precondition holds
(``applies``), side by side. See :mod:`moot.teams.learning.ask.drafts` for the contract.
"""

from __future__ import annotations

from moot.teams.learning.specialists import compute, dates, plain, quote, sources, steps

REGISTRY = (
    plain.SPECIALIST,
    compute.SPECIALIST,
    dates.SPECIALIST,
    steps.SPECIALIST,
    sources.SPECIALIST,
    quote.SPECIALIST,
)
"""Every specialist, plain first."""

ROLES = tuple(s.name for s in REGISTRY)

__all__ = ["REGISTRY", "ROLES"]
