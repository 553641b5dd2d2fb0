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
from moot.teams.learning.ask.frame import QuestionFrame  # noqa: E402
from moot.teams.learning.ask.recall import Recall  # noqa: E402
from moot.teams.learning.team import ROLES, Answer, AnswerTrace, FactUsed, LearningTeam, SubAgentStep  # noqa: E402

__all__ += [
    "ROLES",
    "Answer",
    "AnswerTrace",
    "FactUsed",
    "LearningTeam",
    "QuestionFrame",
    "Recall",
    "SubAgentStep",
]
