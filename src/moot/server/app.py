"""The FastAPI app: ``create_app(settings)``; ``moot serve`` runs it with uvicorn.

Endpoints (all under ``/api``; the web page at ``/``; OpenAPI at ``/docs`` and ``/openapi.json``):

- ``GET /api/runs`` → the run history of every process (filter by team, status, time, text; paged);
- ``GET /api/runs/{id}`` → one run: spans on agent lanes, budget use, stop reason, team result;
- ``GET /api/runs/{id}/events`` → its progress as Server-Sent Events, ending with ``done``;
- ``DELETE /api/runs/{id}`` cancels a run this server started;
- research: ``POST /api/query`` (synchronous), ``POST /api/runs`` and ``POST /api/research/runs``;
- learning, graph, deliberation, board and chat: see :mod:`moot.server.teams`;
- ``GET /api/health`` → liveness, runs in progress and open streams.

See docs/web.md for the page and the API, docs/security.md for who may call it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query
from fastapi.openapi.utils import get_openapi
from fastapi.responses import FileResponse, HTMLResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from moot import __version__
from moot.errors import MootError
from moot.runtime import RunStore
from moot.server import history
from moot.server.runs import QueueFull, RepoNotAllowed, RunManager, ServerRun
from moot.server.schemas import (
    CancelledCount,
    Health,
    QueryRequest,
    ResearchAnswer,
    RunDetail,
    RunPage,
    RunStarted,
)
from moot.server.sse import KEEPALIVE, KEEPALIVE_S, queued, sse
from moot.server.security import (
    OPEN_PATHS,
    BodyLimitMiddleware,
    HostCheckMiddleware,
    JsonBodyMiddleware,
    PageHeadersMiddleware,
    TokenMiddleware,
    allowed_host_names,
)

__all__ = ["QueryRequest", "RunStarted", "ServerSettings", "create_app"]

STREAM_POLL_S = 0.25
"""How often the event stream of a run recorded by another process looks for new events."""


@dataclass
class ServerSettings:
    """How the server runs; ``model`` is built once and shared by every run."""

    model: Any = None
    """A model string (``None``: $MOOT_MODEL, else the embedded model) or a :class:`Model`."""
    token: str | None = None
    max_body_bytes: int = 64 * 1024
    max_concurrent: int = 2
    """Team runs at the same time; more wait (status ``queued``)."""
    max_queued: int = 16
    """Runs that may wait for a slot; one more is refused with 429 and ``Retry-After``."""
    store_path: Path | None = None
    repo_roots: list[Path] = field(default_factory=list)
    """Repositories (and graph sources, deliberation data) under these folders may be read; besides
    them, only repositories already indexed with ``moot index``. Nothing else on the machine."""
    host: str = "127.0.0.1"
    """The address the server is bound to: requests must name it (or a loopback name) as Host."""
    allowed_hosts: list[str] = field(default_factory=list)
    """More Host names to answer to (a DNS name the server is reached by)."""
    team_options: dict[str, Any] = field(default_factory=dict)
    board: str | None = None
    """The task board the API shows and submits to (a folder or a ``postgresql://`` URL)."""
    record_content: bool = False
    """Record prompts and responses of the runs this server starts (shown on their pages)."""
    max_board_streams: int = 8
    """``/api/board/events`` streams open at once; one more is refused with 429."""


def web_root() -> Path:
    """The folder of the web page's files, shipped inside the package."""
    return Path(str(resources.files("moot.web") / "static"))


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    settings = settings or ServerSettings()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = RunStore(settings.store_path)
        state["store"] = store
        state["runs"] = RunManager(settings.model, store, max_concurrent=settings.max_concurrent,
                                   max_queued=settings.max_queued, repo_roots=settings.repo_roots,
                                   team_options=settings.team_options, record_content=settings.record_content)
        try:
            yield
        finally:
            await state["runs"].shutdown()
            store.close()

    app = FastAPI(title="moot", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Multi-agent teams over HTTP: the run history of every process, background runs "
                              "with progress over Server-Sent Events, and the learning, research, graph, "
                              "deliberation, board and chat endpoints. The web page is at `/`.")

    def manager() -> RunManager:
        return state["runs"]  # type: ignore[no-any-return]

    def store() -> RunStore:
        return state["store"]  # type: ignore[no-any-return]

    def start(body: QueryRequest) -> ServerRun:
        try:
            run = manager().start(body.prompt, body.repo, body.mode)
            store().record_request(run.id, "research", body.model_dump())
            return run
        except QueueFull as exc:
            raise HTTPException(429, exc.one_line(), headers={"Retry-After": str(exc.retry_after_s)}) from None
        except RepoNotAllowed as exc:
            raise HTTPException(403, exc.one_line()) from None
        except MootError as exc:
            raise HTTPException(422, exc.one_line()) from None

    def not_found(run_id: str) -> HTTPException:
        return HTTPException(404, f"no run {run_id!r} (list runs with GET /api/runs or `moot runs`)")

    def server_run(run_id: str) -> ServerRun | None:
        try:
            return manager().get(run_id)
        except KeyError:
            return None

    def stored_id(run_id: str) -> str | None:
        """The full id of a recorded run (an id or a unique prefix), or ``None``."""
        try:
            return store().resolve_id(run_id)
        except MootError:
            return None

    def started(run: ServerRun) -> RunStarted:
        return RunStarted(run_id=run.id, status=run.status, team=run.team,  # type: ignore[arg-type]
                          events=f"/api/runs/{run.id}/events", page=f"/#/runs/{run.id}")

    # ------------------------------------------------------------------ health, research

    @app.get("/api/health", response_model=Health)
    async def health() -> Health:
        """Liveness, with the number of runs in progress and of open event streams."""
        m = manager()
        return Health(ok=True, version=__version__, active_runs=m.active, open_streams=m.open_streams,
                      queued_runs=m.queued, max_concurrent=m.max_concurrent, max_queued=m.max_queued)

    @app.post("/api/query", response_model=ResearchAnswer, tags=["research"])
    async def query(body: QueryRequest) -> dict[str, Any]:
        """Answer a question about a repository synchronously: {answer, evidence, verification, usage,
        run_id, …}; 502 with the cause when no model answered (unreachable, refusing)."""
        run = start(body)
        assert run.task is not None
        await asyncio.shield(run.task)  # a client that goes away does not cancel the run
        if run.result is not None and run.status == "failed":  # the team ran, but no model answered
            raise HTTPException(502, run.error or "no model answered")
        if run.result is None:
            raise HTTPException(500 if run.status == "failed" else 503, run.error or run.status)
        return run.result

    @app.post("/api/runs", status_code=202, response_model=RunStarted, tags=["research"])
    async def start_run(body: QueryRequest) -> RunStarted:
        """Start a research run in the background (same as POST /api/research/runs)."""
        return started(start(body))

    @app.post("/api/research/runs", status_code=202, response_model=RunStarted, tags=["research"])
    async def start_research(body: QueryRequest) -> RunStarted:
        """Start a research run in the background; stream /api/runs/{run_id}/events for its progress."""
        return started(start(body))

    # ------------------------------------------------------------------ the run history

    @app.get("/api/runs", response_model=RunPage, tags=["runs"])
    async def list_runs(
        team: Literal["research", "learning", "graph", "deliberation", "board", "other"] | None = None,
        status: Literal["running", "completed", "stopped", "failed", "cancelled"] | None = None,
        since: float | None = Query(None, description="Started at or after (Unix seconds)."),
        until: float | None = Query(None, description="Started before (Unix seconds)."),
        q: str | None = Query(None, max_length=200, description="Text in the run's name, or the start of its id."),
        limit: int = Query(50, ge=1, le=500),
        offset: int = Query(0, ge=0),
        top_level: bool = Query(True, description="Only runs no other run holds (their children are on their page)."),
    ) -> RunPage:
        """Runs recorded by any moot process on this machine (CLI, this server, others), newest first."""
        rows, total = await asyncio.to_thread(history.list_runs, store(), team=team, status=status, since=since,
                                              until=until, search=q, limit=limit, offset=offset, top_level=top_level)
        return RunPage(runs=rows, total=total, offset=offset, limit=limit)

    @app.delete("/api/runs", response_model=CancelledCount, tags=["runs"])
    async def cancel_runs(status: Literal["queued", "all"] = "queued") -> CancelledCount:
        """Cancel every queued run (``?status=all``: running ones too), newest first, in one step,
        so no queued run is handed a slot (and sends a model request) while others are cancelled."""
        return CancelledCount(cancelled=await manager().cancel_many(include_running=status == "all"))

    def detail(run_id: str) -> RunDetail:
        run = server_run(run_id)
        full = stored_id(run.record_id if run is not None else run_id)
        if full is not None:
            found = history.run_detail(store(), full)
        elif run is not None:  # queued, or a team that failed before it recorded anything
            found = RunDetail(run_id=run.id, name=run.prompt[:80], team=run.team, status=run.status,  # type: ignore[arg-type]
                              started=run.created, finished=run.finished,
                              stop_reason_text=history.plain_stop_reason(run.status, run.error))
        else:
            raise not_found(run_id)
        found.can_rerun = store().recorded_request(*{found.run_id, run.id if run is not None else found.run_id}) is not None
        found.can_cancel = run is not None and run.status in ("queued", "running")
        if run is not None:  # what the server knows beyond the record: its request and result
            found.run_id = run.id
            if run.status in ("queued", "running") or found.status == "running":
                found.status = run.status
            elif run.status != found.status and run.status == "cancelled":
                found.status = run.status
            found.prompt, found.mode, found.repo, found.error, found.result = (
                run.prompt, run.mode or None, run.repo or None, run.error, run.result)
            if found.output is None and run.result is not None and run.team == "research":
                found.output_kind, found.output = "research", run.result
        return found

    @app.get("/api/runs/{run_id}", response_model=RunDetail, tags=["runs"])
    async def get_run(run_id: str) -> RunDetail:
        """One run (an id or a unique prefix): status, spans on agent lanes, budget use, stop reason in words,
        the team's result, and for runs this server started the request and its result."""
        return await asyncio.to_thread(detail, run_id)

    @app.delete("/api/runs/{run_id}", response_model=RunDetail, tags=["runs"])
    async def cancel_run(run_id: str) -> RunDetail:
        """Cancel a run this server started (recorded as cancelled, partial results kept)."""
        run = server_run(run_id)
        if run is None:
            if stored_id(run_id) is not None:
                raise HTTPException(409, f"run {run_id!r} was not started by this server: cancel it where it runs (Ctrl-C)")
            raise not_found(run_id)
        await manager().cancel(run)
        return await asyncio.to_thread(detail, run_id)

    @app.get("/api/runs/{run_id}/events", response_class=StreamingResponse, tags=["runs"],
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "Server-Sent Events: status, phase, tool_call, usage, budget_*, team, "
                                             "event (a recorded event), and a final done."},
                        404: {"description": "No such run."}})
    async def run_events(run_id: str) -> StreamingResponse:
        """Progress as Server-Sent Events until the run ends with ``done``; 404 for an unknown run.

        A run this server started streams its progress events; a run recorded by another process
        (or finished before) streams its recorded events, then new ones as they are written."""
        run = server_run(run_id)
        if run is not None:
            return _stream(_server_stream(run))
        full = stored_id(run_id)
        if full is None:
            raise not_found(run_id)
        return _stream(_store_stream(full))

    def _stream(body: AsyncIterator[str]) -> StreamingResponse:
        return StreamingResponse(body, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def _server_stream(run: ServerRun) -> AsyncIterator[str]:
        m = manager()
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        backlog = list(run.events)
        finished = run.done
        if not finished:
            run.listeners.add(queue)
        m.open_streams += 1
        try:
            for item in backlog:
                yield sse(item["event"], item["data"], item["id"])
            last = backlog[-1]["id"] if backlog else 0
            if finished:
                return
            async for item in queued(queue):
                if isinstance(item, str):
                    yield item  # a keep-alive
                elif item["id"] > last:
                    yield sse(item["event"], item["data"], item["id"])
        finally:  # also on disconnect: the stream's queue goes, the run itself goes on
            run.listeners.discard(queue)
            m.open_streams -= 1

    async def _store_stream(run_id: str) -> AsyncIterator[str]:
        m, s = manager(), store()
        m.open_streams += 1
        last, quiet = 0, 0.0
        try:
            while True:
                record = await asyncio.to_thread(s.get_run, run_id)
                events = await asyncio.to_thread(s.events_after, run_id, last)
                for e in events:
                    last = e.seq
                    yield sse("event", e.to_dict(), e.seq)
                if record.status != "running":
                    yield sse("done", {"status": record.status, "run_id": run_id, "stop_reason": record.stop_reason,
                                        "stop_reason_text": history.plain_stop_reason(record.status, record.stop_reason)})
                    return
                quiet = 0.0 if events else quiet + STREAM_POLL_S
                if quiet >= KEEPALIVE_S:
                    quiet = 0.0
                    yield KEEPALIVE
                await asyncio.sleep(STREAM_POLL_S)
        finally:
            m.open_streams -= 1

    # ------------------------------------------------------------------ teams, page, docs

    from moot.server.teams import add_team_routes

    starters: dict[str, Any] = {"research": lambda d: start_research(QueryRequest(**d))}
    add_team_routes(app, settings, manager, store, starters)
    from moot.server.actions import add_action_routes

    add_action_routes(app, store, starters, detail, server_run, stored_id, not_found)

    static = web_root()
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(static / "index.html", media_type="text/html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(static / "favicon.svg", media_type="image/svg+xml")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(_DOCS_HTML)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        if settings.token:  # the bearer scheme the token middleware enforces, so clients and /docs know it
            schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = {
                "type": "http", "scheme": "bearer", "description": "The token given to moot serve (--token)."}
            schema["security"] = [{"bearer": []}]
            for path, item in schema.get("paths", {}).items():
                if path.startswith(OPEN_PATHS):
                    for operation in item.values():
                        operation["security"] = []
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]

    app.add_middleware(PageHeadersMiddleware)
    app.add_middleware(JsonBodyMiddleware)  # inside the body limit: it reads a bounded body
    if settings.max_body_bytes:
        app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.token:
        app.add_middleware(TokenMiddleware, token=settings.token)
    allowed = allowed_host_names(settings.host, settings.allowed_hosts)
    if allowed is not None:
        app.add_middleware(HostCheckMiddleware, allowed=allowed)  # added last: checked first
    state["created"] = time.time()
    return app


_DOCS_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>moot API</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/static/vendor/swagger-ui/swagger-ui.css">
</head><body><div id="swagger-ui"></div>
<script src="/static/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/static/docs.js"></script>
</body></html>
"""
