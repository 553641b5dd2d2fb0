"""The `moot` command: the Typer app, its command groups, and one-line errors for user mistakes."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from moot import __version__
from moot.cli import (
    ask_cmd,
    board_cmd,
    chat_cmd,
    config_cmd,
    deliberate_cmd,
    engine_cmd,
    eval_cmd,
    graph_cmd,
    index_cmd,
    kb_cmd,
    learn_cmd,
    mcp_cmd,
    models_cmd,
    research_cmd,
    runs_cmd,
    serve_cmd,
    setup_cmd,
    teach_cmd,
    ui_cmd,
)
from moot.errors import EXIT_FAILURE, EXIT_USAGE, MootError

def _no_type_after_flags() -> None:
    """A flag takes no value, so its help shows none: without this the help prints ``--json <bool>``
    and a user types ``--json true``."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag or self.count else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_no_type_after_flags()

app = typer.Typer(
    name="moot",
    help=(
        "Multi-agent language-model teams on one shared runtime.\n\n"
        "Runs offline on an embedded model by default; set MOOT_MODEL (or pass --model, or write "
        "model = \"…\" in moot.toml) to use openai:MODEL, anthropic:MODEL, ollama:MODEL or "
        "openai-compatible:URL#MODEL.\n\n"
        "Exit status: 0 success, 1 the work failed or stopped short, 2 a usage mistake. "
        "--json prints one JSON object on stdout; files go to --out."
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for module in (
    setup_cmd, config_cmd, chat_cmd, learn_cmd, ask_cmd, teach_cmd, kb_cmd, board_cmd, index_cmd, research_cmd,
    graph_cmd, deliberate_cmd, serve_cmd, mcp_cmd, ui_cmd, eval_cmd, models_cmd, engine_cmd, runs_cmd,
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
    """Entry point: runs the app and exits with one status a script can rely on.

    ``0`` success, ``1`` a runtime failure, ``2`` a usage mistake (see :mod:`moot.errors`).
    A :class:`MootError` becomes one plain line on stderr (and, with ``--json``, one JSON object
    ``{"error", "fix", "exit_code"}`` on stdout); a usage mistake that Typer finds keeps its usage
    text. Settings from ``moot.toml`` are applied first, the environment winning.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    wants_json = "--json" in args
    try:
        _run(args, wants_json)
    finally:
        _flush_spans()


_close_export: list[Any] = []


def _flush_spans() -> None:
    """Send the spans still buffered before the process exits (MOOT_OTEL=1)."""
    while _close_export:
        try:
            _close_export.pop()()
        except Exception:  # an unreachable collector must not turn a finished command into a failure
            pass


def _run(args: list[str], wants_json: bool) -> None:
    try:
        from moot import config

        config.apply_file_settings()
        if os.environ.get("MOOT_OTEL", "").strip():  # the runtime is not imported for nothing
            from moot.runtime.otel import configure_otlp_export

            close = configure_otlp_export()
            if close is not None:
                _close_export.append(close)
        _refuse_old_options(args)
        args = spread_multi_values(args)
        code = app(args=args, prog_name="moot", standalone_mode=False)
    except MootError as exc:
        _fail(exc.one_line(), exc.message, exc.fix, exc.exit_code, wants_json)
    except _CLICK_ERRORS as exc:
        if wants_json:
            _json_error(exc.format_message(), "see `moot COMMAND --help`", exc.exit_code)
        _show_click_error(exc)
        sys.exit(exc.exit_code)
    except _ABORTS:
        Console(stderr=True).print("[yellow]interrupted[/]")
        sys.exit(130)
    except KeyboardInterrupt:
        Console(stderr=True).print("[yellow]interrupted[/]")
        sys.exit(130)
    if code == 130:
        from moot.cli import _progress

        if not _progress.interrupt_reported:  # a reporter already said what the run kept
            Console(stderr=True).print("[yellow]interrupted[/]")
    sys.exit(code if isinstance(code, int) else 0)


def _exception_types(*names: str) -> tuple[type[BaseException], ...]:
    """Typer vendors its own click; plain click may be there too (uvicorn). Catch both."""
    import importlib

    found: list[type[BaseException]] = []
    for dotted in names:
        module, _, attr = dotted.rpartition(".")
        try:
            found.append(getattr(importlib.import_module(module), attr))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


_CLICK_ERRORS = _exception_types("typer._click.exceptions.ClickException", "click.exceptions.ClickException")
_ABORTS = _exception_types("typer.Abort", "click.exceptions.Abort")


def _fail(line: str, message: str, fix: str, code: int, wants_json: bool) -> None:
    if wants_json:
        _json_error(message, fix, code)
    Console(stderr=True).print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _json_error(message: str, fix: str, code: int) -> None:
    from moot.cli._output import print_json

    print_json({"error": " ".join(message.split()), "fix": fix, "exit_code": code})


def _show_click_error(exc: Any) -> None:
    try:
        from typer import rich_utils

        rich_utils.rich_format_error(exc)
    except Exception:  # the plain form, if typer's rich helper changes
        exc.show()


# Options whose meaning changed: the old use gets one line naming the new option.
_OLD_JSON_FILE = ("progressive", "research", "graph", "deliberation")


# Options that take several values after one flag (`--source a.md b.md`), by command.
MULTI_VALUE_OPTIONS: dict[str, tuple[str, ...]] = {"graph": ("--source", "-s")}
_FILE_NAME = re.compile(r"[^\s=]+\.[A-Za-z0-9]{1,8}")


def spread_multi_values(args: list[str]) -> list[str]:
    """``--source a.md b.md`` → ``--source a.md --source b.md`` for the options of
    :data:`MULTI_VALUE_OPTIONS`, as the README writes it. A value after the first is taken when it
    is a path that exists or has the form of a file name; anything else (the question) stays put."""
    if not args or args[0] not in MULTI_VALUE_OPTIONS:
        return args
    flags = MULTI_VALUE_OPTIONS[args[0]]
    out: list[str] = []
    i = 0
    while i < len(args):
        out.append(args[i])
        if args[i] in flags and i + 1 < len(args):
            out.append(args[i + 1])
            i += 2
            while i < len(args) and not args[i].startswith("-") and _looks_like_a_file(args[i]):
                out += [flags[0], args[i]]
                i += 1
            continue
        i += 1
    return out


def _looks_like_a_file(value: str) -> bool:
    from pathlib import Path

    return Path(value).exists() or bool(_FILE_NAME.fullmatch(value))


def _refuse_old_options(args: list[str]) -> None:
    from moot.errors import UsageError

    if "--json" in args:
        at = args.index("--json")
        following = args[at + 1].lower() if at + 1 < len(args) else ""
        if following in ("true", "false", "yes", "no", "1", "0"):
            raise UsageError(f"--json is a flag and takes no value (got {args[at + 1]!r})",
                             fix="write --json alone (leave it out for text)")

    if len(args) >= 2 and args[0] == "eval" and args[1] in _OLD_JSON_FILE and "--json" in args:
        at = args.index("--json")
        following = args[at + 1] if at + 1 < len(args) else ""
        if following and not following.startswith("-"):
            raise UsageError(f"--json takes no file any more (got {following!r})",
                             fix=f"write the results file with --out {following} (add --json to print the summary)")


__all__ = ["EXIT_FAILURE", "EXIT_USAGE", "app", "main"]
