"""The web page in a real browser (Debian's Chromium through chromedriver) against a real
`moot serve` process on loopback, over runs recorded by the project's scripted models.

Each test asserts what a user sees: overlapping lanes, drawn graph nodes, debate rounds side by
side, a run that goes live → completed without a reload, a model's `<script>` shown as text,
the board's columns moving, and not one request to any other host.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from moot.models.testing import FunctionModel
from moot.runtime import RunStore, SubAgent, SubAgentTask, TaskGraph
from web_support import INJECTED, Browser, Serve, browser_missing, record_all

missing = browser_missing()
pytestmark = pytest.mark.skipif(missing is not None, reason=missing or "")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("web")
    db = work / "runs.db"
    runs = record_all(db, work)  # recorded before the server starts, by this (other) process
    board_dir = work / "board"
    from moot.teams.board import open_board

    board = open_board(str(board_dir))
    board.init()
    board.close()
    with Serve(db, "--board", str(board_dir)) as server, Browser() as browser:
        yield {"url": server.url, "runs": runs, "db": db, "browser": browser, "board": board_dir}


def open_page(site: dict[str, Any], fragment: str) -> Any:
    b = site["browser"]
    # a change of fragment alone keeps the document: forget the last view's "rendered" mark
    b.driver.execute_script("window.__mootRendered = null")
    b.driver.get(site["url"] + "/" + fragment)
    return b


def rendered(b: Browser, view: str) -> Any:
    return b.wait_for(f"return window.__mootRendered && window.__mootRendered.view === '{view}' && window.__mootRendered")


def test_the_runs_list_shows_every_run_and_filters_by_team_and_text(site: dict[str, Any]) -> None:
    b = open_page(site, "#/")
    rendered(b, "runs")
    rows = b.wait_for("return document.querySelectorAll('tr.run').length >= 4 && [...document.querySelectorAll('tr.run')]"
                      ".map(r => r.innerText)")
    assert any("graph: How does the Ostby mill" in r for r in rows)
    assert any("deliberate (standard)" in r for r in rows)
    assert b.driver.find_element("id", "runs-count").text.endswith("of 4 runs")
    b.driver.get(site["url"] + "/#/?team=graph")
    b.wait_for("return document.querySelectorAll('tr.run').length === 1 && document.querySelector('tr.run').innerText.includes('Ostby')")
    b.driver.get(site["url"] + "/#/?when=1h")  # every run here started within the hour
    b.wait_for("return document.querySelectorAll('tr.run').length >= 4")
    b.driver.get(site["url"] + "/#/")
    rendered(b, "runs")
    box = b.driver.find_element("css selector", "input[type=search]")
    box.send_keys("remote work")
    b.wait_for("return document.querySelectorAll('tr.run').length === 1 && document.querySelector('tr.run').innerText.includes('remote work')")


def test_parallel_agents_run_in_overlapping_lanes_on_one_time_axis(site: dict[str, Any]) -> None:
    b = open_page(site, f"#/runs/{site['runs']['parallel']}")
    rendered(b, "run")
    spans = b.wait_for("""return document.querySelectorAll('.span').length === 3 && [...document.querySelectorAll('.span')].map(s => {
        const r = s.getBoundingClientRect();
        return {task: s.dataset.task, lane: s.closest('.tl-lane').dataset.lane, left: r.left, right: r.right,
                start: +s.dataset.start, end: +s.dataset.end};
    })""")
    by = {s["task"]: s for s in spans}
    assert {s["lane"] for s in spans} == {"pros", "cons", "judge"}  # one lane per agent
    pros, cons, judge = by["pros"], by["cons"], by["judge"]
    # pros and cons ran at the same time: their times overlap, and so do their drawn boxes
    assert pros["start"] < cons["end"] and cons["start"] < pros["end"]
    assert pros["left"] < cons["right"] and cons["left"] < pros["right"]
    # the judge waited for both: it starts right of both on the shared axis
    assert judge["left"] >= max(pros["right"], cons["right"]) - 2
    b.driver.find_element("css selector", ".span[data-task=judge]").click()
    detail = b.wait_for("return document.getElementById('span-detail').innerText")
    assert "Model requests (1)" in detail and "Remote work suits focused work" in detail


def test_a_graph_run_is_drawn_as_an_interactive_graph(site: dict[str, Any]) -> None:
    run = httpx.get(f"{site['url']}/api/runs/{site['runs']['graph']}").json()
    nodes = run["output"]["nodes"]
    b = open_page(site, f"#/runs/{site['runs']['graph']}")
    drawn = b.wait_for("return document.querySelectorAll('#graph [data-node]').length")
    assert drawn == len(nodes) >= 3
    assert b.driver.execute_script("return document.querySelectorAll('#graph [data-edge]').length") >= 1
    placeholders = [n for n in nodes if n["kind"] == "placeholder"]
    assert len(b.driver.find_elements("css selector", "#graph .node.placeholder")) == len(placeholders) >= 1
    entity = next(n for n in nodes if n["kind"] == "entity" and n["evidence"])
    b.driver.execute_script("document.querySelector(`#graph [data-node='${arguments[0]}']`)"
                            ".dispatchEvent(new MouseEvent('click', {bubbles: true}))", entity["id"])
    info = b.wait_for("return document.getElementById('graph-info').innerText.includes('Evidence') && "
                      "document.getElementById('graph-info').innerText")
    assert entity["label"] in info and f"{entity['confidence']:.2f}" in info and entity["evidence"][0]["quote"][:30] in info


def test_a_deliberation_shows_ranked_insights_debate_rounds_side_by_side_and_votes(site: dict[str, Any]) -> None:
    b = open_page(site, f"#/runs/{site['runs']['deliberation']}")
    text = b.wait_for("return document.querySelector('.debate') && document.getElementById('deliberation').innerText")
    rounds = b.driver.execute_script("return [...document.querySelectorAll('.debate .round')].map(x => x.innerText)")
    assert rounds == ["1. position", "2. evidence", "3. compromise", "4. validation"]
    heads = b.driver.execute_script("return [...document.querySelectorAll('.debate .rounds > .head')].slice(1, 3).map(x => x.innerText)")
    assert sorted(heads) == ["deep_content", "recovery"]  # the two sides (their first supporters), one column each
    first = b.driver.execute_script("return document.querySelector('#deliberation h2').innerText")
    assert first == "Decision" and text.split("Decision", 1)[1].strip().startswith("Do 'keep working tonight', shortened to")
    assert "Ranked insights" in text and "Resolved:" in text
    assert len(b.driver.find_elements("css selector", "[data-insight]")) >= 3


def test_a_models_script_tag_is_shown_as_text_and_never_runs(site: dict[str, Any]) -> None:
    b = open_page(site, f"#/runs/{site['runs']['injected']}")
    rendered(b, "run")
    assert INJECTED in b.driver.find_element("css selector", "h1").text  # the run's name, as typed
    b.driver.find_element("css selector", ".span[data-task=writer]").click()
    shown = b.wait_for("return [...document.querySelectorAll('.model-text')].map(x => x.textContent)")
    assert INJECTED in shown
    time.sleep(0.3)  # give an injected onerror handler the time it would need
    assert b.driver.execute_script("return window.__pwned") is None
    assert b.driver.title != "pwned"
    assert b.driver.execute_script("return document.querySelectorAll('main script, main img').length") == 0
    b.driver.get(site["url"] + "/#/")  # the list shows the same name as text too
    b.wait_for("return [...document.querySelectorAll('tr.run')].some(r => r.innerText.includes('<script>'))")
    assert b.driver.execute_script("return window.__pwned") is None


def test_a_live_run_from_another_process_updates_without_a_reload(site: dict[str, Any]) -> None:
    gate = threading.Event()

    async def slow(request: Any) -> str:
        while not gate.is_set():
            await asyncio.sleep(0.02)
        return "done waiting"

    model = FunctionModel(slow)
    graph = TaskGraph([SubAgent("waiter", "waits", "Wait.", model=model)], [SubAgentTask("waiter", "Wait for the gate")])
    holder: dict[str, Any] = {}

    def run() -> None:
        store = RunStore(site["db"])
        holder["result"] = graph.run_sync(store=store, name="a run that waits for the test", run_id="live0000run")
        store.close()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while httpx.get(f"{site['url']}/api/runs/live0000run").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        b = open_page(site, "#/runs/live0000run")
        b.wait_for("return document.querySelector('.badge') && document.querySelector('.badge').innerText === 'running'")
        b.wait_for("return document.querySelector('.span.running')")  # the agent's span, drawn while it works
        b.driver.execute_script("window.__sameDocument = true")
        gate.set()
        b.wait_for("return document.querySelector('.badge').innerText === 'completed'", 15)
        assert b.driver.execute_script("return window.__sameDocument") is True  # no reload happened
        # read in the page, in one step: the view may be redrawn between a lookup and a read
        b.wait_for("const e = document.getElementById('stop-reason'); return e && e.innerText !== 'still running'")
        b.wait_for("return document.querySelectorAll('.span.completed').length > 0")
    finally:
        gate.set()
        thread.join(10)


def test_the_board_columns_move_live(site: dict[str, Any]) -> None:
    b = open_page(site, "#/board")
    b.wait_for("return document.querySelector('[data-column=pending]')")
    task = httpx.post(f"{site['url']}/api/board/tasks", json={"description": "Summarise <b>the</b> notes"}).json()
    b.wait_for("return document.querySelector(`[data-column=pending] [data-task='${arguments[0]}']`)", 10, task["id"])
    from moot.teams.board import open_board

    board = open_board(str(site["board"]))
    try:
        assert board.claim(task["id"], "worker-1", lease_s=60) is not None
        b.wait_for("return document.querySelector(`[data-column=active] [data-task='${arguments[0]}']`)", 10, task["id"])
        board.complete(task["id"], "worker-1", {"summary": "three notes"})
    finally:
        board.close()
    b.wait_for("return document.querySelector(`[data-column=completed] [data-task='${arguments[0]}']`)", 10, task["id"])
    # read in the page in one step (the live board may redraw between a lookup and a read)
    assert "Summarise <b>the</b> notes" in b.driver.execute_script(
        "return document.querySelector('[data-column=completed]').innerText")


def test_no_page_sends_a_request_to_another_host(site: dict[str, Any]) -> None:
    b = site["browser"]
    b.requested_urls()  # start a fresh log
    for fragment in ("#/", f"#/runs/{site['runs']['graph']}", f"#/runs/{site['runs']['deliberation']}", "#/board"):
        b.driver.get(site["url"] + "/" + fragment)
        time.sleep(0.5)
    b.driver.get(site["url"] + "/docs")
    b.wait_for("return document.querySelectorAll('.opblock').length > 10")  # Swagger UI drew the API offline
    urls = [u for u in b.requested_urls() if urlparse(u).scheme in ("http", "https", "ws", "wss")]
    assert urls, "the log saw no request at all"
    hosts = {urlparse(u).netloc for u in urls}
    assert hosts == {urlparse(site["url"]).netloc}, hosts


def test_with_a_token_the_page_asks_for_it_and_sends_it_with_every_request(site: dict[str, Any]) -> None:
    b = site["browser"]
    with Serve(site["db"], env={"MOOT_SERVE_TOKEN": "s3cret-token"}) as guarded:
        b.driver.get(guarded.url + "/#/")
        b.wait_for("return document.querySelector('form.tokenbox')")  # no data without the token
        assert not b.driver.find_elements("css selector", "tr.run")
        box = b.driver.find_element("css selector", "form.tokenbox input")
        box.send_keys("wrong")
        box.submit()
        b.wait_for("return document.querySelector('form.tokenbox')")  # refused again
        b.driver.execute_script("sessionStorage.clear()")
        b.driver.get(guarded.url + "/#/?token=s3cret-token")  # what `moot ui --token` opens
        b.wait_for("return document.querySelectorAll('tr.run').length >= 4")
        assert "token" not in b.driver.current_url  # taken out of the address bar
        b.driver.get(guarded.url + f"/#/runs/{site['runs']['parallel']}")  # the live stream carries it too
        rendered(b, "run")
        b.driver.execute_script("sessionStorage.clear()")


def test_a_graph_run_started_over_http_goes_live_then_draws_its_graph(site: dict[str, Any], tmp_path: Path) -> None:
    """The server's own progress stream: a run this server started, watched from its page."""
    from openai_stub import openai_compatible_server
    from test_graph_cli import http_answer
    from test_graph_support import GraphScript, make_sources

    gate = threading.Event()
    answer = http_answer(GraphScript())

    def gated(body: dict[str, Any]) -> str:
        gate.wait(20)
        return answer(body)

    sources = make_sources(tmp_path / "src")
    b = site["browser"]
    with openai_compatible_server(gated) as model, \
            Serve(tmp_path / "runs.db", "--model", model, "--repo-root", str(tmp_path),
                  env={"MOOT_HOME": str(tmp_path / "home")}) as server:
        started = httpx.post(f"{server.url}/api/graph/runs", json={
            "question": "How does the Ostby mill affect Lake Mira?", "sources": [str(p) for p in sources]}).json()
        try:
            b.driver.get(server.url + started["page"])
            b.wait_for("return document.querySelector('.badge') && document.querySelector('.badge').innerText === 'running'")
            b.driver.execute_script("window.__sameDocument = true")
            gate.set()
            b.wait_for("return document.querySelector('.badge').innerText === 'completed'", 30)
            drawn = b.wait_for("return document.querySelectorAll('#graph [data-node]').length", 10)
        finally:
            gate.set()
        assert drawn >= 3 and b.driver.execute_script("return window.__sameDocument") is True
        assert len(b.driver.find_elements("css selector", ".tl-lane")) >= 4  # mapper, skeptic, quantifier, …
