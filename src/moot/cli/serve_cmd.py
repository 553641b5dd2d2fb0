"""`moot serve`: the web page and the HTTP API (run history, every team, progress over SSE).

Bound to loopback by default. Any other address needs a bearer token (``--token`` or
``MOOT_SERVE_TOKEN``); the server refuses to start without one. Requests must name the bound
address (or a loopback name, or an ``--allow-host`` name) as Host, and only repositories under
a ``--repo-root`` or already indexed with ``moot index`` can be asked about. The model is built
on the first run that needs one: showing recorded runs loads no model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from moot.cli._output import stderr


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (non-loopback needs --token)."),
    port: int = typer.Option(8765, "--port", help="Port to listen on (1-65535)."),
    token: Optional[str] = typer.Option(None, "--token", help="Bearer token required on /api (default: $MOOT_SERVE_TOKEN)."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Model string for every run (default: $MOOT_MODEL, else the embedded model)."
    ),
    max_concurrent: int = typer.Option(2, "--max-concurrent", min=1, help="Team runs at the same time."),
    max_body: int = typer.Option(65536, "--max-body", min=1024, help="Largest request body in bytes (413 above)."),
    repo_root: list[Path] = typer.Option(
        [], "--repo-root", help="Allow repositories, graph sources and deliberation data under this folder (repeatable)."
    ),
    max_queued: int = typer.Option(16, "--max-queued", min=0, help="Runs that may wait for a slot (429 + Retry-After above)."),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Another Host name to answer to, e.g. a DNS name for the server (repeatable)."
    ),
    board: Optional[str] = typer.Option(None, "--board", help="A task board (folder or postgresql:// URL) to show and submit to."),
    record_content: bool = typer.Option(
        False, "--record-content", help="Record prompts and responses of the runs this server starts (off by default)."
    ),
    max_board_streams: int = typer.Option(
        8, "--max-board-streams", min=1, help="Board event streams open at once (429 above); one watcher serves them all."
    ),
) -> None:
    """Serve the web page (/) and the API (/api, described at /docs) for every team and the run history."""
    serve(host=host, port=port, token=token, model=model, max_concurrent=max_concurrent, max_body=max_body,
          repo_root=repo_root, max_queued=max_queued, allow_host=allow_host, board=board, record_content=record_content,
          max_board_streams=max_board_streams)


def serve(*, host: str, port: int, token: str | None, model: str | None, max_concurrent: int = 2, max_body: int = 65536,
          repo_root: list[Path] | None = None, max_queued: int = 16, allow_host: list[str] | None = None,
          board: str | None = None, record_content: bool = False, max_board_streams: int = 8,
          on_started: object = None) -> None:
    import uvicorn

    from moot.errors import MootError
    from moot.server import ServerSettings, create_app
    from moot.server.security import check_bind

    token = token or os.environ.get("MOOT_SERVE_TOKEN") or None
    check_bind(host, token)
    _check_port(host, port)
    settings = ServerSettings(model=model, token=token, max_body_bytes=max_body, max_concurrent=max_concurrent,
                              max_queued=max_queued, repo_roots=list(repo_root or []), host=host,
                              allowed_hosts=list(allow_host or []), board=board, record_content=record_content,
                              max_board_streams=max_board_streams)
    shown = f"[{host}]" if ":" in host else host
    stderr.print(f"moot serve on http://{shown}:{port}/ (API docs: /docs){' · token required' if token else ''}")
    config = uvicorn.Config(create_app(settings), host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    if on_started is not None:
        import threading

        def announce() -> None:
            import time

            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                on_started()  # type: ignore[operator]

        threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started and not server.should_exit:
        raise MootError(f"the server could not start on {host}:{port}", fix="choose another --port")


def _check_port(host: str, port: int) -> None:
    """A port in use is a one-line error naming the fix, not uvicorn's traceback."""
    import socket

    from moot.errors import MootError

    if not 1 <= port <= 65535:
        raise MootError(f"--port {port} is not a TCP port", fix="choose a port from 1 to 65535, e.g. --port 8765")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except (OSError, OverflowError) as exc:
            raise MootError(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}",
                            fix=f"choose another port (--port {port + 1}) or stop what uses it") from None
