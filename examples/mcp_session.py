"""A real MCP session with `moot mcp`, printed as a transcript (docs/mcp.md shows one).

It starts `moot mcp` over stdio with the official SDK's client, as Claude Desktop or VS Code
would, then lists the tools, reads the knowledge bases, asks a question with progress, starts
a second question and cancels it, and reads that run's partial result. Learn the bundled
articles first (README: `moot learn examples/learning/articles/*.md --kb river`), then:

    .venv/bin/python examples/mcp_session.py --kb river "What is the current budget of the Marrow River Cleanup?"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time

from mcp import Client, StdioServerParameters


def show(direction: str, text: str) -> None:
    print(f"{direction} {text}", flush=True)


async def session(kb: str, question: str) -> None:
    # The SDK starts a server with a minimal environment (PATH, HOME …): pass moot's settings on,
    # as a client's "env" entry does.
    env = {k: v for k, v in os.environ.items() if k.startswith("MOOT_")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "moot", "mcp"], env=env)
    started = time.perf_counter()

    def at() -> str:
        return f"[{time.perf_counter() - started:6.1f}s]"

    async with Client(params) as client:
        show("→", "initialize")
        info = client.server_info
        show("←", f"{at()} server {info.name if info else '?'} {info.version if info else ''}")
        tools = (await client.list_tools()).tools
        show("→", "tools/list")
        show("←", f"{at()} " + ", ".join(t.name for t in tools))
        show("→", "resources/read moot://kbs")
        kbs = json.loads((await client.read_resource("moot://kbs")).contents[0].text)
        show("←", f"{at()} " + "; ".join(f"{k['name']}: {k['current_facts']} current facts" for k in kbs))

        async def progress(value: float, total: float | None, message: str | None) -> None:
            show("  ←", f"{at()} progress {value:g}: {message}")

        args = {"question": question, "kb": kb, "mode": "auto", "budget": {"preset": "standard"}}
        show("→", f"tools/call ask {json.dumps(args)}")
        result = await client.call_tool("ask", args, progress_callback=progress)
        if result.is_error:
            raise SystemExit(f"ask failed: {result.content[0].text}")
        answer = result.structured_content or {}
        show("←", f"{at()} answer: {answer.get('answer')!r}")
        for fact in answer.get("facts_used", [])[:3]:
            show(" ", f"  fact #{fact['id']}: {fact['content']} ({fact.get('source')}, {fact.get('source_date')})")
        show(" ", f"  confidence {answer.get('confidence')} · agents {answer.get('sub_agents')} · usage {answer.get('usage')}")

        messages: list[str] = []

        async def remember(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")
            await progress(value, total, message)

        show("→", f"tools/call ask {json.dumps({**args, 'mode': 'multi'})}   (to be cancelled)")
        call = asyncio.ensure_future(client.call_tool("ask", {**args, "mode": "multi"}, progress_callback=remember))
        while not any(m.endswith(": started") and not m.startswith("memory") for m in messages) and not call.done():
            await asyncio.sleep(0.05)
        call.cancel()
        show("→", f"{at()} notifications/cancelled")
        try:
            await call
        except asyncio.CancelledError:
            pass
        run_id = re.match(r"moot run ([0-9a-f]+) ", messages[0]).group(1)  # type: ignore[union-attr]
        for _ in range(100):
            view = (await client.call_tool("run", {"run_id": run_id})).structured_content or {}
            if view.get("status") == "cancelled":
                break
            await asyncio.sleep(0.1)
        show("→", f"tools/call run {{\"run_id\": \"{run_id[:12]}…\"}}")
        show("←", f"{at()} status {view.get('status')}: {view.get('stop_reason')}")
        for task in view.get("tasks", []):
            output = json.dumps(task.get("output"), ensure_ascii=False)
            show(" ", f"  task {task['task_id']} ({task['agent']}): {task['status']}"
                      + (f" → {output[:110]}{'…' if len(output) > 110 else ''}" if task.get("output") else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--kb", default="river")
    args = parser.parse_args()
    asyncio.run(session(args.kb, args.question))


if __name__ == "__main__":
    main()
