"""What the graph team's proposals can reach, and whether a model's odds can choose among them,
measured on hand-written graph sets (``moot.eval.graph_suite``): development data only, since
this reads each world's gold graph.

* ``reach`` (no model): over all the sentences of each world, the candidates the salience rule
  offers (``moot.teams.graph.candidates.TextReading.salient``) against every candidate: how many a world
  offers, what share of them name a reader's entity, what share of the reader's entities some
  offered candidate names, how many pairs their sentences propose, and what share of the
  reader's edges some proposed pair can reach;
* ``focus`` (no model): the question's two ends as a run asked plainly finds them, with every
  offered candidate taken as an entity (the default vocabulary; a run also accepts, as an end, a
  candidate the mapper turned down, which this leaves out): by the question's first and last named phrases
  (``moot.teams.graph.plain.question_focus``) and, for a question of two clauses, by each clause's
  first noun phrase with the clause breaking ties (``question_ends``), the first clause's end read
  from what it says happened where an entity shares a word with it (``build.match_end``); how many of the reader's
  subject and object each finds, and in how many worlds both;
* ``relevance --model M``: for every offered candidate, the yes/no odds of two plain questions
  about it ("is it part of the answer to the question?", "does the text say it changed?"), and
  how well each ranks a reader's entities above the rest (AUC);
* ``pairs --model M``: for every ordered pair of offered entities in one sentence that holds a
  reader's entity, the yes-margin of the team's link question ("does A affect B?") and the
  odds that the answer to "what does A affect?" begins with B's first word (the team's
  ``moot.teams.graph.plain.target_odds``), beside B's place in the text; how well each ranks a
  reader's directed edges above the rest (AUC), and, for each A, whether the B it scores best is
  one the reader linked and the team would draw (against the share expected by chance), and how
  many links each way draws with how many of a reader's edges among them. ``--rows FILE`` keeps every
  pair's scores, ``--targets-only`` skips the yes/no questions;
* ``merges --results FILE`` (no model): the labels a finished run joined into one node, from the
  run store, for each world of a ``moot eval graph --out FILE`` run of the suite: how many name the
  same reader's entity as the node, and how many fold one reader's entity into another's node;
* ``aliases --model M``: for every two offered candidates that share a word, one naming a reader's
  entity, the yes/no odds of "are X and Y two names for the same thing?", and how well they tell
  two names of one reader's entity from names of different things (AUC).

    python scripts/probe_graph_choices.py reach examples/graph-blind-2026-12-06-c
    python scripts/probe_graph_choices.py focus examples/graph-blind-2026-12-06-c
    python scripts/probe_graph_choices.py pairs --model local examples/graph-blind-2026-12-06-c
    python scripts/probe_graph_choices.py merges --results results.json examples/graph-blind-2026-12-06-f

The last line of the output is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from moot.eval.graph_suite import SuiteWorld, load_suite, match_entity
from moot.models.base import UNLISTED_LOGPROB, ModelRequest, ModelSettings, SystemMessage, UserMessage, yes_margin
from moot.models.registry import infer_model
from moot.teams.graph.candidates import Candidate, Mention, TextReading, candidates_of, pairs_in, resolve
from moot.teams.graph.evidence import Sentence, SourceIndex
from moot.teams.graph.build import Entities, match_end, match_phrase
from moot.teams.graph.plain import TARGET_ODDS, question_ends, question_focus, target_odds
from moot.teams.graph.vocabulary import DEFAULT
from moot.teams.graph.scaffold import label_tokens
from moot.text import predicate
from moot.text.words import refers_back

SYSTEM = "Answer the question about the text with one word."
RELEVANCE = {
    "answer": 'Question: "{q}"\nText: "{t}"\nIs "{x}" part of the answer to the question? Answer yes or no.',
    "change": 'Text: "{t}"\nDoes the text say that "{x}" changed (rose, fell, started, stopped or moved)? Answer yes or no.',
}


class World:
    """One world read the way a run reads it: sentences, candidates, mentions, the salience counts."""

    def __init__(self, world: SuiteWorld) -> None:
        self.world = world
        index = SourceIndex()
        for name, text in world.documents.items():
            index.add_text(name, text.splitlines())
        provenance = [n for d in index.documents.values() for n in d.provenance_names()]
        titles = [d.title for d in index.documents.values() if d.title]
        self.sentences: list[Sentence] = index.all(index.count())
        self.text = TextReading.of(self.sentences, provenance, titles)
        self.mentions = self.text.mentions
        self.candidates = candidates_of([s.id for s in self.sentences], self.mentions)
        self.gold = {k: match_entity(world, [c.label]) for k, c in self.candidates.items()}
        self.edges = {(e["source"], e["target"]) for e in world.gold["edges"]}

    def offered(self, min_mentions: int) -> dict[str, Candidate]:
        words = label_tokens(self.world.question)
        return {k: c for k, c in self.candidates.items() if self.text.salient(c, min_mentions, words)}

    def entities_in(self, sentence: Sentence, chosen: dict[str, str]) -> list[tuple[str, Mention]]:
        return resolve(self.mentions.get(sentence.id, []), chosen)


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    return round(sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg)), 3)


def reach(worlds: list[World]) -> dict[str, Any]:
    out = {}
    for name, min_mentions, across in (("every candidate", 1, True), ("salient (the team's rule)", 2, True),
                                       ("salient, across only where it points back", 2, False)):
        offered = shown = gold_names = gold_total = pairs = asked = edges_reached = edges_total = 0
        for w in worlds:
            chosen = {k: k for k in w.offered(min_mentions)}
            offered += len(chosen)
            shown += sum(1 for k in chosen if w.gold[k])
            gold_names += len({w.gold[k] for k in chosen if w.gold[k]})
            gold_total += len(w.world.names)
            found = []
            for i, s in enumerate(w.sentences):
                before = w.sentences[i - 1] if i else None
                if before is not None and ((before.source, before.block) != (s.source, s.block)
                                           or not (across or refers_back(s.text))):
                    before = None
                found += pairs_in(s, w.entities_in(s, chosen), before, w.entities_in(before, chosen) if before else [])
            unique = {p.key: p for p in found}.values()
            pairs += len(unique)
            texts: dict[tuple[int, ...], set[str]] = defaultdict(set)
            for p in unique:
                texts[p.shown[0]].update((p.a, p.b))
            asked += sum(len(ends) for ends in texts.values())
            undirected = {frozenset(e) for e in w.edges}
            edges_reached += len({frozenset((w.gold[p.a], w.gold[p.b])) for p in unique} & undirected)
            edges_total += len(undirected)
        n = len(worlds)
        out[name] = {"candidates_a_world": round(offered / n, 1), "share_naming_a_reader_entity": round(shown / max(1, offered), 2),
                     "reader_entities_named": round(gold_names / gold_total, 2), "pairs_a_world": round(pairs / n, 1),
                     "target_questions_a_world": round(asked / n, 1),
                     "reader_edges_reachable": round(edges_reached / edges_total, 2)}
        print(f"{name:28s} {out[name]}")
    return out


TOP = TARGET_ODDS
"""How many of the first token's likeliest alternatives a question reads (``--top``)."""


async def ask(model: Any, task: str) -> dict[str, float]:
    reply = await model.request(ModelRequest(messages=(SystemMessage(content=SYSTEM), UserMessage(content=task)),
                                             settings=ModelSettings(max_tokens=1, temperature=0.0, top_logprobs=TOP)))
    return reply.top_logprobs or {}


async def relevance(worlds: list[World], model: Any) -> dict[str, Any]:
    rows = []
    for w in worlds:
        by_id = {s.id: s for s in w.sentences}
        offered = list(w.offered(2).values())
        for form, template in RELEVANCE.items():
            odds = await asyncio.gather(*(ask(model, template.format(
                q=w.world.question, t=" ".join(by_id[s].text for s in c.sentences[:3])[:600], x=c.label)) for c in offered))
            rows += [{"world": w.world.name, "form": form, "gold": bool(w.gold[c.key]), "margin": yes_margin(o)}
                     for c, o in zip(offered, odds)]
        print(w.world.name, len(offered), file=sys.stderr, flush=True)
    out = {}
    for form in RELEVANCE:
        mine = [r for r in rows if r["form"] == form]
        out[form] = {"auc": auc([r["margin"] for r in mine if r["gold"]], [r["margin"] for r in mine if not r["gold"]]),
                     "yes_rate": round(sum(r["margin"] > 0 for r in mine) / max(1, len(mine)), 2), "candidates": len(mine)}
        print(form, out[form])
    return out


async def pairs(worlds: list[World], model: Any, rows_out: Path | None = None, targets_only: bool = False) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for w in worlds:
        chosen = {k: k for k in w.offered(2)}
        readers = {e for edge in w.edges for e in edge}
        texts = []
        for s in w.sentences:
            here = list(dict.fromkeys(k for k, _ in w.entities_in(s, chosen)))
            if len(here) >= 2 and any(w.gold[k] in readers for k in here):
                texts.append((s.text[:600], here))
        for text, here in texts:
            label = {k: w.candidates[k].label for k in here}
            targets = await asyncio.gather(*(ask(model, f'Text: "{text}"\nAccording to the text, what does {label[a]} affect? '
                                                        "Answer with words from the text.") for a in here))
            ordered = [(a, b) for a in here for b in here if a != b]
            links = [{} for _ in ordered] if targets_only else await asyncio.gather(*(
                ask(model, f'Text: "{text}"\nAccording to the text, does {label[a]} affect {label[b]}? Answer yes or no.')
                for a, b in ordered))
            for (a, b), link in zip(ordered, links):
                rows.append({"world": w.world.name, "text": text[:60], "a": a, "b": b, "gold": (w.gold[a], w.gold[b]) in w.edges,
                             "a_is_reader": w.gold[a] in readers, "b_is_reader": w.gold[b] in readers,
                             "yes": yes_margin(link), "target": target_odds(targets[here.index(a)], label[b].split()[0]),
                             "order": -here.index(b)})
        print(w.world.name, len(texts), file=sys.stderr, flush=True)
    pos, neg = [r for r in rows if r["gold"]], [r for r in rows if not r["gold"]]
    out: dict[str, Any] = {"pairs": len(rows), "reader_edges": len(pos)}
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["world"], r["text"], r["a"])].append(r)
    if rows_out is not None:
        rows_out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # what each way draws, as the team would: the yes-margin only when it leans yes, the target only
    # when its word is among the listed first tokens, the text's order always
    draws = {"yes": lambda best: best["yes"] > 0, "target": lambda best: best["target"] > UNLISTED_LOGPROB,
             "order": lambda best: True}
    for key in ("target", "order") if targets_only else ("yes", "target", "order"):
        hit = tried = drawn = drawn_gold = 0
        chance = 0.0
        for group in groups.values():
            best = max(group, key=lambda r: r[key])
            if draws[key](best):
                drawn += 1
                drawn_gold += best["gold"]
            if any(r["gold"] for r in group):
                tried += 1
                hit += bool(best["gold"] and draws[key](best))
                chance += sum(r["gold"] for r in group) / len(group)
        out[key] = {"auc": auc([r[key] for r in pos], [r[key] for r in neg]), "best_is_a_reader_edge": hit,
                    "sources_tried": tried, "expected_by_chance": round(chance, 1), "links_drawn": drawn,
                    "reader_edges_drawn": drawn_gold}
        print(key, out[key])
    return out


def focus(worlds: list[World]) -> dict[str, Any]:
    out = {"phrases": [0, 0], "clauses": [0, 0]}
    for w in worlds:
        entities = Entities(DEFAULT)
        for cand in w.offered(2).values():
            entities.accept(cand, "organisation", {s.id: s for s in w.sentences}, 1)
        wanted = {w.world.gold["subject"], w.world.gold["object"]}
        named = {k: c.label for k, c in w.candidates.items()}
        phrases = question_focus(w.world.question, DEFAULT, named) or ("", "")
        ends = question_ends(w.world.question, DEFAULT, named)
        ways = {"phrases": (phrases, ("", "")),
                "clauses": ((ends[0][0], ends[1][0]), (ends[0][1], ends[1][1])) if ends else (phrases, ("", ""))}
        line = [w.world.name]
        for way, (found, clauses) in ways.items():
            events = (predicate(clauses[0]), "") if way == "clauses" and clauses[0] else ("", "")
            keys = [match_end(entities, p, c, e) if p else None for p, c, e in zip(found, clauses, events)]
            got = {match_entity(w.world, [entities.info[k].label]) for k in keys if k} & wanted
            out[way][0] += len(got)
            out[way][1] += got == wanted
            line.append(f"{way}: {[entities.info[k].label if k else None for k in keys]} finds {sorted(got)}")
        print(*line, sep="  |  ")
    result = {way: {"ends_found": n, "ends": 2 * len(worlds), "worlds_with_both": both} for way, (n, both) in out.items()}
    print(result)
    return result


ALIAS = 'Text: "{t}"\nIn this text, are "{x}" and "{y}" two names for the same thing? Answer yes or no.'


async def aliases(worlds: list[World], model: Any) -> dict[str, Any]:
    """Every two offered candidates that share a word: does the yes/no odds of "the same thing?"
    tell two names of one reader's entity from names of two different things?"""
    rows = []
    for w in worlds:
        by_id = {s.id: s for s in w.sentences}
        offered = list(w.offered(2).values())
        todo = []
        for i, x in enumerate(offered):
            for y in offered[i + 1:]:
                if not (label_tokens(x.label) & label_tokens(y.label)) or not (w.gold[x.key] or w.gold[y.key]):
                    continue
                both = [s for s in x.sentences if s in y.sentences]
                ids = (both or [*x.sentences[:1], *y.sentences[:1]])[:2]
                todo.append((x, y, " ".join(by_id[s].text for s in ids)[:600]))
        odds = await asyncio.gather(*(ask(model, ALIAS.format(t=t, x=x.label, y=y.label)) for x, y, t in todo))
        rows += [{"world": w.world.name, "x": x.label, "y": y.label, "same": bool(w.gold[x.key]) and w.gold[x.key] == w.gold[y.key],
                  "margin": yes_margin(o)} for (x, y, _), o in zip(todo, odds)]
        print(w.world.name, len(todo), file=sys.stderr, flush=True)
    pos, neg = [r["margin"] for r in rows if r["same"]], [r["margin"] for r in rows if not r["same"]]
    out = {"pairs": len(rows), "same": len(pos), "auc": auc(pos, neg),
           "yes_rate_same": round(sum(m > 0 for m in pos) / max(1, len(pos)), 2),
           "yes_rate_other": round(sum(m > 0 for m in neg) / max(1, len(neg)), 2)}
    for r in rows:
        print(("SAME " if r["same"] else "other"), f"{r['margin']:+.2f}", r["x"], "|", r["y"], file=sys.stderr)
    print(out)
    return out


def merges(worlds: list[World], results: Path) -> dict[str, Any]:
    from moot.runtime.store import RunStore

    by_name = {w.world.name: w.world for w in worlds}
    joined = same = folded = 0
    rows = json.loads(results.read_text(encoding="utf-8"))["worlds"]["team"]
    with RunStore() as store:
        for row in rows:
            world, stored = by_name.get(row["world"]), store.output(row["run_id"])
            if world is None or stored is None:
                continue
            for node in stored[1]["nodes"]:
                if node.get("placeholder"):
                    continue
                mine = match_entity(world, [node["label"]])
                for alias in node.get("aliases", []):
                    theirs = match_entity(world, [alias])
                    joined += 1
                    same += bool(theirs) and theirs == mine
                    if theirs and theirs != mine:
                        folded += 1
                        print(f"{row['world']}: {alias!r} joined to {node['label']!r}")
    result = {"labels_joined": joined, "same_reader_entity": same, "a_reader_entity_folded_into_another_node": folded}
    print(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("reach", "focus", "relevance", "pairs", "aliases", "merges"))
    parser.add_argument("--results", type=Path, help="merges: the --out file of a `moot eval graph` run of the suite")
    parser.add_argument("suites", nargs="+", type=Path)
    parser.add_argument("--model", default="local")
    parser.add_argument("--targets-only", action="store_true", help="pairs: ask only what each entity affects")
    parser.add_argument("--top", type=int, default=TARGET_ODDS, help="how many likeliest first tokens each question reads")
    parser.add_argument("--rows", type=Path, help="pairs: write each pair's scores here, one JSON object a line")
    args = parser.parse_args()
    globals()["TOP"] = args.top
    worlds = [World(w) for folder in args.suites for w in load_suite(folder)]
    if args.what == "merges":
        if args.results is None:
            parser.error("merges needs --results FILE (the --out file of a `moot eval graph` run)")
        result = merges(worlds, args.results)
    elif args.what in ("reach", "focus"):
        result = reach(worlds) if args.what == "reach" else focus(worlds)
    else:
        model = infer_model(args.model)
        if args.what == "relevance":
            result = asyncio.run(relevance(worlds, model))
        elif args.what == "aliases":
            result = asyncio.run(aliases(worlds, model))
        else:
            result = asyncio.run(pairs(worlds, model, args.rows, args.targets_only))
    print(json.dumps({"what": args.what, "model": None if args.what in ("reach", "focus", "merges") else args.model,
                      "suites": [str(s) for s in args.suites], "worlds": len(worlds), "result": result}))


if __name__ == "__main__":
    main()
