"""RecordedRun: agent calls sequenced by code share one budget and are recorded like a graph run."""

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
    second = await run.step("work-2", worker, "more")  # the run's 2 calls are spent: refused before sending
    third = await run.step("work-3", worker, "even more")  # the run is stopped: the agent is not run at all
    result = await run.finish("stopped" if run.stopped else "completed", "budget spent")

    assert plan is not None and first is not None and first.text == "done"
    assert second is not None and second.stop_reason == "budget:calls" and third is None
    assert len(worker_model.requests) == 1
    statuses = [result.results[t].status for t in ("plan", "work-1", "work-2", "work-3")]
    assert statuses == ["completed", "completed", "stopped", "not_started"]
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
