"""A step's inputs, gathered by Python before the model writes: files read through the tool,
the results of the steps it depends on, and the files those steps read.

A typed plan step (``context.step``) names its inputs. The model is not trusted to fetch them:
on the embedded model the file agent asked for ``results/wind.md`` when the document was
``context/wind.md``, and a comparison step never saw its siblings' summaries. So the agent
calls its own ``read_file`` tool for each file (the same confined tool the model would call,
recorded as a tool call of the step's run) and reads each dependency's result from the board.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from moot.errors import MootError
from moot.teams.board.agent_tools import confine, file_tools
from moot.teams.board.answer_check import Source
from moot.teams.board.facts import fact_sentences
from moot.teams.board.backend import BoardBackend
from moot.teams.board.plan import MissingInput
from moot.teams.board.protocol import result_text
from moot.teams.board.routing import dependency_ids, step_of
from moot.teams.board.task import BoardTask

MAX_INPUT_CHARS = 6000
"""The most of one input shown to the model (a small model's context is short)."""


@dataclass
class StepInputs:
    """What a step was given: file texts by path, earlier results, and the files those results came from."""

    files: dict[str, str] = field(default_factory=dict)
    results: list[tuple[str, str, str]] = field(default_factory=list)
    """``(task id, label, text)`` of each dependency, in plan order."""
    dependency_files: dict[str, dict[str, str]] = field(default_factory=dict)
    """For each dependency that read files: those files (path → text), read again through the tool."""

    def __bool__(self) -> bool:
        return bool(self.files or self.results)

    def reads(self) -> dict[str, str]:
        """Every file read for this step (its own and its dependencies'), for the run's tool calls."""
        out = dict(self.files)
        for files in self.dependency_files.values():
            out.update(files)
        return out

    def sources(self) -> list[Source]:
        """What the result is checked against: its own files, and each dependency's result together
        with the files that dependency read (a fact from either is a fact the dependency handed on)."""
        own = [Source(path, text) for path, text in self.files.items()]
        return own + [Source(label, "\n".join([text, *self.dependency_files.get(dep_id, {}).values()]))
                      for dep_id, label, text in self.results]

    def file_sources(self) -> list[Source]:
        """The files themselves, one source per file: what a comparison's rows are built from
        (the same measure is written alike in two notes; a summary may have dropped it)."""
        out = [Source(path, text) for path, text in self.files.items()]
        for dep_id, _, _ in self.results:
            out.extend(Source(path, text) for path, text in self.dependency_files.get(dep_id, {}).items()
                       if path not in self.files)
        return out

    def context(self) -> dict[str, str]:
        """The inputs as the executor's context block, each clipped to :data:`MAX_INPUT_CHARS`."""
        shown = {f"file {path}": _clip(text) for path, text in self.files.items()}
        shown.update({f"result of {label}": _clip(text) for _, label, text in self.results})
        return shown


def fallback_text(inputs: StepInputs) -> str:
    """What a step hands on when its model could not write a result that passes the checks:
    the sentences of its files that hold facts, and its dependencies' results, as written."""
    parts = [f"{path}: {fact_sentences(text)}" for path, text in inputs.files.items() if fact_sentences(text)]
    parts += [f"{label}: {text}" for _, label, text in inputs.results if text.strip()]
    return "\n".join(parts)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_INPUT_CHARS else text[:MAX_INPUT_CHARS] + "\n[… cut]"


def file_digest(workspace: Path, path: str) -> str | None:
    """A short sha256 of a workspace file's bytes (which version of an input a step read), or ``None``."""
    try:
        target = confine(workspace, path)
        return hashlib.sha256(target.read_bytes()).hexdigest()[:16] if target.is_file() else None
    except (OSError, MootError):  # a vanished, unreadable or escaping file has no digest
        return None


def step_label(dep: BoardTask) -> str:
    """How a dependency is named to the model and in checks: the files it read, else its step."""
    step = step_of(dep)
    files = step.get("files") or []
    if files:
        return ", ".join(str(f) for f in files)
    number = step.get("number")
    return f"step {number} ({dep.description[:60]})" if number else dep.id


def gather_inputs(task: BoardTask, board: BoardBackend, workspace: Path) -> StepInputs:
    """Read the step's files through ``read_file`` and its dependencies' results from the board.

    Raises :class:`MissingInput` (not retryable) for a file that is not there any more.
    """
    inputs = StepInputs()
    read_file = file_tools(workspace)["read_file"]

    def read(path: str) -> str:
        text = str(read_file.function(path))
        if text.startswith("no file"):
            raise MissingInput(f"{path} is not in the workspace any more: {text}")
        return text

    for path in (str(p) for p in step_of(task).get("files") or []):
        inputs.files[path] = read(path)
    for dep_id in dependency_ids(task):
        dep = board.get(dep_id)
        inputs.results.append((dep.id, step_label(dep), result_text(dep.result)))
        dep_paths = [str(p) for p in step_of(dep).get("files") or []]
        if dep_paths:
            inputs.dependency_files[dep.id] = {p: inputs.files.get(p) or read(p) for p in dep_paths}
    return inputs


__all__ = ["MAX_INPUT_CHARS", "StepInputs", "fallback_text", "file_digest", "gather_inputs", "step_label"]
