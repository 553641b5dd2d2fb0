"""`moot ui`: the web page on loopback, opened in the browser.

A shortcut for ``moot serve`` bound to 127.0.0.1 that opens ``http://127.0.0.1:PORT/`` once the
server listens. The page shows every run recorded on this machine; nothing is sent elsewhere.
"""

from __future__ import annotations

import os
from typing import Optional

import typer

from moot.cli._output import stderr


def register(app: typer.Typer) -> None:
    app.command("ui")(ui_command)


def ui_command(
    port: int = typer.Option(8765, "--port", help="Port to listen on (loopback only)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Only print the address; do not open a browser."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Model for runs started from the page's API (default: $MOOT_MODEL, else the embedded model)."
    ),
    board: Optional[str] = typer.Option(None, "--board", help="A task board (folder or postgresql:// URL) to show live."),
    token: Optional[str] = typer.Option(None, "--token", help="Require this bearer token (default: $MOOT_SERVE_TOKEN)."),
) -> None:
    """Open the web page of every recorded run (timelines, graphs, debates, the board) on 127.0.0.1."""
    from moot.cli.serve_cmd import serve

    token = token or os.environ.get("MOOT_SERVE_TOKEN") or None
    # the token travels in the fragment, which the browser never sends to a server
    url = f"http://127.0.0.1:{port}/" + (f"#/?token={token}" if token else "")

    def opened() -> None:
        stderr.print(f"the page is at http://127.0.0.1:{port}/ (Ctrl-C stops it)")
        if not no_browser:
            import webbrowser

            if not webbrowser.open(url):
                stderr.print("no browser could be opened here: open the address above yourself")

    serve(host="127.0.0.1", port=port, token=token, model=model, board=board, on_started=opened)
