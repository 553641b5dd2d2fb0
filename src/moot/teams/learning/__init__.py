"""The learning team: learns facts from content into a knowledge base, and answers from it.

Learning (``learn``, ``learn_file``) turns text into facts with temporal metadata in a
:class:`moot.memory.KnowledgeBase`; see ``docs/learning-team.md``.
"""

from __future__ import annotations

from moot.teams.learning.ingest import (
    Chunk,
    Document,
    ExtractedFact,
    ExtractedFacts,
    FileOutcome,
    LearningError,
    LearnProgress,
    LearnReport,
    collect_files,
    learn,
    learn_file,
    learn_files,
    learn_sync,
    read_document,
    split_into_chunks,
)

__all__ = [
    "Chunk",
    "Document",
    "ExtractedFact",
    "ExtractedFacts",
    "FileOutcome",
    "LearnProgress",
    "LearnReport",
    "LearningError",
    "learn",
    "collect_files",
    "learn_file",
    "learn_files",
    "learn_sync",
    "read_document",
    "split_into_chunks",
]

# Answering questions: the coordinator, the specialists and the LearningTeam facade.
from moot.teams.learning.coordinator import Classification, choose_mode, keyword_classify  # noqa: E402
from moot.teams.learning.team import Answer, AnswerTrace, FactUsed, LearningTeam, SubAgentStep  # noqa: E402
from moot.teams.learning.tools import CalculationError, calculate, safe_calculate, temporal_worksheet  # noqa: E402

__all__ += [
    "Answer",
    "AnswerTrace",
    "CalculationError",
    "Classification",
    "FactUsed",
    "LearningTeam",
    "SubAgentStep",
    "calculate",
    "choose_mode",
    "keyword_classify",
    "safe_calculate",
    "temporal_worksheet",
]
