"""The run page in a real browser (Debian's Chromium through chromedriver) against a real
`moot serve` on loopback: runs that hold other runs, what a learn run stored, what a cancelled
run kept, and where a request's time went.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nested_support import record_cancelled_run, record_learn_run, start_parent_with_children
from test_request_timing import record_two_agents_on_one_slot
from web_support import Browser, Serve, browser_missing

missing = browser_missing()
pytestmark = pytest.mark.skipif(missing is not None, reason=missing or "")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("web-runs")
    db = work / "runs.db"
    runs = {"learn": record_learn_run(db, work / "kb"), "cancelled": record_cancelled_run(db),
            "slot": record_two_agents_on_one_slot(db, "web-runs-slot")}
    gate = threading.Event()
    runs["parent"], thread = start_parent_with_children(db, gate)
    try:
        with Serve(db) as server, Browser() as browser:
            yield {"url": server.url, "runs": runs, "db": db, "browser": browser, "gate": gate, "work": work}
    finally:
        gate.set()
        thread.join(20)


def open_run(site: dict[str, Any], run_id: str) -> Browser:
    b: Browser = site["browser"]
    b.driver.execute_script("window.__mootRendered = null")  # a fragment change keeps the document
    b.driver.get(f"{site['url']}/#/runs/{run_id}")
    b.wait_for("return window.__mootRendered && window.__mootRendered.view === 'run'")
    return b


def stat(b: Browser, label: str) -> str:
    return b.driver.execute_script(
        "const d = [...document.querySelectorAll('.stats div')].find(x => x.querySelector('span').innerText.toLowerCase() === arguments[0]);"
        "return d ? d.querySelector('b').innerText : null", label)


def test_a_running_parent_draws_its_children_and_their_sums_then_follows_them_to_the_end(site: dict[str, Any]) -> None:
    b = open_run(site, site["runs"]["parent"])
    children = b.wait_for("return document.querySelectorAll('.span.child').length === 2 && "
                          "[...document.querySelectorAll('.span.child')].map(s => [s.innerText, s.className])")
    assert [c[0] for c in children] == ["learn file-one.md", "learn file-two.md"]
    assert "running" in children[1][1]
    assert stat(b, "model calls") == "2"  # summed over its children while the second still works
    assert stat(b, "runs held").startswith("2")
    assert stat(b, "agents") is None  # a parent whose work is in its children has no "agents 0"
    assert "recorded no agent spans" not in b.driver.find_element("id", "timeline").text
    site["gate"].set()
    b.wait_for("return document.querySelector('.badge').innerText === 'completed'", 20)
    b.wait_for("return [...document.querySelectorAll('.stats div')].some(d => d.innerText.includes('MODEL CALLS') && d.innerText.includes('3'))", 10)
    b.driver.execute_script("document.querySelectorAll('.span.child')[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    link = b.wait_for("const a = document.querySelector('#span-detail a.open-child'); return a && a.getAttribute('href')")
    assert link.startswith("#/runs/")


def test_a_learn_run_lists_the_facts_it_stored(site: dict[str, Any]) -> None:
    b = open_run(site, site["runs"]["learn"])
    rows = b.wait_for("return document.querySelectorAll('#learned tr[data-fact]').length >= 2 && "
                      "[...document.querySelectorAll('#learned tr[data-fact]')].map(r => r.innerText)")
    assert any("420 passengers" in r for r in rows)
    assert "Facts stored" in b.driver.find_element("id", "learned").text


def test_a_cancelled_run_shows_what_it_kept(site: dict[str, Any]) -> None:
    b = open_run(site, site["runs"]["cancelled"])
    kept = b.wait_for("const k = document.getElementById('kept'); return k && k.innerText")
    assert "What this run kept (1)" in kept and "writer: finished its part" in kept
    assert "{" not in kept  # readable text, not JSON


def test_a_span_shows_where_its_requests_time_went(site: dict[str, Any]) -> None:
    b = open_run(site, site["runs"]["slot"])
    assert "only waited for the model" in b.wait_for("const t = document.getElementById('run-timing'); return t && t.innerText")
    waits = []
    for task in ("first", "second"):
        b.driver.execute_script(f"document.querySelector('.span[data-task={task}]').dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
        cells = b.wait_for("const r = document.querySelector('#span-detail tr.call'); return r && "
                           "['queue', 'generation'].map(c => +r.querySelector('td.' + c).dataset.s)")
        waits.append(cells[0])
        assert "Model requests (1)" in b.driver.find_element("id", "span-detail").text
    assert max(waits) >= 0.2 and min(waits) < 0.05  # one waited for the other's slot


def test_a_run_another_process_runs_offers_no_cancel_button(site: dict[str, Any]) -> None:
    gate = threading.Event()
    parent, thread = start_parent_with_children(site["db"], gate)
    try:
        b = open_run(site, parent)
        b.wait_for("return document.querySelector('.badge').innerText === 'running' && document.querySelector('[data-action=download]')")
        assert not b.driver.find_elements("css selector", "button[data-action=cancel]")  # it would only be refused (409)
    finally:
        gate.set()
        thread.join(20)
