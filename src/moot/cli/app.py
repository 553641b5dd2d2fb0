"""The `moot` command: the Typer app, its command groups, and one-line errors for user mistakes."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.markup import escape

from moot import __version__
from moot.cli import (
    ask_cmd,
    board_cmd,
    chat_cmd,
    deliberate_cmd,
    engine_cmd,
    eval_cmd,
    graph_cmd,
    index_cmd,
    kb_cmd,
    learn_cmd,
    models_cmd,
    research_cmd,
    runs_cmd,
    serve_cmd,
    setup_cmd,
    teach_cmd,
)
from moot.errors import MootError

app = typer.Typer(
    name="moot",
    help=(
        "Multi-agent language-model teams on one shared runtime.\n\n"
        "Runs offline on an embedded model by default; set MOOT_MODEL (or pass --model) to use "
        "openai:MODEL, anthropic:MODEL, ollama:MODEL or openai-compatible:URL#MODEL."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (
    setup_cmd, chat_cmd, learn_cmd, ask_cmd, teach_cmd, kb_cmd, board_cmd, index_cmd, research_cmd, graph_cmd,
    deliberate_cmd, serve_cmd, eval_cmd, models_cmd, engine_cmd, runs_cmd,
):
    module.register(app)


def _version(value: bool) -> None:
    if value:
        print(f"moot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Multi-agent language-model teams on one shared runtime."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the app and turns a :class:`MootError` into one plain line on stderr.

    Typer itself handles usage errors (exit 2 with the usage line), ``--help`` and ``Exit``.
    """
    try:
        app(args=argv)
    except MootError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(exc.one_line())}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        Console(stderr=True).print("[yellow]interrupted[/]")
        sys.exit(130)
