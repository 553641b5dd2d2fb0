"""The HTTP API on a real uvicorn server on a loopback port, with a function model."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.server import ServerSettings, create_app
from test_research_support import PLAN_3, ResearchScript, make_repo

GOOD = "Requests are split by `parse_request` (app/server.py:4). Sessions are saved by `save_session` (app/store.py:10)."


class Server:
    def __init__(self, settings: ServerSettings) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class SlowScript(ResearchScript):
    """Researchers wait on a gate, so a test can act while the run is in the middle."""

    def __init__(self, gate: threading.Event, **kw: Any) -> None:
        super().__init__(PLAN_3, synth=GOOD, **kw)
        self.gate = gate

    async def __call__(self, request: ModelRequest) -> Any:
        if str(request.messages[0].content).startswith("You research ONE"):
            while not self.gate.is_set():
                await asyncio.sleep(0.02)
        return await super().__call__(request)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def settings(tmp_path: Path, script: Any, **kw: Any) -> ServerSettings:
    kw.setdefault("repo_roots", [tmp_path])
    return ServerSettings(model=FunctionModel(script), store_path=tmp_path / "runs.db",
                          team_options={"db_path": tmp_path / "index.db"}, **kw)


def sse(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    event, data = "message", ""
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif line == "" and data:
            yield event, json.loads(data)
            event, data = "message", ""


def test_sync_query_answers_with_evidence_and_run_id(repo: Path, tmp_path: Path) -> None:
    with Server(settings(tmp_path, ResearchScript(PLAN_3, synth=GOOD))) as srv:
        r = httpx.post(f"{srv.url}/api/query", json={"prompt": "How does a request flow end-to-end?", "repo": str(repo),
                                                     "mode": "multi"}, timeout=60)
        assert r.status_code == 200, r.text
        body = r.json()
        assert "app/server.py:4" in body["answer"] and body["mode"] == "multi"
        assert len(body["evidence"]) == 3 and body["verification"] and body["usage"]["requests"] >= 5
        assert RunStore(tmp_path / "runs.db").get_run(body["run_id"]).status == "completed"
        assert httpx.get(f"{srv.url}/openapi.json").json()["paths"]["/api/query"]["post"]
        assert httpx.get(f"{srv.url}/docs").status_code == 200


def test_background_run_streams_phases_until_done(repo: Path, tmp_path: Path) -> None:
    with Server(settings(tmp_path, ResearchScript(PLAN_3, synth=GOOD))) as srv:
        r = httpx.post(f"{srv.url}/api/runs", json={"prompt": "How does a request flow?", "repo": str(repo), "mode": "multi"})
        assert r.status_code == 202
        run_id = r.json()["run_id"]
        with httpx.stream("GET", f"{srv.url}/api/runs/{run_id}/events", timeout=60) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = list(sse(stream.iter_lines()))
        names = [e for e, _ in events]
        assert names[-1] == "done" and events[-1][1]["status"] == "completed", events[-1]
        phases = [d["phase"] for e, d in events if e == "phase" and d["status"] == "started"]
        assert phases[0] == "planner" and phases.index("synthesizer") < phases.index("verifier")
        assert sorted(d["researcher"] for e, d in events if e == "phase" and d["status"] == "started"
                      and d["phase"] == "researchers") == [1, 2, 3]
        assert "tool_call" in names and "usage" in names
        status = httpx.get(f"{srv.url}/api/runs/{run_id}").json()
        assert status["status"] == "completed" and "app/server.py:4" in status["result"]["answer"]


def test_malformed_requests_get_422_with_the_reason(repo: Path, tmp_path: Path) -> None:
    with Server(settings(tmp_path, ResearchScript(PLAN_3, synth=GOOD))) as srv:
        r = httpx.post(f"{srv.url}/api/query", json={"repo": str(repo)})
        assert r.status_code == 422 and "prompt" in json.dumps(r.json())
        r = httpx.post(f"{srv.url}/api/runs", json={"prompt": "x", "repo": str(repo), "mode": "fast"})
        assert r.status_code == 422 and "mode" in json.dumps(r.json())
        r = httpx.post(f"{srv.url}/api/runs", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 422
        r = httpx.post(f"{srv.url}/api/runs", json={"prompt": "x", "repo": str(tmp_path / "missing")})
        assert r.status_code == 422 and "is not a folder" in r.json()["detail"]
        assert httpx.get(f"{srv.url}/api/runs/nope").status_code == 404


def test_oversized_body_gets_413(repo: Path, tmp_path: Path) -> None:
    with Server(settings(tmp_path, ResearchScript(PLAN_3, synth=GOOD), max_body_bytes=2048)) as srv:
        big = {"prompt": "x" * 5000, "repo": str(repo)}
        assert httpx.post(f"{srv.url}/api/query", json=big).status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while streaming
            yield b'{"prompt": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'", "repo": "."}'

        r = httpx.post(f"{srv.url}/api/runs", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413


def test_token_is_required_when_set(repo: Path, tmp_path: Path) -> None:
    with Server(settings(tmp_path, ResearchScript(PLAN_3, synth=GOOD), token="s3cret")) as srv:
        body = {"prompt": "Where is parse_request?", "repo": str(repo), "mode": "single"}
        assert httpx.post(f"{srv.url}/api/query", json=body).status_code == 401
        assert httpx.post(f"{srv.url}/api/query", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = httpx.post(f"{srv.url}/api/query", json=body, headers={"Authorization": "Bearer s3cret"}, timeout=60)
        assert ok.status_code == 200 and "parse_request" in ok.json()["answer"]
        assert httpx.get(f"{srv.url}/openapi.json").status_code == 200


def test_client_disconnect_mid_stream_leaves_nothing_running(repo: Path, tmp_path: Path) -> None:
    gate = threading.Event()
    with Server(settings(tmp_path, SlowScript(gate))) as srv:
        run_id = httpx.post(f"{srv.url}/api/runs", json={"prompt": "How does it flow?", "repo": str(repo),
                                                         "mode": "multi"}).json()["run_id"]
        with httpx.stream("GET", f"{srv.url}/api/runs/{run_id}/events", timeout=60) as stream:
            for event, data in sse(stream.iter_lines()):
                if event == "phase" and data["phase"] == "researchers":
                    break  # the client goes away while researchers are running
        health = httpx.get(f"{srv.url}/api/health").json()
        assert health["active_runs"] == 1
        gate.set()
        deadline = time.monotonic() + 30
        while httpx.get(f"{srv.url}/api/runs/{run_id}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while httpx.get(f"{srv.url}/api/health").json()["open_streams"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        health = httpx.get(f"{srv.url}/api/health").json()
        assert health["active_runs"] == 0 and health["open_streams"] == 0
        assert httpx.get(f"{srv.url}/api/runs/{run_id}").json()["status"] == "completed"
        assert RunStore(tmp_path / "runs.db").get_run(run_id).status == "completed"


def test_cancel_a_running_run(repo: Path, tmp_path: Path) -> None:
    gate = threading.Event()
    with Server(settings(tmp_path, SlowScript(gate))) as srv:
        run_id = httpx.post(f"{srv.url}/api/runs", json={"prompt": "How does it flow?", "repo": str(repo),
                                                         "mode": "multi"}).json()["run_id"]
        deadline = time.monotonic() + 30
        while httpx.get(f"{srv.url}/api/runs/{run_id}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert httpx.delete(f"{srv.url}/api/runs/{run_id}").json()["status"] == "cancelled"
        assert RunStore(tmp_path / "runs.db").get_run(run_id).status == "cancelled"
        assert httpx.get(f"{srv.url}/api/health").json()["active_runs"] == 0


def test_runs_beyond_the_limit_wait_queued(repo: Path, tmp_path: Path) -> None:
    gate = threading.Event()
    with Server(settings(tmp_path, SlowScript(gate), max_concurrent=1)) as srv:
        body = {"prompt": "How does it flow?", "repo": str(repo), "mode": "multi"}
        first = httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"]
        second = httpx.post(f"{srv.url}/api/runs", json=body).json()["run_id"]
        deadline = time.monotonic() + 30
        while httpx.get(f"{srv.url}/api/runs/{first}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert httpx.get(f"{srv.url}/api/runs/{second}").json()["status"] == "queued"
        gate.set()
        for run_id in (first, second):
            while httpx.get(f"{srv.url}/api/runs/{run_id}").json()["status"] in ("queued", "running"):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert httpx.get(f"{srv.url}/api/runs/{run_id}").json()["status"] == "completed"
