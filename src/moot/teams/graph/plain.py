"""Asking plainly: a choice read from the model's odds of its one-word answers.

Listed choices fail on the embedded models in a way no prompt fixed: a batch of items gets the
first item's answer copied down it, and one item asked alone gets the last option listed
(docs/eval.md). Asked a plain question with a one-word answer ("Is Noah a child of Christopher?
Answer yes or no."), the model's first-token log-probabilities
(:attr:`moot.models.ModelSettings.top_logprobs`) show how far it leans to each answer, and
Python compares them: the type is the likeliest of the vocabulary's types, and a pair's relation
is the one whose question the model answers yes to most clearly, or none when it leans to no on
every one.

Only a vocabulary that writes its choices as questions asks plainly
(:attr:`~moot.teams.graph.vocabulary.Vocabulary.asks_plainly`), and only with a model that gives
its odds (the embedded model does; a provider that gives none is asked the listed way). Each
question is one model call of one generated token.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from moot.models import UNLISTED_LOGPROB, yes_margin
from moot.runtime import Run
from moot.teams.graph import agents as ag
from moot.teams.graph.build import Entities, link_pair
from moot.teams.graph.candidates import Candidate, Pair, mentions_in
from moot.teams.graph.evidence import Sentence
from moot.teams.graph.scaffold import Scaffold, label_key
from moot.teams.graph.vocabulary import Vocabulary

QUOTE_CHARS = 600


def is_name(label: str) -> bool:
    """Whether a label is written as a name: every word capitalised ("Noah", "Ana Lima")."""
    words = label.split()
    return bool(words) and all(w[:1].isupper() for w in words)


def kind_task(vocabulary: Vocabulary, label: str, quotes: list[str]) -> str:
    text = " ".join(quotes)[:QUOTE_CHARS]
    return f'Text: "{text}"\n{vocabulary.kind_question.format(label=label)} Answer with one word.'


def pick_kind(vocabulary: Vocabulary, odds: dict[str, float]) -> str | None:
    """The type whose name (its first word) the model finds likeliest; None when it gives none of them."""
    scored = {kind: odds.get(kind.split()[0].lower(), UNLISTED_LOGPROB) for kind in vocabulary.kinds}
    best = max(scored, key=lambda k: scored[k], default=None)
    return best if best is not None and scored[best] > UNLISTED_LOGPROB else None


@dataclass(frozen=True)
class RelationQuestion:
    """One relation of the vocabulary asked about a pair, one way round."""

    text: str
    relation: str
    source: str
    target: str


def relation_questions(vocabulary: Vocabulary, a: str, b: str) -> list[RelationQuestion]:
    """Every relation's question about labels ``a`` and ``b``: both ways round unless it is symmetric."""
    out = []
    for name, rel in vocabulary.relations.items():
        out.append(RelationQuestion(rel.question.format(a=a, b=b), name, a, b))
        if not rel.symmetric:
            out.append(RelationQuestion(rel.question.format(a=b, b=a), name, b, a))
    return out


def relation_task(text: str, question: RelationQuestion) -> str:
    return f'Text: "{text[:QUOTE_CHARS]}"\n{question.text} Answer yes or no.'


def pick_relation(answers: list[tuple[RelationQuestion, float]]) -> RelationQuestion | None:
    """The question answered yes most clearly, if any is answered yes at all."""
    best = max(answers, key=lambda qm: qm[1], default=None)
    return best[0] if best is not None and best[1] > 0 else None


def question_focus(question: str, vocabulary: Vocabulary, named: set[str]) -> tuple[str, str] | None:
    """The question's subject and object, asked plainly: its own phrases in its own order, subject
    first (names only, for a vocabulary of named individuals), those the sources name (``named``:
    candidate keys) before the rest, so "Answer with one word." names nothing."""
    phrases = [label for label, _ in mentions_in(question, []) if is_name(label) or not vocabulary.names_only]
    phrases = [p for p in phrases if label_key(p) in named] or phrases
    return (phrases[0], phrases[-1] if len(phrases) > 1 else "") if phrases else None


class NoOdds(Exception):
    """The model answered without its odds: this run asks the listed way from here on."""


async def sort_plainly(rec: Run, model: Any, entities: Entities, todo: list[Candidate], sentences: dict[int, Sentence],
                       iteration: int, limit: int) -> None:
    """Type the candidates by a plain question each (names only, when the vocabulary says so):
    at most ``limit`` questions; a candidate whose call failed is asked again next iteration.
    Raises :class:`NoOdds` when the model gives no odds."""
    vocabulary = entities.vocabulary
    rejection = next(iter(vocabulary.rejections), "")
    asked = []
    for cand in todo:
        if vocabulary.names_only and not is_name(cand.label):
            entities.accept(cand, rejection, sentences, iteration)
        elif len(asked) < limit:
            asked.append(cand)

    def ask(k: int, cand: Candidate) -> Any:
        return rec.step(f"kind-{iteration}-{k}", ag.plain_agent(model, "says what kind of thing a phrase names"),
                        kind_task(vocabulary, cand.label, [sentences[s].text for s in cand.sentences[:3] if s in sentences]))

    # the first question alone: a model that gives no odds costs one call, not one per candidate
    outcomes = [await ask(1, asked[0])] if asked else []
    if outcomes and outcomes[0] is not None and outcomes[0].ok and outcomes[0].top_logprobs is None:
        raise NoOdds
    outcomes += await asyncio.gather(*(ask(k, c) for k, c in enumerate(asked[1:], 2)))
    for cand, outcome in zip(asked, outcomes):
        if outcome is None or not outcome.ok:
            continue
        if outcome.top_logprobs is None:
            raise NoOdds
        entities.accept(cand, pick_kind(vocabulary, outcome.top_logprobs) or rejection, sentences, iteration)


async def link_plainly(rec: Run, model: Any, scaffold: Scaffold, entities: Entities, pairs: list[Pair],
                       sentences: dict[int, Sentence], iteration: int, limit: int) -> tuple[int, list[tuple[Any, ...]]]:
    """Ask every relation's question about each pair, as many pairs as ``limit`` questions allow;
    draw the relation answered yes most clearly. Returns (edges added, keys of the pairs judged).
    Raises :class:`NoOdds` when the model gives no odds."""
    vocabulary = entities.vocabulary
    per_pair = max(1, sum(1 if r.symmetric else 2 for r in vocabulary.relations.values()))
    chosen = pairs[: max(1, limit // per_pair)]
    asked = [(pair, relation_questions(vocabulary, entities.info[pair.a].label, entities.info[pair.b].label))
             for pair in chosen]
    jobs = [rec.step(f"relation-{iteration}-{i}-{j}", ag.plain_agent(model, "says whether a text states a relation"),
                     relation_task(pair.text, q))
            for i, (pair, questions) in enumerate(asked, 1) for j, q in enumerate(questions, 1)]
    outcomes = iter(await asyncio.gather(*jobs))
    added, judged = 0, []
    for pair, questions in asked:
        answers = [(q, next(outcomes)) for q in questions]
        if any(o is None or not o.ok for _, o in answers):
            continue  # not judged: asked again next iteration
        if any(o.top_logprobs is None for _, o in answers):
            raise NoOdds
        judged.append(pair.key)
        best = pick_relation([(q, yes_margin(o.top_logprobs)) for q, o in answers])
        if best is not None and link_pair(scaffold, entities, pair, (best.relation, best.source, best.target),
                                          sentences, iteration) is not None:
            added += 1
    return added, judged


__all__ = ["NoOdds", "RelationQuestion", "is_name", "kind_task", "link_plainly", "pick_kind",
           "pick_relation", "question_focus", "relation_questions", "relation_task", "sort_plainly", "yes_margin"]
