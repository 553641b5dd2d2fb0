"""The board's agents (the task-board design's BaseAgent): executor, evaluator and metacognition roles.

Each role is a short model call with its own instructions (``prompts/*.md``) and every
decision is **structured output** validated against a schema — the seed parsed ``YES``/``NO``
out of free text, which a small model gets wrong and a large one gets wrong sometimes.

``should_handle`` runs, in order, and stops at the first "no":

1. the goal's budget (no model call): a spent goal is taken only to be failed with the reason;
2. the deterministic capability pre-check (no model call): ``task.requirements`` must be a
   subset of the agent's capabilities — most "no"s end here, for free;
3. metacognition: step back from redundant or goal-less work (``MetacognitiveDecision``);
4. the evaluator's capability check (``CapabilityDecision``), only when the task states no
   requirements (when it does, step 2 already decided);
5. the evaluator's fitness score (``Fitness``) at or above the spec's threshold.

Decisions are cached per task and attempt, so a worker that polls the same pending task again
does not spend the goal's model calls twice.

``process`` runs the executor (with the spec's allow-listed tools), then validates the result
against the task's original goal in two steps: first deterministically
(:func:`moot.teams.board.result_check.failure_reason`: an empty result, or one that reports a
failure such as ``no file …`` / ``not found`` / ``cannot …``, is rejected without a model call),
then with metacognition's ``GoalCheck``. A rejected result raises :class:`ResultRejected`, which
is retryable: the worker puts the task back to pending with the reason in ``error`` until its
``max_attempts`` are spent, then fails it with that reason. The retry's executor is told why the
previous attempt was rejected, and agents with file or search tools see the workspace's
``context/`` and ``results/`` files, so a retry can do better than repeat the mistake.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from moot.errors import ConfigError, MootError
from moot.models.base import Model, ModelSettings
from moot.models.registry import RoleModels, check_roles, model_for, resolve_models
from moot.runtime.agent import AgentResult, SubAgent
from moot.runtime.budget import Budget
from moot.runtime.events import EventBus
from moot.runtime.run import Run
from moot.runtime.store import RunStore
from moot.runtime.prompts import load_prompt
from moot.teams.board.agent_tools import PATH_TOOLS, build_tools, terminal_enabled, workspace_listing
from moot.teams.board.backend import AgentSpec, BoardBackend
from moot.teams.board.goal_budget import (
    GoalBudgetExceeded,
    check_budget,
    read_budget,
    release_calls,
    reserve_calls,
    root_of,
)
from moot.teams.board.result_check import failure_reason
from moot.teams.board.specs import BREAKDOWN_SPEC, BUILTIN_SPECS, FILE_SPEC, SEARCH_SPEC, TERMINAL_SPEC
from moot.teams.board.task import BoardTask, TaskStatus

log = logging.getLogger("moot.teams.board.agents")

ROLES = ("executor", "metacognition", "evaluator", "planner", "deduplicator", "drafter")
"""The roles a board agent can give its own model (``models={role: model}``)."""


def goal_run_id(root_id: str) -> str:
    """The id of the parent run that holds every recorded agent call of one goal."""
    return f"goal-{root_id}"

T = TypeVar("T", bound=BaseModel)

WORKSPACE_ENV = "MOOT_BOARD_WORKSPACE"


# --------------------------------------------------------------------------- decisions


class MetacognitiveDecision(BaseModel):
    """Metacognition's verdict: take the task, or step back and leave it to others."""

    proceed: bool
    reason: str = ""


class CapabilityDecision(BaseModel):
    """Whether the agent can technically do the task."""

    can_handle: bool
    reason: str = ""


class Fitness(BaseModel):
    """How well the task fits the agent (1-10); compared with the spec's threshold."""

    score: int = Field(ge=1, le=10)
    reason: str = ""


class GoalCheck(BaseModel):
    """Whether a result meaningfully advances the original goal."""

    advances_goal: bool
    reason: str = ""


class ResultRejected(MootError):
    """The executor's result did not advance the original goal (or the executor failed).

    Retryable: the worker returns the task to pending (reason in ``error``) while attempts are left.
    """

    fix = "reword the goal more concretely, or run a larger model with --model"
    retryable = True


def workspace_for(board: BoardBackend, workspace: str | Path | None = None) -> Path:
    """The folder tools work in: explicit, else ``$MOOT_BOARD_WORKSPACE``, else a folder board's own folder."""
    if workspace is not None:
        return Path(workspace)
    if os.environ.get(WORKSPACE_ENV):
        return Path(os.environ[WORKSPACE_ENV])
    for attribute in ("root", "path"):
        value = getattr(board, attribute, None)
        if isinstance(value, (str, Path)) and Path(value).is_dir():
            return Path(value)
    location = Path(str(getattr(board, "location", ".")))
    return location if location.is_dir() else Path.cwd()


def describe_task(task: BoardTask) -> str:
    """The task as the model sees it: short, with the original goal for orientation."""
    lines = [f"Task: {task.description}", f"Type: {task.type}"]
    if task.requirements:
        lines.append(f"Requirements: {', '.join(task.requirements)}")
    if task.original_goal != task.description:
        lines.append(f"Original goal: {task.original_goal}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the agent


class BaseAgent:
    """A board agent defined by an :class:`AgentSpec` and a model; implements ``BoardAgent``."""

    def __init__(
        self,
        spec: AgentSpec,
        *,
        model: Model | str | None = None,
        models: RoleModels | None = None,
        workspace: str | Path | None = None,
        allow_terminal: bool | None = None,
        max_turns: int = 3,
        store: RunStore | None = None,
        record: bool = True,
        bus: EventBus | None = None,
        tools: Sequence[Any] = (),
    ) -> None:
        """``models`` gives single roles their own model (roles: :data:`ROLES`); every call
        is a recorded run in ``store`` (default: the user's run store; ``record=False``: none).
        ``tools`` (MCP tool servers, or tools) are given to the executor beside the spec's tools."""
        check_roles(models, ROLES, team="board")
        self.spec = spec
        self.agent_type = spec.name
        self.capabilities = list(spec.capabilities)
        self.agent_id = f"{spec.name}_{uuid.uuid4().hex[:8]}"
        self.model = model
        self.workspace = Path(workspace) if workspace is not None else None
        self.allow_terminal = terminal_enabled(allow_terminal)
        self.max_turns = max_turns
        self.recent_actions: deque[str] = deque(maxlen=5)
        """Descriptions of the tasks this agent took lately, shown to metacognition."""
        self._decisions: dict[tuple[str, int], bool] = {}
        self._model_obj: Model | None = model if isinstance(model, Model) else None
        self.models = dict(models or {})
        self._role_models: dict[str, Model] | None = None
        self.bus = bus if bus is not None else EventBus()
        self._store = store
        self._record = record
        self._goal_runs: set[str] = set()
        self.extra_tools = list(tools)

    @property
    def threshold(self) -> int:
        return self.spec.threshold

    def resolved_model(self, role: str | None = None) -> Model:
        """The model of ``role`` (its own from ``models``, else the agent's one model, shared by
        every role so the embedded engine loads once)."""
        if self._model_obj is None or self._role_models is None:
            self._model_obj, self._role_models = resolve_models(self._model_obj or self.model, self.models)
        return model_for(role or "", self._model_obj, self._role_models)

    def run_store(self) -> RunStore | None:
        """Where this agent's calls are recorded (opened on first use). A run store that cannot
        be opened turns recording off with a warning: the board's work does not depend on it."""
        if self._store is None and self._record:
            try:
                self._store = RunStore()
            except MootError as exc:
                log.warning("agent %s records no runs: %s", self.agent_id, exc.one_line())
                self._record = False
        return self._store

    # ------------------------------------------------------------------ model calls

    async def call(self, role: str, agent: SubAgent, text: str, task: BoardTask, board: BoardBackend,
                   context: dict[str, Any] | None = None) -> AgentResult:
        """One agent call for ``task``, through the runtime's run lifecycle.

        The goal's model calls are reserved first (as many as the call may make, at most what
        the goal has left; none left raises :class:`GoalBudgetExceeded`), the call runs as one
        recorded run (events, spans, ``moot runs``) under the goal's parent run with a budget of
        exactly the calls granted, and the calls it did not make are handed back.
        """
        granted = reserve_calls(board, task, agent.max_turns)
        store = self.run_store()
        parent = self._goal_run(board, task, store)
        run = Run(f"board {agent.name}: {task.description[:60]}", Budget(max_calls=granted), self.bus, store,
                  parent_run_id=parent)
        made = granted  # a cancelled call keeps its whole reservation: it may have spent it
        try:
            async with run:
                outcome = await run.step(role, agent, text, context=context)
            made = min(granted, max(1, run.usage.requests))
        finally:
            release_calls(board, task, granted - made)
        assert outcome is not None  # a fresh run with at least one call granted always calls
        return outcome

    def _goal_run(self, board: BoardBackend, task: BoardTask, store: RunStore | None) -> str | None:
        """The id of the goal's parent run, recorded on first use (by whichever worker is first)."""
        if store is None:
            return None
        root = root_of(board, task)
        run_id = goal_run_id(root.id)
        if run_id not in self._goal_runs:
            store.ensure_run(run_id, f"board goal: {root.description[:60]}", budget=root.context.get("budget") or {})
            self._goal_runs.add(run_id)
        return run_id

    def goal_settled(self, root: BoardTask) -> None:
        """Close the goal's parent run once its root task completed or failed (the worker calls this)."""
        store = self.run_store()
        if store is None or root.status not in (TaskStatus.COMPLETED, TaskStatus.FAILED):
            return
        try:
            recorded = store.resolve_id(goal_run_id(root.id)) == goal_run_id(root.id)
        except MootError:
            recorded = False
        if not recorded:
            return  # no agent call of this goal was recorded
        status = "completed" if root.status is TaskStatus.COMPLETED else "failed"
        store.close_parent(goal_run_id(root.id), status, root.error or f"goal {status}")

    async def _decide(self, role: str, prompt: str, output_type: type[T], text: str, task: BoardTask, board: BoardBackend) -> T:
        """One structured decision, on the goal's budget."""
        agent = SubAgent(
            name=f"{self.agent_type}-{role}",
            role=role,
            system_prompt=load_prompt(prompt, __package__).format(agent_type=self.agent_type),
            model=self.resolved_model(role),
            output_type=output_type,
            max_turns=2,
            settings=ModelSettings(max_tokens=160, temperature=0.0),
        )
        result = await self.call(role, agent, text, task, board)
        if not result.ok or not isinstance(result.output, output_type):
            raise MootError(f"the {role} of agent {self.agent_type!r} gave no valid decision: {result.detail or result.stop_reason}")
        return result.output

    def _tools(self, task: BoardTask, board: BoardBackend) -> list[Any]:
        knowledge_bases = task.context.get("knowledge_bases") or []
        if isinstance(knowledge_bases, str):
            knowledge_bases = [knowledge_bases]
        return build_tools(
            self.spec.tools,
            workspace=self.workspace or workspace_for(board),
            knowledge_bases=knowledge_bases,
            allow_terminal=self.allow_terminal,
        ) + self.extra_tools

    def _profile(self) -> str:
        tools = ", ".join(self.spec.tools) or "none"
        return (
            f"Agent: {self.agent_type}\nCapabilities: {', '.join(self.capabilities) or 'none'}\n"
            f"Tools: {tools}\nSpecialisation: {self.spec.instructions or self.agent_type}"
        )

    # ------------------------------------------------------------------ should_handle

    def precheck(self, task: BoardTask) -> bool:
        """The deterministic capability check: every stated requirement is one of my capabilities."""
        return set(task.requirements) <= set(self.capabilities)

    async def should_handle(self, task: BoardTask, board: BoardBackend) -> bool:
        key = (task.id, task.attempts)
        if key in self._decisions:
            return self._decisions[key]
        if any(self._decisions.get((task.id, n)) for n in range(task.attempts)):
            # A retry of a task I took before (its result was rejected, or its lease expired):
            # the fit has not changed, so the goal's model calls are not spent deciding again.
            self._decisions[key] = True
            return True
        try:
            decision = await self._should_handle(task, board)
        except GoalBudgetExceeded:
            decision = True  # spent while deciding: taken only so that process() fails it with the reason
        except MootError:
            decision = False  # no valid decision (model error, invalid output twice): leave it to others
        self._decisions[key] = decision
        return decision

    async def _should_handle(self, task: BoardTask, board: BoardBackend) -> bool:
        if read_budget(board, task).exceeded():
            return True  # taken only so that process() fails it with the budget's reason
        if not self.precheck(task):
            return False
        described = describe_task(task)
        stats = board.stats()
        recent = "; ".join(self.recent_actions) or "none"
        reflection = await self._decide(
            "metacognition",
            "metacognition",
            MetacognitiveDecision,
            f"{described}\n\n{self._profile()}\nMy recent tasks: {recent}\n"
            f"Board: {stats.pending} pending, {stats.active} active, {stats.completed} completed",
            task,
            board,
        )
        if not reflection.proceed:
            return False
        if not task.requirements:
            capable = await self._decide(
                "evaluator", "capability", CapabilityDecision, f"{described}\n\n{self._profile()}", task, board
            )
            if not capable.can_handle:
                return False
        fitness = await self._decide("evaluator", "fitness", Fitness, f"{described}\n\n{self._profile()}", task, board)
        return fitness.score >= self.threshold

    # ------------------------------------------------------------------ process

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        check_budget(board, task)
        self.recent_actions.append(task.description[:120])
        note = f"a previous attempt ended with: {task.error}" if task.attempts > 1 and task.error else None
        output = await self.execute(task, board, note=note)
        failed = failure_reason(output)
        if failed is not None:
            # Deterministic and free: a result that reports its own failure never reaches the model check.
            raise ResultRejected(f"{failed}; it does not advance the original goal")
        verdict = await self.validate_goal_progress(task, output, board)
        if verdict is not None and not verdict.advances_goal:
            raise ResultRejected(f"the result does not advance the original goal: {verdict.reason or 'no reason given'}")
        return {"agent": self.agent_type, "output": output}

    async def execute(self, task: BoardTask, board: BoardBackend, *, note: str | None = None) -> str:
        """Run the executor role with the spec's tools; its text answer is the result."""
        instructions = load_prompt("executor", __package__).format(agent_type=self.agent_type)
        if self.spec.instructions:
            instructions = f"{instructions}\n\n{self.spec.instructions}"
        executor = SubAgent(
            name=f"{self.agent_type}-executor",
            role="executor",
            system_prompt=instructions,
            tools=self._tools(task, board),
            model=self.resolved_model("executor"),
            max_turns=self.max_turns,
            settings=ModelSettings(max_tokens=400, temperature=0.0),
        )
        context: dict[str, Any] = {}
        if PATH_TOOLS & set(self.spec.tools):
            # Real paths in front of the model: it asked for results/wind.md when the file was context/wind.md.
            context["workspace files"] = workspace_listing(self.workspace or workspace_for(board))
        if task.original_goal != task.description:
            context["original goal"] = task.original_goal
        if note:
            context["note"] = note
        result = await self.call("executor", executor, task.description, task, board, context or None)
        if not result.ok:
            raise ResultRejected(f"the {self.agent_type} executor stopped: {result.detail or result.stop_reason}")
        text = str(result.output or "").strip()
        if not text:
            raise ResultRejected(f"the {self.agent_type} executor gave an empty result")
        return text

    async def validate_goal_progress(self, task: BoardTask, output: str, board: BoardBackend) -> GoalCheck | None:
        """Metacognition's check against the original goal; ``None`` for a root goal (nothing to check against)."""
        if "original_goal" not in task.context or task.original_goal == task.description:
            return None
        return await self._decide(
            "metacognition",
            "goal_check",
            GoalCheck,
            f"Original goal: {task.original_goal}\nTask: {task.description}\nResult: {output[:1500]}",
            task,
            board,
        )


# --------------------------------------------------------------------------- build_agent


def builtin_specs(*, allow_terminal: bool | None = None) -> dict[str, AgentSpec]:
    """The built-in agent types (``terminal`` only while the terminal is enabled)."""
    specs = {s.name: s for s in (BREAKDOWN_SPEC, SEARCH_SPEC, FILE_SPEC)}
    if terminal_enabled(allow_terminal):
        specs[TERMINAL_SPEC.name] = TERMINAL_SPEC
    return specs


def known_specs(board: BoardBackend, *, allow_terminal: bool | None = None) -> dict[str, AgentSpec]:
    """Built-in specs plus the board's registry (a registered spec never replaces a built-in)."""
    specs = builtin_specs(allow_terminal=allow_terminal)
    enabled = terminal_enabled(allow_terminal)
    for spec in board.agents():
        if spec.name == "echo" or (spec.name == "terminal" and not enabled):
            continue  # echo takes anything (a test agent); a disabled terminal would strand its tasks
        specs.setdefault(spec.name, spec)
    return specs


def build_agent(
    spec_or_type: AgentSpec | str,
    *,
    board: BoardBackend,
    model: Model | str | None = None,
    workspace: str | Path | None = None,
    allow_terminal: bool | None = None,
    **agent_options: Any,
) -> Any:
    """The agent for a type name or a spec: a built-in, ``echo``, or any registered spec.

    ``agent_options`` go to the model-driven agents: ``models`` (a model per role), ``store``
    (where calls are recorded), ``record``, ``bus``.

    Raises :class:`ConfigError` (one line, with the fix) for an unknown type, and for the
    terminal agent while the terminal is off.
    """
    from moot.teams.board.breakdown import TaskBreakdownAgent
    from moot.teams.board.builtin_agents import FileAgent, SearchAgent, TerminalAgent

    options: dict[str, Any] = {"model": model, "workspace": workspace, "allow_terminal": allow_terminal, **agent_options}
    if isinstance(spec_or_type, AgentSpec):
        from moot.teams.board.extension import validate_spec

        return BaseAgent(validate_spec(spec_or_type, allow_terminal=allow_terminal, allow_builtin_name=True), **options)
    name = spec_or_type.strip().lower()
    if name == "echo":
        from moot.teams.board.echo import EchoAgent  # written alongside the worker

        return EchoAgent()
    builtin = {"breakdown": TaskBreakdownAgent, "search": SearchAgent, "file": FileAgent, "terminal": TerminalAgent}
    if name in builtin:
        return builtin[name](**options)
    for spec in board.agents():
        if spec.name == name:
            from moot.teams.board.extension import validate_spec

            return BaseAgent(validate_spec(spec, allow_terminal=allow_terminal), **options)
    available = sorted({*builtin, "echo", *(s.name for s in board.agents())})
    raise ConfigError(
        f"no agent type {spec_or_type!r} on this board",
        fix=f"use one of: {', '.join(available)}",
    )


__all__ = [
    "BUILTIN_SPECS",
    "ROLES",
    "goal_run_id",
    "BaseAgent",
    "CapabilityDecision",
    "Fitness",
    "GoalBudgetExceeded",
    "GoalCheck",
    "MetacognitiveDecision",
    "ResultRejected",
    "build_agent",
    "builtin_specs",
    "describe_task",
    "known_specs",
    "workspace_for",
]
