"""Team runs inside the server: started, limited in number, streamed, kept.

Each run's runtime events are turned into a short list of progress events (phase, researcher
index, tool calls, usage, ``done``) kept in memory for its stream, while the run store keeps
the full record (``moot runs show ID`` works for API runs too). A stream only reads: a client
that disconnects just drops its queue, and the run finishes on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.runtime import Event, EventBus, RunStore

MAX_KEPT_RUNS = 200
"""Finished runs kept in memory for GET /api/runs/{id}; older ones are still in the run store."""


CANCEL_GRACE_S = 1.0
"""After a cancellation the next queued run waits this long (from the latest cancel) before it
starts: a client cancelling a queue one run at a time, oldest first, frees a slot with each
cancel, and without the wait every queued run would start its model requests just before its
own cancel arrived."""


class RepoNotAllowed(MootError):
    """The repository is neither under a ``--repo-root`` nor already indexed with ``moot index``."""


class QueueFull(MootError):
    """Every slot is busy and the queue is full: the client should come back later."""

    def __init__(self, message: str, *, fix: str, retry_after_s: int) -> None:
        super().__init__(message, fix=fix)
        self.retry_after_s = retry_after_s


@dataclass
class ServerRun:
    """A run the server started: its state, its progress events and its result."""

    id: str
    prompt: str
    repo: str = ""
    mode: str = ""
    team: str = "research"
    status: str = "queued"
    """``queued`` (waiting for a slot), ``running``, ``completed``, ``stopped``, ``failed``, ``cancelled``."""
    created: float = field(default_factory=time.time)
    finished: float | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: str | None = None
    task: asyncio.Task[Any] | None = None
    listeners: set[asyncio.Queue[dict[str, Any] | None]] = field(default_factory=set)
    recorded_ids: list[str] = field(default_factory=list)
    """The run store's ids for this run (a team that picks its own run id records under that one)."""

    @property
    def record_id(self) -> str:
        """The id its record in the run store has."""
        return self.recorded_ids[0] if self.recorded_ids else self.id

    @property
    def done(self) -> bool:
        return self.status not in ("queued", "running")

    def push(self, name: str, data: dict[str, Any]) -> None:
        item = {"event": name, "id": len(self.events) + 1, "data": data}
        self.events.append(item)
        for queue in list(self.listeners):
            queue.put_nowait(item)

    def summary(self) -> dict[str, Any]:
        return {"run_id": self.id, "record_id": self.record_id, "team": self.team, "status": self.status, "prompt": self.prompt, "repo": self.repo, "mode": self.mode,
                "created": self.created, "finished": self.finished, "events": len(self.events),
                "error": self.error, "result": self.result}


def _phase(task_id: str | None) -> tuple[str, int | None]:
    if not task_id:
        return "run", None
    if task_id.startswith("researcher-"):
        return "researchers", int(task_id.rsplit("-", 1)[1])
    return task_id, None


def progress_event(event: Event) -> tuple[str, dict[str, Any]] | None:
    """The stream's view of one runtime event (``None``: not streamed)."""
    kind, p = event.type.value, event.payload
    phase, researcher = _phase(event.task_id)
    base = {"phase": phase, "researcher": researcher, "task_id": event.task_id, "ts": event.ts}
    if kind == "task_started":
        return "phase", {**base, "status": "started"}
    if kind in ("task_finished", "task_failed", "task_skipped"):
        return "phase", {**base, "status": p.get("status") or kind.split("_")[1], "error": p.get("error")}
    if kind == "tool_call":
        return "tool_call", {**base, "tool": p.get("tool"), "arguments": p.get("arguments"), "ok": p.get("ok", True)}
    if kind == "model_response":
        return "usage", {**base, "input_tokens": p.get("input_tokens", 0), "output_tokens": p.get("output_tokens", 0),
                         "requests": p.get("requests", 0), "cost_usd": p.get("cost_usd", 0.0)}
    if kind in ("budget_warning", "budget_stop"):
        return kind, {**base, "reason": p.get("reason") or p.get("detail")}
    if "." in kind:  # a team's own event (a node added, a debate round): streamed as it is
        return "team", {**base, "type": kind, "agent": event.agent, "payload": p}
    return None


def _indexed(path: Path) -> bool:
    """Whether ``moot index`` built an index for this folder (its index file exists)."""
    from moot.codeindex.store import default_db_path

    return default_db_path(path).exists()


class RunManager:
    """Starts research runs with one shared model, at most ``max_concurrent`` at a time."""

    def __init__(self, model: Any, store: RunStore, *, max_concurrent: int = 2, max_queued: int = 16,
                 repo_roots: list[Path] | None = None, team_options: dict[str, Any] | None = None,
                 record_content: bool = False) -> None:
        self._model = model
        self._model_ready = model is not None and not isinstance(model, str)
        self.store = store
        self.slots = asyncio.Semaphore(max_concurrent)
        self.max_concurrent = max_concurrent
        self.max_queued = max_queued
        self.repo_roots = [r.resolve() for r in repo_roots or []]
        self.team_options = team_options or {}
        self.record_content = record_content
        """Whether runs record their prompts and responses in the run store (``--record-content``)."""
        self.runs: dict[str, ServerRun] = {}
        self._build_locks: dict[str, asyncio.Lock] = {}
        self.open_streams = 0
        self._cancel_grace_until = 0.0
        self._calls_waiting = 0
        self._calls_running = 0

    @property
    def model(self) -> Any:
        """The shared model, built on first use: a server that only shows recorded runs never loads one."""
        if not self._model_ready:
            from moot.models.registry import infer_model

            self._model = infer_model(self._model)
            self._model_ready = True
        return self._model

    def check_repo(self, repo: str) -> Path:
        """The repository's real path, if this server may read it.

        Allowed: folders under a ``--repo-root``, and folders already indexed with
        ``moot index`` (someone on this machine chose to index them). The check comes before
        anything is looked up, so a client cannot even learn whether another folder exists.
        """
        resolved = Path(os.path.realpath(Path(repo).expanduser()))
        if not any(resolved.is_relative_to(root) for root in self.repo_roots) and not _indexed(resolved):
            roots = ", ".join(map(str, self.repo_roots)) or "none"
            raise RepoNotAllowed(
                f"repo {repo!r} is not one this server may read (repo roots: {roots})",
                fix="start moot serve with --repo-root FOLDER, or index the repository first with `moot index PATH`",
            )
        if not resolved.is_dir():
            raise MootError(f"repo {repo!r} is not a folder on the server", fix="send the path of a source folder")
        return resolved

    @property
    def queued(self) -> int:
        return sum(1 for r in self.runs.values() if r.status == "queued") + self._calls_waiting

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One of the ``max_concurrent`` slots for a synchronous model call (``/api/chat``): it
        waits in the same queue as the runs, and is refused with :class:`QueueFull` (429) when
        that queue is full, so no route can run more model work at once than the limits allow."""
        self._check_queue()
        self._calls_waiting += 1
        waiting = True
        try:
            async with self.slots:
                self._calls_waiting -= 1
                waiting = False
                self._calls_running += 1
                try:
                    yield
                finally:
                    self._calls_running -= 1
        finally:
            if waiting:
                self._calls_waiting -= 1

    def check_path(self, given: str, what: str) -> Path:
        """A file or folder a team may read: only under a ``--repo-root`` (checked before it is looked at)."""
        resolved = Path(os.path.realpath(Path(given).expanduser()))
        if not any(resolved.is_relative_to(root) for root in self.repo_roots):
            roots = ", ".join(map(str, self.repo_roots)) or "none"
            raise RepoNotAllowed(f"{what} {given!r} is not under a folder this server may read (repo roots: {roots})",
                                 fix="start moot serve with --repo-root FOLDER that holds it")
        if not resolved.exists():
            raise MootError(f"{what} {given!r} does not exist on the server", fix="send the path of an existing file or folder")
        return resolved

    def root_of(self, path: Path) -> Path:
        """The ``--repo-root`` that holds a path :meth:`check_path` allowed (files are read only under it)."""
        resolved = Path(os.path.realpath(path))
        return max((root for root in self.repo_roots if resolved.is_relative_to(root)), key=lambda r: len(r.parts))

    def _check_queue(self) -> None:
        if self.queued >= self.max_queued:
            wait = self._retry_after()
            raise QueueFull(f"{self.max_concurrent} runs are running and {self.queued} are waiting (the most allowed)",
                            fix=f"retry in {wait} s (Retry-After), or start the server with a larger --max-queued",
                            retry_after_s=wait)

    def start(self, prompt: str, repo: str, mode: str) -> ServerRun:
        """Start a research run on a repository."""
        path = self.check_repo(repo)
        self._check_queue()

        async def research(run: ServerRun, bus: EventBus) -> Any:
            from moot.teams.research import ResearchTeam

            team = ResearchTeam(path, model=self.model, store=self.store, **self.team_options)
            # One (incremental) index build per repository at a time: two runs on the same
            # repo would otherwise write the same index file at once.
            async with self._build_locks.setdefault(str(path), asyncio.Lock()):
                await asyncio.to_thread(team.index)
            try:
                return await team.ask(run.prompt, mode=run.mode, bus=bus, run_id=run.id)  # type: ignore[arg-type]
            finally:
                await asyncio.to_thread(team.close)

        run = ServerRun(id=uuid.uuid4().hex, prompt=prompt, repo=str(path), mode=mode)
        return self._launch(run, research)

    def start_job(self, team: str, prompt: str, job: Callable[[ServerRun, EventBus], Awaitable[Any]], *,
                  mode: str = "") -> ServerRun:
        """Start any team's run: ``job(run, bus)`` runs it with ``run.id`` as its run id and returns its
        result (a pydantic model with ``run_id``/``status``/``stop_reason``, or a dict)."""
        self._check_queue()
        return self._launch(ServerRun(id=uuid.uuid4().hex, prompt=prompt, team=team, mode=mode), job)

    def _launch(self, run: ServerRun, job: Callable[[ServerRun, EventBus], Awaitable[Any]]) -> ServerRun:
        self.runs[run.id] = run
        run.task = asyncio.create_task(self._execute(run, job), name=f"{run.team} {run.id}")
        self._forget_old()
        return run

    def _retry_after(self) -> int:
        """Seconds until a queue place is likely free: the recent runs' mean time per slot."""
        recent = [r.finished - r.created for r in self.runs.values() if r.finished is not None][-20:]
        mean = sum(recent) / len(recent) if recent else 30.0
        return max(1, min(600, round(mean * max(1, self.queued) / self.max_concurrent)))

    async def cancel(self, run: ServerRun) -> None:
        """Cancel one run; a queued run is cancelled before it ever gets a slot."""
        self._cancel_grace_until = time.monotonic() + CANCEL_GRACE_S
        if run.task is not None and not run.task.done():
            run.task.cancel()
            await asyncio.gather(run.task, return_exceptions=True)
        if run.status == "queued":  # cancelled before its task first ran: nothing else marks it
            self._finish_cancelled(run)

    async def cancel_many(self, *, include_running: bool) -> int:
        """Cancel all queued runs (and running ones too if asked) in one event-loop step,
        newest first, so none is handed a freed slot in between."""
        victims = [r for r in sorted(self.runs.values(), key=lambda r: r.created, reverse=True)
                   if r.status == "queued" or (include_running and r.status == "running")]
        victims.sort(key=lambda r: r.status != "queued")  # the queue first, then the slots
        self._cancel_grace_until = time.monotonic() + CANCEL_GRACE_S
        for run in victims:
            if run.task is not None and not run.task.done():
                run.task.cancel()
        await asyncio.gather(*(r.task for r in victims if r.task is not None), return_exceptions=True)
        for run in victims:
            if run.status == "queued":
                self._finish_cancelled(run)
        return len(victims)

    def _finish_cancelled(self, run: ServerRun) -> None:
        run.status, run.error, run.finished = "cancelled", "the run was cancelled before it started", time.time()
        run.push("done", {"status": run.status, "run_id": run.id, "error": run.error})
        for queue in list(run.listeners):
            queue.put_nowait(None)

    async def _execute(self, run: ServerRun, job: Callable[[ServerRun, EventBus], Awaitable[Any]]) -> None:
        bus = EventBus(record_content=self.record_content)

        def forward(event: Event) -> None:
            if event.type.value == "run_started" and event.run_id and event.run_id not in run.recorded_ids \
                    and (event.run_id == run.id or not run.recorded_ids):
                run.recorded_ids.append(event.run_id)
            if event.run_id != run.id and event.run_id not in run.recorded_ids:
                return
            mapped = progress_event(event)
            if mapped is not None:
                run.push(*mapped)

        bus.subscribe(forward)
        try:
            async with self.slots:
                while (wait := self._cancel_grace_until - time.monotonic()) > 0:
                    await asyncio.sleep(wait)  # still "queued": a cancel now costs nothing
                run.status = "running"
                run.push("status", {"status": "running"})
                result = await job(run, bus)
            run.result = result.to_json() if hasattr(result, "to_json") else (
                result.model_dump(mode="json") if hasattr(result, "model_dump") else dict(result or {}))
            status = getattr(result, "status", None) or (result.get("status") if isinstance(result, dict) else None)
            run.status = status if status in ("completed", "stopped", "failed", "cancelled") else "completed"
            if run.status == "failed":
                run.error = getattr(result, "stop_reason", None) or run.result.get("stop_reason")  # e.g. no model answered
        except asyncio.CancelledError:
            run.status, run.error = "cancelled", "the run was cancelled"
            raise
        except MootError as exc:
            run.status, run.error = "failed", exc.one_line()
        except Exception as exc:  # a bug must end this run, not the server
            run.status, run.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            run.finished = time.time()
            done: dict[str, Any] = {"status": run.status, "run_id": run.id, "error": run.error}
            if run.result is not None:
                done.update({k: run.result[k] for k in ("answer", "mode", "usage", "seconds") if k in run.result})
            run.push("done", done)
            for queue in list(run.listeners):
                queue.put_nowait(None)

    def get(self, run_id: str) -> ServerRun:
        run = self.runs.get(run_id)
        if run is None:
            raise KeyError(run_id)
        return run

    @property
    def active(self) -> int:
        return sum(1 for r in self.runs.values() if r.task is not None and not r.task.done()) + self._calls_running

    def _forget_old(self) -> None:
        finished = [r for r in self.runs.values() if r.done]
        for run in sorted(finished, key=lambda r: r.created)[: max(0, len(finished) - MAX_KEPT_RUNS)]:
            self.runs.pop(run.id, None)

    async def shutdown(self) -> None:
        """Cancel what still runs (each is recorded as cancelled in the run store)."""
        tasks = [r.task for r in self.runs.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
