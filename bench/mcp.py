"""MCP tool-call overhead: one call through moot's runtime tool path against a direct SDK call.

Both sides call the same tool (``add``) on the same MCP server process (tests/mcp_test_server.py,
written with the official SDK, over stdio), on one event loop:

- **direct**: ``mcp.Client.call_tool("add", …)`` on an open session — what a program using the
  SDK alone pays;
- **moot**: the tool as an agent calls it: ``run_tool_call`` on the converted
  :class:`~moot.runtime.mcp.MCPTool` (arguments checked against the server's JSON schema, the
  call's timeout, the result rendered and size-capped), then the ``tool_call`` event on an
  :class:`~moot.runtime.EventBus` (what the run store, ``moot runs show`` and the web page read).

Calls of the two sides alternate in small blocks, so background load hits both alike; each side
reports the median per-call time over its blocks. The goal (issue #36): moot / direct ≤ 1.2.

Run from the repository root::

    python bench/mcp.py --quick      # under a minute
    python bench/mcp.py              # the full run, for docs/benchmarks.md

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder comes first on sys.path and its name would hide the SDK's package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
SERVER = [sys.executable, str(ROOT / "tests" / "mcp_test_server.py"), "--only", "add"]


async def measure(blocks: int, per_block: int) -> dict[str, float | int | str]:
    from mcp import Client, StdioServerParameters

    from moot.models.base import ToolCall
    from moot.runtime import EventBus, EventType
    from moot.runtime.mcp import MCPToolServer
    from moot.runtime.tools import run_tool_call

    server = MCPToolServer("bench", command=SERVER)
    tools = {t.name: t for t in await server.tools_for_run("bench")}
    bus = EventBus()
    seen: list[object] = []
    bus.subscribe(seen.append)
    direct_times: list[float] = []
    moot_times: list[float] = []
    async with Client(StdioServerParameters(command=SERVER[0], args=SERVER[1:])) as client:
        for warm in range(20):  # both sessions warm before anything is timed
            await client.call_tool("add", {"a": warm, "b": 1})
            await run_tool_call(tools, ToolCall(id="w", name="add", arguments={"a": warm, "b": 1}))
        for block in range(blocks):
            for side in (("direct", "moot") if block % 2 == 0 else ("moot", "direct")):
                started = time.perf_counter()
                for i in range(per_block):
                    if side == "direct":
                        result = await client.call_tool("add", {"a": i, "b": 2})
                        assert result.content[0].text == str(i + 2)
                    else:
                        outcome = await run_tool_call(tools, ToolCall(id=f"c{i}", name="add", arguments={"a": i, "b": 2}),
                                                      timeout_s=300)
                        assert outcome.message.content == str(i + 2), outcome.message.content
                        bus.emit(EventType.TOOL_CALL, run_id="bench", agent="bench", tool="add",
                                 arguments='{"a": 1, "b": 2}', result=outcome.message.content, error=None, ok=True,
                                 seconds=round(outcome.seconds, 4), server="mcp:bench")
                per_call = (time.perf_counter() - started) / per_block
                (direct_times if side == "direct" else moot_times).append(per_call)
    await bus.flush()
    await server.aclose()
    direct = statistics.median(direct_times)
    moot = statistics.median(moot_times)
    return {
        "direct_sdk_ms_per_call": round(direct * 1000, 3),
        "moot_ms_per_call": round(moot * 1000, 3),
        "overhead_ratio": round(moot / direct, 3),
        "moot_extra_ms_per_call": round((moot - direct) * 1000, 3),
        "calls_per_side": blocks * per_block,
        "events_emitted": len(seen),
        "transport": "stdio",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (under a minute)")
    args = parser.parse_args(argv)
    blocks, per_block = (10, 20) if args.quick else (40, 50)
    started = time.perf_counter()
    result = asyncio.run(measure(blocks, per_block))
    result.update({"goal_ratio_max": 1.2, "meets_goal": result["overhead_ratio"] <= 1.2, "quick": args.quick,
                   "seconds": round(time.perf_counter() - started, 1), "python": platform.python_version(),
                   "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores"})
    print(f"direct SDK call {result['direct_sdk_ms_per_call']} ms · through moot {result['moot_ms_per_call']} ms · "
          f"ratio {result['overhead_ratio']} (goal ≤ 1.2)", file=sys.stderr)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
