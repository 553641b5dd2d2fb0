"""`moot chat`: one prompt to one model, streamed to the terminal or returned as JSON."""

from __future__ import annotations

import asyncio
import time
from typing import Optional

import typer

from moot.cli._output import print_json, stderr, stdout, usage_dict, usage_line
from moot.models.base import ModelRequest, ModelResponse, ModelSettings, StreamDone, TextDelta, messages_from


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)


def chat(
    prompt: str = typer.Argument(..., help="What to ask."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Model string (default: $MOOT_MODEL, else the embedded model)."
    ),
    system: Optional[str] = typer.Option(None, "--system", help="A system prompt."),
    max_tokens: int = typer.Option(512, "--max-tokens", help="Longest answer, in tokens.", min=1),
    temperature: Optional[float] = typer.Option(
        None, "--temperature", help="Sampling temperature (default: the model's; 0 for the embedded model)."
    ),
    as_json: bool = typer.Option(
        False, "--json", help='Print one JSON object: {"text", "model", "usage", "seconds"}.'
    ),
) -> None:
    """Ask a model one question and print the answer (streamed as it is generated)."""
    from moot.models.registry import infer_model

    llm = infer_model(model)
    request = ModelRequest(
        messages=messages_from(prompt, system=system),
        settings=ModelSettings(max_tokens=max_tokens, temperature=temperature),
    )
    started = time.perf_counter()
    response = asyncio.run(_run(llm, request, stream=not as_json))
    seconds = time.perf_counter() - started
    if as_json:
        print_json(
            {
                "text": response.text,
                "model": response.model or llm.name,
                "usage": usage_dict(response.usage),
                "seconds": round(seconds, 3),
            }
        )
    else:
        stderr.print(f"[dim]{response.model or llm.name} · {usage_line(response.usage, seconds)}[/]")


async def _run(llm, request: ModelRequest, *, stream: bool) -> ModelResponse:  # type: ignore[no-untyped-def]
    try:
        if not stream:
            return await llm.request(request)
        final: ModelResponse | None = None
        with stderr.status("[dim]thinking…[/]") as status:
            async for event in llm.stream(request):
                if isinstance(event, TextDelta):
                    status.stop()
                    stdout.out(event.text, end="")
                elif isinstance(event, StreamDone):
                    final = event.response
        stdout.out("")
        assert final is not None, "a stream must end with StreamDone"
        return final
    finally:
        await llm.aclose()
