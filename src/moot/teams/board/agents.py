"""The board's agents (the task-board design's BaseAgent): executor, evaluator and metacognition roles.

Each role is a short model call with its own instructions (``prompts/*.md``) and every decision
is **structured output** validated against a schema. What a small model decides badly is not
asked of it at all: routing is rules (:mod:`moot.teams.board.routing`), inputs are gathered by
Python (:mod:`moot.teams.board.inputs`), results are checked by Python first
(:mod:`moot.teams.board.result_check`, :mod:`moot.teams.board.answer_check`).

``should_handle`` (no model call unless several agent types may take the task):

1. the goal's budget: a spent goal is taken only so that ``process`` fails it with the reason;
2. the rule (:func:`moot.teams.board.routing.may_take`): type and requirements decide who may
   take the task; most "no"s end here, for free;
3. evidence-based metacognition: a task whose dependencies are still running is deferred
   (:class:`~moot.teams.board.protocol.Defer`), one whose dependency failed is taken to be
   failed with that reason, one that duplicates finished work (``context.duplicate_of``) is taken
   and answered with that work's result, with no model call;
4. when more than one agent type may take it, the evaluator's ``Fitness`` (1-10) ranks: the
   agent claims after a delay that shrinks with its score; under its threshold it still claims
   after :data:`~moot.teams.board.routing.DOUBT_WAIT_S` and records its doubt on the result.

``process`` gathers the step's inputs (files read through ``read_file``, the dependencies'
results). A step asked only for its files' facts is answered by Python with their own sentences.
Otherwise the executor runs (a comparison step chooses among rows of values Python proposed;
Python computes the change), then the result is checked: failure reports
(:func:`~moot.teams.board.result_check.failure_reason`), restatements and results that carry
nothing from their inputs (:func:`~moot.teams.board.answer_check.answer_problem`), figures a
summary leaves out (:func:`~moot.teams.board.answer_check.coverage_problem`), and last the
model's ``GoalCheck`` against the original goal. A rejected
result raises :class:`ResultRejected`, which is retryable: the task goes back to pending with the
reason, and the next attempt's executor is told the reason. On the last attempt a step with
inputs hands on their fact sentences, with the reason, instead of failing.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from moot.errors import MootError
from moot.models.base import Model, ModelSettings
from moot.models.registry import RoleModels, check_roles, model_for, resolve_models
from moot.runtime.agent import AgentResult, SubAgent
from moot.runtime.budget import Budget
from moot.runtime.events import EventBus, EventType, summarize
from moot.runtime.run import Run
from moot.runtime.store import RunStore
from moot.runtime.prompts import load_prompt
from moot.teams.board.agent_tools import PATH_TOOLS, build_tools, terminal_enabled, workspace_listing
from moot.teams.board.answer_check import Source, answer_problem, coverage_problem
from moot.teams.board.backend import AgentSpec, BoardBackend
from moot.teams.board.compare import choice_type, comparison_line, propose_rows, row_for
from moot.teams.board.goal_budget import (
    GoalBudgetExceeded,
    check_budget,
    read_budget,
    release_calls,
    reserve_calls,
    root_of,
)
from moot.teams.board.facts import fact_sentences
from moot.teams.board.inputs import StepInputs, fallback_text, gather_inputs
from moot.teams.board.protocol import Defer, result_text
from moot.teams.board.result_check import failure_reason
from moot.teams.board.routing import (
    DEPENDENCY_POLL_S,
    DOUBT_WAIT_S,
    RANK_STEP_S,
    capable_types,
    claim_delay,
    dependency_state,
    duplicate_state,
    may_take,
    step_of,
)
from moot.teams.board.agent_types import build_agent, builtin_specs, known_specs
from moot.teams.board.specs import BUILTIN_SPECS
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


class Fitness(BaseModel):
    """How well the task fits the agent (1-10): ranks the agents that may take it."""

    score: int = Field(ge=1, le=10)
    reason: str = ""


class GoalCheck(BaseModel):
    """Whether a result meaningfully advances the original goal."""

    advances_goal: bool
    reason: str = ""


class ResultRejected(MootError):
    """The executor's result did not answer its task (or the executor failed).

    Retryable: the worker returns the task to pending (reason in ``error``) while attempts are left.
    """

    fix = "reword the goal more concretely, or run a larger model with --model"
    retryable = True


class DependencyFailed(MootError):
    """A step this task needs failed; the task cannot be done. Not retryable."""

    fix = "fix what the failed step reports and submit the goal again"


@dataclass
class Execution:
    """What the executor produced and what it was given (the inputs its result is checked against)."""

    text: str
    sources: list[Source]


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
        rank_step_s: float = RANK_STEP_S,
        doubt_wait_s: float = DOUBT_WAIT_S,
    ) -> None:
        """``models`` gives single roles their own model (roles: :data:`ROLES`); every call
        is a recorded run in ``store`` (default: the user's run store; ``record=False``: none).
        ``tools`` (MCP tool servers, or tools) are given to the executor beside the spec's tools;
        ``rank_step_s`` and ``doubt_wait_s`` time the fitness ranking (:func:`claim_delay`)."""
        check_roles(models, ROLES, team="board")
        self.spec = spec
        self.agent_type = spec.name
        self.capabilities = list(spec.capabilities)
        self.agent_id = f"{spec.name}_{uuid.uuid4().hex[:8]}"
        self.model = model
        self.workspace = Path(workspace) if workspace is not None else None
        self.allow_terminal = terminal_enabled(allow_terminal)
        self.max_turns = max_turns
        self.rank_step_s = rank_step_s
        self.doubt_wait_s = doubt_wait_s
        self._decisions: dict[tuple[str, int], bool] = {}
        self._ready_at: dict[tuple[str, int], float] = {}
        """When a ranked (fitness-scored) task may be claimed, by task and attempt."""
        self._doubts: dict[str, str] = {}
        """Why this agent took a task it scored under its threshold (recorded on the result)."""
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
                   context: dict[str, Any] | None = None, *, reads: dict[str, str] | None = None) -> AgentResult:
        """One agent call for ``task``, through the runtime's run lifecycle.

        The goal's model calls are reserved first (as many as the call may make, at most what
        the goal has left; none left raises :class:`GoalBudgetExceeded`), the call runs as one
        recorded run (events, spans, ``moot runs``) under the goal's parent run with a budget of
        exactly the calls granted, and the calls it did not make are handed back. ``reads``
        (path → text) are the files Python read for the step through ``read_file``; they are
        recorded as the run's tool calls.
        """
        granted = reserve_calls(board, task, agent.max_turns)
        store = self.run_store()
        parent = self._goal_run(board, task, store)
        run = Run(f"board {agent.name}: {task.description[:60]}", Budget(max_calls=granted), self.bus, store,
                  parent_run_id=parent)
        made = granted  # a cancelled call keeps its whole reservation: it may have spent it
        try:
            async with run:
                for path, content in (reads or {}).items():
                    self.bus.emit(EventType.TOOL_CALL, run_id=run.run_id, task_id=role, agent=agent.name, tool="read_file",
                                  arguments=summarize(path), result=summarize(content), ok=True, seconds=0.0,
                                  caller="step inputs")
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
        """This agent type's own rule on top of :func:`may_take` (none for a plain agent)."""
        return True

    def may_take(self, task: BoardTask, specs: dict[str, AgentSpec]) -> bool:
        """Whether the rules let this agent take ``task`` (no model call)."""
        return may_take(self.spec, task, specs) and self.precheck(task)

    def known_specs(self, board: BoardBackend) -> dict[str, AgentSpec]:
        specs = known_specs(board, allow_terminal=self.allow_terminal)
        specs.setdefault(self.agent_type, self.spec)  # an agent built from a spec the registry lacks
        return specs

    async def should_handle(self, task: BoardTask, board: BoardBackend) -> bool | Defer:
        key = (task.id, task.attempts)
        if key in self._decisions:
            return self._decisions[key]
        if any(self._decisions.get((task.id, n)) for n in range(task.attempts)):
            # A retry of a task I took before (its result was rejected, or its lease expired):
            # the fit has not changed, so nothing is decided again.
            self._decisions[key] = True
            return True
        try:
            decision = await self._should_handle(task, board)
        except GoalBudgetExceeded:
            decision = True  # spent while deciding: taken only so that process() fails it with the reason
        if isinstance(decision, bool):
            self._decisions[key] = decision
        return decision

    async def _should_handle(self, task: BoardTask, board: BoardBackend) -> bool | Defer:
        if read_budget(board, task).exceeded():
            return True  # taken only so that process() fails it with the budget's reason
        specs = self.known_specs(board)
        if not self.may_take(task, specs):
            return False
        dependencies = dependency_state(task, board)
        if dependencies.failed:
            return True  # taken only so that process() fails it with the dependency's error
        if dependencies.waiting:
            return Defer(DEPENDENCY_POLL_S, f"waiting for {', '.join(dependencies.waiting)}", waiting_on_others=True)
        state, original = duplicate_state(task, board)
        if state == "open" and original is not None:
            return Defer(DEPENDENCY_POLL_S, f"the same work is under way as {original.id}", waiting_on_others=True)
        if state == "done" or len(capable_types(task, specs)) <= 1:
            return True
        return await self._ranked(task, board)

    async def _ranked(self, task: BoardTask, board: BoardBackend) -> bool | Defer:
        """Several agent types may take the task: the model's fitness decides how soon this one claims."""
        key = (task.id, task.attempts)
        if key not in self._ready_at:
            described = f"{describe_task(task)}\n\n{self._profile()}"
            try:
                score = (await self._decide("evaluator", "fitness", Fitness, described, task, board)).score
            except GoalBudgetExceeded:
                raise
            except MootError as exc:
                log.info("no fitness score for %s: %s", task.id, exc.one_line())
                score = 0  # no valid score: this agent waits as long as a doubtful one
            delay, doubt = claim_delay(score, self.threshold, rank_step_s=self.rank_step_s, doubt_wait_s=self.doubt_wait_s)
            self._ready_at[key] = time.monotonic() + delay
            if doubt:
                self._doubts[task.id] = doubt
        left = self._ready_at[key] - time.monotonic()
        if left > 0:
            return Defer(left, "the first chance goes to better-fitting agents")
        return True

    # ------------------------------------------------------------------ process

    async def process(self, task: BoardTask, board: BoardBackend) -> Any:
        check_budget(board, task)
        dependencies = dependency_state(task, board)
        if dependencies.failed:
            dep_id, error = dependencies.failed[0]
            raise DependencyFailed(f"step {dep_id}, whose result this task needs, failed: {error}")
        state, original = duplicate_state(task, board)
        if state == "done" and original is not None:
            # Evidence, not a model's mood: the same work on the same inputs is finished. Reuse it.
            return {"agent": self.agent_type, "output": result_text(original.result), "duplicate_of": original.id}
        inputs = gather_inputs(task, board, self.workspace or workspace_for(board))
        result: dict[str, Any] = {"agent": self.agent_type}
        if inputs.files:
            result["read"] = list(inputs.files)
        if inputs.results:
            result["used"] = [dep_id for dep_id, _, _ in inputs.results]
        if task.id in self._doubts:
            result["doubt"] = self._doubts[task.id]
        extracted = self.extract(task, inputs)
        if extracted:
            # A step that reports its files' facts is done by Python: their own sentences, exactly.
            return {**result, "output": extracted, "extracted": True}
        note = f"a previous attempt ended with: {task.error}" if task.attempts > 1 and task.error else None
        try:
            done = await self.run_executor(task, board, note=note, inputs=inputs)
            self.check_result(task, done, inputs)
            verdict = await self.validate_goal_progress(task, done.text, board)
            if verdict is not None and not verdict.advances_goal:
                raise ResultRejected(f"the result does not advance the original goal: {verdict.reason or 'no reason given'}")
        except ResultRejected as exc:
            fallback = fallback_text(inputs) if task.attempts >= task.max_attempts else ""
            if not fallback:
                raise
            # The last attempt failed a check too: hand on the inputs' own sentences with their
            # facts, and say so, rather than fail the goal or keep a result that failed.
            return {**result, "output": fallback,
                    "fallback": f"{exc.message}; the result is its inputs' own sentences with their facts"}
        result["output"] = done.text
        return result

    def extract(self, task: BoardTask, inputs: StepInputs) -> str:
        """The result of a step asked only for its files' facts (``output: facts``): the sentences
        that hold them, by format, no model call; "" when the step is not one or they hold none."""
        if step_of(task).get("output") != "facts" or not inputs.files or inputs.results:
            return ""
        parts = [(path, fact_sentences(text)) for path, text in inputs.files.items()]
        if not all(text for _, text in parts):
            return ""
        return parts[0][1] if len(parts) == 1 else "\n".join(f"{path}: {text}" for path, text in parts)

    def check_result(self, task: BoardTask, done: Execution, inputs: StepInputs) -> None:
        """The Python checks, cheapest first; raises :class:`ResultRejected` with the reason."""
        failed = failure_reason(done.text)
        if failed is not None:
            # Deterministic and free: a result that reports its own failure never reaches the model check.
            raise ResultRejected(f"{failed}; it does not advance the original goal")
        task_text = f"{task.description}\n{task.original_goal}"
        output = step_of(task).get("output")
        problem = answer_problem(done.text, task_text=task_text, sources=done.sources, use_each=bool(inputs.results),
                                 comparison=output == "comparison")
        if problem is None and output in ("summary", "facts"):
            problem = coverage_problem(done.text, task_text=task_text, sources=done.sources)
        if problem is not None:
            raise ResultRejected(problem)

    async def execute(self, task: BoardTask, board: BoardBackend, *, note: str | None = None) -> str:
        """Run the executor role with the spec's tools; its text answer is the result."""
        return (await self.run_executor(task, board, note=note)).text

    async def run_executor(self, task: BoardTask, board: BoardBackend, *, note: str | None = None,
                           inputs: StepInputs | None = None) -> Execution:
        """The executor on ``task``: given inputs are in its context (and it gets no tools, it
        needs none); without them it works with the spec's tools. A comparison step with
        numbers in two or more inputs goes through :meth:`compare`."""
        inputs = inputs or StepInputs()
        context: dict[str, Any] = dict(inputs.context())
        if task.original_goal != task.description:
            context["original goal"] = task.original_goal
        if note:
            context["note"] = note
        if step_of(task).get("output") == "comparison":
            compared = await self.compare(task, board, inputs, context)
            if compared is not None:
                return compared
        if inputs:
            # Inputs given, no tools: the spec's instructions are about using its tools, so they stay out.
            instructions = load_prompt("step", __package__).format(agent_type=self.agent_type)
        else:
            instructions = load_prompt("executor", __package__).format(agent_type=self.agent_type)
            if self.spec.instructions:
                instructions = f"{instructions}\n\n{self.spec.instructions}"
        tools = [] if inputs else self._tools(task, board)
        if not inputs and PATH_TOOLS & set(self.spec.tools):
            # Real paths in front of the model: it asked for results/wind.md when the file was context/wind.md.
            context["workspace files"] = workspace_listing(self.workspace or workspace_for(board))
        executor = SubAgent(
            name=f"{self.agent_type}-executor",
            role="executor",
            system_prompt=instructions,
            tools=tools,
            model=self.resolved_model("executor"),
            max_turns=self.max_turns if tools else 1,
            settings=ModelSettings(max_tokens=400, temperature=0.0),
        )
        result = await self.call("executor", executor, task.description, task, board, context or None, reads=inputs.reads())
        if not result.ok:
            raise ResultRejected(f"the {self.agent_type} executor stopped: {result.detail or result.stop_reason}")
        text = str(result.output or "").strip()
        if not text:
            raise ResultRejected(f"the {self.agent_type} executor gave an empty result")
        found = [Source(f"{getattr(m, 'name', '') or 'a tool'}'s answer", str(m.content)) for m in result.transcript
                 if m.role == "tool" and m.content and not getattr(m, "is_error", False)]
        return Execution(text, [*inputs.sources(), *found])

    async def compare(self, task: BoardTask, board: BoardBackend, inputs: StepInputs,
                      context: dict[str, Any]) -> Execution | None:
        """A comparison: the model chooses among rows of values Python proposed; Python computes the change.

        ``None`` when fewer than two inputs hold numbers (the step is then written as text)."""
        topic = f"{task.description} {task.original_goal}"
        rows = propose_rows(inputs.file_sources(), topic) or propose_rows(inputs.sources(), topic)
        sources = inputs.sources()
        if not rows:
            return None
        chooser = SubAgent(
            name=f"{self.agent_type}-executor",
            role="executor",
            system_prompt=load_prompt("compare", __package__).format(agent_type=self.agent_type),
            model=self.resolved_model("executor"),
            output_type=choice_type(rows),
            max_turns=2,
            settings=ModelSettings(max_tokens=300, temperature=0.0),
        )
        result = await self.call("executor", chooser, task.description, task, board, context, reads=inputs.reads())
        if not result.ok:
            raise ResultRejected(f"the {self.agent_type} comparison stopped: {result.detail or result.stop_reason}")
        row = row_for(result.output, rows)
        answer = " ".join(str(getattr(result.output, "answer", "")).split())
        text = f"{comparison_line(row)}." + (f" {answer}" if answer else "")
        return Execution(text, sources)

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


__all__ = [
    "BUILTIN_SPECS",
    "ROLES",
    "goal_run_id",
    "BaseAgent",
    "DependencyFailed",
    "Execution",
    "Fitness",
    "GoalBudgetExceeded",
    "GoalCheck",
    "ResultRejected",
    "build_agent",
    "builtin_specs",
    "describe_task",
    "known_specs",
    "workspace_for",
]
