"""The typed HTTP API beyond research: the run history of every process, one run's spans and
budget, the event stream of recorded runs, 404s, the bearer scheme, and the learning, graph,
deliberation, board and chat endpoints — on a real uvicorn server on loopback with scripted models."""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.testing import FunctionModel
from moot.runtime import RunStore
from moot.server import ServerSettings
from test_server_api import Server, sse
from web_support import ROOT, record_deliberation_run, record_graph_run, record_parallel_run

EXAMPLES = ROOT / "examples"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A run store with runs recorded before any server started: three plain runs, a graph, a deliberation."""
    path = tmp_path / "runs.db"
    store = RunStore(path)
    for _ in range(3):
        record_parallel_run(store, delay=0.01)
    record_graph_run(store, tmp_path / "sources")
    record_deliberation_run(store)
    store.close()
    return path


def serve(db: Path, model: Any = None, **kw: Any) -> Server:
    return Server(ServerSettings(model=model or FunctionModel(lambda r: "ok"), store_path=db, **kw))


def test_runs_recorded_before_the_server_started_are_listed_filtered_and_paged(db: Path) -> None:
    with serve(db) as srv:
        page = httpx.get(f"{srv.url}/api/runs", params={"limit": 2}).json()
        assert page["total"] == 5 and len(page["runs"]) == 2
        assert page["runs"][0]["started"] >= page["runs"][1]["started"]  # newest first
        assert page["runs"][0]["team"] == "deliberation"
        last = httpx.get(f"{srv.url}/api/runs", params={"limit": 2, "offset": 4}).json()
        assert len(last["runs"]) == 1 and last["runs"][0]["name"] == "pros and cons of remote work"
        graph = httpx.get(f"{srv.url}/api/runs", params={"team": "graph"}).json()
        assert graph["total"] == 1 and graph["runs"][0]["name"].startswith("graph: ")
        assert graph["runs"][0]["usage"]["requests"] > 0
        assert httpx.get(f"{srv.url}/api/runs", params={"q": "ostby"}).json()["total"] == 1
        assert httpx.get(f"{srv.url}/api/runs", params={"team": "other"}).json()["total"] == 3
        assert httpx.get(f"{srv.url}/api/runs", params={"status": "failed"}).json()["total"] == 0
        assert httpx.get(f"{srv.url}/api/runs", params={"since": time.time() + 60}).json()["total"] == 0
        assert httpx.get(f"{srv.url}/api/runs", params={"team": "nope"}).status_code == 422


def test_a_run_shows_its_spans_on_agent_lanes_budget_and_stop_reason_in_words(db: Path) -> None:
    store = RunStore(db)
    run_id = store.query_runs(search="remote work", limit=1)[0][0].id
    store.close()
    with serve(db) as srv:
        run = httpx.get(f"{srv.url}/api/runs/{run_id[:10]}").json()  # a unique prefix is enough
    assert run["run_id"] == run_id and run["status"] == "completed"
    assert run["lanes"] == ["pros", "cons", "judge"] or set(run["lanes"][:2]) == {"pros", "cons"}
    spans = {s["task_id"]: s for s in run["spans"]}
    assert spans["judge"]["depends_on"] == ["pros", "cons"]
    assert spans["judge"]["started"] >= max(spans["pros"]["finished"], spans["cons"]["finished"]) - 0.001
    [call] = spans["judge"]["model_calls"]
    assert call["output_tokens"] > 0 and call["latency_s"] is not None and call["text"] is None  # content not recorded
    assert "Remote work suits" in spans["judge"]["output"]
    assert {b["which"]: b["limit"] for b in run["budget"]} == {"calls": 10, "tokens": 20_000}
    assert next(b for b in run["budget"] if b["which"] == "calls")["used"] == 3
    assert run["stop_reason_text"] and run["content_recorded"] is False


def test_graph_and_deliberation_runs_carry_the_teams_result(db: Path) -> None:
    with serve(db) as srv:
        rows = httpx.get(f"{srv.url}/api/runs").json()["runs"]
        graph = httpx.get(f"{srv.url}/api/runs/{next(r for r in rows if r['team'] == 'graph')['run_id']}").json()
        delib = httpx.get(f"{srv.url}/api/runs/{next(r for r in rows if r['team'] == 'deliberation')['run_id']}").json()
    assert graph["output_kind"] == "graph" and graph["output"]["nodes"] and graph["output"]["edges"]
    assert any(e["type"].startswith("nlr.") for e in graph["team_events"])
    assert delib["output_kind"] == "deliberation"
    [debate] = delib["output"]["debates"]
    assert [r["round_type"] for r in debate["rounds"]] == ["position", "evidence", "compromise", "validation"]


def test_unknown_ids_are_404_on_every_endpoint_including_the_event_stream(db: Path) -> None:
    with serve(db) as srv:
        for method, path in [("GET", "/api/runs/nope"), ("GET", "/api/runs/nope/events"), ("DELETE", "/api/runs/nope"),
                             ("GET", "/api/learning/kbs/nope"), ("GET", "/api/learning/kbs/nope/facts"),
                             ("POST", "/api/learning/kbs/nope/ask"), ("GET", "/api/board"), ("GET", "/api/board/events"),
                             ("GET", "/api/board/tasks/nope")]:
            body = {"question": "x"} if method == "POST" else None
            r = httpx.request(method, srv.url + path, json=body)
            assert r.status_code == 404, (path, r.status_code, r.text)
            assert r.json()["detail"]
        assert httpx.get(f"{srv.url}/api/learning/kbs/..%2F..%2Fetc/facts").status_code in (404, 422)
        assert httpx.get(f"{srv.url}/api/learning/kbs/a..b").status_code == 422
        # a recorded run that another process ran cannot be cancelled from here
        run_id = httpx.get(f"{srv.url}/api/runs").json()["runs"][0]["run_id"]
        r = httpx.delete(f"{srv.url}/api/runs/{run_id}")
        assert r.status_code == 409 and "not started by this server" in r.json()["detail"]


def test_the_event_stream_of_a_recorded_run_replays_its_events_then_done(db: Path) -> None:
    with serve(db) as srv:
        run_id = httpx.get(f"{srv.url}/api/runs", params={"team": "graph"}).json()["runs"][0]["run_id"]
        with httpx.stream("GET", f"{srv.url}/api/runs/{run_id}/events", timeout=20) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events = list(sse(stream.iter_lines()))
    assert events[-1][0] == "done" and events[-1][1]["status"] == "completed"
    types = [d["type"] for e, d in events if e == "event"]
    assert types[0] == "run_started" and "nlr.graph.node_added" in types


def test_the_bearer_scheme_is_in_the_openapi_schema_only_when_a_token_is_set(db: Path) -> None:
    with serve(db, token="s3cret") as srv:
        schema = httpx.get(f"{srv.url}/openapi.json").json()
        assert schema["components"]["securitySchemes"]["bearer"] == {
            "type": "http", "scheme": "bearer", "description": "The token given to moot serve (--token)."}
        assert schema["security"] == [{"bearer": []}]
        assert schema["paths"]["/api/health"]["get"]["security"] == []
        assert httpx.get(f"{srv.url}/api/runs").status_code == 401
        assert httpx.get(f"{srv.url}/api/runs", headers={"Authorization": "Bearer s3cret"}).json()["total"] == 5
        page = httpx.get(f"{srv.url}/")  # the page's own files hold no data: open; its data needs the token
        assert page.status_code == 200 and "app.js" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert httpx.get(f"{srv.url}/static/app.js").status_code == 200
    with serve(db) as srv:
        assert "securitySchemes" not in httpx.get(f"{srv.url}/openapi.json").json().get("components", {})


def test_every_endpoint_has_a_typed_schema_and_docs_are_served_locally(db: Path) -> None:
    with serve(db) as srv:
        schema = httpx.get(f"{srv.url}/openapi.json").json()
        docs = httpx.get(f"{srv.url}/docs").text
        assert httpx.get(f"{srv.url}/static/vendor/swagger-ui/swagger-ui-bundle.js").status_code == 200
        assert httpx.get(f"{srv.url}/static/vendor/swagger-ui/LICENSE").status_code == 200
    assert "cdn" not in docs.lower() and "/static/vendor/swagger-ui/swagger-ui-bundle.js" in docs
    names = set(schema["components"]["schemas"])
    assert {"RunPage", "RunDetail", "Span", "ModelCall", "RunStarted", "LearningAnswer", "KnowledgeBaseInfo", "FactPage",
            "GraphRequest", "DeliberationRequest", "BoardColumns", "ChatReply", "ResearchAnswer"} <= names
    assert schema["paths"]["/api/query"]["post"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ResearchAnswer"}
    tags = {t for item in schema["paths"].values() for op in item.values() for t in op.get("tags", [])}
    assert {"runs", "research", "learning", "graph", "deliberation", "board", "chat"} <= tags
    untyped = [(p, m) for p, item in schema["paths"].items() for m, op in item.items()
               if not any("schema" in c for r in op["responses"].values() for c in r.get("content", {}).values())
               and "text/event-stream" not in json.dumps(op["responses"])]
    assert untyped == []


def test_a_graph_run_started_over_http_streams_team_events_and_records_the_graph(tmp_path: Path) -> None:
    from test_graph_support import GraphScript, make_sources

    sources = make_sources(tmp_path / "src")
    settings = dict(repo_roots=[tmp_path], record_content=True)
    with serve(tmp_path / "runs.db", FunctionModel(GraphScript()), **settings) as srv:
        r = httpx.post(f"{srv.url}/api/graph/runs", json={"question": "How does the Ostby mill affect Lake Mira?",
                                                           "sources": [str(p) for p in sources]})
        assert r.status_code == 202, r.text
        started = r.json()
        assert started["team"] == "graph" and started["page"] == f"/#/runs/{started['run_id']}"
        with httpx.stream("GET", srv.url + started["events"], timeout=30) as stream:
            events = list(sse(stream.iter_lines()))
        assert events[-1][0] == "done" and events[-1][1]["status"] == "completed"
        assert any(e == "team" and d["type"] == "nlr.graph.node_added" for e, d in events)
        run = httpx.get(f"{srv.url}/api/runs/{started['run_id']}").json()
        assert run["output_kind"] == "graph" and len(run["output"]["nodes"]) >= 3
        # --record-content: the prompts and answers are on the spans
        assert run["content_recorded"] and any(c["text"] for s in run["spans"] for c in s["model_calls"])
        outside = httpx.post(f"{srv.url}/api/graph/runs", json={"question": "q", "sources": ["/etc/passwd"]})
        assert outside.status_code == 403 and "--repo-root" in outside.json()["detail"]
        assert httpx.post(f"{srv.url}/api/graph/runs", json={"question": "q"}).status_code == 422
        unknown = httpx.post(f"{srv.url}/api/graph/runs", json={"question": "q", "sources": [str(sources[0])], "vocabulary": "kin"})
        assert unknown.status_code == 422 and "family" in unknown.text


def test_a_deliberation_started_over_http_ends_with_its_debate(tmp_path: Path) -> None:
    from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators

    with serve(tmp_path / "runs.db", FunctionModel(Deliberators()), repo_roots=[EXAMPLES]) as srv:
        started = httpx.post(f"{srv.url}/api/deliberation/runs", json={"request": REQUEST, "data": str(SLEEP_VS_DEADLINE),
                                                                       "now": NOW}).json()
        with httpx.stream("GET", srv.url + started["events"], timeout=30) as stream:
            events = list(sse(stream.iter_lines()))
        assert events[-1][1]["status"] == "completed"
        assert any(e == "team" and d["type"] == "deliberation.debate_round" for e, d in events)
        run = httpx.get(f"{srv.url}/api/runs/{started['run_id']}").json()
        assert run["team"] == "deliberation" and run["output"]["debates"][0]["status"] == "resolved"
        assert run["result"]["answer"] == run["output"]["answer"]


def test_knowledge_bases_chat_and_the_board_over_http(tmp_path: Path) -> None:
    from moot import config

    kb = KnowledgeBase.open(config.home() / "kb" / "olympics-web.sqlite3")
    kb.add_facts([Fact("Norway has 14 gold medals", entity="Norway", attribute="gold medals", value="14",
                       source="Day 10 report", source_date=date(2026, 2, 16))])
    kb.close()
    board_dir = tmp_path / "board"
    from moot.teams.board import open_board

    board = open_board(str(board_dir))
    board.init()
    board.close()
    with serve(tmp_path / "runs.db", FunctionModel(lambda r: "Hello <there>"), board=str(board_dir)) as srv:
        info = httpx.get(f"{srv.url}/api/learning/kbs/olympics-web").json()
        assert info["facts"] == 1 and info["sources"] == ["Day 10 report"]
        assert "olympics-web" in [k["name"] for k in httpx.get(f"{srv.url}/api/learning/kbs").json()]
        facts = httpx.get(f"{srv.url}/api/learning/kbs/olympics-web/facts", params={"q": "norway"}).json()
        assert facts["total"] == 1 and facts["facts"][0]["source"] == "Day 10 report"
        chat = httpx.post(f"{srv.url}/api/chat", json={"prompt": "hi"}).json()
        assert chat["text"] == "Hello <there>" and chat["usage"]["requests"] == 1
        task = httpx.post(f"{srv.url}/api/board/tasks", json={"description": "Write the notes"})
        assert task.status_code == 201
        columns = httpx.get(f"{srv.url}/api/board").json()
        assert [t["description"] for t in columns["pending"]] == ["Write the notes"] and columns["counts"]["pending"] == 1
        assert httpx.get(f"{srv.url}/api/board/tasks/{task.json()['id']}").json()["status"] == "pending"
        assert httpx.get(f"{srv.url}/api/board/tasks", params={"status": "active"}).json() == []
        with httpx.stream("GET", f"{srv.url}/api/board/events", timeout=10) as stream:
            first = next(sse(stream.iter_lines()))
        assert first[0] == "board" and first[1]["pending"][0]["description"] == "Write the notes"


def test_asking_the_learning_team_over_http_answers_with_intent_strategy_facts_and_agents(tmp_path: Path) -> None:
    from test_learning_ask import Router

    from moot import config

    kb = KnowledgeBase.open(config.home() / "kb" / "olympics-ask.sqlite3")
    kb.add_facts([Fact("Norway has 9 gold medals", entity="Norway", attribute="gold medals", value="9",
                       source="Day 7 report", source_date=date(2026, 2, 13)),
                  Fact("Norway has 14 gold medals", entity="Norway", attribute="gold medals", value="14",
                       source="Day 10 report", source_date=date(2026, 2, 16))])
    kb.close()
    with serve(tmp_path / "runs.db", FunctionModel(Router(single="Norway has 14 gold medals."))) as srv:
        r = httpx.post(f"{srv.url}/api/learning/kbs/olympics-ask/ask", json={"question": "How many gold medals does Norway have?"},
                       timeout=60)
        assert r.status_code == 200, r.text
        answer = r.json()
        assert answer["intent"] and answer["trace"]["retrieval_strategy"] and answer["sub_agents"]
        assert answer["facts_used"] and all(f["source"] for f in answer["facts_used"])
        run = httpx.get(f"{srv.url}/api/runs/{answer['run_id']}").json()  # the team's own run id, in the store
        assert run["team"] == "learning" and run["output_kind"] == "answer"
        assert run["output"]["trace"]["intent"] == answer["intent"]
        assert httpx.post(f"{srv.url}/api/learning/kbs/olympics-ask/ask/runs", json={"question": "Norway?"}).status_code == 202


def test_runs_held_by_another_run_are_listed_on_its_page_not_in_the_top_list(db: Path) -> None:
    store = RunStore(db)
    store.ensure_run("goal0001", "board goal: write the notes")
    store.start_run("call0001", "board writer: write the notes", parent_run_id="goal0001")
    store.close()
    with serve(db) as srv:
        top = httpx.get(f"{srv.url}/api/runs", params={"team": "board"}).json()
        assert [r["run_id"] for r in top["runs"]] == ["goal0001"]
        every = httpx.get(f"{srv.url}/api/runs", params={"team": "board", "top_level": False}).json()
        assert {r["run_id"] for r in every["runs"]} == {"goal0001", "call0001"}
        goal = httpx.get(f"{srv.url}/api/runs/goal0001").json()
        assert [c["run_id"] for c in goal["children"]] == ["call0001"]
        assert httpx.get(f"{srv.url}/api/runs/call0001").json()["parent_run_id"] == "goal0001"


def test_learning_a_text_over_http_fills_a_new_knowledge_base_in_the_background(tmp_path: Path) -> None:
    from test_learning import fake_llm

    with serve(tmp_path / "runs.db", FunctionModel(fake_llm)) as srv:
        r = httpx.post(f"{srv.url}/api/learning/kbs/medals-web/learn",
                       json={"text": "Norway has 14 gold medals. Italy has 5 gold medals.", "source": "Day 10 report",
                             "published": "2026-02-16"})
        assert r.status_code == 202, r.text
        started = r.json()
        with httpx.stream("GET", srv.url + started["events"], timeout=30) as stream:
            events = list(sse(stream.iter_lines()))
        assert events[-1][0] == "done" and events[-1][1]["status"] == "completed", events[-1]
        facts = httpx.get(f"{srv.url}/api/learning/kbs/medals-web/facts").json()
        assert sorted(f["content"] for f in facts["facts"]) == ["Italy has 5 gold medals.", "Norway has 14 gold medals."]
        run = httpx.get(f"{srv.url}/api/runs/{started['run_id']}").json()
        assert run["team"] == "learning" and run["result"]["facts_stored"] == 2 and run["spans"]
        assert httpx.post(f"{srv.url}/api/learning/kbs/bad%2Fname/learn", json={"text": "x"}).status_code in (404, 422)
