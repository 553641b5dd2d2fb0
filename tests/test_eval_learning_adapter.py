"""The learning team scored by the progressive harness: real knowledge bases, a real run store,
a FunctionModel standing in for the language model; and error analysis on constructed runs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from moot.eval.analysis import attribute_failure
from moot.eval.levels import Question, Rubric, load_suite
from moot.eval.runner import run_progressive
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.teams.learning.eval_adapter import LearningTeamAgent, learning_team_factory

ARTICLE = """# Kestrel footbridge opens

The Kestrel footbridge over the Dun river opened today. The Kestrel footbridge is 214 metres long.
The Kestrel footbridge cost 4,200,000 crowns. The engineer of the Kestrel footbridge was Mara Olsen.
"""

QUESTIONS = [
    {"id": "L1.1", "question": "How long is the Kestrel footbridge?", "expected": "214 metres.",
     "rubric": {"required": [["214"]], "forbidden": []}},
    {"id": "L1.2", "question": "What did building the Kestrel footbridge cost?", "expected": "4,200,000 crowns.",
     "rubric": {"required": [["4200000", "4.2 million"]], "forbidden": []}},
    {"id": "L1.3", "question": "Who was the engineer of the Kestrel footbridge?", "expected": "Mara Olsen.",
     "rubric": {"required": [["Olsen"]], "forbidden": []}},
]


def write_suite(folder: Path) -> Path:
    (folder / "articles" / "L01").mkdir(parents=True)
    (folder / "articles" / "L01" / "kestrel.md").write_text(ARTICLE, encoding="utf-8")
    (folder / "L01.json").write_text(json.dumps({
        "level": "L1", "name": "direct recall", "about": "recall",
        "articles": [{"file": "L01/kestrel.md", "source": "Dunmore Courier", "published": "2024-03-05"}],
        "questions": QUESTIONS,
    }), encoding="utf-8")
    return folder


def team_model(request: ModelRequest) -> Any:
    """Learns every sentence but the engineer's; answers lengths well, costs badly in synthesis."""
    system = request.messages[0].content
    task = request.messages[-1].content
    if system.startswith("You extract facts"):
        body = task.split("Text:", 1)[1]
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", body) if "Kestrel" in s and "engineer" not in s]
        return {"facts": [{"content": s, "entity": "Kestrel footbridge", "attribute": f"detail {i}", "value": s}
                          for i, s in enumerate(sentences)]}
    if request.output is None and system.startswith("Summarise"):
        return "A new footbridge opened."
    if system.startswith("You are the coordinator"):
        return {"intent": "mathematical", "entities": ["Kestrel footbridge"]}
    if system.startswith("You are the reasoning specialist"):
        if request.tools and len(request.messages) == 2:
            from moot.models.testing import tool_call

            return tool_call("calculate", expression="4200000 + 0")
        asked = request.messages[1].content
        return "Result: it cost 4200000 crowns." if "cost" in asked else "Result: 214 metres."
    if "How long" in task:
        return "The Kestrel footbridge is 214 metres long [#1]."
    return "It was expensive."  # drops the cost that the reasoning step found


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    with RunStore(tmp_path / "runs.sqlite3") as opened:
        yield opened


def test_learning_team_through_the_harness_with_stage_attribution(tmp_path: Path, store: RunStore) -> None:
    levels = load_suite(write_suite(tmp_path / "suite"))
    model = FunctionModel(team_model)
    results = asyncio.run(run_progressive(levels, learning_team_factory(model, store=store), modes=["single", "multi"],
                                          runs=1, agent_name="learning team", model_name="function"))
    level = results.levels[0]
    assert level.learn.model_calls == 2 and level.learn.error is None  # extraction + summary, once
    by = {(r.question_id, r.mode): r for r in level.records}
    assert len(by) == 6
    for mode in ("single", "multi"):
        length = by[("L1.1", mode)]
        assert length.passed and length.run_id and length.model_calls >= 1
        assert store.get_run(length.run_id).status == "completed"  # `moot runs show` can show it
    # The engineer's sentence was never learned: the learning stage, found by looking in the KB.
    assert by[("L1.3", "multi")].stage in ("learning",)
    assert "Olsen" in by[("L1.3", "multi")].stage_reason
    # Multi: reasoning found the cost, the synthesis dropped it — read from the run store.
    cost = by[("L1.2", "multi")]
    assert not cost.passed and cost.trace["intent"] == "mathematical"
    assert cost.stage == "synthesis", cost.stage_reason
    # Single: the facts were in front of the one agent, and it still answered without the cost.
    assert by[("L1.2", "single")].stage == "reasoning"


def test_each_level_gets_a_fresh_knowledge_base(tmp_path: Path, store: RunStore) -> None:
    model = FunctionModel(team_model)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = LearningTeamAgent(tmp_path / "a", model=model, store=store)
    second = LearningTeamAgent(tmp_path / "b", model=model, store=store)
    asyncio.run(first.learn(ARTICLE, source="Courier", published="2024-03-05"))
    assert "214 metres" in first.knowledge_text()
    assert second.knowledge_text() == ""
    asyncio.run(first.aclose())
    asyncio.run(second.aclose())


def _q(required: list[list[str]], forbidden: list[str] | None = None, unknown: bool = False) -> Question:
    return Question(id="X.1", question="q", expected="e",
                    rubric=Rubric(required=required, forbidden=forbidden or [], expects_unknown=unknown))


MEMORY = {"memory": {"id": "memory", "output": {"facts": [{"id": 1, "content": "The mill grinds 150 kilograms an hour."}]}}}


@pytest.mark.parametrize(("case", "kwargs", "stage"), [
    ("never learned", dict(knowledge="The mill is 6 metres wide.", run=MEMORY), "learning"),
    ("learned, not retrieved", dict(knowledge="The mill grinds 150 kilograms an hour.",
                                    run={"memory": {"output": {"facts": []}}}), "retrieval"),
    ("wrong plan", dict(level="L9", mode="multi", knowledge="150 kilograms", run=MEMORY,
                        trace={"intent": "recall"}), "routing"),
    ("dropped in synthesis", dict(knowledge="150 kilograms", run={**MEMORY, "reasoning": {"output": "Result: 150 kg"},
                                  "synthesize": {"output": "It grinds flour."}}), "synthesis"),
    ("wrong with the facts", dict(knowledge="150 kilograms", run={**MEMORY, "single": {"output": "It grinds flour."}}),
     "reasoning"),
])
def test_stage_attribution_on_constructed_runs(case: str, kwargs: dict, stage: str) -> None:
    options = {"level": "L1", "mode": "multi", "answer": "It grinds flour.", **kwargs}
    verdict = attribute_failure(question=_q([["150"]]), **options)
    assert verdict.stage == stage, (case, verdict)
    assert verdict.reason and "\n" not in verdict.reason


def test_a_guess_where_the_sources_are_silent_is_metacognition() -> None:
    verdict = attribute_failure(level="L8", question=_q([], unknown=True), answer="It cost 300 crowns.", mode="single")
    assert verdict.stage == "metacognition"


def test_routing_is_not_blamed_in_single_mode() -> None:
    verdict = attribute_failure(level="L9", question=_q([["150"]]), answer="flour", mode="single",
                                knowledge="150", run=MEMORY, trace={"intent": "recall"})
    assert verdict.stage == "reasoning"


def test_an_agent_that_shows_nothing_is_not_blamed_on_a_guessed_stage() -> None:
    verdict = attribute_failure(level="L1", question=_q([["150"]]), answer="I don't know.", mode="single")
    assert verdict.stage == "unknown" and "exposes no knowledge" in verdict.reason
