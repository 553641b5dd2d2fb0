"""`moot deliberate` in a real subprocess, with the agents played by a model served over loopback
HTTP: the --json shape in the design's field names, feedback, runs show, and bad input as one line."""

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

from openai_stub import openai_compatible_server
from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators

MOOT = [sys.executable, "-m", "moot"]


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "COLUMNS": "200"}
    env.pop("MOOT_MODEL", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=120)


def http_answer(script: Deliberators):  # type: ignore[no-untyped-def]
    def answer(body: dict[str, Any]) -> str:
        fmt = body["response_format"]["json_schema"]
        request = SimpleNamespace(agent="", output=SimpleNamespace(name=fmt["name"], json_schema=fmt["schema"],
                                                         description=fmt.get("description", "")),
                                  messages=[SimpleNamespace(content=m["content"]) for m in body["messages"]])
        reply = asyncio.run(script(request))  # type: ignore[arg-type]
        return reply if isinstance(reply, str) else json.dumps(reply)

    return answer


def test_json_shape_feedback_and_runs_show(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = Deliberators(unnamed=[("do", "", "high", 70), ("shorten", "", "high", 80)])
    with openai_compatible_server(http_answer(script)) as model:
        done = moot("deliberate", REQUEST, "--data", str(SLEEP_VS_DEADLINE), "--now", NOW, "--model", model, "--json", home=home)
        human = moot("deliberate", REQUEST, "--data", str(SLEEP_VS_DEADLINE), "--now", NOW, "--model", model, home=home)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(data) >= {"coordinators", "insights", "conflicts", "debates", "votes", "stop_reason", "usage", "run_id"}
    insight = data["insights"][0]
    assert set(insight) >= {"insight_id", "agent", "recommendation", "impact", "confidence", "adjusted_confidence",
                            "low_consensus", "evidence"}
    [debate] = data["debates"]
    assert [r["round_type"] for r in debate["rounds"]] == ["position", "evidence", "compromise", "validation"]
    assert debate["resolution"]["compromise_type"] == "time_split" and debate["resolution"]["accepted"] is True
    assert data["conflicts"][0]["type"] == "contradiction" and "agent_a" in data["conflicts"][0]
    # the reader, which option is a sport, 4 specialists, the moderator, the two sides' votes
    assert data["usage"]["requests"] == 9
    assert data["decision"]["what"].startswith("Do 'keep working tonight', shortened to Tue 20:30–22:30")
    # the human view opens with the decision, then names the debate and how to give feedback
    assert human.returncode == 0, human.stderr
    assert human.stdout.startswith("Do 'keep working tonight'"), human.stdout[:200]
    assert "Debate c1" in human.stdout and "agreed (time_split)" in human.stdout and "moot deliberate feedback" in human.stdout
    fb = moot("deliberate", "feedback", data["run_id"][:10], "--reject", "--json", home=home)
    assert fb.returncode == 0, fb.stderr
    assert json.loads(fb.stdout) == {"run_id": data["run_id"], "decision": "rejected", "insights": ["r-c1"]}
    shown = moot("runs", "show", data["run_id"][:10], "--json", home=home)
    assert shown.returncode == 0 and "c1.r3" in shown.stdout


def test_bad_input_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        (["deliberate", "Should I rest?", "--data", str(empty)], "is empty"),
        (["deliberate", "Should I rest?", "--data", str(tmp_path / "missing")], "does not exist"),
        (["deliberate", "Should I rest?"], "--data DIR"),
        (["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--mode", "turbo"], "quick, standard or deep"),
        (["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--budget", "turbo"], "quick, standard or deep"),
        # --budget's preset is the size; the older --mode may not contradict it
        (["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--mode", "quick", "--budget", "deep,calls=9"],
         "name different sizes"),
        (["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--budget", "tokens=900"], "calls and seconds only"),
        (["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--now", "yesterday"], "--now 2026-11-24T20:00"),
        (["deliberate", "feedback", "abc", "--accept"], "no deliberation with run id"),
        (["deliberate", "feedback", "abc"], "--accept or --reject"),
    ]
    roster = tmp_path / "r.toml"
    roster.write_text('[[coordinator]]\ndomain = "x"\n[[coordinator.specialist]]\nname = "y"\nreads = ["fitbit"]\n')
    cases.append((["deliberate", "Should I rest?", "--data", str(SLEEP_VS_DEADLINE), "--roster", str(roster)], "unknown data kind"))
    for args, expected in cases:
        done = moot(*args, home=home)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and expected in done.stderr, (args, done.stderr)
        errors = [line for line in done.stderr.splitlines() if line.strip() and not re.match(r"\[\d\d:\d\d:\d\d\] ", line)]
        assert len(errors) == 1, done.stderr  # besides the timestamped progress line of a pipe


def test_eval_scenarios_compares_the_team_with_one_call_and_self_consistency(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # the stub does not know each scenario's options: the reader's "do my" has no word of substance and is
    # dropped, so the calendar's events in the decision window become the options
    script = Deliberators(reading=[("do my", "", "")], unnamed=[("skip", "", "high", 80)])
    with openai_compatible_server(http_answer(script)) as model:
        done = moot("eval", "deliberation", "--scenarios", "2", "--budget", "quick", "--model", model, "--json",
                    "--out", str(tmp_path / "rows.json"), home=home)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert set(summary) == {"team (quick)", "one call", "self-consistency"}
    assert summary["team (quick)"]["calls"] <= 4 and summary["one call"]["calls"] == 1
    # self-consistency gets as many calls as the team used on each scenario
    assert summary["self-consistency"]["calls"] == summary["team (quick)"]["calls"]
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert {r["gold"] for r in rows} == {"A", "B"} and all(r["decision"] == "both" for r in rows if r["system"] == "one call")
    # "41 %" is in neither scenario's data: the baseline's answer is not grounded
    assert summary["one call"]["grounded"] == 0.0
    # --team-only: the team's rows alone, the baselines not asked
    before = len(script.calls)
    assert any(kind == "OneCallDecision" for kind, _ in script.calls)  # the full run asked the baselines
    with openai_compatible_server(http_answer(script)) as model:
        done = moot("eval", "deliberation", "--scenarios", "2", "--budget", "quick", "--model", model, "--json", "--team-only",
                    home=home)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert set(summary) == {"team (quick)"}
    assert not any(kind == "OneCallDecision" for kind, _ in script.calls[before:])  # the baselines were never asked
