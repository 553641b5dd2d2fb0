"""What a user can do to a run from its page, beyond reading it: run it again with the same
inputs, download it as one JSON file, and accept or reject a deliberation's insights (the
decisions the deliberation team reads back as precedents, as `moot deliberate feedback` records
them). Starting and cancelling use the team endpoints and ``DELETE /api/runs/{id}``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import Response

from moot.errors import MootError
from moot.runtime import RunStore
from moot.server.runs import ServerRun
from moot.server.schemas import FeedbackRequest, FeedbackState, RunDetail, RunStarted
from moot.server.teams import Starter


def add_action_routes(app: FastAPI, store: Callable[[], RunStore], starters: dict[str, Starter],
                      detail: Callable[[str], RunDetail], server_run: Callable[[str], ServerRun | None],
                      stored_id: Callable[[str], str | None], not_found: Callable[[str], HTTPException]) -> None:
    @app.post("/api/runs/{run_id}/rerun", status_code=202, response_model=RunStarted, tags=["runs"])
    async def rerun(run_id: str) -> RunStarted:
        """Start a run again with the inputs of an earlier one (a run started over HTTP, whose request
        the server recorded); 409 for a run started elsewhere (the CLI, Python)."""
        run = server_run(run_id)
        ids = [i for i in (run.id if run else None, run.record_id if run else None, stored_id(run_id), run_id) if i]
        found = await asyncio.to_thread(store().recorded_request, *ids)
        if found is None:
            if run is None and stored_id(run_id) is None:
                raise not_found(run_id)
            raise HTTPException(409, f"run {run_id!r} was not started over HTTP, so its inputs were not recorded: "
                                     "start it again where it was started (the command line or Python)")
        kind, data = found
        starter = starters.get(kind)
        if starter is None:
            raise HTTPException(409, f"this server cannot start {kind!r} runs")
        return await starter(dict(data))

    @app.get("/api/runs/{run_id}/export", tags=["runs"],
             responses={200: {"content": {"application/json": {}}, "description": "The run and all its events."}})
    async def export(run_id: str) -> Response:
        """One run as a JSON file to download: what its page shows (``run``) and every recorded event."""
        found = await asyncio.to_thread(detail, run_id)
        full = stored_id(found.run_id) or stored_id(run_id)
        events = [e.to_dict() for e in await asyncio.to_thread(store().events, full)] if full else []
        body = json.dumps({"run": found.model_dump(mode="json"), "events": events}, indent=2, ensure_ascii=False)
        return Response(body, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="moot-run-{found.run_id[:12]}.json"'})

    def deliberation(run_id: str) -> tuple[str, dict[str, Any]]:
        full = stored_id(run_id)
        run = server_run(run_id)
        if full is None and run is not None:
            full = stored_id(run.record_id)
        found = store().output(full) if full else None
        if found is None or found[0] != "deliberation":
            raise HTTPException(404, f"no deliberation {run_id!r} (GET /api/runs?team=deliberation lists them)")
        return full, found[1]  # type: ignore[return-value]

    def decide(run_id: str, body: FeedbackRequest | None) -> FeedbackState:
        from moot.teams.deliberation.memory import FeedbackMemory
        from moot.teams.deliberation.models import DeliberationResult

        full, data = deliberation(run_id)
        memory = FeedbackMemory()
        try:
            if body is not None:
                if not memory.run_ids(full):  # a deliberation made without memory (the server, --no-memory)
                    memory.save(DeliberationResult.model_validate({**data, "run_id": full}))
                try:
                    memory.record(full, body.decision, body.insight_id)
                except MootError as exc:
                    raise HTTPException(422, exc.one_line()) from None
            return FeedbackState(run_id=full, decisions=memory.decisions(full))
        finally:
            memory.close()

    @app.get("/api/deliberation/runs/{run_id}/feedback", response_model=FeedbackState, tags=["deliberation"])
    async def feedback_state(run_id: str) -> FeedbackState:
        """The user's decisions about a deliberation's insights."""
        return await asyncio.to_thread(decide, run_id, None)

    @app.post("/api/deliberation/runs/{run_id}/feedback", response_model=FeedbackState, tags=["deliberation"])
    async def feedback(run_id: str, body: FeedbackRequest) -> FeedbackState:
        """Accept or reject one insight of a deliberation (without ``insight_id``: every debate
        resolution); later deliberations show the moderator these decisions as precedents."""
        return await asyncio.to_thread(decide, run_id, body)


__all__ = ["add_action_routes"]
