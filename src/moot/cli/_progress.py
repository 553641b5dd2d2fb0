"""One progress reporter for every team command (ask, research, graph, deliberate, learn, teach).

On a terminal it draws the command's own live view (a table, a panel) and redraws it from the
run's events; without one (a pipe, CI, a log file) a view cannot redraw, so it prints plain
timestamped lines on stderr instead: the first at once, before any model loads, then one per
task started and ended, budget warning and stop, and the team's own milestones.

On Ctrl-C it prints the run id, why the run stopped and what it had done (the partial answer,
read back from the run store, where the run recorded it) and the command exits 130; a run
stopped by its budget prints the same and exits 1 (:func:`report_stop`). Tasks cancelled by
either are "cancelled", never "failed".
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rich.markup import escape

from moot.cli._output import stderr

EventText = Callable[[Any], "str | None"]
"""A team's words for one of its own events (``None``: nothing to say)."""

interrupt_reported = False
"""Set once a reporter said what an interrupted run kept, so the app does not add a bare line."""


def log_line(text: str) -> None:
    """A plain progress line on stderr, for a pipe or CI where no display can redraw."""
    sys.stderr.write(f"[{_dt.datetime.now():%H:%M:%S}] {text}\n")
    sys.stderr.flush()


def progress_line(command: str, text: str) -> None:
    """One line of a command that reports item by item (the evals): ``[HH:MM:SS] COMMAND: text``
    on a pipe, dim text on a terminal."""
    if stderr.is_terminal:
        stderr.print(f"[dim]{escape(text)}[/]", soft_wrap=True)
    else:
        log_line(f"{command}: {text}")


_announced: set[str] = set()


def announce(command: str, *, enabled: bool = True) -> None:
    """The command's first plain line, ``COMMAND: started``, once, when stderr is no terminal:
    called first thing by a command whose team takes a while to import and read its input, so a
    pipe hears from it at once. A mistake found later is still its one ``error:`` line (progress
    lines are told apart by their timestamp)."""
    if enabled and command not in _announced and not stderr.is_terminal:
        _announced.add(command)
        log_line(f"{command}: started")


def task_status(event: Any) -> str:
    """What became of a task, from its ``task_finished``/``task_failed`` event: a task a
    Ctrl-C or a deadline cut short is ``cancelled``, not ``failed``."""
    payload = event.payload or {}
    status = payload.get("status")
    if status:
        return str(status)
    if str(event.type) == "task_failed":
        error = str(payload.get("error") or "")
        return "cancelled" if error.startswith(("cancelled", "interrupted")) else "failed"
    return "completed"


class RunProgress:
    """Progress for one command's run; see the module docstring.

    ``view`` is the command's live view (an object with ``render()`` and ``on_event(event)``, or
    ``None`` for a spinner); ``describe`` turns the team's own events into plain lines.
    """

    def __init__(self, command: str, *, enabled: bool = True, view: Any = None,
                 describe: EventText | None = None, plain: bool | None = None, transient: bool = False) -> None:
        self.command = command
        self.enabled = enabled
        self.view = view
        self.describe = describe
        self.plain = (not stderr.is_terminal) if plain is None else plain
        self.transient = transient
        self.run_id: str | None = None
        self.started = time.time()
        self._live: Any = None
        self._status: Any = None
        self._task_started: dict[str, float] = {}

    # ------------------------------------------------------------------ lines and views

    def say(self, text: str) -> None:
        """A phase of the command (reading sources, loading the model…)."""
        if not self.enabled:
            return
        if self.plain:
            log_line(f"{self.command}: {text}")
        elif self._status is not None:
            self._status.update(f"[dim]{escape(text)}…[/]")

    def __enter__(self) -> RunProgress:
        if not self.enabled:
            return self
        if self.plain:
            if self.command not in _announced:
                _announced.add(self.command)
                log_line(f"{self.command}: started")
        elif self.view is not None:
            from rich.live import Live

            self._live = Live(self.view.render(), console=stderr, refresh_per_second=4, transient=self.transient)
            self._live.__enter__()
        else:
            self._status = stderr.status("[dim]starting…[/]")
            self._status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self.view.render())
            self._live.__exit__(*exc)
            self._live = None
        if self._status is not None:
            self._status.__exit__(*exc)
            self._status = None

    def attach(self, bus: Any) -> None:
        """Follow a run's event bus (the view too, when there is one)."""
        bus.subscribe(self.on_event)

    def on_event(self, event: Any) -> None:
        kind = str(event.type)
        payload = event.payload or {}
        if kind == "run_started" and self.run_id is None and not payload.get("parent_run_id"):
            self.run_id = event.run_id
        if self.view is not None:
            self.view.on_event(event)
            if self._live is not None:
                self._live.update(self.view.render())
        if not (self.enabled and self.plain):
            if self._status is not None:
                self._spin(kind, event)
            return
        text = self._plain_text(kind, event, payload)
        if text:
            log_line(text)

    def _spin(self, kind: str, event: Any) -> None:
        """The spinner's line (no view): the tasks running now, or the tool just called."""
        if kind == "task_started" and event.task_id:
            self._task_started[event.task_id] = event.ts
        elif kind in ("task_finished", "task_failed", "task_skipped") and event.task_id:
            self._task_started.pop(event.task_id, None)
        elif kind == "tool_call":
            self._status.update(f"[dim]{escape(str(event.agent))}: {escape(str(event.payload.get('tool')))}…[/]")
            return
        else:
            return
        if self._task_started:
            self._status.update("[dim]running: " + escape(", ".join(self._task_started)) + "…[/]")

    def _plain_text(self, kind: str, event: Any, payload: dict[str, Any]) -> str | None:
        task = event.task_id
        if kind == "run_started" and event.run_id == self.run_id:
            return f"run {event.run_id[:12]} started: {payload.get('name', self.command)}"
        if kind == "task_started" and task:
            self._task_started[task] = event.ts
            return f"{task}: started"
        if kind in ("task_finished", "task_failed") and task:
            seconds = event.ts - self._task_started.pop(task, event.ts)
            status = task_status(event)
            tokens = int(payload.get("input_tokens", 0) or 0) + int(payload.get("output_tokens", 0) or 0)
            detail = f", {tokens} tokens" if tokens else ""
            error = f": {payload.get('error')}" if status == "failed" and payload.get("error") else ""
            return f"{task}: {status} in {seconds:.1f}s{detail}{error}"
        if kind == "task_skipped" and task:
            return f"{task}: skipped"
        if kind == "budget_warning":
            return f"budget: {payload.get('detail') or payload.get('which')}"
        if kind == "budget_stop":
            return f"budget stop: {payload.get('detail') or payload.get('reason') or payload.get('which')}"
        if kind in ("run_finished", "run_failed") and event.run_id == self.run_id:
            return f"run {str(event.run_id)[:12]} {payload.get('status', 'finished')}: {payload.get('stop_reason', '')}"
        if "." in kind and self.describe is not None:
            return self.describe(event)
        return None

    # ------------------------------------------------------------------ running, and stopping

    def run(self, make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """``asyncio.run(make())`` inside the view. Ctrl-C: say what the run kept, exit 130."""
        try:
            with self:
                return asyncio.run(make())
        except KeyboardInterrupt:
            self.interrupted()
            import typer

            raise typer.Exit(130) from None

    def interrupted(self) -> None:
        """The run id, why it stopped and what it kept, on stderr."""
        global interrupt_reported
        interrupt_reported = True
        if self.run_id is None:
            stderr.print(f"[yellow]interrupted[/]: `moot {self.command}` stopped before its run started; nothing was recorded")
            return
        record = _recorded(self.run_id)
        reason = (record.stop_reason if record is not None and record.stop_reason else "interrupted (Ctrl-C)")
        status = record.status if record is not None else "cancelled"
        stderr.print(f"[yellow]interrupted[/]: run {self.run_id[:12]} {status}: {escape(reason)}", soft_wrap=True)
        show_partial(self.run_id, record)


def _recorded(run_id: str) -> Any:
    from moot.runtime import RunStore

    try:
        with RunStore() as store:
            return store.get_run(run_id)
    except Exception:
        return None


def partial_outputs(record: Any, limit: int = 3) -> list[tuple[str, str]]:
    """The last finished tasks' outputs of a stored run, as text: what a stopped run kept."""
    from moot.runtime.agent import render_value

    kept = [(tid, r) for tid, r in (record.results or {}).items()
            if r.get("status") in ("completed", "fell_back", "stopped", "cancelled") and r.get("output") not in (None, "", [], {})]
    kept.sort(key=lambda item: item[1].get("finished_at") or 0)
    return [(tid, " ".join(render_value(r["output"]).split())) for tid, r in kept[-limit:]]


def show_partial(run_id: str, record: Any = None) -> None:
    """Print what a stopped or interrupted run kept, and where to see all of it."""
    record = record if record is not None else _recorded(run_id)
    kept = partial_outputs(record) if record is not None else []
    if kept:
        stderr.print("[yellow]partial answer[/] (what the run had finished):")
        for tid, text in kept:
            stderr.print(f"  {escape(tid)}: {escape(text[:400])}{'…' if len(text) > 400 else ''}", soft_wrap=True)
    else:
        stderr.print("[dim]no task had finished, so there is no partial answer[/]")
    stderr.print(f"[dim]the whole run: moot runs show {run_id[:12]}[/]")


def report_stop(status: str, run_id: str, reason: str, *, fix: str = "pass a larger --budget, e.g. --budget deep") -> None:
    """A run that its budget stopped: its id, the reason and (read back) what it kept, on stderr.
    The caller then exits 1 (:func:`moot.cli._output.exit_for_status`)."""
    if status != "stopped":
        return
    stderr.print(f"[yellow]stopped[/]: run {run_id[:12]}: {escape(reason)} (fix: {fix})", soft_wrap=True)
    show_partial(run_id)


__all__ = ["RunProgress", "announce", "log_line", "progress_line", "partial_outputs", "report_stop", "show_partial", "task_status"]
