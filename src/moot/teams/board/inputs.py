"""A step's inputs, gathered by Python before the model writes: files read through the tool,
and the results of the steps it depends on.

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
from moot.teams.board.backend import BoardBackend
from moot.teams.board.plan import MissingInput
from moot.teams.board.protocol import result_text
from moot.teams.board.routing import dependency_ids, step_of
from moot.teams.board.task import BoardTask

MAX_INPUT_CHARS = 6000
"""The most of one input shown to the model (a small model's context is short)."""


@dataclass
class StepInputs:
    """What a step was given: file texts by path and earlier results by task id."""

    files: dict[str, str] = field(default_factory=dict)
    results: list[tuple[str, str, str]] = field(default_factory=list)
    """``(task id, label, text)`` of each dependency, in plan order."""
    read_by: set[str] = field(default_factory=set)
    """The dependencies that read files themselves (their results are what the files say)."""

    def __bool__(self) -> bool:
        return bool(self.files or self.results)

    def sources(self) -> list[Source]:
        return [*(Source(path, text) for path, text in self.files.items()),
                *(Source(label, text) for _, label, text in self.results)]

    def file_sources(self) -> list[Source]:
        """The inputs that come straight from files: this step's files and its file-reading dependencies.

        What a comparison compares (another composing step's text repeats their values)."""
        return [*(Source(path, text) for path, text in self.files.items()),
                *(Source(label, text) for dep_id, label, text in self.results if dep_id in self.read_by)]

    def context(self) -> dict[str, str]:
        """The inputs as the executor's context block, each clipped to :data:`MAX_INPUT_CHARS`."""
        shown = {f"file {path}": _clip(text) for path, text in self.files.items()}
        shown.update({f"result of {label}": _clip(text) for _, label, text in self.results})
        return shown


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
    step = step_of(task)
    inputs = StepInputs()
    paths = [str(p) for p in step.get("files") or []]
    if paths:
        read_file = file_tools(workspace)["read_file"]
        for path in paths:
            text = str(read_file.function(path))
            if text.startswith("no file"):
                raise MissingInput(f"{path} is not in the workspace any more: {text}")
            inputs.files[path] = text
    for dep_id in dependency_ids(task):
        dep = board.get(dep_id)
        inputs.results.append((dep.id, step_label(dep), result_text(dep.result)))
        if step_of(dep).get("files"):
            inputs.read_by.add(dep.id)
    return inputs


__all__ = ["MAX_INPUT_CHARS", "StepInputs", "file_digest", "gather_inputs", "step_label"]
