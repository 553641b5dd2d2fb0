"""Level files of the progressive suite: the pydantic shape, loading and validation.

One JSON file per level (``L01.json`` …) with its articles as Markdown under ``articles/``.
The format is shared with the people who write the content, so validation is strict and a
bad file is one line naming the file and what to fix, never a traceback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from moot.errors import MootError

SUITE_DIR = Path(__file__).parent / "data" / "progressive"
"""The bundled suite: ``L01.json`` … ``L12.json`` and ``articles/``."""

_LEVEL_ID = re.compile(r"^L(\d{1,2})$")


class Rubric(BaseModel):
    """How an answer is graded (see ``moot.eval.rubric`` for the exact semantics)."""

    required: list[list[str]] = Field(default_factory=list)
    """Groups of alternatives; a group is satisfied when any alternative matches."""
    forbidden: list[str] = Field(default_factory=list)
    """Patterns that make the answer wrong (score 0) when any matches."""
    expects_unknown: bool = False
    """The answer is not in the articles: only a plain "the sources don't say" passes."""

    @field_validator("required")
    @classmethod
    def _groups_not_empty(cls, groups: list[list[str]]) -> list[list[str]]:
        for group in groups:
            if not group or any(not str(alt).strip() for alt in group):
                raise ValueError("a required group is empty or has an empty alternative")
        return groups

    @field_validator("required", "forbidden")
    @classmethod
    def _regexes_compile(cls, value: list) -> list:
        flat = [a for g in value for a in g] if value and isinstance(value[0], list) else value
        for alt in flat:
            if isinstance(alt, str) and alt.startswith("re:"):
                try:
                    re.compile(alt[3:])
                except re.error as exc:
                    raise ValueError(f"pattern {alt!r} is not a valid regex: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _something_to_check(self) -> Rubric:
        if not self.required and not self.expects_unknown:
            raise ValueError("a rubric needs required groups unless expects_unknown is true")
        return self


class Question(BaseModel):
    """One question with its expected answer and rubric."""

    id: str
    question: str = Field(min_length=1)
    expected: str = Field(min_length=1)
    rubric: Rubric
    pass_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    """The score at which the question passes (1.0 = every required group)."""


class ArticleRef(BaseModel):
    """An article to learn, relative to the suite's ``articles/`` folder."""

    file: str
    source: str
    published: str | None = None


class Teaching(BaseModel):
    """L7 only: the topic the teacher teaches and the question ids the student is quizzed on."""

    topic: str = Field(min_length=1)
    quiz: list[str] = Field(min_length=1)


class Level(BaseModel):
    """One level of the suite."""

    level: str
    name: str
    about: str = ""
    """What the level tests, for the report and the docs; never shown to the agent."""
    articles: list[ArticleRef] = Field(min_length=1)
    questions: list[Question] = Field(min_length=1)
    teaching: Teaching | None = None
    path: Path | None = Field(default=None, exclude=True)
    """The file it was loaded from (for messages and to find the articles)."""

    @field_validator("level")
    @classmethod
    def _level_id(cls, value: str) -> str:
        if not _LEVEL_ID.match(value):
            raise ValueError(f"level {value!r} must look like L1 … L12")
        return value

    @model_validator(mode="after")
    def _ids_consistent(self) -> Level:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids repeat")
        if self.teaching is not None:
            unknown = [qid for qid in self.teaching.quiz if qid not in ids]
            if unknown:
                raise ValueError(f"teaching.quiz names unknown question ids {unknown}")
        return self

    @property
    def number(self) -> int:
        return int(self.level[1:])

    def question(self, qid: str) -> Question:
        return next(q for q in self.questions if q.id == qid)

    @property
    def articles_dir(self) -> Path:
        """The folder its articles' paths are relative to."""
        return (self.path.parent if self.path else SUITE_DIR) / "articles"

    def article_path(self, article: ArticleRef) -> Path:
        return self.articles_dir / article.file


def _bad(path: Path, why: str, fix: str = "correct the level file (format: docs/eval.md)") -> MootError:
    return MootError(f"level file {path}: {why}", fix=fix)


def load_level(path: str | Path) -> Level:
    """Load and validate one level file; its articles must exist and be non-empty."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad(path, "does not exist", fix="check the path") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"is not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise _bad(path, "must hold one JSON object")
    try:
        level = Level.model_validate({**raw, "path": path})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _bad(path, f"{where}: {first['msg']}" if where else first["msg"]) from None
    for article in level.articles:
        article_path = level.article_path(article)
        if not article_path.resolve().is_relative_to(level.articles_dir.resolve()):
            raise _bad(path, f"article {article.file} is outside {level.articles_dir}",
                       fix="give article paths relative to the articles folder, without '..'")  # fmt: skip
        if not article_path.is_file() or not article_path.read_text(encoding="utf-8").strip():
            raise _bad(path, f"article {article.file} is missing or empty",
                       fix=f"add it under {article_path.parent.parent}")  # fmt: skip
    return level


def normalise_level_id(text: str) -> str:
    """``l3``, ``L03`` and ``3`` all mean ``L3``."""
    value = text.strip().upper().removeprefix("L")
    if not value.isdigit():
        raise MootError(f"unknown level {text.strip()!r}", fix="name levels like L1,L3 (L1 … L12)")
    return f"L{int(value)}"


def load_suite(directory: str | Path | None = None, levels: list[str] | None = None) -> list[Level]:
    """The suite's levels in order (all of them, or those named: ``["L1", "L3"]``)."""
    directory = Path(directory) if directory is not None else SUITE_DIR
    files = sorted(directory.glob("L*.json"))
    if not files:
        raise MootError(f"no level files (L01.json …) in {directory}", fix="point --suite at a folder of level files")
    available: dict[str, Path] = {}
    for file in files:
        match = re.match(r"^L(\d+)\.json$", file.name)
        if match:
            name = f"L{int(match.group(1))}"
            if name in available:
                raise MootError(f"two level files for {name} in {directory}: {available[name].name} and {file.name}",
                                fix="keep one of them")  # fmt: skip
            available[name] = file
    if not available:
        raise MootError(f"no level files named like L01.json in {directory} (found {', '.join(f.name for f in files)})",
                        fix="name level files L<number>.json, e.g. L01.json")  # fmt: skip
    wanted = [normalise_level_id(v) for v in levels] if levels else sorted(available, key=lambda v: int(v[1:]))
    missing = [v for v in wanted if v not in available]
    if missing:
        raise MootError(f"unknown level {', '.join(missing)} (this suite has {', '.join(sorted(available, key=lambda v: int(v[1:])))})",
                        fix="name levels that exist, e.g. --levels L1,L3")  # fmt: skip
    loaded = []
    for name in dict.fromkeys(wanted):
        level = load_level(available[name])
        if level.level != name:
            raise _bad(available[name], f"says level {level.level!r} but its file name says {name}")
        loaded.append(level)
    return loaded


__all__ = ["SUITE_DIR", "ArticleRef", "Level", "Question", "Rubric", "Teaching", "load_level", "load_suite",
           "normalise_level_id"]
