"""Graph sets written by hand, outside the generator: dated documents with a gold graph a reader drew.

A suite is a folder of worlds; each world is a folder of Markdown documents (front matter and
all, exactly as a user would hand them over) and a ``gold.json``::

    {"question": "...", "subject": "<id>", "object": "<id>",
     "entities": [{"id": "plant", "names": ["Holmgren fertiliser plant", "Holmgren works", ...]}, ...],
     "edges": [{"source": "plant", "target": "runoff", "type": "causes", "hedged": false}, ...],
     "path": ["plant", "runoff", ...], "unmeasured": "<id>", "publishers": ["Bay Herald", ...]}

Unlike the generated worlds, the names here are ordinary words, so a predicted node is matched to
the gold entity one of whose names it contains as whole words (the longest such name wins); a
node that names none is off the reader's graph (it lowers precision, it is not an error of fact).

``score_world`` measures what a reader would check: how many of the reader's entities were drawn,
how many drawn nodes are on the reader's graph, publisher or front-matter nodes (there must be
none), edges found (undirected, and in the reader's direction), whether the system links the
subject to the object by a chain of grounded edges, whether its gaps or placeholders name the
factor no source measured, and whether every quote is a sentence of a document's body (front
matter is no evidence).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot.errors import MootError
from moot.eval.graph import GraphPrediction
from moot.text.frontmatter import read_front_matter


@dataclass
class SuiteWorld:
    name: str
    folder: Path
    question: str
    documents: dict[str, str]
    paths: list[str]
    gold: dict[str, Any]
    names: dict[str, list[str]] = field(default_factory=dict)


def load_suite(folder: Path) -> list[SuiteWorld]:
    """Every world under ``folder`` (a folder holding ``gold.json``), in name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MootError(f"no suite folder at {folder}", fix="pass a folder whose sub-folders each hold gold.json and documents")
    worlds = []
    for gold_file in sorted(folder.glob("*/gold.json")):
        try:
            gold = json.loads(gold_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MootError(f"cannot read {gold_file}: {exc}", fix="write gold.json as the format in moot.eval.graph_suite says")
        missing = [k for k in ("question", "subject", "object", "entities", "edges") if k not in gold]
        if missing:
            raise MootError(f"{gold_file} lacks {', '.join(missing)}", fix="add the missing keys to gold.json")
        docs = sorted(p for p in gold_file.parent.iterdir() if p.suffix in (".md", ".txt") and p.is_file())
        if not docs:
            raise MootError(f"{gold_file.parent} holds no .md or .txt document", fix="put the world's documents beside gold.json")
        worlds.append(SuiteWorld(
            name=gold_file.parent.name, folder=gold_file.parent, question=gold["question"],
            documents={p.name: p.read_text(encoding="utf-8") for p in docs}, paths=[str(p) for p in docs], gold=gold,
            names={e["id"]: list(e["names"]) for e in gold["entities"]}))
    if not worlds:
        raise MootError(f"no world under {folder}", fix="each world is a sub-folder with gold.json and its documents")
    return worlds


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\u2018\u2019]", "'", text).lower().replace("-", " ").split())


def _contains(haystack: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(_norm(phrase))}(?!\w)", _norm(haystack)) is not None


def match_entity(world: SuiteWorld, labels: list[str]) -> str | None:
    """The gold entity whose longest name occurs in one of the labels as whole words."""
    best: tuple[int, str] | None = None
    for gid, names in world.names.items():
        for name in names:
            if any(_contains(label, name) for label in labels if label):
                if best is None or len(name) > best[0]:
                    best = (len(name), gid)
    return best[1] if best else None


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _reaches(edges: list[tuple[str, str]], start: set[str], goal: set[str], *, directed: bool) -> bool:
    nxt: dict[str, set[str]] = {}
    for s, t in edges:
        nxt.setdefault(s, set()).add(t)
        if not directed:
            nxt.setdefault(t, set()).add(s)
    seen, todo = set(start), deque(start)
    while todo:
        cur = todo.popleft()
        if cur in goal:
            return True
        for n in nxt.get(cur, ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return False


def score_world(world: SuiteWorld, pred: GraphPrediction, path: list[str] | None = None) -> dict[str, Any]:
    """Every measure for one world; ``path``: the node ids of the system's own answer path, if it gives one."""
    gold = world.gold
    entities = [n for n in pred.nodes if not n.placeholder]
    mapping = {n.id: match_entity(world, [n.label, *n.aliases]) for n in entities}
    found = {g for g in mapping.values() if g}
    publishers = [p for p in gold.get("publishers", [])]
    publisher_nodes = [n.label for n in entities if any(_contains(n.label, p) for p in publishers)]
    gold_pairs = {frozenset((e["source"], e["target"])) for e in gold["edges"]}
    firm = [e for e in pred.edges if not e.provisional]
    gold_directed = {(e["source"], e["target"]) for e in gold["edges"]}
    found_pairs = set()
    found_directed = set()
    for e in pred.edges:
        ends = (mapping.get(e.source), mapping.get(e.target))
        pair = frozenset(ends)
        if None not in pair and len(pair) == 2 and pair in gold_pairs and not e.provisional:
            found_pairs.add(pair)
            if ends in gold_directed:
                found_directed.add(ends)
    subject = {nid for nid, g in mapping.items() if g == gold["subject"]}
    obj = {nid for nid, g in mapping.items() if g == gold["object"]}
    firm_pairs = [(e.source, e.target) for e in firm]
    # the factor no source measured: named by a gap or placeholder, or its node tied to one
    factor = gold.get("unmeasured")
    gap_text = " ".join(pred.gap_texts + [n.label for n in pred.nodes if n.placeholder])
    factor_nodes = {nid for nid, g in mapping.items() if g == factor}
    placeholder_ids = {n.id for n in pred.nodes if n.placeholder}
    tied = any((e.source in factor_nodes and e.target in placeholder_ids) or (e.target in factor_nodes and e.source in placeholder_ids)
               for e in pred.edges) or any(factor_nodes & set(g) for g in pred.gaps)
    gap_named = bool(factor) and (any(_contains(gap_text, name) for name in world.names.get(factor, [])) or tied)
    body = _norm(" ".join(read_front_matter(t).body for t in world.documents.values()))
    quotes = [q for n in entities for q in n.quotes] + [q for e in firm for q in e.quotes]
    grounded = sum(1 for q in quotes if _norm(q).strip(" .\"'") in body)
    row: dict[str, Any] = {
        "world": world.name,
        "entity_recall": _ratio(len(found), len(world.names)),
        "entity_precision": _ratio(sum(1 for g in mapping.values() if g), len(entities)),
        "publisher_nodes": len(publisher_nodes),
        "edge_recall_undirected": _ratio(len(found_pairs), len(gold_pairs)),
        "edge_recall_directed": _ratio(len(found_directed), len(gold_directed)),
        "subject_object_linked": bool(subject and obj and _reaches(firm_pairs, subject, obj, directed=False)),
        "subject_object_directed": bool(subject and obj and _reaches(firm_pairs, subject, obj, directed=True)),
        "unmeasured_named": gap_named,
        "quote_grounding": _ratio(grounded, len(quotes)),
        "nodes": len(pred.nodes), "edges": len(pred.edges),
        "calls": pred.usage.requests, "tokens": pred.usage.total_tokens, "seconds": round(pred.seconds, 2),
        "publisher_labels": publisher_nodes,
        "found": sorted(found),
    }
    if path is not None:
        mapped = [mapping.get(n) for n in path]
        row["answer_path"] = [m or "?" for m in mapped]
        row["answer_path_reaches"] = bool(path) and mapped[0] == gold["subject"] and mapped[-1] == gold["object"]
    return row


def summarise_worlds(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"worlds": len(rows)}
    if not rows:
        return out
    for k in ("entity_recall", "entity_precision", "edge_recall_undirected", "edge_recall_directed", "quote_grounding"):
        values = [r[k] for r in rows if r.get(k) is not None]
        out[k] = round(sum(values) / len(values), 3) if values else None
    for k in ("subject_object_linked", "subject_object_directed", "unmeasured_named", "answer_path_reaches"):
        values = [r[k] for r in rows if k in r]
        if values:
            out[k] = f"{sum(values)}/{len(values)}"
    for k in ("publisher_nodes", "nodes", "edges", "calls", "tokens", "seconds"):
        out[k] = round(sum(r[k] for r in rows), 2)
    return out


__all__ = ["SuiteWorld", "load_suite", "match_entity", "score_world", "summarise_worlds"]
