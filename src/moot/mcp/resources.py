"""The MCP server's resources (``moot://`` URIs) and prompts (the teams' entry points).

Resources, all JSON:

- ``moot://kbs`` — the knowledge bases on this machine, with their counts;
- ``moot://kbs/{name}`` — one knowledge base: counts, main entities, sources, current facts;
- ``moot://runs`` — the newest recorded runs of every moot process;
- ``moot://runs/{run_id}`` — one run, with each task's result (partial ones after a cancellation);
- ``moot://board`` — the task board's columns (with ``moot mcp --board``).
"""

from __future__ import annotations

import asyncio
from typing import Any

FACTS_SHOWN = 200


def add_resources(server: Any, app: Any) -> None:
    from moot.errors import MootError
    from moot.mcp.server import board_columns, existing_kb, run_view

    def plain(exc: MootError) -> ValueError:
        return ValueError(exc.one_line())

    @server.resource("moot://kbs", name="knowledge bases", mime_type="application/json",
                     description="The knowledge bases on this machine, with their fact counts.")
    async def kbs() -> list[dict[str, Any]]:
        from moot import config

        folder = config.home() / "kb"
        found = sorted(folder.glob("*.sqlite3")) if folder.is_dir() else []
        return await asyncio.to_thread(lambda: [_kb_summary(p.stem, p, facts=False) for p in found])

    @server.resource("moot://kbs/{name}", name="knowledge base", mime_type="application/json",
                     description="One knowledge base: counts, main entities, sources and its current facts.")
    async def kb(name: str) -> dict[str, Any]:
        try:
            path = existing_kb(name)
        except MootError as exc:
            raise plain(exc) from None
        return await asyncio.to_thread(_kb_summary, name, path, facts=True)

    @server.resource("moot://runs", name="runs", mime_type="application/json",
                     description="The newest runs recorded by any moot process on this machine.")
    async def runs() -> list[dict[str, Any]]:
        from moot.server import history

        rows, _ = await asyncio.to_thread(history.list_runs, app.store, team=None, status=None, since=None, until=None,
                                          search=None, limit=50, offset=0)
        return [r.model_dump(mode="json") for r in rows]

    @server.resource("moot://runs/{run_id}", name="run", mime_type="application/json",
                     description="One run: status, stop reason, usage, each task's result and the team's result.")
    async def run(run_id: str) -> dict[str, Any]:
        try:
            return await asyncio.to_thread(run_view, app, run_id)
        except MootError as exc:
            raise plain(exc) from None

    @server.resource("moot://board", name="task board", mime_type="application/json",
                     description="The task board's counts and tasks by state (moot mcp --board).")
    async def board() -> dict[str, Any]:
        try:
            return await asyncio.to_thread(board_columns, app.settings.board)
        except MootError as exc:
            raise plain(exc) from None


def _kb_summary(name: str, path: Any, *, facts: bool) -> dict[str, Any]:
    from moot.memory import KnowledgeBase

    base = KnowledgeBase.open(path)
    try:
        s = base.summary(top=10)
        out: dict[str, Any] = {"name": name, "uri": f"moot://kbs/{name}", "facts": s.facts,
                               "current_facts": s.current_facts, "superseded_facts": s.superseded_facts,
                               "sources": list(s.sources), "entities": [list(e) for e in s.entities]}
        if facts:
            current = base.facts(include_superseded=False)
            out["fact_list"] = [{"id": f.id, "content": f.content, "source": getattr(f, "source", None),
                                 "source_date": None if getattr(f, "source_date", None) is None else str(f.source_date)}
                                for f in current[:FACTS_SHOWN]]
            out["facts_shown"] = min(len(current), FACTS_SHOWN)
        return out
    finally:
        base.close()


PROMPTS: dict[str, tuple[str, str]] = {
    "ask_knowledge_base": (
        "Ask the learning team a question about one of your knowledge bases.",
        "Use the moot `ask` tool with kb={kb!r} and question={question!r}. Report the answer, then the facts it "
        "used with their sources and dates, and say plainly when the knowledge base did not hold the answer.",
    ),
    "research_repository": (
        "Ask the code research team about a repository on this machine.",
        "Use the moot `research` tool with repo={repo!r} and question={question!r}. Give the answer with its "
        "path:line citations and the verifier's verdict; do not add claims the evidence does not support.",
    ),
    "reason_graph": (
        "Grow a reasoning graph over files and report its confident and uncertain parts.",
        "Use the moot `graph` tool with question={question!r} and sources={sources}. Summarise the main nodes and "
        "relationships with their confidence, the placeholders for what is missing, and the hypotheses.",
    ),
    "deliberate": (
        "Let the deliberation team weigh a request against your exports.",
        "Use the moot `deliberate` tool with request={request!r} and data={data!r} (mode {mode!r}). Report the "
        "decision first (what to do, why, the calendar, the confidence), then each conflict's outcome.",
    ),
    "board_task": (
        "Put a task on the task board for moot's agents.",
        "Use the moot `board_submit` tool with description={description!r}, then `board_status` to follow it.",
    ),
}


def add_prompts(server: Any) -> None:
    def text(name: str, **values: Any) -> str:
        return PROMPTS[name][1].format(**values)

    @server.prompt(description=PROMPTS["ask_knowledge_base"][0])
    def ask_knowledge_base(kb: str, question: str) -> str:
        return text("ask_knowledge_base", kb=kb, question=question)

    @server.prompt(description=PROMPTS["research_repository"][0])
    def research_repository(repo: str, question: str) -> str:
        return text("research_repository", repo=repo, question=question)

    @server.prompt(description=PROMPTS["reason_graph"][0])
    def reason_graph(question: str, sources: str) -> str:
        files = [s.strip() for s in sources.split(",") if s.strip()]
        return text("reason_graph", question=question, sources=files)

    @server.prompt(description=PROMPTS["deliberate"][0])
    def deliberate(request: str, data: str, mode: str = "standard") -> str:
        return text("deliberate", request=request, data=data, mode=mode)

    @server.prompt(description=PROMPTS["board_task"][0])
    def board_task(description: str) -> str:
        return text("board_task", description=description)
