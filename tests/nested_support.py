"""Runs that hold other runs, recorded with the project's scripted models: a parent with one
finished child and one still working (until ``gate`` is set), a learn run, a cancelled run."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from learning_support import label_units

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, by_agent
from moot.runtime import Run, RunStore, SubAgent, SubAgentTask, TaskGraph

ARTICLE = """---
title: Harbour report
published: 2026-03-02
---
The Nordby ferry carries 420 passengers. The harbour has 12 cranes. Anna Berg runs the harbour.
"""


def waiting_model(gate: threading.Event) -> FunctionModel:
    """Answers at once, except the ``slow`` agent, which answers once ``gate`` is set."""

    async def answer(request: ModelRequest) -> str:
        if request.agent == "slow":
            while not gate.is_set():
                await asyncio.sleep(0.02)
        return f"{request.agent}: finished its part"

    return FunctionModel(answer)


def start_parent_with_children(db: Path, gate: threading.Event) -> tuple[str, threading.Thread]:
    """A parent run holding a finished child and a child whose ``slow`` task waits for ``gate``;
    returns the parent's id once both children started, and the thread that ends it."""
    started = threading.Event()
    holder: dict[str, Any] = {}

    async def main() -> None:
        store = RunStore(db)
        model = waiting_model(gate)
        parent = Run("learn 2 files into notes.sqlite3", store=store)
        parent.start()
        holder["id"] = parent.run_id
        quick = TaskGraph([SubAgent("reader", "reads", "Read.", model=model)], [SubAgentTask("reader", "file one")])
        await quick.run(store=store, name="learn file-one.md", parent_run_id=parent.run_id)
        second = TaskGraph([SubAgent("reader", "reads", "Read.", model=model), SubAgent("slow", "reads slowly", "Read.", model=model)],
                           [SubAgentTask("reader", "file two, part 1", id="part-1"), SubAgentTask("slow", "file two, part 2", id="part-2",
                                                                                                depends_on=["part-1"])])
        task = asyncio.ensure_future(second.run(store=store, name="learn file-two.md", parent_run_id=parent.run_id))
        while not store.events(parent.run_id) or len(store.children(parent.run_id)) < 2 or not any(
                e.task_id == "part-2" for e in store.events(store.children(parent.run_id)[1].id)):
            await asyncio.sleep(0.02)
        started.set()
        await task
        await parent.finish()
        store.close()

    thread = threading.Thread(target=lambda: asyncio.run(main()))
    thread.start()
    assert started.wait(20), "the children did not start"
    return holder["id"], thread


def record_learn_run(db: Path, folder: Path) -> str:
    from moot.memory import KnowledgeBase
    from moot.teams.learning.ingest.learning import learn

    folder.mkdir(parents=True, exist_ok=True)
    kb = KnowledgeBase.open(folder / "harbour.sqlite3")
    store = RunStore(db)
    try:
        model = FunctionModel(by_agent({"fact-labeller": label_units}, default="The harbour report."))
        report = asyncio.run(learn(kb, ARTICLE, source="harbour.md", model=model, store=store))
    finally:
        store.close()
        kb.close()
    assert report.run_id is not None and report.facts_stored >= 2
    return report.run_id


def record_cancelled_run(db: Path) -> str:
    """Two tasks: ``draft`` finished, ``polish`` was still working when the run was cancelled."""
    gate = threading.Event()
    model = waiting_model(gate)
    graph = TaskGraph([SubAgent("writer", "drafts", "Draft.", model=model), SubAgent("slow", "polishes", "Polish.", model=model)],
                      [SubAgentTask("writer", "Draft the notice", id="draft"),
                       SubAgentTask("slow", "Polish it", id="polish", depends_on=["draft"])])
    store = RunStore(db)
    holder: dict[str, str] = {}

    async def main() -> None:
        task = asyncio.ensure_future(graph.run(store=store, name="write the harbour notice", run_id="cancelled0run"))
        while not (_exists(store, "cancelled0run") and any(e.task_id == "polish" for e in store.events("cancelled0run"))):
            await asyncio.sleep(0.02)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        holder["id"] = "cancelled0run"

    try:
        asyncio.run(main())
    finally:
        gate.set()
        store.close()
    return holder["id"]


def _exists(store: RunStore, run_id: str) -> bool:
    try:
        store.get_run(run_id)
        return True
    except Exception:
        return False
