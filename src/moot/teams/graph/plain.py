"""Asking plainly: a choice read from the model's odds of its one-word answers.

Listed choices fail on the embedded models in a way no prompt fixed: a batch of items gets the
first item's answer copied down it, and one item asked alone gets the last option listed
(docs/eval.md). Asked a plain question with a one-word answer ("Is Noah a child of Christopher?
Answer yes or no."), the model's first-token log-probabilities
(:attr:`moot.models.ModelSettings.top_logprobs`) show how far it leans to each answer, and
Python compares them: the type is the likeliest of the vocabulary's types, and a pair's relation
is the one whose question the model answers yes to most clearly, or none when it leans to no on
every one. Asked in two steps, what an entity affects is the entity of its text whose first word
the model finds likeliest to begin its answer, and only then which relation that link is.

Only a vocabulary that writes its choices as questions asks plainly
(:attr:`~moot.teams.graph.vocabulary.Vocabulary.asks_plainly`), and only with a model that gives
its odds (the embedded model does; a provider that gives none is asked the listed way). Each
question is one model call of one generated token.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from moot.models import UNLISTED_LOGPROB, yes_margin
from moot.runtime import Run
from moot.teams.graph import agents as ag
from moot.teams.graph.build import Entities, link_pair
from moot.teams.graph.candidates import Candidate, Pair, is_name, mentions_in
from moot.teams.graph.evidence import Sentence
from moot.teams.graph.scaffold import Scaffold, label_key, label_tokens
from moot.teams.graph.vocabulary import Vocabulary
from moot.text import opens_question, question_clauses
from moot.text.words import ARTICLES, REFERRING, stem, words

QUOTE_CHARS = 600


def kind_task(vocabulary: Vocabulary, label: str, quotes: list[str]) -> str:
    text = " ".join(quotes)[:QUOTE_CHARS]
    return f'Text: "{text}"\n{vocabulary.kind_question.format(label=label)} Answer with one word.'


def _summed(logprobs: Sequence[float]) -> float:
    """The log of the summed probabilities (log-sum-exp), for the tokens that begin one answer."""
    top = max(logprobs)
    return top + math.log(sum(math.exp(lp - top) for lp in logprobs))


def answer_odds(odds: Mapping[str, float], words: Sequence[str]) -> dict[str, float]:
    """Each one-word answer's log-probability as a first token: the summed odds of the tokens that
    spell it or begin it (a tokenizer may write "facility" as "fac" + "ility"; a token shorter than
    three letters, "in" or "re", begins too many words to count, and a token that begins two answers,
    "organ", counts for both). An answer no token begins gets :data:`~moot.models.UNLISTED_LOGPROB`."""
    out = {}
    for word in words:
        word_lower = word.lower()
        found = [lp for token, lp in odds.items() if token == word_lower or (len(token) >= 3 and word_lower.startswith(token))]
        if not found:
            out[word] = UNLISTED_LOGPROB
            continue
        out[word] = _summed(found)
    return out


def _likeliest(scored: dict[str, float]) -> str | None:
    best = max(scored, key=lambda k: scored[k], default=None)
    return best if best is not None and scored[best] > UNLISTED_LOGPROB else None


def pick_kind(vocabulary: Vocabulary, odds: dict[str, float]) -> str | None:
    """The type whose name (its first word) the model finds likeliest; None when it gives none of them."""
    words = {kind.split()[0]: kind for kind in vocabulary.kinds}
    best = _likeliest(answer_odds(odds, list(words)))
    return words[best] if best is not None else None


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


def _named_first(phrases: list[str], named: Mapping[str, str]) -> list[str]:
    """The phrases the sources name (``named``: candidate keys to labels), in order, else all of them.
    A phrase is named where a candidate holds its words, in any order ("the Ostby mill" is named by
    "the paper mill at Ostby")."""
    held = [label_tokens(label) for label in named.values()]

    def is_named(phrase: str) -> bool:
        tokens = label_tokens(phrase)
        return label_key(phrase) in named or bool(tokens) and any(tokens <= h for h in held)

    return [p for p in phrases if is_named(p)] or phrases


def _stems(label: str) -> set[str]:
    return {stem(w) for w in label_tokens(label)}


def _sharing_first(phrases: list[str], held: set[str]) -> list[str]:
    """The phrases that share a word stem with the sources' candidates (``held``: their stems), in
    order, else all of them: the test an end's entity is then found by
    (:func:`~moot.teams.graph.build.match_phrase`), looser than :func:`_named_first`, since the
    tagger may run a verb into a phrase ("the price of the cheese rise")."""
    return [p for p in phrases if _stems(p) & held] or phrases


def question_focus(question: str, vocabulary: Vocabulary, named: Mapping[str, str]) -> tuple[str, str] | None:
    """The question's subject and object, asked plainly: its own phrases in its own order, subject
    first (names only, for a vocabulary of named individuals), those the sources name before the
    rest (:func:`_named_first`), so "Answer with one word." names nothing; the focus node is then
    found by the same test."""
    phrases = [label for label, _ in mentions_in(question, []) if is_name(label) or not vocabulary.names_only]
    phrases = _named_first(phrases, named)
    return (phrases[0], phrases[-1] if len(phrases) > 1 else "") if phrases else None


def question_ends(question: str, vocabulary: Vocabulary, named: Mapping[str, str]
                  ) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The two ends of a question that asks in two clauses or more ("Why did A fall, and what links
    B to it?", :func:`moot.text.question_clauses`, each opening with an interrogative word): one in
    its first clause, the other in its last, each as ``(phrase, clause)``. The phrase is the clause's
    first noun phrase that shares a word with the sources (:func:`_sharing_first`; where two start at
    one word, the longer: "the price of the cheese" before "price"); the clause breaks ties between
    entities the phrase names equally (:func:`~moot.teams.graph.build.match_phrase`). A lone word that is no
    name, right before an article, is the clause's verb, whatever the tagger reads ("what links the
    mill …"). None for a question that asks once, or whose first or last clause names no phrase."""

    def is_verb(label: str, clause: str, end: int) -> bool:
        after = words(clause[end:])[:1]
        return len(words(label)) == 1 and not is_name(label) and bool(after) and after[0] in ARTICLES

    clauses = [c for c in question_clauses(question) if opens_question(c)]
    if len(clauses) < 2:
        return None
    held = set().union(*(_stems(label) for label in named.values()))
    found = []
    for clause in clauses:
        phrases = [label for label, m in mentions_in(clause, [])
                   if (is_name(label) or not vocabulary.names_only) and not is_verb(label, clause, m.end)]
        phrases = _sharing_first(phrases, held)
        if phrases:
            found.append((phrases[0], clause))
    return (found[0], found[-1]) if len(found) >= 2 else None


class NoOdds(Exception):
    """The model answered without its odds: this run asks the listed way from here on."""


async def sort_plainly(rec: Run, model: Any, entities: Entities, todo: list[Candidate], sentences: dict[int, Sentence],
                       iteration: int, limit: int) -> None:
    """Type the candidates by a plain question each (names only, when the vocabulary says so):
    at most ``limit`` questions; a candidate whose call failed is asked again next iteration.
    Raises :class:`NoOdds` when the model gives no odds."""
    vocabulary = entities.vocabulary
    rejection = list(vocabulary.rejections)[-1] if vocabulary.rejections else ""  # the last: "not relevant"
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


TARGET_ODDS = 20
"""How many likeliest first tokens a target question reads: its answer may begin with any word of
the text, where a yes/no or type question has a few answers."""


def target_task(vocabulary: Vocabulary, text: str, a: str) -> str:
    """The first step asked about one entity ``a`` of a text: what it affects, in the text's words."""
    return f'Text: "{text[:QUOTE_CHARS]}"\n{vocabulary.target_question.format(a=a)} Answer with words from the text.'


def how_task(vocabulary: Vocabulary, pair_text: str, a: str, b: str) -> str:
    words = ", ".join(r.word for r in vocabulary.relations.values())
    return (f'Text: "{pair_text[:QUOTE_CHARS]}"\n{vocabulary.how_question.format(a=a, b=b, words=words)} '
            "Answer with one word.")


_OPENERS = ARTICLES | REFERRING
"""First tokens that say nothing of which thing an answer names."""


def target_odds(odds: Mapping[str, float], word: str) -> float:
    """The log-probability that an answer begins with ``word``: the summed odds of the first tokens
    that begin it, however short (a made-up or rare name is split into short pieces, "Q" + "uell",
    "To" + "rmish"), except the words a noun phrase opens with in place of a thing's own word, the
    articles and the referring pronouns ("a" before "apple" is the article, "it" before "item" the
    pronoun); the targets it is compared with are a few words of one text, not every word.
    :data:`~moot.models.UNLISTED_LOGPROB` when no listed token begins it."""
    word = word.lower()
    found = [lp for token, lp in odds.items() if token not in _OPENERS and word.startswith(token)]
    return _summed(found) if found else UNLISTED_LOGPROB


def pick_target(odds: Mapping[str, float], targets: Sequence[tuple[str, str]]) -> tuple[str, float] | None:
    """The target ``(key, label)`` whose label's first word the model finds likeliest as the first
    word of what the source affects (:func:`target_odds`), with that log-probability; None when no
    target's word is among its likeliest first tokens (the model names none of them). Targets whose
    words begin alike tie, and the first of them listed is drawn (the team lists a text's entities
    as its pairs come: the question's own entities first, then the text's order)."""
    best: tuple[str, float] | None = None
    for key, label in targets:
        value = target_odds(odds, label.split()[0]) if label.split() else UNLISTED_LOGPROB
        if value > UNLISTED_LOGPROB and (best is None or value > best[1]):
            best = (key, value)
    return best


def pick_targets(answers: Sequence[tuple[str, str, float]]) -> list[tuple[str, str]]:
    """From one text's picks ``(source, target, log-probability)``, at most one for each source,
    the links drawn: a pair each end picked as the other's target is drawn once, the way the model
    was surer of."""
    drawn: dict[frozenset[str], tuple[str, str, float]] = {}
    for source, target, value in answers:
        ends = frozenset((source, target))
        if ends not in drawn or value > drawn[ends][2]:
            drawn[ends] = (source, target, value)
    return [(source, target) for source, target, _ in drawn.values()]


def pick_how(vocabulary: Vocabulary, odds: dict[str, float]) -> str:
    """The relation whose word the model finds likeliest; the vocabulary's :attr:`link_relation`
    when it gives none of them."""
    words = {r.word: name for name, r in vocabulary.relations.items()}
    best = _likeliest(answer_odds(odds, list(words)))
    return words[best] if best is not None else vocabulary.link_relation


async def link_in_two_steps(rec: Run, model: Any, scaffold: Scaffold, entities: Entities, pairs: list[Pair],
                            sentences: dict[int, Sentence], iteration: int, limit: int,
                            judged_before: Collection[tuple[Any, ...]] = ()) -> tuple[int, list[tuple[Any, ...]]]:
    """Ask, for each entity a text names, what it affects (:func:`target_task`), draw each one's
    likeliest target among the entities it shares the text with (:func:`pick_target`,
    :func:`pick_targets`), and only for the links drawn which relation they are. One question per
    entity of a text, not two per pair: a text naming n entities costs n calls, not n(n-1). A
    text's pairs are asked together, as many texts as ``limit`` questions allow (the first text
    always, even a longer one); a text whose calls failed is asked again next iteration, and so is
    a pair whose relation call failed. ``pairs`` are every pair of the texts read and
    ``judged_before`` the keys of those judged in an earlier iteration: a text is asked only while it
    holds a pair not yet judged (an entity chosen since), and then each of its entities is scored
    against all the others, so a newcomer is drawn only where it is an entity's likeliest target.
    Returns (edges added, keys of the pairs judged). Raises :class:`NoOdds` when the model gives no
    odds."""
    vocabulary = entities.vocabulary
    by_text: dict[tuple[int, ...], list[Pair]] = {}
    for pair in pairs:
        by_text.setdefault(pair.shown[0], []).append(pair)
    asked: list[tuple[list[Pair], list[str]]] = []
    cost = 0
    for group in by_text.values():
        if all(pair.key in judged_before for pair in group):
            continue
        ends = list(dict.fromkeys(k for pair in group for k in (pair.a, pair.b)))
        if asked and cost + len(ends) > limit:
            continue
        asked.append((group, ends))
        cost += len(ends)
    label = {k: entities.info[k].label for _, ends in asked for k in ends}
    jobs = [rec.step(f"target-{iteration}-{i}-{j}", ag.plain_agent(model, "says what a thing in a text affects",
                                                                   alternatives=TARGET_ODDS),
                     target_task(vocabulary, group[0].shown[1], label[a]))
            for i, (group, ends) in enumerate(asked, 1) for j, a in enumerate(ends, 1)]
    outcomes = iter(await asyncio.gather(*jobs))
    drawn: list[tuple[Pair, str, str]] = []
    judged: list[tuple[Any, ...]] = []
    for group, ends in asked:
        answers = [next(outcomes) for _ in ends]
        if any(o is None or not o.ok for o in answers):
            continue  # not judged: asked again next iteration
        if any(o.top_logprobs is None for o in answers):
            raise NoOdds
        fresh = [pair.key for pair in group if pair.key not in judged_before]
        judged += fresh
        pair_of = {frozenset((pair.a, pair.b)): pair for pair in group}
        picks = []
        for source, answer in zip(ends, answers):
            targets = [(k, label[k]) for k in ends if k != source and frozenset((source, k)) in pair_of]
            if (best := pick_target(answer.top_logprobs, targets)) is not None:
                picks.append((source, best[0], best[1]))
        drawn += [(pair_of[frozenset((s, t))], s, t) for s, t in pick_targets(picks)
                  if pair_of[frozenset((s, t))].key in fresh]  # a pair judged before was drawn (or not) then
    # one link drawn in two texts (one sentence, and across it with the next) is asked its relation
    # once, in its shortest quote; the other quotes are more evidence of the same link
    drawn.sort(key=lambda d: len(d[0].text))
    first: dict[tuple[str, str], int] = {}
    for k, (pair, source, target) in enumerate(drawn):
        first.setdefault((source, target), k)
    asked_how = sorted(set(first.values()))
    hows = dict(zip(asked_how, await asyncio.gather(*(
        rec.step(f"how-{iteration}-{n}", ag.plain_agent(model, "says which relation a text states"),
                 how_task(vocabulary, drawn[k][0].text, label[drawn[k][1]], label[drawn[k][2]]))
        for n, k in enumerate(asked_how, 1)))))
    added = 0
    for k, (pair, source, target) in enumerate(drawn):
        how = hows[first[(source, target)]]
        if how is None or not how.ok:  # not judged after all: asked again next iteration, links and all
            judged.remove(pair.key)
            continue
        relation = pick_how(vocabulary, how.top_logprobs or {})
        if link_pair(scaffold, entities, pair, (relation, label[source], label[target]), sentences, iteration) is not None:
            added += 1
    return added, judged


__all__ = ["NoOdds", "RelationQuestion", "answer_odds", "how_task", "is_name", "kind_task", "link_in_two_steps",
           "link_plainly", "pick_how", "pick_kind", "pick_relation", "pick_target", "pick_targets", "question_ends", "question_focus", "relation_questions", "relation_task", "sort_plainly", "target_odds", "target_task", "yes_margin"]
