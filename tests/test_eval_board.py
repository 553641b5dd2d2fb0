"""The task board benchmark: the seeded generator, the scorer on answers whose scores are known, and
`moot eval board` end to end on a stub provider, as a person rerunning it relies on them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from moot.eval.board import KINDS, BoardGoal, Prediction, make_goal, make_goals, score, summarise
from openai_stub import openai_compatible_server


def test_the_generator_is_seeded_and_every_gold_figure_is_in_the_notes() -> None:
    goals = make_goals(24, seed=1)
    assert [g.goal for g in goals] == [g.goal for g in make_goals(24, seed=1)]
    assert [g.goal for g in goals] != [g.goal for g in make_goals(24, seed=2)]
    assert {g.kind for g in goals} == set(KINDS) and all(sum(g.kind == k for g in goals) >= 4 for k in KINDS)
    for goal in goals:
        text = " ".join(goal.files.values())
        named = re.findall(r"[\w-]+\.(?:md|txt)", goal.goal)
        if goal.kind == "missing":
            assert goal.missing in named and goal.missing not in goal.files and not goal.gold
            continue
        assert all(n in goal.files for n in named)  # every note the goal names is there
        figures = goal.gold[:-1] if goal.kind == "change" else goal.gold
        assert all(f in text for f in figures), goal.id
        assert len(goal.files) == len(set(named)) + 1  # plus one note no goal asks about


def test_a_change_goal_holds_both_values_and_the_size_of_the_change() -> None:
    goal = next(g for g in make_goals(10, seed=3) if g.kind == "change")
    first, second, change = (float(v.replace(",", "")) for v in goal.gold)
    assert change == abs(second - first) >= 10


def answered(goal: BoardGoal, text: str, finished: bool = True) -> dict[str, Any]:
    return score(goal, Prediction(text=text, finished=finished, calls=3))


def test_the_scorer_counts_figures_by_value_and_ignores_dates_and_names() -> None:
    goal = BoardGoal(id="t", kind="change", goal="How did the vases change from a-2031-03.md to a-2031-04.md?",
                     files={"a-2031-03.md": "1,240 vases", "a-2031-04.md": "1,300 vases"}, gold=["1,240", "1,300", "60"])
    assert answered(goal, "From 1240 to 1,300: up by 60.")["right"] is True
    partly = answered(goal, "It went from 1,240 to 1,300 (a-2031-04.md, 2031-04-60).")
    assert partly["figures"] == "2/3" and not partly["right"]  # neither a note's name nor a date is a figure
    restating = answered(goal, "The vases changed from a-2031-03.md to a-2031-04.md.")
    assert restating["restated"] is True and restating["figure_recall"] == 0.0


def test_a_missing_note_is_right_only_when_named_and_nothing_is_invented() -> None:
    goal = make_goal(4, seed=1)
    assert goal.kind == "missing" and goal.missing
    assert answered(goal, f"the goal names {goal.missing}, which is not in the workspace", finished=False)["right"]
    assert not answered(goal, f"{goal.missing} reports 123,456 of them")["right"]  # an invented figure
    assert not answered(goal, "Here is the summary of both notes.")["right"]
    rows = [answered(goal, f"{goal.missing} is missing", finished=False) | {"kind": "missing"}]
    assert summarise(rows)["unfinished"] == 0  # stopping on a missing note is not an unfinished goal
    assert summarise(rows)["missing_named"] == "1/1"


def stub_team(body: dict[str, Any]) -> str:
    """A provider that answers every board role: structured decisions by schema, text by copying the inputs."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    name, shape = schema.get("name", ""), schema.get("schema", {})
    if name == "GoalKind":
        return json.dumps({"kind": "comparison"})
    if name == "GoalCheck":
        return json.dumps({"advances_goal": True, "reason": "ok"})
    if name == "Comparison":
        row = shape["properties"]["row"]
        return json.dumps({"row": row["enum"][0] if "enum" in row else row["const"], "answer": "It changed."})
    if name:
        return json.dumps({})
    prompt = body["messages"][-1]["content"]
    kept = [line for line in prompt.splitlines() if re.search(r"\d", line) and not line.startswith(("#", "["))]
    return " ".join(kept) or "Nothing."


def test_moot_eval_board_runs_the_board_and_the_baseline_and_writes_the_table(tmp_path: Path) -> None:
    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(stub_team) as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "board", "--goals", "5", "--model", model,
                               "--timeout", "120", "--out", str(tmp_path / "r.json"), "--json"],
                              capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    # stderr is a pipe: timestamped progress, the first line before any goal is worked on, then one per answer
    progress = [line for line in done.stderr.splitlines() if line.strip()]
    assert progress[0].endswith("] eval board: started") and all(re.match(r"\[\d\d:\d\d:\d\d\] ", x) for x in progress)
    assert sum(" eval board: " in x and (": right" in x or ": wrong" in x) for x in progress) == 10  # 5 goals x 2 systems
    report = json.loads(done.stdout.strip().splitlines()[-1])
    board, one_call = report["summary"]["board"], report["summary"]["one-call"]
    assert report["backend"] == "folder" and board["goals"] == one_call["goals"] == 5
    assert board["unclaimed"] == 0 and board["restated"] == 0
    assert board["missing_named"] == "1/1"  # the board stops on the missing note and names it
    assert one_call["calls"] == 5 and board["calls"] > 5
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    change = next(r for r in rows["board"] if r["kind"] == "change")
    assert change["right"], change  # the stub copies the notes; Python computed the change
