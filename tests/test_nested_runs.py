"""Runs that hold other runs, as the run page's API gives them: the children on the parent's
timeline with the parent's sums while they work, a learn run's stored facts, and what a
cancelled run kept."""

from __future__ import annotations

import threading
from pathlib import Path

from nested_support import record_cancelled_run, record_learn_run, start_parent_with_children

from moot.runtime import RunStore
from moot.server.history import run_detail
from moot.server.nested import CHILD_LANE


def test_a_running_parent_draws_its_children_and_sums_their_calls_while_they_work(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    gate = threading.Event()
    parent_id, thread = start_parent_with_children(db, gate)
    try:
        store = RunStore(db)
        live = run_detail(store, parent_id)
        store.close()
        assert live.status == "running"
        held = [s for s in live.spans if s.child_run_id]
        assert [s.name for s in held] == ["learn file-one.md", "learn file-two.md"]
        assert {s.status for s in held} == {"completed", "running"}
        assert all(s.agent.startswith(CHILD_LANE) for s in held)
        # the first child's call and the second child's first call, counted while the second still works
        assert live.usage.requests == 2
        assert next(c for c in live.children if c.status == "running").usage.requests == 1
        from moot.server.history import list_runs

        store = RunStore(db)
        rows, _ = list_runs(store, team=None, status=None, since=None, until=None, search=None, limit=10, offset=0)
        store.close()
        assert [(r.name, r.usage.requests) for r in rows] == [("learn 2 files into notes.sqlite3", 2)]  # the list too
    finally:
        gate.set()
        thread.join(20)
    store = RunStore(db)
    done = run_detail(store, parent_id)
    store.close()
    assert done.status == "completed" and done.usage.requests == 3
    assert len([s for s in done.spans if s.child_run_id]) == 2


def test_a_learn_run_lists_the_facts_it_stored(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = record_learn_run(db, tmp_path / "kb")
    store = RunStore(db)
    detail = run_detail(store, run_id)
    store.close()
    assert detail.output_kind == "learned"
    facts = detail.output["facts"]
    assert any("420 passengers" in f["content"] for f in facts)
    assert detail.output["facts_stored"] == sum(1 for f in facts if f["new"]) >= 2


def test_a_cancelled_run_shows_what_it_kept(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    run_id = record_cancelled_run(db)
    store = RunStore(db)
    detail = run_detail(store, run_id)
    store.close()
    assert detail.status == "cancelled"
    assert [(k.task_id, k.output) for k in detail.kept] == [("draft", "writer: finished its part")]
