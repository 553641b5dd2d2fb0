"""`moot eval progressive` and `moot eval report` in a real subprocess.

The model is an OpenAI-compatible server on loopback (a real HTTP server, a model string a
user could type), so the whole path — CLI, registry, provider, learning team, harness,
report — runs as it does for a user.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from learning_support import label_body
from openai_stub import openai_compatible_server

MOOT = [sys.executable, "-m", "moot"]
ARTICLE = "# Kestrel footbridge\n\nThe Kestrel footbridge opened today. The Kestrel footbridge is 214 metres long.\n"


def answer(body: dict[str, Any]) -> str:
    """The fake model: extracts sentences as facts, then answers from the facts it is shown."""
    messages = body["messages"]
    system, task = messages[0]["content"], messages[-1]["content"]
    labels = label_body(body)
    if labels is not None:
        return labels
    if system.startswith("You extract facts"):
        text = task.split("Text:", 1)[1]
        facts = [{"content": s.strip(), "entity": "Kestrel footbridge", "attribute": f"detail {i}", "value": s.strip()}
                 for i, s in enumerate(re.split(r"(?<=\.)\s+", text)) if "Kestrel" in s]
        return json.dumps({"facts": facts})
    if system.startswith("You grade one answer"):  # the judge: right when the answer has the length
        right = "214" in task.split("Answer to grade:", 1)[1]
        return json.dumps({"score": 1.0 if right else 0.0, "reason": "checked the length"})
    if "response_format" in body:  # a classification or plan: plain recall
        return json.dumps({"intent": "recall", "entities": ["Kestrel footbridge"]})
    if system.startswith("Summarise"):
        return "A footbridge opened."
    return "The Kestrel footbridge is 214 metres long [#1]." if "214" in json.dumps(messages) else "I don't know."


@pytest.fixture
def model_string() -> Iterator[str]:
    with openai_compatible_server(answer) as model:
        yield model


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    (folder / "articles" / "L01").mkdir(parents=True)
    (folder / "articles" / "L01" / "kestrel.md").write_text(ARTICLE, encoding="utf-8")
    (folder / "L01.json").write_text(json.dumps({
        "level": "L1", "name": "direct recall",
        "articles": [{"file": "L01/kestrel.md", "source": "Dunmore Courier", "published": "2024-03-05"}],
        "questions": [
            {"id": "L1.1", "question": "How long is the Kestrel footbridge?", "expected": "214 metres.",
             "rubric": {"required": [["214"], ["metre"]]}},
            {"id": "L1.2", "question": "Who painted the Kestrel footbridge?", "expected": "The articles do not say.",
             "rubric": {"required": [], "forbidden": ["re:painted by"], "expects_unknown": True}},
        ],
    }), encoding="utf-8")
    return folder


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    # a wide "terminal" so the per-level table does not wrap level names
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "COLUMNS": "200"}
    env.pop("MOOT_MODEL", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=120)


def test_progressive_cli_writes_results_report_and_chart_then_rerenders(tmp_path: Path, suite: Path, model_string: str) -> None:
    out = tmp_path / "out"
    run = moot("eval", "progressive", "--suite", str(suite), "--model", model_string, "--mode", "both", "--runs", "2",
               "--judge", model_string, "--judge-votes", "2", "--out", str(out / "results.json"), "--json", home=tmp_path / "home")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["runs"] == 2 and summary["modes"] == ["single", "multi"]
    assert summary["overall"]["single"]["answers"] == 4 and summary["overall"]["multi"]["answers"] == 4
    assert summary["levels"][0]["modes"]["single"]["calls_per_question"] > 0
    results = json.loads((out / "results.json").read_text())
    assert results["temperature"] == 0.7 and results["seeds"] == [1, 2]  # runs > 1 sample, with distinct seeds
    records = results["levels"][0]["records"]
    length = [r for r in records if r["question_id"] == "L1.1"]
    assert all(r["passed"] and "214" in r["answer"] and r["run_id"] for r in length)
    assert all(r["judge"]["passed"] and len(r["judge"]["votes"]) == 2 for r in length)
    # The fake judge passes exactly the answers that state the length, whatever the question: it
    # agrees with the rubric on the length question and disagrees on the painter one.
    expected_agreement = sum(("214" in r["answer"]) == r["passed"] for r in records) / len(records)
    assert 0 < expected_agreement < 1
    assert summary["judge_agreement"] == pytest.approx(expected_agreement, abs=1e-4)
    markdown = (out / "progressive.md").read_text()
    assert "The LLM judge and the rubric agree" in markdown
    assert "| L1 direct recall |" in markdown and (out / "progressive.png").read_bytes()[:4] == b"\x89PNG"

    again = moot("eval", "report", str(out / "results.json"), "--report", str(tmp_path / "again"), home=tmp_path / "home")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "progressive.md").read_text() == markdown
    assert "L1 direct recall" in again.stdout

    shown = moot("runs", "show", length[0]["run_id"][:12], "--json", home=tmp_path / "home")
    assert shown.returncode == 0 and "memory" in shown.stdout  # each answer is a run the user can inspect
    # the eval is one line in the run history: its run holds every learning and answering run
    listed = json.loads(moot("runs", "--json", home=tmp_path / "home").stdout)["runs"]
    assert [r["name"] for r in listed] == ["eval progressive (single,multi, 2 runs)"]
    held = json.loads(moot("runs", "show", listed[0]["id"], "--json", home=tmp_path / "home").stdout)["runs_held"]
    answer_ids = {r["run_id"] for r in records}
    assert answer_ids <= {r["id"] for r in held} and any(r["name"].startswith("learn ") for r in held)


def test_resume_from_the_cli_keeps_finished_levels_and_refuses_other_settings(tmp_path: Path, suite: Path,
                                                                            model_string: str) -> None:
    out = tmp_path / "results.json"
    common = ["eval", "progressive", "--suite", str(suite), "--model", model_string, "--mode", "single", "--out", str(out)]
    assert moot(*common, home=tmp_path / "home").returncode == 0
    first = json.loads(out.read_text())
    again = moot(*common, "--resume", home=tmp_path / "home")
    assert again.returncode == 0, again.stderr
    resumed = json.loads(out.read_text())
    assert resumed["levels"] == first["levels"]  # the complete level is kept, not answered again
    assert "kept L1; ran nothing" in resumed["notes"][-1]
    other = moot(*common, "--runs", "2", "--resume", home=tmp_path / "home")
    assert other.returncode == 2 and other.stderr.startswith("error: cannot resume: the results file has runs 1")
    assert json.loads(out.read_text()) == resumed  # a refused resume leaves the file as it was


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "progressive", "--levels", "L13"], "error: unknown level L13"),
    (["eval", "progressive", "--levels", "L1", "--mode", "triple"], "error: unknown mode 'triple'"),
    (["eval", "progressive", "--runs", "0"], "error: --runs must be at least 1"),
    (["eval", "report", "nowhere.json"], "error: no results file at nowhere.json"),
    (["eval", "progressive", "--levels", "L1", "--resume", "--out", "nowhere.json"], "error: nothing to resume"),
    (["eval", "progressive", "--levels", "L1", "--json", "results.json"], "error: --json takes no file any more"),
    (["eval", "report", "results.json", "--out", "folder"], "error: the report folder is --report"),
    (["eval", "progressive", "--levels", "L1", "--resume"], "error: --resume needs the results file"),
])
def test_user_mistakes_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = moot(*args, home=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().startswith(message) and "fix:" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
