import json
sents = json.load(open(""+__import__("sys").argv[1]+""))
c2 = {r["s"]: r for r in json.load(open("/tmp/gx/link2.json"))}
def ev(name, f):
    tp = fp = 0; gold = 0
    for r in sents:
        g = {frozenset(p) for p in r["gold"]}; gold += len(g)
        d = {frozenset(p) for p in f(r) if p[0] != p[1] and None not in p}
        tp += len(d & g); fp += len(d - g)
    print(f"{name:28s} tp {tp:3d} fp {fp:3d} of gold {gold}  P {tp/max(1,tp+fp):.2f} R {tp/gold:.2f}")
inv = lambda r: {v: k for k, v in r["present"].items()}
order = lambda r: sorted(r["present"], key=lambda i: r["s"].lower().find(r["present"][i].lower()))
adj = lambda r: list(zip(order(r), order(r)[1:]))
pe = lambda r: [(a, inv(r)[e]) for a, e in r["pe"].items() if e in inv(r)]
def pe_both(r):
    s = {frozenset(p) for p in pe(r)}
    return [tuple(p) for p in s if (tuple(p)[0], tuple(p)[1]) in pe(r) and (tuple(p)[1], tuple(p)[0]) in pe(r)]
multi = lambda r: [(inv(r).get(l.get("cause")), inv(r).get(l.get("effect"))) for l in r["multi"]]
choose = lambda r: [(inv(r).get((c2[r["s"]].get("choice") or {}).get("cause")), inv(r).get((c2[r["s"]].get("choice") or {}).get("effect")))]
allp = lambda r: [(a, b) for a in r["present"] for b in r["present"]]
ev("all co-occurring", allp)
ev("adjacent", adj)
ev("per-entity union", pe)
ev("per-entity both ways", pe_both)
ev("adjacent & per-entity", lambda r: [p for p in adj(r) if frozenset(p) in {frozenset(q) for q in pe(r)}])
ev("multi", multi)
ev("choose one", choose)
