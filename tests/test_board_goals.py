"""What closes issue #7's weak spots: results that report failure are rejected, file tools help
with paths, every explicit step of a goal gets a subtask, and ``--until-idle`` waits for work
that another agent is still splitting. Scripted models, a real folder board, real workers."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from moot.models.base import ModelRequest
from moot.models.testing import tool_call
from moot.teams.board import AgentSpec, BoardTask, TaskStatus
from moot.teams.board.agent_tools import build_tools
from moot.teams.board.agents import BaseAgent, ResultRejected
from moot.teams.board.breakdown import TaskBreakdownAgent
from moot.teams.board.builtin_agents import FileAgent
from moot.teams.board.echo import EchoAgent
from moot.teams.board.folder import FolderBoard
from moot.teams.board.goal_budget import read_budget
from moot.teams.board.protocol import AWAITING_OWNER, AWAITING_SUBTASKS
from moot.teams.board.result_check import failure_reason
from moot.teams.board.plan import propose_steps
from moot.teams.board.specs import FILE_SPEC, SEARCH_SPEC
from moot.teams.board.steps import explicit_steps
from moot.teams.board.worker import Worker
from test_board_agents import Router

GOAL = "Summarise solar.md, summarise wind.md, then compare the lifetimes of solar panels and wind turbines"
WIND = "Wind turbines last about 20 to 25 years.\n"


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    return b


def subtask_of(board: FolderBoard, description: str, requirements: list[str], goal: str = GOAL) -> BoardTask:
    root = board.submit(BoardTask(description=goal, requirements=["task_decomposition"]))  # not for these agents
    return board.submit(
        BoardTask(description=description, requirements=requirements, context={"original_goal": goal},
                  parent_id=root.id, root_id=root.id, depth=1)
    )


# --------------------------------------------------------------------------- 1. failure-reporting results


@pytest.mark.parametrize(
    "output",
    [
        "no file 'results/wind.md' in the workspace",
        "No file found.",
        "Error: the document could not be opened",
        "I cannot find wind.md in the workspace.",
        "Sorry, I don't have access to that document.",
        "The file results/wind.md does not exist.",
        "Summary: not found",
        "   ",
        "no local document mentions 'turbine lifetime'",
    ],
)
def test_results_that_report_failure_are_recognised(output: str) -> None:
    assert failure_reason(output) is not None


@pytest.mark.parametrize(
    "output",
    [
        "Wind turbines last about 20 to 25 years.",
        "Panels lose about 0.5 % a year; the error bars in the study are wide.",
        "No two turbines wear the same way, but most last 20 to 25 years.",
        "Solar panels cannot produce power at night, and they last 25 to 30 years.",
        "The report says: " + "turbines are serviced yearly. " * 12 + "A failed gearbox was not found to shorten life.",
    ],
)
def test_real_results_are_not_mistaken_for_failures(output: str) -> None:
    assert failure_reason(output) is None


async def test_a_no_file_result_is_rejected_without_asking_the_model(board: FolderBoard) -> None:
    task = subtask_of(board, "Summarise wind.md", ["file_operations"])
    # The goal check would (wrongly) accept it, as the 0.5B model did: it must never be asked.
    router = Router(text="no file 'results/wind.md' in the workspace", GoalCheck={"advances_goal": True, "reason": "ok"})
    agent = BaseAgent(AgentSpec(name="reader", capabilities=["file_operations"]), model=router.model)
    with pytest.raises(ResultRejected, match="reports a failure") as caught:
        await agent.process(task, board)
    assert "GoalCheck" not in router.calls
    assert caught.value.retryable


async def test_a_rejected_result_is_retried_with_the_reason_then_failed(board: FolderBoard) -> None:
    task = subtask_of(board, "Summarise wind.md", ["file_operations"])
    router = Router(Fitness={"score": 9, "reason": "files"}, text="Error: cannot open wind.md")
    agent = BaseAgent(AgentSpec(name="reader", capabilities=["file_operations"]), model=router.model, rank_step_s=0.0)
    worker = Worker(board, agent, poll_s=0.01, stop_when_idle=True, idle_grace_s=0.1)
    await worker.run()
    final = board.get(task.id)
    assert final.status is TaskStatus.FAILED and final.attempts == final.max_attempts == 3
    assert "reports a failure" in (final.error or "") and "cannot open wind.md" in (final.error or "")
    # each retry's executor was told why the previous attempt was rejected
    executor_prompts = [r.messages[-1].content for r in router.requests if r.output is None]
    assert len(executor_prompts) == 3
    assert "previous attempt ended with" not in executor_prompts[0]
    assert all("previous attempt ended with: the result reports a failure" in p for p in executor_prompts[1:])
    # the decision to take the task was made once, not once per attempt
    assert router.calls.count("Fitness") == 1


async def test_a_retry_that_succeeds_completes_the_task(board: FolderBoard) -> None:
    task = subtask_of(board, "Summarise wind.md", ["file_operations"])
    router = Router(
        Fitness={"score": 9, "reason": "files"},
        text=["not found", "Wind turbines last about 20 to 25 years."],
        GoalCheck={"advances_goal": True, "reason": "answers it"},
    )
    agent = BaseAgent(AgentSpec(name="reader", capabilities=["file_operations"]), model=router.model, rank_step_s=0.0)
    await Worker(board, agent, poll_s=0.01, stop_when_idle=True, idle_grace_s=0.1).run()
    done = board.get(task.id)
    assert done.status is TaskStatus.COMPLETED and done.attempts == 2
    assert done.result == {"agent": "reader", "output": "Wind turbines last about 20 to 25 years."}


# --------------------------------------------------------------------------- 2. path help for the file agent


def test_read_file_in_the_wrong_folder_finds_the_document(board: FolderBoard) -> None:
    (board.root / "context" / "wind.md").write_text(WIND)
    read = {t.name: t for t in build_tools(["read_file"], workspace=board.root)}["read_file"].function
    answer = read("results/wind.md")
    assert "results/wind.md does not exist" in answer and "context/wind.md" in answer and WIND.strip() in answer
    (board.root / "results" / "wind.md").write_text("draft")
    (board.root / "context" / "solar.md").write_text("Panels last 25 to 30 years.")
    assert read("wind.md").startswith("no file 'wind.md'; files of that name: context/wind.md, results/wind.md")
    missing = read("results/hydro.md")
    assert "no file 'results/hydro.md'" in missing and "context/solar.md" in missing and "context/wind.md" in missing


async def test_the_file_agent_sees_the_workspace_files_and_reads_the_right_one(board: FolderBoard) -> None:
    (board.root / "context" / "wind.md").write_text(WIND)
    task = subtask_of(board, "Summarise wind.md", ["file_operations"])

    def executor(request: ModelRequest) -> Any:
        tool_results = [m for m in request.messages if m.role == "tool"]
        if not tool_results:
            return tool_call("read_file", path="results/wind.md")  # the embedded model's wrong guess
        return tool_results[-1].content.splitlines()[-1]  # "summarise" what the tool returned

    router = Router(text=executor, GoalCheck={"advances_goal": True, "reason": "it is the summary"})
    result = await FileAgent(model=router.model, workspace=board.root).process(task, board)
    assert result["output"] == WIND.strip()
    first_prompt = router.requests[0].messages[-1].content
    assert "context/: context/wind.md" in first_prompt and "results/: (no files)" in first_prompt


# --------------------------------------------------------------------------- 3. every explicit step gets a subtask


def test_explicit_steps_are_found_only_where_the_goal_lists_actions() -> None:
    assert explicit_steps(GOAL) == [
        "Summarise solar.md",
        "summarise wind.md",
        "compare the lifetimes of solar panels and wind turbines",
    ]
    assert explicit_steps("1. Read context/a.md 2. List its dates 3) Write results/dates.md") == [
        "Read context/a.md", "List its dates", "Write results/dates.md"]
    # lists of things, not of actions, are one step: nothing to enforce
    assert explicit_steps("Write a guide about cats, dogs and birds") == []
    assert explicit_steps("Write a short care guide for a cat: food, water and vet visits") == []


def write_notes(board: FolderBoard) -> None:
    (board.root / "context" / "solar.md").write_text("Solar panels last 25 to 30 years.\n")
    (board.root / "context" / "wind.md").write_text(WIND)


async def test_a_goal_that_spells_out_its_steps_gets_every_one_with_no_planner(board: FolderBoard) -> None:
    write_notes(board)
    root = board.submit(BoardTask(description=GOAL, type="goal"))
    # the embedded planner dropped the comparison and copied agent descriptions: it is not asked
    router = Router(GoalKind={"kind": "comparison"})
    assert await TaskBreakdownAgent(model=router.model).process(root, board) is AWAITING_SUBTASKS
    subs = [board.get(i) for i in board.get(root.id).subtasks]
    assert [s.description for s in subs] == [
        "Summarise solar.md.",
        "Summarise wind.md.",
        "Compare the lifetimes of solar panels and wind turbines.",
    ]
    assert [(s.type, s.context["step"]["files"]) for s in subs] == [
        ("file", ["context/solar.md"]), ("file", ["context/wind.md"]), ("search", [])]
    compare = subs[2]
    assert compare.context["step"]["after"] == [subs[0].id, subs[1].id]  # it receives both summaries
    assert compare.context["step"]["output"] == "comparison" and compare.context["step"]["final"] is True
    assert board.get(root.id).context["final_step"] == compare.id
    assert read_budget(board, root).tasks == 3
    assert router.calls == ["GoalKind"]  # one short choice; the plan itself costs no model call


def test_steps_spelled_out_without_files_are_proposed_independent_then_gathered() -> None:
    goal = "Summarise the solar notes, summarise the wind notes, then compare the lifetimes of panels and turbines"
    steps = propose_steps(goal, ["context/solar.md", "context/wind.md"], {s.name: s for s in (SEARCH_SPEC, FILE_SPEC)})
    assert steps is not None
    assert [s.description for s in steps] == ["Summarise the solar notes.", "Summarise the wind notes.",
                                              "Compare the lifetimes of panels and turbines."]
    assert [s.after for s in steps[:2]] == [[], []]  # the two summaries do not wait for each other
    assert steps[2].after == steps[:2]  # the last one gathers them
    # a goal that names no file and spells out no steps is the planner's
    assert propose_steps("Write a short care guide for a cat", [], {s.name: s for s in (SEARCH_SPEC, FILE_SPEC)}) is None


# --------------------------------------------------------------------------- 4. --until-idle waits for a split


class Splitter(EchoAgent):
    """A slow breakdown stand-in: takes only the goal, thinks, then splits it into two steps."""

    agent_type = "splitter"

    def __init__(self, think_s: float) -> None:
        super().__init__()
        self.think_s = think_s

    async def should_handle(self, task: BoardTask, board: Any) -> bool:
        return task.type == "goal"

    async def process(self, task: BoardTask, board: Any) -> Any:
        await asyncio.sleep(self.think_s)
        ids = [board.submit(BoardTask(description=f"step {i}", type="step", parent_id=task.id, root_id=task.id,
                                      depth=1)).id for i in range(2)]
        board.update(board.get(task.id).model_copy(update={"subtasks": ids}))
        return AWAITING_SUBTASKS


class StepsOnly(EchoAgent):
    async def should_handle(self, task: BoardTask, board: Any) -> bool:
        return task.type == "step"


def test_a_specialist_started_before_the_split_waits_for_its_subtasks(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description="a goal in two steps", type="goal"))
    specialist = Worker(FolderBoard(board.root), StepsOnly(), poll_s=0.02, stop_when_idle=True, idle_grace_s=1.0)
    done: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: done.update(stats=asyncio.run(specialist.run())))
    thread.start()  # the specialist starts first: the goal is pending and not for it
    time.sleep(0.3)
    assert thread.is_alive()  # it did not exit on a board with only someone else's goal on it
    # the breakdown worker arrives late and thinks longer than the specialist's idle grace
    breakdown = Worker(FolderBoard(board.root), Splitter(think_s=1.5), poll_s=0.02, stop_when_idle=True, idle_grace_s=1.0)
    asyncio.run(breakdown.run())
    thread.join(timeout=30)
    stats = done["stats"]
    assert sorted(stats.completed_ids) == sorted(board.get(goal.id).subtasks)
    assert board.get(goal.id).status is TaskStatus.COMPLETED
    assert stats.stop_reason == "idle: nothing pending or active"


def test_until_idle_stops_after_the_grace_when_nobody_takes_the_rest(board: FolderBoard) -> None:
    board.submit(BoardTask(id="theirs", description="for another agent", type="goal"))
    worker = Worker(board, StepsOnly(), poll_s=0.02, stop_when_idle=True, idle_grace_s=0.3)
    stats = asyncio.run(worker.run())
    assert stats.stop_reason == "idle: only 1 pending task(s) for other agents, unchanged for 0.3s"
    assert board.get("theirs").status is TaskStatus.PENDING and board.get("theirs").attempts == 0


class SplitBetweenReads(FolderBoard):
    """A board on which another worker's split lands between the idle check's two reads: its
    subtasks are added just after the pending tasks were listed, and the goal is parked (held
    by no worker) before the active ones are."""

    def __init__(self, root: Path, goal_id: str) -> None:
        super().__init__(root)
        self.goal_id, self.split = goal_id, False

    def list(self, status: TaskStatus | None = None, *, limit: int | None = None) -> list[BoardTask]:
        tasks = super().list(status, limit=limit)
        if status is TaskStatus.PENDING and limit is None and not self.split:
            self.split = True
            ids = [self.submit(BoardTask(description=f"step {i}", type="step", parent_id=self.goal_id,
                                         root_id=self.goal_id, depth=1)).id for i in range(2)]
            goal = self.get(self.goal_id)
            self.update(goal.model_copy(update={"subtasks": ids, "claimed_by": AWAITING_OWNER, "lease_expires_at": None}))
        return tasks


def test_a_split_landing_while_the_idle_check_reads_the_board_is_not_missed(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description="a goal in two steps", type="goal"))
    assert board.claim(goal.id, "breakdown-1", lease_s=60) is not None
    racing = SplitBetweenReads(board.root, goal.id)
    stats = asyncio.run(Worker(racing, StepsOnly(), poll_s=0.02, stop_when_idle=True, idle_grace_s=0.3).run())
    assert racing.split
    assert sorted(stats.completed_ids) == sorted(board.get(goal.id).subtasks)  # it did not stop on a stale read
    assert board.get(goal.id).status is TaskStatus.COMPLETED
