import asyncio, sys
from moot.models.registry import infer_model
from moot.models.base import ModelRequest, UserMessage, SystemMessage, odds_settings, yes_margin
W = {
 "affects": 'Text: "{s}"\nDoes the text say that {a} affects {b}? Answer yes or no.',
 "act": 'Text: "{s}"\nAccording to the text, does {a} cause, change, use or act on {b}? Answer yes or no.',
 "linked": 'Text: "{s}"\nDoes the text say how {a} and {b} are connected? Answer yes or no.',
}
S1 = "Board hydrologist Anders Vik said the low flow was \"almost certainly\" made worse by the resort's withdrawals for snow-making."
S2 = "Dry spawning beds mean fewer young trout, he said, and the count of adult fish will follow in two or three years."
S3 = "The resort takes the water for its snow guns from the Gravå, the mountain stream that runs past the lower lifts."
S4 = "The highest readings came from the outlet below the Holmgren works, where nitrogen-rich runoff from the storage yard reaches the sea after heavy rain."
S5 = "Marine biologist Petra Aune said the mussels suffocated when oxygen in the inner bay fell below 2 milligrams per litre during the algal bloom."
S6 = "The data centre, operated by Northgrid, cools its servers with canal water and returns the heated water through an outfall near Ashby Lock."
S7 = "Agency ecologist Tom Fairley said floating pennywort grows much faster in warm water, and that the heated stretch is where the weed first spread this spring."
S8 = "The authority's report says the extra nitrogen fed the bloom of green algae that covered the inner bay from mid-July."
CASES = [
 (S1, "resort", "low flow", 1), (S1, "snow-making", "low flow", 1), (S1, "Anders Vik", "low flow", 0), (S1, "Board hydrologist", "resort", 0),
 (S2, "spawning beds", "young trout", 1), (S2, "adult fish", "young trout", 0), (S2, "spawning beds", "adult fish", 0),
 (S3, "resort", "Gravå", 1), (S3, "snow guns", "lower lifts", 0), (S3, "Gravå", "lower lifts", 0), (S3, "resort", "snow guns", 1),
 (S4, "Holmgren works", "runoff", 1), (S4, "runoff", "sea", 1), (S4, "heavy rain", "storage yard", 0), (S4, "highest readings", "heavy rain", 0),
 (S5, "oxygen", "mussels", 1), (S5, "algal bloom", "oxygen", 1), (S5, "Petra Aune", "mussels", 0), (S5, "inner bay", "Petra Aune", 0),
 (S6, "Northgrid", "data centre", 1), (S6, "data centre", "heated water", 1), (S6, "servers", "Ashby Lock", 0), (S6, "Northgrid", "Ashby Lock", 0),
 (S7, "warm water", "pennywort", 1), (S7, "Tom Fairley", "pennywort", 0), (S7, "spring", "warm water", 0),
 (S8, "nitrogen", "algae", 1), (S8, "report", "inner bay", 0), (S8, "nitrogen", "inner bay", 0),
]
async def main():
    m = infer_model(sys.argv[1] if len(sys.argv) > 1 else "local")
    for name, w in W.items():
        pos, neg = [], []
        for s, a, b, g in CASES:
            ms = []
            for x, y in ((a, b), (b, a)):
                r = await m.request(ModelRequest(messages=(SystemMessage(content="Answer the question about the text with one word."), UserMessage(content=w.format(s=s, a=x, b=y))), settings=odds_settings()))
                ms.append(yes_margin(r.top_logprobs or {}))
            (pos if g else neg).append(max(ms))
            print(f"{name:8} {g} {ms[0]:+6.2f} {ms[1]:+6.2f}  {a} / {b}", flush=True)
        pos.sort(); neg.sort()
        # AUC
        auc = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
        print(f"== {name}: AUC {auc:.2f}  pos>0 {sum(p>0 for p in pos)}/{len(pos)}  neg>0 {sum(n>0 for n in neg)}/{len(neg)}", flush=True)
asyncio.run(main())
