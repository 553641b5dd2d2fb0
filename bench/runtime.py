"""Runtime orchestration benchmark: moot's task graph side by side with LangGraph.

What it measures, in one run, on both frameworks with the same graphs:

1. **Overhead per sub-agent call** on a 100-task layered graph (10 layers x 10 tasks, each
   task depending on 2-3 tasks of the layer before) with a scripted zero-latency model:
   ``(wall time of the whole graph - the model calls' own time) / number of calls``, median
   of several repetitions. Reported as ``overhead_us_per_call`` (moot),
   ``langgraph_overhead_us_per_call`` and their ratio ``overhead_ratio_vs_langgraph``.
2. **Critical-path ratio** of a wide graph (16 parallel tasks, then one task that depends on
   all 16; ``--width N`` for N parallel tasks) with a model that sleeps 100 ms per call: wall
   time / (2 x 100 ms), the lower bound when every task makes one model call. Goal for moot:
   at most 1.05.

Set-up (once, from the repository root; LangGraph is never a dependency of moot)::

    python -m venv bench/.venv-runtime && bench/.venv-runtime/bin/pip install -e . -r bench/requirements-runtime.txt

Run::

    python bench/runtime.py --quick      # under a minute
    python bench/runtime.py              # the full run, for docs/benchmarks.md
    python bench/runtime.py --width 64   # the same with 64 parallel tasks in the wide graph

When LangGraph is not importable in the interpreter that runs this file, the script
re-executes itself with ``bench/.venv-runtime/bin/python`` if that environment exists, and
otherwise prints the set-up command above and exits with status 2 (``--skip-langgraph``
measures moot alone). The last line of the output is one JSON object.

Fairness notes: both sides get the same graph shape, the same model object type (moot's
:class:`~moot.models.testing.ScriptedModel`), the same prompt built from the task text and the
results of its dependencies, and one event loop. The LangGraph node builds the same
``ModelRequest`` a sub-agent would and writes its answer through an explicit dict-merge
reducer, so fan-in is well defined. Graph construction (``TaskGraph(...)`` /
``StateGraph.compile()``) is timed separately and not counted as per-call overhead.
Repetitions of the two frameworks alternate, so background load hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import gc
import json
import os
import platform
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / "bench" / ".venv-runtime" / "bin" / "python"
SETUP_COMMAND = (
    "python -m venv bench/.venv-runtime && "
    "bench/.venv-runtime/bin/pip install -e . -r bench/requirements-runtime.txt"
)
_REEXEC_FLAG = "MOOT_BENCH_RUNTIME_REEXEC"

# Nothing leaves the machine: LangGraph ships LangSmith tracing, off unless configured.
os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")

ANSWER = "ok: done"
SYSTEM_PROMPT = "You are a worker in a benchmark. Answer in one short line."
MODEL_LATENCY_S = 0.1
WIDE_FAN_OUT = 16


# --------------------------------------------------------------------------- environment


def _langgraph_importable() -> bool:
    try:
        import langgraph.graph  # noqa: F401
    except ImportError:
        return False
    return True


def _ensure_langgraph(skip: bool) -> None:
    """Re-execute inside bench/.venv-runtime when LangGraph is missing here."""
    if skip or _langgraph_importable():
        return
    if VENV_PYTHON.exists() and not os.environ.get(_REEXEC_FLAG):
        os.environ[_REEXEC_FLAG] = "1"
        print(f"LangGraph not importable here; re-running in {VENV_PYTHON.relative_to(ROOT)}", file=sys.stderr)
        sys.stderr.flush()
        os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])
    print(
        "error: LangGraph (the peer this benchmark compares with) is not installed; "
        f"create its environment once from the repository root with: {SETUP_COMMAND}",
        file=sys.stderr,
    )
    raise SystemExit(2)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- graph shapes


@dataclass(frozen=True)
class TaskSpec:
    id: str
    agent: str
    task: str
    depends_on: tuple[str, ...]


def layered_graph(layers: int = 10, width: int = 10, agents: int = 4) -> list[TaskSpec]:
    """A deterministic layered DAG: task (l, i) depends on (l-1, i) and (l-1, i+1), and on
    (l-1, i+3) as well when i is even (indices modulo ``width``): 2-3 predecessors each."""
    specs: list[TaskSpec] = []
    for layer in range(layers):
        for i in range(width):
            deps: tuple[str, ...] = ()
            if layer:
                picks = [i, (i + 1) % width] + ([(i + 3) % width] if i % 2 == 0 else [])
                deps = tuple(f"t{layer - 1}_{j}" for j in dict.fromkeys(picks))
            n = layer * width + i
            specs.append(
                TaskSpec(
                    id=f"t{layer}_{i}",
                    agent=f"worker{n % agents}",
                    task=f"Step {layer}.{i}: combine the inputs into one short line.",
                    depends_on=deps,
                )
            )
    return specs


def wide_graph(fan_out: int = WIDE_FAN_OUT) -> list[TaskSpec]:
    """``fan_out`` independent tasks, then one task that depends on all of them."""
    parallel = [
        TaskSpec(id=f"w{i}", agent="researcher", task=f"Research part {i}.", depends_on=())
        for i in range(fan_out)
    ]
    sink = TaskSpec(
        id="sink",
        agent="synthesizer",
        task="Combine the research into one answer.",
        depends_on=tuple(s.id for s in parallel),
    )
    return [*parallel, sink]


def critical_path_calls(specs: list[TaskSpec]) -> int:
    """Number of tasks on the longest dependency chain (one model call each)."""
    depth: dict[str, int] = {}
    for spec in specs:  # specs are listed in topological order
        depth[spec.id] = 1 + max((depth[d] for d in spec.depends_on), default=0)
    return max(depth.values())


# --------------------------------------------------------------------------- models


def zero_latency_model() -> Any:
    from moot.models.testing import ScriptedModel

    return ScriptedModel(script=[ANSWER], repeat_last=True, name="scripted-zero")


def sleeping_model(latency_s: float = MODEL_LATENCY_S) -> Any:
    from moot.models.testing import ScriptedModel

    return ScriptedModel(script=[ANSWER], repeat_last=True, delay_s=latency_s, name="scripted-sleep")


def _prompt(spec_task: str, inputs: list[str]) -> str:
    if not inputs:
        return spec_task
    return spec_task + "\n\nInputs:\n" + "\n".join(f"- {text}" for text in inputs)


async def model_call_us(repetitions: int = 2000) -> float:
    """The zero-latency model's own cost per call (µs), measured without any framework."""
    from moot.models.base import ModelRequest, messages_from

    model = zero_latency_model()
    request = ModelRequest(messages=messages_from(_prompt("Step 1.1: x", [ANSWER] * 3), system=SYSTEM_PROMPT))
    for _ in range(200):
        await model.request(request)
    model.requests.clear()
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repetitions):
            await model.request(request)
        samples.append((time.perf_counter() - start) / repetitions * 1e6)
        model.requests.clear()
    return statistics.median(samples)


# --------------------------------------------------------------------------- moot side


@dataclass
class RunTiming:
    wall_s: float
    build_s: float
    calls: int
    detail: dict[str, Any]


def _as_seconds(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.timestamp()
    return float(value)


async def run_moot(specs: list[TaskSpec], model: Any) -> RunTiming:
    from moot.runtime import SubAgent, SubAgentTask, TaskGraph

    start_build = time.perf_counter()
    agent_names = list(dict.fromkeys(spec.agent for spec in specs))
    agents = [
        SubAgent(name=name, role=f"{name} in a benchmark", system_prompt=SYSTEM_PROMPT, tools=[], model=model, max_turns=2)
        for name in agent_names
    ]
    tasks = [
        SubAgentTask(id=spec.id, agent=spec.agent, task=spec.task, depends_on=list(spec.depends_on))
        for spec in specs
    ]
    graph = TaskGraph(agents=agents, tasks=tasks)
    build_s = time.perf_counter() - start_build

    start_clock = time.time()  # the runtime stamps tasks with time.time()
    start = time.perf_counter()
    result = await graph.run(store=None, bus=None)
    wall_s = time.perf_counter() - start
    end_clock = time.time()

    status = str(getattr(result.status, "value", result.status))
    if status.lower() not in ("ok", "completed", "complete", "succeeded", "success", "done", "finished"):
        raise RuntimeError(f"moot graph run ended with status {status!r}")
    if len(result.results) != len(specs):
        raise RuntimeError(f"moot returned {len(result.results)} results for {len(specs)} tasks")
    detail: dict[str, Any] = {}
    started = {tid: _as_seconds(getattr(r, "started_at", None)) for tid, r in result.results.items()}
    finished = {tid: _as_seconds(getattr(r, "finished_at", None)) for tid, r in result.results.items()}
    if "sink" in result.results and None not in started.values() and None not in finished.values():
        parallel = [tid for tid in result.results if tid != "sink"]
        detail["parallel_start_spread_ms"] = (max(started[t] for t in parallel) - min(started[t] for t in parallel)) * 1e3
        detail["sink_start_delay_ms"] = (started["sink"] - max(finished[t] for t in parallel)) * 1e3
        detail["first_start_after_run_ms"] = (min(started.values()) - start_clock) * 1e3
        detail["return_after_sink_ms"] = (end_clock - finished["sink"]) * 1e3
    return RunTiming(wall_s=wall_s, build_s=build_s, calls=len(model.requests), detail=detail)


# --------------------------------------------------------------------------- LangGraph side


def _merge(left: dict[str, str], right: dict[str, str]) -> dict[str, str]:
    """The fan-in reducer: every branch writes its own key, so merging never loses a write."""
    return {**left, **right}


class State(TypedDict):
    """LangGraph's state: the result text of every task, keyed by task id."""

    results: Annotated[dict[str, str], _merge]


def build_langgraph(specs: list[TaskSpec], model: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    from moot.models.base import ModelRequest, messages_from

    builder = StateGraph(State)
    has_successor = {d for spec in specs for d in spec.depends_on}

    def make_node(spec: TaskSpec) -> Callable[[State], Awaitable[dict[str, Any]]]:
        async def node(state: State) -> dict[str, Any]:
            results = state["results"]
            prompt = _prompt(spec.task, [results[d] for d in spec.depends_on])
            request = ModelRequest(messages=messages_from(prompt, system=SYSTEM_PROMPT))
            response = await model.request(request)
            return {"results": {spec.id: response.text}}

        return node

    for spec in specs:
        builder.add_node(spec.id, make_node(spec))
        if not spec.depends_on:
            builder.add_edge(START, spec.id)
        elif len(spec.depends_on) == 1:
            builder.add_edge(spec.depends_on[0], spec.id)
        else:
            builder.add_edge(list(spec.depends_on), spec.id)  # waits for all predecessors
        if spec.id not in has_successor:
            builder.add_edge(spec.id, END)
    return builder.compile()


async def run_langgraph(specs: list[TaskSpec], model: Any) -> RunTiming:
    start_build = time.perf_counter()
    graph = build_langgraph(specs, model)
    build_s = time.perf_counter() - start_build

    start = time.perf_counter()
    final = await graph.ainvoke({"results": {}}, config={"recursion_limit": 10 * len(specs) + 25})
    wall_s = time.perf_counter() - start
    if len(final["results"]) != len(specs):
        raise RuntimeError(f"LangGraph returned {len(final['results'])} results for {len(specs)} tasks")
    return RunTiming(wall_s=wall_s, build_s=build_s, calls=len(model.requests), detail={})


# --------------------------------------------------------------------------- the floor


async def run_bare_asyncio(specs: list[TaskSpec], model: Any) -> RunTiming:
    """The same graph with no framework at all: one asyncio task per graph task, awaiting
    its dependencies' futures. What this machine's event loop and timers allow."""
    from moot.models.base import ModelRequest, messages_from

    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    done: dict[str, asyncio.Future[str]] = {spec.id: loop.create_future() for spec in specs}

    async def one(spec: TaskSpec) -> None:
        inputs = [await done[d] for d in spec.depends_on]
        request = ModelRequest(messages=messages_from(_prompt(spec.task, inputs), system=SYSTEM_PROMPT))
        done[spec.id].set_result((await model.request(request)).text)

    await asyncio.gather(*(one(spec) for spec in specs))
    return RunTiming(wall_s=time.perf_counter() - start, build_s=0.0, calls=len(model.requests), detail={})


# --------------------------------------------------------------------------- measurement


Runner = Callable[[list[TaskSpec], Any], Awaitable[RunTiming]]


async def measure(
    sides: dict[str, Runner], specs: list[TaskSpec], make_model: Callable[[], Any], repetitions: int
) -> dict[str, list[RunTiming]]:
    """Run each side once to warm up, then ``repetitions`` times, alternating sides."""
    timings: dict[str, list[RunTiming]] = {name: [] for name in sides}
    for runner in sides.values():
        await runner(specs, make_model())
    for rep in range(repetitions):
        order = list(sides.items())
        if rep % 2:
            order.reverse()
        for name, runner in order:
            gc.collect()
            timings[name].append(await runner(specs, make_model()))
    return timings


async def peak_alloc_kb(runner: Runner, specs: list[TaskSpec]) -> float:
    """Peak Python heap growth (KiB) during one run, traced with tracemalloc (untimed run)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        await runner(specs, zero_latency_model())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - base) / 1024


def _overhead_us(runs: list[RunTiming], model_us: float) -> tuple[float, float, float]:
    """(median overhead µs/call, median raw wall µs/call, median build ms)."""
    overhead = [(r.wall_s * 1e6 - r.calls * model_us) / r.calls for r in runs]
    raw = [r.wall_s * 1e6 / r.calls for r in runs]
    return statistics.median(overhead), statistics.median(raw), statistics.median(r.build_s * 1e3 for r in runs)


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def _r(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


async def benchmark(quick: bool, skip_langgraph: bool, width: int = WIDE_FAN_OUT) -> dict[str, Any]:
    sides: dict[str, Runner] = {"moot": run_moot}
    if not skip_langgraph:
        sides["langgraph"] = run_langgraph
    # The floor: the same graph as bare asyncio tasks (what any framework's numbers sit on).
    sides["asyncio"] = run_bare_asyncio
    overhead_reps = 10 if quick else 40
    wide_reps = 3 if quick else 10

    model_us = await model_call_us(500 if quick else 2000)

    # 1. overhead on the 100-task layered graph
    layered = layered_graph()
    runs = await measure(sides, layered, zero_latency_model, overhead_reps)
    per_side: dict[str, dict[str, Any]] = {}
    for name, side_runs in runs.items():
        overhead, raw, build_ms = _overhead_us(side_runs, model_us)
        calls = {r.calls for r in side_runs}
        per_side[name] = {
            "overhead_us_per_call": overhead,
            "raw_us_per_call": raw,
            "build_ms": build_ms,
            "wall_ms_median": statistics.median(r.wall_s for r in side_runs) * 1e3,
            "calls": max(calls),
        }

    # the same measurement on a 1000-task graph: does the overhead per call stay flat?
    big: dict[str, float | None] = {name: None for name in sides}
    if not quick:
        big_specs = layered_graph(layers=50, width=20)
        big_runs = await measure(sides, big_specs, zero_latency_model, 5)
        for name, side_runs in big_runs.items():
            big[name] = _overhead_us(side_runs, model_us)[0]

    # 2. critical path of the wide graph with a 100 ms model
    wide = wide_graph(width)
    lower_bound_s = critical_path_calls(wide) * MODEL_LATENCY_S
    wide_runs = await measure(sides, wide, sleeping_model, wide_reps)
    wide_ratio = {name: statistics.median(r.wall_s for r in rs) / lower_bound_s for name, rs in wide_runs.items()}
    wide_ratio_min = {name: min(r.wall_s for r in rs) / lower_bound_s for name, rs in wide_runs.items()}
    wide_calls = {name: max(r.calls for r in rs) for name, rs in wide_runs.items()}
    moot_wide_detail: dict[str, float] = {}
    for key in ("parallel_start_spread_ms", "sink_start_delay_ms", "first_start_after_run_ms", "return_after_sink_ms"):
        values = [r.detail[key] for r in wide_runs["moot"] if key in r.detail]
        if values:
            moot_wide_detail[key] = statistics.median(values)

    # memory
    alloc = {name: await peak_alloc_kb(runner, layered) for name, runner in sides.items() if name != "asyncio"}

    lg = per_side.get("langgraph", {})
    moot = per_side["moot"]
    floor = per_side["asyncio"]
    return {
        "benchmark": "runtime",
        "quick": quick,
        "overhead_us_per_call": _r(moot["overhead_us_per_call"]),
        "langgraph_overhead_us_per_call": _r(lg.get("overhead_us_per_call")),
        "overhead_ratio_vs_langgraph": _ratio(moot["overhead_us_per_call"], lg.get("overhead_us_per_call")),
        "critical_path_ratio": round(wide_ratio["moot"], 3),
        "langgraph_critical_path_ratio": _r(wide_ratio.get("langgraph"), 3),
        "critical_path_ratio_min": round(wide_ratio_min["moot"], 3),
        "langgraph_critical_path_ratio_min": _r(wide_ratio_min.get("langgraph"), 3),
        "asyncio_critical_path_ratio": round(wide_ratio["asyncio"], 3),
        "asyncio_overhead_us_per_call": _r(floor["overhead_us_per_call"]),
        "critical_path_goal": 1.05,
        "critical_path_ok": wide_ratio["moot"] <= 1.05,
        "tasks": len(layered),
        "calls_moot": moot["calls"],
        "calls_langgraph": lg.get("calls"),
        "model_call_us": round(model_us, 2),
        "raw_us_per_call": _r(moot["raw_us_per_call"]),
        "langgraph_raw_us_per_call": _r(lg.get("raw_us_per_call")),
        "graph_wall_ms": _r(moot["wall_ms_median"], 2),
        "langgraph_graph_wall_ms": _r(lg.get("wall_ms_median"), 2),
        "build_ms": _r(moot["build_ms"], 2),
        "langgraph_build_ms": _r(lg.get("build_ms"), 2),
        "asyncio_graph_wall_ms": _r(floor["wall_ms_median"], 2),
        "overhead_us_per_call_1000_tasks": _r(big["moot"]),
        "asyncio_overhead_us_per_call_1000_tasks": _r(big["asyncio"]),
        "langgraph_overhead_us_per_call_1000_tasks": _r(big.get("langgraph")),
        "wide_tasks": len(wide),
        "wide_model_latency_ms": MODEL_LATENCY_S * 1e3,
        "wide_lower_bound_ms": round(lower_bound_s * 1e3, 1),
        "wide_calls_moot": wide_calls["moot"],
        "wide_calls_langgraph": wide_calls.get("langgraph"),
        **{f"wide_{k}": round(v, 3) for k, v in moot_wide_detail.items()},
        "peak_alloc_kb_100_tasks": _r(alloc["moot"]),
        "langgraph_peak_alloc_kb_100_tasks": _r(alloc.get("langgraph")),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "repetitions": {"overhead": overhead_reps, "wide": wide_reps},
        "python": platform.python_version(),
        "moot": _version("moot"),
        "langgraph": _version("langgraph") if not skip_langgraph else None,
        "langchain_core": _version("langchain-core") if not skip_langgraph else None,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": _dt.date.today().isoformat(),
    }


def _summary(result: dict[str, Any]) -> str:
    lines = [
        f"runtime benchmark ({'quick' if result['quick'] else 'full'}), Python {result['python']}, "
        f"{result['machine']}, {result['cpus']} cpus, moot {result['moot']}, LangGraph {result['langgraph']}",
        f"  100-task graph, zero-latency model (model itself: {result['model_call_us']} us/call):",
        f"    moot       overhead {result['overhead_us_per_call']} us/call   "
        f"(graph {result['graph_wall_ms']} ms, build {result['build_ms']} ms, {result['calls_moot']} calls)",
    ]
    if result["langgraph_overhead_us_per_call"] is not None:
        lines.append(
            f"    LangGraph  overhead {result['langgraph_overhead_us_per_call']} us/call   "
            f"(graph {result['langgraph_graph_wall_ms']} ms, build {result['langgraph_build_ms']} ms, "
            f"{result['calls_langgraph']} calls)"
        )
        lines.append(f"    moot / LangGraph = {result['overhead_ratio_vs_langgraph']}")
    lines.append(
        f"    bare asyncio overhead {result['asyncio_overhead_us_per_call']} us/call (the floor; graph "
        f"{result['asyncio_graph_wall_ms']} ms)"
    )
    if result["overhead_us_per_call_1000_tasks"] is not None:
        lines.append(
            f"  1000-task graph: moot {result['overhead_us_per_call_1000_tasks']} us/call, "
            f"LangGraph {result['langgraph_overhead_us_per_call_1000_tasks']} us/call, "
            f"bare asyncio {result['asyncio_overhead_us_per_call_1000_tasks']} us/call"
        )
    lines.append(
        f"  wide graph ({result['wide_tasks']} tasks, {result['wide_model_latency_ms']:.0f} ms model, "
        f"lower bound {result['wide_lower_bound_ms']} ms): moot ratio {result['critical_path_ratio']} "
        f"(best {result['critical_path_ratio_min']}, goal <= 1.05), "
        + (
            f"LangGraph ratio {result['langgraph_critical_path_ratio']} "
            f"(best {result['langgraph_critical_path_ratio_min']}), "
            if result["langgraph_critical_path_ratio"] is not None
            else ""
        )
        + f"bare asyncio {result['asyncio_critical_path_ratio']}"
    )
    lines.append(f"  peak RSS {result['peak_rss_mb']} MB")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions; finishes in under a minute")
    parser.add_argument("--skip-langgraph", action="store_true", help="measure moot alone (no peer columns)")
    parser.add_argument(
        "--width",
        type=int,
        default=WIDE_FAN_OUT,
        metavar="N",
        help=f"parallel tasks in the wide graph, before its one sink task (default {WIDE_FAN_OUT})",
    )
    args = parser.parse_args(argv)
    if args.width < 1:
        parser.error("--width must be at least 1")

    _ensure_langgraph(args.skip_langgraph)
    # Benchmark the moot of this working tree, whichever environment runs the script.
    sys.path.insert(0, str(ROOT / "src"))
    try:
        from moot.runtime import SubAgent, SubAgentTask, TaskGraph  # noqa: F401
    except ImportError as exc:
        print(f"error: moot's runtime is not importable from {ROOT / 'src'}: {exc}", file=sys.stderr)
        return 2

    result = asyncio.run(benchmark(quick=args.quick, skip_langgraph=args.skip_langgraph, width=args.width))
    print(_summary(result))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
