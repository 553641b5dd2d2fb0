"""Does a plain yes/no link question's odds separate linked from unlinked pairs? dev data only."""
import asyncio, json, sys, itertools, re, time
from pathlib import Path
from moot.models import infer_model, ModelRequest, UserMessage, SystemMessage, odds_settings, yes_margin
from moot.text import split_units, read_front_matter
from moot.eval.graph_suite import load_suite, _contains

QUESTIONS = {
 "affects": 'Text: "{t}"\nAccording to the text, does {a} affect {b}? Answer yes or no.',
 "link": 'Text: "{t}"\nDoes the text say that {a} leads to, changes or affects {b}? Answer yes or no.',
 "because": 'Text: "{t}"\nAccording to the text, is {b} the way it is because of {a}? Answer yes or no.',
}

async def main():
    model = infer_model(__import__("os").environ.get("M", "local"))
    rows = []
    for world in load_suite(Path(sys.argv[1])):
        gold_pairs = {}
        for e in world.gold["edges"]:
            gold_pairs[(e["source"], e["target"])] = e["type"]
        sents = []
        for text in world.documents.values():
            body = read_front_matter(text).body
            sents += [u.text for u in split_units(body)]
        for s in sents:
            present = {}
            for gid, names in world.names.items():
                for n in sorted(names, key=len, reverse=True):
                    if _contains(s, n):
                        present[gid] = n; break
            for x, y in itertools.permutations(present, 2):
                lab = 1 if (x, y) in gold_pairs else (-1 if (y, x) in gold_pairs else 0)
                rows.append(dict(world=world.name, s=s, a=present[x], b=present[y], ga=x, gb=y, lab=lab))
    print(len(rows), "directed pairs", sum(r["lab"]==1 for r in rows), "gold", file=sys.stderr)
    sem = asyncio.Semaphore(2)
    async def ask(r, qk):
        q = QUESTIONS[qk].format(t=r["s"][:600], a=r["a"], b=r["b"])
        async with sem:
            resp = await model.request(ModelRequest(messages=(SystemMessage(content="Answer the question about the text with one word."), UserMessage(content=q)), settings=odds_settings()))
        r[qk] = yes_margin(resp.top_logprobs or {})
    t0 = time.time()
    await asyncio.gather(*(ask(r, qk) for r in rows for qk in QUESTIONS))
    print("secs", round(time.time()-t0,1), file=sys.stderr)
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
    for qk in QUESTIONS:
        pos = [r[qk] for r in rows if r["lab"]==1]; neg = [r[qk] for r in rows if r["lab"]!=1]
        und = [r[qk] for r in rows if r["lab"]==0]
        auc = sum((p>n)+0.5*(p==n) for p in pos for n in neg)/max(1,len(pos)*len(neg))
        auc_u = sum((p>n)+0.5*(p==n) for p in pos for n in und)/max(1,len(pos)*len(und))
        print(qk, "AUC directed", round(auc,3), "AUC vs unlinked", round(auc_u,3), "yes>0 pos", sum(p>0 for p in pos), "/", len(pos), "neg", sum(n>0 for n in neg), "/", len(neg))
asyncio.run(main())
