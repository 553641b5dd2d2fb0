import asyncio, json, sys, time
from pathlib import Path
from moot.models import infer_model, ModelRequest, UserMessage, SystemMessage, odds_settings, yes_margin
from moot.text import split_units, read_front_matter
from moot.eval.graph_suite import load_suite, match_entity
from moot.teams.graph.candidates import mentions_in

Q = {
 "part": 'Question: "{q}"\nText: "{t}"\nIs "{l}" one of the things the answer to the question is about (a cause, an effect, or a step between them)? Answer yes or no.',
 "thing": 'Text: "{t}"\nDoes "{l}" name a particular thing, place, group, substance, living thing or measured quantity in this text? Answer yes or no.',
 "kind": 'Text: "{t}"\nWhat is "{l}" in this text: a company, person, place, facility, substance, animal, activity, measure, event, or other? Answer with one word.',
}
async def main():
    model = infer_model(__import__("os").environ.get("M", "local"))
    rows = []
    for world in load_suite(Path(sys.argv[1])):
        fm_prov = []
        cands = {}
        for text in world.documents.values():
            fm = read_front_matter(text)
            for u in split_units(fm.body):
                for label, m in mentions_in(u.text, [str(v) for v in fm.meta.values()] if hasattr(fm, "meta") else []):
                    c = cands.setdefault(m.key, dict(world=world.name, q=world.question, label=label, sents=[]))
                    if len(c["sents"]) < 2: c["sents"].append(u.text)
        for c in cands.values():
            c["gold"] = match_entity(world, [c["label"]])
            rows.append(c)
    print(len(rows), "candidates;", sum(1 for r in rows if r["gold"]), "match gold;", {w: len({r['gold'] for r in rows if r['world']==w and r['gold']}) for w in {r['world'] for r in rows}}, file=sys.stderr)
    sem = asyncio.Semaphore(2)
    async def ask(r, k):
        q = Q[k].format(q=r["q"], t=" ".join(r["sents"])[:600], l=r["label"])
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer the question about the text with one word."), UserMessage(content=q)), settings=odds_settings()))
        r[k] = resp.top_logprobs or {}
    t0 = time.time()
    await asyncio.gather(*(ask(r, k) for r in rows for k in Q))
    print("secs", round(time.time()-t0, 1), file=sys.stderr)
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
    for k in ("part", "thing"):
        pos = [yes_margin(r[k]) for r in rows if r["gold"]]; neg = [yes_margin(r[k]) for r in rows if not r["gold"]]
        auc = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / max(1, len(pos) * len(neg))
        print(k, "AUC", round(auc, 3), "yes>0 gold", sum(p > 0 for p in pos), "/", len(pos), "other", sum(n > 0 for n in neg), "/", len(neg))
    from collections import Counter
    kinds = ["company", "person", "place", "facility", "substance", "animal", "activity", "measure", "event", "other"]
    for g in (True, False):
        cnt = Counter(max(kinds, key=lambda w: r["kind"].get(w, -99)) for r in rows if bool(r["gold"]) == g)
        print("gold" if g else "other", cnt.most_common())
asyncio.run(main())
