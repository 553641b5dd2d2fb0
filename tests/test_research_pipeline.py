"""The research pipeline with function models over a real index: plan, parallel researchers,
synthesis, verification, fallbacks and budgets, as a user of ``ResearchTeam`` sees them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moot.codeindex import CodeIndex
from moot.runtime import EventBus, RunStore
from moot.teams.research import ResearchConfig, ResearchTeam, route
from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from test_research_support import PLAN_3, ResearchScript, make_repo, model_for


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def team_for(repo: Path, script: ResearchScript, tmp_path: Path, **config: object) -> ResearchTeam:
    return ResearchTeam(repo, model=model_for(script), store=RunStore(tmp_path / "runs.db"),
                        db_path=tmp_path / "index.db", config=ResearchConfig(**config))  # type: ignore[arg-type]


GOOD = ("Requests are split by `parse_request` (app/server.py:4). "
        "Handlers are chosen by `route_request` (app/server.py:10). "
        "Sessions are saved by `save_session` in app/store.py:9.")


def test_multi_mode_runs_every_phase_and_records_one_run(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, verdicts=[{"claim": 1, "status": "VERIFIED"}])
    team = team_for(repo, script, tmp_path)
    result = team.ask_sync("How does the app handle a request end-to-end?", mode="multi")
    assert result.mode == "multi" and result.status == "completed"
    assert [sq.question for sq in result.plan.sub_questions] == [p["question"] for p in PLAN_3]
    assert len(result.evidence) == 3
    # each researcher saw its own sub-question only, seeded with real search hits
    assert sorted(t.split("Your question: ")[1].split("\n")[0] for t in script.researcher_tasks) == sorted(
        p["question"] for p in PLAN_3)
    assert all("Search results:\n[1] app/" in t for t in script.researcher_tasks)
    for bundle in result.evidence:
        paths = {f.file_path for f in bundle.findings}
        assert "app/ghost.py" not in paths  # an invented location never becomes evidence
        assert "dropped" in bundle.coverage_note
    assert set(result.usage_by_phase) == {"planner", "researchers", "synthesizer", "verifier", "quotes"}
    assert result.usage_by_phase["researchers"].usage.requests == 3
    # one line picker per researcher's sub-question, each quoting its first line verbatim
    assert result.usage_by_phase["quotes"].usage.requests == 3
    assert result.usage.requests == 9
    assert 1 <= len(result.quoted) <= 3
    for quoted in result.quoted:
        assert (repo / quoted.path).read_text().splitlines()[quoted.line - 1].strip() == quoted.text
        assert f"- {quoted.location()} (in `{quoted.symbol}`): `{quoted.text}`" in result.answer
    assert "app/server.py:4" in result.answer
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.status == "completed"
    assert {"planner", "researcher-1", "researcher-2", "researcher-3", "synthesizer", "verifier",
            "line-picker-1", "line-picker-2", "line-picker-3"} <= set(record.results)
    # The timeline draws the verifier after the synthesizer and the pickers, whose lines it checks.
    started = {e.task_id: e.payload for e in RunStore(tmp_path / "runs.db").events(result.run_id) if e.type.value == "task_started"}
    assert {"synthesizer", "line-picker-1", "line-picker-2", "line-picker-3"} <= set(started["verifier"]["depends_on"])


def test_researchers_really_run_at_the_same_time(repo: Path, tmp_path: Path) -> None:
    # The barrier opens only when all three researchers are waiting in a model call at once;
    # run one after another, the first would wait alone and time out.
    async def main() -> None:
        script = ResearchScript(PLAN_3, synth=GOOD, barrier=asyncio.Barrier(3))
        result = await team_for(repo, script, tmp_path).ask("How does the app work end-to-end?", mode="multi")
        assert all(b.stop_reason == "completed" for b in result.evidence)
        events = RunStore(tmp_path / "runs.db").events(result.run_id)
        starts = {e.task_id: e.ts for e in events if e.type.value == "task_started" and str(e.task_id).startswith("researcher")}
        ends = {e.task_id: e.ts for e in events if e.type.value == "task_finished" and str(e.task_id).startswith("researcher")}
        assert len(starts) == 3 and max(starts.values()) < min(ends.values())  # every bar overlaps every other

    asyncio.run(main())


def test_sequential_researchers_do_not_overlap_and_do_not_see_each_other(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD)
    result = team_for(repo, script, tmp_path, parallel=False).ask_sync("How does the app work end-to-end?", mode="multi")
    events = RunStore(tmp_path / "runs.db").events(result.run_id)
    spans = {}
    for e in events:
        if str(e.task_id).startswith("researcher") and e.type.value in ("task_started", "task_finished"):
            spans.setdefault(e.task_id, []).append(e.ts)
    ordered = sorted(spans.values())
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:]))
    assert not any("Results from earlier tasks" in t for t in script.researcher_tasks)


def test_fewer_than_two_sub_questions_are_derived_from_the_first_search(repo: Path, tmp_path: Path) -> None:
    # One sub-question breaks the plan schema (2 to 5): the planner is told so once; then the
    # sub-questions come from the definitions the first search finds, not a silent single run.
    script = ResearchScript(PLAN_3[:1], synth=GOOD)
    result = team_for(repo, script, tmp_path).ask_sync("How is a request parsed?", mode="multi")
    assert result.mode == "multi"
    assert "derived from the question's parts and the first search" in result.plan.note
    derived = result.plan.sub_questions
    assert len(derived) >= 2 and derived[0].initial_actions == ["parse_request"]
    assert all(sq.question.startswith("What does `") for sq in derived)
    assert [name for name, _ in script.log][:2] == ["planner", "planner"]
    assert "app/server.py:4" in result.answer


def test_a_question_of_several_clauses_is_split_by_its_clauses(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript([], synth=GOOD)
    question = "Which function picks the handler, in which file is it defined, and which function calls it?"
    result = team_for(repo, script, tmp_path).ask_sync(question, mode="multi")
    assert result.mode == "multi"
    assert [sq.question for sq in result.plan.sub_questions] == [
        "Which function picks the handler?",
        "in which file is it defined? (about: Which function picks the handler)",
        "which function calls it? (about: Which function picks the handler)",
    ]


def test_duplicate_sub_questions_with_nothing_to_derive_fall_back_to_single(repo: Path, tmp_path: Path) -> None:
    twice = [{**PLAN_3[0], "question": "  how is a ZEBRA quux? "}, {**PLAN_3[0], "question": "how is a zebra QUUX?"}]
    script = ResearchScript(twice, synth=GOOD)
    # nothing in the repository matches, and the question has one clause: single is all that is left
    result = team_for(repo, script, tmp_path).ask_sync("How is a zebra quux?", mode="multi")
    assert result.mode == "single"
    assert "1 distinct sub-question(s); fell back to single" in result.routing_rule
    assert [name for name, _ in script.log] == ["planner", "single"]


def test_researcher_budget_stops_only_that_researcher(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, researcher_tool_loops=1)  # researchers never stop calling tools
    result = team_for(repo, script, tmp_path, researcher_calls=2).ask_sync("How does it work end-to-end?", mode="multi")
    assert [b.stop_reason for b in result.evidence] == ["budget:calls"] * 3
    assert all(b.findings for b in result.evidence)  # the seeded hits are kept as partial evidence
    assert result.usage_by_phase["researchers"].usage.requests == 6
    assert result.answer.startswith("Requests are split")  # the synthesizer still ran
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.results["researcher-1"]["status"] == "stopped"


def test_verifier_corrected_revises_the_answer(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, verdicts=[
        {"claim": 1, "status": "VERIFIED"},
        {"claim": 2, "status": "CORRECTED", "correction": "Handlers are chosen by `route_request`, which returns `not_found` for unknown paths"},
    ])
    result = team_for(repo, script, tmp_path).ask_sync("How does the app handle a request end-to-end?", mode="multi")
    statuses = [(v.status, v.method) for v in result.verification]
    assert ("CORRECTED", "model") in statuses and ("VERIFIED", "model") in statuses
    assert "returns `not_found` for unknown paths" in result.answer
    assert "returns `not_found`" not in result.draft_answer
    # the verifier was shown the cited code, read from the index
    verifier_task = next(t for name, t in script.log if name == "verifier")
    assert "def parse_request(raw):" in verifier_task


def test_a_verifier_correction_naming_its_own_tool_is_refused_and_the_claim_stays(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, verdicts=[
        {"claim": 1, "status": "VERIFIED"},
        {"claim": 2, "status": "CORRECTED", "correction": "The function `read_file` is called with the raw request."},
    ])
    result = team_for(repo, script, tmp_path).ask_sync("How does the app handle a request end-to-end?", mode="multi")
    assert "read_file" not in result.answer
    refused = [v for v in result.verification if v.method == "model" and v.status == "UNVERIFIABLE"]
    assert refused and refused[0].correction.startswith("the verifier's correction was refused: read_file is one of moot's")
    assert refused[0].claim in result.answer  # the claim it would have replaced is still there


def test_invented_citations_are_corrected_or_removed(repo: Path, tmp_path: Path) -> None:
    bad = ("Sessions are saved by `save_session` (app/session_saver.py:12). "
           "The app also has a cache in lib/cache.py:40 that stores pages.")
    script = ResearchScript(PLAN_3, synth=bad)
    result = team_for(repo, script, tmp_path).ask_sync("How does the app work end-to-end?", mode="multi")
    corrected = [v for v in result.verification if v.status == "CORRECTED" and v.method == "citation"]
    assert len(corrected) == 2
    assert "app/session_saver.py" not in result.answer and "lib/cache.py" not in result.answer
    assert "app/store.py:10" in result.answer  # moved to where save_session is really defined
    assert "citation removed" in corrected[1].correction


def test_auto_routing_is_used_and_reported(repo: Path, tmp_path: Path) -> None:
    assert route("Where is parse_request defined?").rule == "symbol-lookup"
    assert route("How does the request flow from the socket to the handler?").mode == "multi"
    assert route("Why are sessions kept in memory?").rule == "how-why"
    assert route("What does the readme say?").mode == "single"
    script = ResearchScript(PLAN_3, synth=GOOD)
    team = team_for(repo, script, tmp_path)
    single = team.ask_sync("Where is parse_request defined?")
    assert single.mode == "single" and single.routing_rule.startswith("symbol-lookup")
    multi = team.ask_sync("What is the architecture of the app?")
    assert multi.mode == "multi" and multi.routing_rule.startswith("architecture-word")


def test_events_name_phases_and_researchers(repo: Path, tmp_path: Path) -> None:
    seen = []
    bus = EventBus()
    bus.subscribe(lambda e: seen.append((e.type.value, e.task_id)))
    script = ResearchScript(PLAN_3, synth=GOOD)
    team_for(repo, script, tmp_path).ask_sync("How does it work end-to-end?", mode="multi", bus=bus)
    started = [t for kind, t in seen if kind == "task_started"]
    assert started == ["planner", "researcher-1", "researcher-2", "researcher-3", "synthesizer", "verifier"] or (
        started[0] == "planner" and set(started[1:4]) == {"researcher-1", "researcher-2", "researcher-3"})
    assert ("tool_call", "researcher-1") in seen
    assert [kind for kind, _ in seen].count("run_started") == 1 and seen[-1][0] == "run_finished"


def test_bad_repo_path_is_a_user_error(tmp_path: Path) -> None:
    from moot.errors import MootError

    script = ResearchScript(PLAN_3, synth=GOOD)
    with pytest.raises(MootError, match="does not exist"):
        ResearchTeam(tmp_path / "nope", model=model_for(script)).ask_sync("How?")


def test_plan_parsing_drops_blank_and_duplicate_sub_questions() -> None:
    from moot.teams.research.planner import PlannerOutput, to_plan

    out = PlannerOutput.model_validate({"sub_questions": [
        {"question": "How is a request parsed?"}, {"question": "  how is a   REQUEST parsed? "},
        {"question": " "}, {"question": "Where are sessions kept?", "target_area": "app/store.py"}]})
    plan = to_plan("q", out)
    assert [sq.question for sq in plan.sub_questions] == ["How is a request parsed?", "Where are sessions kept?"]
    assert plan.sub_questions[1].target_area == "app/store.py"
    with pytest.raises(Exception):
        PlannerOutput.model_validate({"sub_questions": [{"question": str(i)} for i in range(6)]})


def test_the_planners_schema_bounds_each_string_so_a_loop_inside_one_ends() -> None:
    # The 0.5B planner once wrote one clause of the question sixteen times inside a
    # sub-question, until its 600 tokens ran out and no plan was left. The grammar is made
    # from this schema, so a bounded string must end and the plan goes on.
    from moot.teams.research.models import SubQuestion
    from moot.teams.research.planner import SUB_QUESTION_CHARS, PlannerOutput, planner_output, to_plan

    for schema in (PlannerOutput.model_json_schema(), planner_output(3).model_json_schema()):
        fields = schema["$defs"]["PlannedSubQuestion"]["properties"]
        assert fields["question"]["maxLength"] == SUB_QUESTION_CHARS
        assert all("maxLength" in fields[name] for name in ("target_area", "verification_hint"))
        assert fields["initial_actions"]["maxItems"] == 2 and "maxLength" in fields["initial_actions"]["items"]
    # A provider without a grammar may write past a bound: trimmed, not refused.
    long = PlannerOutput.model_validate({"sub_questions": [
        {"question": "Which schema is used? " * 20, "initial_actions": ["load", "schema", "x" * 99]}, {"question": "b c d"}]})
    assert len(long.sub_questions[0].question) == SUB_QUESTION_CHARS
    assert long.sub_questions[0].initial_actions == ["load", "schema"]
    plan = to_plan("q", PlannerOutput.model_validate({"sub_questions": [{"question": "a b c"}, {"question": "d e f"}]}))
    assert all(type(sq) is SubQuestion for sq in plan.sub_questions)
    assert SubQuestion(question="x" * 500).question  # a plan from elsewhere is not bounded


class BadPlanner(ResearchScript):
    """A planner that never writes a plan (the rest of the team as scripted)."""

    async def __call__(self, request):  # type: ignore[no-untyped-def]
        if request.agent == "planner":
            self.log.append(("planner", ""))
            return {"steps": "not a plan"}
        return await super().__call__(request)


def test_a_planner_that_never_gives_a_valid_plan_gets_derived_sub_questions(repo: Path, tmp_path: Path) -> None:
    script = BadPlanner(PLAN_3, synth=GOOD)
    result = team_for(repo, script, tmp_path).ask_sync("How does the app route a request?", mode="multi")
    assert result.mode == "multi" and result.plan.note.startswith("the planner gave no plan")
    assert [name for name, _ in script.log][:2] == ["planner", "planner"]  # one schema retry, then derived
    assert result.usage_by_phase["planner"].usage.requests == 2
    assert len(result.evidence) == len(result.plan.sub_questions) >= 2


def test_a_planner_on_this_machine_is_not_asked_twice(repo: Path, tmp_path: Path) -> None:
    # The embedded model's grammar keeps a plan inside its schema, so a plan that breaks it ran
    # out of tokens, and the second try ran out the same way (1,200 tokens, 55-60 s, no plan).
    assert ResearchConfig().fit_to("local", "local", "local").planner_retry is False
    assert ResearchConfig().fit_to("local", "local", "openai:gpt-4o-mini").planner_retry is True
    assert ResearchConfig(planner_retry=True).fit_to("local", "local", "local").planner_retry is True

    script = BadPlanner(PLAN_3, synth=GOOD)
    result = team_for(repo, script, tmp_path, planner_retry=False).ask_sync("How does the app route a request?", mode="multi")
    assert [name for name, _ in script.log].count("planner") == 1
    assert result.usage_by_phase["planner"].usage.requests == 1
    assert result.mode == "multi" and len(result.plan.sub_questions) >= 2  # derived from the question and the search


def test_on_this_machine_the_ranking_chooses_the_quoted_lines(repo: Path, tmp_path: Path) -> None:
    # The embedded picker's choice made fewer claims than the ranking it was shown, in more time
    # (multi mode on three development sets, docs/code-research.md); a remote picker still chooses.
    assert ResearchConfig().fit_to("local", "local", "local", "local").line_choice == "ranking"
    assert ResearchConfig().fit_to("local", "local", "local", "openai:gpt-4o-mini").line_choice == "model"
    assert ResearchConfig(line_choice="model").fit_to("local", "local", "local", "local").line_choice == "model"
    team = ResearchTeam(repo, model=model_for(ResearchScript(PLAN_3, synth=GOOD)), models={"line-picker": "local"},
                        store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db")
    assert team.config.line_choice == "ranking"
    assert team_for(repo, ResearchScript(PLAN_3, synth=GOOD), tmp_path).config.line_choice == "model"


def test_a_researcher_on_this_machine_only_chooses_and_writes_no_notes(repo: Path, tmp_path: Path) -> None:
    # On the embedded model a researcher's locations almost never exist and its coverage note
    # often says what the code does not do; writing them took most of a researcher's seconds.
    assert ResearchConfig().fit_to("local", "local", "local").researcher_notes is False
    assert ResearchConfig().fit_to("openai:gpt-4o-mini", "local", "local").researcher_notes is True
    assert ResearchConfig(researcher_notes=True).fit_to("local", "local", "local").researcher_notes is True

    schemas: list[dict[str, object]] = []

    class Recording(ResearchScript):
        async def __call__(self, request):  # type: ignore[no-untyped-def]
            if (request.agent or "").startswith("researcher-") and request.output is not None:
                schemas.append(request.output.json_schema)
            return await super().__call__(request)

    script = Recording(PLAN_3, synth=GOOD, coverage_note="the store does not save sessions")
    result = team_for(repo, script, tmp_path, researcher_notes=False).ask_sync("How does it work end-to-end?", mode="multi")
    assert result.mode == "multi" and len(schemas) == 3
    assert all(set(s["properties"]) == {"symbols"} for s in schemas)  # type: ignore[call-overload]
    assert all(b.coverage_note == "" and b.nominated for b in result.evidence)
    assert all(f.tool != "report" for b in result.evidence for f in b.findings)
    synthesizer_prompt = next(task for name, task in script.log if name == "synthesizer")
    assert "Coverage:" not in synthesizer_prompt and "does not save sessions" not in synthesizer_prompt
    chosen = {b.nominated[0] for b in result.evidence}
    assert chosen <= {r.qualified_name for b in result.evidence for r in b.resolved}

    with_notes = Recording(PLAN_3, synth=GOOD, coverage_note="the store does not save sessions")
    result = team_for(repo, with_notes, tmp_path / "notes", researcher_notes=True).ask_sync("How does it work end-to-end?", mode="multi")
    assert "does not save sessions" in next(task for name, task in with_notes.log if name == "synthesizer")


def test_a_plan_on_this_machine_has_at_most_three_sub_questions(repo: Path, tmp_path: Path) -> None:
    # Each sub-question beyond the engine's slots waits for one: on two blind sets a plan of four
    # and one of five took 125-126 s against 45-96 s for two or three, at no better recall.
    assert ResearchConfig().fit_to("local", "local", "local").max_sub_questions == 3
    assert ResearchConfig().fit_to("openai:gpt-4o-mini", "local", "local").max_sub_questions == 5
    assert ResearchConfig(max_sub_questions=4).fit_to("local", "local", "local").max_sub_questions == 4
    seen: list[dict[str, object]] = []

    class FivePlanner(ResearchScript):
        """Would plan five; like the embedded engine's grammar, writes no more than the schema allows."""

        async def __call__(self, request):  # type: ignore[no-untyped-def]
            if request.agent == "planner":
                seen.append(request.output.json_schema["properties"]["sub_questions"])
                seen.append({"prompt": request.messages[0].content})
                self.plan = self.plan[:seen[0]["maxItems"]]
            return await super().__call__(request)

    five = PLAN_3 + [{"question": "Where is a reply written?", "target_area": "app/server.py", "initial_actions": ["write"]},
                     {"question": "How are errors logged?", "target_area": "app/server.py", "initial_actions": ["log"]}]
    script = FivePlanner(five, synth=GOOD)
    result = team_for(repo, script, tmp_path, max_sub_questions=3).ask_sync("How does it work end-to-end?", mode="multi")
    # the planner's schema stops at three (the grammar writes no fourth), and its prompt says so
    assert seen[0]["maxItems"] == 3 and "2 to 3 sub-questions" in str(seen[1]["prompt"])
    assert [sq.question for sq in result.plan.sub_questions] == [sq["question"] for sq in PLAN_3]
    assert len(result.evidence) == 3 and [name for name, _ in script.log].count("planner") == 1
    # a longer plan given to to_plan is cut to the limit
    from moot.teams.research.planner import PlannerOutput, to_plan
    assert len(to_plan("q", PlannerOutput.model_validate({"sub_questions": five}), 3).sub_questions) == 3


def test_the_run_budget_covers_every_phase(repo: Path, tmp_path: Path) -> None:
    # 1 planner call + 3 researcher calls leave nothing for the synthesizer under max_calls=4.
    script = ResearchScript(PLAN_3, synth=GOOD)
    result = team_for(repo, script, tmp_path, max_calls=4).ask_sync("How does it work end-to-end?", mode="multi")
    assert result.status == "stopped" and "4 model calls" in result.stop_reason
    assert result.usage.requests == 4
    assert "synthesizer" not in [name for name, _ in script.log]
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert record.status == "stopped" and record.results["synthesizer"]["status"] == "not_started"


def test_statements_naming_code_that_is_not_in_the_repository_are_removed(repo: Path, tmp_path: Path) -> None:
    # The 0.5B model echoed its tool's description as an answer about httpx (docs/code-research.md).
    synth = ("Requests are split by `parse_request` (app/server.py:4). "
             "Decoding is done by the `read_map` function, which summarises each file.")
    script = ResearchScript(PLAN_3, synth=synth)
    result = team_for(repo, script, tmp_path).ask_sync("How does the app handle a request end-to-end?", mode="multi")
    assert "read_map" not in result.answer and "read_map" in result.draft_answer
    assert "`parse_request` (app/server.py:4)" in result.answer
    removed = [v for v in result.verification if v.method == "name"]
    assert len(removed) == 1 and removed[0].status == "CORRECTED"
    assert "read_map is one of moot's research tools, not code in the repository" in removed[0].correction
    # Names that are in the code (a definition, a call, a keyword) are never removed.
    assert not any(v.method == "name" for v in result.verification if "parse_request" in v.claim)


def test_a_researcher_note_naming_invented_code_never_reaches_the_synthesizer(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, coverage_note="The `read_map` function returns a summary of each file.",
                            finding_note="`read_map` lists every folder")
    result = team_for(repo, script, tmp_path).ask_sync("How does the app handle a request end-to-end?", mode="multi")
    synthesizer_task = next(t for name, t in script.log if name == "synthesizer")
    assert "read_map" not in synthesizer_task and "app/store.py:9" in synthesizer_task
    assert all("note named code that is not in the repository" in b.coverage_note for b in result.evidence)
    # the reported location itself is kept (it exists), without the invented note
    assert all(any(f.file_path == "app/store.py" and f.result_summary == "" for f in b.findings) for b in result.evidence)


def test_an_answer_with_nothing_true_left_says_so_and_keeps_the_evidence(repo: Path, tmp_path: Path) -> None:
    script = ResearchScript(PLAN_3, synth=GOOD, single="You can test it with the `read_map` tool and `mock_network()`.")
    result = team_for(repo, script, tmp_path).ask_sync("What does parse_request return?", mode="single")
    assert result.answer.startswith("(moot removed every statement of the model's answer")
    # what the question is about still comes back, written from the index
    assert "From the code index (written by moot" in result.answer and "app/server.py:4-7" in result.answer
    assert "`app.server.parse_request` (function) is defined at app/server.py:4-7" in result.answer


def test_the_synthesizer_can_have_its_own_model(repo: Path, tmp_path: Path) -> None:
    from moot.errors import MootError
    from moot.models.testing import ScriptedModel

    writer = ScriptedModel([GOOD], name="writer-model")
    team = ResearchTeam(repo, model=model_for(ResearchScript(PLAN_3, synth="unused")), models={"synthesizer": writer},
                        store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db")
    result = team.ask_sync("How does it work end-to-end?", mode="multi")
    assert [r.agent for r in writer.requests] == ["synthesizer"] and "parse_request" in result.draft_answer
    with pytest.raises(MootError, match="the research team has no role 'writer'"):
        ResearchTeam(repo, model=writer, models={"writer": writer})


def test_questions_asked_by_one_command_are_held_by_its_parent_run(repo: Path, tmp_path: Path) -> None:
    from moot.runtime import Run

    store = RunStore(tmp_path / "runs.db")
    team = ResearchTeam(repo, model=model_for(ResearchScript(PLAN_3, synth=GOOD)), store=store,
                        db_path=tmp_path / "index.db")

    async def two_questions() -> str:
        async with Run("research: two questions", store=store) as parent:
            for question in ("How is a request parsed?", "Where are sessions kept?"):
                await team.ask(question, mode="single", parent_run_id=parent.run_id)
        return parent.run_id

    parent_id = asyncio.run(two_questions())
    kids = store.children(parent_id)
    assert len(kids) == 2 and all(k.name.startswith("research (single)") and k.status == "completed" for k in kids)
    assert [r.id for r in store.list_runs(top_level=True)] == [parent_id]
    parent = store.get_run(parent_id)
    assert parent.status == "completed" and parent.usage.requests == sum(k.usage.requests for k in kids) > 0


def test_on_a_model_of_this_machine_researchers_get_one_call_and_no_verifier_model(repo: Path, tmp_path: Path) -> None:
    """A model that runs on this machine (named ``local``…) gets the fitted defaults: each
    researcher's own budget is one call (its report) and the verifier model is not asked; a remote model
    keeps four calls and the verifier (the test above)."""
    script = ResearchScript(PLAN_3, synth=GOOD, verdicts=[{"claim": 1, "status": "VERIFIED"}])
    local = FunctionModel(script, name="local")
    team = ResearchTeam(repo, model=local, store=RunStore(tmp_path / "runs.db"), db_path=tmp_path / "index.db")
    result = team.ask_sync("How does the app handle a request end-to-end?", mode="multi")
    assert result.mode == "multi" and result.status == "completed"
    assert "verifier" not in result.usage_by_phase or result.usage_by_phase["verifier"].usage.requests == 0
    assert not any(v.method == "model" for v in result.verification)
    record = RunStore(tmp_path / "runs.db").get_run(result.run_id)
    assert "verifier" not in record.results
    # A researcher that keeps calling tools is stopped by its own budget after one call (four remote).
    looping = ResearchScript(PLAN_3, synth=GOOD, researcher_tool_loops=1)
    for name, calls in (("local", 1), ("function", 4)):
        team = ResearchTeam(repo, model=FunctionModel(looping, name=name), store=RunStore(tmp_path / f"{name}.db"),
                            db_path=tmp_path / f"index-{name}.db")
        looped = team.ask_sync("How does the app handle a request end-to-end?", mode="multi")
        assert looped.usage_by_phase["researchers"].usage.requests == 3 * calls, name
    # The same team told to verify with the model does ask it.
    verified = ResearchTeam(repo, model=FunctionModel(script, name="local"), store=RunStore(tmp_path / "runs2.db"),
                            db_path=tmp_path / "index2.db", config=ResearchConfig(verify_with_model=True))
    again = verified.ask_sync("How does the app handle a request end-to-end?", mode="multi")
    assert any(v.method == "model" for v in again.verification)


def test_a_synthesis_cut_by_its_token_limit_ends_at_its_last_whole_sentence(repo: Path, tmp_path: Path) -> None:
    from moot.teams.research.synthesizer import SYNTHESIS_TOKENS

    long = " ".join(f"Step {n} splits the request with `parse_request` (app/server.py:4)." for n in range(80))
    for text, cut in ((long + " Then the handler is cho", True), ("Requests are parsed by `parse_request` (app/server.py:4) and", False)):
        team = team_for(repo, ResearchScript(PLAN_3, synth=text), tmp_path / str(cut))
        result = team.ask_sync("How does the app handle a request end-to-end?", mode="multi")
        record = RunStore(tmp_path / str(cut) / "runs.db").get_run(result.run_id)
        spent = record.results["synthesizer"]["usage"]["output_tokens"]
        assert (spent >= SYNTHESIS_TOKENS) is cut
        # the half sentence the limit left is dropped; a short answer is kept as it was written
        assert result.draft_answer == (long if cut else text)


def test_the_synthesizer_reads_each_piece_of_code_once_however_many_researchers_found_it(repo: Path, tmp_path: Path) -> None:
    # Every scripted researcher reports the same lines of app/store.py. The synthesizer's prompt
    # shows their code once, and each later researcher's note beside a pointer to it.
    script = ResearchScript(PLAN_3, synth=GOOD)
    team_for(repo, script, tmp_path).ask_sync("How does the app handle a request end-to-end?", mode="multi")
    prompt = next(text for who, text in script.log if who == "synthesizer")
    code = (repo / "app/store.py").read_text().splitlines()[9].strip()
    assert code.endswith(":") and prompt.count(code) == 1
    assert prompt.count("Evidence from researcher") == 3
    assert prompt.count("app/store.py:9-10 — saves a session (the code is shown above)") == 2
    assert prompt.count("shown above, for an earlier researcher") == 2


def test_the_planner_is_asked_for_verifier_hints_only_when_a_verifier_model_reads_them(repo: Path, tmp_path: Path) -> None:
    asked: list[ModelRequest] = []

    class Recording(ResearchScript):
        async def __call__(self, request):  # type: ignore[no-untyped-def]
            if request.agent == "planner":
                asked.append(request)
            return await super().__call__(request)

    for verify in (False, True):
        script = Recording(PLAN_3, synth=GOOD, verdicts=[{"claim": 1, "status": "VERIFIED"}])
        result = team_for(repo, script, tmp_path, verify_with_model=verify).ask_sync("How does the app handle a request?", mode="multi")
        request = asked[-1]
        (item,) = request.output.json_schema["$defs"].values()
        assert ("verification_hint" in item["properties"]) is verify
        assert ("verification_hint" in str(request.messages[0].content)) is verify
        assert len(result.plan.sub_questions) == 3  # the scripted plan's hints are read either way


def test_the_synthesizer_writes_while_the_line_pickers_choose(repo: Path, tmp_path: Path) -> None:
    # A line picker answers only once the synthesizer has been asked: run one after the other,
    # the picker would wait for a synthesizer that waits for it, and time out.
    async def main() -> None:
        synthesizer_asked = asyncio.Event()

        class Overlapping(ResearchScript):
            async def __call__(self, request):  # type: ignore[no-untyped-def]
                if request.agent == "synthesizer":
                    synthesizer_asked.set()
                elif (request.agent or "").startswith("line-picker"):
                    await asyncio.wait_for(synthesizer_asked.wait(), 10)
                return await super().__call__(request)

        script = Overlapping(PLAN_3, synth=GOOD)
        result = await team_for(repo, script, tmp_path).ask("How does the app route a request, and when?", mode="multi")
        assert result.mode == "multi" and result.quoted + result.conditions
        # Moot states the chosen conditions itself; the synthesizer is not shown them to copy out.
        prompt = next(text for who, text in script.log if who == "synthesizer")
        assert "Deciding conditions" not in prompt and "Lines of the source" not in prompt
        assert "How it decides" in result.answer

    asyncio.run(main())


def test_code_an_earlier_block_lost_to_its_cut_is_still_shown_in_a_later_one() -> None:
    from moot.teams.research.models import EvidenceBundle, Finding
    from moot.teams.research.synthesizer import BUNDLE_CHARS, render_evidence

    long = Finding(tool="search_code", file_path="pkg/big.py", line_range=(1, 60),
                   relevant_code="\n".join(f"{n}| value_{n} = compute_{n}()" for n in range(1, 61)))
    shared = Finding(tool="search_code", file_path="pkg/core.py", line_range=(100, 102),
                     relevant_code="100| if limit_reached:\n101|     raise Overflow()\n102| return total")
    assert len(long.relevant_code) > BUNDLE_CHARS
    prompt = render_evidence("How is the limit enforced?", [
        EvidenceBundle(sub_question="Where is the total computed?", findings=[long, shared]),
        EvidenceBundle(sub_question="When does it raise?", findings=[shared]),
    ])
    assert prompt.count("raise Overflow()") == 1  # past the first block's cut, so shown in the second
    assert "for an earlier researcher" not in prompt


def test_a_researchers_own_repeat_is_shown_once_and_not_put_on_an_earlier_researcher() -> None:
    from moot.teams.research.models import EvidenceBundle, Finding
    from moot.teams.research.synthesizer import render_evidence

    seeded = Finding(tool="search_code", file_path="pkg/core.py", line_range=(5, 6), relevant_code="5| def run():\n6|     go()")
    report = seeded.model_copy(update={"tool": "report", "result_summary": "starts the loop"})
    prompt = render_evidence("How does it start?", [EvidenceBundle(sub_question="How does it start?", findings=[seeded, report])])
    assert prompt.count("def run():") == 1
    assert "pkg/core.py:5-6 — starts the loop (the code is shown above)" in prompt
    assert "earlier researcher" not in prompt


def test_a_failure_while_lines_are_picked_stops_the_synthesizer_too(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The pickers and the synthesizer run together. When picking fails inside moot, the
    # synthesizer's call is cancelled (not left holding an engine slot after the run ended),
    # and the caller gets the error itself, not a group of errors.
    import moot.teams.research.team as team_module

    cancelled: list[str] = []

    class SlowSynthesizer(ResearchScript):
        async def __call__(self, request):  # type: ignore[no-untyped-def]
            if request.agent == "synthesizer":
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    cancelled.append("synthesizer")
                    raise
            return await super().__call__(request)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("ranking broke")

    monkeypatch.setattr(team_module, "candidate_lines", broken)
    team = team_for(repo, SlowSynthesizer(PLAN_3, synth=GOOD), tmp_path)

    async def main() -> None:
        with pytest.raises(RuntimeError, match="ranking broke"):
            await asyncio.wait_for(team.ask("How does the app route a request?", mode="multi"), 10)
        assert cancelled == ["synthesizer"]  # already when the error reached the caller

    asyncio.run(main())
    runs = RunStore(tmp_path / "runs.db").list_runs()
    assert runs[0].status == "failed"
