"""Typed breakdown plans: each step names its agent type, its inputs and its output.

Two ways to a plan, both ending in the same typed steps:

- **Python proposes** (:func:`propose_steps`) when the goal names files or spells out its steps:
  a step per file the goal names (read by the file agent), the goal's other steps after them
  receiving their results. The model only says what kind of goal it is (:func:`mark_kind`): a
  comparison's last step compares. On the embedded 0.5B model the free planner dropped the
  "compare" step of such goals and copied agents' descriptions into steps; a goal that names its
  files and steps needs no model to say what they are. A file the goal names that does not exist
  stops the breakdown with one line naming it (:class:`MissingInput`).
- **The planner writes it** (a model, under the schema :func:`plan_type`) for any other goal:
  only existing files can be named, steps that copy an agent's description are dropped
  (:func:`drop_echoes`), and :func:`repair` makes the rest consistent with no model call:
  inputs are files that exist and *earlier* steps; a step that reads files goes to an agent with
  the ``read_file`` tool (**a file read is the file agent's**); repeated steps are merged; a last
  step without inputs receives every earlier result; a comparison goal ends in a comparison.

The final step is the last one when it receives earlier results: its output is the goal's answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.errors import MootError
from moot.teams.board.agent_tools import TEXT_SUFFIXES
from moot.teams.board.backend import AgentSpec
from moot.teams.board.similarity import similarity
from moot.teams.board.steps import MAX_STEPS, explicit_steps, step_description

NEW_AGENT = "new_agent"
"""What the planner picks when no registered agent fits; triggers self-extension."""
OUTPUT_KINDS = ("facts", "summary", "comparison", "answer")
"""What a step hands on: the facts of its inputs, a summary, a comparison, an answer."""
GOAL_KINDS = ("summary", "comparison", "question", "other")
MAX_PLANNED = 5
SIBLING_SIMILARITY = 0.8
"""Two steps with the same agent and inputs this alike are one step."""
ECHO_SIMILARITY = 0.6
"""A planned step this close to a sentence of an agent's description copies it."""

_FILE_TOKEN = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z0-9]{1,5}))(?![\w/-])")


class MissingInput(MootError):
    """A file the goal or a step needs is not in the workspace. Not retryable: nothing would change."""

    fix = "put the file into the board's context/ folder (or correct the name) and submit the goal again"


@dataclass(eq=False)
class PlanStep:
    """One step of a plan, with its inputs as objects while the plan is repaired."""

    description: str
    agent: str
    files: list[str] = field(default_factory=list)
    after: list[PlanStep] = field(default_factory=list)
    output: str = "answer"
    added_by: str | None = None
    """Why Python added or changed this step (shown on the subtask as ``context.added_by``)."""
    uses_all_before: bool = False
    """Receives the result of every step before it (a composing step Python added or completed)."""

    def key(self) -> tuple[str, tuple[str, ...], tuple[int, ...]]:
        return self.agent, tuple(sorted(self.files)), tuple(sorted(id(a) for a in self.after))


def files_named(text: str) -> list[str]:
    """File names written in ``text`` (by format: a name ending in a text file's suffix)."""
    names: list[str] = []
    for match in _FILE_TOKEN.finditer(text):
        if f".{match.group(2).lower()}" in TEXT_SUFFIXES and match.group(1) not in names:
            names.append(match.group(1).rstrip("."))
    return names


def resolve_file(name: str, available: list[str]) -> str | None:
    """The workspace path ``name`` means: an exact path, ``context/`` + name, or the one file of that name."""
    clean = name.strip().lstrip("./")
    if clean in available:
        return clean
    if f"context/{clean}" in available:
        return f"context/{clean}"
    same = [p for p in available if PurePosixPath(p).name.lower() == PurePosixPath(clean).name.lower()]
    return same[0] if len(same) == 1 else None


def check_named_files(goal: str, available: list[str]) -> None:
    """Raise :class:`MissingInput` naming every file the goal names that is not in ``available``."""
    missing = [n for n in files_named(goal) if resolve_file(n, available) is None]
    if missing:
        shown = ", ".join(p for p in available if p.startswith("context/")) or "none"
        which = "is" if len(missing) == 1 else "are"
        raise MissingInput(f"the goal names {', '.join(missing)}, which {which} not in the workspace "
                           f"(files under context/: {shown})")


def plan_type(agent_types: list[str], files: list[str]) -> type[BaseModel]:
    """The planner's schema: a goal kind and 1-5 typed steps over these agents and files."""
    agents = tuple(dict.fromkeys([*agent_types, NEW_AGENT]))
    fields: dict[str, Any] = {
        "description": (str, Field(description="one concrete step, one short sentence", max_length=240)),
        "agent": (Literal[agents], Field(description="the agent type that does the step")),  # type: ignore[valid-type]
    }
    if files:
        fields["files"] = (list[Literal[tuple(files)]],  # type: ignore[valid-type]
                           Field(default_factory=list, max_length=4, description="files this step reads"))
    fields["after"] = (list[int], Field(default_factory=list, max_length=5,
                                        description="numbers of earlier steps whose results this step uses"))
    fields["output"] = (Literal[OUTPUT_KINDS], Field(description="what the step produces"))  # type: ignore[valid-type]
    step = create_model("PlanStep", **fields)
    return create_model(
        "Plan",
        kind=(Literal[GOAL_KINDS], Field(description="what the goal asks for")),  # type: ignore[valid-type]
        steps=(list[step], Field(min_length=1, max_length=MAX_PLANNED)),  # type: ignore[valid-type]
    )


def steps_from_output(output: Any) -> tuple[str, list[PlanStep]]:
    """The goal kind and the planner's steps, with ``after`` numbers turned into earlier steps."""
    steps: list[PlanStep] = []
    for number, raw in enumerate(output.steps, 1):
        description = " ".join(str(raw.description).split())
        if not description:
            continue
        after = [steps[n - 1] for n in dict.fromkeys(getattr(raw, "after", []) or []) if 1 <= n < number and n <= len(steps)]
        steps.append(PlanStep(description=description, agent=raw.agent, files=list(dict.fromkeys(getattr(raw, "files", []) or [])),
                              after=after, output=raw.output))
    return str(output.kind), steps


def _file_agent(specs: dict[str, AgentSpec]) -> str | None:
    readers = [name for name, spec in specs.items() if "read_file" in spec.tools]
    return "file" if "file" in readers else (readers[0] if readers else None)


def _compose_agent(steps: list[PlanStep], specs: dict[str, AgentSpec]) -> str:
    """Who writes a step made of earlier results: the planner's choice for such a step, else a non-file agent."""
    for step in reversed(steps):
        if step.after and step.agent in specs:
            return step.agent
    others = [name for name in specs if name not in ("file", "breakdown")]
    return others[0] if others else next(iter(specs))


def repair(goal: str, kind: str, steps: list[PlanStep], available: list[str], specs: dict[str, AgentSpec]) -> list[PlanStep]:
    """The planner's steps made consistent (see the module docstring); no model call.

    Raises :class:`MissingInput` when the goal names a file that is not in ``available``.
    """
    check_named_files(goal, available)
    reader = _file_agent(specs)
    for step in steps:
        step.files = list(dict.fromkeys(
            p for p in (resolve_file(f, available) for f in [*step.files, *files_named(step.description)]) if p))
        spec = specs.get(step.agent)
        if step.files and reader and step.agent != NEW_AGENT and (spec is None or "read_file" not in spec.tools):
            step.added_by = f"routing: a step that reads files goes to the {reader} agent (the planner chose {step.agent})"
            step.agent = reader
    steps = _merge_siblings(steps)
    last = steps[-1] if steps else None
    if last is not None and len(steps) > 1 and not last.files and not last.after:
        last.uses_all_before = True  # a last step with no inputs composes the others' results
    if kind == "comparison" and steps and not any(s.output == "comparison" for s in steps):
        if last is not None and (last.after or last.uses_all_before):
            last.output = "comparison"
        elif len(steps) > 1 and len(steps) < MAX_STEPS:
            steps.append(PlanStep(f"Answer the goal from the earlier steps' results: {goal}", _compose_agent(steps, specs),
                                  uses_all_before=True, output="comparison",
                                  added_by="plan check: a comparison goal ends in a step that compares the results"))
        elif len(steps) == 1 and len(steps[0].files) > 1:
            steps[0].output = "comparison"
    for index, step in enumerate(steps):
        if step.uses_all_before:
            step.after = list(dict.fromkeys([*step.after, *steps[:index]]))
    return steps[:MAX_STEPS]


def propose_steps(goal: str, available: list[str], specs: dict[str, AgentSpec]) -> list[PlanStep] | None:
    """The plan Python can propose by itself, or ``None`` when the goal names no file and spells out no steps.

    A goal that names files or lists its steps says what must happen; a 0.5B planner copied the
    agents' descriptions into its steps instead. So: one file step per file the goal names (an
    explicit step that names exactly that file gives its wording, else "Say what … reports, with its figures, dates and names");
    each explicit step that names no file becomes a step that receives every file step's result,
    the last of them every earlier result; a goal over several files with no such step gets a
    final step that is the goal itself. The model still says what kind of goal it is (:func:`mark_kind`).
    """
    check_named_files(goal, available)
    files = list(dict.fromkeys(p for p in (resolve_file(n, available) for n in files_named(goal)) if p))
    explicit = explicit_steps(goal)
    if not files and len(explicit) < 2:
        return None
    reader = _file_agent(specs)
    if reader is None:
        return None
    reads: dict[str, PlanStep] = {}
    composing: list[str] = []
    for step in explicit:
        named = list(dict.fromkeys(p for p in (resolve_file(n, available) for n in files_named(step)) if p))
        if len(named) == 1 and named[0] not in reads:
            reads[named[0]] = PlanStep(step_description(step), reader, named, output="summary")
        elif not named:
            composing.append(step)
    for path in files:
        if path not in reads:
            reads[path] = PlanStep(f"Say what {path} reports, with its figures, dates and names.", reader, [path],
                                   output="facts")
    steps = [reads[p] for p in files if p in reads] + [s for p, s in reads.items() if p not in files]
    if not composing and len(steps) > 1 and len(explicit) < 2:
        composing = [goal]
    if not composing and len(steps) == 1 and not explicit:
        steps[0].description = step_description(goal)  # one file, one step: the goal itself
        steps[0].output = "answer"
    writer = _compose_agent([], specs)
    file_steps = list(steps)
    for index, text in enumerate(composing):
        last = index == len(composing) - 1
        steps.append(PlanStep(step_description(text), writer, after=list(steps) if last else list(file_steps), output="answer"))
    return steps[:MAX_STEPS]


def mark_kind(steps: list[PlanStep], kind: str) -> list[PlanStep]:
    """The answering step's output, from the kind the model chose: a comparison's final step
    compares; a one-step plan that summarises is a summary (its figures are checked)."""
    if not steps:
        return steps
    last = steps[-1]
    if kind == "comparison" and (last.after or len(last.files) > 1):
        last.output = "comparison"
    elif kind == "summary" and (last.after or len(steps) == 1):
        last.output = "summary"
    return steps


def drop_echoes(steps: list[PlanStep], specs: dict[str, AgentSpec]) -> list[PlanStep]:
    """Steps that copy an agent's description instead of naming work (the 0.5B planner did) are dropped."""
    sentences = [s.strip() for spec in specs.values() for s in re.split(r"[.:;]\s+", spec.instructions) if s.strip()]
    kept = [step for step in steps if not any(similarity(step.description, s) >= ECHO_SIMILARITY for s in sentences)]
    for step in kept:
        step.after = [a for a in step.after if a in kept]
    return kept


def _merge_siblings(steps: list[PlanStep]) -> list[PlanStep]:
    """One step per piece of work: a step with the same agent and inputs as an earlier one and
    (nearly) the same words is dropped, and steps that used it use the earlier one."""
    kept: list[PlanStep] = []
    replaced: dict[int, PlanStep] = {}
    for step in steps:
        step.after = [replaced.get(id(a), a) for a in step.after]
        twin = next((k for k in kept if k.key() == step.key() and similarity(k.description, step.description) >= SIBLING_SIMILARITY), None)
        if twin is not None:
            replaced[id(step)] = twin
            continue
        kept.append(step)
    for step in kept:
        step.after = list(dict.fromkeys(replaced.get(id(a), a) for a in step.after))
    return kept


def final_step(steps: list[PlanStep]) -> PlanStep | None:
    """The step whose output is the goal's answer: the last one, when it receives earlier results."""
    return steps[-1] if steps and steps[-1].after else None


def describe_plan(steps: list[PlanStep]) -> list[dict[str, Any]]:
    """The plan as data for the goal's ``context.plan`` (and ``moot board status``)."""
    index = {id(s): n for n, s in enumerate(steps, 1)}
    return [{"step": n, "agent": s.agent, "description": s.description, "files": s.files,
             "after": [index[id(a)] for a in s.after if id(a) in index], "output": s.output}
            for n, s in enumerate(steps, 1)]


__all__ = [
    "GOAL_KINDS",
    "MissingInput",
    "check_named_files",
    "NEW_AGENT",
    "OUTPUT_KINDS",
    "PlanStep",
    "describe_plan",
    "drop_echoes",
    "mark_kind",
    "propose_steps",
    "files_named",
    "final_step",
    "plan_type",
    "repair",
    "resolve_file",
    "steps_from_output",
]
