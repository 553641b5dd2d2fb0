"""The closed sets the model chooses from: relation types (each written as a verb phrase, so a
choice reads as a sentence: "Ostby mill causes algae bloom") and entity types (with the
rejections: a publisher, something off the question's world, a word too general to draw).

``DEFAULT`` serves questions about organisations, places, substances and organisms; ``FAMILY``
serves kinship texts (people as men and women; married, parent, sibling). A user can pass their
own :class:`Vocabulary` in :class:`~moot.teams.graph.GraphConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Relation:
    """One relation type of the closed vocabulary."""

    phrase: str
    """How it reads between two labels: "causes", "is part of"."""
    meaning: str
    symmetric: bool = False
    """The same read both ways ("is married to"): one choice, no direction."""
    question: str = ""
    """The relation as a plain yes/no question about ``{a}`` and ``{b}`` ("Is {b} a child of {a}?"),
    for asking plainly (:attr:`Vocabulary.asks_plainly`)."""
    word: str = ""
    """The one word that names it in the vocabulary's :attr:`Vocabulary.how_question` ("causes",
    "part"), for asking plainly in two steps."""


@dataclass(frozen=True)
class Vocabulary:
    """What the model may choose: entity types (plus rejections) and relation types."""

    name: str
    kinds: dict[str, str]
    """Entity types the model may give a candidate, with a few words on each."""
    relations: dict[str, Relation]
    rejections: dict[str, str] = field(default_factory=lambda: dict(REJECTIONS))
    """Answers that say a candidate is no entity of the question's world."""
    causal: frozenset[str] = frozenset()
    """Relation types that state a cause (the quantifier's evidence kind is "causal" by rule)."""
    correlational: frozenset[str] = frozenset()
    kind_question: str = ""
    """The entity types as one plain question about ``{label}`` whose one-word answers are the
    types' names ("Is {label} a man or a woman?"), for asking plainly."""
    names_only: bool = False
    """Its entities are named individuals (the people of a family): a candidate the text does not
    write as a name ("child", "a family") is none, without a model call."""
    min_mentions: int = 2
    """In sources longer than :attr:`~moot.teams.graph.GraphConfig.short_sources` sentences, a
    candidate is offered to the model only when its mention group is named in at least this many
    sentences, shares a word with the question, or sits in a sentence that says something is not
    known (:meth:`moot.teams.graph.candidates.TextReading.salient`); 1 offers every candidate. A story of named
    individuals (a family) names some of them once, and each counts."""
    target_question: str = ""
    """What ``{a}`` acts on, as a plain question answered with words of the text ("According to the
    text, what does {a} affect?"): a vocabulary with many relations is asked in two steps, this
    question once for each entity a text names, read for the odds of each other entity's first
    word, then :attr:`how_question` for the links drawn."""
    how_question: str = ""
    """Which relation a drawn link is, as a plain question about ``{a}`` and ``{b}`` whose one-word
    answers (``{words}``) are the relations' :attr:`Relation.word`."""
    link_relation: str = ""
    """The relation drawn when the answer to :attr:`how_question` names none of the words."""
    links_across: bool = True
    """A link may join a thing in one sentence to a thing in the next sentence of the same paragraph
    (news writing states a cause in one sentence and what followed in the next); False: only where
    the next sentence opens by pointing back ("They have a child called Edward"), for text that
    states each relation in one sentence."""
    paths_follow_links: bool = True
    """The answer's path is read the way its links point, from cause to effect, whichever end the
    question names first; False where the question's order is the answer's ("what is A to B?")."""

    @property
    def asks_plainly(self) -> bool:
        """Whether every choice can be asked as a plain question, read from the model's odds of its
        one-word answers instead of chosen from a list (:mod:`moot.teams.graph.plain`)."""
        if not self.kind_question or not self.relations:
            return False
        return self.asks_in_two_steps or all(r.question for r in self.relations.values())

    @property
    def asks_in_two_steps(self) -> bool:
        """Whether a text's entities are asked what each of them affects, and only a drawn link which
        relation it is (:attr:`target_question`, :attr:`how_question`): one question per entity of a
        text, not one per pair, relation and direction."""
        return bool(self.target_question and self.how_question and self.link_relation in self.relations
                    and all(r.word for r in self.relations.values()))

    @property
    def symmetric(self) -> frozenset[str]:
        """The relations that read the same both ways round (no direction stated)."""
        return frozenset(name for name, rel in self.relations.items() if rel.symmetric)

    def listed(self) -> Vocabulary:
        """The same vocabulary asked the listed way only: its choices as enums of a batch, never as
        plain questions (for a model whose odds are not wanted, and the listed way's tests)."""
        return replace(self, kind_question="")

    def phrase(self, relation: str) -> str:
        found = self.relations.get(relation)
        return found.phrase if found else relation.replace("_", " ")

    def options(self, a: str, b: str) -> dict[str, tuple[str, str, str] | None]:
        """The sentences a pair's answer may be, each mapped to (relation, source, target), or None
        for the pair's own "no link" (``"A and B: no link"``: never an answer another pair has)."""
        out: dict[str, tuple[str, str, str] | None] = {}
        for name, rel in self.relations.items():
            out[f"{a} {rel.phrase} {b}"] = (name, a, b)
            if not rel.symmetric:
                out[f"{b} {rel.phrase} {a}"] = (name, b, a)
        out[no_link(a, b)] = None
        return out


def item_answers(label: str, answers: Sequence[str]) -> dict[str, str]:
    """An item's own answers, each its words and the answer (for candidate ``X``: ``"X: organisation"``),
    mapped back to the answer."""
    return {f"{label}: {a}": a for a in answers}


def read_item_answer(value: Any, label: str, answers: Sequence[str]) -> str | None:
    """The answer an item's value names (``None``: none of its own)."""
    return item_answers(label, answers).get(str(value)) if value is not None else None


def mapper_options(vocabulary: Vocabulary) -> list[str]:
    """What a candidate can be: an entity type, or a reason it is no entity."""
    return [*vocabulary.kinds, *vocabulary.rejections]


def no_link(a: str, b: str) -> str:
    """A pair's answer when its text states no link between the two."""
    return f"{a} and {b}: no link"


REJECTIONS = {
    "publisher or author": "who wrote or published a text, not part of what it is about",
    "too general": "a general word that names nothing in particular (a year, a reason, people)",
    "not relevant": "a real thing, but not part of the question's world",
}

DEFAULT = Vocabulary(
    name="default",
    kinds={
        "organisation": "a company, agency, council or group",
        "person": "a named person",
        "place": "a lake, river, town, region or site",
        "facility": "a plant, mill, farm or installation",
        "substance": "a chemical, pollutant, nutrient or material",
        "organism": "an animal, plant or population",
        "process": "an activity, practice or natural process",
        "measure": "a level, rate, count, price or other measured quantity",
        "event": "something that happened at a time",
    },
    relations={
        "causes": Relation("causes", "the source brings the target about", word="causes"),
        "increases": Relation("increases", "more of the source means more of the target", word="increases"),
        "decreases": Relation("decreases", "more of the source means less of the target", word="decreases"),
        "enables": Relation("enables", "the source makes the target possible", word="enables"),
        "prevents": Relation("prevents", "the source stops the target", word="prevents"),
        "part_of": Relation("is part of", "the source is a part or member of the target", word="part"),
        "operates": Relation("operates", "the source runs or manages the target", word="operates"),
        "supplies": Relation("supplies", "the source delivers material or service to the target", word="supplies"),
        "owns": Relation("owns", "the source owns the target", word="owns"),
        "located_in": Relation("is located in", "the source is in the place named by the target", word="located"),
        "produces": Relation("produces", "the source makes or emits the target", word="produces"),
        "uses": Relation("uses", "the source consumes or relies on the target", word="uses"),
        "regulates": Relation("regulates", "the source sets rules for or controls the target", word="regulates"),
        "correlates_with": Relation("correlates with", "the two occur together; no direction of cause is shown",
                                    symmetric=True, word="correlates"),
        "related_to": Relation("is related to", "a link whose kind the text does not show", symmetric=True, word="related"),
    },
    causal=frozenset({"causes", "increases", "decreases", "enables", "prevents", "produces"}),
    correlational=frozenset({"correlates_with"}),
    kind_question=('What is "{label}" in this text: an organisation, a person, a place, a facility, a substance, '
                   'an organism, a process, a measure or an event?'),
    target_question="According to the text, what does {a} affect?",
    how_question="Which word says how the text links {a} to {b}: {words}?",
    link_relation="related_to",
)

FAMILY = Vocabulary(
    name="family",
    kinds={"man": "a man or boy", "woman": "a woman or girl"},
    relations={
        "married_to": Relation("is married to", "the two are married", symmetric=True,
                               question="Are {a} and {b} married to each other?"),
        "parent_of": Relation("is a parent of", "the source is the mother or father of the target",
                              question="Is {b} a child of {a}?"),
        "sibling_of": Relation("is a sibling of", "the two have the same parents", symmetric=True,
                               question="Are {a} and {b} siblings?"),
    },
    rejections={"not a person": "a word that names no one person (a child, a family)"},
    kind_question="Is {label} a man or a woman?",
    names_only=True,
    min_mentions=1,
    links_across=False,
    paths_follow_links=False,
)

VOCABULARIES = {v.name: v for v in (DEFAULT, FAMILY)}

__all__ = ["DEFAULT", "FAMILY", "REJECTIONS", "Relation", "VOCABULARIES", "Vocabulary", "item_answers", "mapper_options",
           "no_link", "read_item_answer"]
