"""`moot deliberate "REQUEST" --data DIR`: coordinators, conflicts, a debate and votes over your exports.

While it runs, a live panel shows the coordinators and their specialists, the conflicts found and
each debate's rounds, from the run's ``deliberation.*`` and task events. ``--json`` prints one
object. ``moot deliberate feedback RUN_ID --accept|--reject [INSIGHT]`` records what you did with
a deliberation's resolutions, so later debates of similar conflicts see it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer
from typer.core import TyperGroup
from rich.markup import escape
from rich.table import Table

from moot.cli._options import BudgetChoice, model_option, parse_budget, parse_models, team_model_kwargs
from moot.cli._output import exit_for_status, print_json, stderr, stdout, usage_dict, usage_line
from moot.cli._progress import RunProgress, announce, report_stop, task_status
from moot.errors import MootError, UsageError


class _RequestOrSubcommand(TyperGroup):
    """``moot deliberate "REQUEST" …`` runs a deliberation; ``moot deliberate feedback …`` is its
    own subcommand. A first word that is no subcommand is the request (the hidden ``run``)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        # the hidden default: its usage line reads `moot deliberate [OPTIONS] REQUEST`
        return ("" if name == "run" else name), command, rest


deliberate_app = typer.Typer(
    cls=_RequestOrSubcommand,
    help="Deliberate over your data (moot deliberate \"REQUEST\" --data DIR), or record what you did with "
         "a deliberation's advice (moot deliberate feedback RUN_ID --accept|--reject).",
)


def register(app: typer.Typer) -> None:
    app.add_typer(deliberate_app, name="deliberate")


@deliberate_app.command("run", hidden=True)
def deliberate_command(
    request: str = typer.Argument(..., help='What you want advice on, e.g. "Should I keep working tonight?"'),
    data: Optional[Path] = typer.Option(None, "--data", "-d", help="Folder of exports: .csv metrics, .ics calendars, .jsonl messages, .md notes."),
    mode: Optional[str] = typer.Option(None, "--mode", hidden=True,
                                       help="The older spelling of --budget's preset (quick, standard or deep)."),
    now: Optional[str] = typer.Option(None, "--now", help="The moment of the request, ISO (default: now), so old exports give reproducible runs."),
    roster: Optional[Path] = typer.Option(None, "--roster", help="Your own coordinators and specialists (TOML; see docs/deliberation.md)."),
    model: Optional[list[str]] = model_option(),
    budget: Optional[str] = typer.Option(
        None, "--budget", "-b",
        help="The deliberation's size and limits: quick (1 coordinator, no debate, 4 calls, 15 s), standard "
             "(2 coordinators, a debate, 10 calls, 30 s; the default) or deep (3, 20 calls, 60 s), and/or calls=N, "
             "seconds=X, comma-separated (e.g. deep,calls=30). A model on this machine gets 20x the seconds."),
    max_calls: Optional[int] = typer.Option(None, "--max-calls", help="The same as --budget calls=N."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="The same as --budget seconds=X (what is done by then is kept)."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Neither use nor store past decisions."),
    polish: bool = typer.Option(False, "--polish", help="Let the model reword the answer's first line when a call is left "
                                                        "(refused if it changes a number, a time or an option's name)."),
    order_check: Optional[bool] = typer.Option(
        None, "--order-check/--no-order-check",
        help="Ask every choice among listed options twice, listed both ways, and keep no answer that changes with the "
             "order (default: on for a model on this machine, off for others)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: reading, evidence, decision, coordinators, insights, conflicts, debates, votes, usage."),
    record_content: bool = typer.Option(
        False, "--record-content", help="Also record prompts and responses in the run store (shown on the run's web page)."
    ),
) -> None:
    """Decide between the options your request names, from your data: typed positions, real conflicts, a debate, votes; the decision first.

    Then `moot deliberate feedback RUN_ID --accept|--reject [INSIGHT]` records what you did."""
    announce("deliberate", enabled=not as_json)  # before the team is imported and the data read
    if data is None:
        raise MootError("no data folder given", fix="pass --data DIR, a folder of .csv, .ics, .jsonl or .md exports")
    from moot.runtime import EventBus, RunStore
    from moot.teams.deliberation import DeliberationTeam, FeedbackMemory
    from moot.teams.deliberation.team import parse_now

    parse_now(now)  # a bad --now is one line before anything starts

    chosen = parse_budget(budget) if budget is not None else None
    mode = _size(chosen, mode)
    if chosen is not None:
        # the preset is the deliberation's size (coordinators, debate, calls, seconds: the team fits
        # the seconds to the model); calls=N and seconds=X override the size's limits
        if set(chosen.limits()) - {"max_calls", "deadline_s"}:
            raise UsageError("the deliberation team counts model calls and seconds only",
                             fix="use --budget calls=N and/or seconds=X (or a preset)")
        max_calls = max_calls if max_calls is not None else chosen.max_calls
        max_seconds = max_seconds if max_seconds is not None else chosen.deadline_s
    models = team_model_kwargs(DeliberationTeam, parse_models(model), command="deliberate")
    progress = RunProgress("deliberate", enabled=not as_json, describe=_plain_event, transient=True)
    memory = None if no_memory else FeedbackMemory()
    try:
        team = DeliberationTeam(data, **models, mode=mode, roster=roster, store=RunStore(), memory=memory,
                                max_calls=max_calls, deadline_s=max_seconds, polish=polish, order_check=order_check)
        progress.say(f"{team.mode.name} mode over {data}")
        if team.data.skipped and not as_json:
            for s in team.data.skipped[:8]:
                stderr.print(f"[yellow]skipped[/] {escape(s.file)}{f':{s.line}' if s.line else ''}: {escape(s.reason)}")
            if len(team.data.skipped) > 8:
                stderr.print(f"[yellow]… and {len(team.data.skipped) - 8} more skipped[/]")
        bus = EventBus(record_content=record_content)
        progress.view = _Panel(mode=team.mode.name)
        progress.attach(bus)
        result = progress.run(lambda: team.deliberate(request, now=now, bus=bus))
    finally:
        if memory is not None:
            memory.close()
    if as_json:
        payload = result.to_json()
        payload["usage"] = usage_dict(result.usage)
        print_json(payload)
        exit_for_status(result.status)
        return
    _print_result(result)
    report_stop(result.status, result.run_id, result.stop_reason)
    exit_for_status(result.status)


def _size(chosen: BudgetChoice | None, mode: str | None) -> str:
    """The deliberation's size: the preset named in ``--budget``, or the older ``--mode``; both
    naming different sizes is one line, not a silent choice."""
    named = chosen.preset if chosen is not None and _names_preset(chosen.text) else None
    if mode is not None and mode not in ("quick", "standard", "deep"):
        raise UsageError(f"unknown size {mode!r}", fix="use --budget quick, standard or deep")
    if chosen is not None and named is not None and mode is not None and named != mode:
        raise UsageError(f"--mode {mode} and --budget {chosen.text} name different sizes",
                         fix=f"drop --mode (it is the older spelling of --budget {mode})")
    return named or mode or "standard"


def _names_preset(budget: str) -> bool:
    return any(p.strip() and "=" not in p for p in budget.split(","))


def _print_result(result: Any) -> None:
    stdout.print(escape(result.answer))  # the decision first: what, why, calendar, confidence
    stdout.print()
    for c in result.coordinators:
        state = "[green]active[/]" if c.activated else "[dim]off[/]"
        who = f" ({', '.join(c.specialists)})" if c.specialists else ""
        stdout.print(f"[bold]{escape(c.domain)}[/] {state}{escape(who)}" + ("" if c.activated else f" [dim]— {escape(c.reason)}[/]"))
    for d in result.debates:
        conflict = next(c for c in result.conflicts if c.id == d.conflict_id)
        stdout.print(f"\n[bold]Debate {d.conflict_id}[/] — {conflict.type.replace('_', ' ')} ({conflict.severity}): "
                     f"{escape(conflict.agent_a.name)} vs {escape(conflict.agent_b.name)}")
        for r in d.rounds:
            if r.round_type == "compromise":
                stdout.print(f"  {r.round_number} compromise: {escape(r.moderator_note or '')}")
            else:
                stdout.print(f"  {r.round_number} {r.round_type}: A: {escape(r.agent_a_response)}")
                stdout.print(f"  {' ' * (len(str(r.round_number)) + len(r.round_type) + 2)}B: {escape(r.agent_b_response)}")
        res = d.resolution
        verdict = f"[green]agreed[/] ({res.compromise_type})" if res.accepted else f"[yellow]unresolved[/]: {escape(d.reason)}"
        stdout.print(f"  → {verdict}")
        if d.memory_used:
            stdout.print(f"  [dim]past decisions seen: {escape('; '.join(d.memory_used))}[/]")
    if result.skipped:
        stdout.print(f"[dim]{len(result.skipped)} row(s)/file(s) of the data were skipped (see above)[/]")
    if result.stop_reason:
        stdout.print(f"[dim]{escape(result.stop_reason)}[/]")
    stdout.print(f"[dim]{usage_line(result.usage, result.seconds)} · run {result.run_id[:12]} "
                 f"(moot runs show {result.run_id[:12]}; moot deliberate feedback {result.run_id[:12]} --accept|--reject)[/]")


@deliberate_app.command("feedback")
def feedback_command(
    run_id: str = typer.Argument(..., help="The deliberation's run id (or a unique prefix)."),
    insight: Optional[str] = typer.Argument(None, help="One insight or resolution of it (default: its debate resolutions)."),
    accept: bool = typer.Option(False, "--accept", help="You followed the resolution(s)."),
    reject: bool = typer.Option(False, "--reject", help="You did not."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: run id, decision, insights."),
) -> None:
    """Record whether you followed a deliberation's advice, so later debates of similar conflicts see it."""
    from moot.teams.deliberation import FeedbackMemory

    if accept == reject:
        raise MootError("say what you did", fix="add --accept or --reject: moot deliberate feedback RUN_ID --accept [INSIGHT]")
    memory = FeedbackMemory()
    try:
        run_id, targets = memory.record(run_id, "accepted" if accept else "rejected", insight)
    finally:
        memory.close()
    decision = "accepted" if accept else "rejected"
    if as_json:
        print_json({"run_id": run_id, "decision": decision, "insights": targets})
        return
    stdout.print(f"recorded: {decision} {', '.join(targets)} of run {run_id[:12]}")


def _plain_event(event: Any) -> str | None:
    """The deliberation's milestones as plain lines (no terminal)."""
    kind, p = str(event.type), event.payload
    if kind == "deliberation.coordinator":
        return f"{p['domain']}: " + (("active: " + ", ".join(p.get("specialists", []))) if p["activated"] else f"off ({p['reason']})")
    if kind == "deliberation.conflict_detected":
        return f"conflict {p['conflict_id']}: {p['conflict_type']} ({p['severity']}) {p['a']} vs {p['b']}"
    if kind == "deliberation.debate_round":
        return f"debate {p['conflict_id']} round {p['round_number']}: {p['round_type']}"
    if kind == "deliberation.resolution":
        return f"debate {p['conflict_id']}: {'agreed' if p['accepted'] else 'unresolved'}"
    return None


@dataclass
class _Panel:
    """The live view: coordinators and specialists, conflicts, debate rounds."""

    mode: str
    rows: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def on_event(self, event: Any) -> None:
        kind, p = event.type.value, event.payload
        if kind == "deliberation.coordinator":
            self.rows[p["domain"]] = ("[green]active[/]: " + ", ".join(p.get("specialists", []))) if p["activated"] \
                else f"[dim]off — {escape(p['reason'])}[/]"
        elif kind == "task_started" and event.task_id:
            self.lines.append(f"[cyan]…[/] {escape(event.task_id)}")
        elif kind in ("task_finished", "task_failed") and event.task_id:
            status = task_status(event)
            mark = {"completed": "[green]✓[/]", "cancelled": "[yellow]cancelled[/]", "stopped": "[yellow]stopped[/]"}.get(status, "[red]✗[/]")
            self.lines = [f"{mark} {escape(event.task_id)}" if line.endswith(f" {escape(event.task_id)}") else line
                          for line in self.lines]
        elif kind == "deliberation.conflict_detected":
            self.lines.append(f"[yellow]conflict {p['conflict_id']}[/]: {p['conflict_type']} ({p['severity']}) {p['a']} vs {p['b']}")
        elif kind == "deliberation.debate_round":
            self.lines.append(f"  debate {p['conflict_id']} round {p['round_number']}: {p['round_type']}")
        elif kind == "deliberation.resolution":
            self.lines.append(f"  debate {p['conflict_id']}: {'agreed' if p['accepted'] else 'unresolved'}")


    def render(self) -> Table:
        table = Table(title=f"deliberate ({self.mode}) · {time.time() - self.started:.0f}s", show_header=False, show_edge=False)
        table.add_column("what")
        table.add_column("state")
        for domain, state in self.rows.items():
            table.add_row(f"[bold]{escape(domain)}[/]", state)
        for line in self.lines[-12:]:
            table.add_row("", line)
        return table
