"""Evaluation harnesses: the progressive L1–L12 suite and the research-team benchmark.

A capability layer below teams: nothing here imports ``moot.teams``. Teams provide
adapters (see ``moot.eval.adapter``) that the runners drive.
"""

from __future__ import annotations

from moot.eval.adapter import AgentAnswer, EvalAgent
from moot.eval.judge import LLMJudge
from moot.eval.levels import Level, Question, Rubric, load_level, load_suite
from moot.eval.report import render_markdown, write_report
from moot.eval.results import EvalResults, QuestionRecord
from moot.eval.rubric import grade
from moot.eval.runner import run_progressive

__all__ = ["AgentAnswer", "EvalAgent", "EvalResults", "LLMJudge", "Level", "Question", "QuestionRecord", "Rubric",
           "grade", "load_level", "load_suite", "render_markdown", "run_progressive", "write_report"]
