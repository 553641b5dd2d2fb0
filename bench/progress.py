"""Seconds from starting a team command to its first progress line on stderr, with stderr a pipe
(as in CI or `moot … 2>&1 | tee log`), for ask, research, graph, deliberate, learn and board worker.

The model is an OpenAI-compatible server on loopback that answers at once, so what is measured
is moot's own start (imports, reading the input, building the run) and not a model; the goal
(issue #35) is under 2 s for every command. Each command is started ``--repeat`` times; the
median and the worst are reported. The commands run to their end; their answers are not scored.

    .venv/bin/python bench/progress.py --quick

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 2.0


@contextmanager
def instant_model() -> Iterator[str]:
    """An OpenAI-compatible server on loopback (the tests' own) that answers every request at once."""
    sys.path.insert(0, str(ROOT / "tests"))
    from openai_stub import openai_compatible_server

    with openai_compatible_server(lambda body: "{}") as model:
        yield model


def commands(model: str, work: Path) -> dict[str, list[str]]:
    articles = sorted((ROOT / "examples" / "learning" / "articles").glob("*.md"))
    return {
        "learn": ["learn", str(articles[0]), "--kb", str(work / "learned.sqlite3"), "--model", model],
        "ask": ["ask", "What is the budget?", "--kb", str(work / "kb.sqlite3"), "--model", model, "--budget", "calls=3"],
        "research": ["research", "How is a run recorded?", "--repo", str(ROOT / "src" / "moot" / "runtime"),
                     "--db", str(work / "index.db"), "--model", model, "--budget", "calls=4"],
        "graph": ["graph", "How does the clean-up spend its money?", "--source", *map(str, articles[:2]),
                  "--model", model, "--budget", "quick,calls=4"],
        "deliberate": ["deliberate", "Should I keep working tonight?", "--data",
                       str(ROOT / "examples" / "deliberation" / "sleep-vs-deadline"), "--model", model, "--budget", "calls=4"],
        "board worker": ["board", "worker", str(work / "board"), "--agent", "echo", "--until-idle", "--idle-grace", "0"],
    }


def first_line_seconds(args: list[str], env: dict[str, str]) -> tuple[float | None, int]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "moot", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    seconds = time.perf_counter() - started if first.startswith("[") else None
    proc.stderr.read()
    proc.wait(timeout=300)
    return seconds, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one start per command (under a minute)")
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    repeat = 1 if opts.quick else opts.repeat
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp, instant_model() as model:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_")}
        env.update({"MOOT_HOME": str(work / "home"), "MOOT_RUNS_DB": str(work / "runs.sqlite3"), "MOOT_CONFIG": ""})
        from moot.memory import Fact, KnowledgeBase

        with KnowledgeBase.open(work / "kb.sqlite3") as kb:  # for `ask`: one fact, stored without a model
            text = "The Marrow River Cleanup has a budget of 2.4 million pounds."
            kb.store_source("bench", [(text, [Fact(text, entity="Marrow River Cleanup")])], published="2025-06-01")
        from moot.teams.board import BoardTask
        from moot.teams.board.folder import FolderBoard

        board = FolderBoard(work / "board")  # for `board worker`: one task for the echo agent
        board.init()
        board.submit(BoardTask(description="say hello"))
        for name, args in commands(model, work).items():
            times: list[float] = []
            codes: list[int] = []
            for _ in range(repeat):
                seconds, code = first_line_seconds(args, env)
                codes.append(code)
                if seconds is not None:
                    times.append(seconds)
            results[name] = {
                "median_s": round(statistics.median(times), 3) if times else None,
                "worst_s": round(max(times), 3) if times else None,
                "starts": repeat, "timestamped_first_line": len(times), "exit_codes": sorted(set(codes)),
            }
            print(f"{name:11} first line median {results[name]['median_s']} s, worst {results[name]['worst_s']} s "
                  f"({len(times)}/{repeat} timestamped)", file=sys.stderr)
    floor = []
    for _ in range(repeat):  # the floor on this machine now: Python starting moot and printing its version
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "moot", "--version"], capture_output=True, env=os.environ.copy(), check=True)
        floor.append(time.perf_counter() - started)
    results["moot --version (floor)"] = {"median_s": round(statistics.median(floor), 3), "worst_s": round(max(floor), 3),
                                         "starts": repeat, "timestamped_first_line": repeat, "exit_codes": [0]}
    teams = {k: v for k, v in results.items() if "floor" not in k}
    worst = max((r["worst_s"] for r in teams.values() if r["worst_s"] is not None), default=None)
    print(json.dumps({"bench": "progress", "goal_s": GOAL_S, "commands": results, "worst_s": worst,
                      "all_within_goal": worst is not None and worst < GOAL_S
                      and all(r["timestamped_first_line"] == r["starts"] for r in teams.values()),
                      "cpus": os.cpu_count(), "python": platform.python_version()}))


if __name__ == "__main__":
    main()
