"""Budgets that hold across phases and through the one run lifecycle (issue #22).

test_budget_teams.py drives each team with random budgets and a misbehaving provider and
checks calls, tokens and dollars; this file adds what it leaves out: a **board goal**'s call
budget under random multi-turn executors and retries (reserved before each call, so a
multi-turn call never overshoots), and **time**: each team under a random deadline with calls
that sometimes hang, so a deadline that were only checked between calls would be overrun by
seconds. Every case must also come back with a result (partial results, never an exception).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from moot.models.base import ModelRequest, ModelResponse, WrapperModel
from moot.models.pricing import Price
from moot.models.testing import FunctionModel, tool_call
from test_budget_teams import PROVIDERS, provider

HANG_S = 3.0
"""How long a hanging call takes: far beyond any deadline drawn here."""
SLACK_S = 1.0
"""What a run may take beyond its deadline to wind down and record itself (a loaded 2-core machine)."""


@dataclass
class Latency(WrapperModel):
    """Answers after a random delay; one call in four hangs for :data:`HANG_S`."""

    rng: random.Random = field(default_factory=random.Random)

    async def request(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(HANG_S if self.rng.random() < 0.25 else self.rng.uniform(0.0, 0.03))
        return await self.wrapped.request(request)


def slow(body: Any, rng: random.Random) -> Latency:
    return Latency(FunctionModel(body, name="slow"), rng=rng)


# --------------------------------------------------------------------------- the board goal's budget


def board_answers(rng: random.Random) -> Any:
    """Every board role: decisions by schema, an executor that loops on tools a random number of times."""

    def answer(request: ModelRequest) -> Any:
        name = request.output.name if request.output is not None else "text"
        if name == "Fitness":
            return {"score": 9, "reason": "fits"}
        if name == "GoalCheck":
            return {"advances_goal": rng.random() < 0.5, "reason": "maybe"}
        if rng.random() < 0.6:
            return tool_call("search_documents", query="notes")
        return rng.choice(["The notes say the bridge is 214 metres long.", "no file found"])

    return answer


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_board_goal_never_makes_more_calls_than_its_budget(tmp_path: Path, kind: str) -> None:
    from moot.runtime import RunStore
    from moot.teams.board import BoardTask, TaskStatus
    from moot.teams.board.agents import goal_run_id
    from moot.teams.board.builtin_agents import SearchAgent
    from moot.teams.board.folder import FolderBoard
    from moot.teams.board.goal_budget import read_budget
    from moot.teams.board.worker import Worker

    rng = random.Random(22)
    problems, spent_out = [], 0
    store = RunStore(tmp_path / "runs.db")
    for case in range(12):
        board = FolderBoard(tmp_path / f"b{case}")
        board.init()
        (board.root / "context").mkdir(exist_ok=True)
        (board.root / "context" / "notes.md").write_text("The bridge is 214 metres long.\n")
        max_calls = rng.randint(1, 9)
        root = board.submit(BoardTask(description="Find how long the bridge is in the notes",
                                      context={"budget": {"max_model_calls": max_calls}}, max_attempts=rng.randint(1, 3)))
        model = provider(board_answers(rng), kind, rng, Price(1.0, 4.0))
        agent = SearchAgent(model=model, workspace=board.root, store=store, rank_step_s=0.0)
        agent.max_turns = rng.randint(1, 5)
        worker = Worker(board, agent, poll_s=0.01, stop_when_idle=True, idle_grace_s=0.0, lease_s=30)
        asyncio.run(worker.run())
        done = board.get(root.id)
        if model.billed.requests > max_calls:
            problems.append(f"case {case}: {model.billed.requests} calls > {max_calls}")
        if read_budget(board, done).model_calls != model.billed.requests:
            problems.append(f"case {case}: the goal counted {read_budget(board, done).model_calls}, "
                            f"the provider billed {model.billed.requests}")
        if done.status not in (TaskStatus.COMPLETED, TaskStatus.FAILED) or not (done.result or done.error):
            problems.append(f"case {case}: the goal ended {done.status} without a result or a reason")
        spent_out += "budget" in (done.error or "")
        recorded = store.children(goal_run_id(root.id))
        if sum(r.usage.requests for r in recorded) != model.billed.requests:
            problems.append(f"case {case}: the runs recorded {sum(r.usage.requests for r in recorded)} calls")
    assert problems == []
    assert spent_out >= 3  # many goals really ran out of calls


# --------------------------------------------------------------------------- deadlines


def within(deadline: float, started: float) -> str | None:
    took = time.perf_counter() - started
    return None if took <= deadline + SLACK_S else f"took {took:.2f} s for a deadline of {deadline:.2f} s"


async def test_the_research_team_stops_on_its_deadline_with_a_partial_result(tmp_path: Path) -> None:
    from moot.teams.research import ResearchConfig, ResearchTeam
    from test_research_support import PLAN_3, ResearchScript, make_repo

    rng = random.Random(31)
    repo = make_repo(tmp_path / "repo")
    problems, stopped = [], 0
    for case in range(8):
        deadline = rng.uniform(0.1, 0.6)
        team = ResearchTeam(repo, model=slow(ResearchScript(PLAN_3, synth="Requests are split by `parse_request`."), rng),
                            db_path=tmp_path / "index.db", config=ResearchConfig(deadline_s=deadline))
        team.index()
        started = time.perf_counter()
        try:
            result = await team.ask("How does a request flow end-to-end?", mode=rng.choice(["single", "multi"]))
        finally:
            team.close()
        if (problem := within(deadline, started)) is not None:
            problems.append(f"case {case}: {problem}")
        if not result.answer:
            problems.append(f"case {case}: no answer text at all")
        stopped += result.status == "stopped" and "deadline" in result.stop_reason
    assert problems == []
    assert stopped >= 2


async def test_the_graph_team_stops_on_its_deadline_with_a_partial_graph(tmp_path: Path) -> None:
    from moot.teams.graph import GraphConfig, GraphTeam
    from test_graph_support import GraphScript, make_sources

    rng = random.Random(32)
    sources = make_sources(tmp_path / "src")
    problems, stopped = [], 0
    for case in range(8):
        deadline = rng.uniform(0.1, 0.6)
        team = GraphTeam(sources, model=slow(GraphScript(), rng), config=GraphConfig(deadline_s=deadline))
        team.index()
        started = time.perf_counter()
        result = await team.ask("How does the Ostby mill affect Lake Mira?")
        if (problem := within(deadline, started)) is not None:
            problems.append(f"case {case}: {problem}")
        stopped += "deadline" in result.stop_reason
        if result.scaffold is None or not result.stop_reason:
            problems.append(f"case {case}: no partial graph or no reason")
    assert problems == []
    assert stopped >= 2


async def test_the_deliberation_team_stops_on_its_deadline_with_partial_advice(tmp_path: Path) -> None:
    from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators
    from moot.teams.deliberation import DeliberationTeam

    rng = random.Random(33)
    problems, stopped = [], 0
    for case in range(8):
        deadline = rng.uniform(0.1, 0.6)
        team = DeliberationTeam(SLEEP_VS_DEADLINE, model=slow(Deliberators(), rng), deadline_s=deadline,
                                mode=rng.choice(["quick", "standard", "deep"]))
        started = time.perf_counter()
        result = await team.deliberate(REQUEST, now=NOW)
        if (problem := within(deadline, started)) is not None:
            problems.append(f"case {case}: {problem}")
        stopped += "deadline" in str(result.to_json()).lower()
    assert problems == []
    assert stopped >= 2
