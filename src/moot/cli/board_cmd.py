"""`moot board`: the task board (peer agents claiming tasks from a shared workspace) from the command line.

Every command takes a folder (the shared workspace) or ``--postgres postgresql://…``; the same
workers run on either.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from moot.cli._options import mcp_option
from moot.cli._output import print_json, stderr, stdout
from moot.cli._progress import announce, log_line
from moot.errors import MootError, UsageError
from moot.teams.board.backend import BoardBackend, open_board
from moot.teams.board.folder import read_regular
from moot.teams.board.protocol import result_text
from moot.teams.board.task import BoardTask, load_task_json, parse_task

if TYPE_CHECKING:
    from moot.teams.board.worker import WorkerEvent

board_app = typer.Typer(help="A shared task board: peer agents claim tasks atomically from a folder or PostgreSQL.",
                        no_args_is_help=True)

_STYLE = {"pending": "yellow", "active": "cyan", "completed": "green", "failed": "red"}
_DIR_HELP = "The board folder (or use --postgres)."
_DB_HELP = "A postgresql:// URL: the board in PostgreSQL instead of a folder."


def register(app: typer.Typer) -> None:
    app.add_typer(board_app, name="board")


def _open(directory: Optional[Path], db: Optional[str], old_db: Optional[str] = None) -> BoardBackend:
    if old_db is not None:
        raise UsageError("--db is now --postgres (a postgresql:// URL) on `moot board`", fix=f"use --postgres {old_db}")
    if db and directory:
        raise UsageError("give either a board folder or --postgres, not both", fix="drop one of them")
    if not db and not directory:
        raise UsageError("no board given", fix="pass a folder (moot board status DIR) or --postgres postgresql://…")
    if db and not db.startswith(("postgresql://", "postgres://")):
        raise UsageError(f"--postgres takes a postgresql:// URL, not {db!r}", fix="pass the board folder as DIR, or --postgres postgresql://USER@HOST/DB")
    return open_board(db or str(directory))


def _clock(ts: float | None) -> str:
    return "-" if ts is None else dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S")


def _clip(text: str, width: int = 48) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _task_dict(task: BoardTask) -> dict[str, Any]:
    return task.model_dump(mode="json")


@board_app.command("init")
def init(directory: Optional[Path] = typer.Argument(None, help=_DIR_HELP),
         db: Optional[str] = typer.Option(None, "--postgres", help=_DB_HELP),
    old_db: Optional[str] = typer.Option(None, "--db", hidden=True),
         as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Create a board: tasks/{pending,active,completed,failed}, agents/registry.json, context/, results/."""
    board = _open(directory, db, old_db)
    board.init()
    if as_json:
        print_json({"board": board.location, "agents": [s.name for s in board.agents()]})
    else:
        stdout.print(f"board ready at {board.location} — agents: {', '.join(s.name for s in board.agents())}")


@board_app.command("submit")
def submit(
    directory: Optional[Path] = typer.Argument(None, help=_DIR_HELP),
    description: Optional[str] = typer.Argument(None, help="What to do (or --file task.json)."),
    file: Optional[Path] = typer.Option(None, "--file", "-f", help="A task as JSON (the seed's format)."),
    task_type: str = typer.Option("general", "--type", "-t", help="The task type: goal (the breakdown agent plans it), "
                                  "an agent type (file, search …: that agent takes it), or general (ranked by fitness)."),
    requires: list[str] = typer.Option([], "--requires", help="A capability the agent needs (repeatable)."),
    parent: Optional[str] = typer.Option(None, "--parent", help="The parent task id."),
    task_id: Optional[str] = typer.Option(None, "--id", help="Choose the id (letters, digits, _ . -)."),
    priority: int = typer.Option(0, "--priority", help="Higher is claimed first."),
    budget: Optional[str] = typer.Option(
        None, "--budget", "-b",
        help="The goal's limits: quick (40 model calls), standard (80) or deep (160), and/or calls=N; "
             "tasks come from the preset (12, 25, 50). Default: the task's own context.budget, else standard."),
    db: Optional[str] = typer.Option(None, "--postgres", help=_DB_HELP),
    old_db: Optional[str] = typer.Option(None, "--db", hidden=True),
    as_json: bool = typer.Option(False, "--json", help="Print the task as one JSON object."),
) -> None:
    """Add a pending task."""
    if db and directory is not None and description is None:
        # with --postgres there is no folder: the one positional argument is the description
        directory, description = None, str(directory)
    if directory is not None and description is None and file is None and not directory.is_dir():
        # `moot board submit "do a thing"`: the words are a description, not a board folder
        raise UsageError(f"{str(directory)!r} is not a board folder: the folder comes first",
                         fix=f'moot board submit DIR "{directory}" (create a board with `moot board init DIR`)')
    board = _open(directory, db, old_db)
    if file is not None:
        try:
            data = load_task_json(read_regular(file), origin=str(file))
        except FileNotFoundError:
            raise MootError(f"cannot read {file}: no such file", fix="pass a JSON file with at least a description") from None
        except OSError as exc:
            raise MootError(f"cannot read {file}: {exc.strerror or exc}", fix="pass a JSON file with at least a description") from None
    elif description:
        data = {"description": description, "type": task_type, "requirements": requires, "priority": priority}
    else:
        raise MootError("nothing to submit", fix='give a description: moot board submit DIR "what to do"')
    if budget is not None:
        data.setdefault("context", {})["budget"] = _goal_budget(budget)
    if task_id:
        data["id"] = task_id
    if parent:
        parent_task = board.get(parent)
        data.update(parent_id=parent, depth=parent_task.depth + 1, root_id=parent_task.root_id or parent,
                    context={"original_goal": parent_task.original_goal, **data.get("context", {})})
    task = board.submit(parse_task(data, origin=str(file) if file else "the task"))
    if as_json:
        print_json(_task_dict(task))
    else:
        stdout.print(f"submitted {task.id} ({task.type}) to {board.location}")


def _goal_budget(text: str) -> dict[str, int]:
    """``--budget`` as a goal's ``context.budget``: the board's own standard size is 80 model calls
    and 25 tasks; quick halves and deep doubles it; ``calls=N`` sets the calls."""
    from moot.cli._options import parse_budget
    from moot.teams.board.goal_budget import DEFAULT_MAX_MODEL_CALLS, DEFAULT_MAX_TASKS

    choice = parse_budget(text)
    if set(choice.limits()) - {"max_calls"}:
        raise UsageError(f"a board goal's budget counts model calls and tasks only (got --budget {text})",
                         fix="use --budget quick, standard or deep, and/or calls=N")
    sized = choice.scaled({"max_calls": DEFAULT_MAX_MODEL_CALLS})
    tasks = choice.scaled({"max_calls": DEFAULT_MAX_TASKS})["max_calls"] if choice.preset != "standard" else DEFAULT_MAX_TASKS
    return {"max_model_calls": int(sized["max_calls"]), "max_tasks": int(tasks)}


def _status_payload(board: BoardBackend, limit: int) -> dict[str, Any]:
    stats = board.stats()
    tasks = board.list()
    tasks.sort(key=lambda t: t.finished_at or t.claimed_at or t.created_at, reverse=True)
    return {"board": board.location, "counts": stats.model_dump(), "tasks": [_task_dict(t) for t in tasks[:limit]]}


def _render(board: BoardBackend, limit: int) -> list[Any]:
    payload = _status_payload(board, limit)
    counts = payload["counts"]
    header = Text(f"board {board.location}  ")
    for name in ("pending", "active", "completed", "failed"):
        header.append(f"{name} {counts[name]}  ", style=_STYLE[name])
    table = Table(title_justify="left", show_edge=False)
    for column in ("id", "type", "status", "worker", "attempts", "updated", "description / result"):
        table.add_column(column, no_wrap=column in ("id", "status"))
    for t in payload["tasks"]:
        # a finished task shows its answer (a goal's final answer, an agent's output), not its JSON
        detail = t["error"] if t["status"] == "failed" else (result_text(t["result"]) if t["status"] == "completed" else t["description"])
        table.add_row(t["id"], t["type"], Text(t["status"], style=_STYLE[t["status"]]), t["claimed_by"] or "-",
                      str(t["attempts"]), _clock(t["finished_at"] or t["claimed_at"] or t["created_at"]),
                      _clip(json.dumps(detail) if not isinstance(detail, str) else detail))
    return [header, table]


@board_app.command("status")
def status(directory: Optional[Path] = typer.Argument(None, help=_DIR_HELP),
           db: Optional[str] = typer.Option(None, "--postgres", help=_DB_HELP),
    old_db: Optional[str] = typer.Option(None, "--db", hidden=True),
           limit: int = typer.Option(20, "--limit", "-n", help="How many recent tasks to show."),
           as_json: bool = typer.Option(False, "--json", help="Print counts and tasks as one JSON object.")) -> None:
    """Counts by status and the most recent tasks."""
    board = _open(directory, db, old_db)
    if as_json:
        print_json(_status_payload(board, limit))
        return
    for part in _render(board, limit):
        stdout.print(part)


@board_app.command("watch")
def watch(directory: Optional[Path] = typer.Argument(None, help=_DIR_HELP),
          db: Optional[str] = typer.Option(None, "--postgres", help=_DB_HELP),
    old_db: Optional[str] = typer.Option(None, "--db", hidden=True),
          limit: int = typer.Option(20, "--limit", "-n", help="How many recent tasks to show."),
          every: float = typer.Option(1.0, "--every", help="Seconds between refreshes."),
          once: bool = typer.Option(False, "--once", help="Print one frame and exit.")) -> None:
    """A live table of the board, refreshed until Ctrl-C."""
    from rich.console import Group

    board = _open(directory, db, old_db)
    if once:
        stdout.print(Group(*_render(board, limit)))
        return
    try:
        with Live(Group(*_render(board, limit)), console=stdout, refresh_per_second=4) as live:
            while True:
                time.sleep(every)
                live.update(Group(*_render(board, limit)))
    except KeyboardInterrupt:
        pass


def _build_agent(agent_type: str, model: Optional[list[str]], board: BoardBackend, mcp: Optional[list[str]] = None) -> Any:
    from moot.cli._options import mcp_servers, parse_models

    choice = parse_models(model)
    if agent_type == "echo":
        from moot.teams.board.echo import EchoAgent

        if choice.roles:
            raise UsageError("the echo agent calls no model", fix="drop --model ROLE=MODEL")
        if mcp:
            raise UsageError("the echo agent uses no tools", fix="drop --mcp")
        return EchoAgent()
    tools = mcp_servers(mcp)
    try:
        from moot.teams.board.agents import build_agent
    except ImportError:
        raise MootError(f"unknown agent type {agent_type!r}", fix="use --agent echo") from None
    known = {s.name: s for s in board.agents()}
    if agent_type not in known:
        raise MootError(f"unknown agent type {agent_type!r}",
                        fix=f"choose one of: {', '.join(sorted(known)) or 'echo'}")
    # by type name, so that built-ins get their own class (breakdown's process splits goals);
    # a spec would build a plain executor
    return build_agent(agent_type, board=board, model=choice.default, **({"models": choice.roles} if choice.roles else {}),
                       **({"tools": tools} if tools else {}))


@board_app.command("worker")
def worker(directory: Optional[Path] = typer.Argument(None, help=_DIR_HELP),
           agent: str = typer.Option(..., "--agent", help="The agent type (echo is built in)."),
           db: Optional[str] = typer.Option(None, "--postgres", help=_DB_HELP),
    old_db: Optional[str] = typer.Option(None, "--db", hidden=True),
           concurrency: int = typer.Option(1, "--concurrency", "-c", min=1, help="Tasks worked on at once."),
           lease: float = typer.Option(30.0, "--lease", min=0.5, help="Lease seconds (heartbeat every third)."),
           max_tasks: Optional[int] = typer.Option(None, "--max-tasks", min=1, help="Stop after claiming N tasks."),
           until_idle: bool = typer.Option(False, "--until-idle", help="Stop when no work can come this worker's way (see --idle-grace)."),
           idle_grace: float = typer.Option(120.0, "--idle-grace", min=0.0,
                                            help="With --until-idle: seconds the board must stand still, with only "
                                                 "tasks for other agents pending, before the worker stops."),
           model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="The model for model-driven agents; "
                                                     "ROLE=MODEL gives one role its own model (repeatable)."),
           worker_id: Optional[str] = typer.Option(None, "--worker-id", help="Name this worker (default: type-host-pid)."),
           mcp: Optional[list[str]] = mcp_option(help="An MCP tool server for the agent's executor: NAME=COMMAND "
                                                 "or NAME=URL (repeatable); added to [mcp.servers] of moot.toml."),
           as_json: bool = typer.Option(False, "--json", help="Print what the worker did as one JSON object.")) -> None:
    """Run one agent on the board: claim, work, heartbeat, complete. Ctrl-C stops gracefully.

    Progress goes to stderr: a line per task claimed, finished, failed or split (timestamped when
    stderr is not a terminal), and on a terminal a spinner naming the tasks in hand."""
    announce("board worker", enabled=not as_json)  # before the agent's team is imported
    from moot.teams.board.worker import Worker

    board = _open(directory, db, old_db)
    instance = _build_agent(agent, model, board, mcp)
    display = _WorkerDisplay(enabled=not as_json)
    runner = Worker(board, instance, worker_id=worker_id, lease_s=lease, concurrency=concurrency,
                    max_tasks=max_tasks, stop_when_idle=until_idle, idle_grace_s=idle_grace, on_event=display.on_event)
    if not as_json:
        stdout.print(f"worker {runner.worker_id} ({agent}) on {board.location} — Ctrl-C to stop")
    started = time.monotonic()
    with display:
        stats = asyncio.run(runner.run(handle_signals=True))
    seconds = time.monotonic() - started
    summary = {"worker_id": stats.worker_id, "agent": agent, "claimed": stats.claimed, "completed": stats.completed,
               "failed": stats.failed, "parked": stats.parked, "lost": stats.lost, "released": stats.released,
               "recovered": stats.recovered, "parents_settled": stats.parents_settled,
               "stop_reason": stats.stop_reason, "seconds": round(seconds, 3)}
    usage = getattr(instance, "usage", None)
    if usage is not None:
        from moot.cli._output import usage_dict

        summary["usage"] = usage_dict(usage)
    if as_json:
        print_json(summary)
    else:
        stdout.print(f"{stats.completed} completed, {stats.failed} failed, {stats.lost} lost, "
                     f"{stats.recovered} recovered · stopped: {stats.stop_reason} · {seconds:.1f}s")


class _WorkerDisplay:
    """``moot board worker``'s progress: one line per thing the worker did, timestamped on a pipe
    (:func:`log_line`), above a spinner naming the tasks in hand on a terminal."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.plain = not stderr.is_terminal
        self.in_hand: dict[str, str] = {}
        self._status: Any = None

    def __enter__(self) -> _WorkerDisplay:
        if self.enabled and not self.plain:
            self._status = stderr.status("[dim]waiting for work…[/]")
            self._status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)
            self._status = None

    def on_event(self, event: WorkerEvent) -> None:
        if event.kind == "claimed":
            self.in_hand[event.task_id] = event.task_type
        elif event.kind not in ("recovered", "settled"):
            self.in_hand.pop(event.task_id, None)
        if not self.enabled:
            return
        text = worker_line(event)
        if self.plain:
            log_line(f"board worker: {text}")
            return
        stderr.print(f"[dim]{_clock(time.time())}[/] {escape(text)}", soft_wrap=True)
        if self._status is not None:
            held = ", ".join(f"{tid} ({kind})" for tid, kind in self.in_hand.items())
            self._status.update(f"[dim]{'working on ' + escape(held) if held else 'waiting for work'}…[/]")


def worker_line(event: WorkerEvent) -> str:
    """One worker event in words: ``t-1a2b (research): completed in 12.3s — Compare …``."""
    head = f"{event.task_id} ({event.task_type})" if event.task_id else "board"
    took = f" in {event.seconds:.1f}s" if event.seconds is not None else ""
    words = {"claimed": "claimed", "completed": "completed", "failed": "failed", "retry": "failed, back to pending",
             "parked": "split", "released": "released (stopping)", "lost": "lost its lease (another worker redoes it)",
             "recovered": "recovered", "settled": "settled"}.get(event.kind, event.kind)
    detail = f": {event.detail}" if event.detail else ""
    title = f" — {event.title}" if event.kind in ("claimed", "settled") and event.title else ""
    return f"{head}: {words}{took}{detail}{title}"


__all__ = ["board_app", "register", "worker_line"]
