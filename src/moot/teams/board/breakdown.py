"""TaskBreakdownAgent: splits a goal into subtasks, without duplicates, loops or runaway depth.

Loop prevention, from the seed, each with a stop reason a user can read on the task:

- **depth limit** (emergency stop): a task at ``MAX_DEPTH`` (5) is never broken down; the
  breakdown agent executes it directly (``note`` on the result says so), and
  :class:`BoardTask` itself refuses a deeper task.
- **de-duplication**: each proposed subtask is compared with recent tasks on the board and
  with its siblings — a lexical pre-filter (token Jaccard / ``difflib``) decides clear cases
  without a model call; only borderline pairs get a structured ``DuplicateCheck`` call.
- **equilibrium**: the root goal records its pending count at each breakdown; when it has not
  shrunk over :data:`EQUILIBRIUM_WINDOW` breakdowns (specialists are not keeping up), or when
  every proposed subtask was a duplicate, the task is executed directly instead of split.
- **metacognition**: the inherited ``should_handle`` step-back.
- **the goal's budget** (:mod:`moot.teams.board.goal_budget`): no subtask beyond the goal's
  task limit, no model call beyond its call limit.

Step coverage (:mod:`moot.teams.board.steps`): a goal that spells out its steps ("summarise
a, summarise b, then compare them") gets every one of them: a step the planner dropped is added
as a subtask, deterministically, before de-duplication (``context.added_by`` says so).

Self-extension: a subtask whose needed capability no agent has gets a drafted, validated,
registered :class:`AgentSpec` (see :mod:`moot.teams.board.extension`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from moot.errors import MootError
from moot.models.base import Model, ModelSettings
from moot.runtime.agent import SubAgent
from moot.runtime.prompts import load_prompt
from moot.teams.board.agents import BaseAgent, known_specs
from moot.teams.board.backend import AgentSpec, BoardBackend
from moot.teams.board.extension import (
    BUILTIN_TYPES,
    InvalidSpecError,
    SpecDraft,
    spec_from_draft,
    validate_spec,
)
from moot.teams.board.goal_budget import charge, check_budget, root_of
from moot.teams.board.protocol import AWAITING_SUBTASKS
from moot.teams.board.specs import BREAKDOWN_SPEC
from moot.teams.board.similarity import content_tokens, content_words, similarity
from moot.teams.board.steps import MAX_STEPS, missing_steps, step_description
from moot.teams.board.task import MAX_DEPTH, BoardTask, TaskStatus


NEW_CAPABILITY = "new_capability"
"""What the planner picks when no registered agent fits; triggers self-extension."""
DUPLICATE_SIMILARITY = 0.8
"""At or above: a duplicate without asking the model."""
BORDERLINE_SIMILARITY = 0.45
"""From here up to :data:`DUPLICATE_SIMILARITY`: the model decides (``DuplicateCheck``)."""
PARENT_SIMILARITY = 0.95
"""A subtask this close to its own parent restates it: no progress."""
RECENT_TASKS = 50
EQUILIBRIUM_WINDOW = 3

class DuplicateCheck(BaseModel):
    """The model's verdict on a borderline pair."""

    duplicate: bool
    reason: str = ""


def plan_type(capabilities: list[str]) -> type[BaseModel]:
    """The planner's output schema: 2-5 subtasks, each with a capability from the allowed list."""
    allowed = tuple(dict.fromkeys([*capabilities, NEW_CAPABILITY]))
    subtask = create_model(
        "Subtask",
        description=(str, Field(description="one concrete step, one short sentence")),
        capability=(Literal[allowed], Field(description="the capability the step needs")),  # type: ignore[valid-type]
    )
    return create_model("Breakdown", subtasks=(list[subtask], Field(min_length=2, max_length=5)))  # type: ignore[valid-type]


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
        """Requirements must be mine; at the depth limit only tasks nobody else can take
        (they require planning) are taken, and then executed directly."""
        if not super().precheck(task):
            return False
        if task.depth >= MAX_DEPTH:
            return bool(task.requirements)
        return True

    # ------------------------------------------------------------------ process

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        check_budget(board, task)
        self.recent_actions.append(task.description[:120])
        if task.depth >= MAX_DEPTH:
            return await self._direct(task, board, f"depth limit {MAX_DEPTH} reached: executed directly, not broken down")
        stop = self._equilibrium(task, board)
        if stop:
            return await self._direct(task, board, stop)
        specs = known_specs(board, allow_terminal=self.allow_terminal)
        drafts, added = self.cover_steps(task, await self.plan(task, board, specs))
        unique = await self.deduplicate(drafts, task, board)
        if not unique:
            return await self._direct(task, board, "equilibrium: every proposed subtask duplicates existing work")
        check_budget(board, task, new_tasks=len(unique))
        subtasks = [await self._subtask(task, board, draft, specs) for draft in unique]
        for index, subtask in enumerate(subtasks):
            if subtask.description in added:
                note = "step check: the planner missed this explicit step of the goal"
                subtasks[index] = subtask.model_copy(update={"context": {**subtask.context, "added_by": note}})
        for subtask in subtasks:
            board.submit(subtask)
        charge(board, task, tasks=len(subtasks))
        fresh = board.get(task.id)
        board.update(fresh.model_copy(update={"subtasks": [*fresh.subtasks, *(s.id for s in subtasks)]}))
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

    async def plan(self, task: BoardTask, board: BoardBackend, specs: dict[str, AgentSpec]) -> list[tuple[str, str]]:
        """The planner's (description, capability) pairs, 2-5 of them."""
        capabilities = sorted({c for s in specs.values() for c in s.capabilities} - {"task_decomposition"})
        planner = SubAgent(
            name="breakdown-planner",
            role="executor",
            system_prompt=load_prompt("breakdown", __package__),
            model=self.resolved_model("planner"),
            output_type=plan_type(capabilities),
            max_turns=2,
            settings=ModelSettings(max_tokens=400, temperature=0.0),
        )
        result = await self.call("planner", planner, f"Goal: {task.description}\nAllowed capabilities: "
                                 f"{', '.join(capabilities)}, {NEW_CAPABILITY}", task, board)
        if not result.ok:
            raise MootError(f"the breakdown planner gave no valid plan: {result.detail or result.stop_reason}")
        pairs = [(s.description.strip(), s.capability) for s in result.output.subtasks if s.description.strip()]
        return pairs[:5]

    def cover_steps(self, task: BoardTask, drafts: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], set[str]]:
        """The plan plus each explicit step of the goal it does not cover, and the added ones (no model call).

        An added step takes the capability of the planned subtask most like it (a comparison of
        two summaries goes where the summaries went): the planner already chose among real ones.
        """
        missing = missing_steps(task.description, [d for d, _ in drafts])
        added: list[tuple[str, str]] = []
        for step in missing[: max(0, MAX_STEPS - len(drafts))]:
            closest = max(drafts, key=lambda d: similarity(step, d[0]))[1] if drafts else NEW_CAPABILITY
            added.append((step_description(step), closest))
        return [*drafts, *added], {d for d, _ in added}

    async def deduplicate(self, drafts: list[tuple[str, str]], task: BoardTask, board: BoardBackend) -> list[tuple[str, str]]:
        """Drop drafts that restate the parent, repeat a sibling, or duplicate recent board work."""
        recent = [t.description for t in board.list()[-RECENT_TASKS:] if t.id != task.id]
        kept: list[tuple[str, str]] = []
        for description, capability in drafts:
            if similarity(description, task.description) >= PARENT_SIMILARITY:
                continue
            existing = recent + [d for d, _ in kept]
            scored = sorted(((similarity(description, e), e) for e in existing), reverse=True)
            if scored and scored[0][0] >= DUPLICATE_SIMILARITY:
                continue  # a clear duplicate: no model call needed
            # Siblings of one plan are distinct steps by the planner's own account: only a clear
            # lexical repeat drops one. Asking the small model about siblings merged "summarise
            # solar.md" with "summarise wind.md" on the embedded model, losing half the goal.
            siblings = {d for d, _ in kept}
            borderline = [e for s, e in scored[:3] if s >= BORDERLINE_SIMILARITY and e not in siblings]
            if borderline and await self._model_says_duplicate(description, borderline, task, board):
                continue
            kept.append((description, capability))
        return kept

    async def _model_says_duplicate(self, description: str, existing: list[str], task: BoardTask, board: BoardBackend) -> bool:
        listed = "\n".join(f"- {e}" for e in existing)
        verdict = await self._decide(
            "deduplicator", "dedup", DuplicateCheck, f"New task: {description}\nExisting tasks:\n{listed}", task, board
        )
        return verdict.duplicate

    # ------------------------------------------------------------------ subtasks and self-extension

    async def _subtask(self, parent: BoardTask, board: BoardBackend, draft: tuple[str, str], specs: dict[str, AgentSpec]) -> BoardTask:
        description, capability = draft
        context = {k: v for k, v in parent.context.items() if k not in ("budget", "budget_used", "breakdown_pending")}
        context["original_goal"] = parent.original_goal
        context["parent_task"] = parent.description
        requirements = [capability]
        if capability == NEW_CAPABILITY:
            spec, why = await self.extend(parent, board, description, specs)
            requirements = list(spec.capabilities[:1]) if spec else []
            context["self_extension"] = {"registered": spec.name} if spec else {"rejected": why}
        return BoardTask(
            description=description,
            type=requirements[0] if requirements else "general",
            requirements=requirements,
            context=context,
            parent_id=parent.id,
            root_id=parent.root_id or parent.id,
            depth=parent.depth + 1,
            priority=parent.priority,
            created_by=self.agent_id,
        )

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


__all__ = [
    "BREAKDOWN_SPEC",
    "DuplicateCheck",
    "NEW_CAPABILITY",
    "TaskBreakdownAgent",
    "content_tokens",
    "content_words",
    "plan_type",
    "similarity",
]
