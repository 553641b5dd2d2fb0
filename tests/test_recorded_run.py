"""The one run lifecycle (Run): steps and graphs share one budget, are recorded, traced and cancellable."""

from __future__ import annotations

from pathlib import Path

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, ScriptedModel
from moot.runtime import Budget, EventBus, RecordedRun, RunStore, SubAgent


async def test_steps_are_tasks_of_one_recorded_run_and_the_budget_stops_later_steps(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(str(e.type)))
    planner = SubAgent("planner", model=ScriptedModel(["step one, then step two"]))
    worker_model = ScriptedModel(["done"], repeat_last=True)
    worker = SubAgent("worker", model=worker_model)
    run = RecordedRun("two steps", Budget(max_calls=2), bus, store)
    run.start()
    plan = await run.step("plan", planner, "make a plan")
    first = await run.step("work-1", worker, plan.text if plan else "", depends_on=["plan"])
    second = await run.step("work-2", worker, "more")  # the run's 2 calls are spent: the agent is not run
    third = await run.step("work-3", worker, "even more")  # the run is stopped: not run either
    result = await run.finish("stopped" if run.stopped else "completed", "budget spent")

    assert plan is not None and first is not None and first.text == "done"
    assert second is None and third is None and "2 model calls" in (run.stop_reason or "")
    assert len(worker_model.requests) == 1
    statuses = [result.results[t].status for t in ("plan", "work-1", "work-2", "work-3")]
    assert statuses == ["completed", "completed", "not_started", "not_started"]
    assert result.usage.requests == 2
    record = store.get_run(run.run_id)
    assert record.status == "stopped" and set(record.results) == {"plan", "work-1", "work-2", "work-3"}
    assert record.usage_by_agent["worker"].requests == 1
    assert seen[0].endswith("run_started") and seen[-1].endswith("run_finished")


async def test_a_failing_step_is_recorded_and_listed_without_stopping_the_run(tmp_path: Path) -> None:
    def broken(request: ModelRequest) -> str:
        raise RuntimeError("engine crashed")

    run = RecordedRun("one failure", Budget(max_calls=5), None, None)
    run.start()
    failed = await run.step("bad", SubAgent("bad", model=FunctionModel(broken)), "go")
    ok = await run.step("good", SubAgent("good", model=ScriptedModel(["fine"])), "go")
    result = await run.finish("completed", "")
    assert failed is not None and not failed.ok and ok is not None and ok.text == "fine"
    assert result.results["bad"].status == "failed" and "engine crashed" in result.results["bad"].error
    assert run.failures == [f"bad: {result.results['bad'].error}"]


async def test_a_graph_inside_a_run_spends_from_the_same_tracker_and_is_recorded_as_its_tasks(tmp_path: Path) -> None:
    from moot.runtime import Run, SubAgentTask, TaskGraph

    store = RunStore(tmp_path / "runs.db")
    model = FunctionModel(lambda request: f"{request.agent} says hi")
    async with Run("pipeline", Budget(max_calls=4), store=store) as run:
        tracker = run.tracker
        await run.step("plan", SubAgent("planner", model=model), "plan")
        readers = [SubAgent(f"reader-{i}", model=model) for i in range(5)]
        inner = await run.graph(TaskGraph(readers, [SubAgentTask(a.name, "read") for a in readers]), max_parallel=2)
        late = await run.step("write", SubAgent("writer", model=model), "write")
    assert run.tracker is tracker  # one tracker through every phase, never rebuilt
    assert len(model.requests) == 4 and late is None  # 1 + 3 readers; the budget refused the rest
    assert inner.status == "stopped" and sum(r.status == "completed" for r in inner.results.values()) == 3
    record = store.get_run(run.run_id)
    assert record.status == "stopped" and record.usage.requests == 4
    assert {"plan", "reader-0", "reader-4", "write"} <= set(record.results)
    assert store.events(run.run_id)[-1].type.value == "run_finished"


async def test_parent_runs_hold_their_children_in_the_store(tmp_path: Path) -> None:
    from moot.runtime import Run

    store = RunStore(tmp_path / "runs.db")
    model = ScriptedModel(["a", "b"])
    async with Run("learn two files", Budget(max_calls=5), store=store) as parent:
        for name in ("one.md", "two.md"):
            async with parent.child(f"learn {name}") as child:
                await child.step("read", SubAgent("reader", model=model), name)
    kids = store.children(parent.run_id)
    assert [k.name for k in kids] == ["learn one.md", "learn two.md"]
    assert all(k.parent_run_id == parent.run_id and k.status == "completed" for k in kids)
    assert [r.id for r in store.list_runs(top_level=True)] == [parent.run_id]
    assert store.get_run(kids[0].id).to_dict()["parent_run_id"] == parent.run_id
    child_events = [e.type.value for e in store.events(kids[1].id)]
    assert child_events[0] == "run_started" and child_events[-1] == "run_finished" and "model_request" in child_events
    assert len(child_events) == len(set((e.seq for e in store.events(kids[1].id))))


def test_an_older_run_store_gains_parent_run_id_and_owner_in_one_step(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL, stop_reason TEXT,"
        " started REAL NOT NULL, finished REAL, usage TEXT, result TEXT, graph TEXT, budget TEXT);"
        "INSERT INTO runs (id, name, status, started) VALUES ('old1', 'an old run', 'completed', 1.0);"
        "PRAGMA user_version=1;"
    )
    db.close()
    store = RunStore(path)
    [old] = store.list_runs()
    assert old.id == "old1" and old.parent_run_id is None
    store.start_run("new1", "child", parent_run_id="old1")
    assert [r.id for r in store.children("old1")] == ["new1"]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    owner = sqlite3.connect(path).execute("SELECT owner FROM runs WHERE id = 'new1'").fetchone()[0]
    assert owner.split(":")[1] == str(__import__("os").getpid())  # the process recording it


async def test_a_cancelled_run_is_recorded_with_its_partial_results(tmp_path: Path) -> None:
    import asyncio

    import pytest

    from moot.runtime import Run

    store = RunStore(tmp_path / "runs.db")
    started = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        if request.agent == "second":
            started.set()
            await asyncio.sleep(30)
        return "done"

    model = FunctionModel(slow)

    async def work() -> None:
        async with Run("cancel me", store=store, run_id="c1") as run:
            await run.step("first", SubAgent("first", model=model), "go")
            await run.step("second", SubAgent("second", model=model), "go")

    job = asyncio.create_task(work())
    await started.wait()
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    record = store.get_run("c1")
    assert record.status == "cancelled" and record.results["first"]["status"] == "completed"
    assert record.results["second"]["status"] == "cancelled"
