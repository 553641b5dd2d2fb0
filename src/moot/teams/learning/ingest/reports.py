"""What learning a source reports, and how it fails: the progress events, the report, the errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from moot.errors import MootError
from moot.memory import StoredFact
from moot.models.base import Usage


@dataclass(frozen=True)
class LearnProgress:
    """What ``progress`` is called with: once before extraction, after each chunk, once at the end."""

    source: str
    phase: str
    """``extracting`` or ``stored``."""
    chunks_done: int
    chunks_total: int
    facts_found: int


@dataclass
class LearnReport:
    """What learning one source did."""

    source: str
    published: date | datetime | None
    chunks: int
    facts_extracted: int
    """Clean facts the model produced (before duplicates were merged)."""
    facts_stored: int
    """New facts written to the knowledge base."""
    duplicates: int
    """Facts the knowledge base already held (merged, not stored twice)."""
    superseded: int
    """Facts already in the knowledge base whose value a new fact replaced."""
    dropped: int
    """Extracted items thrown away as empty or unusable (a label outside its sentence's options)."""
    model_calls: int
    usage: Usage
    seconds: float
    summary: str
    summary_from_model: bool
    run_id: str | None = None
    path: str | None = None
    facts: list[StoredFact] = field(default_factory=list, repr=False)
    unchanged: bool = False
    """True when this exact text was already learned from this source: nothing was asked or stored."""
    extraction: str = "select"
    """``select`` (the model labels the source's sentences) or ``rewrite`` (the model writes each fact)."""
    chunks_learned: int = 0
    """Chunks sent to the model: those whose text was not learned from this source before."""
    forgotten: int = 0
    """Passages of an earlier version of this source that it no longer holds, removed with their facts."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["published"] = self.published.isoformat() if self.published else None
        data["usage"] = self.usage.model_dump()
        data["facts"] = [f.to_dict() for f in self.facts]
        data["seconds"] = round(self.seconds, 3)
        return data


class LearningError(MootError):
    """Learning a source failed; nothing from it was stored."""


class LearningStopped(LearningError):
    """A model call failed or the budget stopped extraction: a runtime failure (the CLI exits 1)."""

    exit_code = 1


ProgressCallback = Callable[[LearnProgress], None]


__all__ = ["LearnProgress", "LearnReport", "LearningError", "LearningStopped", "ProgressCallback"]
