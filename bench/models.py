"""Benchmark the embedded model: moot against the raw engine, and the shared engine process
against engines inside each process.

Measures: generation tokens/s through ``LocalModel.request`` vs ``xllamacpp.Server.
handle_chat_completions`` called directly (same prompt and settings, alternating, so page
cache and load drift hit both alike); aggregate tokens/s with 1, 2 and 4 concurrent requests
on one loaded model (moot always drives the engine in streaming mode, which also lets a
timeout stop decoding; the raw engine is measured in both modes); time to first token when streaming; peak RSS; the tool-calling
reliability of the constrained-choice method (right tool + arguments on the first turn,
right answer after the tool result); and what a JSON schema costs in generation speed: the
learning team's labelling request for a bundled article, generated under its schema, in JSON
mode and free, the same prompt each time.

The shared engine (one engine process per model file, every moot process its client):
aggregate tokens/s with 1, 2 and 4 *processes* each sending one request at a time through it,
beside 1, 2 and 4 concurrent requests inside one process, and (full run) beside 1 and 2
processes that each load their own engine, as every process did before; the time from a
``moot chat`` command's start to its first token with a warm engine; and (full run) the
README's main job from a cold start, and the prompt tokens actually evaluated per
``moot ask --mode multi`` answer with the prompt-prefix cache off and on.

    python bench/models.py --quick     # under a minute on 2 cores

Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
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
from moot.models import engine_client
from moot.models.local import LocalModel, engine_loads, load_local
from moot.models.testing import allow_real_requests

ROOT = Path(__file__).resolve().parent.parent

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


async def schema_cost(model: LocalModel, rounds: int) -> dict[str, Any]:
    """Generation tokens/s of one real request (the learning team's labelling of a bundled article)
    under its JSON schema, in JSON mode and unconstrained; the engine's own generation timings,
    median over ``rounds``, alternating the three so load drift hits each alike."""
    from moot.runtime import load_prompt
    from moot.teams.learning.ingest.selection import document_names, label_schema, numbered_units, propose
    from moot.text.sentences import split_units

    units = split_units((ROOT / "examples" / "learning" / "articles" / "03-drain-sealed.md").read_text(encoding="utf-8"))
    options = [o for o in propose(units, document_names=document_names(units)) if o.asked]
    messages = [{"role": "system", "content": load_prompt("label_sentences", "moot.teams.learning")},
                {"role": "user", "content": numbered_units(options)}]
    schema = label_schema(options).model_json_schema()
    formats = {
        "schema": {"type": "json_schema", "json_schema": {"name": "SentenceLabels", "schema": schema}},
        "json_mode": {"type": "json_object"},
        "free": None,
    }
    engine = await model.engine()
    rates: dict[str, list[float]] = {name: [] for name in formats}
    tokens: dict[str, list[int]] = {name: [] for name in formats}

    async def once(name: str) -> None:
        timings: dict[str, Any] = {}

        def on_chunk(chunk: dict[str, Any]) -> bool:
            timings.update(chunk.get("timings") or {})
            return False

        body: dict[str, Any] = {"messages": messages, "max_tokens": 300, "temperature": 0.0, "stream": True}
        if formats[name] is not None:
            body["response_format"] = formats[name]
        await asyncio.to_thread(engine.server.handle_chat_completions, body, on_chunk)
        rates[name].append(float(timings.get("predicted_per_second") or 0.0))
        tokens[name].append(int(timings.get("predicted_n") or 0))

    await once("free")  # warm-up: the prompt enters the cache for all three
    rates["free"].clear()
    tokens["free"].clear()
    for i in range(rounds):
        for name in (list(formats) if i % 2 == 0 else list(formats)[::-1]):
            await once(name)
    out: dict[str, Any] = {name: {"tok_s": round(statistics.median(r), 2), "tokens": statistics.median(tokens[name])}
                           for name, r in rates.items()}
    out["schema_over_free"] = round(out["schema"]["tok_s"] / max(out["free"]["tok_s"], 1e-9), 3)
    return out


# ------------------------------------------------------------------ the shared engine

CLIENT = """
import asyncio, json, sys, time
from moot.models.base import ModelRequest, ModelSettings, UserMessage
from moot.models.local import load_local

async def main(prompt, max_tokens, rounds):
    model = load_local("local")
    request = lambda: ModelRequest(messages=(UserMessage(content=prompt),),
                                   settings=ModelSettings(max_tokens=max_tokens, temperature=0.0))
    await model.request(ModelRequest(messages=(UserMessage(content="hi"),), settings=ModelSettings(max_tokens=1)))
    print("ready", flush=True)
    sys.stdin.readline()
    started, tokens = time.time(), 0
    for _ in range(rounds):
        tokens += (await model.request(request())).usage.output_tokens
    print(json.dumps({"tokens": tokens, "start": started, "end": time.time()}), flush=True)
    await model.aclose()

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""


def processes_tok_s(n: int, max_tokens: int, rounds: int, env: dict[str, str]) -> float:
    """Aggregate tokens/s of ``n`` processes, each sending ``rounds`` requests one at a time,
    timed from a common start after every process is up (imports and loads are not timed)."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT, f"Write a short poem about {TOPICS[i % len(TOPICS)]}.", str(max_tokens), str(rounds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )
        for i in range(n)
    ]  # fmt: skip
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    results = [json.loads(child.communicate(timeout=1800)[0].strip().splitlines()[-1]) for child in children]
    elapsed = max(r["end"] for r in results) - min(r["start"] for r in results)
    return round(sum(r["tokens"] for r in results) / elapsed, 2)


async def in_process_tok_s(n: int, max_tokens: int, rounds: int) -> float:
    """The same load as :func:`processes_tok_s`, as ``n`` concurrent tasks in this process."""
    model = load_local("local")

    async def one(i: int) -> int:
        prompt = f"Write a short poem about {TOPICS[i % len(TOPICS)]}."
        return sum([(await model.request(_request(prompt, max_tokens))).usage.output_tokens for _ in range(rounds)])

    await model.request(_request("hi", 1))
    started = time.perf_counter()
    tokens = sum(await asyncio.gather(*(one(i) for i in range(n))))
    elapsed = time.perf_counter() - started
    await model.aclose()
    return round(tokens / elapsed, 2)


def cli_first_token_s(env: dict[str, str], rounds: int) -> float:
    """From starting ``moot chat`` to the first byte of its streamed answer, warm engine."""
    samples = []
    for i in range(rounds):
        started = time.perf_counter()
        child = subprocess.Popen(
            [str(Path(sys.executable).with_name("moot")), "chat", f"Describe {TOPICS[i % len(TOPICS)]} in one sentence.",
             "--max-tokens", "16"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        assert child.stdout is not None
        child.stdout.read(1)
        samples.append(time.perf_counter() - started)
        child.communicate(timeout=120)
    return round(statistics.median(samples), 3)


def moot_cli(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).with_name("moot")), *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=3600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"moot {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
    return round(time.perf_counter() - started, 1), done.stdout


QUESTIONS = [
    "What is the current budget of the Marrow River Cleanup?",
    "How many tonnes of waste has the cleanup removed so far?",
    "Who leads the Marrow River Cleanup?",
]


def readme_and_prefix_reuse(env: dict[str, str], directory: Path) -> dict[str, Any]:
    """The README's main job from a cold start (no engine, new home), then the prompt tokens
    evaluated per ``moot ask --mode multi`` answer with the prefix cache off and on."""
    out: dict[str, Any] = {}
    articles = sorted(str(p) for p in (ROOT / "examples" / "learning" / "articles").glob("*.md"))
    learn_s, _ = moot_cli(["learn", *articles, "--kb", "river"], env)
    ask_s, answer = moot_cli(["ask", QUESTIONS[0], "--kb", "river"], env)
    out["readme_job_s"] = {"learn": learn_s, "ask": ask_s, "total": round(learn_s + ask_s, 1), "answer": answer.strip()[:120]}
    paths = [engine_client.EnginePaths(directory, sock.stem) for sock in directory.glob("*.sock")]
    for cache in ("0", "1"):
        for p in paths:
            engine_client.stop(p)
        run_env = env | {"MOOT_LOCAL_PROMPT_CACHE": cache}
        moot_cli(["engine", "start"], run_env)
        [engine] = engine_client.running_engines(directory)
        before = (engine["prompt_tokens"], engine["cached_prompt_tokens"])
        seconds = []
        for question in QUESTIONS:
            seconds.append(moot_cli(["ask", question, "--kb", "river", "--mode", "multi", "--json"], run_env)[0])
        [engine] = engine_client.running_engines(directory)
        prompt = engine["prompt_tokens"] - before[0]
        cached = engine["cached_prompt_tokens"] - before[1]
        paths = [engine_client.EnginePaths(directory, sock.stem) for sock in directory.glob("*.sock")]
        out[f"multi_ask_prompt_cache_{'on' if cache == '1' else 'off'}"] = {
            "answers": len(QUESTIONS),
            "prompt_tokens_per_answer": round(prompt / len(QUESTIONS)),
            "evaluated_prompt_tokens_per_answer": round((prompt - cached) / len(QUESTIONS)),
            "seconds_per_answer": round(statistics.fmean(seconds), 1),
        }
    return out


def shared_engine(quick: bool) -> dict[str, Any]:
    directory = Path(tempfile.mkdtemp(prefix="moot-bench-"))
    home = Path(tempfile.mkdtemp(prefix="moot-bench-home-"))
    env = {k: v for k, v in os.environ.items() if k != "MOOT_LOCAL_ENGINE"} | {
        "MOOT_ENGINE_DIR": str(directory), "MOOT_HOME": str(home), "MOOT_ENGINE_IDLE_S": "600",
    }  # fmt: skip
    max_tokens, rounds = (32, 1) if quick else (96, 2)
    out: dict[str, Any] = {"max_tokens": max_tokens, "requests_per_client": rounds}
    try:
        if not quick:
            out["readme"] = readme_and_prefix_reuse(env, directory)
        counts = (1, 2, 4)
        out["shared_engine_processes_tok_s"] = {str(n): processes_tok_s(n, max_tokens, rounds, env) for n in counts}
        out["cli_first_token_warm_s"] = cli_first_token_s(env, rounds=3 if quick else 7)
        for sock in directory.glob("*.sock"):
            engine_client.stop(engine_client.EnginePaths(directory, sock.stem))
        os.environ["MOOT_LOCAL_ENGINE"] = "inprocess"
        out["in_process_concurrent_tok_s"] = {str(n): asyncio.run(in_process_tok_s(n, max_tokens, rounds)) for n in counts}
        if not quick:
            own = env | {"MOOT_LOCAL_ENGINE": "inprocess"}
            out["engine_per_process_tok_s"] = {str(n): processes_tok_s(n, max_tokens, rounds, own) for n in (1, 2)}
        out["processes_vs_in_process"] = {
            n: round(out["shared_engine_processes_tok_s"][n] / out["in_process_concurrent_tok_s"][n], 3) for n in map(str, counts)
        }
    finally:
        for sock in directory.glob("*.sock"):
            engine_client.stop(engine_client.EnginePaths(directory, sock.stem))
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    return out


async def main(quick: bool) -> dict[str, Any]:
    os.environ["MOOT_LOCAL_ENGINE"] = "inprocess"  # these measure moot against the engine it holds
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
    out["schema_cost"] = await schema_cost(model, rounds=1 if quick else 3)
    out["engine_loads"] = engine_loads(model.path or "")
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    await model.aclose()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter runs (under a minute)")
    options = parser.parse_args()
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    with allow_real_requests():
        report = asyncio.run(main(options.quick))
        report["shared_engine"] = shared_engine(options.quick)
    report["total_s"] = round(time.perf_counter() - began, 1)
    # Other processes on the 2 cores change every figure here: say how busy the machine was.
    report["load_average_1m"] = {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)}
    sys.stdout.write(json.dumps(report) + "\n")
