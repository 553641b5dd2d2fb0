"""Learning: documents in, facts out (``learn``, ``learn_file``, ``learn_files``; see docs/learning-team.md)."""

from __future__ import annotations

from moot.teams.learning.ingest.chunking import Chunk, UnitChunk, chunk_units, split_into_chunks
from moot.teams.learning.ingest.documents import Document, collect_files, read_document
from moot.teams.learning.ingest.learning import (
    DEFAULT_PARALLEL,
    EXTRACTIONS,
    FileOutcome,
    learn,
    learn_file,
    learn_files,
    learn_sync,
)
from moot.teams.learning.ingest.reports import LearningError, LearningStopped, LearnProgress, LearnReport
from moot.teams.learning.ingest.rewrite import ExtractedFact, ExtractedFacts

__all__ = [
    "DEFAULT_PARALLEL",
    "EXTRACTIONS",
    "Chunk",
    "Document",
    "ExtractedFact",
    "ExtractedFacts",
    "FileOutcome",
    "LearnProgress",
    "LearnReport",
    "LearningError",
    "LearningStopped",
    "UnitChunk",
    "chunk_units",
    "collect_files",
    "learn",
    "learn_file",
    "learn_files",
    "learn_sync",
    "read_document",
    "split_into_chunks",
]
