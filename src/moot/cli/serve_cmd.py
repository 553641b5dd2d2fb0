"""`moot serve`: the HTTP API (code research queries, background runs, progress over SSE).

Bound to loopback by default. Any other address needs a bearer token (``--token`` or
``MOOT_SERVE_TOKEN``); the server refuses to start without one. Requests must name the bound
address (or a loopback name, or an ``--allow-host`` name) as Host, and only repositories under
a ``--repo-root`` or already indexed with ``moot index`` can be asked about.
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
    port: int = typer.Option(8765, "--port", help="Port to listen on."),
    token: Optional[str] = typer.Option(None, "--token", help="Bearer token required on /api (default: $MOOT_SERVE_TOKEN)."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Model string for every run (default: $MOOT_MODEL, else the embedded model)."
    ),
    max_concurrent: int = typer.Option(2, "--max-concurrent", min=1, help="Research runs at the same time."),
    max_body: int = typer.Option(65536, "--max-body", min=1024, help="Largest request body in bytes (413 above)."),
    repo_root: list[Path] = typer.Option(
        [], "--repo-root", help="Allow repositories under this folder (repeatable); otherwise only ones indexed with `moot index`."
    ),
    max_queued: int = typer.Option(16, "--max-queued", min=0, help="Runs that may wait for a slot (429 + Retry-After above)."),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Another Host name to answer to, e.g. a DNS name for the server (repeatable)."
    ),
) -> None:
    """Serve the research API: POST /api/query, POST /api/runs, GET /api/runs/{id}/events (SSE), /docs."""
    import uvicorn

    from moot.server import ServerSettings, create_app
    from moot.server.security import check_bind

    token = token or os.environ.get("MOOT_SERVE_TOKEN") or None
    check_bind(host, token)
    settings = ServerSettings(model=model, token=token, max_body_bytes=max_body, max_concurrent=max_concurrent,
                              max_queued=max_queued, repo_roots=list(repo_root), host=host, allowed_hosts=list(allow_host))
    stderr.print(f"moot serve on http://{host}:{port} (docs: /docs){' · token required' if token else ''}")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
