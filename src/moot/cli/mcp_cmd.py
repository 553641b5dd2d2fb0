"""`moot mcp`: the teams as an MCP server, for Claude Desktop, Claude Code, VS Code or any MCP client.

Over stdio by default (the client starts ``moot mcp`` itself); ``--http`` serves streamable HTTP at
``/mcp`` with ``moot serve``'s rules: loopback by default, a token required on any other address,
Host names checked, bodies limited. Nothing is written to stdout but the protocol.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Optional

import typer

from moot.cli._options import mcp_option, mcp_servers
from moot.cli._output import stderr


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_command)


def mcp_command(
    http: bool = typer.Option(False, "--http", help="Serve streamable HTTP at /mcp instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="With --http: address to listen on (non-loopback needs --token)."),
    port: int = typer.Option(8766, "--port", help="With --http: port to listen on."),
    token: Optional[str] = typer.Option(None, "--token", help="With --http: bearer token required (default: $MOOT_SERVE_TOKEN)."),
    allow_host: list[str] = typer.Option([], "--allow-host", help="With --http: another Host name to answer to (repeatable)."),
    max_body: int = typer.Option(1024 * 1024, "--max-body", min=1024, help="With --http: largest request body in bytes (413 above)."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model string for every run (default: $MOOT_MODEL, else the embedded model)."),
    repo_root: list[Path] = typer.Option([], "--repo-root", help="Allow repositories, graph sources and deliberation data under this folder (repeatable)."),
    board: Optional[str] = typer.Option(None, "--board", help="A task board (folder or postgresql:// URL) for board_submit and board_status."),
    max_concurrent: int = typer.Option(2, "--max-concurrent", min=1, help="Team runs at the same time."),
    max_queued: int = typer.Option(16, "--max-queued", min=0, help="Runs that may wait for a slot."),
    mcp: Optional[list[str]] = mcp_option(),
    record_content: bool = typer.Option(False, "--record-content", help="Record prompts and responses of the runs (off by default)."),
) -> None:
    """Serve the teams over MCP (ask, learn, research, graph, deliberate, board, runs) on stdio or HTTP."""
    from moot.mcp import MCPSettings, build_server

    settings = MCPSettings(model=model, repo_roots=list(repo_root), board=board, max_concurrent=max_concurrent,
                           max_queued=max_queued, record_content=record_content, tool_servers=mcp_servers(mcp))
    server, state = build_server(settings)
    if not http:
        asyncio.run(_stdio(server, state))
        return
    from moot.cli.serve_cmd import _check_port
    from moot.server.security import check_bind

    token = token or os.environ.get("MOOT_SERVE_TOKEN") or None
    check_bind(host, token)
    _check_port(host, port)
    shown = f"[{host}]" if ":" in host else host
    stderr.print(f"moot mcp on http://{shown}:{port}/mcp{' · token required' if token else ''}")
    asyncio.run(_http(server, state, host=host, port=port, token=token, allow_host=allow_host, max_body=max_body))


async def _stdio(server: Any, state: Any) -> None:
    try:
        await server.run_stdio_async()
    finally:
        await state.shutdown()


async def _http(server: Any, state: Any, *, host: str, port: int, token: str | None, allow_host: list[str],
                max_body: int) -> None:
    import uvicorn

    from moot.mcp.http import create_http_app

    app = create_http_app(server, host=host, token=token, allowed_hosts=allow_host, max_body_bytes=max_body)
    runner = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    try:
        await runner.serve()
    finally:
        await state.shutdown()
