"""The README's Python blocks run unchanged (issue #35), on scripted models, and a preset budget
fits the model in Python as it does on the command line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel, ScriptedModel, use_default_model
from moot.runtime import Budget, RunStore, SubAgent, SubAgentTask, TaskGraph
from moot.runtime import budget as budget_module

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def answer(request: ModelRequest) -> Any:
    """Every agent of every block: a plain line, grounded in the river knowledge base's fact."""
    return "The cleanup has removed 120 tonnes of waste so far."


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MOOT_RUNS_DB", str(tmp_path / "runs.sqlite3"))
    with KnowledgeBase.open("river") as kb:  # the block's knowledge base, as `moot learn … --kb river` leaves it
        text = "By 1 June 2025 the Marrow River Cleanup had removed 120 tonnes of waste."
        kb.store_source("Marrow Herald", [(text, [Fact(text, entity="Marrow River Cleanup")])], published="2025-06-01")
    return tmp_path


def run_block(code: str) -> tuple[dict[str, Any], FunctionModel]:
    model = FunctionModel(answer)
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    with use_default_model(model):
        exec(compile(code, str(README), "exec"), namespace)
    return namespace, model


def test_the_readme_has_python_blocks() -> None:
    assert len(python_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_every_readme_python_block_runs_unchanged_and_gives_output(home: Path, index: int,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    namespace, model = run_block(python_blocks()[index])
    assert model.requests, "the block made no model request"
    printed = capsys.readouterr().out
    assert "120 tonnes" in printed, printed
    result = namespace.get("result")
    if result is not None:  # the task graph block: it finished, with every task's output
        assert result.status == "completed" and result.output
        with RunStore() as store:
            assert store.get_run(result.run_id).status == "completed"


def test_a_readme_run_stopped_by_its_budget_does_not_exit_as_success(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    graph_block = next(b for b in python_blocks() if "TaskGraph" in b)
    monkeypatch.setitem(budget_module.PRESETS, "standard", {"max_calls": 1, "deadline_s": 30.0})
    with pytest.raises(SystemExit) as stopped:
        run_block(graph_block)
    assert stopped.value.code not in (0, None)
    assert "stopped" in str(stopped.value.code)
    assert "stopped" in capsys.readouterr().out


# --------------------------------------------------------------------------- presets fit the model


def _graph(model: Any = None) -> TaskGraph:
    return TaskGraph([SubAgent("a", "says hi", "Say hi.", model=model)], [SubAgentTask("a", "hi")])


def _recorded_deadline(graph: TaskGraph, tmp_path: Path, **kwargs: Any) -> float:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        result = graph.run_sync(budget=Budget.preset("standard"), store=store, **kwargs)
        assert result.ok, result.stop_reason
        return store.get_run(result.run_id).budget["deadline_s"]


def test_a_preset_fits_the_model_the_agents_run_on(tmp_path: Path) -> None:
    # A hosted-speed test model keeps the preset's 30 s.
    assert _recorded_deadline(_graph(ScriptedModel(["hi"])), tmp_path) == 30.0
    # An agent on this machine's model gets the local deadline, as `moot … --budget standard` does.
    local = ScriptedModel(["hi"])
    local.name = "local"
    assert _recorded_deadline(_graph(local), tmp_path) == 30.0 * budget_module.LOCAL_DEADLINE_FACTOR
    # A limit the caller set is theirs: never stretched.
    fixed = Budget.preset("standard").override(deadline_s=45)
    assert fixed.fit_to_any([local]).deadline_s == 45
    from moot.cli._options import parse_budget

    assert parse_budget("standard").budget(model="local").deadline_s == Budget.preset("standard", model="local").deadline_s


def test_run_sync_model_is_the_default_of_agents_without_one(tmp_path: Path) -> None:
    given = FunctionModel(lambda request: f"from the run's model ({request.agent})")
    own = ScriptedModel(["from its own model"])
    graph = TaskGraph(
        [SubAgent("plain", "r", "p"), SubAgent("own", "r", "p", model=own)],
        [SubAgentTask("plain", "t"), SubAgentTask("own", "t")],
    )
    result = graph.run_sync(model=given)
    assert result.results["plain"].output == "from the run's model (plain)"
    assert result.results["own"].output == "from its own model"
    assert graph.agents["plain"].model is None  # the graph's own agents are not changed


def test_the_first_run_bench_reads_the_readmes_run_command_as_set_up_learn_ask() -> None:
    """bench/first_run.py times the README's "Run the example" command step by step; if the README's
    block moves or changes shape, the bench must still find set-up, learning and the question."""
    import importlib.util

    path = README.parent / "bench" / "first_run.py"
    spec = importlib.util.spec_from_file_location("first_run_bench", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    chain = bench.steps(bench.readme_command(README))
    assert chain[0] == "scripts/setup"
    assert [step.split()[:2] for step in chain[1:]] == [[".venv/bin/moot", "learn"], [".venv/bin/moot", "ask"]]
    assert bench.answer_line("[12:00:01] ask: started\nThe budget is 3.1 million euros.\n  #1 a fact\n") == "The budget is 3.1 million euros."
