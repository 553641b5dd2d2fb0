"""Task graphs: parallel start, validation, failure policies, reducers, cancellation."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

import pytest

from moot.errors import ConfigError, ModelHTTPError
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, ScriptedModel
from moot.runtime import (
    EventBus,
    EventType,
    RunCancelled,
    RunStore,
    SubAgent,
    SubAgentTask,
    TaskGraph,
    concat_text,
    merge_dicts_strict,
    merge_lists,
)
from moot.runtime.reducers import ReducerConflict


def agent(name: str, *script: object, **kwargs: object) -> SubAgent:
    return SubAgent(name, f"the {name} agent", f"You are {name}.", model=ScriptedModel(list(script), name=name), **kwargs)  # type: ignore[arg-type]


def user_text(model: SubAgent) -> str:
    return model.model.requests[0].messages[1].content  # type: ignore[union-attr]


async def test_independent_tasks_run_in_parallel() -> None:
    arrived: set[str] = set()
    both = asyncio.Event()

    def barrier(name: str) -> FunctionModel:
        async def answer(request: ModelRequest) -> str:
            arrived.add(name)
            if len(arrived) == 2:
                both.set()
            # Completes only when the other branch is in flight at the same time.
            await asyncio.wait_for(both.wait(), 5)
            return f"{name} done"

        return FunctionModel(answer, name=name)

    a = SubAgent("a", "", "", model=barrier("a"))
    b = SubAgent("b", "", "", model=barrier("b"))
    c = agent("c", "combined")
    graph = TaskGraph([a, b, c], [SubAgentTask("a", "x"), SubAgentTask("b", "y"), SubAgentTask("c", "z", depends_on=["a", "b"])])
    result = await graph.run()
    assert result.status == "completed", result.stop_reason
    ra, rb, rc = result.results["a"], result.results["b"], result.results["c"]
    assert ra.started_at < rb.finished_at and rb.started_at < ra.finished_at  # overlapping
    assert rc.started_at >= max(ra.finished_at, rb.finished_at)
    assert user_text(c) == "Results from earlier tasks:\n[a] a done\n[b] b done\n\nYour task: z"
    assert result.output == "combined"


async def test_a_task_starts_when_its_own_dependencies_finish() -> None:
    dependent_started = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        # This unrelated branch only finishes after `after_fast` has started: with level-by-level
        # batching it would wait forever (and time out).
        await asyncio.wait_for(dependent_started.wait(), 5)
        return "slow done"

    async def after(request: ModelRequest) -> str:
        dependent_started.set()
        return "after done"

    graph = TaskGraph(
        [agent("fast", "fast done"), SubAgent("slow", model=FunctionModel(slow)), SubAgent("after_fast", model=FunctionModel(after))],
        [SubAgentTask("fast", "1"), SubAgentTask("slow", "2"), SubAgentTask("after_fast", "3", depends_on=["fast"])],
    )
    result = await graph.run()
    assert result.status == "completed", result.stop_reason
    assert result.results["after_fast"].started_at < result.results["slow"].finished_at
    assert result.output == {"slow": "slow done", "after_fast": "after done"}


def test_cycles_are_reported_with_their_path_before_anything_runs() -> None:
    a, b, c = agent("a"), agent("b"), agent("c")
    with pytest.raises(ConfigError) as caught:
        TaskGraph([a, b, c], [SubAgentTask("a", "", depends_on=["c"]), SubAgentTask("b", "", depends_on=["a"]), SubAgentTask("c", "", depends_on=["b"])])
    message = caught.value.one_line()
    assert "cycle" in message and message.count("→") == 3
    path = message.split("cycle: ")[1].split(" (fix")[0].split(" → ")
    assert path[0] == path[-1] and set(path) == {"a", "b", "c"}
    with pytest.raises(ConfigError, match="a → a"):
        TaskGraph([a], [SubAgentTask("a", "", depends_on=["a"])])
    assert a.model.requests == []  # type: ignore[union-attr]


def test_unknown_agents_dependencies_and_duplicate_ids() -> None:
    a = agent("a")
    with pytest.raises(ConfigError, match="unknown agent 'ghost'"):
        TaskGraph([a], [SubAgentTask("ghost", "")])
    with pytest.raises(ConfigError, match="depends on unknown task 'nope'"):
        TaskGraph([a], [SubAgentTask("a", "", depends_on=["nope"])])
    with pytest.raises(ConfigError, match="has 2 tasks, so a task id cannot default"):
        TaskGraph([a], [SubAgentTask("a", "1"), SubAgentTask("a", "2")])
    with pytest.raises(ConfigError, match="two tasks have the id 'x'"):
        TaskGraph([a], [SubAgentTask("a", "1", id="x"), SubAgentTask("a", "2", id="x")])
    with pytest.raises(ConfigError, match="unknown agent 'other'"):
        TaskGraph([a], [SubAgentTask("a", "", on_failure="fallback", fallback_agent="other")])
    graph = TaskGraph([a], [SubAgentTask("a", "1", id="one"), SubAgentTask("a", "2", id="two", depends_on=["one"])])
    assert list(graph.tasks) == ["one", "two"]


async def test_fail_policy_stops_the_run_and_keeps_partial_results() -> None:
    graph = TaskGraph(
        [agent("a", "a result"), agent("b", ModelHTTPError("server down", status=503)), agent("c", "unused")],
        [SubAgentTask("a", "1"), SubAgentTask("b", "2", depends_on=["a"]), SubAgentTask("c", "3", depends_on=["b"])],
    )
    result = await graph.run()
    assert result.status == "failed"
    assert result.results["a"].status == "completed" and result.results["a"].output == "a result"
    assert result.results["b"].status == "failed" and "server down" in (result.results["b"].error or "")
    assert result.results["c"].status == "not_started"
    assert result.stop_reason.startswith("task 'b' (agent 'b') failed: server down")
    assert "1 task not started" in result.stop_reason


async def test_fail_policy_cancels_tasks_in_flight() -> None:
    cancelled = asyncio.Event()

    async def hang(request: ModelRequest) -> str:
        try:
            await asyncio.sleep(30)
        finally:
            cancelled.set()
        return "never"

    graph = TaskGraph(
        [SubAgent("slow", model=FunctionModel(hang)), agent("bad", ModelHTTPError("boom", status=500))],
        [SubAgentTask("slow", "1"), SubAgentTask("bad", "2")],
    )
    result = await graph.run()
    assert result.status == "failed" and cancelled.is_set()
    assert result.results["slow"].status == "cancelled"


async def test_skip_policy_skips_dependents_transitively_and_continues() -> None:
    graph = TaskGraph(
        [agent("a", "a ok"), agent("b", ModelHTTPError("bad", status=500)), agent("c"), agent("d"), agent("e", "e ok")],
        [
            SubAgentTask("a", "1"),
            SubAgentTask("b", "2", on_failure="skip"),
            SubAgentTask("c", "3", depends_on=["b"]),
            SubAgentTask("d", "4", depends_on=["c", "a"]),
            SubAgentTask("e", "5", depends_on=["a"]),
        ],
    )
    result = await graph.run()
    statuses = {tid: r.status for tid, r in result.results.items()}
    assert statuses == {"a": "completed", "b": "failed", "c": "skipped", "d": "skipped", "e": "completed"}
    assert result.status == "completed"
    assert "1 failed" in result.stop_reason and "2 skipped" in result.stop_reason
    assert result.results["d"].error == "skipped because task 'b' failed"


async def test_fallback_policy_uses_a_generic_agent_on_the_same_model() -> None:
    def answer(request: ModelRequest) -> object:
        if request.agent == "expert-fallback":
            return "fallback answer"
        raise ModelHTTPError("specialist broke", status=500)

    model = FunctionModel(answer)
    graph = TaskGraph(
        [SubAgent("expert", "", "You are an expert.", model=model), agent("after", "final")],
        [SubAgentTask("expert", "hard task", on_failure="fallback"), SubAgentTask("after", "use it", depends_on=["expert"])],
    )
    result = await graph.run()
    expert = result.results["expert"]
    assert expert.status == "fell_back" and expert.output == "fallback answer"
    assert expert.fallback_agent == "expert-fallback" and "specialist broke" in (expert.error or "")
    assert result.status == "completed" and result.output == "final"
    assert "[expert] fallback answer" in user_text(graph.agents["after"])
    assert "expert-fallback" in result.usage_by_agent


async def test_fallback_to_a_named_agent_and_a_failing_fallback_fails_the_run() -> None:
    graph = TaskGraph(
        [agent("a", ModelHTTPError("x", status=500)), agent("backup", "backup answer")],
        [SubAgentTask("a", "t", on_failure="fallback", fallback_agent="backup")],
    )
    result = await graph.run()
    assert result.results["a"].status == "fell_back" and result.output == "backup answer"

    graph = TaskGraph(
        [agent("a", ModelHTTPError("x", status=500)), agent("backup", ModelHTTPError("y", status=500))],
        [SubAgentTask("a", "t", on_failure="fallback", fallback_agent="backup")],
    )
    result = await graph.run()
    assert result.status == "failed" and result.results["a"].status == "failed"
    assert "x; then y" in (result.results["a"].error or "")


async def test_fan_in_never_overwrites_and_strict_merge_refuses_conflicts() -> None:
    a = agent("a", {"k": 1}, output_type=dict)
    b = agent("b", {"k": 2}, output_type=dict)
    c = agent("c", "saw both")
    graph = TaskGraph([a, b, c], [SubAgentTask("a", ""), SubAgentTask("b", ""), SubAgentTask("c", "", depends_on=["a", "b"])])
    await graph.run()
    assert '[a] {"k": 1}\n[b] {"k": 2}' in user_text(c)

    a2 = agent("a", {"k": 1}, output_type=dict)
    b2 = agent("b", {"k": 2}, output_type=dict)
    c2 = agent("c", "unused")
    graph = TaskGraph(
        [a2, b2, c2],
        [SubAgentTask("a", ""), SubAgentTask("b", ""), SubAgentTask("c", "", depends_on=["a", "b"], reducer=merge_dicts_strict)],
    )
    result = await graph.run()
    assert result.status == "failed"
    assert "key 'k' is 1 in 'a' but 2 in 'b'" in (result.results["c"].error or "")
    assert c2.model.requests == []  # type: ignore[union-attr]


def test_named_reducers() -> None:
    assert merge_lists({"a": [1, 2], "b": [3], "c": 4}) == [1, 2, 3, 4]
    assert concat_text({"a": "x", "b": "y"}) == "[a]\nx\n\n[b]\ny"
    assert merge_dicts_strict({"a": {"k": 1}, "b": {"k": 1, "j": 2}}) == {"k": 1, "j": 2}
    with pytest.raises(ReducerConflict):
        merge_dicts_strict({"a": {"k": 1}, "b": {"k": 3}})


async def test_a_custom_reducer_shapes_the_context() -> None:
    c = agent("c", "ok")
    graph = TaskGraph(
        [agent("a", "x"), agent("b", "y"), c],
        [SubAgentTask("a", ""), SubAgentTask("b", ""), SubAgentTask("c", "go", depends_on=["a", "b"], reducer=concat_text)],
    )
    await graph.run()
    assert user_text(c).startswith("Results from earlier tasks:\n[a, b] [a]\nx\n\n[b]\ny")


async def test_parallel_branches_get_private_copies_of_shared_results() -> None:
    seen: list[dict[str, object]] = []

    async def mutate(request: ModelRequest) -> str:
        return "ok"

    source = agent("src", {"items": [1]}, output_type=dict)
    left = SubAgent("left", model=FunctionModel(mutate))
    right = SubAgent("right", model=FunctionModel(mutate))
    graph = TaskGraph(
        [source, left, right],
        [SubAgentTask("src", ""), SubAgentTask("left", "", depends_on=["src"], reducer=lambda o: seen.append(o) or o),
         SubAgentTask("right", "", depends_on=["src"], reducer=lambda o: seen.append(o) or o)],
    )
    result = await graph.run()
    seen[0]["src"]["items"].append("mutated by left")  # type: ignore[index,union-attr]
    assert seen[1]["src"] == {"items": [1]}
    assert result.results["src"].output == {"items": [1]}


async def test_cancelling_a_run_keeps_finished_results_and_records_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    slow_started = asyncio.Event()
    slow_cancelled = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        slow_started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            slow_cancelled.set()
            raise
        return "never"

    store = RunStore(tmp_path / "runs.db")
    graph = TaskGraph(
        [agent("quick", "quick result"), SubAgent("slow", model=FunctionModel(slow)), agent("last")],
        [SubAgentTask("quick", "1"), SubAgentTask("slow", "2", depends_on=["quick"]), SubAgentTask("last", "3", depends_on=["slow"])],
    )
    running = asyncio.create_task(graph.run(store=store, name="to cancel"))
    await asyncio.wait_for(slow_started.wait(), 5)
    running.cancel()
    with pytest.raises(RunCancelled) as caught:
        await running
    result = caught.value.result
    assert slow_cancelled.is_set()
    assert result.status == "cancelled"
    assert result.results["quick"].status == "completed" and result.results["quick"].output == "quick result"
    assert result.results["slow"].status == "cancelled"
    assert result.results["last"].status == "not_started"
    stored = RunStore(tmp_path / "runs.db").get_run(result.run_id[:6])
    assert stored.status == "cancelled" and "cancelled" in (stored.stop_reason or "")
    assert stored.results["quick"]["output"] == "quick result"


def test_run_sync_returns_the_result() -> None:
    graph = TaskGraph([agent("solo", "hello")], [SubAgentTask("solo", "say hello")])
    bus = EventBus()
    types: list[EventType] = []
    bus.subscribe(lambda e: types.append(e.type))
    result = graph.run_sync(bus=bus)
    assert result.output == "hello" and result.status == "completed"
    assert types[0] is EventType.RUN_STARTED and types[-1] is EventType.RUN_FINISHED


CTRL_C_SCRIPT = """
import asyncio, sys
from moot.models.testing import FunctionModel, ScriptedModel
from moot.runtime import RunStore, SubAgent, SubAgentTask, TaskGraph

async def hang(request):
    print("ready", flush=True)
    await asyncio.sleep(60)

graph = TaskGraph(
    [SubAgent("quick", model=ScriptedModel(["quick result"])), SubAgent("slow", model=FunctionModel(hang))],
    [SubAgentTask("quick", "1"), SubAgentTask("slow", "2", depends_on=["quick"])],
)
result = graph.run_sync(store=RunStore(sys.argv[1]), name="ctrl-c")
print(result.status, result.results["quick"].status, result.results["slow"].status, result.run_id, flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery differs on Windows")
def test_ctrl_c_cancels_the_sub_agents_and_records_the_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT)
    db = tmp_path / "runs.db"
    process = subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err
    status, quick, slow, run_id = out.split()
    assert (status, quick, slow) == ("cancelled", "completed", "cancelled")
    stored = RunStore(db).get_run(run_id)
    assert stored.status == "cancelled" and stored.results["quick"]["output"] == "quick result"


async def test_a_reducer_conflict_is_not_retried_by_a_fallback() -> None:
    graph = TaskGraph(
        [agent("a", {"k": 1}, output_type=dict), agent("b", {"k": 2}, output_type=dict), agent("c")],
        [SubAgentTask("a", ""), SubAgentTask("b", ""),
         SubAgentTask("c", "", depends_on=["a", "b"], reducer=merge_dicts_strict, on_failure="fallback")],
    )
    result = await graph.run()
    assert result.status == "failed" and result.results["c"].status == "failed"
    assert "reducer failed" in (result.results["c"].error or "")


async def test_max_parallel_caps_tasks_in_flight_without_fake_dependencies() -> None:
    in_flight = peak = 0

    async def answer(request: ModelRequest) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return f"{request.agent} done"

    model = FunctionModel(answer)
    agents = [SubAgent(f"chunk-{i}", "", "", model=model) for i in range(5)]
    tasks = [SubAgentTask(a.name, "read") for a in agents]
    result = await TaskGraph(agents, tasks).run(max_parallel=2)
    assert result.status == "completed" and peak == 2
    assert [result.results[a.name].output for a in agents] == [f"chunk-{i} done" for i in range(5)]
    started = [result.results[a.name].started_at for a in agents]
    assert started == sorted(started)  # waiting tasks start in the graph's order
    with pytest.raises(ConfigError, match="max_parallel=0"):
        await TaskGraph(agents, tasks).run(max_parallel=0)
