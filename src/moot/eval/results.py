"""The results of a progressive run: everything the report is rebuilt from.

``moot eval report RESULTS.json`` re-renders the Markdown and the chart from this file alone,
so it holds every record (answer, grade, cost, run id, error-analysis stage), the settings,
and the learning cost per level (counted once per level: the knowledge base learned for a
level is reused by both modes and every run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from moot.errors import MootError
from moot.files import write_text_atomic

RESULTS_VERSION = 1


class QuestionRecord(BaseModel):
    """One answer to one question in one mode and run, graded."""

    level: str
    question_id: str
    question: str
    expected: str
    mode: str
    """``single``, ``multi``, ``context`` (one call with all the level's articles), or ``teaching`` (L7: the student's answer after being taught)."""
    run: int
    seed: int | None = None
    answer: str = ""
    score: float = 0.0
    passed: bool = False
    reason: str = ""
    """The rubric's reason in words."""
    judge: dict[str, Any] | None = None
    """The LLM judge's verdict (score, passed, reason, votes) when a judge ran."""
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    seconds: float = 0.0
    run_id: str | None = None
    error: str | None = None
    """Set when the agent raised instead of answering (graded as a wrong, empty answer)."""
    stage: str | None = None
    """Error analysis, for failed answers: learning, retrieval, budget, routing, synthesis, reasoning,
    metacognition or unknown."""
    stage_reason: str | None = None
    trace: dict[str, Any] | None = None


class LearnCost(BaseModel):
    """What learning a level's articles cost (once per level, shared by every mode and run)."""

    articles: int = 0
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    error: str | None = None


class LevelResult(BaseModel):
    """One level's records and learning cost."""

    level: str
    name: str
    about: str = ""
    questions: int
    learn: LearnCost = Field(default_factory=LearnCost)
    teaching: str | None = None
    """L7: ``ran``, ``not supported`` (the agent cannot teach; not scored as zero) or ``not run``."""
    records: list[QuestionRecord] = Field(default_factory=list)
    seconds: float = 0.0
    complete: bool = True
    """False while the level runs, and in a results file whose run was stopped mid-level."""


class EvalResults(BaseModel):
    """A whole progressive run."""

    version: int = RESULTS_VERSION
    suite: str = "progressive"
    agent: str = ""
    model: str = ""
    modes: list[str]
    runs: int
    temperature: float | None = None
    """The sampling temperature of the answers (None: the agent's own, temperature 0 for moot)."""
    seeds: list[int] = Field(default_factory=list)
    budget: str | None = None
    """The per-question budget preset the agent answered under."""
    judge_model: str | None = None
    judge_votes: int | None = None
    role_models: dict[str, str] = Field(default_factory=dict)
    """Which model played which role, where the agent says (the learning team's ``models=``)."""
    started_at: str = ""
    seconds: float = 0.0
    machine: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    levels: list[LevelResult] = Field(default_factory=list)

    def save(self, path: str | Path) -> Path:
        """Write atomically (temp file + rename): a crash never leaves half a results file."""
        path = Path(path)
        write_text_atomic(path, self.model_dump_json(indent=1))
        return path

    @classmethod
    def load(cls, path: str | Path) -> EvalResults:
        path = Path(path)
        if not path.is_file():
            raise MootError(f"no results file at {path}", fix="pass the JSON written by moot eval progressive --json OUT")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls.model_validate(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MootError(f"{path} is not valid JSON ({exc})", fix="pass the JSON written by moot eval progressive --json OUT") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise MootError(f"{path} is not a progressive results file ({where}: {first['msg']})",
                            fix="pass the JSON written by moot eval progressive --json OUT") from None  # fmt: skip


__all__ = ["RESULTS_VERSION", "EvalResults", "LearnCost", "LevelResult", "QuestionRecord"]
