"""Procedures: the steps are read from the source in Python; a position question is answered by position.

The parser runs on real text; the team runs on a real SQLite knowledge base with test models
that answer by the calling agent's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.memory.procedures import find_procedures, parse_procedures
from moot.models.base import ModelRequest
from moot.teams.learning.procedure import read_relation
from learning_support import ask

RESTART = """# Restarting the Brenn Hill pump after a flood stop

Brenn Hill Water Trust handbook, 15 January 2024. After a flood the pump stops itself. Volunteers restart it by
following these six steps in order.

Step 1: wait until the river gauge has stayed below 2 metres for one hour.

Step 2: walk around the pump house and check both inlet grilles for debris.

Step 3: unlock the pump house with the blue key and switch the control panel to "manual".

Step 4: open the inlet valve with the long handle.

Step 5: switch the control panel back to "automatic". The pump then starts by itself.

Step 6: write the restart time in the logbook and phone the duty engineer, Mara Quill.
"""

INSPECTION = """# Monthly grille inspection at Brenn Hill

Brenn Hill Water Trust handbook, 2 February 2024. Every month two volunteers clean the inlet grilles.

First, press the red stop button on the control panel and wait until the impeller has stopped turning. Second,
close the inlet valve so that no water flows. Third, lift each grille out with the hook. Fourth, scrub the grilles
and put them back. Fifth, open the inlet valve and press the green start button.

The second volunteer stays by the door during the whole inspection.
"""


def test_numbered_and_ordinal_procedures_are_parsed_in_order() -> None:
    [restart] = parse_procedures(RESTART, source="Trust")
    assert restart.title == "Restarting the Brenn Hill pump after a flood stop"
    assert "six steps" in restart.intro
    assert [s.number for s in restart.steps] == [1, 2, 3, 4, 5, 6]
    assert restart.steps[3].text.startswith("open the inlet valve")
    [inspection] = parse_procedures(INSPECTION)
    assert [s.text.split()[0] for s in inspection.steps] == ["Press", "Close", "Lift", "Scrub", "Open"]
    assert "The second volunteer" not in " ".join(s.text for s in inspection.steps)


def test_prose_and_short_runs_are_not_procedures() -> None:
    assert parse_procedures("First, the mill opened. Second, it closed.") == []  # two sentences are no procedure
    assert parse_procedures("The pump moves 400 litres a second. It was built in 1998.") == []
    assert parse_procedures("1. one\n3. three\n4. four\n") == []  # a list that does not start at 1 or skips


@pytest.mark.parametrize(("question", "kind", "anchors", "adjacent"), [
    ("How many steps does the restart procedure have?", "count", (), False),
    ("What is the first thing a volunteer does when restarting the pump after a flood stop?", "first", (), False),
    ("What is the last step of the restart, and whom does the volunteer phone?", "last", (), False),
    ("How does the monthly grille inspection end?", "last", (), False),
    ("When restarting the pump, what is done immediately after the inlet valve is opened?", "after",
     ("the inlet valve is opened",), True),
    ("What must be switched to \"manual\" before the inlet valve is opened?", "before", ("the inlet valve is opened",), False),
    ("When restarting the pump, which comes first: checking the grilles or unlocking the pump house?", "order",
     ("checking the grilles", "unlocking the pump house"), False),
    ("How do I restart the pump?", "all", (), False),
    ("Who is the duty engineer?", None, (), False),
])
def test_the_relation_is_read_from_the_question(question: str, kind: str | None, anchors: tuple[str, ...],
                                                adjacent: bool) -> None:
    relation = read_relation(question)
    if kind is None:
        assert relation is None
        return
    assert relation is not None and relation.kind == kind
    assert relation.anchors == anchors and relation.adjacent == adjacent


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    base = KnowledgeBase.open(tmp_path / "pump.sqlite3")
    base.add_episode(RESTART, source="Brenn Hill Water Trust", published="2024-01-15")
    base.add_episode(INSPECTION, source="Brenn Hill Water Trust", published="2024-02-02")
    # What a small extraction model keeps: loose facts, the order lost.
    base.add_facts([
        Fact("Volunteers restart the Brenn Hill pump after a flood stop by following six steps", entity="Brenn Hill pump",
             attribute="restart steps", value="six", source="Brenn Hill Water Trust"),
        Fact("The inlet valve is opened with the long handle after the inspection of the pump", entity="inlet valve",
             attribute="opened with", value="long handle", source="Brenn Hill Water Trust"),
        Fact("The duty engineer of the Brenn Hill pump is Mara Quill", entity="Brenn Hill pump",
             attribute="duty engineer", value="Mara Quill", source="Brenn Hill Water Trust"),
        Fact("During the monthly grille inspection the impeller has stopped turning before the grilles are lifted",
             entity="grille inspection", attribute="order", value="impeller stopped first", source="Brenn Hill Water Trust"),
    ])
    yield base
    base.close()


def test_the_procedures_of_the_knowledge_base_best_first(kb: KnowledgeBase) -> None:
    found = find_procedures(kb, "During the monthly grille inspection, what is done right after the impeller stops?")
    assert [p.title for p in found][0] == "Monthly grille inspection at Brenn Hill"


def test_the_step_after_a_named_step_is_read_by_position(kb: KnowledgeBase) -> None:
    question = "When restarting the Brenn Hill pump after a flood stop, what is done immediately after the inlet valve is opened?"
    answer, model = ask(kb, question, {"single": "The inlet valve is opened after the inspection of the pump."})
    assert 'switch the control panel back to "automatic"' in answer.answer
    assert answer.answer.startswith("Step 5 of 6")
    assert any("where a step lies" in n for n in answer.trace.notes)
    assert not model.requests_from("procedure")  # the anchor matched one step: no model call needed
    single, _ = ask(kb, question, {"single": "The inlet valve is opened after the inspection of the pump."}, mode="single")
    assert single.answer == "The inlet valve is opened after the inspection of the pump."  # the baseline is unchanged


def test_before_prefers_the_step_that_names_what_is_asked(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, 'In the Brenn Hill pump restart, what must be switched to "manual" before the inlet valve is opened?',
                    {"single": "The inlet valve."})
    assert answer.answer.startswith("Step 3 of 6") and "control panel" in answer.answer


def test_first_last_and_count(kb: KnowledgeBase) -> None:
    first, _ = ask(kb, "What is the first thing a volunteer does when restarting the Brenn Hill pump after a flood stop?",
                   {"single": "Check the grilles."})
    assert first.answer.startswith("Step 1 of 6") and "below 2 metres for one hour" in first.answer
    last, _ = ask(kb, "How does the monthly grille inspection at Brenn Hill end?", {"single": "It ends after a flood."})
    assert "press the green start button" in last.answer and "the last" in last.answer


def test_which_of_two_steps_comes_first(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "When restarting the Brenn Hill pump, which comes first: unlocking the pump house or checking "
                        "the inlet grilles?", {"single": "Unlocking the pump house comes first."})
    assert answer.answer.startswith("Checking the inlet grilles comes first: step 2")
    assert "then step 3" in answer.answer


def test_two_close_procedures_are_chosen_by_the_model(kb: KnowledgeBase) -> None:
    seen: list[str] = []

    def choose(request: ModelRequest) -> Any:
        seen.append(request.messages[-1].content)
        return {"choice": "Monthly grille inspection at Brenn Hill"}

    # Both procedures name the control panel: the model chooses which one the question means.
    answer, model = ask(kb, "At Brenn Hill, what is done right after the control panel is switched?",
                        {"single": "The pump starts.", "procedure": choose})
    assert len(model.requests_from("procedure")) == 1 and "Restarting the Brenn Hill pump" in seen[0]
    assert "Close the inlet valve so that no water flows" in answer.answer


def test_no_procedure_draft_when_the_anchor_matches_no_step(kb: KnowledgeBase) -> None:
    answer, _ = ask(kb, "When restarting the Brenn Hill pump, what happens after the storm warning is cancelled?",
                    {"single": "The sources do not say what happens after the storm warning is cancelled."})
    assert answer.answer == "The sources do not say what happens after the storm warning is cancelled."
    assert any("procedure: " in n and "no step" not in n for n in answer.trace.notes)
