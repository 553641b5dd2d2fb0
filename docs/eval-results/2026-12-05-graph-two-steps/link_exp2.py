import asyncio, json, sys, itertools, time
from pathlib import Path
from moot.models import infer_model, ModelRequest, UserMessage, SystemMessage, ModelSettings, OutputSchema
from moot.text import split_units, read_front_matter
from moot.eval.graph_suite import load_suite, _contains

async def main():
    model = infer_model(__import__("os").environ.get("M", "local"))
    sents = []
    for world in load_suite(Path(sys.argv[1])):
        gold = {(e["source"], e["target"]) for e in world.gold["edges"]}
        for text in world.documents.values():
            for u in split_units(read_front_matter(text).body):
                present = {}
                for gid, names in world.names.items():
                    for n in sorted(names, key=len, reverse=True):
                        if _contains(u.text, n):
                            present[gid] = n; break
                if len(present) >= 2:
                    sents.append(dict(world=world.name, s=u.text, present=present, gold=[list(p) for p in gold if p[0] in present and p[1] in present]))
    sem = asyncio.Semaphore(2)
    async def extract(r, a_id):
        a = r["present"][a_id]
        q = f'Text: "{r["s"]}"\nAccording to the text, what does {a} cause, change or affect? Answer with a few words copied from the text, or "nothing".'
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer briefly."), UserMessage(content=q)), settings=ModelSettings(max_tokens=16, temperature=0.0)))
        r.setdefault("ext", {})[a_id] = resp.text
    async def choose(r):
        ids = list(r["present"]); labels = [r["present"][i] for i in ids]
        schema = {"type": "object", "properties": {"cause": {"enum": labels}, "effect": {"enum": labels + ["none"]}}, "required": ["cause", "effect"]}
        q = f'Text: "{r["s"]}"\nIn this sentence, which thing acts on or changes which other thing? Give the cause and the effect.'
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer in JSON."), UserMessage(content=q)), output=OutputSchema(name="link", json_schema=schema), settings=ModelSettings(max_tokens=60, temperature=0.0)))
        r["choice"] = resp.output
    t0 = time.time()
    await asyncio.gather(*(extract(r, a) for r in sents for a in r["present"]), *(choose(r) for r in sents))
    print("secs", round(time.time()-t0, 1), len(sents), "sentences")
    json.dump(sents, open(sys.argv[2], "w"), indent=1)
    # score extraction: a->b drawn where the answer contains a name of b
    tp = fp = 0; gold_n = sum(len(r["gold"]) for r in sents)
    tpu = 0
    for r in sents:
        g = {tuple(p) for p in r["gold"]}
        for a_id, ans in r["ext"].items():
            for b_id, b in r["present"].items():
                if b_id != a_id and _contains(ans, b):
                    if (a_id, b_id) in g: tp += 1
                    elif (b_id, a_id) in g: tpu += 1
                    else: fp += 1
    print("extract: directed tp", tp, "reversed", tpu, "fp", fp, "gold", gold_n)
    tp = fp = tpu = 0
    for r in sents:
        g = {tuple(p) for p in r["gold"]}; c = r.get("choice") or {}
        inv = {v: k for k, v in r["present"].items()}
        a, b = inv.get(c.get("cause")), inv.get(c.get("effect"))
        if a and b and a != b:
            if (a, b) in g: tp += 1
            elif (b, a) in g: tpu += 1
            else: fp += 1
    print("choose: directed tp", tp, "reversed", tpu, "fp", fp, "sentences with gold", sum(1 for r in sents if r["gold"]))
    # baseline: adjacent mentions in text order
    tp = tpu = fp = 0
    for r in sents:
        g = {tuple(p) for p in r["gold"]}
        order = sorted(r["present"], key=lambda i: r["s"].lower().find(r["present"][i].lower()))
        for a, b in zip(order, order[1:]):
            if (a, b) in g: tp += 1
            elif (b, a) in g: tpu += 1
            else: fp += 1
    print("adjacent baseline: tp", tp, "reversed", tpu, "fp", fp)
asyncio.run(main())
