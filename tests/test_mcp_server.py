"""`moot mcp` (issue #36) driven by the SDK's own client: over streamable HTTP on a real uvicorn
server on loopback (scripted models), and over stdio as the real command.

The model-backed end-to-end runs on the embedded model are in test_mcp_embedded.py.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from moot import config
from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from test_server_api import Server

FOREIGN_HOSTS = ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", ""]
"""The Host headers test_server_hardening.py refuses on `moot serve`: `moot mcp --http` refuses the same."""


class MCPHttp(Server):
    """`moot mcp --http` in a thread: the app create_http_app builds, served by uvicorn."""

    def __init__(self, model: Any, tmp_path: Path, *, token: str | None = None, **settings: Any) -> None:
        from moot.mcp import MCPSettings, build_server
        from moot.mcp.http import create_http_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.mcp, self.state = build_server(MCPSettings(model=model, store_path=tmp_path / "runs.db", **settings))
        app = create_http_app(self.mcp, token=token)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def client(self, token: str | None = None) -> Client:
        if token is None:
            return Client(self.url)
        return Client(streamable_http_client(self.url, http_client=httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))))


def make_kb(name: str) -> None:
    kb = KnowledgeBase.open(config.home() / "kb" / f"{name}.sqlite3")
    kb.add_facts([Fact("Norway has 9 gold medals", entity="Norway", attribute="gold medals", value="9",
                       source="Day 7 report", source_date=date(2026, 2, 13)),
                  Fact("Norway has 14 gold medals", entity="Norway", attribute="gold medals", value="14",
                       source="Day 10 report", source_date=date(2026, 2, 16))])
    kb.close()


class Gated:
    """The learning team's scripted roles; after ``free`` requests every request waits for the gate."""

    def __init__(self, free: int) -> None:
        from test_learning_ask import Router

        self.router, self.free, self.gate, self.count = Router(single="Norway has 14 gold medals."), free, threading.Event(), 0

    async def __call__(self, request: ModelRequest) -> Any:
        self.count += 1
        if self.count > self.free:
            while not self.gate.is_set():
                await asyncio.sleep(0.02)
        return await self.router(request)


def test_tools_resources_and_prompts_are_listed_with_typed_schemas(tmp_path: Path) -> None:
    make_kb("olympics-mcp-list")

    async def main() -> None:
        with MCPHttp(FunctionModel(lambda r: "ok"), tmp_path) as srv:
            async with srv.client() as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert set(tools) == {"ask", "learn", "research", "graph", "deliberate", "board_submit", "board_status",
                                      "runs", "run"}
                ask = tools["ask"].input_schema
                assert ask["required"] == ["question", "kb"] and ask["properties"]["mode"]["enum"] == ["auto", "single", "multi"]
                assert ask["$defs"]["BudgetArg"]["properties"]["preset"]["enum"] == ["quick", "standard", "deep"]
                assert "models" in ask["properties"] and "model" in tools["research"].input_schema["properties"]
                kbs = await client.read_resource("moot://kbs")
                assert '"olympics-mcp-list"' in kbs.contents[0].text
                one = await client.read_resource("moot://kbs/olympics-mcp-list")
                assert "Norway has 14 gold medals" in one.contents[0].text
                templates = {str(t.uri_template) for t in (await client.list_resource_templates()).resource_templates}
                assert templates == {"moot://kbs/{name}", "moot://runs/{run_id}"}
                prompts = {p.name for p in (await client.list_prompts()).prompts}
                assert {"ask_knowledge_base", "research_repository", "reason_graph", "deliberate", "board_task"} <= prompts
                prompt = await client.get_prompt("ask_knowledge_base", {"kb": "river", "question": "What is the budget?"})
                assert "`ask` tool" in prompt.messages[0].content.text and "'river'" in prompt.messages[0].content.text

    asyncio.run(main())


def test_ask_answers_with_progress_then_a_cancelled_call_keeps_its_partial_result(tmp_path: Path) -> None:
    make_kb("olympics-mcp")
    model = Gated(free=10_000)  # the first ask runs free; the second's model requests wait
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def main() -> None:
        with MCPHttp(FunctionModel(model), tmp_path) as srv:
            async with srv.client() as client:
                result = await client.call_tool("ask", {"question": "How many gold medals does Norway have?",
                                                        "kb": "olympics-mcp", "mode": "single"}, progress_callback=on_progress)
                assert not result.is_error, result.content
                answer = result.structured_content
                assert "14" in answer["answer"] and answer["facts_used"] and answer["status"] == "completed"
                assert progress[0].startswith("moot run ") and "moot://runs/" in progress[0]
                assert any("model call" in p for p in progress) and progress[-1] == "run completed"

                # the second call: cancelled mid-run, once a task has finished and a model request waits
                model.free, model.count = 0, 0
                progress.clear()
                call = asyncio.ensure_future(client.call_tool(
                    "ask", {"question": "How many gold medals does Norway have?", "kb": "olympics-mcp", "mode": "single"},
                    progress_callback=on_progress))
                deadline = time.monotonic() + 60
                while not (any(p.endswith(": completed") for p in progress) and model.count):
                    assert time.monotonic() < deadline and not call.done(), progress
                    await asyncio.sleep(0.05)
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
                run_id = re.match(r"moot run ([0-9a-f]+) ", progress[0]).group(1)  # type: ignore[union-attr]
                waited_until = time.monotonic() + 60  # the server records the cancellation once the notice arrives
                while True:
                    view = (await client.call_tool("run", {"run_id": run_id})).structured_content
                    if view["status"] == "cancelled" or time.monotonic() > waited_until:
                        break
                    await asyncio.sleep(0.05)
                assert view["status"] == "cancelled" and "cancel" in view["stop_reason"]
                done = [t for t in view["tasks"] if t["status"] == "completed"]
                assert done and done[0]["output"], view["tasks"]  # the partial result: what finished before
                model.gate.set()
        store = RunStore(tmp_path / "runs.db")
        assert store.get_run(view["run_id"]).status == "cancelled"
        store.close()

    asyncio.run(main())


def test_bad_input_is_one_tool_error_line_naming_the_fix(tmp_path: Path) -> None:
    async def main() -> None:
        with MCPHttp(FunctionModel(lambda r: "ok"), tmp_path) as srv:
            async with srv.client() as client:
                result = await client.call_tool("ask", {"question": "Why?", "kb": "no-such-kb"})
                assert result.is_error and "no knowledge base 'no-such-kb'" in result.content[0].text
                assert "learn something into it first" in result.content[0].text
                result = await client.call_tool("ask", {"question": "Why?", "kb": "../etc/passwd"})
                assert result.is_error and "not a knowledge-base name" in result.content[0].text
                result = await client.call_tool("research", {"question": "What?", "repo": "/etc"})
                assert result.is_error and "--repo-root" in result.content[0].text
                result = await client.call_tool("ask", {"question": "Why?", "kb": "x", "budget": {"preset": "huge"}})
                assert result.is_error  # the SDK checks the schema: an unknown preset never reaches moot
                result = await client.call_tool("board_status", {})
                assert result.is_error and "--board" in result.content[0].text
                result = await client.call_tool("run", {"run_id": "feedbeef"})
                assert result.is_error and "no run 'feedbeef'" in result.content[0].text

    asyncio.run(main())


def test_the_board_over_mcp(tmp_path: Path) -> None:
    from moot.teams.board import open_board

    board = open_board(str(tmp_path / "board"))
    board.init()
    board.close()

    async def main() -> None:
        with MCPHttp(FunctionModel(lambda r: "ok"), tmp_path, board=str(tmp_path / "board")) as srv:
            async with srv.client() as client:
                task = (await client.call_tool("board_submit", {"description": "Write the notes"})).structured_content
                assert task["status"] == "pending"
                columns = (await client.call_tool("board_status", {})).structured_content
                assert [t["description"] for t in columns["pending"]] == ["Write the notes"]
                board = await client.read_resource("moot://board")
                assert "Write the notes" in board.contents[0].text

    asyncio.run(main())


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_requests_for_another_host_name_are_refused(tmp_path: Path, host: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with MCPHttp(FunctionModel(lambda r: "ok"), tmp_path) as srv:
        r = httpx.post(srv.url, json=body, headers={"Host": host, "Accept": "application/json, text/event-stream"})
        assert r.status_code == 400 and "does not answer to Host" in r.json()["detail"]
        for ok in (f"localhost:{srv.port}", f"127.0.0.1:{srv.port}", "localhost"):
            r = httpx.post(srv.url, json=body, headers={"Host": ok, "Accept": "application/json, text/event-stream"})
            assert r.status_code != 400 or "does not answer to Host" not in r.text


def test_a_token_is_required_when_set(tmp_path: Path) -> None:
    async def main() -> None:
        with MCPHttp(FunctionModel(lambda r: "ok"), tmp_path, token="s3cret") as srv:
            r = httpx.post(srv.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
            r = httpx.post(srv.url, json={}, headers={"Authorization": "Bearer wrong"})
            assert r.status_code == 401
            async with srv.client(token="s3cret") as client:
                assert "ask" in {t.name for t in (await client.list_tools()).tools}

    asyncio.run(main())


def test_moot_mcp_over_stdio_with_the_sdk_client(tmp_path: Path) -> None:
    """The real command, started by the SDK's stdio client as Claude Desktop starts it."""
    env = {"MOOT_HOME": os.environ["MOOT_HOME"], "MOOT_RUNS_DB": str(tmp_path / "runs.db"),
           "MOOT_CONFIG": os.environ.get("MOOT_CONFIG", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    make_kb("olympics-stdio")
    store = RunStore(tmp_path / "runs.db")
    store.start_run("abcd1234" * 4, "an earlier run")
    store.close()

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "moot", "mcp"], env=env)
        async with Client(params) as client:
            assert "ask" in {t.name for t in (await client.list_tools()).tools}
            runs = (await client.call_tool("runs", {})).structured_content
            assert [r["name"] for r in runs["runs"]] == ["an earlier run"]
            kbs = await client.read_resource("moot://kbs")
            assert "olympics-stdio" in kbs.contents[0].text

    asyncio.run(main())


def test_moot_mcp_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    from test_cli_conventions import moot, one_error_line

    result = moot("mcp", "--http", "--host", "0.0.0.0", home=tmp_path / "home")
    assert result.returncode == 2 and "without a token" in one_error_line(result)


def test_learning_a_text_over_mcp_fills_a_new_knowledge_base(tmp_path: Path) -> None:
    from test_learning import fake_llm

    async def main() -> None:
        with MCPHttp(FunctionModel(fake_llm), tmp_path) as srv:
            async with srv.client() as client:
                result = await client.call_tool("learn", {
                    "text": "Norway has 14 gold medals. Italy has 5 gold medals.", "kb": "medals-mcp",
                    "source": "Day 10 report", "published": "2026-02-16", "budget": {"calls": 10}})
                assert not result.is_error, result.content
                assert result.structured_content["facts_stored"] == 2
                kb = await client.read_resource("moot://kbs/medals-mcp")
                assert "Italy has 5 gold medals." in kb.contents[0].text

    asyncio.run(main())
