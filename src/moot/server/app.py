"""The FastAPI app: ``create_app(settings)``; ``moot serve`` runs it with uvicorn.

Endpoints (all under ``/api``; OpenAPI at ``/docs`` and ``/openapi.json``):

- ``POST /api/query`` {prompt, repo, mode} → the answer, synchronously;
- ``POST /api/runs`` {prompt, repo, mode} → {run_id}: a background run;
- ``GET /api/runs/{id}/events`` → its progress as Server-Sent Events, ending with ``done``;
- ``GET /api/runs/{id}`` → status and result; ``DELETE /api/runs/{id}`` cancels it;
- ``GET /api/health`` → liveness, runs in progress and open streams.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import BaseModel, ConfigDict, Field

from moot import __version__
from moot.errors import MootError
from moot.runtime import RunStore
from moot.server.runs import QueueFull, RepoNotAllowed, RunManager
from moot.server.security import BodyLimitMiddleware, HostCheckMiddleware, TokenMiddleware, allowed_host_names


@dataclass
class ServerSettings:
    """How the server runs; ``model`` is built once and shared by every run."""

    model: Any = None
    """A model string (``None``: $MOOT_MODEL, else the embedded model) or a :class:`Model`."""
    token: str | None = None
    max_body_bytes: int = 64 * 1024
    max_concurrent: int = 2
    """Research runs at the same time; more wait (status ``queued``)."""
    max_queued: int = 16
    """Runs that may wait for a slot; one more is refused with 429 and ``Retry-After``."""
    store_path: Path | None = None
    repo_roots: list[Path] = field(default_factory=list)
    """Repositories under these folders may be researched; besides them, only repositories
    already indexed with ``moot index``. Nothing else on the machine can be asked about."""
    host: str = "127.0.0.1"
    """The address the server is bound to: requests must name it (or a loopback name) as Host."""
    allowed_hosts: list[str] = field(default_factory=list)
    """More Host names to answer to (a DNS name the server is reached by)."""
    team_options: dict[str, Any] = field(default_factory=dict)


class QueryRequest(BaseModel):
    """A question about a repository."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=4000, description="The question about the code.")
    repo: str = Field(min_length=1, max_length=4096, description="Path of the repository on the server.")
    mode: Literal["auto", "single", "multi"] = Field("auto", description="auto routes by the question's shape.")


class RunStarted(BaseModel):
    run_id: str
    status: str
    events: str
    """Where to stream its progress."""


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    settings = settings or ServerSettings()
    state: dict[str, RunManager] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        model = settings.model
        if model is None or isinstance(model, str):
            from moot.models.registry import infer_model

            model = infer_model(model)
        store = RunStore(settings.store_path)
        state["runs"] = RunManager(model, store, max_concurrent=settings.max_concurrent,
                                   max_queued=settings.max_queued,
                                   repo_roots=settings.repo_roots, team_options=settings.team_options)
        try:
            yield
        finally:
            await state["runs"].shutdown()
            store.close()

    app = FastAPI(title="moot", version=__version__, lifespan=lifespan,
                  description="Code research over HTTP: planner → parallel researchers → synthesizer → verifier.")

    def manager() -> RunManager:
        return state["runs"]

    def start(body: QueryRequest) -> Any:
        try:
            return manager().start(body.prompt, body.repo, body.mode)
        except QueueFull as exc:
            raise HTTPException(429, exc.one_line(), headers={"Retry-After": str(exc.retry_after_s)}) from None
        except RepoNotAllowed as exc:
            raise HTTPException(403, exc.one_line()) from None
        except MootError as exc:
            raise HTTPException(422, exc.one_line()) from None

    def find(run_id: str) -> Any:
        try:
            return manager().get(run_id)
        except KeyError:
            raise HTTPException(404, f"no run {run_id!r} on this server (finished runs are in `moot runs`)") from None

    @app.get("/api/health")
    async def health() -> dict[str, Any]:
        """Liveness, with the number of runs in progress and of open event streams."""
        m = manager()
        return {"ok": True, "version": __version__, "active_runs": m.active, "open_streams": m.open_streams,
                "queued_runs": m.queued, "max_concurrent": m.max_concurrent, "max_queued": m.max_queued}

    @app.post("/api/query")
    async def query(body: QueryRequest) -> dict[str, Any]:
        """Answer a question synchronously: {answer, evidence, verification, usage, run_id, …}; 502 with the
        cause when no model answered (unreachable, refusing)."""
        run = start(body)
        assert run.task is not None
        await asyncio.shield(run.task)  # a client that goes away does not cancel the run
        if run.result is not None and run.status == "failed":  # the team ran, but no model answered
            raise HTTPException(502, run.error or "no model answered")
        if run.result is None:
            raise HTTPException(500 if run.status == "failed" else 503, run.error or run.status)
        return run.result

    @app.post("/api/runs", status_code=202, response_model=RunStarted)
    async def start_run(body: QueryRequest) -> RunStarted:
        """Start a run in the background; stream /api/runs/{run_id}/events for its progress."""
        run = start(body)
        return RunStarted(run_id=run.id, status=run.status, events=f"/api/runs/{run.id}/events")

    @app.delete("/api/runs")
    async def cancel_runs(status: Literal["queued", "all"] = "queued") -> dict[str, Any]:
        """Cancel every queued run (``?status=all``: running ones too), newest first, in one step,
        so no queued run is handed a slot (and sends a model request) while others are cancelled."""
        cancelled = await manager().cancel_many(include_running=status == "all")
        return {"cancelled": cancelled}

    @app.get("/api/runs/{run_id}")
    async def get_run(run_id: str) -> dict[str, Any]:
        """Status of a run, and its result once done."""
        return find(run_id).summary()

    @app.delete("/api/runs/{run_id}")
    async def cancel_run(run_id: str) -> dict[str, Any]:
        """Cancel a run that is still going (recorded as cancelled, partial results kept)."""
        run = find(run_id)
        await manager().cancel(run)
        return run.summary()

    @app.get("/api/runs/{run_id}/events", response_class=EventSourceResponse)
    async def run_events(run_id: str) -> AsyncIterator[ServerSentEvent]:
        """Progress as Server-Sent Events: status, phase, tool_call, usage, budget_*, and a final done."""
        run = find(run_id)
        m = manager()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        backlog = list(run.events)
        finished = run.done
        if not finished:
            run.listeners.add(queue)
        m.open_streams += 1
        try:
            for item in backlog:
                yield ServerSentEvent(event=item["event"], data=item["data"], id=str(item["id"]))
            last = backlog[-1]["id"] if backlog else 0
            while not finished:
                item = await queue.get()
                if item is None:
                    break
                if item["id"] <= last:
                    continue
                yield ServerSentEvent(event=item["event"], data=item["data"], id=str(item["id"]))
        finally:  # also on disconnect: the stream's queue goes, the run itself goes on
            run.listeners.discard(queue)
            m.open_streams -= 1

    if settings.max_body_bytes:
        app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.token:
        app.add_middleware(TokenMiddleware, token=settings.token)
    allowed = allowed_host_names(settings.host, settings.allowed_hosts)
    if allowed is not None:
        app.add_middleware(HostCheckMiddleware, allowed=allowed)  # added last: checked first
    return app
