"""BUILD: the model's choices turned into graph changes, with Python doing every check.

- :class:`Entities` keeps what the mapper decided about each candidate phrase (an entity of
  which type, or no entity and why), which labels name one entity (aliases), and the sentences
  that name each. An entity becomes a node of the scaffold once something connects it: an edge,
  a gap, or the question itself naming it. A phrase the model accepted that nothing links stays
  a *mention* (listed in the result, not drawn): a reader draws what the text relates.
- A pair's choice is one of the sentences Python wrote from the vocabulary ("A causes B",
  "B causes A", …) or the pair's own "A and B: no link"; the edge's quote is the pair's own sentence (or two), so it is
  grounded by construction. A hedge cue in the pair's clause makes the edge *hedged* (strength
  ≤ 0.5 by rule).
- A sentence that says something is not known (:func:`moot.text.says_unknown`) becomes a gap
  between the entities it names (or between the one it names and the question's object).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from moot.teams.graph.candidates import Candidate, Pair
from moot.teams.graph.evidence import Document, Sentence
from moot.teams.graph.scaffold import EntityNode, Evidence, Gap, Measure, Scaffold, label_tokens, token_key
from moot.teams.graph.vocabulary import Vocabulary, mapper_options, read_item_answer
from moot.text.words import stem

MAX_EVIDENCE = 3
"""Sentences kept as an entity's evidence (the first that name it)."""


def names_one_thing(label: str, group: str, other: str, other_group: str) -> bool:
    """Whether two labels name one thing by their words alone: the same mention group (a name's own
    words, else the head noun), and every content word of the shorter, two words or more, in the
    longer ("Ostby mill" and "the paper mill at Ostby"; "flood notice" and "flood warning notice"). A
    lone noun ("ferry") is not enough, since it would join every ferry the text names; nor are two heads
    that differ ("ice cover" and "ice fencing", "Skarn Quay" and "Skarn Quay repair works")."""
    if not group or group != other_group:
        return False
    a, b = label_tokens(label), label_tokens(other)
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 2 and short <= long_


def head_of(label: str) -> str:
    """The stem of a label's head noun, read by the tagger: the last word of the noun phrase the
    label opens with ("closure of the Quill ferry": closure; "Bobbin spool works": works)."""
    from moot.text.phrases import noun_phrases

    opening = [p for p in noun_phrases(label) if p.start == 0]
    head = max(opening, key=lambda p: p.end).head if opening else (label.split() or [""])[-1]
    return stem(head)


def _complement(label: str) -> frozenset[str]:
    """The content words after a label's first "of" ("closure of the Quill ferry": quill, ferry);
    empty when it has none, or "of" opens or ends it."""
    words = label.split()
    at = next((i for i, w in enumerate(words) if w.lower() == "of"), 0)
    return label_tokens(" ".join(words[at + 1:])) if 0 < at < len(words) - 1 else frozenset()


def joined_by_rule(entities: Entities) -> list[tuple[str, str]]:
    """Entities that name another one, by the structure of their noun phrases alone, as (key, the key
    of the entity it names), earlier entities first:

    - a lone common noun names the one other entity whose head noun is the same ("the ferry" after
      "the Quill ferry"), as a reader resolves it; with two or more such entities ("works" beside
      "Bobbin spool works" and "Spindle spool works") it is left apart;
    - "N of X" names X where X is an entity of the same content words ("closure of the Quill ferry"
      and "Quill ferry"; "western end of the Spindle yard" and "Spindle yard"): an event, a part or
      a share of a thing is drawn as the thing, with its own wording kept as an alias, so the links
      the sources state about either meet at one node.

    Nothing here reads a word's meaning, only the phrase's shape; the model is not asked, since its
    odds on "do these name one thing?" were at chance (docs/graph-reasoning.md)."""
    keys = [k for k in entities.order if k in entities.info]
    info = entities.info
    tokens = {k: label_tokens(info[k].label) for k in keys}
    heads = {k: head_of(info[k].label) for k in keys if len(tokens[k]) >= 2}  # each label tagged once
    out: list[tuple[str, str]] = []
    taken: set[str] = set()
    for key in keys:
        complement = _complement(info[key].label)
        if complement:
            same = [k for k in keys if k != key and tokens[k] == complement]
            if len(same) == 1:
                out.append((key, same[0]))
                taken.add(key)
    for key in keys:
        if key in taken or len(tokens[key]) != 1 or any(w[:1].isupper() for w in info[key].label.split()):
            continue
        head = head_of(info[key].label)
        longer = [k for k, other in heads.items() if other == head]
        if len(longer) == 1:
            out.append((key, longer[0]))
    return out


def join_by_rule(entities: Entities, scaffold: Scaffold, iteration: int) -> list[tuple[str, str]]:
    """Join the entities :func:`joined_by_rule` finds; where both are drawn already their nodes merge
    (edges, evidence and the question's ends move to the one kept). Returns (label, the label of the
    entity it was joined to) for each."""
    joined: list[tuple[str, str]] = []
    for key, into in joined_by_rule(entities):
        target = entities.canonical.get(into, into)
        if key not in entities.info or target == key or target not in entities.info:
            continue
        label, dropped = entities.info[key].label, entities.info[key].node
        ends = {scaffold.subject, scaffold.object}
        if dropped and entities.info[target].node and {dropped, entities.info[target].node} == ends:
            continue  # the question's two ends stay two: it asks what links them
        entities.alias(key, target, label)
        joined.append((label, entities.info[target].label))
        if not dropped or dropped not in scaffold.nodes:
            continue
        kept = entities.draw(scaffold, target, iteration).id
        if kept != dropped:
            scaffold.merge(kept, dropped)
            scaffold.subject = kept if scaffold.subject == dropped else scaffold.subject
            scaffold.object = kept if scaffold.object == dropped else scaffold.object
    return joined


@dataclass
class EntityInfo:
    """One entity the mapper accepted, before or after it is drawn."""

    key: str
    label: str
    kind: str
    aliases: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)
    node: str = ""
    """Its node id once drawn."""
    iteration: int = 0
    group: str = ""
    """Its mention group (:func:`moot.teams.graph.candidates.mention_group`): a name's own words, else its head noun's stem."""


class Entities:
    """The mapper's decisions over every candidate phrase of the run."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.decided: dict[str, str] = {}
        """Candidate key → the type chosen, or the rejection."""
        self.canonical: dict[str, str] = {}
        """Candidate key → the key of the entity it names (itself, or an earlier label)."""
        self.info: dict[str, EntityInfo] = {}
        self.order: list[str] = []

    def undecided(self, candidates: dict[str, Candidate]) -> list[Candidate]:
        return [c for k, c in candidates.items() if k not in self.decided]

    def accept(self, cand: Candidate, kind: str, sentences: dict[int, Sentence], iteration: int, *,
               force: bool = False) -> bool:
        """Record the model's answer for one candidate; True when it is an entity. ``force``: the
        question itself names it, so it is one whatever the answer (its type left empty)."""
        self.decided[cand.key] = kind
        if kind not in self.vocabulary.kinds and not force:
            return False
        kind = kind if kind in self.vocabulary.kinds else ""
        same = next((k for k in self.order if token_key(self.info[k].label) == token_key(cand.label)
                     or names_one_thing(self.info[k].label, self.info[k].group, cand.label, cand.group)), None)
        if same is not None:  # "mill at Dravik" and "Dravik mill": one entity
            self.alias(cand.key, same, cand.label)
        else:
            self.info[cand.key] = EntityInfo(cand.key, cand.label, kind, iteration=iteration, group=cand.group)
            self.canonical[cand.key] = cand.key
            self.order.append(cand.key)
        self.cite(cand.key, [sentences[s] for s in cand.sentences if s in sentences])
        return True

    def alias(self, key: str, into: str, label: str) -> None:
        target = self.canonical.get(into, into)
        self.canonical[key] = target
        info = self.info[target]
        if key in self.info and key != target:
            old = self.info.pop(key)
            self.order.remove(key)
            info.evidence += [e for e in old.evidence if e not in info.evidence][: max(0, MAX_EVIDENCE - len(info.evidence))]
            for k, v in self.canonical.items():
                if v == key:
                    self.canonical[k] = target
        if label != info.label and label not in info.aliases:
            info.aliases.append(label)

    def cite(self, key: str, sentences: list[Sentence]) -> None:
        info = self.info.get(self.canonical.get(key, ""))
        if info is None:
            return
        for s in sentences:
            ev = Evidence(source=s.source, quote=s.text, chunk=s.id)
            if len(info.evidence) < MAX_EVIDENCE and all(e.chunk != s.id for e in info.evidence):
                info.evidence.append(ev)

    def chosen(self) -> dict[str, str]:
        """Candidate key → canonical entity key, for every candidate that names an entity."""
        return {k: v for k, v in self.canonical.items() if v in self.info}

    def draw(self, scaffold: Scaffold, key: str, iteration: int, why: str = "") -> EntityNode:
        """The entity's node, added to the scaffold if it is not there yet (aliases, evidence, measures kept)."""
        info = self.info[self.canonical.get(key, key)]
        node, _ = scaffold.add_entity(info.label, why_relevant=why, evidence=info.evidence, iteration=iteration or info.iteration)
        node.entity_type = info.kind
        for alias in info.aliases:
            if alias not in node.aliases and alias != node.label:
                node.aliases.append(alias)
        for m in info.measures:
            if all(x.text != m.text or x.quote != m.quote for x in node.measures):
                node.measures.append(m)
        scaffold._index_node(node)
        info.node = node.id
        return node

    def mentions(self) -> list[EntityInfo]:
        """Entities the mapper accepted that are not drawn."""
        return [self.info[k] for k in self.order if not self.info[k].node]


# --------------------------------------------------------------------------- entity choices


def choices_task(question: str, batch: list[Candidate], sentences: dict[int, Sentence]) -> str:
    """The mapper's first prompt: the sentences once, in the order of the text (a sentence that
    points back, "They have a child …", follows the one it points to), then the numbered
    candidates with their sentence numbers."""
    used = sorted(dict.fromkeys(s for c in batch for s in c.sentences[:2] if s in sentences),
                  key=lambda sid: (sentences[sid].source, sentences[sid].position))
    number = {sid: i for i, sid in enumerate(used, 1)}
    lines = [f"Question: {question}", "", "Sentences:"]
    lines += [f"s{number[sid]}. {sentences[sid].text[:300]}" for sid in used]
    lines += ["", "Candidates:"]
    lines += [f"c{i}. \"{c.label}\" (in " + ", ".join(f"s{number[s]}" for s in c.sentences[:2] if s in number) + ")"
              for i, c in enumerate(batch, 1)]
    return "\n".join(lines)


def apply_choices(entities: Entities, batch: list[Candidate], output: Any, sentences: dict[int, Sentence],
                  iteration: int) -> list[str]:
    """Record one batch's answers; returns the keys accepted as entities."""
    accepted = []
    answers = mapper_options(entities.vocabulary)
    for i, cand in enumerate(batch, 1):
        kind = read_item_answer(getattr(output, f"c{i}", None), cand.label, answers)
        if kind is not None and entities.accept(cand, kind, sentences, iteration):
            accepted.append(cand.key)
    return accepted


# --------------------------------------------------------------------------- aliases


def _name_words(label: str) -> set[str]:
    return {w for w in label.split() if w[:1].isupper()}


def alias_proposals(entities: Entities, new_keys: list[str], limit: int = 3) -> list[tuple[str, list[str]]]:
    """For each new entity, earlier entities its label may name too: one label's words hold the
    other's, or the two share a capitalised name word ("Osmo stream" / "Osmo river")."""
    out = []
    for key in new_keys:
        info = entities.info.get(key)
        if info is None:
            continue
        words, names = label_tokens(info.label), _name_words(info.label)
        known = []
        for other in entities.order:
            if other == key:
                break  # only earlier entities: the first label seen is the one kept
            o = entities.info[other]
            ow = label_tokens(o.label)
            if (words and ow and (words <= ow or ow <= words)) or (names & _name_words(o.label)):
                known.append(o.label)
        if known:
            out.append((key, known[:limit]))
    return out


def aliases_task(entities: Entities, proposals: list[tuple[str, list[str]]]) -> str:
    lines = ["New labels:"]
    for i, (key, known) in enumerate(proposals, 1):
        lines.append(f"a{i}. \"{entities.info[key].label}\" — known: " + ", ".join(f"\"{k}\"" for k in known))
    return "\n".join(lines)


def apply_aliases(entities: Entities, proposals: list[tuple[str, list[str]]], output: Any) -> list[tuple[str, str]]:
    """Fold each new label the model matched into the known entity; returns (new label, known label)."""
    by_label = {entities.info[k].label: k for k in entities.order}
    merged = []
    for i, (key, known) in enumerate(proposals, 1):
        answer = getattr(output, f"a{i}", None)
        if answer in known and answer in by_label and key in entities.info and by_label[answer] != key:
            label = entities.info[key].label
            entities.alias(key, by_label[answer], label)
            merged.append((label, answer))
    return merged


# --------------------------------------------------------------------------- links


def pair_options(entities: Entities, pair: Pair) -> dict[str, tuple[str, str, str] | None]:
    a, b = entities.info[pair.a].label, entities.info[pair.b].label
    return entities.vocabulary.options(a, b)


def links_task(question: str, entities: Entities, pairs: list[Pair]) -> str:
    lines = [f"Question: {question}", ""]
    for i, pair in enumerate(pairs, 1):
        lines.append(f"p{i}. Text: \"{pair.text[:400]}\"")
        lines.append(f"    Pair: \"{entities.info[pair.a].label}\" and \"{entities.info[pair.b].label}\"")
    return "\n".join(lines)


@dataclass
class LinkReport:
    edges: list[str] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    none: int = 0


def _quote(pair: Pair, sentences: dict[int, Sentence]) -> Evidence:
    first = sentences[pair.sentences[0]]
    return Evidence(source=first.source, quote=pair.text, chunk=first.id)


def apply_links(scaffold: Scaffold, entities: Entities, pairs: list[Pair], options: list[dict[str, Any]], output: Any,
                sentences: dict[int, Sentence], iteration: int) -> LinkReport:
    """Edges for the pairs whose answer is a relation (quote: the pair's text; hedged by its cues)."""
    report = LinkReport()
    for i, (pair, opts) in enumerate(zip(pairs, options), 1):
        answer = getattr(output, f"p{i}", None)
        picked = opts.get(answer) if answer is not None else None
        if picked is None:
            report.none += 1
            continue
        if (edge_id := link_pair(scaffold, entities, pair, picked, sentences, iteration)) is not None:
            report.edges.append(edge_id)
    return report


def link_pair(scaffold: Scaffold, entities: Entities, pair: Pair, picked: tuple[str, str, str],
              sentences: dict[int, Sentence], iteration: int) -> str | None:
    """The edge ``(relation, source label, target label)`` for a pair, quoted by the pair's text;
    its id when it is new."""
    relation, source_label, target_label = picked
    by_label = {entities.info[k].label: k for k in entities.order}
    source, target = by_label.get(source_label), by_label.get(target_label)
    if source is None or target is None or source == target:
        return None
    a = entities.draw(scaffold, source, iteration)
    b = entities.draw(scaffold, target, iteration)
    edge, new = scaffold.add_edge(a.id, b.id, relation, evidence=[_quote(pair, sentences)], provisional=False,
                                  iteration=iteration, hedged=pair.hedged)
    return edge.id if new else None


def unknown_gaps(scaffold: Scaffold, entities: Entities, sentence: Sentence, named: list[str], object_key: str | None,
                 iteration: int) -> list[Gap]:
    """A sentence saying something is not known: a gap between the first and last entities it
    names, or between the one it names and the question's object."""
    keys = list(dict.fromkeys(entities.canonical.get(k, k) for k in named))
    if len(keys) == 1 and object_key and object_key != keys[0]:
        keys.append(object_key)
    if len(keys) < 2:
        return []
    ends = [keys[0], keys[-1]]
    nodes = [entities.draw(scaffold, k, iteration).id for k in ends]
    gap, new = scaffold.add_gap(sentence.text, nodes, domain=scaffold.label_of(nodes[0]), iteration=iteration)
    return [gap] if new else []


def match_phrase(entities: Entities, phrase: str, context: str = "") -> str | None:
    """The entity a phrase of the question names: same key, else the most shared word stems, ties
    broken by the most stems shared with ``context`` (the clause the phrase stands in), then by the
    entity seen first. None when it shares no word with the phrase."""
    from moot.teams.graph.scaffold import label_key

    key = entities.canonical.get(label_key(phrase))
    if key in entities.info:
        return key
    wanted = {stem(w) for w in label_tokens(phrase)}
    around = {stem(w) for w in label_tokens(context)}
    best, score = None, (0, 0)
    for k in entities.order:
        info = entities.info[k]
        have = set().union(*({stem(w) for w in label_tokens(x)} for x in (info.label, *info.aliases)))
        shared = (len(wanted & have), len(around & have))
        if shared[0] and shared > score:
            best, score = k, shared
    return best


def match_end(entities: Entities, phrase: str, clause: str = "", event: str = "") -> str | None:
    """The entity one end of the question names: the one that shares most with ``event`` (what the
    clause says happened, :func:`moot.text.predicate`: "cancel the net sale" names "the cancellation of
    the net sale", not the harbour board that does it), else the one ``phrase`` names
    (:func:`match_phrase`); ties broken by the clause."""
    return (match_phrase(entities, event, clause) if event else None) or match_phrase(entities, phrase, clause)


def documents_json(documents: dict[str, Document]) -> list[dict[str, Any]]:
    return [{"name": d.name, "title": d.title, "publisher": d.publisher, "author": d.author, "published": d.published,
             "sentences": d.sentences} for d in documents.values()]


__all__ = ["Entities", "EntityInfo", "LinkReport", "head_of", "join_by_rule", "joined_by_rule", "match_end", "names_one_thing", "alias_proposals", "aliases_task", "apply_aliases", "apply_choices",
           "apply_links", "choices_task", "documents_json", "link_pair", "links_task", "match_phrase", "pair_options",
           "unknown_gaps"]
