"""The CLI as a script uses it (issue #22): exit codes, one JSON object, one meaning per option,
settings from moot.toml, and the defects a new user met — each in a real subprocess.

Models are OpenAI-compatible servers on loopback (tests/openai_stub.py) or a closed port: no
network, no key, no embedded model.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from learning_support import label_body
import pytest
from openai_stub import openai_compatible_server

from moot.cli._options import parse_budget, parse_models
from moot.errors import UsageError
from moot.memory import Fact, KnowledgeBase

MOOT = [sys.executable, "-m", "moot"]


def moot(*args: str, home: Path, cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_") and not k.endswith("_API_KEY")}
    full.update({"MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"),
                 "MOOT_CONFIG": "", "XDG_CONFIG_HOME": str(home / "xdg")})
    full.update(env or {})
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=full, cwd=cwd or home.parent,
                          timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "fix:" in lines[0] and "Traceback" not in result.stderr
    return lines[0]


def closed_port_model() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"openai-compatible:http://127.0.0.1:{port}/v1#m"


# --------------------------------------------------------------------------- parsing, once


def test_budget_parses_a_preset_and_limits_into_one_meaning() -> None:
    assert parse_budget("deep").budget().max_calls == 20
    choice = parse_budget("deep,seconds=300,calls=30")
    assert (choice.preset, choice.max_calls, choice.deadline_s) == ("deep", 30, 300.0)
    assert choice.budget().deadline_s == 300.0 and choice.budget().max_calls == 30
    assert parse_budget("calls=8").preset == "standard" and parse_budget("usd=0.5").max_cost_usd == 0.5
    # a team with one size: quick halves it, deep doubles it, given limits win
    assert parse_budget("quick").scaled({"max_calls": 40, "deadline_s": None}) == {"max_calls": 20, "deadline_s": None}
    assert parse_budget("deep,calls=7").scaled({"max_calls": 40})["max_calls"] == 7
    for bad in ("huge", "calls=many", "calls=0", "minutes=3"):
        with pytest.raises(UsageError):
            parse_budget(bad)


def test_model_option_parses_a_default_and_models_per_role() -> None:
    choice = parse_models(["openai:gpt-4o-mini", "synthesizer=openai:gpt-4o", "planner=local"])
    assert choice.default == "openai:gpt-4o-mini"
    assert choice.roles == {"synthesizer": "openai:gpt-4o", "planner": "local"}
    # '=' after the provider's colon is part of a URL, not a role
    url = "openai-compatible:http://h:1/v1?a=b#m"
    assert parse_models([url]).default == url and parse_models([url]).roles == {}
    assert parse_models(None).default is None
    with pytest.raises(UsageError):
        parse_models(["local", "openai:gpt-4o"])  # two defaults
    with pytest.raises(UsageError):
        parse_models(["planner="])


# --------------------------------------------------------------------------- exit codes, --json


def test_a_usage_mistake_exits_2_and_json_prints_one_error_object(tmp_path: Path) -> None:
    plain = moot("ask", "Why?", "--kb", "river", "--budget", "huge", home=tmp_path / "home")
    assert plain.returncode == 2
    assert "unknown budget 'huge'" in one_error_line(plain) and plain.stdout == ""
    as_json = moot("ask", "Why?", "--kb", "river", "--budget", "huge", "--json", home=tmp_path / "home")
    assert as_json.returncode == 2
    lines = as_json.stdout.strip().splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])
    assert error["exit_code"] == 2 and "unknown budget" in error["error"] and "--budget" in error["fix"]
    typer_mistake = moot("runs", "--nonsense", "--json", home=tmp_path / "home")
    assert typer_mistake.returncode == 2 and json.loads(typer_mistake.stdout)["exit_code"] == 2


def test_an_answer_the_team_could_not_complete_exits_1(tmp_path: Path) -> None:
    kb = tmp_path / "games.sqlite3"
    with KnowledgeBase.open(kb) as base:
        base.add_fact(Fact("Norway won 12 gold medals.", entity="Norway", attribute="gold medals", value="12", source="games"))

    def empty_answers(body: dict[str, Any]) -> str:
        if "response_format" in body:
            return json.dumps({"intent": "recall", "entities": ["Norway"]})
        return ""  # no agent ever produces an answer

    with openai_compatible_server(empty_answers) as model:
        result = moot("ask", "How many gold medals did Norway win?", "--kb", str(kb), "--model", model,
                      "--mode", "single", "--json", home=tmp_path / "home")
    assert result.returncode == 1, result.stderr
    answer = json.loads(result.stdout)
    assert answer["answered"] is False and "Norway won 12 gold medals" in answer["answer"]


def test_moot_models_checks_only_the_model_asked_for_and_exits_1_when_it_fails(tmp_path: Path) -> None:
    dead = closed_port_model()
    listed = moot("models", "--model", dead, "--no-check", "--json", home=tmp_path / "home")
    assert listed.returncode == 0, listed.stderr
    assert [row["model"] for row in json.loads(listed.stdout)["models"]] == [dead]  # not the default too
    checked = moot("models", "--model", dead, "--timeout", "5", "--json", home=tmp_path / "home")
    assert checked.returncode == 1
    report = json.loads(checked.stdout)
    assert report["ok"] is False and report["models"][0]["ok"] is False


# --------------------------------------------------------------------------- the listed defects


def test_an_unusable_runs_db_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    result = moot("runs", home=tmp_path / "home", env={"MOOT_RUNS_DB": "/proc/x.db"})
    assert result.returncode == 2
    assert "MOOT_RUNS_DB" in one_error_line(result)


def test_an_unusable_moot_home_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.md"
    tiny.write_text("Norway won 12 gold medals.\n")
    result = moot("learn", str(tiny), "--kb", "t", home=Path("/proc/x"), cwd=tmp_path)
    assert result.returncode == 2
    assert "MOOT_HOME" in one_error_line(result)


def test_board_submit_with_only_a_description_says_the_folder_comes_first(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = moot("board", "submit", "do a thing", home=tmp_path / "home", cwd=work)
    assert result.returncode == 2
    assert "the folder comes first" in one_error_line(result)
    assert list(work.iterdir()) == []  # no board folder named after the description


def test_board_names_its_postgres_option_for_the_old_db_use(tmp_path: Path) -> None:
    result = moot("board", "status", "--db", "postgresql://u@127.0.0.1:9/b", home=tmp_path / "home")
    assert result.returncode == 2
    assert "--postgres postgresql://u@127.0.0.1:9/b" in one_error_line(result)


def test_runs_with_limit_zero_is_a_usage_mistake_not_an_empty_store(tmp_path: Path) -> None:
    result = moot("runs", "-n", "0", home=tmp_path / "home")
    assert result.returncode == 2
    line = one_error_line(result)
    assert "--limit 1" in line and "no runs" not in line


def test_eval_json_with_a_file_names_out(tmp_path: Path) -> None:
    result = moot("eval", "research", "--json", "r.json", home=tmp_path / "home")
    assert result.returncode == 2
    assert "--out r.json" in one_error_line(result)


def test_a_bare_model_name_gets_did_you_mean(tmp_path: Path) -> None:
    result = moot("chat", "hi", "--model", "gpt-4o", home=tmp_path / "home")
    assert result.returncode == 2
    assert "did you mean `openai:gpt-4o`?" in one_error_line(result)


def test_a_role_model_on_a_command_with_one_model_is_refused(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.md"
    tiny.write_text("Norway won 12 gold medals.\n")
    result = moot("learn", str(tiny), "--kb", "t", "--model", "extractor=local", home=tmp_path / "home")
    assert result.returncode == 2
    assert "takes one model for every role" in one_error_line(result)


# --------------------------------------------------------------------------- kb list, completion


def test_kb_list_shows_the_named_knowledge_bases(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = moot("kb", "list", "--json", home=home)
    assert empty.returncode == 0 and json.loads(empty.stdout)["knowledge_bases"] == []
    (home / "kb").mkdir(parents=True)
    with KnowledgeBase.open(home / "kb" / "olympics.sqlite3") as base:
        base.add_fact(Fact("Norway won 12 gold medals.", entity="Norway", attribute="gold", value="12", source="games"))
    (home / "kb" / "broken.sqlite3").write_text("not a database")
    listed = moot("kb", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)["knowledge_bases"]}
    assert rows["olympics"]["facts"] == 1 and rows["olympics"]["sources"] == 1 and rows["olympics"]["error"] is None
    assert rows["broken"]["error"]  # one damaged file is reported, not fatal
    table = moot("kb", "list", home=home)
    assert "olympics" in table.stdout and "broken" in table.stdout


def test_shell_completion_completes_commands(tmp_path: Path) -> None:
    env = {"_MOOT_COMPLETE": "complete_bash", "COMP_WORDS": "moot kb ", "COMP_CWORD": "2"}
    result = moot(home=tmp_path / "home", env=env)
    assert result.returncode == 0
    assert {"list", "stats", "facts", "consolidate"} <= set(result.stdout.split())
    # the script `--install-completion` writes (asked for directly: `--show-completion` detects the
    # shell from the parent processes, which is `sh` under some CI runners)
    script = moot(home=tmp_path / "home", env={"_MOOT_COMPLETE": "source_bash"})
    assert script.returncode == 0 and "_moot_completion" in script.stdout


# --------------------------------------------------------------------------- learn in a pipe


def test_learn_reports_each_file_as_it_finishes_and_logs_plain_lines_in_a_pipe(tmp_path: Path) -> None:
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text("The Kestrel footbridge is 214 metres long.\n")
    second.write_text("The Kestrel footbridge opened in 2024.\n")

    def extract(body: dict[str, Any]) -> str:
        labels = label_body(body)
        if labels is not None:
            return labels
        system, task = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You extract facts"):
            sentence = task.split("Text:", 1)[1].strip()
            return json.dumps({"facts": [{"content": sentence, "entity": "Kestrel footbridge",
                                          "attribute": "length" if "214" in sentence else "opened", "value": sentence}]})
        return "A footbridge."

    with openai_compatible_server(extract) as model:
        result = moot("learn", str(first), str(second), "--kb", "bridge", "--model", model, "--parallel", "1",
                      home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    log = result.stderr
    assert "first.md (1/2): extracting" in log and "facts so far" in log
    # the first file's result is out before the second file starts
    assert log.index("first.md (1/2) done: 1 new facts") < log.index("learning second.md (2/2)")
    assert "first.md" in result.stdout and "second.md" in result.stdout and "1 new facts" in result.stdout
    # one parent run for the command holds each file's run
    from moot.runtime import RunStore

    store = RunStore(tmp_path / "home" / "runs.sqlite3")
    [parent] = store.list_runs(top_level=True)
    assert parent.name == "learn 2 files into bridge.sqlite3" and parent.status == "completed"
    assert sorted(r.name for r in store.children(parent.id)) == ["learn first.md", "learn second.md"]
    assert parent.usage.requests == sum(r.usage.requests for r in store.children(parent.id)) > 0
    listed = json.loads(moot("runs", "--json", home=tmp_path / "home").stdout)["runs"]
    assert [(r["name"], r["runs_held"]) for r in listed] == [("learn 2 files into bridge.sqlite3", 2)]
    assert len(json.loads(moot("runs", "--all", "--json", home=tmp_path / "home").stdout)["runs"]) == 3
    shown = moot("runs", "show", parent.id[:8], home=tmp_path / "home")
    assert shown.returncode == 0 and "runs held by this run (2)" in shown.stdout and "learn second.md" in shown.stdout


# --------------------------------------------------------------------------- moot.toml


def test_moot_toml_sets_defaults_the_environment_wins_and_moot_config_says_where(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "moot.toml").write_text('model = "ollama:llama3.2"\nlocal_slots = 2\n')
    shown = moot("config", "--json", home=tmp_path / "home", cwd=project / "sub")  # found in a parent folder
    assert shown.returncode == 0, shown.stderr
    settings = {s["name"]: s for s in json.loads(shown.stdout)["settings"]}
    assert json.loads(shown.stdout)["file"] == str(project / "moot.toml")
    assert settings["model"]["value"] == "ollama:llama3.2" and settings["model"]["source"] == str(project / "moot.toml")
    assert settings["local_slots"]["value"] == 2
    assert settings["home"]["source"] == "environment"
    overridden = moot("config", "--json", home=tmp_path / "home", cwd=project, env={"MOOT_MODEL": "openai:gpt-4o"})
    model = next(s for s in json.loads(overridden.stdout)["settings"] if s["name"] == "model")
    assert model == {"name": "model", "env": "MOOT_MODEL", "value": "openai:gpt-4o", "source": "environment"}
    # the file's model is what a command uses
    listed = moot("models", "--no-check", "--json", home=tmp_path / "home", cwd=project)
    assert json.loads(listed.stdout)["default"] == "ollama:llama3.2"


def test_a_mistake_in_moot_toml_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "moot.toml").write_text('modle = "local"\n')
    result = moot("runs", home=tmp_path / "home", cwd=tmp_path)
    assert result.returncode == 2
    assert "did you mean 'model'?" in one_error_line(result)
    (tmp_path / "moot.toml").write_text('local_slots = "many"\n')
    result = moot("runs", home=tmp_path / "home", cwd=tmp_path)
    assert result.returncode == 2 and "local_slots" in one_error_line(result)


def test_eval_without_the_charts_extra_names_it_before_any_work(tmp_path: Path) -> None:
    # matplotlib hidden, as in an install without the charts extra
    code = ("import sys; sys.modules['matplotlib'] = None; from moot.cli.app import main; "
            "main(['eval', 'progressive', '--levels', 'L1'])")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MOOT_")}, "MOOT_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert "moot[charts]" in one_error_line(result)
    assert not list(tmp_path.glob("moot-eval-*"))  # refused before anything was written


def test_model_per_role_reaches_the_team(tmp_path: Path) -> None:
    """The default model is a dead endpoint; the roles that answer get a working one: the
    answer comes through only if --model ROLE=MODEL reached the team."""
    kb = tmp_path / "games.sqlite3"
    with KnowledgeBase.open(kb) as base:
        base.add_fact(Fact("Norway won 12 gold medals.", entity="Norway", attribute="gold medals", value="12", source="games"))

    def answer(body: dict[str, Any]) -> str:
        if "response_format" in body:
            return json.dumps({"intent": "recall", "entities": ["Norway"]})
        return "Norway won 12 gold medals [#1]."

    with openai_compatible_server(answer) as working:
        result = moot("ask", "How many gold medals did Norway win?", "--kb", str(kb), "--mode", "single", "--json",
                      "--model", closed_port_model(), "--model", f"single={working}", "--model", f"frame={working}",
                      home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["answered"] is True and payload["answer"] == "Norway won 12 gold medals [#1]."
    unknown = moot("ask", "Why?", "--kb", str(kb), "--model", "painter=local", home=tmp_path / "home")
    assert unknown.returncode == 2 and "painter" in one_error_line(unknown)


# ------------------------------------------------------------------ default budgets fit the model


def test_default_budget_deadline_fits_a_model_on_this_machine(tmp_path: Path) -> None:
    from moot.runtime import Budget
    from moot.runtime.budget import LOCAL_DEADLINE_FACTOR
    from moot.teams.learning.team import LearningTeam

    standard = Budget.preset("standard").deadline_s
    # the embedded model on two cores takes 10-60 s a call: `moot ask` must not stop at 30 s
    assert parse_budget(None).budget(model="local").deadline_s == standard * LOCAL_DEADLINE_FACTOR
    assert parse_budget(None).budget(model=None).deadline_s == standard * LOCAL_DEADLINE_FACTOR  # default: local
    assert parse_budget(None).budget(model="openai:gpt-4o").deadline_s == standard
    # seconds the user gave always win
    assert parse_budget("standard,seconds=30").budget(model="local").deadline_s == 30
    assert LearningTeam(tmp_path / "kb.sqlite3", budget="standard", store=False).budget.deadline_s == standard * LOCAL_DEADLINE_FACTOR
    assert LearningTeam(tmp_path / "kb.sqlite3", model="openai:gpt-4o", budget="standard", store=False).budget.deadline_s == standard


async def test_runs_show_sums_a_running_parent_over_the_runs_it_holds(tmp_path: Path) -> None:
    from moot.models.testing import ScriptedModel
    from moot.runtime import Budget, Run, RunStore, SubAgent
    from moot.runtime.events import Event, EventType

    home = tmp_path / "home"
    store = RunStore(home / "runs.sqlite3")
    store.start_run("parent0001", "learn 2 files into k.sqlite3")
    async with Run("learn first.md", Budget(), store=store, parent_run_id="parent0001") as done:  # ended: its row holds usage
        await done.step("extract", SubAgent("extractor", model=ScriptedModel(["ok", "ok"])), "read it")
    store.start_run("child00002", "learn second.md", parent_run_id="parent0001")  # still running: only its events
    store.record_event(Event(EventType.MODEL_RESPONSE, run_id="child00002", task_id="extract", agent="extractor",
                             payload={"input_tokens": 300, "output_tokens": 45, "requests": 1, "cost_usd": 0.0}))
    store.close()
    first = done.result.usage
    shown = json.loads(moot("runs", "show", "parent0001", "--json", home=home).stdout)
    usage = shown["run"]["usage"]
    assert usage["requests"] == first.requests + 1 and usage["output_tokens"] == first.output_tokens + 45
    held = {r["name"]: r["usage"]["output_tokens"] for r in shown["runs_held"]}
    assert held == {"learn first.md": first.output_tokens, "learn second.md": 45}
    table = moot("runs", "show", "parent0001", home=home).stdout
    assert "1 running" in table and f"{first.requests + 1} model calls" in table and "so far" in table
    listed = json.loads(moot("runs", "--json", home=home).stdout)["runs"]
    assert [r["usage"]["requests"] for r in listed] == [first.requests + 1]  # the list sums it the same way
