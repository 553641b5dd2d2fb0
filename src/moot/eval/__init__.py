"""Evaluation harnesses: the progressive L1–L12 suite and the research-team benchmark.

A capability layer below teams: nothing here imports ``moot.teams``. Teams provide
adapters (see ``moot.eval.adapter``) that the runners drive.
"""

from __future__ import annotations
