"""`moot engine start|status|stop`: the shared local engine that every moot process uses."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Optional

import typer
from rich.table import Table

from moot.cli._output import print_json, stderr, stdout
from moot.cli._output import print_table
from moot.errors import ConfigError

engine_app = typer.Typer(
    help=(
        "The shared local engine: one process per model file serves every moot command, board "
        "worker and server on this machine. It starts by itself on first use and stops when idle."
    ),
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(engine_app, name="engine")


def _local_model(spec: str) -> Any:
    from moot.models.local import MODEL_VARIANTS, load_local

    if not (spec in MODEL_VARIANTS or spec.startswith("local:")):
        raise ConfigError(
            f"{spec!r} is not a local model; only local models run in a moot engine",
            fix="use --model local, local-1.5b or local:/path/to/model.gguf",
        )
    return load_local(spec)


@engine_app.command("start")
def start(
    model: str = typer.Option("local", "--model", "-m", help="local, local-1.5b or local:/path/to/model.gguf."),
    idle: Optional[float] = typer.Option(
        None, "--idle", help="Seconds with no request before the engine exits (0: never). Default 300 or MOOT_ENGINE_IDLE_S."
    ),
    slots: Optional[int] = typer.Option(None, "--slots", min=1, help="Requests decoded in parallel (default 4)."),
    context: Optional[int] = typer.Option(None, "--context", min=512, help="KV-cache tokens shared by the slots (default 8192)."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="CPU threads (default: the cores, at most 8)."),
    foreground: bool = typer.Option(
        False, "--foreground", help="Serve from this process until Ctrl-C (for a service manager) instead of in the background."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the engine's status as one JSON object."),
) -> None:
    """Start the shared engine for a model now (it otherwise starts on the first request)."""
    from moot.models import engine_client
    from moot.models.engine_server import EngineServer

    local = _local_model(model)
    settings = local.settings
    settings = replace(
        settings,
        slots=slots or settings.slots,
        context=context or settings.context,
        threads=threads or settings.threads,
    )
    idle_s = engine_client.idle_timeout() if idle is None else idle
    path = local._resolve_path()  # assembles bundled weights on first use, naming the fix if missing
    paths = engine_client.EnginePaths.for_model(path, identity=local.engine_identity())
    running = engine_client.status(paths)
    if foreground:
        if running is not None:
            raise ConfigError(f"an engine for {model} already runs (pid {running['pid']})", fix="run: moot engine stop")
        stderr.print(f"serving {model} on {paths.socket} (Ctrl-C stops it)")
        server = EngineServer(
            name=model, model_path=path, settings=settings, socket_path=paths.socket, state_path=paths.state,
            pid_lock_path=paths.pid_lock, idle_s=idle_s, identity=local.engine_identity(),
        )  # fmt: skip
        raise typer.Exit(server.run())
    if running is None:
        started = time.perf_counter()
        engine_client.ensure_engine(path, name=model, settings=settings, idle_s=idle_s, paths=paths,
                                    identity=local.engine_identity())
        running = engine_client.status(paths) or {}
        note = f"started in {time.perf_counter() - started:.1f}s"
    else:
        note = "already running"
        wanted = settings.as_dict()
        differs = {k: v for k, v in running.get("settings", {}).items() if wanted.get(k) != v}
        if slots or context or threads:
            if differs:
                stderr.print(
                    f"[yellow]note:[/] the running engine keeps its settings {differs}; "
                    "run `moot engine stop` first to change them"
                )
    if as_json:
        print_json({"engine": running, "note": note})
        return
    stdout.print(f"{model}: {note} (pid {running.get('pid')}, {paths.socket})")


@engine_app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """Which engines run, the model each serves, its slots, clients and uptime."""
    from moot.models import engine_client

    directory = engine_client.engine_dir(create=False)
    engines = engine_client.running_engines(directory)
    if as_json:
        print_json({"mode": engine_client.engine_mode(), "directory": str(directory), "engines": engines})
        return
    if not engines:
        stdout.print(f"no engine is running (mode {engine_client.engine_mode()}; directory {directory})")
        return
    table = Table(title="engines", title_justify="left")
    for column in ("model", "pid", "up", "slots", "context", "busy", "requests", "cached prompt", "clients"):
        table.add_column(column, no_wrap=True)
    for e in engines:
        s = e.get("settings", {})
        prompt, cached = e.get("prompt_tokens", 0), e.get("cached_prompt_tokens", 0)
        clients = str(len(e.get("clients", ())))
        table.add_row(
            str(e.get("name")),
            str(e.get("pid")),
            _duration(e.get("uptime_s", 0)),
            str(s.get("slots")),
            str(s.get("context")),
            str(e.get("active")),
            str(e.get("requests")),
            f"{cached}/{prompt}" + (f" ({100 * cached / prompt:.0f}%)" if prompt else ""),
            clients,
        )
    print_table(table)
    for e in engines:
        for c in e.get("clients", ()):
            busy = f", {c['active']} in flight" if c.get("active") else ""
            n = c["requests"]
            stdout.print(f"  {e.get('name')} client pid {c['pid']}: {c['command']} ({n} request{'s' if n != 1 else ''}{busy})")
    idle = engines[0].get("idle_s", 0)
    stdout.print(f"directory {directory}; each engine exits after {idle:g}s without requests" if idle else f"directory {directory}")


@engine_app.command("stop")
def stop(
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Stop only this model's engine (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Stop the shared engines (requests in flight fail with a clear error; the next one starts a new engine)."""
    from moot.models import engine_client

    directory = engine_client.engine_dir(create=False)
    if model is not None:
        local = _local_model(model)
        targets = [engine_client.EnginePaths.for_model(local._resolve_path(), directory, identity=local.engine_identity())]
    else:
        targets = [engine_client.EnginePaths(directory, sock.stem) for sock in sorted(directory.glob("*.sock"))]
    stopped = []
    for paths in targets:
        info = engine_client.status(paths)
        if info is not None and engine_client.stop(paths):
            stopped.append({"model": info.get("name"), "pid": info.get("pid")})
    if as_json:
        print_json({"stopped": stopped})
        return
    if not stopped:
        stdout.print("no engine was running")
    for item in stopped:
        stdout.print(f"stopped {item['model']} (pid {item['pid']})")


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
