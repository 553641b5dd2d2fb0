"""`moot ui`, `moot serve` and `--record-content` as a user runs them: real subprocesses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from moot.runtime import RunStore
from openai_stub import openai_compatible_server
from test_graph_cli import http_answer
from test_graph_support import GraphScript, make_sources
from web_support import free_port

MOOT = [sys.executable, "-m", "moot"]


def env_for(home: Path) -> dict[str, str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "COLUMNS": "200"}
    env.pop("MOOT_MODEL", None)
    env.pop("MOOT_SERVE_TOKEN", None)
    return env


def test_record_content_keeps_prompts_and_answers_only_when_asked(tmp_path: Path) -> None:
    sources = make_sources(tmp_path / "src")
    home = tmp_path / "home"
    ids = {}
    with openai_compatible_server(http_answer(GraphScript())) as model:
        for flag in ("", "--record-content"):
            args = [*MOOT, "graph", "How does the Ostby mill affect Lake Mira?", "--source", str(sources[0]),
                    "--source", str(sources[1]), "--model", model, "--json", *([flag] if flag else [])]
            done = subprocess.run(args, capture_output=True, text=True, env=env_for(home), timeout=120)
            assert done.returncode == 0, done.stderr
            import json

            ids[flag] = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
    store = RunStore(home / "runs.sqlite3")
    try:
        def texts(run_id: str) -> list[str]:
            return [e.payload["text"] for e in store.events(run_id) if e.type.value == "model_response" and "text" in e.payload]

        assert texts(ids[""]) == []  # off by default: nothing the model said is stored
        recorded = texts(ids["--record-content"])
        assert recorded and any("Ostby" in t for t in recorded)
        assert any("messages" in e.payload for e in store.events(ids["--record-content"]) if e.type.value == "model_request")
    finally:
        store.close()


def test_moot_ui_serves_the_page_on_loopback_without_a_browser(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([*MOOT, "ui", "--no-browser", "--port", str(port)], env=env_for(tmp_path / "home"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert page.status_code == 200 and "/static/app.js" in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/api/runs").json()["total"] == 0
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert f"http://127.0.0.1:{port}/" in err


def test_a_port_in_use_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*MOOT, "serve", "--port", str(port)], capture_output=True, text=True,
                              env=env_for(tmp_path / "home"), timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
