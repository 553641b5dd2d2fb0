"""Board agents: should_handle order, breakdown, dedup, depth limit, self-extension, safety, budgets.

Every test runs on a real folder board with the project's FunctionModel, which answers each
structured decision by its schema name and records which decisions were asked for.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moot.errors import ConfigError, MootError
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.teams.board import MAX_DEPTH, AgentSpec, BoardTask, TaskStatus
from moot.teams.board.agent_tools import build_tools, confine, validate_command
from moot.teams.board.agents import BaseAgent, ResultRejected, build_agent
from moot.teams.board.breakdown import TaskBreakdownAgent, similarity
from moot.teams.board.builtin_agents import SearchAgent
from moot.teams.board.extension import InvalidSpecError, validate_spec
from moot.teams.board.folder import FolderBoard
from moot.teams.board.goal_budget import GoalBudgetExceeded, read_budget
from moot.teams.board.protocol import AWAITING_SUBTASKS, BoardAgent, Defer


class Router:
    """A FunctionModel whose answers are chosen by the requested output schema's name."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers
        self.calls: list[str] = []
        self.requests: list[ModelRequest] = []
        self.model = FunctionModel(self._answer)

    def _answer(self, request: ModelRequest) -> Any:
        name = request.output.name if request.output is not None else "text"
        self.calls.append(name)
        self.requests.append(request)
        value = self.answers[name]
        if isinstance(value, list):
            value = value.pop(0) if len(value) > 1 else value[0]
        return value(request) if callable(value) else value


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    return b


def submit_root(board: FolderBoard, description: str = "Write a short guide to caring for cats", **context: Any) -> BoardTask:
    return board.submit(BoardTask(description=description, context=context))


def child(board: FolderBoard, root: BoardTask, description: str, *, depth: int = 1, requirements: list[str] | None = None) -> BoardTask:
    return board.submit(
        BoardTask(
            description=description,
            requirements=requirements or [],
            context={"original_goal": root.description},
            parent_id=root.id,
            root_id=root.id,
            depth=depth,
        )
    )


# --------------------------------------------------------------------------- should_handle


async def test_agents_satisfy_the_worker_protocol(board: FolderBoard) -> None:
    for kind in ("breakdown", "search", "file", "echo"):
        assert isinstance(build_agent(kind, board=board, model=Router().model), BoardAgent)


async def test_rules_route_with_no_model_call(board: FolderBoard) -> None:
    router = Router()  # any model call would fail the test: there is no answer to give
    breakdown, search = TaskBreakdownAgent(model=router.model), SearchAgent(model=router.model)
    goal = board.submit(BoardTask(description="Summarise the notes, then compare them", type="goal"))
    assert await breakdown.should_handle(goal, board) is True
    assert await search.should_handle(goal, board) is False
    file_step = child(board, goal, "Summarise context/a.md", requirements=["file_operations"])
    file_step = board.update(file_step.model_copy(update={"type": "file"}))
    assert await search.should_handle(file_step, board) is False
    assert await breakdown.should_handle(file_step, board) is False
    assert router.calls == []


async def test_fitness_only_ranks_and_never_leaves_a_task_untaken(board: FolderBoard) -> None:
    root = submit_root(board)  # a general task: breakdown, search and file may all take it
    low = Router(Fitness={"score": 2, "reason": "not my job"})
    agent = SearchAgent(model=low.model, rank_step_s=0.0, doubt_wait_s=0.2)
    first = await agent.should_handle(root, board)
    assert isinstance(first, Defer) and not first and not first.waiting_on_others
    await asyncio.sleep(0.25)
    assert await agent.should_handle(root, board) is True  # no better agent took it: it takes it anyway
    assert low.calls == ["Fitness"]  # scored once, however often it was asked
    assert "under this agent's threshold 6" in agent._doubts[root.id]
    high = Router(Fitness={"score": 10, "reason": "exactly my job"})
    assert await SearchAgent(model=high.model, rank_step_s=5.0).should_handle(root, board) is True  # no wait at 10
    nine = await SearchAgent(model=Router(Fitness={"score": 9, "reason": "x"}).model, rank_step_s=5.0).should_handle(root, board)
    assert isinstance(nine, Defer) and 4.0 < nine.seconds <= 5.0  # a 9 leaves one step to a 10


async def test_capability_precheck_avoids_model_calls(board: FolderBoard) -> None:
    router = Router()
    task = child(board, submit_root(board), "Write results/guide.md", requirements=["file_operations"])
    assert await SearchAgent(model=router.model).should_handle(task, board) is False
    assert router.calls == []


async def test_a_general_task_is_scored_once_and_the_decision_cached(board: FolderBoard) -> None:
    router = Router(Fitness={"score": 10, "reason": "mine"})
    task = submit_root(board, "Paint the fence")
    agent = SearchAgent(model=router.model)
    assert await agent.should_handle(task, board) is True
    assert await agent.should_handle(task, board) is True
    assert router.calls == ["Fitness"]
    assert read_budget(board, task).model_calls == 1


async def test_process_validates_the_result_against_the_original_goal(board: FolderBoard) -> None:
    root = submit_root(board)
    task = child(board, root, "List what cats eat", requirements=["research"])
    good = Router(text="Cats eat meat.", GoalCheck={"advances_goal": True, "reason": "on topic"})
    result = await BaseAgent(AgentSpec(name="writer", capabilities=["research"]), model=good.model).process(task, board)
    assert result == {"agent": "writer", "output": "Cats eat meat."}
    bad = Router(text="The stock market rose.", GoalCheck={"advances_goal": False, "reason": "off topic"})
    with pytest.raises(ResultRejected, match="does not advance the original goal: off topic"):
        await BaseAgent(AgentSpec(name="writer", capabilities=["research"]), model=bad.model).process(task, board)


# --------------------------------------------------------------------------- breakdown


def plan(*items: tuple[str, str], kind: str = "other", **extra: Any) -> dict[str, Any]:
    """A typed plan: (description, agent) steps; ``extra`` maps a step number to more fields."""
    steps = [{"description": d, "agent": a, "after": [], "output": "answer", **extra.get(f"s{n}", {})}
             for n, (d, a) in enumerate(items, 1)]
    return {"kind": kind, "steps": steps}


async def test_breakdown_creates_typed_subtasks_linked_to_the_goal(board: FolderBoard) -> None:
    root = submit_root(board)
    router = Router(Plan=plan(("Find notes on cat food", "search"), ("Write the guide to results/guide.md", "file"),
                              s2={"after": [1]}))
    outcome = await TaskBreakdownAgent(model=router.model).process(root, board)
    assert outcome is AWAITING_SUBTASKS
    parent = board.get(root.id)
    subs = [board.get(i) for i in parent.subtasks]
    assert [s.description for s in subs] == ["Find notes on cat food", "Write the guide to results/guide.md"]
    for sub in subs:
        assert (sub.parent_id, sub.root_id, sub.depth) == (root.id, root.id, 1)
        assert sub.context["original_goal"] == root.description
        assert sub.status is TaskStatus.PENDING
    assert [s.type for s in subs] == ["search", "file"]  # each step's agent type: routing by rule
    assert subs[1].context["step"]["after"] == [subs[0].id]  # the guide is written from the notes found
    assert parent.context["final_step"] == subs[1].id
    assert [p["agent"] for p in parent.context["plan"]] == ["search", "file"]
    assert read_budget(board, root).tasks == 2
    assert router.calls == ["Plan"]  # the goal was claimed and split with one model call


async def test_repeated_work_on_the_same_inputs_is_reused_not_redone(board: FolderBoard) -> None:
    root = submit_root(board)
    earlier = board.submit(BoardTask(description="Search the documents for cat food facts", type="search",
                                     context={"original_goal": root.description, "step": {"number": 1, "files": [], "digests": {}}},
                                     parent_id=root.id, root_id=root.id, depth=1))
    router = Router(Plan=plan(
        ("Search documents for cat food facts", "search"),
        ("Write the final guide file", "file"),
        ("Write the final guide files", "file"),
    ))
    await TaskBreakdownAgent(model=router.model).process(root, board)
    subs = [board.get(i) for i in board.get(root.id).subtasks]
    assert [s.description for s in subs] == ["Search documents for cat food facts", "Write the final guide file"]
    assert subs[0].context["duplicate_of"] == earlier.id  # same agent, same inputs, same words: reused
    assert "duplicate_of" not in subs[1].context
    assert "DuplicateCheck" not in router.calls
    assert similarity("Search the documents for cat food facts", "Search documents for cat food facts") >= 0.8
    # the duplicate's agent answers with the earlier result once it is there, with no model call
    board.claim(earlier.id, "w", lease_s=60)
    board.complete(earlier.id, "w", {"agent": "search", "output": "Cats eat meat twice a day."})
    search = SearchAgent(model=Router().model)
    assert await search.should_handle(subs[0], board) is True
    assert await search.process(subs[0], board) == {"agent": "search", "output": "Cats eat meat twice a day.",
                                                     "duplicate_of": earlier.id}


async def test_borderline_pairs_ask_the_model(board: FolderBoard) -> None:
    root = submit_root(board)
    earlier = board.submit(BoardTask(description="Collect feeding advice for kittens", type="search",
                                     context={"step": {"number": 1, "files": [], "digests": {}}},
                                     parent_id=root.id, root_id=root.id, depth=1))
    router = Router(
        Plan=plan(("Gather feeding advice for young kittens", "search"), ("Collect grooming advice for kittens", "search"),
                  ("Write the kitten guide from both", "file"), s3={"after": [1, 2]}),
        DuplicateCheck=[{"duplicate": True, "reason": "same work"}, {"duplicate": False, "reason": "different"}],
    )
    await TaskBreakdownAgent(model=router.model).process(root, board)
    subs = [board.get(i) for i in board.get(root.id).subtasks]
    assert [s.context.get("duplicate_of") for s in subs] == [earlier.id, None, None]
    assert router.calls.count("DuplicateCheck") == 2  # both were borderline: the model judged each


async def test_a_task_at_the_depth_limit_is_never_broken_down(board: FolderBoard) -> None:
    root = submit_root(board)
    deep = child(board, root, "Plan the cat guide chapters", depth=MAX_DEPTH, requirements=["planning"])
    router = Router(text="Chapters: food, play, health.")
    agent = TaskBreakdownAgent(model=router.model)
    result = await agent.process(deep, board)
    assert "depth limit 5 reached" in result["note"]
    assert result["output"] == "Chapters: food, play, health."
    assert "Plan" not in router.calls
    assert board.get(deep.id).subtasks == []
    assert len(board.list()) == 2  # nothing was created
    # a depth-5 task without requirements is left to specialists, with no model call
    other = child(board, root, "Summarise the chapters", depth=MAX_DEPTH)
    assert await agent.should_handle(other, board) is False
    assert router.calls == ["text"]
    with pytest.raises(ValueError, match="emergency depth limit"):
        BoardTask(description="too deep", depth=MAX_DEPTH + 1)


async def test_equilibrium_executes_directly_when_pending_work_keeps_growing(board: FolderBoard) -> None:
    root = submit_root(board, breakdown_pending=[1, 2, 3])
    for n in range(3):
        child(board, root, f"Pending step number {n} about topic {n}", requirements=["research"])
    router = Router(text="done directly")
    result = await TaskBreakdownAgent(model=router.model).process(root, board)
    assert result["note"].startswith("equilibrium:")
    assert "Plan" not in router.calls


# --------------------------------------------------------------------------- self-extension


SPEC = {
    "name": "Poem Writer",
    "capability": "poetry",
    "instructions": "Write short poems about the topic.",
    "tools": ["write_file"],
    "threshold": 6,
}


async def test_self_extension_registers_a_validated_spec(board: FolderBoard) -> None:
    root = submit_root(board, "Make a cat-themed greeting card")
    router = Router(
        Plan=plan(("Write a four-line cat poem", "new_agent"), ("Find cat facts for the card", "search")),
        SpecDraft=SPEC,
    )
    await TaskBreakdownAgent(model=router.model).process(root, board)
    registered = {s.name: s for s in board.agents()}
    assert registered["poem_writer"].capabilities == ["poetry"]
    assert registered["poem_writer"].tools == ["write_file"]
    poem = board.get(board.get(root.id).subtasks[0])
    assert (poem.type, poem.requirements) == ("poem_writer", ["poetry"])
    assert poem.context["self_extension"] == {"registered": "poem_writer"}
    worker_agent = build_agent("poem_writer", board=board, model=router.model)
    assert worker_agent.capabilities == ["poetry"]
    assert await worker_agent.should_handle(poem, board) is True  # the only type that may: no model call
    assert await SearchAgent(model=router.model).should_handle(poem, board) is False


async def test_self_extension_rejects_a_tool_off_the_allow_list(board: FolderBoard) -> None:
    root = submit_root(board, "Make a cat-themed greeting card")
    router = Router(
        Plan=plan(("Render the card as a PNG", "new_agent"), ("Find cat facts for the card", "search")),
        SpecDraft={**SPEC, "name": "renderer", "capability": "rendering", "tools": ["exec_python"]},
    )
    await TaskBreakdownAgent(model=router.model).process(root, board)
    assert "renderer" not in {s.name for s in board.agents()}
    card = board.get(board.get(root.id).subtasks[0])
    assert "rejected" in card.context["self_extension"]
    assert (card.type, card.requirements) == ("general", [])


def test_validate_spec_rules() -> None:
    ok = AgentSpec(name="poem_writer", capabilities=["poetry"], tools=["write_file"])
    assert validate_spec(ok) is ok
    with pytest.raises(InvalidSpecError, match="not on the allow-list"):
        validate_spec(ok.model_copy(update={"tools": ["exec_python"]}))
    with pytest.raises(InvalidSpecError, match="terminal enabled"):
        validate_spec(ok.model_copy(update={"tools": ["run_command"]}), allow_terminal=False)
    with pytest.raises(InvalidSpecError, match="built-in"):
        validate_spec(ok.model_copy(update={"name": "search"}))
    with pytest.raises(InvalidSpecError, match="outside 1-10"):
        validate_spec(ok.model_copy(update={"threshold": 11}))
    with pytest.raises(InvalidSpecError, match="not allowed"):
        validate_spec(ok.model_copy(update={"name": "../evil"}))


# --------------------------------------------------------------------------- the goal's budget


async def test_goal_budget_refuses_new_subtasks_with_a_readable_reason(board: FolderBoard) -> None:
    root = submit_root(board, budget={"max_tasks": 2})
    router = Router(Plan=plan(("Step one about food", "search"), ("Step two about play", "search"), ("Step three about vets", "search")))
    with pytest.raises(GoalBudgetExceeded, match="budget of 2 tasks would be exceeded"):
        await TaskBreakdownAgent(model=router.model).process(root, board)
    assert len(board.list()) == 1


async def test_spent_call_budget_stops_model_calls(board: FolderBoard) -> None:
    root = submit_root(board, budget={"max_model_calls": 1})
    router = Router(Fitness={"score": 9, "reason": "x"}, text="an answer")
    agent = TaskBreakdownAgent(model=router.model, rank_step_s=0.0)
    # the fitness call spends the budget; the task is then taken only to be failed
    assert await agent.should_handle(root, board) is True
    assert router.calls == ["Fitness"]
    fresh = board.get(root.id)
    assert await TaskBreakdownAgent(model=router.model).should_handle(fresh, board) is True
    with pytest.raises(GoalBudgetExceeded, match="budget of 1 model calls is spent"):
        await agent.process(fresh, board)
    assert router.calls == ["Fitness"]


# --------------------------------------------------------------------------- built-in agents and tools


def tools_by_name(workspace: Path, *names: str, **options: Any) -> dict[str, Callable[..., Any]]:
    return {t.name: t for t in build_tools(names, workspace=workspace, **options)}


def test_file_tools_stay_in_the_workspace(board: FolderBoard, tmp_path: Path) -> None:
    ws = Path(board.location)
    (tmp_path / "secret.txt").write_text("top secret")
    (ws / "context" / "link").symlink_to(tmp_path / "secret.txt")
    tools = tools_by_name(ws, "read_file", "write_file", "list_files")
    assert tools["write_file"]("results/guide.md", "# Cats") .startswith("wrote")
    assert tools["read_file"]("results/guide.md") == "# Cats"
    for escape in ("../secret.txt", str(tmp_path / "secret.txt"), "context/link", "~/x"):
        with pytest.raises(MootError):
            tools["read_file"](escape)
    with pytest.raises(MootError, match="board's own storage"):
        tools["write_file"]("tasks/pending/forged.json", "{}")
    assert "guide.md" in tools["list_files"]("results")


def test_search_documents_reads_local_context_files(board: FolderBoard) -> None:
    ws = Path(board.location)
    (ws / "context" / "cats.md").write_text("Cats need fresh water daily.\nDogs like walks.\n")
    search = tools_by_name(ws, "search_documents")["search_documents"]
    assert "[context/cats.md:1] Cats need fresh water daily." in search("water for cats")
    assert "no local document" in search("submarines")


def test_terminal_is_off_by_default_and_allow_listed(board: FolderBoard, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOOT_BOARD_TERMINAL", raising=False)
    with pytest.raises(ConfigError, match="off by default"):
        build_agent("terminal", board=board, model=Router().model)
    ws = Path(board.location)
    off = tools_by_name(ws, "run_command")["run_command"]
    with pytest.raises(MootError, match="terminal is off"):
        off("ls")
    for bad, why in [
        ("python -c 'import os'", "not allow-listed"),
        ("ls; rm -rf /", "shell syntax"),
        ("cat /etc/passwd", "absolute path"),
        ("cat ../../etc/passwd", "'..'"),
        ("bash -c ls", "not allow-listed"),
    ]:
        with pytest.raises(MootError, match=why):
            validate_command(bad, ws)
    (ws / "context" / "notes.txt").write_text("one\ntwo\n")
    monkeypatch.setenv("MOOT_BOARD_TERMINAL", "1")
    assert build_agent("terminal", board=board, model=Router().model).agent_type == "terminal"
    on = tools_by_name(ws, "run_command")["run_command"]
    assert on("wc -l context/notes.txt").startswith("exit 0\n2 context/notes.txt")


def test_calculate_never_evaluates_code(board: FolderBoard) -> None:
    calc = tools_by_name(Path(board.location), "calculate")["calculate"]
    assert calc("(12 + 30) * 2") == "84"
    with pytest.raises(MootError):
        calc("__import__('os').system('echo hi')")


def test_build_agent_names_the_fix_for_an_unknown_type(board: FolderBoard) -> None:
    with pytest.raises(ConfigError, match="no agent type 'wizard'") as info:
        build_agent("wizard", board=board)
    assert "breakdown" in info.value.fix


def test_confine_allows_plain_relative_paths(tmp_path: Path) -> None:
    assert confine(tmp_path, "results/a.md") == (tmp_path / "results" / "a.md").resolve()
    assert os.path.commonpath([confine(tmp_path, "."), tmp_path.resolve()]) == str(tmp_path.resolve())


async def test_budget_counts_while_the_root_is_claimed(board: FolderBoard) -> None:
    # A worker holds the root while its breakdown runs; spending must still add up.
    from moot.teams.board.goal_budget import charge

    root = submit_root(board)
    held = board.claim(root.id, "breakdown_w1", lease_s=300)
    assert held is not None
    charge(board, held, model_calls=1)
    charge(board, held, model_calls=1, tasks=3)
    spent = read_budget(board, held)
    assert (spent.model_calls, spent.tasks) == (2, 3)


async def test_siblings_of_one_plan_are_not_sent_to_the_model_as_duplicates(board: FolderBoard) -> None:
    root = submit_root(board)
    router = Router(
        Plan=plan(("Summarise solar notes", "search"), ("Summarise wind notes", "search")),
        DuplicateCheck=[{"duplicate": True, "reason": "both are summaries"}],
    )
    await TaskBreakdownAgent(model=router.model).process(root, board)
    subs = [board.get(i).description for i in board.get(root.id).subtasks]
    assert subs == ["Summarise solar notes", "Summarise wind notes"]
    assert "DuplicateCheck" not in router.calls


# --------------------------------------------------------------------------- one run lifecycle


async def test_board_agent_calls_are_recorded_runs_under_the_goals_parent_run(board: FolderBoard, tmp_path: Path) -> None:
    from moot.runtime import EventBus, RunStore
    from moot.teams.board.agents import goal_run_id

    store, bus = RunStore(tmp_path / "runs.db"), EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(f"{e.type.value}:{e.agent or ''}"))
    root = submit_root(board, budget={"max_model_calls": 10})
    router = Router(Fitness={"score": 10, "reason": "x"}, GoalCheck={"advances_goal": True, "reason": "ok"})
    agent = SearchAgent(model=router.model, workspace=board.root, store=store, bus=bus)
    assert await agent.should_handle(root, board) is True
    await agent.validate_goal_progress(root.model_copy(update={"context": {"original_goal": "Care for cats"}}), "Cats eat meat.", board)
    runs = store.children(goal_run_id(root.id))
    assert [r.name.split(":")[0] for r in runs] == ["board search-evaluator", "board search-metacognition"]
    assert all(r.status == "completed" and r.usage.requests == 1 for r in runs)
    assert store.get_run(goal_run_id(root.id)).name.startswith("board goal: Write a short guide")
    assert "model_request:search-metacognition" in seen and "run_finished:" in seen
    assert {r.agent for r in router.requests} == {"search-metacognition", "search-evaluator"}
    # the worker closes the goal's run once the root is done: usage summed over its calls
    done = board.get(root.id).model_copy(update={"status": TaskStatus.COMPLETED})
    agent.goal_settled(done)
    goal = store.get_run(goal_run_id(root.id))
    assert goal.status == "completed" and goal.usage.requests == 2


async def test_a_multi_turn_executor_cannot_take_the_goal_past_its_call_budget(board: FolderBoard, tmp_path: Path) -> None:
    from moot.models.testing import tool_call
    from moot.runtime import RunStore

    (board.root / "context").mkdir(exist_ok=True)
    root = submit_root(board, "Find the notes", budget={"max_model_calls": 2})
    router = Router(text=lambda request: tool_call("search_documents", query="notes"))  # never answers
    agent = SearchAgent(model=router.model, workspace=board.root, store=RunStore(tmp_path / "runs.db"))
    agent.max_turns = 5
    with pytest.raises(ResultRejected, match="budget"):
        await agent.execute(root, board)
    assert router.calls == ["text", "text"]  # reserved before the call: 2 of its 5 turns, never more
    assert read_budget(board, root).model_calls == 2
    with pytest.raises(GoalBudgetExceeded):
        await agent.execute(board.get(root.id), board)
    assert router.calls == ["text", "text"]


async def test_a_board_role_can_have_its_own_model(board: FolderBoard) -> None:
    root = submit_root(board)
    cheap = Router(GoalCheck={"advances_goal": True, "reason": "ok"})
    judge = Router(Fitness={"score": 10, "reason": "x"})
    agent = SearchAgent(model=cheap.model, models={"evaluator": judge.model}, workspace=board.root, record=False)
    assert await agent.should_handle(root, board) is True
    await agent.validate_goal_progress(root.model_copy(update={"context": {"original_goal": "Care for cats"}}), "Cats eat meat.", board)
    assert cheap.calls == ["GoalCheck"] and judge.calls == ["Fitness"]
    with pytest.raises(ConfigError, match="the board team has no role 'boss'"):
        SearchAgent(model=cheap.model, models={"boss": judge.model})
