"""One parent run per command that makes several runs (an eval, several files learned).

``moot runs`` lists the runs no other run holds, so a command that asks a team forty
questions shows as one line whose page lists its forty runs, with their usage summed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def parent_run(name: str) -> Iterator[str]:
    """Record a run named ``name`` that holds the runs made inside the block; yields its id.

    It ends ``completed`` when the block does, ``cancelled`` on Ctrl-C and ``failed`` on an
    error (the runs it holds keep what they recorded either way)."""
    from moot.runtime import RunStore

    store = RunStore()
    run_id = uuid.uuid4().hex
    store.start_run(run_id, name)
    status, reason = "failed", f"{name} stopped with an error; the runs it holds keep their results"
    try:
        yield run_id
        status, reason = "completed", f"{name} finished"
    except KeyboardInterrupt:
        status, reason = "cancelled", f"{name} was interrupted (Ctrl-C); the runs it holds keep their results"
        raise
    finally:
        store.close_parent(run_id, status, reason)
        store.close()
