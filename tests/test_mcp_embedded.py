"""`moot mcp` end to end on the embedded model (issue #36's measured goal), driven by the SDK's own
client over stdio and over streamable HTTP: list the tools, ask a small knowledge base, receive
progress, cancel a second call mid-run, and read its partial result with the `run` tool."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from moot.memory import Fact, KnowledgeBase
from mcp_test_server import wait_for_port

pytestmark = pytest.mark.embedded

QUESTION = "What is the budget of the Marrow River Cleanup?"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_BLOCK") and k != "MOOT_MODEL"}
    env["MOOT_HOME"] = str(home)
    return env


def _kb(home: Path) -> None:
    kb = KnowledgeBase.open(home / "kb" / "river.sqlite3")
    kb.add_facts([
        Fact("The Marrow River Cleanup has a budget of 2.4 million euros.", entity="Marrow River Cleanup",
             attribute="budget", value="2.4 million euros", source="Council notice", source_date=date(2026, 3, 2)),
        Fact("The Marrow River Cleanup has removed 310 tonnes of waste.", entity="Marrow River Cleanup",
             attribute="waste removed", value="310 tonnes", source="Progress report", source_date=date(2026, 5, 11)),
    ])
    kb.close()


async def _scenario(client: Client) -> dict[str, Any]:
    assert {"ask", "learn", "runs", "run"} <= {t.name for t in (await client.list_tools()).tools}
    progress: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    args = {"question": QUESTION, "kb": "river", "mode": "single", "budget": {"preset": "standard"}}
    result = await client.call_tool("ask", args, progress_callback=on_progress)
    assert not result.is_error, result.content
    answer = result.structured_content
    assert "2.4" in answer["answer"], answer["answer"]
    assert progress[0].startswith("moot run ") and any("model call" in p for p in progress)

    progress.clear()
    call = asyncio.ensure_future(client.call_tool("ask", args, progress_callback=on_progress))
    deadline = time.monotonic() + 120
    while not any(p.endswith(": started") and not p.startswith("memory") for p in progress):
        assert time.monotonic() < deadline and not call.done(), progress
        await asyncio.sleep(0.05)
    call.cancel()  # mid-run: the memory step is done, an agent's model call is under way
    with pytest.raises(asyncio.CancelledError):
        await call
    run_id = re.match(r"moot run ([0-9a-f]+) ", progress[0]).group(1)  # type: ignore[union-attr]
    for _ in range(400):
        view = (await client.call_tool("run", {"run_id": run_id})).structured_content
        if view["status"] == "cancelled":
            break
        await asyncio.sleep(0.05)
    assert view["status"] == "cancelled"
    assert [t for t in view["tasks"] if t["status"] == "completed" and t["output"]], view["tasks"]
    return view


def test_moot_mcp_over_stdio_on_the_embedded_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _kb(home)

    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "moot", "mcp"], env=_env(home))
        async with Client(params) as client:
            await _scenario(client)

    asyncio.run(main())


def test_moot_mcp_over_http_on_the_embedded_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _kb(home)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moot", "mcp", "--http", "--port", str(port)], env=_env(home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await _scenario(client)

        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(20)
