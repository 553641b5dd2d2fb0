"""The graph view's layout in a real browser (Debian's Chromium through chromedriver): a
200-node graph laid out by the page's own force-directed layout, every label drawn, no two
labels overlapping, and linked nodes drawn nearer each other than unlinked ones."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from web_support import Browser, Serve, browser_missing, record_big_graph, record_graph_run

from moot.runtime import RunStore

missing = browser_missing()
pytestmark = pytest.mark.skipif(missing is not None, reason=missing or "")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("web-graph")
    db = work / "runs.db"
    store = RunStore(db)
    runs = {"big": record_big_graph(store), "small": record_graph_run(store, work / "sources")}
    store.close()
    with Serve(db) as server, Browser() as browser:
        yield {"url": server.url, "runs": runs, "browser": browser}


def drawn(site: dict[str, Any], run: str) -> dict[str, Any]:
    b = site["browser"]
    b.driver.get(f"{site['url']}/#/runs/{site['runs'][run]}")
    b.wait_for("return document.querySelector('#graph [data-node]')", 30)
    # at actual size, where every label can be read (fitted in the box, 200 labels are too small)
    b.driver.execute_script("document.querySelector('button[data-zoom=\"1\"]').click()")
    return b.wait_for("""const g = document.getElementById('graph');
        if (!g || g.classList.contains('small')) return null;
        const box = (t) => { const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, t.textContent]; };
        return {labels: [...g.querySelectorAll('text.label')].map(box),
                nodes: Object.fromEntries([...g.querySelectorAll('[data-node] circle')].map(c => {
                    const r = c.getBoundingClientRect(); return [c.parentNode.dataset.node, [(r.left + r.right) / 2, (r.top + r.bottom) / 2]]; })),
                edges: [...g.querySelectorAll('[data-edge]')].length}""", 30)


def overlapping(labels: list[list[Any]]) -> list[tuple[str, str]]:
    """Pairs of labels whose drawn boxes overlap (touching edges allowed); a sweep over x."""
    found = []
    ordered = sorted(labels, key=lambda r: r[0])
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if b[0] >= a[2] - 0.01:
                break
            if a[1] < b[3] - 0.01 and b[1] < a[3] - 0.01:
                found.append((a[4], b[4]))
    return found


@pytest.mark.parametrize("run", ["big", "small"])
def test_every_label_is_drawn_and_no_two_overlap(site: dict[str, Any], run: str) -> None:
    graph = httpx.get(f"{site['url']}/api/runs/{site['runs'][run]}").json()["output"]
    seen = drawn(site, run)
    assert len(seen["nodes"]) == len(graph["nodes"]) and seen["edges"] == len(graph["edges"])
    # every node and every edge has its label on the picture (none dropped to make room)
    assert len(seen["labels"]) == len(graph["nodes"]) + len(graph["edges"])
    assert overlapping(seen["labels"]) == []


def test_a_200_node_graph_is_laid_out_by_its_links_not_on_a_grid(site: dict[str, Any]) -> None:
    graph = httpx.get(f"{site['url']}/api/runs/{site['runs']['big']}").json()["output"]
    at = drawn(site, "big")["nodes"]
    dist = lambda a, b: math.dist(at[a], at[b])  # noqa: E731
    linked = [dist(e["source"], e["target"]) for e in graph["edges"] if not e["provisional"]]
    pairs = list(itertools.combinations(sorted(at), 2))[::97]
    unlinked = [dist(a, b) for a, b in pairs]
    # a force layout draws linked nodes close: on average far closer than any two nodes
    assert sum(linked) / len(linked) < 0.5 * sum(unlinked) / len(unlinked)
    # and no two nodes sit on the same spot
    centres = {(round(x), round(y)) for x, y in at.values()}
    assert len(centres) == len(at)


def test_hypotheses_and_gaps_are_readable_text_not_json(site: dict[str, Any]) -> None:
    graph = httpx.get(f"{site['url']}/api/runs/{site['runs']['small']}").json()["output"]
    assert graph["hypotheses"], "the scripted graph run proposes hypotheses"
    b = site["browser"]
    b.driver.get(f"{site['url']}/#/runs/{site['runs']['small']}")
    text = b.wait_for("const d = [...document.querySelectorAll('#graph-result details')].find(x => x.innerText.startsWith('Hypotheses'));"
                      "if (!d) return null; d.open = true; return d.innerText")
    assert "{" not in text and "\"" not in text
    first = graph["hypotheses"][0]
    assert str(first.get("statement") or first.get("text") or next(v for v in first.values() if isinstance(v, str)))[:30] in text
