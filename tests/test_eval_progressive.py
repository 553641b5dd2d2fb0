"""The progressive evaluation harness: level files, rubric, judge, runner, report, error analysis.

Agents here are real adapters (a small notebook agent a user could write, and the learning
team) over FunctionModels; knowledge bases and run stores are real SQLite files.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from moot.errors import MootError
from moot.eval.adapter import AgentAnswer, EvalAgent
from moot.eval.judge import JudgeVerdict, LLMJudge, agreement
from moot.eval.levels import Question, Rubric, load_level, load_suite
from moot.eval.report import render_markdown, summarise_level, summary_json, write_report
from moot.eval.results import EvalResults
from moot.eval.rubric import grade, grade_question, says_unknown
from moot.eval.runner import run_progressive
from moot.models.base import ModelRequest, ModelSettings, Usage, UserMessage
from moot.models.testing import FunctionModel

ARTICLE = """# Kestrel footbridge opens

Dunmore, 5 March 2024. The Kestrel footbridge over the Dun river opened today. It is 214 metres
long and cost 4,200,000 crowns. The engineer was Mara Olsen.
"""


def write_level(folder: Path, number: int = 1, **overrides: Any) -> Path:
    """A small level file in the shared format, with its article."""
    (folder / "articles" / f"L{number:02d}").mkdir(parents=True, exist_ok=True)
    (folder / "articles" / f"L{number:02d}" / "kestrel.md").write_text(ARTICLE, encoding="utf-8")
    level = {
        "level": f"L{number}",
        "name": "direct recall",
        "about": "recall of single facts",
        "articles": [{"file": f"L{number:02d}/kestrel.md", "source": "Dunmore Courier", "published": "2024-03-05"}],
        "questions": [
            {"id": f"L{number}.1", "question": "How long is the Kestrel footbridge?", "expected": "It is 214 metres long.",
             "rubric": {"required": [["214"], ["metre", "meter", "re:\\bm\\b"]], "forbidden": ["re:\\b(241|124)\\b"],
                        "expects_unknown": False}},
            {"id": f"L{number}.2", "question": "Who painted the Kestrel footbridge?",
             "expected": "The articles do not say who painted it.",
             "rubric": {"required": [], "forbidden": ["Olsen"], "expects_unknown": True}},
        ],
    }
    level.update(overrides)
    path = folder / f"L{number:02d}.json"
    path.write_text(json.dumps(level), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- rubric


RUBRIC = Rubric(required=[["214"], ["metre", "meter", "re:\\bm\\b"]], forbidden=["re:\\b(241|124)\\b"])


@pytest.mark.parametrize("answer", [
    "It is 214 metres long.",
    "The  footbridge\nspans 214 m.",
    "Two hundred and fourteen? No: 214 METERS.",
])
def test_paraphrases_with_the_required_facts_pass(answer: str) -> None:
    result = grade(answer, RUBRIC)
    assert result.passed and result.score == 1.0


def test_half_the_groups_scores_half_and_fails() -> None:
    result = grade("It is 214 long.", RUBRIC)
    assert result.score == 0.5 and not result.passed
    assert "metre" in result.reason


def test_a_forbidden_value_fails_even_with_the_right_one() -> None:
    result = grade("It was planned at 241 metres, built at 214 metres.", RUBRIC)
    assert result.score == 0.0 and not result.passed and result.forbidden_hit


def test_thousands_separators_and_dollar_signs_are_normalised() -> None:
    cost = Rubric(required=[["4200000"], ["$12"]])
    assert grade("It cost 4,200,000 crowns, tickets $12.", cost).passed
    assert grade("It cost 4200000 crowns, tickets 12 each.", cost).passed
    assert not grade("It cost 4,300,000 crowns.", cost).passed


def test_expects_unknown_passes_only_a_plain_i_dont_know() -> None:
    unknown = Rubric(required=[], forbidden=["Olsen"], expects_unknown=True)
    for answer in ("I don't know.", "The articles do not say who painted it.", "That is not mentioned in the sources.",
                   "I don’t know: the knowledge base holds no facts about painting.", "It's not stated.",
                   "The painter’s not given anywhere.", "They're not mentioned."):
        assert grade(answer, unknown).passed, answer
    assert not grade("Mara Olsen painted it.", unknown).passed
    assert not grade("It was painted by a local firm.", unknown).passed
    # Saying it does not know, then guessing a forbidden value anyway, fails.
    assert not grade("The sources do not say; probably Olsen.", unknown).passed
    assert says_unknown("Nothing in the facts: cannot be determined.")


def test_pass_threshold_lowers_the_bar_for_one_question() -> None:
    question = Question(id="X.1", question="q", expected="214 m", rubric=RUBRIC, pass_threshold=0.5)
    assert grade_question("214", question).passed
    assert not grade_question("124", question).passed


# --------------------------------------------------------------------------- level files


def test_a_valid_level_loads_with_its_articles(tmp_path: Path) -> None:
    level = load_level(write_level(tmp_path))
    assert level.level == "L1" and len(level.questions) == 2
    assert "214 metres" in level.article_path(level.articles[0]).read_text()


@pytest.mark.parametrize(("change", "message"), [
    ({"questions": [{"id": "L1.1", "question": "q", "expected": "e", "rubric": {"required": [], "forbidden": []}}]},
     "required groups"),
    ({"level": "level one"}, "L1 … L12"),
    ({"articles": [{"file": "L01/missing.md", "source": "x"}]}, "missing or empty"),
    ({"questions": [{"id": "L1.1", "question": "q", "expected": "e", "rubric": {"required": [["re:("]]}}]},
     "not a valid regex"),
    ({"teaching": {"topic": "bridges", "quiz": ["L1.9"]}}, "unknown question ids"),
    ({"articles": [{"file": "../L01.json", "source": "x"}]}, "is outside"),
])
def test_a_bad_level_file_is_one_line_naming_the_file(tmp_path: Path, change: dict, message: str) -> None:
    path = write_level(tmp_path, **change)
    with pytest.raises(MootError) as info:
        load_level(path)
    line = info.value.one_line()
    assert str(path) in line and message in line and "\n" not in line


def test_not_json_and_unknown_levels_are_one_line_errors(tmp_path: Path) -> None:
    write_level(tmp_path)
    (tmp_path / "L02.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(MootError, match="L02.json: is not valid JSON"):
        load_suite(tmp_path, ["L2"])
    with pytest.raises(MootError, match="unknown level L7"):
        load_suite(tmp_path, ["L1", "L7"])
    assert [lv.level for lv in load_suite(tmp_path, ["l01"])] == ["L1"]


def test_two_files_for_one_level_or_none_named_right_are_one_line_errors(tmp_path: Path) -> None:
    write_level(tmp_path)
    (tmp_path / "L1.json").write_text((tmp_path / "L01.json").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(MootError, match="two level files for L1 in .*: L01.json and L1.json"):
        load_suite(tmp_path)
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "Lnotes.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MootError, match=r"no level files named like L01.json .*found Lnotes.json"):
        load_suite(odd)


# --------------------------------------------------------------------------- judge


def test_judge_takes_the_median_score_and_passes_by_the_threshold() -> None:
    votes = iter([(0.2, "misses the length"), (1.0, "right"), (0.9, "right, in other words")])
    seen_seeds: list[int | None] = []

    def judge_model(request: ModelRequest) -> Any:
        seen_seeds.append(request.settings.seed)
        assert "Expected answer: It is 214 metres long." in request.messages[-1].content
        score, reason = next(votes)
        return {"score": score, "reason": reason}

    judge = LLMJudge(FunctionModel(judge_model), votes=3)
    verdict = asyncio.run(judge.grade("How long?", "It is 214 metres long.", "214 m", pass_threshold=0.8))
    assert verdict.score == 0.9 and verdict.passed and verdict.reason == "right, in other words"
    assert len(verdict.votes) == 3 and verdict.usage["requests"] == 3
    assert seen_seeds == [1, 2, 3]  # each vote samples differently


def test_judge_pass_follows_its_score_so_the_verdict_cannot_contradict_itself() -> None:
    judge = LLMJudge(FunctionModel(lambda r: {"score": 0.9, "reason": "nearly"}), votes=1)
    assert not asyncio.run(judge.grade("q", "e", "a")).passed  # 0.9 < the default threshold 1.0
    assert asyncio.run(judge.grade("q", "e", "a", pass_threshold=0.5)).passed
    zero = LLMJudge(FunctionModel(lambda r: {"score": 0.0, "reason": "wrong"}), votes=1)
    assert not asyncio.run(zero.grade("q", "e", "a", pass_threshold=0.0)).passed  # a 0 never passes


def test_judge_writes_its_reason_before_its_score() -> None:
    # Structured output is generated in the schema's field order; the score must come after the
    # reasoning it should follow from.
    assert list(JudgeVerdict.model_json_schema()["properties"]) == ["reason", "score"]


def test_judge_with_every_vote_failing_says_so() -> None:
    judge = LLMJudge(FunctionModel(lambda r: "not json at all"), votes=2)
    verdict = asyncio.run(judge.grade("q", "e", "a"))
    assert not verdict.passed and "every judge vote failed" in verdict.reason


def test_agreement_rate() -> None:
    assert agreement([(True, True), (False, True), (False, False), (True, True)]) == 0.75
    assert agreement([]) is None


# --------------------------------------------------------------------------- runner, with a user's own agent


class NotebookAgent:
    """The ~15-line agent of docs/eval.md: keeps articles as notes, asks a model with them."""

    def __init__(self, folder: Path, model: FunctionModel) -> None:
        self.notes: list[str] = []
        self.model = model
        self.folder = folder

    async def learn(self, content: str, *, source: str, published: str | None) -> Usage:
        self.notes.append(content)
        return Usage(input_tokens=len(content) // 4, output_tokens=0, requests=1)

    async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
        prompt = f"Notes:\n{''.join(self.notes)}\nMode: {mode}\nQuestion: {question}"
        reply = await self.model.request(ModelRequest(messages=(UserMessage(content=prompt),),
                                                      settings=ModelSettings(seed=seed)))
        return AgentAnswer(text=reply.text, usage=reply.usage, trace={"facts": self.notes})

    def knowledge_text(self) -> str:
        return "\n".join(self.notes)


def scripted_answers(request: ModelRequest) -> str:
    """multi always right; single right on seed 1, wrong (a forbidden value, a guess) on seed 2."""
    text = request.messages[-1].content
    multi = "Mode: multi" in text
    if "How long" in text:
        return "The footbridge is 214 metres long." if multi or request.settings.seed == 1 else "It is 241 metres."
    return "The articles do not say who painted it." if multi else "Mara Olsen painted it."


def test_runner_end_to_end_records_medians_spread_report_and_rerender(tmp_path: Path) -> None:
    write_level(tmp_path / "suite", 1)
    write_level(tmp_path / "suite", 2, name="second level")
    levels = load_suite(tmp_path / "suite")
    model = FunctionModel(scripted_answers)
    folders: list[Path] = []

    def factory(folder: Path) -> NotebookAgent:
        folders.append(folder)
        assert not any(folder.iterdir())  # a fresh, empty folder per level
        return NotebookAgent(folder, model)

    assert isinstance(NotebookAgent(tmp_path, model), EvalAgent)
    results = asyncio.run(run_progressive(levels, factory, modes=["single", "multi"], runs=2, base_seed=0,
                                          model_name="function", save_to=tmp_path / "out" / "results.json"))
    assert len(folders) == 2 and folders[0] != folders[1] and not folders[0].exists()  # removed afterwards
    level = results.levels[0]
    assert level.learn.articles == 1 and level.learn.model_calls == 1  # learned once, not per mode or run
    assert len(level.records) == 2 * 2 * 2  # questions × modes × runs
    record = next(r for r in level.records if r.mode == "single" and r.run == 2 and r.question_id == "L1.1")
    assert record.answer == "It is 241 metres." and not record.passed and record.seed == 2
    assert record.stage == "reasoning" and "241" in record.stage_reason
    guess = next(r for r in level.records if r.mode == "single" and r.question_id == "L1.2")
    assert guess.stage == "metacognition"

    summary = summarise_level(level)
    single, multi = summary.modes["single"], summary.modes["multi"]
    assert (single.pass_min, single.pass_max, single.pass_rate) == (0.0, 0.5, 0.25)  # run 1: 1/2, run 2: 0/2
    assert multi.pass_rate == 1.0 and summary.delta == 0.75
    assert multi.calls_per_question == 1.0

    md, png = write_report(results, tmp_path / "report")
    text = md.read_text()
    assert "| L1 direct recall | 25% (0%–50%) | 0.25 | 100% (100%–100%) | 1.00 | +75 pts |" in text
    assert "| reasoning | 2 | 0 | 2 |" in text and "| metacognition | 4 | 0 | 4 |" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000

    reloaded = EvalResults.load(tmp_path / "out" / "results.json")
    assert render_markdown(reloaded, chart=png.name) == text  # the JSON alone rebuilds the report
    assert summary_json(reloaded)["overall"]["multi"]["pass_rate"] == 1.0


def test_an_article_that_fails_to_learn_is_named_in_the_report(tmp_path: Path) -> None:
    # a level's article refused by the team (on a blind suite: a month given as its date) was
    # counted in the results file only, and the team answered that level without it unnoticed
    write_level(tmp_path / "suite", 1)

    class Refusing(NotebookAgent):
        async def learn(self, content: str, *, source: str, published: str | None) -> Usage:
            raise MootError(f"published date {published!r} is not a date", fix="pass an ISO date")

    model = FunctionModel(scripted_answers)
    results = asyncio.run(run_progressive(load_suite(tmp_path / "suite"), lambda folder: Refusing(folder, model),
                                          modes=["single"], runs=1, base_seed=0, model_name="function"))
    assert len(results.levels[0].records) == 2  # the questions still ran, on what was learned
    text = render_markdown(results, chart=None)
    assert "## Articles not learned" in text and "- L1: " in text and "is not a date" in text


def test_an_agent_without_teaching_gets_l7_marked_not_supported(tmp_path: Path) -> None:
    write_level(tmp_path, 7, teaching={"topic": "the Kestrel footbridge", "quiz": ["L7.1", "L7.2"]})
    results = asyncio.run(run_progressive(load_suite(tmp_path), lambda f: NotebookAgent(f, FunctionModel(scripted_answers)),
                                          modes=["multi"], runs=1))
    level = results.levels[0]
    assert level.teaching == "not supported"
    assert all(r.mode == "multi" for r in level.records)  # no zero-scored teaching records
    assert "not supported by this agent" in render_markdown(results)


def test_runner_refuses_bad_modes_and_runs(tmp_path: Path) -> None:
    levels = [load_level(write_level(tmp_path))]
    with pytest.raises(MootError, match="unknown mode"):
        asyncio.run(run_progressive(levels, lambda f: NotebookAgent(f, FunctionModel(scripted_answers)), modes=["both"]))
    with pytest.raises(MootError, match="at least 1"):
        asyncio.run(run_progressive(levels, lambda f: NotebookAgent(f, FunctionModel(scripted_answers)), runs=0))


def test_report_of_a_file_that_is_not_results_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"levels": 3}', encoding="utf-8")
    with pytest.raises(MootError, match="not a progressive results file"):
        EvalResults.load(bad)


def test_report_counts_answers_the_budget_cut_short_and_those_that_passed_anyway() -> None:
    from moot.eval.results import LevelResult, QuestionRecord

    def record(qid: str, passed: bool, status: str) -> QuestionRecord:
        return QuestionRecord(level="L1", question_id=qid, question="q", expected="e", mode="multi", run=1,
                              answer="I could not complete an answer; the most relevant facts are: 214 m", score=float(passed),
                              passed=passed, stage=None if passed else "budget", trace={"run_status": status})

    results = EvalResults(modes=["multi"], runs=1, levels=[LevelResult(level="L1", name="recall", questions=3, records=[
        record("L1.1", True, "stopped"), record("L1.2", False, "stopped"), record("L1.3", True, "completed")])])
    text = render_markdown(results, chart=None)
    assert "2 answers were cut short by the per-question budget (multi 2)" in text
    assert "a reply that is only a partial result fails; 1 of them passed: the answer was complete before the stop" in text
    assert "| budget | 1 | 1 |" in text


class GivingUpAgent(NotebookAgent):
    """Answers with the notes themselves and says it gave up, as a team out of budget would."""

    async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
        return AgentAnswer(text="I could not complete an answer; notes: " + " ".join(self.notes), complete=False)


def test_a_partial_result_fails_even_when_the_listed_facts_hold_the_answer(tmp_path: Path) -> None:
    write_level(tmp_path, 1)
    results = asyncio.run(run_progressive(load_suite(tmp_path), lambda f: GivingUpAgent(f, FunctionModel(scripted_answers)),
                                          modes=["single"], runs=1))
    record = next(r for r in results.levels[0].records if r.question_id == "L1.1")
    assert "214" in record.answer  # the rubric alone would pass it
    assert (record.passed, record.score) == (False, 0.0)
    assert record.reason.startswith("no answer: the agent returned a partial result")


def test_a_run_killed_mid_level_keeps_the_answers_it_had(tmp_path: Path) -> None:
    write_level(tmp_path / "suite")

    class DiesOnSecondQuestion(NotebookAgent):
        async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
            if "painted" in question:
                raise KeyboardInterrupt  # what Ctrl-C or a kill looks like to the runner
            return await super().answer(question, mode=mode, seed=seed)

    out = tmp_path / "results.json"
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_progressive(load_suite(tmp_path / "suite"), lambda f: DiesOnSecondQuestion(f, FunctionModel(scripted_answers)),
                                    modes=["multi"], save_to=out))
    saved = EvalResults.load(out)
    level = saved.levels[0]
    assert not level.complete and [r.question_id for r in level.records] == ["L1.1"]
    assert level.records[0].passed
    assert "| L1 direct recall (interrupted) | – | – | 100% |" in render_markdown(saved, chart=None)


def test_resume_keeps_the_complete_levels_and_runs_the_rest_again(tmp_path: Path) -> None:
    write_level(tmp_path / "suite", 1)
    write_level(tmp_path / "suite", 2, name="second level")
    write_level(tmp_path / "suite", 3, name="third level")
    levels = load_suite(tmp_path / "suite")
    asked: list[str] = []

    class Counting(NotebookAgent):
        dies = True

        async def answer(self, question: str, *, mode: str, seed: int | None) -> AgentAnswer:
            asked.append(question)
            if self.dies and "painted" in question and len(asked) > 2:
                raise KeyboardInterrupt  # killed in level 2, after its first answer
            return await super().answer(question, mode=mode, seed=seed)

    out = tmp_path / "results.json"
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(run_progressive(levels, lambda f: Counting(f, FunctionModel(scripted_answers)), modes=["multi"],
                                    model_name="function", save_to=out))
    stopped = EvalResults.load(out)
    assert [(lv.level, lv.complete, len(lv.records)) for lv in stopped.levels] == [("L1", True, 2), ("L2", False, 1)]
    first_l1 = stopped.levels[0].model_dump()

    asked.clear()
    Counting.dies = False
    seen: list[tuple[str, str]] = []
    resumed = asyncio.run(run_progressive(levels, lambda f: Counting(f, FunctionModel(scripted_answers)), modes=["multi"],
                                          model_name="function", save_to=out, resume=stopped,
                                          progress=lambda e: seen.append((e.kind, e.level))))  # fmt: skip
    assert len(asked) == 4  # L2 again from the start and L3; nothing of L1 is asked again
    assert ("kept", "L1") in seen and ("level", "L2") in seen and ("level", "L1") not in seen
    assert [(lv.level, lv.complete, len(lv.records)) for lv in resumed.levels] == [("L1", True, 2), ("L2", True, 2), ("L3", True, 2)]
    assert resumed.levels[0].model_dump() == first_l1
    assert resumed.started_at == stopped.started_at and resumed.seconds >= stopped.seconds
    assert "kept L1; ran L2, L3" in resumed.notes[-1]
    assert EvalResults.load(out).model_dump() == resumed.model_dump()


def test_resume_keeps_levels_this_command_did_not_ask_for_in_suite_order(tmp_path: Path) -> None:
    for n in (1, 2, 3):
        write_level(tmp_path / "suite", n, name=f"level {n}")
    suite = tmp_path / "suite"
    agent = lambda f: NotebookAgent(f, FunctionModel(scripted_answers))  # noqa: E731
    first = asyncio.run(run_progressive(load_suite(suite, ["L1", "L3"]), agent, modes=["multi"]))
    again = asyncio.run(run_progressive(load_suite(suite, ["L2"]), agent, modes=["multi"], resume=first))
    assert [lv.level for lv in again.levels] == ["L1", "L2", "L3"]


@pytest.mark.parametrize(("change", "field"), [
    ({"model_name": "another"}, "model"),
    ({"modes": ["single"]}, "modes"),
    ({"runs": 2}, "runs"),
    ({"base_seed": 5}, "seeds"),
    ({"budget": "quick"}, "budget"),
])
def test_resume_refuses_a_file_run_with_other_settings(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    write_level(tmp_path / "suite", 1)
    levels = load_suite(tmp_path / "suite")
    agent = lambda f: NotebookAgent(f, FunctionModel(scripted_answers))  # noqa: E731
    settings: dict[str, Any] = {"modes": ["multi"], "runs": 1, "base_seed": 0, "model_name": "function", "budget": "deep"}
    first = asyncio.run(run_progressive(levels, agent, **settings))
    with pytest.raises(MootError, match=f"cannot resume: the results file has {field} "):
        asyncio.run(run_progressive(levels, agent, **{**settings, **change}, resume=first))


def test_cli_modes_and_role_models_parse_or_fail_in_one_line() -> None:
    from moot.cli.eval_progressive_cmd import _modes, _split_models
    from moot.errors import MootError

    assert _modes("all") == ["single", "multi", "context"] and _modes("both") == ["single", "multi"]
    assert _modes("single,context") == ["single", "context"]
    with pytest.raises(MootError, match="unknown mode 'solo'"):
        _modes("single,solo")
    assert _split_models(["local", "compute=local-1.5b"]) == ("local", {"compute": "local-1.5b"})
    assert _split_models(["openai-compatible:http://x/v1#m"]) == ("openai-compatible:http://x/v1#m", {})
    with pytest.raises(MootError, match="unknown role 'judge'"):
        _split_models(["judge=local"])
