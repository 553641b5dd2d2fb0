"""Benchmark the embedded model through moot against the raw engine on the same loaded model.

Measures: generation tokens/s through ``LocalModel.request`` vs ``xllamacpp.Server.
handle_chat_completions`` called directly (same prompt and settings, alternating, so page
cache and load drift hit both alike); aggregate tokens/s with 1, 2 and 4 concurrent requests
on one loaded model (moot always drives the engine in streaming mode, which also lets a
timeout stop decoding; the raw engine is measured in both modes); time to first token when streaming; peak RSS; and the tool-calling
reliability of the constrained-choice method (right tool + arguments on the first turn,
right answer after the tool result).

    python bench/models.py --quick     # under a minute on 2 cores

Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import resource
import statistics
import sys
import time
from typing import Any

from moot.models.base import (
    ModelRequest,
    ModelSettings,
    StreamDone,
    TextDelta,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from moot.models.local import LocalModel, engine_loads, load_local
from moot.models.testing import allow_real_requests

PROMPT = "Write a short story about a robot who learns to paint."
TOPICS = ["a robot", "the sea", "a city at night", "an old library"]

NUMBERS = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}
TOOLS = (
    ToolDefinition(name="add", description="Add two numbers.", parameters=NUMBERS),
    ToolDefinition(name="multiply", description="Multiply two numbers.", parameters=NUMBERS),
    ToolDefinition(
        name="get_weather",
        description="Current weather for a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
)
TOOL_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("What is 17 + 25?", "add", {"a": 17, "b": 25}, "42"),
    ("What is 12 times 9?", "multiply", {"a": 12, "b": 9}, "108"),
    ("What's the weather in Paris?", "get_weather", {"city": "Paris"}, "sunny"),
    ("Compute 3.5 * 4.", "multiply", {"a": 3.5, "b": 4}, "14"),
    ("Add 1234 and 4321.", "add", {"a": 1234, "b": 4321}, "5555"),
    ("How much is 250 plus 750?", "add", {"a": 250, "b": 750}, "1000"),
    ("Multiply 6 by 7.", "multiply", {"a": 6, "b": 7}, "42"),
    ("Is it raining in Tokyo right now?", "get_weather", {"city": "Tokyo"}, "sunny"),
    ("What is 99 + 1?", "add", {"a": 99, "b": 1}, "100"),
    ("What is the product of 15 and 15?", "multiply", {"a": 15, "b": 15}, "225"),
]


def _run_tool(name: str, args: dict[str, Any]) -> str:
    if name == "add":
        value = args["a"] + args["b"]
    elif name == "multiply":
        value = args["a"] * args["b"]
    else:
        return "sunny, 21 C"
    return str(int(value)) if float(value).is_integer() else str(value)


def _body(prompt: str, max_tokens: int) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0.0}


def _request(prompt: str, max_tokens: int) -> ModelRequest:
    return ModelRequest(
        messages=(UserMessage(content=prompt),), settings=ModelSettings(max_tokens=max_tokens, temperature=0.0)
    )


async def moot_vs_raw(model: LocalModel, rounds: int, max_tokens: int) -> dict[str, Any]:
    engine = await model.engine()
    moot_rates: list[float] = []
    raw_rates: list[float] = []
    raw_stream_rates: list[float] = []

    async def raw_stream_once() -> None:
        usage: dict[str, int] = {}

        def on_chunk(chunk: dict[str, Any]) -> bool:
            usage.update(chunk.get("usage") or {})
            return False

        body = _body(PROMPT, max_tokens) | {"stream": True, "stream_options": {"include_usage": True}}
        started = time.perf_counter()
        await asyncio.to_thread(engine.server.handle_chat_completions, body, on_chunk)
        raw_stream_rates.append(usage["completion_tokens"] / (time.perf_counter() - started))

    async def raw_once() -> None:
        started = time.perf_counter()
        raw = await asyncio.to_thread(engine.server.handle_chat_completions, _body(PROMPT, max_tokens))
        raw_rates.append(raw["usage"]["completion_tokens"] / (time.perf_counter() - started))

    async def moot_once() -> None:
        started = time.perf_counter()
        response = await model.request(_request(PROMPT, max_tokens))
        moot_rates.append(response.usage.output_tokens / (time.perf_counter() - started))

    await raw_once()  # warm-up: fills the prompt cache for both
    raw_rates.clear()
    for i in range(rounds):  # alternate who goes first, so drift in machine load hits both
        order = (raw_once, raw_stream_once, moot_once)
        for run in order if i % 2 == 0 else order[::-1]:
            await run()
    moot_tps = statistics.median(moot_rates)
    raw_tps = statistics.median(raw_rates)
    raw_stream_tps = statistics.median(raw_stream_rates)
    return {
        "moot_tok_s": round(moot_tps, 2),
        "raw_tok_s": round(raw_tps, 2),
        "raw_stream_tok_s": round(raw_stream_tps, 2),
        # Against the faster of the engine's two modes: what moot adds, not which mode it picked.
        "ratio": round(moot_tps / max(raw_tps, raw_stream_tps), 3),
        "ratio_vs_raw_nonstream": round(moot_tps / raw_tps, 3),
    }


async def concurrency(model: LocalModel, max_tokens: int) -> dict[str, float]:
    result: dict[str, float] = {}
    for n in (1, 2, 4):
        prompts = [f"Write a short poem about {TOPICS[i % len(TOPICS)]}." for i in range(n)]
        started = time.perf_counter()
        responses = await asyncio.gather(*(model.request(_request(p, max_tokens)) for p in prompts))
        elapsed = time.perf_counter() - started
        result[str(n)] = round(sum(r.usage.output_tokens for r in responses) / elapsed, 2)
    return result


async def time_to_first_token(model: LocalModel, rounds: int) -> float:
    samples = []
    for i in range(rounds):
        started = time.perf_counter()
        first: float | None = None
        async for event in model.stream(_request(f"Describe {TOPICS[i % len(TOPICS)]} in one sentence.", 16)):
            if isinstance(event, TextDelta) and first is None:
                first = time.perf_counter() - started
            if isinstance(event, StreamDone):
                break
        samples.append(first if first is not None else float("nan"))
    return round(statistics.median(samples), 3)


async def tool_reliability(model: LocalModel, cases: int) -> dict[str, Any]:
    first_ok = answer_ok = 0
    for question, name, args, expected in TOOL_CASES[:cases]:
        user = UserMessage(content=question)
        settings = ModelSettings(max_tokens=64)
        first = await model.request(ModelRequest(messages=(user,), tools=TOOLS, settings=settings))
        call = first.tool_calls[0] if first.tool_calls else None
        if call and call.name == name and all(
            call.arguments.get(k) == v if isinstance(v, str) else float(call.arguments.get(k, "nan")) == v
            for k, v in args.items()
        ):
            first_ok += 1
        if call is None:
            continue
        result = ToolResultMessage(tool_call_id=call.id, name=call.name, content=_run_tool(call.name, call.arguments))
        second = await model.request(
            ModelRequest(messages=(user, first.to_message(), result), tools=TOOLS, settings=settings)
        )
        if not second.tool_calls and expected.lower() in second.text.lower():
            answer_ok += 1
    return {"cases": cases, "right_tool_and_args": first_ok, "right_answer_after_result": answer_ok}


async def main(quick: bool) -> dict[str, Any]:
    model = load_local("local")
    started = time.perf_counter()
    await model.engine()
    load_s = time.perf_counter() - started
    out: dict[str, Any] = {
        "benchmark": "models",
        "quick": quick,
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "model": model.name,
        "settings": model.describe() | {"path": str(model.path)},
        "engine_load_s": round(load_s, 2),
    }
    out["moot_vs_raw"] = await moot_vs_raw(model, rounds=3 if quick else 5, max_tokens=64 if quick else 192)
    out["aggregate_tok_s_by_concurrency"] = await concurrency(model, max_tokens=32 if quick else 128)
    out["time_to_first_token_s"] = await time_to_first_token(model, rounds=3 if quick else 8)
    out["tool_calling"] = await tool_reliability(model, cases=2 if quick else len(TOOL_CASES))
    out["engine_loads"] = engine_loads(model.path or "")
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    await model.aclose()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter runs (under a minute)")
    options = parser.parse_args()
    began = time.perf_counter()
    with allow_real_requests():
        report = asyncio.run(main(options.quick))
    report["total_s"] = round(time.perf_counter() - began, 1)
    sys.stdout.write(json.dumps(report) + "\n")
