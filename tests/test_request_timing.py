"""Where a model request's time went: waiting, prompt evaluation, generation.

Two agents share one concurrency slot (as parallel agents share the embedded engine's slots):
the second waits while the first works, and its recorded waiting is what the user reads in
`moot runs show`, on the page's span detail and in the run's summary.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from moot.models.base import ModelRequest
from moot.models.concurrency import ConcurrencyLimitedModel
from moot.models.testing import FunctionModel
from moot.models.timing import RequestClock, engine_times
from moot.runtime import RunStore, SubAgent, SubAgentTask, TaskGraph
from moot.runtime.events import EventType
from moot.runtime.tools import tool
from moot.runtime.waits import CallTiming, wait_summary, waiting_wall_time


def record_two_agents_on_one_slot(db: Path, key: str) -> str:
    async def slow(request: ModelRequest) -> str:
        await asyncio.sleep(0.25)
        return f"{request.agent} done"

    model = ConcurrencyLimitedModel(FunctionModel(slow), key=key, limit=1)
    graph = TaskGraph([SubAgent("first", "works", "Work.", model=model), SubAgent("second", "works", "Work.", model=model)],
                      [SubAgentTask("first", "go"), SubAgentTask("second", "go")])
    store = RunStore(db)
    try:
        return graph.run_sync(store=store, name="two agents, one slot").run_id
    finally:
        store.close()


def test_a_request_that_waited_for_a_slot_records_its_wait_and_the_parts_add_up(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = record_two_agents_on_one_slot(db, "timing-test-slot")
    store = RunStore(db)
    events = store.events(run_id)
    record = store.get_run(run_id)
    store.close()
    responses = [e.payload for e in events if e.type is EventType.MODEL_RESPONSE]
    assert len(responses) == 2
    for p in responses:
        # the function model reports no prompt time: generation holds the provider's whole time
        assert p["prompt_s"] is None and p["timing_reported"] is False
        assert p["queue_s"] + p["generation_s"] == pytest.approx(p["latency_s"], abs=0.002)
        assert p["generation_s"] >= 0.25  # it slept that long holding the slot
    waited = max(responses, key=lambda p: p["queue_s"])
    # the second request waited for the whole of the first one's work
    assert waited["queue_s"] >= 0.2
    assert min(p["queue_s"] for p in responses) < 0.05
    summary = wait_summary(events, started=record.started, finished=record.finished)
    assert summary.timed_calls == 2
    assert summary.queue_s == pytest.approx(sum(p["queue_s"] for p in responses), abs=0.001)
    # while the first worked the second waited, but the run was never *only* waiting
    assert summary.waiting_wall_s < 0.05
    assert "only waited for the model" in summary.sentence()


def test_the_run_page_api_and_runs_show_report_the_split(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = record_two_agents_on_one_slot(db, "timing-test-slot-2")
    from moot.server.history import run_detail

    store = RunStore(db)
    detail = run_detail(store, run_id)
    store.close()
    calls = [c for s in detail.spans for c in s.model_calls]
    assert all(c.queue_s is not None and c.generation_s is not None for c in calls)
    waiter = max(detail.spans, key=lambda s: s.waited_s)
    assert waiter.waited_s >= 0.2
    assert detail.timing is not None and detail.timing["timed_calls"] == 2
    assert "requests took" in detail.timing["sentence"]
    env = {"MOOT_RUNS_DB": str(db), "COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    shown = subprocess.run([sys.executable, "-m", "moot", "runs", "show", run_id], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "waited" in shown.stdout and "only waited for the model" in shown.stdout
    as_json = subprocess.run([sys.executable, "-m", "moot", "runs", "show", run_id, "--json"], capture_output=True, text=True, env=env)
    timing = json.loads(as_json.stdout)["timing"]
    assert timing["timed_calls"] == 2 and timing["queue_s"] >= 0.2


def test_engine_times_split_the_latency_and_the_rest_is_waiting() -> None:
    assert engine_times({"timings": {"prompt_ms": 818.1, "predicted_ms": 2223.7}}) == pytest.approx((0.8181, 2.2237))
    assert engine_times({"usage": {}}) is None
    clock = RequestClock()
    clock.waited(0.5)  # a concurrency slot
    clock.engine(0.8, 2.2)  # first attempt
    clock.engine(0.1, 0.4)  # a retry: both attempts count
    timing = clock.split(10.0)
    assert timing.reported and timing.prompt_s == pytest.approx(0.9) and timing.generation_s == pytest.approx(2.6)
    assert timing.queue_s == pytest.approx(6.5)  # everything the engine did not compute was waiting
    assert timing.queue_s + timing.prompt_s + timing.generation_s == pytest.approx(10.0)
    # an engine that reports more than the measured latency (clock skew): never a negative wait
    odd = RequestClock()
    odd.engine(1.0, 2.0)
    t = odd.split(2.5)
    assert t.queue_s == 0 and t.prompt_s + t.generation_s == pytest.approx(2.5)


def test_waiting_wall_time_counts_only_time_when_nothing_was_computed() -> None:
    # a waits 0–4 s then computes 4–5; b computes 0–3: only 3–4 s was pure waiting
    a = CallTiming(task_id="a", agent="a", finished=5.0, latency_s=5.0, queue_s=4.0, prompt_s=0.2, generation_s=0.8)
    b = CallTiming(task_id="b", agent="b", finished=3.0, latency_s=3.0, queue_s=0.0, prompt_s=0.5, generation_s=2.5)
    assert waiting_wall_time([a, b]) == pytest.approx(1.0)
    assert waiting_wall_time([a]) == pytest.approx(4.0)


def test_a_failed_tool_call_marks_its_span(tmp_path: Path) -> None:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        raise ValueError(f"no data for {city}")

    from moot.models.base import ModelResponse, ToolCall

    # first turn: call the tool; second turn (after its error): answer in words
    turns = iter([ModelResponse(tool_calls=(ToolCall(id="c1", name="lookup", arguments={"city": "Oslo"}),), finish_reason="tool_calls"),
                  "I could not look it up."])
    graph = TaskGraph([SubAgent("finder", "finds", "Find.", model=FunctionModel(lambda request: next(turns)), tools=[lookup])],
                      [SubAgentTask("finder", "Oslo?")])
    db = tmp_path / "runs.db"
    store = RunStore(db)
    run_id = graph.run_sync(store=store, name="a tool that fails").run_id
    from moot.server.history import run_detail

    span = run_detail(store, run_id).spans[0]
    store.close()
    assert span.status == "completed"  # the agent went on …
    assert span.failed_tools == 1  # … but the page marks its span
    assert "no data for Oslo" in (span.tool_calls[0].error or "")


def test_the_run_page_api_serves_the_timing(tmp_path: Path) -> None:
    from web_support import Serve

    db = tmp_path / "runs.db"
    run_id = record_two_agents_on_one_slot(db, "timing-test-slot-3")
    with Serve(db) as server:
        run = httpx.get(f"{server.url}/api/runs/{run_id}").json()
    assert run["timing"]["timed_calls"] == 2
    calls = [c for s in run["spans"] for c in s["model_calls"]]
    assert max(c["queue_s"] for c in calls) >= 0.2


@pytest.mark.embedded
def test_the_embedded_engine_reports_prompt_and_generation_times(local_model: object, tmp_path: Path) -> None:
    from moot.models.base import ModelSettings

    agent = SubAgent("greeter", "greets", "Answer in one short sentence.", model=local_model,  # type: ignore[arg-type]
                     settings=ModelSettings(max_tokens=12))
    store = RunStore(tmp_path / "runs.db")
    run_id = TaskGraph([agent], [SubAgentTask("greeter", "Say hello to Oslo.")]).run_sync(store=store, name="timed").run_id
    p = next(e.payload for e in store.events(run_id) if e.type is EventType.MODEL_RESPONSE)
    store.close()
    assert p["timing_reported"] is True  # the engine's own numbers, not a remainder
    assert p["prompt_s"] > 0 and p["generation_s"] > 0 and p["queue_s"] >= 0
    assert p["queue_s"] + p["prompt_s"] + p["generation_s"] == pytest.approx(p["latency_s"], abs=0.002)
