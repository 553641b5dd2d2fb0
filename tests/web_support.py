"""Runs recorded with the project's scripted models, a real `moot serve` on loopback, and a real
Chromium driven by Debian's chromedriver: what the web page's tests (and bench/web.py) use."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from moot.models.base import ModelRequest
from moot.models.testing import FunctionModel
from moot.runtime import Budget, EventBus, RunStore, SubAgent, SubAgentTask, TaskGraph

ROOT = Path(__file__).resolve().parents[1]
INJECTED = '<script>window.__pwned = 1; document.title = "pwned"</script><img src="x" onerror="window.__pwned = 2">'
"""A model answer that tries to run script in the page."""

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or ``None``; only a machine where the set-up cannot
    install Debian's chromium (not root, not Debian) may skip them."""
    if Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists():
        try:
            import selenium  # noqa: F401
        except ImportError:
            return "selenium is not installed (pip install -e '.[test]')"
        return None
    can_install = os.geteuid() == 0 and shutil.which("apt-get") is not None
    if can_install:
        raise AssertionError("chromium/chromedriver missing on a Debian machine with root: run scripts/setup --tests "
                             "(apt-get install -y chromium chromium-driver)")
    return "Debian's chromium and chromium-driver are not installed and cannot be installed here (not root or not Debian)"


# ------------------------------------------------------------------ recording runs

def _sleepy(seconds: float, answers: dict[str, str]) -> FunctionModel:
    async def answer(request: ModelRequest) -> str:
        await asyncio.sleep(seconds)
        return answers.get(request.agent or "", f"{request.agent} is done.")

    return FunctionModel(answer)


def record_parallel_run(store: RunStore, *, delay: float = 0.3) -> str:
    """Two agents that work at the same time, then a third that waits for both."""
    model = _sleepy(delay, {"pros": "1. no commute\n2. focus\n3. flexible hours", "cons": "1. isolation\n2. blurred hours",
                            "judge": "Remote work suits focused work; keep one office day."})
    agents = [SubAgent("pros", "lists advantages", "List advantages.", model=model),
              SubAgent("cons", "lists drawbacks", "List drawbacks.", model=model),
              SubAgent("judge", "weighs both", "Weigh both sides.", model=model)]
    graph = TaskGraph(agents, [SubAgentTask("pros", "Remote work"), SubAgentTask("cons", "Remote work"),
                               SubAgentTask("judge", "Is remote work a good idea?", depends_on=["pros", "cons"])])
    result = graph.run_sync(budget=Budget(max_calls=10, max_tokens=20_000), store=store, name="pros and cons of remote work")
    return result.run_id


def record_injected_run(store: RunStore) -> str:
    """A run whose model answers with markup that would run script if the page inserted it as HTML."""
    model = FunctionModel(lambda request: INJECTED)
    graph = TaskGraph([SubAgent("writer", "writes", "Answer.", model=model)], [SubAgentTask("writer", "Say hello")])
    result = asyncio.run(graph.run(store=store, bus=EventBus(record_content=True), name="hello " + INJECTED))
    return result.run_id


def record_graph_run(store: RunStore, folder: Path) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_graph_support import GraphScript, make_sources, model_for

    from moot.teams.graph import GraphTeam

    team = GraphTeam(make_sources(folder), model=model_for(GraphScript()), store=store)
    return team.ask_sync("How does the Ostby mill affect Lake Mira?").run_id


def record_deliberation_run(store: RunStore) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from deliberation_support import NOW, REQUEST, SLEEP_VS_DEADLINE, Deliberators, model_for

    from moot.teams.deliberation import DeliberationTeam

    team = DeliberationTeam(SLEEP_VS_DEADLINE, model=model_for(Deliberators()), store=store, mode="standard")
    return team.deliberate_sync(REQUEST, now=NOW).run_id


def record_all(db: Path, work: Path) -> dict[str, str]:
    """Every kind of run the page shows, in one run store; returns kind → run id."""
    store = RunStore(db)
    try:
        return {"parallel": record_parallel_run(store), "injected": record_injected_run(store),
                "graph": record_graph_run(store, work / "graph-sources"), "deliberation": record_deliberation_run(store)}
    finally:
        store.close()


# ------------------------------------------------------------------ a real `moot serve`

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """`moot serve` as a separate process on a loopback port, over a given run store."""

    def __init__(self, db: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.db = db
        self.extra = extra
        self.env = {**os.environ, "MOOT_RUNS_DB": str(db), **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Serve:
        self.proc = subprocess.Popen([sys.executable, "-m", "moot", "serve", "--port", str(self.port), *self.extra],
                                     env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        import httpx

        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"moot serve exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            try:
                if httpx.get(self.url + "/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "moot serve did not start"
            time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


# ------------------------------------------------------------------ the browser

class Browser:
    """Headless Debian Chromium through chromedriver, with every network request logged."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="moot-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", f"--user-data-dir={self.profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(30)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.driver.quit()
        shutil.rmtree(self.profile, ignore_errors=True)

    def requested_urls(self) -> list[str]:
        """Every URL the page asked for since the last call (from the DevTools network log)."""
        import json

        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        return urls

    def wait_for(self, script: str, timeout: float = 15.0, *args: Any) -> Any:
        """Poll a JavaScript expression until it returns something truthy. An expression that
        throws counts as not yet: while the page renders a run again, an element it reads
        (`.badge`) is briefly absent (a CI run failed on `null.innerText` that way)."""
        from selenium.common.exceptions import JavascriptException

        deadline = time.monotonic() + timeout
        error = ""
        while True:
            try:
                value = self.driver.execute_script(script, *args)
            except JavascriptException as exc:
                value, error = None, exc.msg or str(exc)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for: {script}" + (f" (last error: {error})" if error else ""))
            time.sleep(0.05)


def record_learning_run(store: RunStore, folder: Path) -> str:
    """The learning team answering from a small knowledge base (its coordinator and specialists scripted)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from datetime import date

    from test_learning_ask import Router

    from moot.memory import Fact, KnowledgeBase
    from moot.teams.learning import LearningTeam

    folder.mkdir(parents=True, exist_ok=True)
    kb = KnowledgeBase.open(folder / "olympics.sqlite3")
    kb.add_facts([Fact("Norway has 9 gold medals", entity="Norway", attribute="gold medals", value="9",
                       source="Day 7 report", source_date=date(2026, 2, 13)),
                  Fact("Norway has 14 gold medals", entity="Norway", attribute="gold medals", value="14",
                       source="Day 10 report", source_date=date(2026, 2, 16))])
    team = LearningTeam(kb, model=FunctionModel(Router()), store=store)
    return team.ask_sync("How many more gold medals does Norway have now than on day 7?").run_id


def screenshots(out: str | Path = ROOT / "docs" / "web") -> list[Path]:
    """Screenshots of every page over freshly recorded runs (for docs/web.md):
    ``.venv/bin/python -c "import sys; sys.path.insert(0, 'tests'); import web_support; web_support.screenshots()"``"""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="moot-shots-") as tmp:
        work = Path(tmp)
        db = work / "runs.db"
        runs = record_all(db, work)
        store = RunStore(db)
        runs["answer"] = record_learning_run(store, work / "kb")
        runs["big-graph"] = record_big_graph(store, 60)
        store.close()
        import threading

        from nested_support import record_cancelled_run, record_learn_run, start_parent_with_children
        from test_request_timing import record_two_agents_on_one_slot

        runs["slot"] = record_two_agents_on_one_slot(db, "screenshots")
        runs["learned"] = record_learn_run(db, work / "kb-learn")
        runs["cancelled"] = record_cancelled_run(db)
        gate = threading.Event()
        runs["parent"], parent_thread = start_parent_with_children(db, gate)
        from moot.teams.board import open_board

        board = open_board(str(work / "board"))
        board.init()
        from moot.teams.board import parse_task

        tasks = [board.submit(parse_task({"description": d}, origin="docs")) for d in
                 ("Summarise the Q3 notes", "Draft the release email", "Check the figures in table 2", "Translate the FAQ")]
        board.claim(tasks[0].id, "worker-1", lease_s=600)
        board.claim(tasks[1].id, "worker-2", lease_s=600)
        board.complete(tasks[1].id, "worker-2", {"email": "Hello all, version 2 is out."})
        board.close()
        with Serve(db, "--board", str(work / "board"), env={"MOOT_HOME": str(work / "home")}) as server, \
                Browser(1400, 1100) as b:
            def shot(name: str, fragment: str, ready: str, click: str | None = None, height: int = 1100,
                     save: bool = True) -> None:
                b.driver.set_window_size(1400, height)
                b.driver.get(server.url + fragment)
                b.wait_for(f"return {ready}", 20)
                if click:
                    b.driver.execute_script(f"document.querySelector({click!r}).dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")
                time.sleep(0.4)
                if not save:
                    return
                path = out / f"{name}.png"
                b.driver.save_screenshot(str(path))
                shots.append(path)

            shot("runs", "/#/", "document.querySelectorAll('tr.run').length >= 5", height=600)
            shot("timeline", f"/#/runs/{runs['parallel']}", "document.querySelectorAll('.span').length === 3",
                 ".span[data-task=judge]", height=950)
            shot("graph", f"/#/runs/{runs['graph']}", "document.querySelector('#graph [data-node]')", None, height=1500, save=False)
            b.driver.execute_script("document.getElementById('graph-result').scrollIntoView()")
            b.driver.execute_script("document.querySelector('#graph .node.entity').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
            time.sleep(0.3)
            b.driver.save_screenshot(str(out / "graph-node.png"))
            shots.append(out / "graph-node.png")
            shot("deliberation", f"/#/runs/{runs['deliberation']}", "document.querySelector('.debate')", height=1100, save=False)
            b.driver.execute_script("document.querySelector('.debate').scrollIntoView()")
            time.sleep(0.2)
            b.driver.save_screenshot(str(out / "debate.png"))
            shots.append(out / "debate.png")
            shot("answer", f"/#/runs/{runs['answer']}", "document.getElementById('answer')", height=1300, save=False)
            b.driver.execute_script("document.getElementById('answer').scrollIntoView()")
            time.sleep(0.2)
            b.driver.save_screenshot(str(out / "answer.png"))
            shots.append(out / "answer.png")
            shot("injected", f"/#/runs/{runs['injected']}", "document.querySelector('.span')", ".span[data-task=writer]", height=800)
            shot("board", "/#/board", "document.querySelector('[data-column=completed] .task')", height=600)
            shot("api-docs", "/docs", "document.querySelectorAll('.opblock').length > 10", height=900)
            # the views of issue 35: where the time went, nested runs, actions, the laid-out graph
            shot("timing", f"/#/runs/{runs['slot']}", "document.querySelector('.span[data-task=second]')",
                 ".span[data-task=second]", height=760)
            shot("nested", f"/#/runs/{runs['parent']}", "document.querySelectorAll('.span.child').length === 2", height=620)
            gate.set()
            parent_thread.join(20)
            shot("learned", f"/#/runs/{runs['learned']}", "document.querySelector('#learned tr[data-fact]')", height=900, save=False)
            b.driver.execute_script("document.getElementById('learned').scrollIntoView()")
            time.sleep(0.2)
            b.driver.save_screenshot(str(out / "learned.png"))
            shots.append(out / "learned.png")
            shot("kept", f"/#/runs/{runs['cancelled']}", "document.getElementById('kept')", height=640)
            shot("new-run", "/#/new?team=graph", "document.querySelector('form#new-run')", height=640)
            shot("compare", f"/#/compare?a={runs['slot']}&b={runs['deliberation']}", "document.getElementById('compare')", height=700)
            shot("feedback", f"/#/runs/{runs['deliberation']}", "document.querySelector('[data-insight] button[data-feedback]')",
                 "[data-insight] button[data-feedback=accepted]", height=1100, save=False)
            b.wait_for("return document.querySelector('[data-decision=accepted]')", 10)
            b.driver.execute_script("document.querySelector('[data-insight]').scrollIntoView()")
            time.sleep(0.2)
            b.driver.save_screenshot(str(out / "feedback.png"))
            shots.append(out / "feedback.png")
            shot("graph-layout", f"/#/runs/{runs['big-graph']}", "document.querySelector('#graph [data-node]')", height=1400, save=False)
            b.driver.execute_script("document.getElementById('graph-result').scrollIntoView()")
            b.driver.execute_script("document.querySelector('button[data-zoom=\"1\"]').click()")
            time.sleep(0.3)
            b.driver.save_screenshot(str(out / "graph-layout.png"))
            shots.append(out / "graph-layout.png")
    return shots


def record_big_graph(store: RunStore, nodes: int = 200, seed: int = 7) -> str:
    """A graph run with ``nodes`` entities in a few clusters, linked by typed edges, and labels of
    many lengths: what a long graph run leaves (the layout test lays it out in the browser)."""
    import random

    from moot.runtime import Run

    rng = random.Random(seed)
    words = ["mill", "river", "Lake Mira", "sediment load", "fish stock", "farm runoff", "dam", "north shore", "permit",
             "phosphate", "council", "algae bloom", "wetland", "Ostby", "turbidity", "spawning ground", "road salt", "bridge"]
    items = [{"id": f"n{i}", "label": f"{rng.choice(words)} {i}" + (" (upper basin)" if i % 7 == 0 else ""),
              "kind": "placeholder" if i % 11 == 0 else "entity", "confidence": round(rng.uniform(0.2, 0.95), 2),
              "iteration": i % 4, "evidence": []} for i in range(nodes)]
    types = ["causes", "reduces", "located_in", "feeds", "regulates", "part_of"]
    edges = []
    for i in range(1, nodes):
        cluster = i // 25 * 25  # clusters of 25, each a tree with a few extra links
        target = rng.randrange(cluster, i) if i > cluster else rng.randrange(0, i)
        edges.append({"id": f"e{i}", "source": f"n{i}", "target": f"n{target}", "type": rng.choice(types),
                      "strength": round(rng.uniform(0.1, 0.9), 2), "provisional": i % 9 == 0, "iteration": i % 4, "evidence": []})
    for k in range(nodes // 5):
        a, b = rng.sample(range(nodes), 2)
        edges.append({"id": f"x{k}", "source": f"n{a}", "target": f"n{b}", "type": rng.choice(types), "strength": 0.3,
                      "provisional": True, "iteration": 3, "evidence": []})
    run = Run("graph: how do 200 things around Lake Mira connect?", store=store)
    run.start()
    asyncio.run(run.finish())
    store.record_output(run.run_id, "graph", {"answer": "A large graph.", "nodes": items, "edges": edges, "gaps": [],
                                              "hypotheses": [], "noise": {"current": 0.2, "target": 0.2}, "converged": True})
    return run.run_id
