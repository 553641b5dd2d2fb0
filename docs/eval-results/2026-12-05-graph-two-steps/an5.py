import json, sys
from collections import defaultdict
rows = json.load(open(sys.argv[1])); k = sys.argv[2]
by_s = defaultdict(list)
for r in rows: by_s[(r["world"], r["s"])].append(r)
def gold_of(rs): return {frozenset((r["ga"], r["gb"])) for r in rs if r["lab"] == 1}
def ev(name, pick):
    tp = fp = g = 0
    for rs in by_s.values():
        gs = gold_of(rs); g += len(gs); d = pick(rs)
        tp += len(d & gs); fp += len(d - gs)
    print(f"{name:34s} tp {tp:3d} fp {fp:3d} P {tp/max(1,tp+fp):.2f} R {tp/max(1,g):.2f}")
def argmax_each(rs, floor=-99):
    out = set()
    for a in {r["ga"] for r in rs}:
        best = max((r for r in rs if r["ga"] == a), key=lambda r: r[k])
        if best[k] > floor: out.add(frozenset((best["ga"], best["gb"])))
    return out
def undirected(rs):
    m = defaultdict(lambda: -99)
    for r in rs: m[frozenset((r["ga"], r["gb"]))] = max(m[frozenset((r["ga"], r["gb"]))], r[k])
    return m
ev("argmax per entity", argmax_each)
ev("argmax per entity, margin>0", lambda rs: argmax_each(rs, 0))
allm = sorted(v for rs in by_s.values() for v in undirected(rs).values())
for q in (0.25, 0.5, 0.75):
    t = allm[int(q * len(allm))]
    ev(f"undirected margin >= q{q} ({t:.2f})", lambda rs, t=t: {p for p, v in undirected(rs).items() if v >= t})
def best_pair_per_sentence(rs):
    m = undirected(rs); return {max(m, key=m.get)}
ev("best pair per sentence", best_pair_per_sentence)
def within(rs, d=1.0):
    m = undirected(rs); top = max(m.values()); return {p for p, v in m.items() if v >= top - d}
ev("within 1.0 of sentence best", within)
ev("within 2.0 of sentence best", lambda rs: within(rs, 2.0))
