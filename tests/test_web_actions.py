"""Actions on the run page, each in a real browser (Debian's Chromium through chromedriver)
against a real `moot serve` on loopback: start a run from the form, cancel it, re-run it with
the same inputs, download a run as JSON, accept or reject a deliberation's insights, compare
two runs side by side, and a time axis in one unit.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_request_timing import record_two_agents_on_one_slot
from web_support import Browser, Serve, browser_missing, record_deliberation_run

from moot.runtime import RunStore

missing = browser_missing()
pytestmark = pytest.mark.skipif(missing is not None, reason=missing or "")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("web-actions")
    db = work / "runs.db"
    store = RunStore(db)
    runs = {"deliberation": record_deliberation_run(store)}
    store.close()
    runs["one"] = record_two_agents_on_one_slot(db, "web-actions-1")
    runs["two"] = record_two_agents_on_one_slot(db, "web-actions-2")
    downloads = work / "downloads"
    downloads.mkdir()
    with Serve(db) as server, Browser() as browser:
        browser.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
        yield {"url": server.url, "runs": runs, "db": db, "browser": browser, "downloads": downloads}


def click(b: Browser, selector: str) -> None:
    b.wait_for("return document.querySelector(arguments[0])", 15, selector)
    b.driver.execute_script("document.querySelector(arguments[0]).click()", selector)


def open_run(b: Browser, url: str, run_id: str) -> None:
    b.driver.execute_script("window.__mootRendered = null")  # a fragment change keeps the document
    b.driver.get(f"{url}/#/runs/{run_id}")
    b.wait_for("return window.__mootRendered && window.__mootRendered.view === 'run'")


def test_start_from_the_form_cancel_rerun_with_the_same_inputs(tmp_path: Path) -> None:
    from openai_stub import openai_compatible_server
    from test_graph_cli import http_answer
    from test_graph_support import GraphScript, make_sources

    gate = threading.Event()
    answer = http_answer(GraphScript())

    def gated(body: dict[str, Any]) -> str:
        gate.wait(30)
        return answer(body)

    sources = make_sources(tmp_path / "src")
    with openai_compatible_server(gated) as model, \
            Serve(tmp_path / "runs.db", "--model", model, "--repo-root", str(tmp_path),
                  env={"MOOT_HOME": str(tmp_path / "home")}) as server, Browser() as b:
        try:
            b.driver.get(server.url + "/#/new?team=graph")
            b.wait_for("return document.querySelector('form#new-run[data-team=graph]')")
            b.driver.find_element("css selector", "#new-run textarea[name=question]").send_keys("How does the Ostby mill affect Lake Mira?")
            b.driver.find_element("css selector", "#new-run textarea[name=sources]").send_keys("\n".join(str(p) for p in sources))
            b.driver.find_element("css selector", "#new-run button[type=submit]").click()
            b.wait_for("return location.hash.startsWith('#/runs/') && document.querySelector('.badge') && "
                       "document.querySelector('.badge').innerText === 'running'", 20)
            first = b.driver.execute_script("return location.hash.split('/')[2]")
            click(b, "button[data-action=cancel]")
            b.wait_for("return document.querySelector('.badge').innerText === 'cancelled'", 20)
            assert not b.driver.find_elements("css selector", "button[data-action=cancel]")  # nothing left to cancel
            assert httpx.get(f"{server.url}/api/runs/{first}").json()["status"] == "cancelled"
            # re-run: a new run with the same question and files
            click(b, "button[data-action=rerun]")
            b.wait_for("return location.hash.startsWith('#/runs/') && location.hash.split('/')[2] !== arguments[0]", 20, first)
            second = b.driver.execute_script("return location.hash.split('/')[2]")
            b.wait_for("return window.__mootRendered && window.__mootRendered.view === 'run'")
            gate.set()
            b.wait_for("return document.querySelector('.badge').innerText === 'completed'", 60)
            b.wait_for("return document.querySelectorAll('#graph [data-node]').length >= 3", 10)
            again = httpx.get(f"{server.url}/api/runs/{second}").json()
            assert again["prompt"] == "How does the Ostby mill affect Lake Mira?" and again["status"] == "completed"
        finally:
            gate.set()


def test_teach_a_knowledge_base_from_the_form_and_read_the_facts_it_stored(tmp_path: Path) -> None:
    from learning_support import label_body
    from nested_support import ARTICLE
    from openai_stub import openai_compatible_server

    def answer(body: dict[str, Any]) -> str:
        return label_body(body) or "The harbour report."

    with openai_compatible_server(answer) as model, \
            Serve(tmp_path / "runs.db", "--model", model, env={"MOOT_HOME": str(tmp_path / "home")}) as server, Browser() as b:
        b.driver.get(server.url + "/#/new?team=learn")
        b.wait_for("return document.querySelector('form#new-run[data-team=learn]')")
        b.driver.find_element("css selector", "#new-run input[name=kb]").send_keys("harbour")
        b.driver.find_element("css selector", "#new-run input[name=source]").send_keys("harbour.md")
        b.driver.find_element("css selector", "#new-run textarea[name=text]").send_keys(ARTICLE)
        b.driver.find_element("css selector", "#new-run button[type=submit]").click()
        b.wait_for("return location.hash.startsWith('#/runs/')", 15)
        b.wait_for("return document.querySelector('.badge') && document.querySelector('.badge').innerText === 'completed'", 30)
        assert httpx.get(f"{server.url}/api/learning/kbs/harbour").json()["current_facts"] >= 2
        rows = b.wait_for("return document.querySelectorAll('#learned tr[data-fact]').length >= 2 && "
                          "[...document.querySelectorAll('#learned tr[data-fact]')].map(r => r.innerText)", 15)
        assert any("420 passengers" in r for r in rows)


def test_a_form_error_is_one_plain_line_on_the_page(site: dict[str, Any]) -> None:
    b = site["browser"]
    b.driver.get(site["url"] + "/#/new?team=deliberation")
    b.wait_for("return document.querySelector('form#new-run[data-team=deliberation]')")
    b.driver.find_element("css selector", "#new-run textarea[name=request]").send_keys("Should I move the review?")
    b.driver.find_element("css selector", "#new-run input[name=data]").send_keys("/etc")
    b.driver.find_element("css selector", "#new-run button[type=submit]").click()
    error = b.wait_for("return document.getElementById('form-error').innerText")
    assert "repo-root" in error and "Traceback" not in error
    assert b.driver.execute_script("return location.hash").startswith("#/new")


def test_download_a_run_as_json(site: dict[str, Any]) -> None:
    b = site["browser"]
    run_id = site["runs"]["one"]
    open_run(b, site["url"], run_id)
    click(b, "button[data-action=download]")
    path = site["downloads"] / f"moot-run-{run_id[:12]}.json"
    deadline = time.monotonic() + 15
    while not path.exists():
        assert time.monotonic() < deadline, "no file was downloaded"
        time.sleep(0.1)
    data = json.loads(path.read_text())
    assert data["run"]["run_id"] == run_id and data["run"]["name"] == "two agents, one slot"
    assert [e["type"] for e in data["events"]].count("model_response") == 2


def test_accept_and_reject_a_deliberation_insight(site: dict[str, Any]) -> None:
    b = site["browser"]
    run_id = site["runs"]["deliberation"]
    open_run(b, site["url"], run_id)
    b.wait_for("return document.querySelectorAll('[data-insight] button[data-feedback]').length >= 6")
    first, second = b.driver.execute_script("return [...document.querySelectorAll('[data-insight]')].slice(0, 2).map(c => c.dataset.insight)")
    click(b, f"[data-insight='{first}'] button[data-feedback=accepted]")
    click(b, f"[data-insight='{second}'] button[data-feedback=rejected]")
    b.wait_for("return document.querySelector(`[data-insight='${arguments[0]}'] [data-decision=rejected]`)", 10, second)
    b.driver.refresh()  # the decisions were recorded, not only drawn
    b.wait_for("return document.querySelector(`[data-insight='${arguments[0]}'] [data-decision=accepted]`)", 15, first)
    decisions = httpx.get(f"{site['url']}/api/deliberation/runs/{run_id}/feedback").json()["decisions"]
    assert decisions == {first: "accepted", second: "rejected"}
    # the team reads them back as the user's decisions
    from moot.teams.deliberation.memory import FeedbackMemory

    memory = FeedbackMemory()
    try:
        assert memory.decisions(run_id) == decisions
    finally:
        memory.close()


def test_compare_two_runs_side_by_side(site: dict[str, Any]) -> None:
    b = site["browser"]
    open_run(b, site["url"], site["runs"]["one"])
    click(b, "a[data-action=compare]")
    b.wait_for("return window.__mootRendered && window.__mootRendered.view === 'compare-pick'")
    b.driver.execute_script("const s = document.querySelector('#compare-pick select[name=b]'); s.value = arguments[0];", site["runs"]["deliberation"])
    b.driver.execute_script("document.querySelector('#compare-pick button[type=submit]').click()")
    b.wait_for("return window.__mootRendered && window.__mootRendered.view === 'compare'")
    heads = b.driver.execute_script("return [...document.querySelectorAll('#compare tr:first-child th[data-run]')].map(t => t.dataset.run)")
    assert heads == [site["runs"]["one"], site["runs"]["deliberation"]]
    rows = b.driver.execute_script("return Object.fromEntries([...document.querySelectorAll('#compare tr[data-row]')]"
                                   ".map(r => [r.dataset.row, [...r.querySelectorAll('td')].map(td => td.innerText)]))")
    assert rows["model calls"][0] == "2"
    assert rows["team"] == ["other", "deliberation"]
    assert "differs" in b.driver.execute_script("return document.querySelector('#compare tr[data-row=team]').className")
    assert "{" not in rows["result"][1]  # the advice as text, not JSON


def test_the_time_axis_uses_one_unit(site: dict[str, Any]) -> None:
    b = site["browser"]
    for run in ("one", "deliberation"):
        open_run(b, site["url"], site["runs"][run])
        ticks = b.wait_for("return document.querySelectorAll('.tl-tick').length > 2 && [...document.querySelectorAll('.tl-tick')].map(t => t.innerText)")
        assert len({t.split(" ")[-1] for t in ticks}) == 1, ticks
