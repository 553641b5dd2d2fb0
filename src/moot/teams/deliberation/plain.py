"""Which option is a sport, asked plainly: two yes/no questions per option (is it a sport? is it
resting?), read for their odds.

Listed ("which of these is a sport?"), the 0.5B model named a work task as the sport in 6 of 18
requests whichever way they were listed, and named the same option, or none, when asked which one
is *not* a sport, so the order check left no option physical and the readiness evidence narrowed
nothing (docs/eval.md). Asked about each option alone ("Does "go on the long ride" mean doing a
sport or physical exercise? Answer yes or no."), the model's first-token odds
(:attr:`moot.models.ModelSettings.top_logprobs`) lean further to yes for the sport than for the
other option on most requests, though by little on the 0.5B model, and further to no when asked
whether it is rest (:data:`REST_QUESTION`): the team takes the option whose sport lean less its
rest lean is the clearest, and only when it leans so by :data:`CLEAR_LEAN` more
than for any other option (a lone option: more than even odds). A model that gives no odds costs
one call and is asked the listed way. Measured on the blind set (b) of 2026-11-28: the team 9/15
against one call's 6/15 (docs/eval.md)."""

from __future__ import annotations

from collections.abc import Mapping

SPORT_QUESTION = 'Does "{label}" mean doing a sport or physical exercise? Answer yes or no.'
"""Worded after four wordings were tried on the twelve development requests' options as the reader
writes them ("go to my strength class", "finish the grant application"): this one leaned further
to yes for the sport in all 11 pairs that hold one, by at least :data:`CLEAR_LEAN` in 7; "Is "…" a
sport …?" did so by that much in 3. All four took "get an early night" for more of a sport than a
study session."""

CLEAR_LEAN = 0.1
"""How much further (in log-odds) the model must lean to yes for one option than for every other
before that option is taken for the sport: the run-to-run variation of one question's odds on the
embedded engine (about 0.1; requests batched in its slots), below which two leans are no
difference. On the development requests the sport was ahead by 0.13-0.51 where the model put it
ahead at all (9 of 11; level in 2); a first threshold of 0.25 left three of those untaken."""


REST_QUESTION = 'Does "{label}" mean resting or sleeping? Answer yes or no.'
"""Asked of each option beside :data:`SPORT_QUESTION`. On its own the sport question leans the
wrong way on some options that are rest ("sleep in" ahead of a squash match, "clear out the shed"
ahead of an orienteering event): the model leans to yes for many things. What an option leans
towards as rest is taken off what it leans towards as sport (:func:`physical_lean`). Measured on
the option pairs of the 41 requests of the three used blind sets (development data), as the
reader offers them, run twice: of the 28 pairs that hold one sport, the sport lean alone took the
sport in 22-23 and the other option in 2 (0.1 apart or more); less the rest lean, 26-27 and 0. Of
the 11 pairs that hold none, it took one option in 5-6 against 7 (mostly an outing over a task at
home)."""


def sport_question(label: str) -> str:
    return SPORT_QUESTION.format(label=label)


def rest_question(label: str) -> str:
    return REST_QUESTION.format(label=label)


def physical_lean(sport_margin: float, rest_margin: float) -> float:
    """How far the model leans to an option's being the physical one: its yes-margin as a sport less
    its yes-margin as rest (both :func:`moot.models.yes_margin`)."""
    return sport_margin - rest_margin


def physical_by_odds(leans: Mapping[str, float]) -> str | None:
    """The option the model leans to call a sport by :data:`CLEAR_LEAN` more than any other
    (``leans``: option label → :func:`physical_lean`, or a plain yes-margin), or ``None``."""
    if not leans:
        return None
    ranked = sorted(leans.items(), key=lambda kv: -kv[1])
    label, lean = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    return label if lean - runner_up >= CLEAR_LEAN else None


__all__ = ["CLEAR_LEAN", "REST_QUESTION", "SPORT_QUESTION", "physical_by_odds", "physical_lean", "rest_question",
           "sport_question"]
