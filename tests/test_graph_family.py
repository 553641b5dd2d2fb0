"""reasoning-gym's family_relationships as a graph benchmark: the Python kinship names the
dataset's word from a correctly drawn family, and the graph team's run is turned into one."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from reasoning_gym.graphs.family_relationships import FamilyRelationshipsConfig

from moot.eval.family import Family, OneCallFamily, clean_answer, family_cases, is_correct, kinship
from moot.models.base import ModelResponse
from moot.models.testing import FunctionModel
from test_graph_support import options, prop

CONFIG = FamilyRelationshipsConfig()
SEX = {**{n: "man" for n in CONFIG.male_names}, **{n: "woman" for n in CONFIG.female_names}}


def drawn(story: str) -> Family:
    """The family a careful reader draws from the story (the test reads the dataset's fixed wording)."""
    family = Family()
    couple: tuple[str, str] | None = None
    for sentence in re.split(r"(?<=\.)\s+", story):
        if m := re.match(r"(\w+) is married to (\w+)\.", sentence):
            couple = (m[1], m[2])
            family.marry(*couple)
        elif m := re.match(r"They have (?:a child|children) called (.+)\.", sentence):
            for child in re.split(r", | and ", m[1]):
                family.parent(couple[0], child)  # type: ignore[index]
    for name in family.sex:
        family.sex[name] = SEX[name]
    return family


def test_kinship_over_a_right_graph_gives_the_datasets_word_for_fifty_questions() -> None:
    cases = family_cases(50, seed=1)
    assert len(cases) == 50 and len({c.answer for c in cases}) >= 6
    for case in cases:
        a, b = [w for w in re.findall(r"[A-Z][a-z]+", case.question) if w in SEX]
        assert kinship(drawn(case.story), a, b) == case.answer, case.prompt


def test_a_family_missing_a_link_or_a_sex_gets_no_word() -> None:
    family = Family()
    family.marry("Jayden", "Elizabeth")
    assert kinship(family, "Jayden", "Elizabeth") is None  # married, but nobody's sex is known
    family.sex["Jayden"] = "man"
    assert kinship(family, "Jayden", "Elizabeth") == "husband"
    assert kinship(family, "Jayden", "Edward") is None  # Edward is not in the graph


def test_the_one_call_answer_is_read_as_reasoning_gym_reads_it() -> None:
    case = family_cases(1, seed=1)[0]
    got = asyncio.run(OneCallFamily(FunctionModel(lambda request: f"{case.answer.capitalize()}.")).answer(case))
    assert got.answer == case.answer and is_correct(case, got.answer) and got.usage.requests == 1
    assert clean_answer("  **Grandmother** is the answer") == "grandmother" and not is_correct(case, "")


YES, NO = {"yes": -0.2, "no": -1.8}, {"yes": -1.6, "no": -0.3}


def plain_answer(question: str, truth: Family) -> ModelResponse:
    """A reader's odds for one plain question of the family vocabulary (the test reads its own questions)."""
    if m := re.search(r"Is (\w+) a man or a woman\?", question):
        sex = SEX[m[1]]
        return ModelResponse(text=sex, top_logprobs={sex: -0.1, "man" if sex == "woman" else "woman": -2.5, "a": -4.0})
    if m := re.search(r"Are (\w+) and (\w+) married to each other\?", question):
        yes = truth.spouse.get(m[1]) == m[2]
    elif m := re.search(r"Is (\w+) a child of (\w+)\?", question):
        yes = m[2] in truth.parents.get(m[1], set())
    else:
        assert re.search(r"Are (\w+) and (\w+) siblings\?", question), question
        yes = False
    return ModelResponse(text="yes" if yes else "no", top_logprobs=YES if yes else NO)


def family_script(story: str, *, odds: bool = False) -> Any:
    """Plays the graph team with the family vocabulary: sexes from the name lists, links as drawn.
    Plain questions get the reader's odds with ``odds``, else a one-word answer with none, as a
    provider that gives no odds answers."""
    truth = drawn(story)

    async def reply(request: Any) -> Any:
        if request.settings.top_logprobs:
            answer = plain_answer(str(request.messages[-1].content), truth)
            return answer if odds else answer.text
        name, schema = request.output.name, request.output.json_schema
        task = str(request.messages[1].content)
        if name == "QuestionFocus":
            subjects = options(prop(schema, "subject"))
            people = [p for p in subjects if p in SEX]
            return {"subject": people[0], "object": people[1]}
        if name == "EntityChoices":
            labels = re.findall(r'^c\d+\. "(.*)" \(in', task, re.M)
            return {f"c{i}": f"{label}: {SEX.get(label, 'not a person')}" for i, label in enumerate(labels, 1)}
        if name == "AliasChoices":
            return {k: "different" for k in schema["properties"]}
        if name == "LinkChoices":
            out = {}
            for key, spec in schema["properties"].items():
                offered = options(spec)
                chosen = no_link = next(o for o in offered if o.endswith(": no link"))
                for o in offered:
                    if m := re.fullmatch(r"(\w+) is married to (\w+)", o):
                        chosen = o if truth.spouse.get(m[1]) == m[2] else chosen
                    elif m := re.fullmatch(r"(\w+) is a parent of (\w+)", o):
                        chosen = o if m[1] in truth.parents.get(m[2], set()) else chosen
                    if chosen != no_link:
                        break
                out[key] = chosen
            return out
        if name == "PlaceholderOutput":
            return {"placeholders": []}
        raise AssertionError(f"unexpected schema {name}")

    return FunctionModel(reply)


def team_answer(case: Any, model: FunctionModel, tmp_path: Any) -> Any:
    """The eval's graph team (two iterations) on one item, with ``model`` for every agent."""
    from moot.cli.eval_graph_family import FamilyTeam
    from moot.runtime import RunStore

    return asyncio.run(FamilyTeam(model, RunStore(tmp_path / "runs.db"), 2).answer(case))


def test_the_graph_team_asks_the_family_plainly_and_python_names_the_relation(tmp_path: Any) -> None:
    cases = family_cases(6, seed=1)
    right = 0
    for case in cases:
        model = family_script(case.story, odds=True)
        right += is_correct(case, team_answer(case, model, tmp_path).answer)
        asked = [str(r.messages[-1].content) for r in model.requests]
        assert all(r.settings.top_logprobs and r.output is None for r in model.requests)  # no listed choice at all
        assert not any("child a man" in q for q in asked)  # "child" is no name: not asked, not a person
        people = {n for n in SEX if n in case.story}
        assert sum("a man or a woman" in q for q in asked) == len(people)
    assert right == len(cases)


def test_a_model_that_gives_no_odds_is_asked_the_listed_way_after_one_call(tmp_path: Any) -> None:
    cases = family_cases(6, seed=1)
    right = 0
    for case in cases:
        model = family_script(case.story, odds=False)
        got = team_answer(case, model, tmp_path)
        right += is_correct(case, got.answer)
        assert sum(1 for r in model.requests if r.settings.top_logprobs) == 1
        assert got.usage.requests <= 11
    assert right == len(cases)


def test_a_model_that_leans_no_on_every_relation_draws_no_link_and_names_no_relation(tmp_path: Any) -> None:
    case = family_cases(1, seed=1)[0]
    truth = drawn(case.story)

    def reply(request: Any) -> Any:
        answer = plain_answer(str(request.messages[-1].content), truth)
        return answer if "a man or a woman" in str(request.messages[-1].content) else ModelResponse(text="no", top_logprobs=NO)

    model = FunctionModel(reply)
    got = team_answer(case, model, tmp_path)
    assert got.answer is None and "0 couples, 0 parent links" in got.note
    assert any("married to each other" in str(r.messages[-1].content) for r in model.requests)


def test_moot_eval_graph_family_scores_the_one_call_as_reasoning_gym_does(tmp_path: Any) -> None:
    import json
    import os
    import subprocess
    import sys

    from openai_stub import openai_compatible_server

    env = {**os.environ, "MOOT_HOME": str(tmp_path), "MOOT_RUNS_DB": str(tmp_path / "runs.db")}
    with openai_compatible_server(lambda body: "Mother-in-law.") as model:
        done = subprocess.run([sys.executable, "-m", "moot", "eval", "graph", "--family", "3", "--systems", "one-call",
                               "--model", model, "--out", str(tmp_path / "f.json"), "--json"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])["summary"]["one-call"]
    gold = [c.answer for c in family_cases(3, seed=1)]
    assert summary["questions"] == 3 and summary["correct"] == gold.count("mother-in-law") and summary["calls"] == 3
    rows = json.loads((tmp_path / "f.json").read_text())["questions"]["one-call"]
    assert [r["answer"] for r in rows] == ["mother-in-law"] * 3
