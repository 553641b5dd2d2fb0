"""The learning team scored by the progressive harness: real knowledge bases, a real run store,
a FunctionModel standing in for the language model; and error analysis on constructed runs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from learning_support import choose_labels
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
    """Labels every sentence but the engineer's; the single agent answers lengths well and costs
    badly; the compute specialist picks the cost. Routed by the calling agent's name."""
    task = request.messages[-1].content
    if request.agent == "fact-labeller":  # every sentence but the engineer's is labelled
        lines = [line for line in task.splitlines() if re.match(r"^\d+\. ", line)]
        labels = choose_labels(request.output.json_schema, task)["labels"]
        return {"labels": [["", ""] if "engineer" in line else label for line, label in zip(lines, labels)]}
    if request.agent == "fact-extractor":
        body = task.split("Text:", 1)[1]
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", body) if "Kestrel" in s and "engineer" not in s]
        return {"facts": [{"content": s, "entity": "Kestrel footbridge", "attribute": f"detail {i}", "value": s}
                          for i, s in enumerate(sentences)]}
    if request.agent == "source-summariser":
        return "A new footbridge opened."
    if request.agent == "frame":
        return {"asks_for": "fact", "about": [], "unit": ""}
    if request.agent in ("compute", "sources", "quote", "dates", "steps"):
        return {}  # no choice: those specialists give no draft
    if request.agent == "context":
        return "It is 214 metres long and cost 4,200,000 crowns; the articles do not name the engineer."
    if "How long" in task:
        return "The Kestrel footbridge is 214 metres long [#1]."
    if "How much" in task:
        return "It cost 4,900,000 crowns."  # a number no fact holds: the checker refuses it
    return "It was expensive."  # drops the cost


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    with RunStore(tmp_path / "runs.sqlite3") as opened:
        yield opened


def test_learning_team_through_the_harness_with_stage_attribution(tmp_path: Path, store: RunStore) -> None:
    levels = load_suite(write_suite(tmp_path / "suite"))
    model = FunctionModel(team_model)
    results = asyncio.run(run_progressive(levels, learning_team_factory(model, store=store),
                                          modes=["single", "multi", "context"], runs=1, agent_name="learning team",
                                          model_name="function"))
    level = results.levels[0]
    assert level.learn.model_calls == 1 and level.learn.error is None  # one labelling call, once (no summary call)
    by = {(r.question_id, r.mode): r for r in level.records}
    assert len(by) == 9
    for mode in ("single", "multi"):
        length = by[("L1.1", mode)]
        assert length.passed and length.run_id and length.model_calls >= 1
        assert store.get_run(length.run_id).status == "completed"  # `moot runs show` can show it
    # The labeller left the engineer's sentence unlabelled; it is learned all the same (the source's
    # own text), so the vague answer is the reasoning's fault, not the learning's.
    assert by[("L1.3", "multi")].stage == "reasoning" and not by[("L1.3", "multi")].passed
    # Single and multi got the same vague draft for the cost; nothing in it could be refused.
    assert by[("L1.2", "single")].stage == "reasoning" and by[("L1.2", "multi")].stage == "reasoning"
    # The one-call baseline: one request with the article in it, graded like the others.
    context = by[("L1.1", "context")]
    assert context.passed and context.model_calls == 1 and context.trace["mode"] == "context"
    prompt = next(r for r in model.requests if r.agent == "context").messages[-1].content
    assert "214 metres long" in prompt and "Dunmore Courier" in prompt


def test_multi_answers_with_the_computed_value_where_single_invents_one(tmp_path: Path, store: RunStore) -> None:
    suite = write_suite(tmp_path / "suite")
    article = suite / "articles" / "L01" / "kestrel.md"
    article.write_text(ARTICLE + "The lights of the Kestrel footbridge cost 300,000 crowns more.\n", encoding="utf-8")
    data = json.loads((suite / "L01.json").read_text())
    data["questions"] = [{"id": "L1.4", "question": "How much did the Kestrel footbridge and its lights cost in total?",
                          "expected": "4,500,000 crowns.", "rubric": {"required": [["4500000"]], "forbidden": []}}]
    (suite / "L01.json").write_text(json.dumps(data))

    def costs(request: ModelRequest) -> Any:
        if request.agent == "frame":  # "in total": a figure worked out from figures
            return {"asks_for": "calculation", "about": [], "unit": "cost"}
        if request.agent == "compute":
            ids = [line.split(":")[0] for line in request.messages[-1].content.splitlines() if " crowns" in line]
            return {"operation": "sum", "first": ids[0], "second": ids[1]}
        return team_model(request)

    results = asyncio.run(run_progressive(load_suite(suite), learning_team_factory(FunctionModel(costs), store=store),
                                          modes=["single", "multi"], runs=1))
    by = {r.mode: r for r in results.levels[0].records}
    assert not by["single"].passed and "4,900,000" in by["single"].answer
    assert by["multi"].passed and by["multi"].answer.startswith("4,500,000"), by["multi"].answer
    assert any("checker: single" in n and "4,900,000" in n for n in by["multi"].trace["notes"])
    assert any("selector: compute replaces the plain draft" in n for n in by["multi"].trace["notes"])


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
    ("stopped by the budget", dict(knowledge="150 kilograms", run=MEMORY, trace={"run_status": "stopped", "intent": "cause"},
                                   level="L9"), "budget"),
    ("wrong plan", dict(level="L9", mode="multi", knowledge="150 kilograms", run=MEMORY,
                        trace={"intent": "value"}), "routing"),
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


FEE_RULES = "Every boat pays a base fee of 10 marks a night, and 2 marks for each metre over 8 metres."
FEE_MEMORY = {"memory": {"id": "memory", "output": {"facts": [{"id": 1, "content": FEE_RULES}]}}}


def test_a_value_no_article_states_is_a_reasoning_failure_not_a_learning_one() -> None:
    # 18 = 10 + 4 x 2 is worked out from the rule: no knowledge base could have held it.
    verdict = attribute_failure(level="L11", question=_q([["re:\\b18\\b"]]), answer="It pays 32 marks.", mode="single",
                                knowledge=FEE_RULES, run=FEE_MEMORY, sources=f"# Harbour fees\n\n{FEE_RULES}")
    assert verdict.stage == "reasoning"
    assert "must be worked out" in verdict.reason and "18" in verdict.reason


def test_a_stated_value_the_agent_never_learned_is_still_a_learning_failure() -> None:
    sources = f"{FEE_RULES} A festival night costs double."
    verdict = attribute_failure(level="L11", question=_q([["re:\\b18\\b"], ["double"]]), answer="It pays 32 marks.",
                                mode="single", knowledge=FEE_RULES, run=FEE_MEMORY, sources=sources)
    assert verdict.stage == "learning" and "double" in verdict.reason


def test_a_derived_value_a_sub_agent_had_is_lost_in_synthesis() -> None:
    run = {**FEE_MEMORY, "reasoning": {"output": "Result: 18 marks"}, "synthesize": {"output": "It pays 32 marks."}}
    verdict = attribute_failure(level="L11", question=_q([["re:\\b18\\b"]]), answer="It pays 32 marks.", mode="multi",
                                knowledge=FEE_RULES, run=run, trace={"intent": "comparison"}, sources=FEE_RULES)
    assert verdict.stage == "synthesis"


def test_a_guess_where_the_sources_are_silent_is_metacognition() -> None:
    verdict = attribute_failure(level="L8", question=_q([], unknown=True), answer="It cost 300 crowns.", mode="single")
    assert verdict.stage == "metacognition"


def test_a_stopped_run_on_a_not_in_the_sources_question_is_the_budget_not_a_guess() -> None:
    verdict = attribute_failure(level="L8", question=_q([], unknown=True), mode="multi", trace={"run_status": "stopped"},
                                answer="I could not complete an answer; the most relevant facts are: [#1] 30 pear trees")
    assert verdict.stage == "budget"


def test_routing_is_not_blamed_in_single_mode() -> None:
    verdict = attribute_failure(level="L9", question=_q([["150"]]), answer="flour", mode="single",
                                knowledge="150", run=MEMORY, trace={"intent": "value"})
    assert verdict.stage == "reasoning"


def test_an_agent_that_shows_nothing_is_not_blamed_on_a_guessed_stage() -> None:
    verdict = attribute_failure(level="L1", question=_q([["150"]]), answer="I don't know.", mode="single")
    assert verdict.stage == "unknown" and "exposes no knowledge" in verdict.reason


# --------------------------------------------------------------------------- L7: teaching

MILL_FACTS = [
    ("The Sorrel Bay tide mill grinds 150 kilograms of flour an hour.", "flour per hour", "150 kilograms"),
    ("The waterwheel of the Sorrel Bay tide mill is 6 metres wide.", "waterwheel width", "6 metres"),
    ("The Sorrel Bay tide mill was built in 1791.", "year built", "1791"),
]


def _items(text: str, header: str) -> list[str]:
    after = text.split(header, 1)[1] if header in text else ""
    return [line[2:] for line in after.splitlines()[1:] if line.startswith("- ")]


def classroom(request: ModelRequest) -> Any:
    """Teacher repeats its facts; the student notes sentences and answers with its best note."""
    task = str(request.messages[-1].content)
    name = request.output.name if request.output else ""
    system = str(request.messages[0].content)
    if name == "SentenceLabels":
        return choose_labels(request.output.json_schema, task)  # type: ignore[union-attr]
    if system.startswith("You extract facts"):
        return {"facts": [{"content": text, "entity": "Sorrel Bay tide mill", "attribute": attr, "value": value}
                          for text, attr, value in MILL_FACTS if text in task]}
    if system.startswith("Summarise"):
        return "A tide mill."
    if name == "TeacherTurn":
        facts = _items(task, "Facts to teach:")
        return {"explanation": " ".join(facts), "check_question": "What did you learn about the mill?"}
    if name == "StudentNotes":
        said = task.split("Your teacher said:\n", 1)[1].split("\n\nWrite your notes", 1)[0]
        return {"notes": [s for s in re.split(r"(?<=\.)\s+", said) if s.strip()][:4]}
    lines = _items(task, "Your notes:") or _items(task, "Your facts:")
    question = task.split("uestion: ", 1)[1].split("\n", 1)[0].lower()
    words = {w for w in re.findall(r"[a-z]+", question) if len(w) > 3} - {"sorrel", "tide", "mill"}
    best = max(lines, key=lambda l: len(words & set(re.findall(r"[a-z]+", l.lower()))), default="I don't know")
    if name == "CheckAnswer":
        return {"answer": best, "own_words": "the teacher said so"}
    return {"answer": best}


def test_l7_the_taught_student_answers_the_quiz_from_its_own_notes(tmp_path: Path, store: RunStore) -> None:
    suite = tmp_path / "suite"
    (suite / "articles" / "L07").mkdir(parents=True)
    (suite / "articles" / "L07" / "mill.md").write_text("# The mill\n\n" + " ".join(f for f, _, _ in MILL_FACTS))
    questions = [
        {"id": "L7.1", "question": "How much flour does the Sorrel Bay tide mill grind an hour?", "expected": "150 kilograms.",
         "rubric": {"required": [["150"]]}},
        {"id": "L7.2", "question": "How wide is the waterwheel of the Sorrel Bay tide mill?", "expected": "6 metres.",
         "rubric": {"required": [["re:\\b6\\b"]]}},
    ]
    (suite / "L07.json").write_text(json.dumps({
        "level": "L7", "name": "teaching", "articles": [{"file": "L07/mill.md", "source": "Trust", "published": "2024-05-03"}],
        "questions": questions, "teaching": {"topic": "Sorrel Bay tide mill", "quiz": ["L7.1", "L7.2"]},
    }))

    factory = learning_team_factory(FunctionModel(classroom), store=store, teaching_rounds=3)
    results = asyncio.run(run_progressive(load_suite(suite), factory, modes=["single"], runs=1))
    level = results.levels[0]
    assert level.teaching == "ran"
    taught = [r for r in level.records if r.mode == "teaching"]
    assert [r.question_id for r in taught] == ["L7.1", "L7.2"]
    assert all(r.run_id and store.get_run(r.run_id).name.startswith("teach:") for r in taught)
    assert all(r.model_calls >= 1 for r in taught)  # the quiz answer plus a share of the teaching
    # The student knows only its notes, and every note came from the teacher's words.
    for record in taught:
        notes = record.trace["student_notes"]
        assert all(any(note in fact for fact, _, _ in MILL_FACTS) for note in notes)
        if record.passed:
            assert any(value.split()[0] in note for note in notes for _, _, value in MILL_FACTS)
    assert any(r.passed for r in taught)


def test_a_degenerate_quiz_answer_is_asked_again_once(tmp_path: Path, store: RunStore) -> None:
    # Seen on L7: the 0.5B student answered "What powers the tide mill?" with "json".
    suite = tmp_path / "suite"
    (suite / "articles" / "L07").mkdir(parents=True)
    (suite / "articles" / "L07" / "mill.md").write_text("# The mill\n\n" + " ".join(f for f, _, _ in MILL_FACTS))
    (suite / "L07.json").write_text(json.dumps({
        "level": "L7", "name": "teaching", "articles": [{"file": "L07/mill.md", "source": "Trust", "published": "2024-05-03"}],
        "questions": [{"id": "L7.1", "question": "How much flour does the Sorrel Bay tide mill grind an hour?",
                       "expected": "150 kilograms.", "rubric": {"required": [["150"]]}}],
        "teaching": {"topic": "Sorrel Bay tide mill", "quiz": ["L7.1"]},
    }))
    quiz_tasks: list[str] = []

    def glitching(request: ModelRequest) -> Any:
        task = str(request.messages[-1].content)
        if request.output is not None and request.output.name == "QuizAnswer" and "How much flour" in task:
            quiz_tasks.append(task)
            if len(quiz_tasks) == 1:
                return {"answer": "json"}
        return classroom(request)

    factory = learning_team_factory(FunctionModel(glitching), store=store, teaching_rounds=3)
    results = asyncio.run(run_progressive(load_suite(suite), factory, modes=["single"], runs=1))
    [taught] = [r for r in results.levels[0].records if r.mode == "teaching"]
    assert len(quiz_tasks) == 2 and "Write the answer itself" in quiz_tasks[1]
    assert taught.passed and "150" in taught.answer


def test_a_context_answer_fails_only_at_reasoning_or_metacognition() -> None:
    question = _q([["150"]])
    verdict = attribute_failure(level="L1", question=question, answer="It grinds a lot.", mode="context",
                                knowledge="", sources="The mill grinds 150 kilograms an hour.")
    assert verdict.stage == "reasoning" and "is in the articles" in verdict.reason
    derived = attribute_failure(level="L3", question=_q([["21"]]), answer="It fell.", mode="context",
                                knowledge="", sources="82% in March, 61% in June.")
    assert derived.stage == "reasoning" and "worked out" in derived.reason
    unknown = attribute_failure(level="L8", question=_q([], unknown=True), answer="It cost 300 crowns.", mode="context")
    assert unknown.stage == "metacognition"


def test_multi_with_drafts_blames_routing_only_when_compute_did_not_run() -> None:
    run = {"memory": {"id": "memory", "output": {"facts": [{"id": 1, "content": "82% in March; 61% in June"}]}},
           "single": {"id": "single", "output": {"draft": "It fell.", "computed": []}},
           "select": {"id": "select", "output": {"answer": "It fell."}}}
    kwargs = dict(level="L3", question=_q([["21"]]), answer="It fell.", mode="multi", run=run,
                  knowledge="82% in March; 61% in June", sources="82% in March, 61% in June.")
    no_compute = attribute_failure(trace={"intent": "value", "sub_agents": ["memory", "single", "select"]}, **kwargs)
    assert no_compute.stage == "routing" and "compute specialist did not run" in no_compute.reason
    run["compute"] = {"id": "compute", "output": {"draft": "21 percentage points (82% − 61% = 21).", "computed": []}}
    chose_wrong = attribute_failure(trace={"intent": "value", "sub_agents": ["memory", "single", "compute", "select"]},
                                    **kwargs)
    assert chose_wrong.stage == "synthesis" and "selector chose another" in chose_wrong.reason


def test_context_mode_refuses_articles_that_do_not_fit_the_model(tmp_path: Path, store: RunStore) -> None:
    from types import SimpleNamespace

    from moot.errors import MootError

    model = FunctionModel(team_model)
    agent = LearningTeamAgent(tmp_path, model=model, store=store)
    asyncio.run(agent.learn(ARTICLE * 20, source="Courier", published="2024-03-05"))
    model.settings = SimpleNamespace(context=512)  # type: ignore[attr-defined]
    with pytest.raises(MootError, match="do not fit the model's context of 512"):
        asyncio.run(agent.answer("How long is the Kestrel footbridge?", mode="context", seed=None))
    assert not [r for r in model.requests if r.agent == "context"]  # refused before any call
    asyncio.run(agent.aclose())
