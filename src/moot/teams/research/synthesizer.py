"""Phase 3, the synthesizer: one call, no tools, evidence in, an answer citing path:line out."""

from __future__ import annotations

import re
from collections.abc import Callable

from moot.codeindex import CodeIndex
from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.research.models import EvidenceBundle
from moot.teams.research.resolve import ResolvedSymbol, drop_copies, render_facts
from moot.text.words import words

BUNDLE_CHARS = 1400
"""Per researcher: the small model's context is shared by parallel requests, so evidence is cut."""


SYNTHESIS_TOKENS = 300
"""The synthesizer's room. The index section, the conditions and the quoted lines are written by
moot after it, so its prose needs no more; with 500 the 0.5B model wrote to the limit in three of
four blind-set answers (36-41 s, one a loop of one sentence), and with 300 httpx and click in
multi mode took 51 and 50 s a question instead of 68 and 67, at no lower claim recall
(docs/code-research.md)."""


def synthesizer_agent(model: object) -> SubAgent:
    return SubAgent("synthesizer", "writes the answer from the evidence, citing path:line", load_prompt("synthesizer", __package__),
                    model=model, max_turns=1, settings=ModelSettings(max_tokens=SYNTHESIS_TOKENS))  # type: ignore[arg-type]


def whole_sentences(text: str) -> str:
    """The text up to its last finished sentence or line: what a token limit cut off mid-way is
    left out (the text as it is when nothing ends a sentence)."""
    ends = [m.end() for m in re.finditer(r"[.!?`)](?=\s|$)|\n", text)]
    return text[: ends[-1]].rstrip() if ends else text


def render_evidence(question: str, bundles: list[EvidenceBundle]) -> str:
    """The synthesizer's task: the question, then each researcher's evidence, each block cut to
    :data:`BUNDLE_CHARS`.

    Researchers of one question often resolve and read the same definition. Each fact and each
    piece of code is shown once, where it first comes: the synthesizer reads every prompt token
    (about 70 a second on this machine's two cores), and a repeat tells it nothing new. Only what
    lies inside a block's cut counts as shown, so code an earlier block lost to the cut still
    comes in a later one."""
    parts = [f"Question: {question}", ""]
    shown: set[object] = set()
    for n, bundle in enumerate(bundles, 1):
        items: list[tuple[str, set[object]]] = [(f"Evidence from researcher {n} (sub-question: {bundle.sub_question})", set())]
        facts = [r for r in bundle.resolved if (r.path, r.start_line) not in shown]
        if facts:  # compact and exact: first, so the cut below never drops them
            items.append(("Facts from the code index:\n" + render_facts(facts, question), {(r.path, r.start_line) for r in facts}))
        earlier = len(facts) < len(bundle.resolved)
        own: set[object] = set()
        for f in bundle.findings:
            note = f" — {f.result_summary}" if f.result_summary and f.tool == "report" else ""
            key = f"{f.location()}\n{f.relevant_code}"
            if key in shown or key in own:
                earlier = earlier or key in shown
                if note:  # a researcher's own reading of code shown above is still news
                    items.append((f"* {f.location()}{note} (the code is shown above)", set()))
                continue
            own.add(key)
            items.append((f"* {f.location()}{note}\n{f.relevant_code}", {key}))
        if earlier:
            items.append(("(Some of what this researcher found is shown above, for an earlier researcher.)", set()))
        if bundle.coverage_note:
            items.append((f"Coverage: {bundle.coverage_note}", set()))
        block = "\n".join(text for text, _ in items)[:BUNDLE_CHARS]
        used = 0
        for text, keys in items:
            used += len(text) + 1
            if used - 1 <= len(block):
                shown |= keys
        parts.append(block)
    parts.append("Write the answer now, citing path:line.")
    return "\n\n".join(parts)


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _kept_sentences(text: str, keep: Callable[[str], bool]) -> str:
    """The text with only the sentences ``keep`` accepts, paragraph by paragraph (line breaks stay)."""
    out = [" ".join(s for s in _SENTENCE.split(paragraph) if keep(s)) for paragraph in text.split("\n")]
    return "\n".join(out).strip()


def without_repeats(text: str) -> str:
    """The text with every sentence that repeats an earlier one verbatim left out, and a last
    sentence cut off mid-way (the token limit) dropped when it is a repeat's beginning.

    The 0.5B synthesizer can fall into a loop ("The Abort function is called by
    click.termui.prompt, which calls echo." thirty times, until its token limit): the repeats
    say nothing new and bury the rest of the answer."""
    seen: list[str] = []

    def new(sentence: str) -> bool:
        key = " ".join(sentence.split()).lower()
        if len(key.split()) >= 4 and key in seen:  # "1." or "See above." may recur honestly
            return False
        if len(key.split()) >= 2 and any(s.startswith(key) and len(s) > len(key) for s in seen) and (
                key[-1] not in ".!?`)\"'" or len(key.split()) >= 6):
            # a repeat cut short by the token limit, also where the cut falls after a closing
            # backtick ("… is called by the `diff`"): six words that begin an earlier sentence
            # and stop short of its end are not a sentence of their own
            return False
        seen.append(key)
        return True

    return _kept_sentences(text, new)


def without_echoes(text: str, question: str, instructions: tuple[str, ...] = ()) -> str:
    """The text without the sentences that only give back what the model was told: the question
    asked again (a sentence ending in "?" whose words are mostly the question's) or an instruction
    copied (a sentence of eight words or more, nearly all of them an instruction's).

    The 0.5B model, stuck, can answer with its prompt: "… under what condition does that method
    tokenize the template again? The result to answer the original question in words …" — the
    question and the line the tool loop appends after tool results, as if they were the answer."""
    asked = set(words(question))
    told = [set(words(i)) for i in instructions]

    def said(sentence: str) -> bool:
        own = words(sentence)
        if own and sentence.rstrip().endswith("?") and sum(w in asked for w in own) >= 0.6 * len(own):
            return False
        return not (len(own) >= 8 and any(sum(w in t for w in own) >= 0.9 * len(own) for t in told))

    return _kept_sentences(text, said)


def sources_line(bundles: list[EvidenceBundle], limit: int = 6) -> str:
    """A list of the evidence locations, added when the answer cites none (it says so)."""
    locs: list[str] = []
    for bundle in bundles:
        for f in bundle.findings:
            if f.line_range and f.location() not in locs:
                locs.append(f.location())
    return ("Evidence locations (added by moot: the answer cited none): " + ", ".join(locs[:limit])) if locs else ""


def merged_resolved(bundles: list[EvidenceBundle], index: CodeIndex | None = None) -> list[ResolvedSymbol]:
    """Every bundle's resolved symbols, nominated ones first, each definition once; with the
    ``index``, also each definition shipped in two builds once (:func:`drop_copies`: two
    researchers may each resolve one build of the same function)."""
    nominated: list[ResolvedSymbol] = []
    rest: list[ResolvedSymbol] = []
    seen: set[tuple[str, int]] = set()
    for bundle in bundles:
        for r in bundle.resolved:
            key = (r.path, r.start_line)
            if key in seen:
                continue
            seen.add(key)
            (nominated if r.qualified_name in bundle.nominated or r.name in bundle.nominated else rest).append(r)
    return _one_build(nominated + rest, index)


def _one_build(merged: list[ResolvedSymbol], index: CodeIndex | None) -> list[ResolvedSymbol]:
    """``merged`` with each definition shipped in two builds once (:func:`drop_copies`)."""
    if index is None:
        return merged
    by_name = {r.qualified_name: r for r in reversed(merged)}  # the first of a name wins
    kept = set(drop_copies(index, list(dict.fromkeys(r.qualified_name for r in merged)), by_name))
    return [r for r in merged if r.qualified_name in kept]


def anchored(resolved: list[ResolvedSymbol], anchors: list[ResolvedSymbol], lead: set[str],
             index: CodeIndex | None = None) -> list[ResolvedSymbol]:
    """The researchers' definitions with the whole question's anchors added, each definition
    once: an anchor the question names (in ``lead``) first, the others after the researchers'
    own; with the ``index``, one build of a definition shipped in two
    (:func:`~moot.teams.research.resolve.drop_copies`)."""
    first = [a for a in anchors if a.qualified_name in lead]
    last = [a for a in anchors if a.qualified_name not in lead]
    merged: list[ResolvedSymbol] = []
    seen: set[tuple[str, int]] = set()
    for r in [*first, *resolved, *last]:
        if (r.path, r.start_line) not in seen:
            seen.add((r.path, r.start_line))
            merged.append(r)
    return _one_build(merged, index)
