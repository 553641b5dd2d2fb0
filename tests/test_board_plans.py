"""Issue #38: goals go to breakdown by rule, typed plans whose steps read what they must, and
results that must answer their goal. Scripted models, real folder boards, real workers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import EventBus, RunStore
from moot.teams.board import BoardTask, TaskStatus
from moot.teams.board.agents import build_agent, goal_run_id
from moot.teams.board.answer_check import Source, answer_problem
from moot.teams.board.breakdown import TaskBreakdownAgent
from moot.teams.board.builtin_agents import FileAgent, SearchAgent
from moot.teams.board.compare import comparison_line, propose_rows
from moot.teams.board.facts import carried, extract_facts
from moot.teams.board.folder import FolderBoard
from moot.teams.board.goal_budget import read_budget
from moot.teams.board.plan import MissingInput, PlanStep, files_named, repair
from moot.teams.board.session import solve_goal
from moot.teams.board.specs import FILE_SPEC, SEARCH_SPEC
from moot.teams.board.worker import Worker

MARCH = "# Quay report, 2 March 2031\nThe Kessel ferry carried 8,240 riders in February. Ines Hald ran 5 boats.\n"
APRIL = "# Quay report, 1 April 2031\nThe Kessel ferry carried 9,015 riders in March. Ines Hald ran 6 boats.\n"
GOAL = "Summarise march.md, summarise april.md, then say how the rider numbers changed between the two notes"


@pytest.fixture
def board(tmp_path: Path) -> FolderBoard:
    b = FolderBoard(tmp_path / "ws")
    b.init()
    (b.root / "context" / "march.md").write_text(MARCH)
    (b.root / "context" / "april.md").write_text(APRIL)
    return b


class Team:
    """One scripted model for every board role, answering by the requested schema's name.

    ``plan`` is the planner's answer; ``texts`` the executor's answers in turn (a function of
    the request, or text); a comparison picks the first row Python proposed.
    """

    def __init__(self, plan: dict[str, Any] | None = None, texts: list[Any] | None = None, kind: str = "comparison",
                 **fixed: Any) -> None:
        self.plan = plan
        self.kind = kind
        self.texts = list(texts or [first_line_with_a_number])
        self.fixed = fixed
        self.calls: list[str] = []
        self.requests: list[ModelRequest] = []
        self.model = FunctionModel(self.answer)

    def answer(self, request: ModelRequest) -> Any:
        name = request.output.name if request.output is not None else "text"
        self.calls.append(name)
        self.requests.append(request)
        if name in self.fixed:
            value = self.fixed[name]
            return value(request) if callable(value) else value
        if name == "Plan":
            assert self.plan is not None, "no plan scripted"
            return self.plan
        if name == "GoalCheck":
            return {"advances_goal": True, "reason": "it answers the goal"}
        if name == "GoalKind":
            return {"kind": self.kind}
        if name == "Comparison":
            return {"row": first_row(request), "answer": "The numbers rose."}
        text = self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]
        return text(request) if callable(text) else text


def first_row(request: ModelRequest) -> str:
    """The first row a comparison offers (a one-row choice is a JSON-schema ``const``)."""
    row = request.output.json_schema["properties"]["row"]
    return row["enum"][0] if "enum" in row else row["const"]


def first_line_with_a_number(request: ModelRequest) -> str:
    """An executor that copies the first line of its inputs holding a figure (a faithful summary)."""
    for line in request.messages[-1].content.splitlines():
        if any(c.isdigit() for c in line) and not line.startswith("#") and "[" not in line[:2]:
            return line.strip()
    return "Nothing to report."


PLAN = {"kind": "comparison", "steps": [
    {"description": "Summarise the first quay report", "agent": "search", "files": ["context/march.md"], "output": "summary"},
    {"description": "Look up the riders in the second quay report", "agent": "file", "files": ["context/april.md"],
     "output": "facts"},
    {"description": "Read, write and list files inside the workspace", "agent": "file", "output": "answer"},
    {"description": "Say how the rider numbers changed", "agent": "search", "after": [1, 2], "output": "comparison"},
]}
"""What a planner writes for a goal that names no file: one step copies an agent's description."""


def workers(board: FolderBoard, model: Any, *kinds: str, **options: Any) -> list[Worker]:
    return [Worker(FolderBoard(board.root), build_agent(k, board=board, model=model, record=False, **options),
                   poll_s=0.02, stop_when_idle=True, idle_grace_s=0.5) for k in kinds]


async def run_all(ws: list[Worker]) -> None:
    await asyncio.gather(*(w.run() for w in ws))


# --------------------------------------------------------------------------- facts by format


def test_facts_are_found_by_format_and_matched_by_value() -> None:
    facts = extract_facts("On 2 March 2031 the Kessel ferry carried 8,240 riders; see context/notes-2031.md. Ines Hald said so.")
    assert {(f.kind, f.key) for f in facts.items} == {
        ("date", "2031-03-02"), ("name", "kessel"), ("number", "8240"), ("name", "ines hald")}
    # another spelling of the same value is the same fact; a number inside a file name is none
    assert [f.text for f in carried(facts, "It carried 8240 riders on 2031-03-02 (Ines Hald).")] == [
        "2 March 2031", "8,240", "Ines Hald"]
    assert files_named("Compare context/a-2031.md with notes.txt and the 3.5 figure") == ["context/a-2031.md", "notes.txt"]


def test_a_restatement_and_a_result_without_facts_are_rejected() -> None:
    sources = [Source("context/march.md", MARCH), Source("context/april.md", APRIL)]
    restated = answer_problem("The rider numbers changed between the two notes.", task_text=GOAL, sources=sources)
    assert restated is not None and restated.startswith("the result restates the task")
    empty = answer_problem("The ferry was busy and everyone was pleased.", task_text=GOAL, sources=sources)
    assert empty is not None and "carries no figure, date or name from its inputs" in empty and "8,240" in empty
    one_sided = answer_problem("It carried 9,015 riders.", task_text=GOAL, sources=sources, comparison=True)
    assert one_sided is not None and "context/march.md" in one_sided
    assert answer_problem("It rose from 8,240 to 9,015 riders.", task_text=GOAL, sources=sources, comparison=True) is None


def test_python_pairs_the_figures_and_computes_the_change() -> None:
    rows = propose_rows([Source("context/march.md", MARCH), Source("context/april.md", APRIL)], GOAL)
    assert [f.text for f in rows[0].values] == ["8,240", "9,015"]  # the riders, not the boats, come first
    assert comparison_line(rows[0]) == "8,240 (context/march.md) → 9,015 (context/april.md); change: +775 (+9.4 %)"
    # a range is one value, given as written, with no change computed between ranges
    ranges = propose_rows([Source("context/solar.md", "The panels last 25 to 30 years."),
                           Source("context/wind.md", "A turbine lasts about 20–25 years.")], "Compare the lifetimes")
    assert comparison_line(ranges[0]) == "25 to 30 (context/solar.md) → 20–25 (context/wind.md)"


# --------------------------------------------------------------------------- routing by rule


async def test_a_goal_is_claimed_by_breakdown_on_the_first_poll_with_no_decision_call(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(id="g", description=GOAL, type="goal"))
    team = Team(Fitness={"score": 1, "reason": "the model would say no"})
    breakdown = Worker(board, TaskBreakdownAgent(model=team.model, record=False), poll_s=0.02, max_tasks=1)
    await breakdown.run()
    taken = board.get(goal.id)
    assert taken.claimed_by is not None and taken.attempts == 1 and breakdown.stats.parked == 1
    assert team.calls == ["GoalKind"]  # no fitness, no metacognition: the rule decided; the plan is Python's
    # specialists decline the goal by the same rule, also without a call
    assert await SearchAgent(model=team.model).should_handle(taken, board) is False
    assert team.calls == ["GoalKind"]


async def test_a_task_every_agent_declines_is_still_taken_by_the_best_and_the_doubt_recorded(board: FolderBoard) -> None:
    task = board.submit(BoardTask(id="t", description="Tell me about the ferry"))  # general: search and file may take it
    scores = {"search-evaluator": 4, "file-evaluator": 2}  # both under their threshold of 6
    team = Team(texts=["The Kessel ferry carried 8,240 riders in February."],
                Fitness=lambda request: {"score": scores[request.agent], "reason": "not really mine"})
    ws = workers(board, team.model, "search", "file", rank_step_s=0.1, doubt_wait_s=0.3)
    await run_all(ws)
    done = board.get(task.id)
    assert done.status is TaskStatus.COMPLETED and done.attempts == 1
    assert done.result["agent"] == "search"  # the better of the two doubtful agents took it
    assert done.result["doubt"] == "fitness 4/10 is under this agent's threshold 6; no better-fitting agent took it"
    assert sum(w.stats.completed for w in ws) == 1  # once
    assert team.calls.count("Fitness") == 2  # each scored it once


# --------------------------------------------------------------------------- subtasks do what they say


async def test_a_file_step_reads_the_file_through_the_tool(board: FolderBoard, tmp_path: Path) -> None:
    store, bus = RunStore(tmp_path / "runs.db"), EventBus()
    goal = board.submit(BoardTask(description=GOAL, type="goal"))
    step = board.submit(BoardTask(description="Summarise march.md", type="file", requirements=["file_operations"],
                                  context={"original_goal": GOAL, "step": {"number": 1, "files": ["context/march.md"]}},
                                  parent_id=goal.id, root_id=goal.id, depth=1))
    team = Team()
    result = await FileAgent(model=team.model, store=store, bus=bus).process(step, board)
    assert result["output"] == "The Kessel ferry carried 8,240 riders in February. Ines Hald ran 5 boats."
    assert result["read"] == ["context/march.md"]
    executor = next(r for r in team.requests if r.output is None)
    assert "[file context/march.md]" in executor.messages[-1].content and not executor.tools  # given, not fetched
    events = [e for run in store.children(goal_run_id(goal.id)) for e in store.events(run.id) if e.type.value == "tool_call"]
    assert [(e.payload["tool"], e.payload["arguments"]) for e in events] == [("read_file", "context/march.md")]


async def test_the_final_step_must_use_every_result_it_receives(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description="Summarise march.md and april.md together", type="goal"))
    team = Team(kind="summary", texts=[
        "The Kessel ferry carried 8,240 riders in February.",  # the final step forgets april.md
        "In February 8,240 riders on 5 boats, in March 9,015 riders on 6 boats of the Kessel ferry."])
    await run_all(workers(board, team.model, "breakdown", "search", "file"))
    done = board.get(goal.id)
    assert done.status is TaskStatus.COMPLETED, done.error
    final = board.get(done.context["final_step"])
    assert final.attempts == 2  # the first answer was rejected and retried
    reads = [board.get(i) for i in done.subtasks if i != final.id]
    # the two reads asked only for their files' facts: Python gave them, no model call
    assert [r.result["output"] for r in reads] == [
        "Quay report, 2 March 2031. The Kessel ferry carried 8,240 riders in February. Ines Hald ran 5 boats.",
        "Quay report, 1 April 2031. The Kessel ferry carried 9,015 riders in March. Ines Hald ran 6 boats."]
    assert all(r.result["extracted"] for r in reads) and team.calls.count("text") == 2
    final_prompts = [r.messages[-1].content for r in team.requests if r.agent == "search-executor"]
    assert all("[result of context/march.md]" in p and "[result of context/april.md]" in p for p in final_prompts)
    assert "previous attempt ended with: the result uses nothing from context/april.md" in final_prompts[1]
    assert done.result["answer"] == "In February 8,240 riders on 5 boats, in March 9,015 riders on 6 boats of the Kessel ferry."


async def test_a_restating_result_is_rejected_with_the_reason_and_retried(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description=GOAL, type="goal"))
    step = board.submit(BoardTask(description="Say how the rider numbers changed", type="search",
                                  context={"original_goal": GOAL, "step": {"number": 1, "files": ["context/march.md", "context/april.md"]}},
                                  parent_id=goal.id, root_id=goal.id, depth=1))
    team = Team(texts=["The rider numbers changed between the two notes.",
                       "The Kessel ferry carried 8,240 riders in February and 9,015 in March."])
    await run_all([Worker(board, build_agent("search", board=board, model=team.model, record=False), poll_s=0.02,
                          stop_when_idle=True, idle_grace_s=0.2)])
    done = board.get(step.id)
    assert done.status is TaskStatus.COMPLETED and done.attempts == 2
    assert done.result["output"] == "The Kessel ferry carried 8,240 riders in February and 9,015 in March."
    retry = [r for r in team.requests if r.output is None][1].messages[-1].content
    assert "previous attempt ended with: the result restates the task instead of answering it" in retry
    assert team.calls.count("GoalCheck") == 1  # only the real answer reached the model's goal check


async def test_a_result_that_only_restates_is_never_accepted_by_the_model_check(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description=GOAL, type="goal"))
    step = board.submit(BoardTask(description="Say how the rider numbers changed", type="search",
                                  context={"original_goal": GOAL, "step": {"number": 1, "files": ["context/march.md", "context/april.md"]}},
                                  parent_id=goal.id, root_id=goal.id, depth=1, max_attempts=2))
    team = Team(texts=["The rider numbers changed between the two notes."])
    search = build_agent("search", board=board, model=team.model, record=False)
    ws = [Worker(board, search, poll_s=0.02, stop_when_idle=True, idle_grace_s=0.2)]
    await run_all(ws)
    done = board.get(step.id)
    assert done.attempts == 2 and "GoalCheck" not in team.calls  # Python rejected it before the model was asked
    retry = [r for r in team.requests if r.output is None][1].messages[-1].content
    assert "previous attempt ended with: the result restates the task" in retry
    # after the last attempt the step hands on its files' own sentences, and says why; never the restatement
    assert done.status is TaskStatus.COMPLETED
    assert done.result["output"] == (
        "context/march.md: Quay report, 2 March 2031. The Kessel ferry carried 8,240 riders in February. Ines Hald ran 5 boats.\n"
        "context/april.md: Quay report, 1 April 2031. The Kessel ferry carried 9,015 riders in March. Ines Hald ran 6 boats.")
    assert done.result["fallback"].startswith("the result restates the task instead of answering it")


async def test_a_summary_that_drops_figures_is_retried_then_handed_on_as_the_files_facts(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(description="Summarise march.md", type="goal"))
    step = board.submit(BoardTask(description="Summarise march.md", type="file", max_attempts=2,
                                  context={"original_goal": "Report on the quay", "step": {"number": 1, "files": ["context/march.md"],
                                                                                           "output": "summary"}},
                                  parent_id=goal.id, root_id=goal.id, depth=1))
    team = Team(texts=["The Kessel ferry carried 8,240 riders in February."])  # the boats are left out, twice
    await run_all([Worker(board, build_agent("file", board=board, model=team.model, record=False), poll_s=0.02,
                          stop_when_idle=True, idle_grace_s=0.2)])
    done = board.get(step.id)
    retry = [r for r in team.requests if r.output is None][1].messages[-1].content
    assert "previous attempt ended with: the result leaves out figures of context/march.md: 5" in retry
    assert done.status is TaskStatus.COMPLETED and done.attempts == 2
    assert done.result["fallback"].startswith("the result leaves out figures of context/march.md: 5")
    assert done.result["output"] == ("context/march.md: Quay report, 2 March 2031. The Kessel ferry carried 8,240 riders "
                                     "in February. Ines Hald ran 5 boats.")


# --------------------------------------------------------------------------- a missing file


async def test_a_goal_naming_a_missing_file_fails_at_once_with_the_reason(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(id="g", description="Summarise march.md and may.md, then compare them", type="goal"))
    team = Team()
    await run_all(workers(board, team.model, "breakdown", "search", "file"))
    failed = board.get(goal.id)
    assert failed.status is TaskStatus.FAILED and failed.attempts == 1  # not retried: nothing would change
    assert failed.error == ("the goal names may.md, which is not in the workspace "
                            "(files under context/: context/april.md, context/march.md)")
    assert team.calls == [] and read_budget(board, failed).model_calls == 0


async def test_a_file_that_vanished_after_planning_fails_its_step_and_the_goal(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(id="g", description=GOAL, type="goal"))
    team = Team()
    await Worker(board, TaskBreakdownAgent(model=team.model, record=False), poll_s=0.02, max_tasks=1).run()
    (board.root / "context" / "april.md").unlink()
    await run_all(workers(board, team.model, "search", "file"))
    failed = board.get(goal.id)
    assert failed.status is TaskStatus.FAILED
    assert "context/april.md is not in the workspace any more" in (failed.error or "")
    assert all(t.status is not TaskStatus.PENDING for t in board.list())  # the comparison did not wait forever


# --------------------------------------------------------------------------- the whole goal


async def test_a_goal_is_planned_read_compared_and_answered_with_its_figures(board: FolderBoard) -> None:
    team = Team()
    outcome = await solve_goal(board, GOAL, model=team.model, record=False, poll_s=0.02, goal_id="g")
    assert outcome.finished, outcome.error
    assert outcome.answer.startswith("8,240 (context/march.md) → 9,015 (context/april.md); change: +775 (+9.4 %).")
    assert outcome.goal.result["read"] == ["context/march.md", "context/april.md"]
    plan = outcome.goal.context["plan"]
    assert [(p["agent"], p["description"], p["files"], p["after"], p["output"]) for p in plan] == [
        ("file", "Summarise march.md.", ["context/march.md"], [], "summary"),
        ("file", "Summarise april.md.", ["context/april.md"], [], "summary"),
        ("search", "Say how the rider numbers changed between the two notes.", [], [1, 2], "comparison")]
    # the goal's kind, two summaries, a comparison, and one goal check per step
    assert team.calls.count("GoalKind") == 1 and team.calls.count("GoalCheck") == 3
    assert outcome.model_calls == len(team.calls) == 7
    assert json.dumps(outcome.goal.result)  # the result is plain JSON


# --------------------------------------------------------------------------- plan repair, no model


def test_repair_routes_file_reads_and_ends_a_comparison_in_a_comparison() -> None:
    from moot.teams.board.specs import BREAKDOWN_SPEC

    specs = {s.name: s for s in (SEARCH_SPEC, FILE_SPEC)}
    available = ["context/april.md", "context/march.md", "context/other.md"]
    planned = [PlanStep("Look up march.md", "search"), PlanStep("Look up the April riders", "search", files=["context/april.md"])]
    steps = repair("How did the riders do over the spring?", "comparison", planned, available, specs)
    assert [(s.agent, s.files, s.output) for s in steps] == [
        ("file", ["context/march.md"], "answer"),  # the file named in the words is its input; a read is file's
        ("file", ["context/april.md"], "answer"),
        ("search", [], "comparison"),
    ]
    assert steps[-1].after == steps[:2]  # the comparison receives both reads
    assert steps[0].added_by and "goes to the file agent" in steps[0].added_by
    with pytest.raises(MissingInput, match="june.md, which is not in the workspace"):
        repair("Summarise june.md", "summary", [], available, specs)
    assert BREAKDOWN_SPEC.name not in specs  # the planner never assigns a step to the breakdown agent


async def test_a_goal_naming_no_file_is_planned_by_the_model_under_the_schema(board: FolderBoard) -> None:
    goal = board.submit(BoardTask(id="g", description="Find out how the ferry did over the two quay reports", type="goal"))
    team = Team(PLAN)
    await Worker(board, TaskBreakdownAgent(model=team.model, record=False), poll_s=0.02, max_tasks=1).run()
    subs = [board.get(i) for i in board.get(goal.id).subtasks]
    # the copied description is gone; a step that reads a file is the file agent's
    assert [(s.type, s.context["step"]["files"], s.context["step"]["output"]) for s in subs] == [
        ("file", ["context/march.md"], "summary"), ("file", ["context/april.md"], "facts"), ("search", [], "comparison")]
    assert subs[2].context["step"]["after"] == [subs[0].id, subs[1].id]
    planner = next(r for r in team.requests if r.output is not None and r.output.name == "Plan")
    files_offered = planner.output.json_schema["$defs"]["PlanStep"]["properties"]["files"]["items"]["enum"]
    assert files_offered == ["context/april.md", "context/march.md"]  # only files that exist can be named
    assert team.calls == ["Plan"]


async def test_a_hand_made_step_cannot_read_outside_the_workspace(board: FolderBoard, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("the key is 1234")
    goal = board.submit(BoardTask(description="Read things", type="goal"))
    step = board.submit(BoardTask(description="Summarise the secret", type="file", max_attempts=1,
                                  context={"step": {"number": 1, "files": ["../secret.txt"], "output": "summary"}},
                                  parent_id=goal.id, root_id=goal.id, depth=1))
    team = Team()
    await run_all([Worker(board, build_agent("file", board=board, model=team.model, record=False), poll_s=0.02,
                          stop_when_idle=True, idle_grace_s=0.2)])
    failed = board.get(step.id)
    assert failed.status is TaskStatus.FAILED and "contains '..'" in (failed.error or "")
    assert team.calls == []  # refused before any model saw anything
