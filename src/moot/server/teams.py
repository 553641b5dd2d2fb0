"""The HTTP endpoints of the learning, graph, deliberation, board and chat teams.

Long work (learning a text, asking the learning team, a graph run, a deliberation) starts as a
background run (202 with its id; progress on ``/api/runs/{id}/events``, its record in the run
store); a quick answer (``ask``, ``chat``) can also be had synchronously. Files a team reads
(graph sources, deliberation exports) must lie under a ``--repo-root``; knowledge bases are
named, never given as paths, so a client cannot open an arbitrary file on the server.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import StreamingResponse

from moot.errors import MootError
from moot.runtime import RunStore
from moot.server.board_stream import MAX_BOARD_STREAMS, BoardWatch, TooManyStreams
from moot.server.runs import QueueFull, RepoNotAllowed, RunManager, ServerRun
from moot.server.schemas import (
    AskRequest,
    BoardColumns,
    BoardTaskRequest,
    ChatReply,
    ChatRequest,
    DeliberationRequest,
    FactOut,
    FactPage,
    GraphRequest,
    KnowledgeBaseInfo,
    LearningAnswer,
    LearnRequest,
    RunStarted,
    UsageOut,
)

_KB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _http(exc: Exception) -> HTTPException:
    if isinstance(exc, QueueFull):
        return HTTPException(429, exc.one_line(), headers={"Retry-After": str(exc.retry_after_s)})
    if isinstance(exc, RepoNotAllowed):
        return HTTPException(403, exc.one_line())
    if isinstance(exc, MootError):
        return HTTPException(422, exc.one_line())
    raise exc


Starter = Callable[[dict[str, Any]], Awaitable[RunStarted]]
"""Starts a run again from its recorded request (``POST /api/runs/{id}/rerun``)."""


def add_team_routes(app: FastAPI, settings: Any, manager: Callable[[], RunManager], store: Callable[[], RunStore],
                    starters: dict[str, Starter] | None = None) -> None:
    starters = starters if starters is not None else {}

    def started(run: ServerRun) -> RunStarted:
        return RunStarted(run_id=run.id, status=run.status, team=run.team,  # type: ignore[arg-type]
                          events=f"/api/runs/{run.id}/events", page=f"/#/runs/{run.id}")

    def remember(run: RunStarted | ServerRun, kind: str, data: dict[str, Any]) -> None:
        """Keep the request with the run, so the page can run it again with the same inputs."""
        store().record_request(run.run_id if isinstance(run, RunStarted) else run.id, kind, data)

    def launch(team: str, prompt: str, job: Any, mode: str = "") -> RunStarted:
        try:
            return started(manager().start_job(team, prompt, job, mode=mode))
        except MootError as exc:
            raise _http(exc) from None

    # ------------------------------------------------------------------ learning

    def kb_path(name: str) -> Path:
        if not _KB_NAME.fullmatch(name) or ".." in name:
            raise HTTPException(422, f"{name!r} is not a knowledge-base name (letters, digits, '.', '_', '-')")
        from moot import config

        return config.home() / "kb" / f"{name}.sqlite3"

    def existing_kb(name: str) -> Path:
        path = kb_path(name)
        if not path.is_file():
            raise HTTPException(404, f"no knowledge base {name!r} (learn something into it first: "
                                     f"POST /api/learning/kbs/{name}/learn)")
        return path

    def kb_info(name: str, path: Path) -> KnowledgeBaseInfo:
        from moot.memory import KnowledgeBase

        kb = KnowledgeBase.open(path)
        try:
            s = kb.summary(top=10)
        finally:
            kb.close()
        return KnowledgeBaseInfo(name=name, facts=s.facts, current_facts=s.current_facts, superseded_facts=s.superseded_facts,
                                 episodes=s.episodes, sources=list(s.sources), entities=[tuple(e) for e in s.entities])

    @app.get("/api/learning/kbs", response_model=list[KnowledgeBaseInfo], tags=["learning"])
    async def list_kbs() -> list[KnowledgeBaseInfo]:
        """The named knowledge bases on this machine, with their counts."""
        from moot import config

        folder = config.home() / "kb"
        found = sorted(folder.glob("*.sqlite3")) if folder.is_dir() else []
        return await asyncio.to_thread(lambda: [kb_info(p.stem, p) for p in found])

    @app.get("/api/learning/kbs/{kb}", response_model=KnowledgeBaseInfo, tags=["learning"])
    async def get_kb(kb: str) -> KnowledgeBaseInfo:
        """One knowledge base's counts, main entities and sources."""
        return await asyncio.to_thread(kb_info, kb, existing_kb(kb))

    @app.get("/api/learning/kbs/{kb}/facts", response_model=FactPage, tags=["learning"])
    async def kb_facts(kb: str, q: str | None = Query(None, max_length=200, description="Text the fact contains."),
                       current: bool = True, limit: int = Query(50, ge=1, le=1000), offset: int = Query(0, ge=0)) -> FactPage:
        """The facts of a knowledge base, oldest first, optionally only those containing ``q``."""
        path = existing_kb(kb)

        def read() -> FactPage:
            from moot.memory import KnowledgeBase

            base = KnowledgeBase.open(path)
            try:
                facts = base.facts(include_superseded=not current)
            finally:
                base.close()
            if q:
                facts = [f for f in facts if q.lower() in f.content.lower()]
            page = facts[offset: offset + limit]
            return FactPage(total=len(facts), facts=[FactOut(
                id=f.id, content=f.content, entity=getattr(f, "entity", None), attribute=getattr(f, "attribute", None),
                value=None if getattr(f, "value", None) is None else str(f.value), source=getattr(f, "source", None),
                source_date=None if getattr(f, "source_date", None) is None else str(f.source_date),
                superseded=not f.is_current) for f in page])

        return await asyncio.to_thread(read)

    @app.post("/api/learning/kbs/{kb}/learn", status_code=202, response_model=RunStarted, tags=["learning"])
    async def learn_text(kb: str, body: LearnRequest) -> RunStarted:
        """Learn facts from a text into the named knowledge base (created if new), in the background."""
        path = kb_path(kb)

        async def job(run: ServerRun, bus: Any) -> dict[str, Any]:
            from moot.memory import KnowledgeBase
            from moot.teams.learning import learn

            base = await asyncio.to_thread(KnowledgeBase.open, path)
            try:
                report = await learn(base, body.text, source=body.source, published=body.published, model=manager().model,
                                     bus=bus, store=store())
            finally:
                base.close()
            data = report.to_dict()
            data.pop("facts", None)
            return {**data, "status": "completed", "knowledge_base": kb}

        run = launch("learning", f"learn {body.source} into {kb}", job)
        remember(run, "learn", {"kb": kb, **body.model_dump()})
        return run

    starters["learn"] = lambda d: learn_text(d.pop("kb"), LearnRequest(**d))

    async def ask_job(kb: str, body: AskRequest) -> Any:
        from moot.teams.learning import LearningTeam

        team = LearningTeam(existing_kb(kb), model=manager().model, store=store())
        return team

    @app.post("/api/learning/kbs/{kb}/ask", response_model=LearningAnswer, tags=["learning"])
    async def ask(kb: str, body: AskRequest) -> Any:
        """Ask the learning team synchronously: the answer with its intent, retrieval strategy, facts with
        sources, sub-agents and confidence (the :class:`Answer` schema)."""
        existing_kb(kb)
        run = await _ask_run(kb, body)
        assert run.task is not None
        await asyncio.shield(run.task)
        if run.result is None:
            raise HTTPException(500 if run.status == "failed" else 503, run.error or run.status)
        return run.result

    async def _ask_run(kb: str, body: AskRequest) -> ServerRun:
        async def job(run: ServerRun, bus: Any) -> Any:
            team = await ask_job(kb, body)
            try:
                answer = await team.ask(body.question, mode=body.mode, bus=bus)
            finally:
                await team.aclose()
            return {**answer.to_json(), "question": answer.question, "trace": answer.trace.model_dump(mode="json"),
                    "status": "completed" if answer.answered else "stopped"}

        try:
            run = manager().start_job("learning", f"ask: {body.question}", job, mode=body.mode)
        except MootError as exc:
            raise _http(exc) from None
        remember(run, "ask", {"kb": kb, **body.model_dump()})
        return run

    @app.post("/api/learning/kbs/{kb}/ask/runs", status_code=202, response_model=RunStarted, tags=["learning"])
    async def ask_run(kb: str, body: AskRequest) -> RunStarted:
        """Ask the learning team in the background."""
        existing_kb(kb)
        return started(await _ask_run(kb, body))

    starters["ask"] = lambda d: ask_run(d.pop("kb"), AskRequest(**d))

    # ------------------------------------------------------------------ graph reasoning

    @app.post("/api/graph/runs", status_code=202, response_model=RunStarted, tags=["graph"])
    async def graph_run(body: GraphRequest) -> RunStarted:
        """Grow a reasoning graph over files (under a --repo-root) or a knowledge base, in the background;
        the run's page draws the scaffold."""
        if not body.sources and not body.kb:
            raise HTTPException(422, "nothing to reason over: give sources (files on the server) or kb (a knowledge base name)")
        try:
            sources = [manager().check_path(s, "source") for s in body.sources]
        except MootError as exc:
            raise _http(exc) from None
        kb = existing_kb(body.kb) if body.kb else None

        async def job(run: ServerRun, bus: Any) -> Any:
            from moot.teams.graph import GraphConfig, GraphTeam

            roots = {manager().root_of(s) for s in sources}
            config = GraphConfig.preset("standard", iterations=body.iterations, vocabulary=body.vocabulary)
            team = GraphTeam(sources, kb=kb, model=manager().model, store=store(), config=config,
                             source_root=roots.pop() if len(roots) == 1 else None)
            return await team.ask(body.question, bus=bus, run_id=run.id)

        run = launch("graph", body.question, job)
        remember(run, "graph", body.model_dump())
        return run

    starters["graph"] = lambda d: graph_run(GraphRequest(**d))

    # ------------------------------------------------------------------ deliberation

    @app.post("/api/deliberation/runs", status_code=202, response_model=RunStarted, tags=["deliberation"])
    async def deliberation_run(body: DeliberationRequest) -> RunStarted:
        """Deliberate over a folder of exports (under a --repo-root) in the background; the run's page shows
        the ranked insights, each conflict's debate rounds and the votes."""
        try:
            data = manager().check_path(body.data, "data folder")
        except MootError as exc:
            raise _http(exc) from None

        async def job(run: ServerRun, bus: Any) -> Any:
            from moot.teams.deliberation import DeliberationTeam

            team = DeliberationTeam(data, model=manager().model, mode=body.mode, store=store())
            return await team.deliberate(body.request, now=body.now, bus=bus, run_id=run.id)

        run = launch("deliberation", body.request, job, mode=body.mode)
        remember(run, "deliberation", body.model_dump())
        return run

    starters["deliberation"] = lambda d: deliberation_run(DeliberationRequest(**d))

    # ------------------------------------------------------------------ the task board

    def board() -> Any:
        if not settings.board:
            raise HTTPException(404, "this server shows no task board (start it with moot serve --board DIR)")
        from moot.teams.board import open_board

        try:
            return open_board(settings.board)
        except MootError as exc:
            raise HTTPException(503, exc.one_line()) from None

    def columns() -> BoardColumns:
        from moot.teams.board import BoardStats

        b = board()
        try:
            tasks = b.list()
        finally:
            b.close()
        by_status: dict[str, int] = {}
        by_type: dict[str, int] = {}
        for t in tasks:  # the counts from the same read (stats() would read the whole board again)
            by_status[t.status.value] = by_status.get(t.status.value, 0) + 1
            by_type[t.type] = by_type.get(t.type, 0) + 1
        counts = BoardStats(**by_status, by_type=by_type).model_dump()
        out = BoardColumns(board=str(settings.board), counts=counts)
        tasks.sort(key=lambda t: t.finished_at or t.claimed_at or t.created_at, reverse=True)
        for t in tasks:
            getattr(out, t.status.value).append(t.model_dump(mode="json"))
        return out

    @app.get("/api/board", response_model=BoardColumns, tags=["board"])
    async def board_status() -> BoardColumns:
        """The board's counts and its tasks in four columns: pending, active, completed, failed."""
        return await asyncio.to_thread(columns)

    from moot.teams.board import BoardTask

    @app.get("/api/board/tasks", response_model=list[BoardTask], tags=["board"])
    async def board_tasks(status: str | None = Query(None, pattern="^(pending|active|completed|failed)$"),
                          limit: int = Query(200, ge=1, le=5000)) -> list[dict[str, Any]]:
        """Tasks, optionally of one state (a list of board task objects)."""
        from moot.teams.board import TaskStatus

        def read() -> list[dict[str, Any]]:
            b = board()
            try:
                return [t.model_dump(mode="json") for t in b.list(TaskStatus(status) if status else None, limit=limit)]
            finally:
                b.close()

        return await asyncio.to_thread(read)

    @app.get("/api/board/tasks/{task_id}", response_model=BoardTask, tags=["board"])
    async def board_task(task_id: str) -> dict[str, Any]:
        """One task; 404 when the board has no such task."""
        from moot.teams.board import UnknownTaskError

        def read() -> dict[str, Any]:
            b = board()
            try:
                return b.get(task_id).model_dump(mode="json")  # type: ignore[no-any-return]
            except (UnknownTaskError, MootError):
                raise HTTPException(404, f"no task {task_id!r} on the board") from None
            finally:
                b.close()

        return await asyncio.to_thread(read)

    @app.post("/api/board/tasks", status_code=201, response_model=BoardTask, tags=["board"])
    async def board_submit(body: BoardTaskRequest) -> dict[str, Any]:
        """Add a pending task; agents watching the board (``moot board work``) claim it."""
        from moot.teams.board import parse_task

        def write() -> dict[str, Any]:
            b = board()
            try:
                task = b.submit(parse_task({"description": body.description, "type": body.type,
                                            "requirements": body.requirements, "priority": body.priority}, origin="the request"))
                return task.model_dump(mode="json")  # type: ignore[no-any-return]
            except MootError as exc:
                raise HTTPException(422, exc.one_line()) from None
            finally:
                b.close()

        return await asyncio.to_thread(write)

    watch: list[BoardWatch] = []

    def board_watch() -> BoardWatch:
        if not watch:
            def read() -> tuple[dict[str, Any], str | None]:
                b = board()
                try:
                    token = b.version()  # before the read: a change during it shows on the next look
                finally:
                    b.close()
                return columns().model_dump(mode="json"), token

            def version() -> str | None:
                b = board()
                try:
                    return b.version()  # type: ignore[no-any-return]
                finally:
                    b.close()

            watch.append(BoardWatch(read, version, max_streams=getattr(settings, "max_board_streams", MAX_BOARD_STREAMS)))
        return watch[0]

    @app.get("/api/board/events", response_class=StreamingResponse, tags=["board"],
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "A `board` event with the columns, then a `change` event "
                                             "(`changed` tasks, `removed` ids, `counts`) whenever tasks move."},
                        429: {"description": "Every board stream the server allows is open."}})
    async def board_events() -> StreamingResponse:
        """The board's columns once, then only what changed, as Server-Sent Events. One watcher serves
        every open stream (at most ``--max-board-streams``; 429 beyond)."""
        board().close()  # 404 now, before the stream starts, when there is no board
        try:
            events = board_watch().stream()
        except TooManyStreams as exc:
            raise HTTPException(429, exc.one_line(), headers={"Retry-After": str(exc.retry_after_s)}) from None

        async def body() -> AsyncIterator[str]:
            manager().open_streams += 1
            try:
                async for item in events:
                    yield item
            finally:
                manager().open_streams -= 1
                await events.aclose()  # type: ignore[attr-defined]

        return StreamingResponse(body(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    # ------------------------------------------------------------------ chat

    @app.post("/api/chat", response_model=ChatReply, tags=["chat"])
    async def chat(body: ChatRequest) -> ChatReply:
        """One prompt to the server's model; the answer with its usage (no run is recorded). It takes
        a slot like a run (``--max-concurrent``) and waits in the same queue; 429 when it is full."""
        from moot.models.base import ModelRequest, ModelSettings, messages_from

        request = ModelRequest(messages=messages_from(body.prompt, system=body.system),
                               settings=ModelSettings(max_tokens=body.max_tokens, temperature=body.temperature))
        try:
            async with manager().slot():
                started_at = time.perf_counter()
                try:
                    model = manager().model
                    response = await model.request(request)
                except MootError as exc:
                    raise HTTPException(502, exc.one_line()) from None
        except QueueFull as exc:
            raise _http(exc) from None
        u = response.usage
        return ChatReply(text=response.text, model=response.model or getattr(model, "name", "?"),
                         usage=UsageOut(input_tokens=u.input_tokens, output_tokens=u.output_tokens, requests=u.requests,
                                        cost_usd=u.cost_usd), seconds=round(time.perf_counter() - started_at, 3))
