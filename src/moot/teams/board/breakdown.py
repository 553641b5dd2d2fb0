"""TaskBreakdownAgent: splits a goal into a typed plan, without duplicates, loops or runaway depth.

A goal (type ``goal``) is the breakdown agent's by rule (:mod:`moot.teams.board.routing`); it
claims it without a model call. Its ``process``:

1. **depth limit** (emergency stop): a task at ``MAX_DEPTH`` (5) is executed directly, never
   split, and :class:`BoardTask` refuses a deeper task;
2. **equilibrium**: the root goal records its pending count at each breakdown; when it has not
   shrunk over :data:`EQUILIBRIUM_WINDOW` breakdowns the task is executed directly;
3. **files the goal names** must exist, checked before any model call
   (:class:`~moot.teams.board.plan.MissingInput` fails the goal with one line naming the file);
4. **the typed plan**: each step names its agent type, the files it reads, the earlier steps whose
   results it uses, and its output. When the goal names files or spells out its steps, Python
   proposes the plan (:func:`~moot.teams.board.plan.propose_steps`: a file step per named file, the
   goal's other steps after them) and the model only says what kind of task the final step is
   (``GoalKind``, one short call, none without a final step: a comparison compares values).
   Otherwise the planner writes the plan under a schema
   (:func:`~moot.teams.board.plan.plan_type`: only existing files are offered),
   steps that copy an agent's description are dropped, and :func:`~moot.teams.board.plan.repair`
   makes it do what the goal says, with no model call;
5. **de-duplication**: a step that does finished or running work again — the same agent on the
   same files (same bytes) with nearly the same words, lexically (0.8) or by one
   ``DuplicateCheck`` call when borderline — is still submitted, marked ``duplicate_of``: its
   agent reuses that result instead of redoing the work, and the steps after it keep their input;
6. **the goal's budget** (:mod:`moot.teams.board.goal_budget`) before submitting.

Each step becomes a subtask of type = its agent type, with ``context.step`` = its number, files,
file digests, dependencies (``after``, task ids) and output kind; the goal records its
``context.plan`` and ``context.final_step``, and is parked until its steps are done.

Self-extension: a step whose agent is ``new_agent`` gets a drafted, validated, registered
:class:`AgentSpec` (see :mod:`moot.teams.board.extension`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from moot.errors import MootError
from moot.models.base import Model, ModelSettings
from moot.runtime.agent import SubAgent
from moot.runtime.prompts import load_prompt
from moot.teams.board.agent_tools import document_files
from moot.teams.board.agents import BaseAgent, workspace_for
from moot.teams.board.backend import AgentSpec, BoardBackend
from moot.teams.board.extension import (
    BUILTIN_TYPES,
    InvalidSpecError,
    SpecDraft,
    spec_from_draft,
    validate_spec,
)
from moot.teams.board.goal_budget import GoalBudgetExceeded, charge, check_budget, root_of
from moot.teams.board.inputs import file_digest
from moot.teams.board.plan import (
    GOAL_KINDS,
    NEW_AGENT,
    PlanStep,
    check_named_files,
    describe_plan,
    drop_echoes,
    final_step,
    mark_kind,
    plan_type,
    propose_steps,
    repair,
    steps_from_output,
)
from moot.teams.board.protocol import AWAITING_SUBTASKS
from moot.teams.board.routing import step_of
from moot.teams.board.similarity import content_tokens, content_words, similarity
from moot.teams.board.specs import BREAKDOWN_SPEC
from moot.teams.board.task import MAX_DEPTH, BoardTask, TaskStatus

DUPLICATE_SIMILARITY = 0.8
"""At or above (same agent, same inputs): a duplicate without asking the model."""
BORDERLINE_SIMILARITY = 0.45
"""From here up to :data:`DUPLICATE_SIMILARITY`: the model decides (``DuplicateCheck``)."""
RECENT_TASKS = 50
EQUILIBRIUM_WINDOW = 3
FILE_PREVIEW_CHARS = 80
"""How much of each file's first line the planner sees next to its name."""


class GoalKind(BaseModel):
    """What a goal asks for: a comparison ends in a step that compares values Python computes."""

    kind: Literal[GOAL_KINDS]  # type: ignore[valid-type]


class DuplicateCheck(BaseModel):
    """The model's verdict on a borderline pair."""

    duplicate: bool
    reason: str = ""


class TaskBreakdownAgent(BaseAgent):
    """Breaks composite goals down; see the module docstring for the loop guards."""

    def __init__(
        self,
        *,
        model: Model | str | None = None,
        workspace: str | Path | None = None,
        allow_terminal: bool | None = None,
        spec: AgentSpec = BREAKDOWN_SPEC,
        **options: Any,
    ) -> None:
        """``options``: ``models``, ``store``, ``record``, ``bus`` as for :class:`BaseAgent`."""
        super().__init__(spec, model=model, workspace=workspace, allow_terminal=allow_terminal, **options)

    # ------------------------------------------------------------------ should_handle

    def precheck(self, task: BoardTask) -> bool:
        """At the depth limit only tasks nobody else can take (they require planning) are taken,
        and then executed directly."""
        if task.depth >= MAX_DEPTH:
            return bool(task.requirements)
        return True

    # ------------------------------------------------------------------ process

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        check_budget(board, task)
        if task.depth >= MAX_DEPTH:
            return await self._direct(task, board, f"depth limit {MAX_DEPTH} reached: executed directly, not broken down")
        stop = self._equilibrium(task, board)
        if stop:
            return await self._direct(task, board, stop)
        workspace = self.workspace or workspace_for(board)
        available = document_files(workspace)
        check_named_files(task.description, available)  # before any model call
        specs = {name: spec for name, spec in self.known_specs(board).items() if name != self.agent_type}
        proposed = propose_steps(task.description, available, specs)
        if proposed is not None:
            answering = final_step(proposed) or (proposed[0] if len(proposed) == 1 else None)
            kind = await self.goal_kind(answering.description, task, board) if answering is not None else "summary"
            steps = mark_kind(proposed, kind)
        else:
            kind, planned = await self.plan(task, board, specs, available, workspace)
            steps = repair(task.description, kind, drop_echoes(planned, specs), available, specs)
        if not steps:
            return await self._direct(task, board, "the plan had no usable step: executed directly")
        duplicates = await self.deduplicate(steps, task, board, workspace)
        check_budget(board, task, new_tasks=len(steps))
        subtasks = await self._subtasks(task, board, steps, specs, duplicates, workspace)
        for subtask in subtasks:
            board.submit(subtask)
        charge(board, task, tasks=len(subtasks))
        final = final_step(steps)
        plan = describe_plan(steps)
        for entry, subtask in zip(plan, subtasks):
            entry["task"] = subtask.id
        fresh = board.get(task.id)
        context = {**fresh.context, "plan": plan, "goal_kind": kind}
        if final is not None:
            context["final_step"] = subtasks[steps.index(final)].id
        board.update(fresh.model_copy(update={"subtasks": [*fresh.subtasks, *(s.id for s in subtasks)], "context": context}))
        return AWAITING_SUBTASKS

    async def _direct(self, task: BoardTask, board: BoardBackend, note: str) -> dict[str, Any]:
        output = await self.execute(task, board, note=note)
        return {"agent": self.agent_type, "output": output, "note": note}

    def _equilibrium(self, task: BoardTask, board: BoardBackend) -> str | None:
        """Record the root's pending count; a reason to stop splitting when it keeps growing."""
        root = root_of(board, task)
        pending = sum(1 for t in board.list(TaskStatus.PENDING) if (t.root_id or t.id) == root.id)
        history = [int(n) for n in root.context.get("breakdown_pending", [])][-EQUILIBRIUM_WINDOW:]
        try:
            board.update(root.model_copy(update={"context": {**root.context, "breakdown_pending": [*history, pending]}}))
        except MootError:
            pass  # the root moved meanwhile; the next breakdown records again
        window = [*history, pending]
        if len(window) > EQUILIBRIUM_WINDOW and all(a <= b for a, b in zip(window, window[1:])) and pending > 0:
            return (
                f"equilibrium: the goal's pending tasks have not shrunk over {EQUILIBRIUM_WINDOW} breakdowns "
                f"({' → '.join(map(str, window))}); executed directly instead of splitting further"
            )
        return None

    async def plan(self, task: BoardTask, board: BoardBackend, specs: dict[str, AgentSpec], available: list[str],
                   workspace: Path) -> tuple[str, list[PlanStep]]:
        """The planner's goal kind and typed steps (one structured call)."""
        agents = "\n".join(f"- {name} (can: {', '.join(spec.capabilities)})" for name, spec in specs.items())
        files = [p for p in available if p.startswith("context/")]
        listed = "\n".join(f"- {p}: {_first_line(workspace / p)}" for p in files) or "(none)"
        planner = SubAgent(
            name="breakdown-planner",
            role="executor",
            system_prompt=load_prompt("breakdown", __package__),
            model=self.resolved_model("planner"),
            output_type=plan_type(list(specs), files),
            max_turns=2,
            settings=ModelSettings(max_tokens=600, temperature=0.0),
        )
        text = f"Goal: {task.description}\n\nAgents:\n{agents}\n- {NEW_AGENT}: none of them fits\n\nFiles:\n{listed}"
        result = await self.call("planner", planner, text, task, board)
        if not result.ok:
            raise MootError(f"the breakdown planner gave no valid plan: {result.detail or result.stop_reason}")
        return steps_from_output(result.output)

    async def goal_kind(self, text: str, task: BoardTask, board: BoardBackend) -> str:
        """What the step that answers the goal asks for, chosen by the model (one short structured
        call); "other" if it cannot say. Asked of that step alone: the whole goal opens with its
        summaries, and the 0.5B model then called a comparison goal a summary."""
        try:
            return (await self._decide("planner", "goal_kind", GoalKind, f"Task: {text}", task, board)).kind
        except GoalBudgetExceeded:
            raise
        except MootError:
            return "other"

    async def deduplicate(self, steps: list[PlanStep], task: BoardTask, board: BoardBackend,
                          workspace: Path) -> dict[int, str]:
        """Which steps repeat finished or running work: ``{id(step): the earlier task's id}``.

        Only a step with no dependencies can repeat other work, and only work by the same agent
        type on the same inputs: the same files with the same bytes, or, for a step that reads no
        file, work of the same goal. Such pairs are duplicates at a lexical similarity of 0.8; from
        0.45 the model is asked (``DuplicateCheck``, the three closest).
        """
        root_id = task.root_id or task.id
        recent = [t for t in board.list()[-RECENT_TASKS:] if t.id != task.id and step_of(t)
                  and t.status is not TaskStatus.FAILED]
        found: dict[int, str] = {}
        for step in steps:
            if step.after or step.agent == NEW_AGENT:
                continue
            digests = {p: file_digest(workspace, p) for p in step.files}
            same = [t for t in recent if t.type == step.agent and not step_of(t).get("after")
                    and (step_of(t).get("digests") or {}) == digests and (digests or (t.root_id or t.id) == root_id)]
            scored = sorted(((similarity(step.description, t.description), t) for t in same), key=lambda p: -p[0])
            if not scored or scored[0][0] < BORDERLINE_SIMILARITY:
                continue
            if scored[0][0] >= DUPLICATE_SIMILARITY:
                found[id(step)] = scored[0][1].id  # a clear duplicate: no model call needed
                continue
            closest = [t for s, t in scored[:3] if s >= BORDERLINE_SIMILARITY]
            if await self._model_says_duplicate(step.description, [t.description for t in closest], task, board):
                found[id(step)] = closest[0].id
        return found

    async def _model_says_duplicate(self, description: str, existing: list[str], task: BoardTask, board: BoardBackend) -> bool:
        listed = "\n".join(f"- {e}" for e in existing)
        verdict = await self._decide(
            "deduplicator", "dedup", DuplicateCheck, f"New task: {description}\nExisting tasks:\n{listed}", task, board
        )
        return verdict.duplicate

    # ------------------------------------------------------------------ subtasks and self-extension

    async def _subtasks(self, parent: BoardTask, board: BoardBackend, steps: list[PlanStep], specs: dict[str, AgentSpec],
                        duplicates: dict[int, str], workspace: Path) -> list[BoardTask]:
        """One subtask per step, in plan order, with the step's inputs as data (``context.step``)."""
        ids = {id(step): BoardTask(description="-").id for step in steps}
        final = final_step(steps)
        base = {k: v for k, v in parent.context.items()
                if k not in ("budget", "budget_used", "breakdown_pending", "plan", "final_step", "goal_kind")}
        base["original_goal"] = parent.original_goal
        base["parent_task"] = parent.description
        subtasks = []
        for number, step in enumerate(steps, 1):
            context: dict[str, Any] = {**base, "step": {
                "number": number,
                "files": step.files,
                "digests": {p: file_digest(workspace, p) for p in step.files},
                "after": [ids[id(a)] for a in step.after],
                "output": step.output,
                "final": step is final,
            }}
            if step.added_by:
                context["added_by"] = step.added_by
            if id(step) in duplicates:
                context["duplicate_of"] = duplicates[id(step)]
            agent_type: str | None = step.agent
            if step.agent == NEW_AGENT:
                spec, why = await self.extend(parent, board, step.description, specs)
                agent_type = spec.name if spec else None
                context["self_extension"] = {"registered": spec.name} if spec else {"rejected": why}
            spec = specs.get(agent_type or "")
            subtasks.append(BoardTask(
                id=ids[id(step)],
                description=step.description,
                type=agent_type or "general",
                requirements=list(spec.capabilities[:1]) if spec else [],
                context=context,
                parent_id=parent.id,
                root_id=parent.root_id or parent.id,
                depth=parent.depth + 1,
                priority=parent.priority,
                created_by=self.agent_id,
            ))
        return subtasks

    async def extend(
        self, task: BoardTask, board: BoardBackend, description: str, specs: dict[str, AgentSpec]
    ) -> tuple[AgentSpec | None, str]:
        """Draft, validate and register a spec for ``description``; ``(spec, "")`` or ``(None, why)``.

        Only data is produced: a name, capabilities, instructions, allow-listed tool names and
        a threshold. No code is written, imported or run.
        """
        drafter = SubAgent(
            name="breakdown-spec-drafter",
            role="evaluator",
            system_prompt=load_prompt("draft_spec", __package__),
            model=self.resolved_model("drafter"),
            output_type=SpecDraft,
            max_turns=2,
            settings=ModelSettings(max_tokens=300, temperature=0.0),
        )
        result = await self.call("drafter", drafter, f"Task that needs a new agent: {description}\n"
                                 f"Original goal: {task.original_goal}", task, board)
        if not result.ok:
            return None, f"the spec draft was invalid: {result.detail or result.stop_reason}"
        spec = spec_from_draft(result.output, created_by=self.agent_id)
        existing = next((s for s in specs.values() if set(spec.capabilities) & set(s.capabilities)), None)
        if existing is not None:
            return existing, ""  # the capability exists after all: reuse, register nothing
        if spec.name in specs and spec.name not in BUILTIN_TYPES:
            spec = spec.model_copy(update={"name": f"{spec.name[:34]}_{len(specs)}"})
        try:
            validate_spec(spec, allow_terminal=self.allow_terminal)
        except InvalidSpecError as exc:
            return None, exc.message
        board.register_agent(spec)
        specs[spec.name] = spec
        return spec, ""


def _first_line(path: Path) -> str:
    """The first non-empty line of a file, shortened: what the planner sees of it."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    text = " ".join(line.strip().lstrip("#").split())
                    return text[:FILE_PREVIEW_CHARS]
    except OSError:
        pass
    return "(empty)"


__all__ = [
    "BREAKDOWN_SPEC",
    "DUPLICATE_SIMILARITY",
    "DuplicateCheck",
    "GoalKind",
    "NEW_AGENT",
    "TaskBreakdownAgent",
    "content_tokens",
    "content_words",
    "plan_type",
    "similarity",
]
