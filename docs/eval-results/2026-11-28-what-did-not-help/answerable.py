"""Experiment: can the embedded model tell, under a yes/no schema, whether the sources state a question's answer?"""
import asyncio, json, sys
from pathlib import Path
from moot.eval.levels import load_suite
from moot.models.registry import infer_model
from moot.models.base import ModelRequest, ModelSettings, SystemMessage, UserMessage, OutputSchema
from moot.teams.learning.ask.recall import sources_block
from moot.text import read_front_matter

PROMPT = Path(sys.argv[2]).read_text()
async def main():
    suite = Path(sys.argv[1])
    model = infer_model("local")
    out = []
    for level in load_suite(suite):
        docs = []
        for a in level.articles:
            text = (suite / "articles" / a.file).read_text()
            try:
                fm = read_front_matter(text); body = fm.body if hasattr(fm, "body") else text
            except Exception:
                body = text
            docs.append((a.source, a.published, body))
        block = sources_block(docs)
        for q in level.questions:
            req = ModelRequest(messages=(SystemMessage(content=PROMPT), UserMessage(content=f"Sources:\n\n{block}\n\nQuestion: {q.question}")),
                               settings=ModelSettings(max_tokens=60, temperature=0.0), agent="answerable",
                               output=OutputSchema(name="Stated", json_schema={"type": "object", "properties": {"stated": {"type": "string", "enum": ["yes", "no"]}}, "required": ["stated"]}))
            r = await model.request(req)
            rec = {"level": level.level, "id": q.id, "unknown": q.rubric.expects_unknown, "stated": (r.output or {}).get("stated")}
            out.append(rec); print(json.dumps(rec), flush=True)
    unk = [r for r in out if r["unknown"]]; kn = [r for r in out if not r["unknown"]]
    print("unknown said no:", sum(r["stated"] == "no" for r in unk), "/", len(unk), " answerable said no:", sum(r["stated"] == "no" for r in kn), "/", len(kn))
asyncio.run(main())
