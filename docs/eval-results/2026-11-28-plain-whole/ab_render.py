"""A/B: the plain draft's prompt (answer.md) over the sources rendered as the context baseline renders
them (whole, in the order given, front matter read off), on the dev blind suite. No learning.
Usage: python ab_render.py PROMPT[:LABEL] OUT.jsonl [LEVELS|all] [SUITE]: PROMPT answer or context, LABEL the
word before the sources (default Sources), SUITE by default the one of 2026-11-28's run."""
import asyncio, json, sys, time
from pathlib import Path
from moot.eval.levels import load_suite
from moot.eval.rubric import grade_question
from moot.models.base import ModelRequest, ModelSettings, SystemMessage, UserMessage
from moot.models.registry import infer_model
from moot.runtime import load_prompt
from moot.text.frontmatter import read_front_matter

variant, _, LABEL = sys.argv[1].partition(":")  # answer | context
LABEL = LABEL or "Sources"
out = Path(sys.argv[2])
levels = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[3] != "all" else None
suite = sys.argv[4] if len(sys.argv) > 4 else "examples/blind-2026-11-27"
done = {}
if out.exists():
    for line in out.read_text().splitlines():
        r = json.loads(line); done[r["id"]] = r

async def main():
    model = infer_model("local")
    prompt = load_prompt(variant, "moot.teams.learning")
    for level in load_suite(suite, levels):
        docs = []
        for a in level.articles:
            fm = read_front_matter(level.article_path(a).read_text(encoding="utf-8"))
            docs.append(f"[{a.source}{', ' + str(a.published) if a.published else ''}]\n{fm.body.strip()}")
        text = "\n\n".join(docs)
        for q in level.questions:
            if q.id in done:
                continue
            t = time.perf_counter()
            req = ModelRequest(messages=(SystemMessage(content=prompt), UserMessage(content=f"{LABEL}:\n\n{text}\n\nQuestion: {q.question}")),
                               settings=ModelSettings(max_tokens=300, temperature=0.0), agent="ab")
            reply = await model.request(req)
            g = grade_question(reply.text, q)
            r = {"id": q.id, "passed": g.passed, "answer": reply.text.strip(), "s": round(time.perf_counter() - t, 1)}
            with out.open("a") as f:
                f.write(json.dumps(r) + "\n")
            print(q.id, g.passed, r["s"], flush=True)

asyncio.run(main())
