"""The README's first command as a new user meets it: from a fresh clone, set-up included.

The command is read from README.md (the ``bash`` block after "Run the example"), split at its
``&&`` and each step timed on its own, in a fresh ``git clone`` of this checkout, with a new
``MOOT_HOME`` (so the embedded model's weights are assembled and verified again) and the shared
engine of that home not yet running. What the machine cannot change is measured beside it, so two
runs on two machines can be compared: the engine's own prompt-evaluation and generation speed on
one fixed request (the bundled articles as the prompt), read from its timings.

By default the package caches of this machine are used as ``scripts/setup`` finds them;
``--cold-cache`` gives uv and pip new, empty caches, so every package is fetched from the index
again, as on a machine that never installed moot.

    python bench/first_run.py --quick    # this checkout's .venv, learn and ask only (about a minute)
    python bench/first_run.py            # fresh clone: set-up, learn, ask
    python bench/first_run.py --cold-cache   # the same with empty package caches

Prints one JSON object as its last line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def readme_command(readme: Path) -> str:
    """The shell command of the README's "Run the example" block."""
    text = readme.read_text(encoding="utf-8")
    match = re.search(r"\*\*Run the example\*\*.*?```bash\n(.*?)\n```", text, re.S)
    if match is None:
        raise SystemExit("README.md has no ```bash block after 'Run the example'")
    return match.group(1).strip()


def steps(command: str) -> list[str]:
    """The command's steps, in order (it is a chain of ``&&``)."""
    return [part.strip() for part in command.split("&&") if part.strip()]


def run_step(step: str, cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Seconds the step took, and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(["bash", "-c", step], cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"step failed ({done.returncode}): {step}: {(done.stderr or done.stdout).strip()[-400:]}")
    return round(seconds, 1), done.stdout


def answer_line(printed: str) -> str:
    """The answer of ``moot ask``'s output: its first line that is not progress or a cited fact."""
    return next((line for line in printed.splitlines() if line.strip() and not line.startswith(("[", " "))), "")


CALIBRATION = """
import asyncio, json, time
from pathlib import Path
from moot.models.base import ModelRequest, ModelSettings, UserMessage
from moot.models.registry import infer_model
from moot.models.testing import allow_real_requests
from moot.models.timing import RequestClock, timed_by

async def main():
    articles = sorted(Path("examples/learning/articles").glob("*.md"))
    prompt = "\\n\\n".join(p.read_text(encoding="utf-8") for p in articles) + "\\n\\nSummarise these articles."
    model = infer_model("local")
    clock = RequestClock()
    # A salt the engine has not seen, so its prefix cache cannot skip the prompt.
    request = ModelRequest(messages=(UserMessage(content=f"calibration {time.time_ns()}\\n{prompt}"),),
                           settings=ModelSettings(max_tokens=96, temperature=0.0))
    with timed_by(clock):
        response = await model.request(request)
    await model.aclose()
    print(json.dumps({"prompt_tokens": response.usage.input_tokens, "generated_tokens": response.usage.output_tokens,
                      "prompt_s": clock.prompt_s, "generation_s": clock.generation_s}))

with allow_real_requests():
    asyncio.run(main())
"""


def calibrate(python: Path, cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """The engine's prompt and generation speed on one fixed request (the bundled articles, read
    in ``cwd`` by the calibration script itself)."""
    done = subprocess.run([str(python), "-c", CALIBRATION], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"calibration failed: {done.stderr.strip()[-400:]}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "prompt_tokens": raw["prompt_tokens"],
        "prompt_tok_s": round(raw["prompt_tokens"] / raw["prompt_s"], 1) if raw["prompt_s"] else None,
        "generated_tokens": raw["generated_tokens"],
        "generation_tok_s": round(raw["generated_tokens"] / raw["generation_s"], 1) if raw["generation_s"] else None,
    }


def stop_engine(python: Path, cwd: Path, env: dict[str, str]) -> None:
    subprocess.run([str(python.with_name("moot")), "engine", "stop"], cwd=cwd, env=env, capture_output=True, timeout=120)


def main(quick: bool, cold_cache: bool = False) -> dict[str, Any]:
    command = readme_command(ROOT / "README.md")
    chain = steps(command)
    work = Path(tempfile.mkdtemp(prefix="moot-first-run-"))
    home = work / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("MOOT_LOCAL_ENGINE", "MOOT_MODEL")}
    env |= {"MOOT_HOME": str(home), "MOOT_ENGINE_DIR": str(work / "engine")}
    if cold_cache:
        env |= {"UV_CACHE_DIR": str(work / "uv-cache"), "PIP_CACHE_DIR": str(work / "pip-cache")}
    if quick:
        # This checkout's environment; the set-up step is left out.
        cwd, python = ROOT, ROOT / ".venv" / "bin" / "python"
        chain = [s for s in chain if not s.startswith("scripts/setup")]
        # The weights are assembled into the new home untimed, as the left-out set-up would.
        subprocess.run([str(python.with_name("moot")), "setup"], cwd=cwd, env=env, capture_output=True, check=True, timeout=900)
    else:
        cwd = work / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(cwd)], check=True, timeout=600)
        python = cwd / ".venv" / "bin" / "python"
    timings: list[dict[str, Any]] = []
    printed = ""
    try:
        for step in chain:
            seconds, printed = run_step(step, cwd, env)
            timings.append({"step": step, "seconds": seconds})
        machine_speed = calibrate(python, cwd, env)
    finally:
        if python.exists():
            stop_engine(python, cwd, env)
    learn_ask = sum(t["seconds"] for t in timings if re.search(r"moot (learn|ask)\b", t["step"]))
    report = {
        "benchmark": "first_run",
        "quick": quick,
        "cold_cache": cold_cache,
        "readme_command": command,
        "steps": timings,
        "learn_plus_ask_s": round(learn_ask, 1),
        "total_s": round(sum(t["seconds"] for t in timings), 1),
        "answer": answer_line(printed)[:300],
        "engine_speed": machine_speed,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    shutil.rmtree(work, ignore_errors=True)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="this checkout's .venv; learn and ask only")
    parser.add_argument("--cold-cache", action="store_true", help="empty package caches for the set-up")
    options = parser.parse_args()
    load_before = os.getloadavg()[0]
    result = main(options.quick, options.cold_cache)
    result["load_average_1m"] = {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)}
    sys.stdout.write(json.dumps(result) + "\n")
