"""A/B without learning: the plain draft's prompt (answer.md) over each level's sources, in the team's order
(oldest first, undated first), rendered three ways: `stored` (the units joined again, as the team read them
before 2026-12-05), `written` (each body as written, front matter read off), `file` (each file as given).
Usage: python ab_render.py stored|written|file OUT.jsonl SUITE_FOLDER (from the repository root, any model job
stopped). A level whose sources exceed the whole-sources limit is skipped (the team reads passages there)."""
import asyncio, json, sys, time
from pathlib import Path
from moot.eval.levels import load_suite
from moot.eval.rubric import grade_question
from moot.models.base import ModelRequest, ModelSettings, SystemMessage, UserMessage
from moot.models.registry import infer_model
from moot.runtime import load_prompt
from moot.text.frontmatter import read_front_matter
from moot.text.sentences import split_units
from moot.teams.learning.ingest.chunking import chunk_units, DEFAULT_CHUNK_TOKENS
from moot.teams.learning.ask.recall import sources_block, WHOLE_SOURCES_TOKENS
from moot.memory.facts import coerce_date
variant, out, suite = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
done = {json.loads(l)["id"] for l in out.read_text().splitlines()} if out.exists() else set()
async def main():
    model = infer_model("local")
    prompt = load_prompt("answer", "moot.teams.learning")
    for level in load_suite(suite, None):
        docs = []
        for i, a in enumerate(level.articles):
            fm = read_front_matter(level.article_path(a).read_text(encoding="utf-8"))
            pub = a.published or (fm.published if fm.format != "none" else None)
            try:
                pub = coerce_date(pub, what="x")
            except Exception:
                pub = None
            body = fm.body.strip()
            stored = "\n\n".join(c.text for c in chunk_units(split_units(body), max_tokens=DEFAULT_CHUNK_TOKENS))
            docs.append((str(pub or ""), i, a.source, pub, (level.article_path(a).read_text(encoding="utf-8").strip() if variant == "file" else body) if variant in ("written", "file") else stored))
        docs.sort(key=lambda d: (d[0], d[1]))
        text = sources_block((s, p, t) for _, _, s, p, t in docs)
        if len(text) / 4 > WHOLE_SOURCES_TOKENS:
            print(level.level, "skipped: too long", flush=True); continue
        for q in level.questions:
            if q.id in done: continue
            req = ModelRequest(messages=(SystemMessage(content=prompt), UserMessage(content=f"Sources:\n\n{text}\n\nQuestion: {q.question}")),
                               settings=ModelSettings(max_tokens=300, temperature=0.0), agent="ab")
            reply = await model.request(req)
            g = grade_question(reply.text, q)
            with out.open("a") as f:
                f.write(json.dumps({"id": q.id, "passed": g.passed, "answer": reply.text.strip()}) + "\n")
            print(q.id, g.passed, flush=True)
asyncio.run(main())
