"""`moot graph` in a real subprocess, with the agents played by a model served over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from openai_stub import openai_compatible_server
from test_graph_support import GraphScript, make_sources

MOOT = [sys.executable, "-m", "moot"]
STAMP = re.compile(r"\[\d\d:\d\d:\d\d\] ")


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"),
           "COLUMNS": "200"}
    env.pop("MOOT_MODEL", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=120)


def http_answer(script: GraphScript):  # type: ignore[no-untyped-def]
    """The script behind an OpenAI-compatible server: the schema name picks the agent."""

    def answer(body: dict[str, Any]) -> str:
        if "response_format" not in body:  # a plain question: answered as a server that ignores logprobs
            return "yes"
        fmt = body["response_format"]["json_schema"]
        request = SimpleNamespace(output=SimpleNamespace(name=fmt["name"], json_schema=fmt["schema"]),
                                  messages=[SimpleNamespace(content=m["content"]) for m in body["messages"]])
        reply = asyncio.run(script(request))  # type: ignore[arg-type]
        return reply if isinstance(reply, str) else json.dumps(reply)

    return answer


def test_graph_json_out_graphml_and_runs_show(tmp_path: Path) -> None:
    nx = pytest.importorskip("networkx")
    sources = make_sources(tmp_path / "src")
    out = tmp_path / "graph.graphml"
    with openai_compatible_server(http_answer(GraphScript())) as model:
        done = moot("graph", "How does the Ostby mill affect Lake Mira?", "--source", str(sources[0]), "--source",
                    str(sources[1]), "--model", model, "--json", "--out", str(out), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(data) >= {"nodes", "edges", "gaps", "hypotheses", "noise", "iterations", "agents", "answer", "usage", "run_id"}
    kinds = {n["kind"] for n in data["nodes"]}
    assert kinds == {"entity", "placeholder"}
    entity = next(n for n in data["nodes"] if n["kind"] == "entity")
    assert set(entity) >= {"id", "label", "why_relevant", "confidence", "evidence"}
    assert set(data["noise"]) >= {"current", "target", "satisfied"} and data["noise"]["target"] == 0.25
    assert data["usage"]["requests"] > 0 and data["out"]["format"] == "graphml"
    g = nx.read_graphml(out)
    assert g.number_of_nodes() == len(data["nodes"]) and g.number_of_edges() == len(data["edges"])
    shown = moot("runs", "show", data["run_id"][:10], home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    for task in ("mapper-1-1", "quantifier-1", "skeptic-1", "hypothesizer"):
        assert task in shown.stdout


def test_graph_text_output_writes_mermaid(tmp_path: Path) -> None:
    sources = make_sources(tmp_path / "src")
    out = tmp_path / "graph.mmd"
    with openai_compatible_server(http_answer(GraphScript())) as model:
        done = moot("graph", "How does the Ostby mill affect Lake Mira?", "--source", str(sources[0]), "--model", model,
                    "--iterations", "1", "--out", str(out), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "noise" in done.stdout and "iteration limit (1)" in done.stdout
    assert out.read_text().startswith("flowchart LR")


@pytest.mark.parametrize("args, words", [
    ((), "no sources given"),
    (("--source", "MISSING.md"), "does not exist"),
    (("--source", "BINARY"), "binary file"),
    (("--source", "GOOD", "--out", "g.png"), ".json, .graphml or .mmd"),
    (("--source", "GOOD", "--noise-budget", "1.5"), "between 0 and 1"),
    (("--source", "GOOD", "--budget", "huge"), "unknown budget"),
    (("--source", "GOOD", "--vocabulary", "kin"), "use --vocabulary default or family"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: tuple[str, ...], words: str) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "g.md").write_text("The mill uses the river.\n")
    real = [str(tmp_path / "b.bin") if a == "BINARY" else str(tmp_path / "g.md") if a == "GOOD"
            else str(tmp_path / a) if a.endswith((".md", ".png")) else a for a in args]
    done = moot("graph", "How?", *real, "--model", "openai-compatible:http://127.0.0.1:9/v1#m", home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip() and not STAMP.match(line)]  # progress lines are stamped
    assert words in done.stderr and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr


def test_graph_family_vocabulary_is_asked_plainly_through_a_server_that_sends_odds(tmp_path: Path) -> None:
    """CLI, registry, OpenAI-compatible provider, first-token odds and the plain choices, end to end."""
    (tmp_path / "family.md").write_text("Mateo is married to Ingrid. They have a child called Tomas.\n")
    truth = {("married", "Mateo", "Ingrid"), ("married", "Ingrid", "Mateo"), ("child", "Tomas", "Mateo"), ("child", "Tomas", "Ingrid")}
    sex = {"Mateo": "man", "Ingrid": "woman", "Tomas": "man"}
    asked: list[str] = []

    def odds(body: dict[str, Any]) -> dict[str, float]:
        question = body["messages"][-1]["content"].splitlines()[-1]
        asked.append(question)
        if m := re.match(r"Is (\w+) a man or a woman\?", question):
            return {sex[m[1]]: -0.1, "woman" if sex[m[1]] == "man" else "man": -2.5}
        if m := re.match(r"Are (\w+) and (\w+) married to each other\?", question):
            yes = ("married", m[1], m[2]) in truth
        elif m := re.match(r"Is (\w+) a child of (\w+)\?", question):
            yes = ("child", m[1], m[2]) in truth
        else:
            yes = False
        return {"yes": -0.2, "no": -1.8} if yes else {"yes": -1.8, "no": -0.2}

    with openai_compatible_server(lambda body: "x", odds=odds) as model:
        done = moot("graph", "What is Tomas to Ingrid?", "--source", str(tmp_path / "family.md"), "--vocabulary", "family",
                    "--budget", "calls=40", "--model", model, "--json", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    names = {n["id"]: n["label"] for n in payload["nodes"]}
    assert {n["label"]: n["entity_type"] for n in payload["nodes"]} == sex
    edges = {(names[e["source"]], e["type"], names[e["target"]]) for e in payload["edges"]}
    assert edges == {("Mateo", "married_to", "Ingrid"), ("Mateo", "parent_of", "Tomas"), ("Ingrid", "parent_of", "Tomas")}
    assert sum("a man or a woman" in q for q in asked) == 3 and not any(q.startswith("Is child") for q in asked)
