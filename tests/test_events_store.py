"""Events reach sync and async subscribers; every run lands in the SQLite run store."""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
import sys

import pytest

from moot.errors import ConfigError, MootError
from moot.models.testing import ScriptedModel, tool_call
from moot.runtime import Event, EventBus, EventType, RunStore, SubAgent, SubAgentTask, TaskGraph, tool


@tool
def lookup(term: str) -> str:
    """Looks a term up."""
    return f"{term} means something"


def small_graph() -> TaskGraph:
    return TaskGraph(
        [
            SubAgent("finder", "", "Find.", [lookup], ScriptedModel([tool_call("lookup", term="moot"), "found it"])),
            SubAgent("other", "", "Other.", model=ScriptedModel(["other result"])),
            SubAgent("writer", "", "Write.", model=ScriptedModel(["final text"])),
        ],
        [SubAgentTask("finder", "find"), SubAgentTask("other", "other"), SubAgentTask("writer", "write", depends_on=["finder", "other"])],
    )


async def test_sync_and_async_subscribers_get_every_event_and_a_broken_one_is_harmless() -> None:
    bus = EventBus()
    sync_seen: list[Event] = []
    async_seen: list[Event] = []

    async def async_subscriber(event: Event) -> None:
        await asyncio.sleep(0)
        async_seen.append(event)

    def broken(event: Event) -> None:
        raise RuntimeError("subscriber bug")

    async def broken_async(event: Event) -> None:
        raise RuntimeError("async subscriber bug")

    bus.subscribe(broken)
    bus.subscribe(sync_seen.append)
    bus.subscribe(async_subscriber)
    bus.subscribe(broken_async)
    result = await small_graph().run(bus=bus)
    assert result.status == "completed"
    assert len(async_seen) == len(sync_seen) > 10
    types = [e.type for e in sync_seen]
    for expected in (EventType.RUN_STARTED, EventType.TASK_STARTED, EventType.AGENT_STARTED, EventType.MODEL_REQUEST,
                     EventType.MODEL_RESPONSE, EventType.TOOL_CALL, EventType.AGENT_FINISHED, EventType.TASK_FINISHED,
                     EventType.RUN_FINISHED):
        assert expected in types
    assert all(e.run_id == result.run_id for e in sync_seen)
    tool_event = next(e for e in sync_seen if e.type is EventType.TOOL_CALL)
    assert tool_event.task_id == "finder" and tool_event.agent == "finder"
    assert tool_event.payload["tool"] == "lookup" and tool_event.payload["result"] == "moot means something"
    response = next(e for e in sync_seen if e.type is EventType.MODEL_RESPONSE)
    assert response.payload["input_tokens"] > 0 and "latency_s" in response.payload
    assert [e.seq for e in sync_seen] == sorted(e.seq for e in sync_seen)


async def test_prompts_are_recorded_only_when_asked() -> None:
    for record_content in (False, True):
        bus = EventBus(record_content=record_content)
        seen: list[Event] = []
        bus.subscribe(seen.append)
        await SubAgent("a", "", "secret instructions", model=ScriptedModel(["secret answer"])).run("hi", bus=bus)
        request = next(e for e in seen if e.type is EventType.MODEL_REQUEST)
        response = next(e for e in seen if e.type is EventType.MODEL_RESPONSE)
        dumped = repr([e.payload for e in seen])
        assert ("secret" in dumped) is record_content
        assert ("messages" in request.payload) is record_content
        assert ("text" in response.payload) is record_content


async def test_store_round_trips_a_run_and_a_second_store_reads_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    statuses_during_run: list[str] = []

    def peek(event: Event) -> None:
        # A second store (as `moot runs` in another terminal) sees the run while it runs.
        if event.type is EventType.TASK_STARTED and not statuses_during_run:
            statuses_during_run.append(RunStore(path).get_run(event.run_id or "").status)

    bus = EventBus()
    bus.subscribe(peek)
    result = await small_graph().run(store=store, bus=bus, name="round trip")
    assert statuses_during_run == ["running"]

    other = RunStore(path)  # schema creation is idempotent
    record = other.get_run(result.run_id[:5])
    assert record.id == result.run_id and record.name == "round trip"
    assert record.status == "completed" and record.stop_reason == "all 3 tasks completed"
    assert record.usage == result.usage and record.usage.requests == 4
    assert set(record.usage_by_agent) == {"finder", "other", "writer"}
    assert record.usage_by_agent["finder"].requests == 2
    assert record.results["writer"]["output"] == "final text"
    assert [t["id"] for t in record.graph] == ["finder", "other", "writer"]
    events = other.events(result.run_id)
    assert events[0].type is EventType.RUN_STARTED and events[-1].type is EventType.RUN_FINISHED
    assert any(e.type is EventType.TOOL_CALL and e.payload["tool"] == "lookup" for e in events)
    assert [r.id for r in other.list_runs()] == [result.run_id]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unknown_and_ambiguous_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = RunStore(tmp_path / "runs.sqlite3")
    store.start_run("abc111", "one")
    store.start_run("abc222", "two")
    with pytest.raises(MootError, match="no run matches 'zzz'") as caught:
        store.get_run("zzz")
    assert caught.value.fix == "list runs with `moot runs`"
    with pytest.raises(MootError, match="matches several runs"):
        store.get_run("abc")
    assert store.get_run("abc2").name == "two"
    # A run that never finished (a crash) stays visible as running.
    assert {r.status for r in store.list_runs()} == {"running"}


def test_otel_without_the_package_names_the_install_command(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from moot.runtime.otel import enable_otel

    # Simulate a machine without OpenTelemetry (None in sys.modules makes the import fail).
    monkeypatch.setitem(sys.modules, "opentelemetry", None)

    with pytest.raises(ConfigError) as caught:
        enable_otel(EventBus())
    assert "pip install 'moot[otel]'" in caught.value.one_line()


@pytest.mark.skipif(importlib.util.find_spec("opentelemetry.sdk") is None, reason="needs moot[otel]")
async def test_otel_spans_when_enabled() -> None:  # pragma: no cover - only with the extra installed
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from moot.runtime.otel import enable_otel

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    bus = EventBus()
    enable_otel(bus, tracer=provider.get_tracer("test"))
    await small_graph().run(bus=bus)
    names = [s.name for s in exporter.get_finished_spans()]
    assert any(n.startswith("moot.run") for n in names) and any(n == "moot.task finder" for n in names)


@pytest.mark.skipif(importlib.util.find_spec("opentelemetry.sdk") is None, reason="needs moot[otel]")
async def test_moot_otel_traces_every_run_with_genai_attributes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from moot.runtime import Budget, Run, SubAgent
    from moot.runtime import otel

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(otel, "enable_otel", lambda bus: bus.subscribe(otel.OtelSubscriber(provider.get_tracer("t"))))
    monkeypatch.setenv("MOOT_OTEL", "1")
    # a code-sequenced run (as research and teaching make), not only a task graph
    async with Run("pipeline", Budget(max_calls=3)) as run:
        await run.step("plan", SubAgent("planner", model=ScriptedModel(["a plan"], name="openai:gpt-4o-mini")), "go")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"moot.run pipeline", "moot.task plan", "invoke_agent planner", "chat gpt-4o-mini"} <= set(spans)
    chat = spans["chat gpt-4o-mini"].attributes
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.provider.name"] == "openai"
    assert chat["gen_ai.request.model"] == "gpt-4o-mini" and chat["gen_ai.agent.name"] == "planner"
    assert chat["gen_ai.usage.input_tokens"] > 0 and chat["gen_ai.usage.output_tokens"] > 0
    assert spans["invoke_agent planner"].attributes["gen_ai.operation.name"] == "invoke_agent"
    assert spans["chat gpt-4o-mini"].parent.span_id == spans["invoke_agent planner"].context.span_id


def test_a_teams_own_dotted_event_is_recorded_and_read_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = RunStore(tmp_path / "runs.db")
    bus = EventBus()
    store.start_run("r1", "team events", graph=[], budget={})
    bus.subscribe(store.record_event)
    bus.emit("nlr.graph.node_added", run_id="r1", node="ostby_mill")
    [event] = store.events("r1")
    assert event.type.value == "nlr.graph.node_added" and event.payload == {"node": "ostby_mill"}
    assert event.type is EventType("nlr.graph.node_added")
    with pytest.raises(ValueError):
        bus.emit("Not An Event", run_id="r1")  # only dotted lower-case names are team events


_KILLED_RUN = """
import sys, time
from moot.runtime import RunStore
from moot.runtime.events import Event, EventType

store = RunStore(sys.argv[1])
store.start_run("killed-run", "learn a.md")
store.record_event(Event(EventType.MODEL_RESPONSE, run_id="killed-run", task_id="chunk-1", agent="fact-labeller",
                         payload={"input_tokens": 210, "output_tokens": 33, "requests": 1, "cost_usd": 0.0}))
store.start_run("second-run", "learn b.md")
print("recorded", flush=True)
time.sleep(120)
"""


def test_a_run_whose_process_was_killed_is_settled_as_failed_with_what_it_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import signal
    import subprocess

    db = tmp_path / "runs.sqlite3"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_RUN, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "recorded"
        with RunStore(db) as store:  # while its process runs, its runs are running
            assert store.get_run("killed-run").status == store.get_run("second-run").status == "running"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with sqlite3.connect(db) as raw:  # a run another machine records, and an older row with no owner
        raw.execute("INSERT INTO runs (id, name, status, started, owner) VALUES ('elsewhere', 'x', 'running', 0, 'other-host:1:5')")
        raw.execute("INSERT INTO runs (id, name, status, started) VALUES ('unowned', 'y', 'running', 0)")
    with RunStore(db) as store:
        killed = store.get_run("killed-run")
        assert killed.status == "failed" and "ended without recording its end" in (killed.stop_reason or "")
        assert killed.usage.requests == 1 and killed.usage.output_tokens == 33 and killed.finished is not None
        assert {r.id: r.status for r in store.list_runs()}["elsewhere"] == "running"
        assert store.get_run("unowned").status == "running" and store.get_run("second-run").status == "failed"
