import asyncio, json, sys, time
from pathlib import Path
from moot.models import infer_model, ModelRequest, UserMessage, SystemMessage, ModelSettings, OutputSchema
from moot.eval.graph_suite import _contains

async def main():
    model = infer_model(__import__("os").environ.get("M", "local"))
    sents = json.load(open(sys.argv[1]))
    sem = asyncio.Semaphore(2)
    async def multi(r):
        ids = list(r["present"]); labels = [r["present"][i] for i in ids]
        item = {"type": "object", "properties": {"cause": {"enum": labels}, "effect": {"enum": labels}}, "required": ["cause", "effect"]}
        schema = {"type": "object", "properties": {"links": {"type": "array", "items": item, "minItems": 1, "maxItems": max(1, len(labels) - 1)}}, "required": ["links"]}
        q = f'Text: "{r["s"]}"\nList each link the sentence states: which thing acts on or changes which other thing (cause and effect).'
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer in JSON."), UserMessage(content=q)), output=OutputSchema(name="links", json_schema=schema), settings=ModelSettings(max_tokens=160, temperature=0.0)))
        r["multi"] = (resp.output or {}).get("links", [])
    async def per_entity(r, a_id):
        ids = [i for i in sorted(r["present"], key=lambda i: r["s"].lower().find(r["present"][i].lower())) if i != a_id]
        labels = [r["present"][i] for i in ids]
        schema = {"type": "object", "properties": {"effect": {"enum": labels + ["nothing"]}}, "required": ["effect"]}
        q = f'Text: "{r["s"]}"\nIn this sentence, what does {r["present"][a_id]} act on, cause or change?'
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer in JSON."), UserMessage(content=q)), output=OutputSchema(name="effect", json_schema=schema), settings=ModelSettings(max_tokens=40, temperature=0.0)))
        r.setdefault("pe", {})[a_id] = (resp.output or {}).get("effect")
    t0 = time.time()
    await asyncio.gather(*(multi(r) for r in sents), *(per_entity(r, a) for r in sents for a in r["present"]))
    print("secs", round(time.time()-t0, 1))
    json.dump(sents, open(sys.argv[2], "w"), indent=1)
    def score(name, drawn):
        tp = rv = fp = 0
        for r, pairs in drawn:
            g = {tuple(p) for p in r["gold"]}
            for a, b in set(pairs):
                if (a, b) in g: tp += 1
                elif (b, a) in g: rv += 1
                else: fp += 1
        print(name, "directed tp", tp, "reversed", rv, "fp", fp, "gold", sum(len(r["gold"]) for r in sents))
    inv = lambda r: {v: k for k, v in r["present"].items()}
    score("multi", [(r, [(inv(r).get(l.get("cause")), inv(r).get(l.get("effect"))) for l in r["multi"] if l.get("cause") != l.get("effect")]) for r in sents])
    score("per-entity", [(r, [(a, inv(r)[e]) for a, e in r["pe"].items() if e in inv(r)]) for r in sents])
    print("per-entity answers nothing:", sum(1 for r in sents for e in r["pe"].values() if e == "nothing"), "of", sum(len(r["pe"]) for r in sents))
asyncio.run(main())
