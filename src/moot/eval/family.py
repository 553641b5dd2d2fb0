"""reasoning-gym's ``family_relationships`` as a graph benchmark nobody here wrote.

Each item is a short story ("Jayden is married to Elizabeth. They have a child called Edward.
…") and a question ("What is Sarah to Elizabeth?") whose answer is one kinship word. A graph
system draws the family (people with their sex, who is married to whom, who is whose parent)
and :func:`kinship` names the relation in Python from that graph, by the dataset's own
definitions of its sixteen words (the order of its checks included, so a graph that is right
gets the dataset's word). The baseline is one call with the item's text as the prompt, exactly
as a user would paste it, scored by reasoning-gym's rule (the answer, trimmed and lower-cased,
equals the word).

Nothing here imports a team; the CLI wires the graph team in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from moot.errors import MootError
from moot.models.base import ModelSettings, Usage

WORDS = ("mother", "father", "sister", "brother", "daughter", "son", "wife", "husband", "grandmother", "grandfather",
         "aunt", "uncle", "niece", "nephew", "mother-in-law", "father-in-law")


@dataclass
class FamilyCase:
    index: int
    story: str
    question: str
    prompt: str
    """The item's whole text, as reasoning-gym gives it (the baseline's prompt)."""
    answer: str


def family_cases(n: int, seed: int = 1) -> list[FamilyCase]:
    """``n`` seeded items of reasoning-gym's family_relationships."""
    try:
        import reasoning_gym
    except ImportError as exc:  # pragma: no cover - a test dependency
        raise MootError("reasoning-gym is not installed", fix="pip install 'moot[eval-deliberation]'") from exc
    data = reasoning_gym.create_dataset("family_relationships", size=n, seed=seed)
    out = []
    for i, item in enumerate(data):
        story, _, question = item["question"].rpartition("\n\n")
        out.append(FamilyCase(index=i, story=story.strip(), question=question.strip(), prompt=item["question"],
                              answer=str(item["answer"]).strip().lower()))
    return out


@dataclass
class Family:
    """A drawn family: each person's sex (``"man"`` / ``"woman"`` / ``""``), spouse and parents."""

    sex: dict[str, str] = field(default_factory=dict)
    spouse: dict[str, str] = field(default_factory=dict)
    parents: dict[str, set[str]] = field(default_factory=dict)

    def add_person(self, name: str, sex: str = "") -> None:
        self.sex.setdefault(name, sex)
        if sex and not self.sex[name]:
            self.sex[name] = sex

    def marry(self, a: str, b: str) -> None:
        self.add_person(a)
        self.add_person(b)
        self.spouse[a], self.spouse[b] = b, a

    def parent(self, parent: str, child: str) -> None:
        self.add_person(parent)
        self.add_person(child)
        self.parents.setdefault(child, set()).add(parent)
        # a child's parents are a couple: the spouse of a parent is a parent too
        if parent in self.spouse:
            self.parents[child].add(self.spouse[parent])

    def settle(self) -> None:
        """Spread parenthood to spouses married after the child was added."""
        for child, ps in self.parents.items():
            for p in list(ps):
                if p in self.spouse:
                    ps.add(self.spouse[p])

    def _parents(self, x: str) -> set[str]:
        return self.parents.get(x, set())

    def _grandparents(self, x: str) -> set[str]:
        return {g for p in self._parents(x) for g in self._parents(p)}


def kinship(family: Family, a: str, b: str) -> str | None:
    """What ``a`` is to ``b`` by the dataset's definitions, or None when the graph does not say."""
    family.settle()

    def word(female: str, male: str, who: str) -> str | None:
        sex = family.sex.get(who, "")
        return female if sex == "woman" else male if sex == "man" else None

    if a in family._parents(b):
        return word("mother", "father", a)
    if b in family._parents(a):
        return word("daughter", "son", a)
    if family.spouse.get(a) == b:
        return word("wife", "husband", a)
    if family._parents(a) and family._parents(a) == family._parents(b):
        return word("sister", "brother", a)
    if a in family._grandparents(b):
        return word("grandmother", "grandfather", a)
    if any(p in family._grandparents(b) for p in family._parents(a)):
        return word("aunt", "uncle", a)
    if any(p in family._grandparents(a) for p in family._parents(b)):
        return word("niece", "nephew", b)  # the dataset names b's sex here
    if a in family.spouse and b in family._parents(family.spouse[a]):
        return word("mother-in-law", "father-in-law", b)  # and here
    return None


def is_correct(case: FamilyCase, answer: str | None) -> bool:
    """reasoning-gym's rule: the answer, trimmed and lower-cased, is the word."""
    return isinstance(answer, str) and answer.strip().lower() == case.answer


def clean_answer(text: str) -> str:
    """A free answer's first word, without punctuation around it ("Mother." → "mother")."""
    first = (text or "").strip().split()
    return first[0].strip(".,;:!?\"'*").lower() if first else ""


@dataclass
class FamilyAnswer:
    answer: str | None
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    note: str = ""
    run_id: str = ""


class OneCallFamily:
    """One call with the item's text as the prompt, answered in words (what a user does first)."""

    name = "one-call"

    def __init__(self, model: Any) -> None:
        self.model = model

    async def answer(self, case: FamilyCase) -> FamilyAnswer:
        from moot.runtime import SubAgent

        agent = SubAgent("one-call", "answers a family question", "Answer the question about the family in the text.",
                         model=self.model, max_turns=1, settings=ModelSettings(max_tokens=16, temperature=0.0))
        started = time.perf_counter()
        result = await agent.run(case.prompt)
        text = result.output if isinstance(result.output, str) else ""
        return FamilyAnswer(clean_answer(text), usage=result.usage, seconds=time.perf_counter() - started,
                            note=text.strip()[:80])


def summarise_family(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    right = sum(1 for r in rows if r["correct"])
    return {"questions": n, "correct": right, "accuracy": round(right / n, 3) if n else None,
            "no_answer": sum(1 for r in rows if not r["answer"]),
            "calls": sum(r["calls"] for r in rows), "tokens": sum(r["tokens"] for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 1)}


__all__ = ["Family", "FamilyAnswer", "FamilyCase", "OneCallFamily", "WORDS", "clean_answer", "family_cases", "is_correct",
           "kinship", "summarise_family"]
