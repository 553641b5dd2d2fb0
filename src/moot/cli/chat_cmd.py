"""`moot chat`: one prompt to one model, streamed to the terminal or returned as JSON.

The exchange is a run like any team's (one task, one agent): it is listed by ``moot runs`` with
its usage and request timing, and exported as OpenTelemetry spans with ``MOOT_OTEL=1``."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Optional

import typer

from moot.cli._output import print_json, stderr, stdout, usage_dict, usage_line
from moot.errors import RunFailed

CHAT_SYSTEM = "You are a helpful assistant."
"""The system prompt when ``--system`` is not given."""


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)


def chat(
    prompt: str = typer.Argument(..., help="What to ask."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the embedded model)."
    ),
    system: Optional[str] = typer.Option(None, "--system", help=f"A system prompt (default: {CHAT_SYSTEM!r})."),
    max_tokens: int = typer.Option(512, "--max-tokens", help="Longest answer, in tokens.", min=1),
    temperature: Optional[float] = typer.Option(
        None, "--temperature", help="Sampling temperature (default: the model's; 0 for the embedded model)."
    ),
    as_json: bool = typer.Option(
        False, "--json", help='Print one JSON object: {"text", "model", "usage", "seconds", "run_id"}.'
    ),
    record_content: bool = typer.Option(
        False, "--record-content", help="Also record the prompt and the answer in the run store (shown on the run's page)."
    ),
) -> None:
    """Ask a model one question and print the answer (streamed as it is generated); recorded as a run."""
    from moot.models.base import ModelSettings
    from moot.models.registry import infer_model
    from moot.runtime import EventBus, Run, RunStore, SubAgent

    llm = infer_model(model)
    agent = SubAgent("chat", role="answers one prompt", system_prompt=system or CHAT_SYSTEM, model=llm, max_turns=1,
                     settings=ModelSettings(max_tokens=max_tokens, temperature=temperature))

    printer = _Printer()

    async def exchange() -> tuple[Any, str]:
        try:
            async with Run(f"chat: {' '.join(prompt.split())[:60]}", bus=EventBus(record_content=record_content),
                           store=RunStore()) as run:
                outcome = await run.step("chat", agent, prompt, on_text=None if as_json else printer)
            if not as_json:
                stdout.out("")
            return outcome, run.run_id
        finally:
            await llm.aclose()

    started = time.perf_counter()
    spinner = stderr.status("[dim]thinking…[/]") if not as_json and stderr.is_terminal else None
    printer.spinner = spinner
    if spinner is not None:
        spinner.start()
    try:
        outcome, run_id = asyncio.run(exchange())
    finally:
        if spinner is not None:
            spinner.stop()
    seconds = time.perf_counter() - started
    if outcome is None or not outcome.ok:
        detail = (outcome.detail or outcome.stop_reason) if outcome is not None else "the run stopped before the request"
        raise RunFailed(f"{detail.removeprefix('error:')} (run {run_id[:12]})")
    name = llm.name
    if as_json:
        print_json({"text": outcome.text, "model": name, "usage": usage_dict(outcome.usage),
                    "seconds": round(seconds, 3), "run_id": run_id})
    else:
        stderr.print(f"[dim]{name} · {usage_line(outcome.usage, seconds)} · run {run_id[:12]}[/]")


class _Printer:
    """Prints the answer's text as it comes, stopping the spinner at the first piece."""

    def __init__(self) -> None:
        self.spinner: Any = None

    def __call__(self, text: str) -> None:
        if self.spinner is not None:
            self.spinner.stop()
            self.spinner = None
        stdout.out(text, end="")
