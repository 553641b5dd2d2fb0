"""The graph team's loop with a scripted model over real source files: grounding, entity
resolution, placeholders, the noise budget, events, lifecycle, budgets and bad replies."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.runtime import EventBus, RunStore
from moot.teams.graph import GraphConfig, GraphTeam, PlaceholderNode
from moot.teams.graph.evidence import normalise
from test_graph_support import GraphScript, make_sources, model_for

QUESTION = "How does the Ostby mill affect Lake Mira?"


def team_for(tmp_path: Path, script: GraphScript, **config: object) -> GraphTeam:
    return GraphTeam(make_sources(tmp_path / "src"), model=model_for(script), store=RunStore(tmp_path / "runs.db"),
                     config=GraphConfig(**config))  # type: ignore[arg-type]


def test_a_run_builds_a_grounded_graph_and_converges(tmp_path: Path) -> None:
    script = GraphScript()
    result = team_for(tmp_path, script).ask_sync(QUESTION)
    s = result.scaffold
    labels = {n.label for n in s.entities()}
    assert {"Ostby mill", "Varn river", "Lake Mira", "Fishing"} <= labels
    assert "Quantum reactor" not in labels  # its quote is in no source: dropped, not invented
    # "the paper mill at Ostby" was resolved into the Ostby mill: one node, with the other label as alias
    [mill] = [n for n in s.entities() if "Ostby" in n.label]
    assert mill.aliases == ["the paper mill at Ostby"]
    # every entity and non-provisional edge carries a quote that really occurs in a source
    text = normalise((tmp_path / "src" / "mill.md").read_text() + " " + (tmp_path / "src" / "river.md").read_text())
    for node in s.entities():
        assert node.evidence and all(normalise(e.quote) in text for e in node.evidence)
    firm = [e for e in s.edges.values() if not e.provisional]
    assert firm and all(e.evidence and normalise(e.evidence[0].quote) in text for e in firm)
    # the river -> lake quote was invented; the source sentence naming both was quoted instead
    supply = next(e for e in s.edges.values() if e.type == "supplies")
    assert supply.evidence[0].quote == "The Varn river supplies Lake Mira."
    # the fishing link's quote is invented and no sentence names both: kept, but provisional
    fishing = next(e for e in s.edges.values() if e.type == "correlates_with")
    assert fishing.provisional and fishing.evidence == [] and fishing.strength <= 0.5
    # the gap got exactly one placeholder, capped at 0.5 and linked to both ends
    [gap] = s.gaps.values()
    placeholder = s.nodes[gap.placeholder]
    assert isinstance(placeholder, PlaceholderNode) and placeholder.confidence <= 0.5
    assert placeholder.label == "[PROVISIONAL] overfishing or pollution" and len(placeholder.constraints) == 2
    assert {e.target for e in s.edges.values() if e.source == gap.between[0]} >= {placeholder.id}
    # numbers come from the rules, not the model: causal + theory = 0.85; provisional stays ≤ 0.5
    assert {e.strength for e in firm} <= {0.85, 0.65}
    assert all(e.strength <= 0.5 for e in s.edges.values() if e.provisional)
    assert result.converged and result.stop_reason.startswith("converged after 2 iterations")
    assert result.noise.satisfied and result.noise.current >= 0.25
    assert len(s.hypotheses) == 2 and {h.structure.pattern for h in s.hypotheses} == {"linear", "hub_spoke"}
    assert "[e_" in result.answer and "placeholder" in result.answer


def test_events_lifecycle_and_the_run_record(tmp_path: Path) -> None:
    script = GraphScript()
    bus = EventBus()
    seen: list[str] = []
    bus.subscribe(lambda e: seen.append(e.type.value))
    result = asyncio.run(team_for(tmp_path, script).ask(QUESTION, bus=bus))
    assert seen.count("nlr.subagent.spawned") == 5
    for kind in ("nlr.subagent.question_generated", "nlr.graph.gap_discovered", "nlr.graph.node_added",
                 "nlr.reasoning.iteration_complete", "nlr.reasoning.converged"):
        assert kind in seen, kind
    assert seen.index("nlr.graph.gap_discovered") < max(i for i, k in enumerate(seen) if k == "nlr.graph.node_added")
    assert seen.count("nlr.reasoning.iteration_complete") == len(result.iterations) == 2
    agents = {a["id"]: a for a in result.agents}
    assert set(agents) == {"mapper", "skeptic", "placeholder", "quantifier", "hypothesizer"}
    assert all(a["status"] == "terminate" for a in agents.values())
    mapper_states = [h[0] for h in agents["mapper"]["history"]]
    assert mapper_states[:5] == ["spawn", "active", "pause", "resume", "pause"] and mapper_states[-1] == "terminate"
    assert agents["mapper"]["questions_generated"] >= 2 and agents["mapper"]["calls"] >= 2
    store = RunStore(tmp_path / "runs.db")
    record = store.get_run(result.run_id)
    assert record.status == "completed" and {"mapper-1-1", "quantifier-1", "skeptic-1", "placeholder-1", "hypothesizer"} <= set(record.results)
    stored = [e.type.value for e in store.events(result.run_id)]
    assert stored.count("nlr.subagent.spawned") == 5 and "nlr.reasoning.converged" in stored


def test_mappers_of_one_iteration_run_at_the_same_time(tmp_path: Path) -> None:
    # iteration 2 asks two questions; the barrier opens only if both mappers wait at once
    script = GraphScript(barrier_after=1, barrier=asyncio.Barrier(2))
    result = team_for(tmp_path, script, iterations=2, hypotheses=False).ask_sync(QUESTION)
    assert result.iterations[1].failed_steps == []
    assert script.calls["MapperOutput"] == 3 and script.calls["LinksOutput"] == 3
    events = RunStore(tmp_path / "runs.db").events(result.run_id)
    for round_ in (("mapper-2-1", "mapper-2-2"), ("mapper-2-1-links", "mapper-2-2-links")):
        starts = [e.ts for e in events if e.type.value == "task_started" and e.task_id in round_]
        ends = [e.ts for e in events if e.type.value == "task_finished" and e.task_id in round_]
        assert len(starts) == 2 and max(starts) < min(ends)  # the two bars overlap


def test_skeptic_lowers_an_unsupported_claim_and_a_deficit_is_announced(tmp_path: Path) -> None:
    # every element labelled strong: the graph is over-confident, so the deficit event fires
    bus = EventBus()
    deficits: list[dict[str, object]] = []
    bus.subscribe(lambda e: deficits.append(e.payload) if e.type.value == "nlr.noise_budget.deficit" else None)
    script = GraphScript(mapping={"entities": [
        {"label": "Ostby mill", "why_relevant": "", "quote": "The Ostby mill draws water"},
        {"label": "Varn river", "why_relevant": "", "quote": "The Varn river supplies Lake Mira"}],
        "relationships": [{"quote": "The Ostby mill draws water from the Varn river", "source": "Ostby mill",
                           "type": "uses", "target": "Varn river"}], "gaps": []})
    result = asyncio.run(team_for(tmp_path, script, iterations=1, noise_budget=0.5).ask(
        "How does the mill use the river water?", bus=bus))
    assert deficits and deficits[0]["satisfied"] is False and deficits[0]["target"] == 0.5
    s = result.scaffold
    # the skeptic challenged all three (above 0.8 first, then the rest while short of the budget)
    # and found the most confident one, the mill (study, dated this year: 1.0), unsupported
    assert all(x.challenge for x in [*s.entities(), *s.edges.values()])
    mill = s.nodes["ostby_mill"]
    assert mill.features.consistent is False and mill.confidence == 0.8
    assert s.nodes["varn_river"].confidence == 0.8 and s.edges["e_ostby_mill_uses_varn_river"].strength == 0.85
    assert not result.converged and "iteration limit (1)" in result.stop_reason


def test_budget_hit_mid_iteration_returns_the_graph_so_far(tmp_path: Path) -> None:
    script = GraphScript()
    result = team_for(tmp_path, script, max_calls=2).ask_sync(QUESTION)
    assert result.status == "stopped" and "2 model calls" in result.stop_reason
    assert result.scaffold.entities()  # the mapper's work is kept
    assert result.usage.requests == 2
    assert RunStore(tmp_path / "runs.db").get_run(result.run_id).status == "stopped"


def test_a_reply_that_breaks_the_schema_fails_its_step_and_the_loop_goes_on(tmp_path: Path) -> None:
    script = GraphScript(bad_mapper=2)  # the reply and its one retry
    result = team_for(tmp_path, script, iterations=2).ask_sync(QUESTION)
    assert result.iterations[0].failed_steps and "mapper-1-1" in result.iterations[0].failed_steps[0]
    assert result.status == "completed" and result.iterations[0].nodes == 0
    assert result.iterations[1].nodes > 0  # the next iteration asked again and built the graph


def test_a_question_the_sources_do_not_cover_gets_an_honest_empty_graph(tmp_path: Path) -> None:
    script = GraphScript()
    result = team_for(tmp_path, script).ask_sync("What is the boiling point of mercury in kelvin?")
    assert result.scaffold.nodes == {} and script.calls == {}
    assert result.answer.startswith("The sources do not cover this question")


def test_no_sources_and_empty_question_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(MootError, match="no sources"):
        GraphTeam([], model=model_for(GraphScript())).ask_sync(QUESTION)
    with pytest.raises(MootError, match="question is empty"):
        team_for(tmp_path, GraphScript()).ask_sync("   ")
    with pytest.raises(MootError, match="noise budget"):
        team_for(tmp_path, GraphScript(), noise_budget=2.0).ask_sync(QUESTION)


def test_a_knowledge_base_is_a_source_too(tmp_path: Path) -> None:
    from moot.memory import KnowledgeBase
    from test_graph_support import MILL

    with KnowledgeBase.open(tmp_path / "kb.sqlite3") as kb:
        kb.add_episode(MILL, source="mill report")
    script = GraphScript()
    team = GraphTeam(kb=tmp_path / "kb.sqlite3", model=model_for(script), config=GraphConfig(iterations=1, hypotheses=False))
    result = team.ask_sync(QUESTION)
    assert result.sources == ["mill report"]
    assert {e.source for n in result.scaffold.entities() for e in n.evidence} == {"mill report"}
    with pytest.raises(MootError, match="no knowledge base"):
        GraphTeam(kb=tmp_path / "missing.sqlite3", model=model_for(script)).ask_sync(QUESTION)


def test_lifecycle_allows_only_the_designed_transitions() -> None:
    from moot.teams.graph.lifecycle import Lifecycle

    life = Lifecycle(("mapper", "skeptic"))
    life.working("mapper")
    life.waiting("mapper")
    life.working("mapper")
    assert life.agents["mapper"].status == "resume"
    life.waiting("skeptic")  # never started: waiting is not a pause
    assert life.agents["skeptic"].status == "spawn"
    life.terminate_all()
    assert [s for s, _ in life.agents["mapper"].history] == ["spawn", "active", "pause", "resume", "terminate"]
    with pytest.raises(MootError, match="cannot go from terminate to active"):
        life.agents["mapper"].move("active")


def test_names_the_question_uses_are_found_in_the_passages_when_the_mapper_leaves_them_out(tmp_path: Path) -> None:
    script = GraphScript(mapping={"entities": [{"label": "Ostby mill", "why_relevant": "", "quote": "The Ostby mill draws water"}],
                                  "relationships": [], "gaps": []})
    result = team_for(tmp_path, script, iterations=1, hypotheses=False).ask_sync(QUESTION)
    lake = result.scaffold.find("Lake Mira")
    assert lake is not None and lake.why_relevant == "named in the question"
    assert lake.evidence[0].quote == "In 2024 the paper mill at Ostby discharges waste into Lake Mira, because its filters are old."
    assert result.scaffold.find("Ostby") is None  # already held by "Ostby mill"


def test_an_entity_quote_must_name_the_entity_in_its_own_words(tmp_path: Path) -> None:
    # the quote occurs in a source and holds "Ostby" and "mill", but not the name "Ostby mill":
    # the sentence that does name it is quoted instead
    script = GraphScript(mapping={"entities": [
        {"label": "Ostby mill", "why_relevant": "", "quote": "the paper mill at Ostby discharges waste"}],
        "relationships": [], "gaps": []})
    result = team_for(tmp_path, script, iterations=1, hypotheses=False).ask_sync("How does the mill use the river water?")
    mill = result.scaffold.find("Ostby mill")
    assert mill is not None and mill.evidence[0].quote == "The Ostby mill draws water from the Varn river."


def test_a_role_can_have_its_own_model(tmp_path: Path) -> None:
    shared, skeptic_script = GraphScript(), GraphScript()
    default, skeptic = model_for(shared), model_for(skeptic_script)
    team = GraphTeam(make_sources(tmp_path / "src"), model=default, models={"skeptic": skeptic},
                     store=RunStore(tmp_path / "runs.db"))
    team.ask_sync(QUESTION)
    assert skeptic.requests and {r.agent for r in skeptic.requests} == {"skeptic"}
    assert "skeptic" not in {r.agent for r in default.requests} and "mapper" in {r.agent for r in default.requests}
    with pytest.raises(MootError, match="the graph team has no role 'critic'"):
        GraphTeam(make_sources(tmp_path / "src"), model=default, models={"critic": skeptic})
