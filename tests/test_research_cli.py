"""`moot research` in a real subprocess, with a model served over loopback HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_research_support import fake_openai_server, make_repo

MOOT = [sys.executable, "-m", "moot"]


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3")}
    env.pop("MOOT_MODEL", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=120)


def test_research_json_then_runs_show(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", "How does a request flow end-to-end?", "--repo", str(repo), "--mode", "multi",
                   "--model", model, "--json", home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(data) >= {"answer", "mode", "evidence", "verification", "usage", "usage_by_phase", "seconds", "run_id"}
    assert data["mode"] == "multi" and "app/server.py:4" in data["answer"]
    assert set(data["usage_by_phase"]) == {"planner", "researchers", "synthesizer", "verifier", "quotes"}
    assert data["usage_by_phase"]["researchers"]["requests"] == 2
    assert data["evidence"][0]["findings"][0]["file_path"].startswith("app/")
    shown = moot("runs", "show", data["run_id"][:10], home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    for task in ("planner", "researcher-1", "researcher-2", "synthesizer", "verifier"):
        assert task in shown.stdout


def test_research_text_output_shows_the_route_and_answer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", "Where is parse_request defined?", "--repo", str(repo), "--model", model,
                   home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    assert "mode: single (symbol-lookup" in out.stdout and "app/server.py:4" in out.stdout


def test_research_prints_the_resolved_definition_and_its_caller(tmp_path: Path) -> None:
    """The issue's question, through the command a user types: where it is defined and who calls
    it come from the index, with path:line, whatever the model wrote."""
    from test_research_resolve import QUESTION
    from test_research_resolve import make_repo as make_checks_repo

    repo = make_checks_repo(tmp_path / "repo")
    with fake_openai_server() as model:
        out = moot("research", QUESTION, "--repo", str(repo), "--mode", "single", "--model", model, home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # the terminal may wrap long lines
    assert "From the code index (written by moot from the symbol graph)" in text
    assert "`pkg.rules.check_fn` (function) is defined at pkg/rules.py:4-6" in text
    assert "called by `pkg.caller_file.run` (pkg/caller_file.py:8)" in text


def test_bad_repo_is_one_line_exit_2(tmp_path: Path) -> None:
    out = moot("research", "How?", "--repo", str(tmp_path / "missing"), home=tmp_path / "home")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "fix:" in out.stderr and "Traceback" not in out.stderr


def test_serve_refuses_a_public_address_without_token(tmp_path: Path) -> None:
    out = moot("serve", "--host", "0.0.0.0", "--port", "1", home=tmp_path / "home")
    assert out.returncode == 2
    assert "without a token" in out.stderr and "Traceback" not in out.stderr
