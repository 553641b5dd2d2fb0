"""The cause specialist: the model chooses the source sentence that states the cause; Python quotes or checks it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.memory import Fact, KnowledgeBase
from moot.models.base import ModelRequest
from moot.teams.learning.cause import read_cause
from learning_support import ask as ask_team

NEWS = """# Flood at the Dunmere mill

Dunmere Courier, 4 March 2025. The Dunmere mill flooded on the night of 1 March, the wettest night of the year, when
45 millimetres of rain fell. The water came in at 02:00, when the mill race overflowed its banks.
"""

INQUIRY = """# Inquiry into the Dunmere mill flood

Dunmere Council inquiry, 30 March 2025. The inquiry separates the immediate cause from the root cause. The
immediate cause was that the mill race overflowed under the heavy rain.
The root cause was a sluice gate left shut after a repair in January. The mill stayed closed for a week because the
millstones had to be dried by hand.
"""


@pytest.mark.parametrize(("question", "phrase", "claimed"), [
    ("What was the immediate cause of the Dunmere mill flood?", "immediate cause", ""),
    ("According to the inquiry, what was the root cause of the flood?", "root cause", ""),
    ("Why did the mill stay closed for a week?", "", ""),
    ("Was the heavy rain the root cause of the flood?", "root cause", "the heavy rain"),
])
def test_the_cause_asked(question: str, phrase: str, claimed: str) -> None:
    asked = read_cause(question)
    assert asked is not None and asked.phrase == phrase and asked.claimed == claimed


def test_no_cause_asked() -> None:
    assert read_cause("How much rain fell on 1 March?") is None


@pytest.fixture
def kb(tmp_path: Path) -> Any:
    base = KnowledgeBase.open(tmp_path / "mill.sqlite3")
    base.add_episode(NEWS, source="Dunmere Courier", published="2025-03-04")
    base.add_episode(INQUIRY, source="Dunmere Council", published="2025-03-30")
    base.add_facts([Fact("The Dunmere mill flooded on the wettest night of the year", entity="Dunmere mill",
                         attribute="flood", value="1 March", source="Dunmere Courier")])
    yield base
    base.close()


def pick(words: str) -> Any:
    """A cause route that chooses the listed sentence containing ``words``."""

    def choose(request: ModelRequest) -> Any:
        lines = [line for line in request.messages[-1].content.splitlines() if line.startswith("s")]
        return {"choice": next(line.split(":")[0] for line in lines if words in line)}
    return choose


def ask(kb: KnowledgeBase, question: str, routes: dict[str, Any], mode: str = "multi") -> Any:
    return ask_team(kb, question, routes, mode)[0]


def test_the_sentence_naming_the_asked_kind_of_cause_leads(kb: KnowledgeBase) -> None:
    answer = ask(kb, "What was the immediate cause of the Dunmere mill flood?",
                 {"single": "The immediate cause was the wettest night of the year.", "cause": pick("immediate cause")})
    assert answer.answer == "The immediate cause was that the mill race overflowed under the heavy rain."
    assert any("stating the immediate cause" in n for n in answer.trace.notes)


def test_a_cause_put_forward_is_checked_in_python(kb: KnowledgeBase) -> None:
    answer = ask(kb, "Was the heavy rain the root cause of the Dunmere mill flood?",
                 {"single": "Yes, the heavy rain was the root cause.", "cause": pick("root cause")})
    assert answer.answer.startswith("No. The root cause was a sluice gate left shut")
    holds = ask(kb, "Was a sluice gate left shut the root cause of the Dunmere mill flood?",
                {"single": "No.", "cause": pick("root cause")})
    assert holds.answer.startswith("Yes. The root cause was a sluice gate")


def test_the_sentence_stating_the_kind_of_cause_is_offered_first(kb: KnowledgeBase) -> None:
    from moot.teams.learning.cause import candidate_sentences

    first = candidate_sentences(kb, "What was the immediate cause of the flood?", read_cause(
        "What was the immediate cause of the flood?"))[0]  # type: ignore[arg-type]
    assert first.startswith("The immediate cause was")  # not "… separates the immediate cause from …"


def test_a_reason_given_in_so_many_words_leads(kb: KnowledgeBase) -> None:
    answer = ask(kb, "Why did the Dunmere mill stay closed for a week?",
                 {"single": "The mill stayed closed because of the wettest night of the year.",
                  "cause": pick("dried by hand")})
    assert answer.answer.startswith("The mill stayed closed for a week because the millstones had to be dried")


def test_a_plain_why_keeps_a_passing_single_draft(kb: KnowledgeBase) -> None:
    # No sentence states a kind of cause or says "because" about the flood: the model's pick is one
    # draft among others, and a passing single draft stands.
    answer = ask(kb, "Why was the Dunmere mill flooded?",
                 {"single": "Heavy rain made the mill race overflow.", "cause": pick("45 millimetres")})
    assert answer.answer == "Heavy rain made the mill race overflow."
    refused = ask(kb, "Why did the Dunmere mill stay closed for a week?",
                  {"single": "It was closed for 9 days of repairs by Hob Carter.", "cause": pick("dried by hand")})
    assert "dried by hand" in refused.answer  # the single draft invented a name and a number: the quote stands
