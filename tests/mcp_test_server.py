"""A small MCP server for the tests, written with the official SDK: run as a script over stdio,
or ``--http PORT`` over streamable HTTP.

Tools: ``add`` (answers at once), ``hang`` (never answers), ``big`` (a long text), ``fail``
(an error result) and ``crash`` (the process exits). ``--only add,hang`` keeps the two tools
the issue's test names.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(only: set[str] | None = None) -> MCPServer:
    app = MCPServer("moot-test-tools", log_level="WARNING")

    def keep(name: str) -> bool:
        return only is None or name in only

    if keep("add"):
        @app.tool()
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    if keep("hang"):
        @app.tool()
        async def hang(topic: str = "") -> str:
            """Look something up (this one never answers)."""
            await asyncio.sleep(3600)
            return "late"

    if keep("big"):
        @app.tool()
        def big(n: int = 20000) -> str:
            """A long text of n characters."""
            return "x" * n

    if keep("fail"):
        @app.tool()
        def fail(reason: str = "no such record") -> str:
            """Always fails (a ToolError: the SDK passes its text to the client)."""
            raise ToolError(reason)

    if keep("crash"):
        @app.tool()
        def crash() -> str:
            """The server process exits."""
            print("test server: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(3)

    return app


def wait_for_port(port: int, process: Any, timeout_s: float = 60) -> None:
    """Wait until a server process listens on ``port`` on loopback (fails the test if it exits first)."""
    import socket
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None, "the server did not start"
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    app = build(set(args.only.split(",")) if args.only else None)
    if args.http:
        app.run(transport="streamable-http", port=args.http)
    else:
        app.run()


if __name__ == "__main__":
    main()
