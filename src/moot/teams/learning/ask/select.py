"""Selection: which draft answers, decided in Python from the frame, the authorities and the checker.

1. Every draft is checked (:mod:`.checker`); a draft that states a number or date no evidence
   gives or computes is out.
2. A specialist whose precondition the frame established and which resolved the question in
   Python (``Draft.replaces``: a computed value, a step by position, each source's value) replaces
   the plain draft; among several, the highest authority. A span counted between two dates does
   not replace a plain draft that states a length as the sources write it ("the cycle lasts 14
   hours"; asked how long a race is, "a 12 km race"): a length read is not made worse by one
   worked out between two dates the model chose.
3. Otherwise the plain draft answers — it is never made worse by a specialist that merely ran.
   That holds when it says the sources do not say, too: the sentence another specialist chose is
   not an answer the plain reader missed (on the development suites it never was: a neighbouring
   sentence, or a heading, where "the sources do not say" was right).
4. When the plain draft fails the checker, a grounded draft of another specialist answers; when
   none is grounded, the answer says plainly that the sources do not say.
5. A grounded note (``Draft.adds``: each source's value, where the sources differ) follows an
   answer that gives one of its figures (the note is about that value), unless the answer already
   gives each of them or says the sources do not say (a near miss is not an answer). An answer
   that gives only a value a later report changed is out of date: the note replaces it.
"""

from __future__ import annotations

import re

from moot.teams.learning.ask.drafts import Draft, Resolution, Verdict

UNKNOWN = "The sources do not say."


def declines(draft: Draft | None) -> bool:
    """Whether a draft says the sources do not give the answer, as the plain draft's prompt tells it
    to say it (``prompts/answer.md``): our own instruction's words, not the sources'."""
    if draft is None:
        return False
    text = " ".join(draft.text.lower().replace("’", "'").split())
    return any(s in text for s in ("do not say", "does not say", "don't say", "doesn't say"))


def _said(figure: str, text: str) -> bool:
    """Whether ``text`` writes ``figure`` as the sources wrote it (case, spacing and end stops aside)."""
    norm = lambda t: " ".join(t.lower().replace("’", "'").split())  # noqa: E731
    wanted = norm(figure).strip(" .,;:")
    return bool(wanted) and re.search(rf"(?<![\w.]){re.escape(wanted)}(?![\w]|\.\d)", norm(text)) is not None


def with_notes(resolution: Resolution, drafts: list[Draft], passed: set[str]) -> Resolution:
    """The resolution with each grounded note added, or the answer replaced by one (rule 5)."""
    if resolution.chosen == "none" or not resolution.answer.strip():
        return resolution
    for note in (d for d in drafts if d.adds and d.specialist in passed and d.specialist != resolution.chosen):
        if declines(Draft(specialist=resolution.chosen, text=resolution.answer)):
            return resolution.model_copy(update={"rule": f"{resolution.rule}; {note.specialist}'s note not added "
                                                          "(the answer says the sources do not say)"})
        said = [f for f in note.states if _said(f, resolution.answer)]
        if said and all(f in note.outdated for f in said):
            return resolution.model_copy(update={
                "chosen": note.specialist, "answer": note.text,
                "rule": f"{resolution.rule}; it gives {', '.join(said)}, which a later report changed: "
                        f"{note.specialist}'s comparison replaces it"})
        if not said or len(said) == len(note.states):
            continue  # about another value than the answer gives, or nothing the answer lacks
        resolution = resolution.model_copy(update={
            "answer": f"{resolution.answer.rstrip()}\n\n{note.text}",
            "rule": f"{resolution.rule}; {note.specialist}'s note added (the answer gave "
                    f"{', '.join(said)} of {', '.join(note.states)})"})
    return resolution


def select(drafts: list[Draft], verdicts: list[Verdict], authority: dict[str, int], *, mode: str) -> Resolution:
    resolution = _select(drafts, verdicts, authority, mode=mode)
    if mode != "multi":
        return resolution
    return with_notes(resolution, drafts, {v.specialist for v in verdicts if v.passed})


def _select(drafts: list[Draft], verdicts: list[Verdict], authority: dict[str, int], *, mode: str) -> Resolution:
    passed = {v.specialist for v in verdicts if v.passed}
    plain = next((d for d in drafts if d.specialist == "single"), None)
    plain_verdict = next((v for v in verdicts if v.specialist == "single"), None)
    ranked = sorted((d for d in drafts if d.specialist in passed and d.specialist != "single"),
                    key=lambda d: -authority.get(d.specialist, 0))
    if mode == "multi":
        replacing = [d for d in ranked if d.replaces]
        if replacing:
            chosen = replacing[0]
            stated = plain_verdict.stated_lengths if plain is not None and plain_verdict is not None and plain_verdict.passed else []
            if chosen.measures == "time" and stated:
                return Resolution(chosen="single", answer=plain.text, verdicts=verdicts,  # type: ignore[union-attr]
                                  rule=f"the plain draft states {', '.join(stated)} as the sources write it; "
                                       f"{chosen.specialist}'s span between two dates ({chosen.text}) does not replace it")
            return Resolution(chosen=chosen.specialist, answer=chosen.text, verdicts=verdicts,
                              rule=f"{chosen.specialist} replaces the plain draft ({chosen.why}); every number checked")
    if plain is not None and plain.specialist in passed:
        said = " (it says the sources do not say)" if declines(plain) else ""
        return Resolution(chosen="single", answer=plain.text, verdicts=verdicts,
                          rule=f"the plain draft{said}, every number checked")
    failed = plain_verdict if plain_verdict is not None and not plain_verdict.passed else None
    if mode == "multi" and ranked:
        chosen = ranked[0]
        why = f"the plain draft {failed.fault}" if failed else "no plain draft"
        return Resolution(chosen=chosen.specialist, answer=chosen.text, verdicts=verdicts,
                          rule=f"{why}; {chosen.specialist}'s draft is grounded")
    if plain is not None and failed is not None:
        if mode == "single":
            # The baseline keeps its answer; the note says which numbers nothing supports.
            return Resolution(chosen="single", answer=plain.text, verdicts=verdicts,
                              rule=f"single mode keeps the plain draft; it {failed.fault}")
        return Resolution(chosen="none", answer=UNKNOWN, verdicts=verdicts, knows=False,
                          rule=f"no draft is grounded (the plain draft {failed.fault})")
    return Resolution(chosen="none", answer="", verdicts=verdicts, knows=False, rule="no agent produced a draft")


__all__ = ["UNKNOWN", "declines", "select", "with_notes"]
