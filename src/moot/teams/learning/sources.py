"""The SourcesAgent: what each source says about the asked value, compared in Python.

Two questions a single agent gets wrong in opposite ways: "How many people attended?" when two
newspapers give 4,200 and 6,500 (it answers one of them), and "When does the season end?" when a
later notice moved the date (it answers the old one). Both need the same material — what *each
source* says about the one thing asked — and then a comparison that is Python's job:

1. Python reads the kind of value asked (an amount, a date, a time of day, a name) from the
   question, and takes from every episode the sentences that best match it
   (:func:`moot.memory.passages.find_source_sentences`) and the values of that kind in them.
2. The model chooses, for each source, the value that answers the question, or ``none``, under a
   schema (one enum per source). A source whose sentences hold one value needs no call.
3. Python compares: different *publishers* giving different values is a disagreement — every value
   is reported with its source, never one silently chosen (and, when the question asks how far
   apart they are, the gap is computed); one publisher whose later report changed the value is an
   update — the latest value, with the earlier one named.

Hypothetical questions ("if … would …") are not about what a source says, so they get no draft.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from moot.models.base import ModelSettings, Usage
from moot.runtime import AgentProgress, AgentResult, EventBus, SubAgent
from moot.teams.learning.choosing import choose

ValueKind = Literal["amount", "date", "time", "name"]
MAX_CANDIDATES = 6

_HYPOTHETICAL = re.compile(r"\bwhat if\b|\bif\b.*\b(?:would|could|had)\b|\b(?:would|could) .* if\b|\bsuppose\b|\bimagine\b|"
                           r"\b(?:would|could) (?:\w+ ){0,5}have\b", re.I)
"""What-ifs, including "With the old threshold, how many houses would the group have protected?"."""
_DURATION = re.compile(r"\bhow many (?:days|weeks|months|years|hours|minutes)\b|\bhow long\b|\bfor how\b", re.I)
_TOTAL = re.compile(r"\b(?:together|in total|total|combined|altogether|across|sum|average|each day|a day|per day)\b", re.I)
_GAP = re.compile(r"\b(?:how far apart|difference between|how (?:many|much) (?:more|fewer|less|higher|lower)|gap)\b", re.I)
_TIME = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?\s?m\.?|p\.?\s?m\.?)(?![a-z])|\b(\d{1,2}):(\d{2})\b", re.I)
_NAME_RUN = re.compile(r"(?<![\w'’-])([A-Z][a-zà-ÿ'’]+(?:[ -](?:of |the |de )?[A-Z][a-zà-ÿ'’]+)*)")
_CURRENCY = re.compile(r"^(?:crowns?|marks?|dollars?|pounds?|euros?|francs?|kronor|pence|cents?|\$|£|€)$", re.I)
_MONEY_WORDS = re.compile(r"\b(?:cost|costs|pay|paid|spend|spent|price|fee|charge|budget)\b", re.I)


_PEOPLE_UNIT = re.compile(r"^(?:people|person|visitor|attendee|guest|spectator|resident)s?$", re.I)


def value_kind(question: str) -> ValueKind | None:
    """The kind of value the question asks for, or None when a source comparison cannot answer it
    (a hypothetical, a duration, a total that is worked out)."""
    text = " ".join(question.split())
    if _HYPOTHETICAL.search(text) or _DURATION.search(text):
        return None
    lower = text.lower()
    if re.search(r"\b(?:at )?what time\b", lower):
        return "time"
    if re.search(r"\bwhat date\b|\bwhich day\b|\bwhen (?:did|does|do|will|was|is|were)\b", lower):
        return "date"
    if (re.search(r"\bhow (?:many|much)\b", lower) or _GAP.search(text)
            or re.search(r"\bwhat (?:is|was|are|were) the (?:price|cost|fee|charge|number|amount|budget)\b", lower)):
        return None if _TOTAL.search(text) and not _GAP.search(text) else "amount"
    if re.search(r"\b(?:more|less|fewer|most|least|higher|lower|larger|smaller|bigger|better|worse)\b", lower):
        return None  # "which bakery bakes more": a comparison between things, not one value per source
    if re.search(r"^\W*who\b|\b(?:from|at|in|on|by) which\b|^\W*which (?!of\b)[a-z]+\b|^\W*where\b", lower):
        return "name"
    return None


def states_kind(draft: str, kind: str) -> bool:
    """True when ``draft`` states some value of ``kind`` (a number, a date, a time of day); names
    are not told apart from other capitalised words, so any draft counts for them."""
    from moot.teams.learning.compute import find_quantities

    if kind == "time":
        return _TIME.search(draft) is not None
    found = find_quantities(draft, origin="draft", year=2000)
    if kind == "date":
        return any(q.date is not None and not re.fullmatch(r"\d{4}", q.text) for q in found)
    if kind == "amount":
        return any(q.value is not None for q in found)
    return True


def _day(date: _dt.date) -> str:
    return f"{date.day} {date:%B %Y}"


@dataclass(frozen=True)
class Candidate:
    """A value of the asked kind in a source's sentences."""

    text: str
    key: str
    """The value as compared ("4200", "2024-09-30", "21:00", "orley bridge")."""
    number: float | None = None
    kind: str = ""
    unit: str = ""


def name_runs(text: str) -> list[str]:
    """Runs of capitalised words ("Orley Bridge", "Halvard Mott"), without a sentence's first word
    when it stands alone, and without the common words the checker ignores."""
    from moot.teams.learning.checker import COMMON_CAPITALISED

    runs: list[str] = []
    for match in _NAME_RUN.finditer(text):
        words = [w for w in re.split(r"[ -]", match.group(1)) if w and w[0].isupper()]
        while words and words[0] in COMMON_CAPITALISED:
            words.pop(0)
        if not words:
            continue
        if match.start() == 0 and len(match.group(1).split()) == 1:
            continue  # one capitalised word opening a sentence is just a sentence
        runs.append(match.group(1)[match.group(1).index(words[0]):])
    return runs


def candidates(kind: ValueKind, question: str, sentence: str, *, year: int | None,
               exclude: Sequence[str] = ()) -> list[Candidate]:
    """The values of ``kind`` in ``sentence``: amounts with their unit, dates, times, names."""
    from moot.teams.learning.compute import find_quantities

    found: list[Candidate] = []
    if kind == "amount":
        from moot.teams.learning.checker import asked_count, counts_of

        quantities = [q for q in find_quantities(sentence, origin="source", year=year) if q.value is not None]
        thing = asked_count(question)
        if _MONEY_WORDS.search(question):
            # A price, cost or budget is money: "950 volunteers" is no budget, whatever a source says.
            quantities = [q for q in quantities if _CURRENCY.match(q.unit or "")]
        elif thing is not None:
            # "How many lanterns": the numbers that count lanterns ("1,150 paper lanterns").
            quantities = [q for q in quantities if counts_of([sentence[sentence.find(q.text):]], thing)]
        else:
            asked = {w.rstrip("s") for w in re.findall(r"[a-z]+", question.lower())}
            named = [q for q in quantities if q.unit and q.unit.lower().rstrip("s") in asked]
            quantities = named or quantities
        quantities.sort(key=lambda q: sentence.find(q.text))
        found = [Candidate(_through_noun(sentence, q.text, thing), f"{q.value:g}", q.value, "amount",
                           (q.unit or "").lower().rstrip("s")) for q in quantities]
    elif kind == "date":
        from moot.teams.learning.compute import find_quantities as _find

        found = [Candidate(q.text, q.date.isoformat(), kind="date") for q in _find(sentence, origin="source", year=year)
                 if q.date is not None and q.value is None and not re.fullmatch(r"\d{4}", q.text)]
    elif kind == "time":
        for match in _TIME.finditer(sentence):
            if match[4]:
                hour, minute = int(match[4]), int(match[5])
            else:
                hour, minute = int(match[1]) % 12, int(match[2] or 0)
                if match[3].lower().startswith("p"):
                    hour += 12
            found.append(Candidate(match.group().strip(), f"{hour:02d}:{minute:02d}", kind="time"))
    else:
        asked = question.lower()
        blocked = " ".join(exclude).lower()
        for run in name_runs(sentence):
            words = run.split()
            if all(w.lower() in asked for w in words) or all(w.lower() in blocked for w in words):
                continue  # the question's own subject, or the newspaper itself
            found.append(Candidate(run, run.lower(), kind="name"))
        noun = re.search(r"\bwhich ([a-z]+)", asked)
        if noun:  # "from which bridge": the names that are bridges first
            found.sort(key=lambda c: noun.group(1) not in c.key)
    if kind != "name":
        # Nearest the question's own words first ("cost 24,000 crowns … lanterns at 5 crowns each"):
        # a small model picks early options.
        found.sort(key=lambda c: _distance(sentence, c.text, question))
    unique: dict[str, Candidate] = {}
    for candidate in found:
        unique.setdefault(candidate.key, candidate)
    return list(unique.values())[:MAX_CANDIDATES]


_CLOSING = re.compile(r"\b(?:close|closes|closing|end|ends|until|finish|finishes|shut|shuts)\b", re.I)
_OPENING = re.compile(r"\b(?:open|opens|opening|start|starts|begin|begins)\b", re.I)


def fits(candidate: Candidate, report: Report, question: str, kind: str | None) -> bool:
    """True when a value plainly answers the question where it stands: a name that is of the kind
    asked ("Tamsin Bridge" for "which bridge"), an amount right by the question's own verb ("cost
    24,000 crowns"), a closing time after "to" or "until" ("from 7 a.m. to 8 p.m.")."""
    sentence = next((s for s in report.sentences if candidate.text in s), "")
    if kind == "name":
        noun = re.search(r"\bwhich ([a-z]+)", question.lower())
        return bool(noun) and noun.group(1) in candidate.text.lower()
    if kind == "amount":
        return _distance(sentence, candidate.text, _predicate(question)) <= 12
    if kind == "time":
        before = sentence[: max(0, sentence.find(candidate.text))].lower().split()[-1:]
        if _CLOSING.search(question):
            return before in (["to"], ["until"], ["till"])
        if _OPENING.search(question):
            return before in (["from"], ["at"])
    return False


def _predicate(question: str) -> str:
    """The question without its named subject: "How much did the Brindle Valley Lantern Festival
    cost?" → what is asked about it ("How much did the cost?")."""
    subject = " ".join(name_runs(question))
    words = [w for w in question.split() if w.strip("?,.'’s") not in subject.split()]
    return " ".join(words) or question


def _distance(sentence: str, value: str, question: str) -> int:
    """Characters between ``value`` in ``sentence`` and the nearest word the question uses."""
    from moot.memory.facts import match_terms, stem

    at = sentence.find(value)
    if at < 0:
        return len(sentence)
    wanted = match_terms(question)
    spans = [m.span() for m in re.finditer(r"[A-Za-z]+", sentence) if stem(m.group()) in wanted]
    if not spans:
        return at
    end = at + len(value)
    return min(max(0, at - b, a - end) for a, b in spans)


def _through_noun(sentence: str, written: str, thing: tuple[str, ...] | None) -> str:
    """The amount as the sentence writes it, through the counted noun: "1,150 paper lanterns"."""
    if not thing:
        return written
    start = sentence.find(written)
    head = thing[-1].rstrip("s")[:5].lower()
    words = sentence[start:].split()
    for n, word in enumerate(words[:4]):
        if word.lower().startswith(head) or (thing[-1] in ("people",) and n > 0):
            return " ".join(words[: n + 1]).rstrip(".,;:")
    return written


@dataclass(frozen=True)
class Report:
    """What one source says: its sentences, their candidate values, the value chosen."""

    source: str
    published: str | None
    sentences: tuple[str, ...]
    options: tuple[Candidate, ...]


def _published(report: Report) -> str:
    try:
        return _day(_dt.date.fromisoformat(str(report.published)[:10]))
    except ValueError:
        return ""


def _said(report: Report, value: Candidate) -> str:
    when = _published(report)
    return f"the {report.source}{f' ({when})' if when else ''} says {value.text}"


def _about(report: Report, value: Candidate, question: str) -> bool:
    """True when the sentence the value stands in shares two or more of the question's words: an
    update replaces the asked value, not some date that happens to be in a later report."""
    from moot.memory.facts import match_terms

    sentence = next((s for s in report.sentences if value.text in s), "")
    return len(match_terms(sentence) & match_terms(question)) >= 2


def _other_names(report: Report, value: Candidate, question: str) -> set[str]:
    """Names a source's sentence is about besides the question's and the value itself: two reports
    about different bakeries are not a disagreement about one."""
    text = " ".join(report.sentences)
    names = {w.lower() for run in name_runs(text) for w in run.split()}
    names -= {w.lower() for w in re.findall(r"[A-Za-z]+", f"{question} {value.text} {report.source}")}
    return names


def compare(question: str, chosen: Sequence[tuple[Report, Candidate]]) -> tuple[str, str, list[str]] | None:
    """The comparison, in Python: ``(kind, draft, computed)`` with kind ``disagree``, ``update`` or
    ``agree``, and the arithmetic done (the gap between two sources' figures), if any."""
    if len(chosen) < 2:
        return None
    publishers: dict[str, list[tuple[Report, Candidate]]] = {}
    for report, value in chosen:
        publishers.setdefault(report.source.strip().lower(), []).append((report, value))
    latest = {name: items[-1] for name, items in publishers.items()}  # reports come oldest first
    if len(latest) >= 2 and len({v.key for _, v in latest.values()}) >= 2:
        pairs = list(latest.values())
        kinds = {(v.kind, v.unit if v.kind == "amount" and not _PEOPLE_UNIT.match(v.unit or "") else "") for _, v in pairs}
        if len(kinds) > 1:
            return None  # "12 houses" against "1.5 metres" is no disagreement about one value
        others = [_other_names(r, v, question) for r, v in pairs]
        if all(others) and not set.intersection(*others):
            return None  # each report is about something else (the Millgate bakery, the Ridgeway bakery)
        said = "; ".join(_said(r, v) for r, v in pairs)
        numbers = [v.number for _, v in pairs if v.number is not None]
        if _GAP.search(question) and len(numbers) == 2:
            from moot.teams.learning.compute import format_number

            big, small = max(pairs, key=lambda p: p[1].number or 0), min(pairs, key=lambda p: p[1].number or 0)
            gap = format_number(abs(numbers[0] - numbers[1]))
            expression = f"{big[1].text} − {small[1].text} = {gap}"
            return "disagree", f"{gap} apart ({big[1].text} − {small[1].text}): the sources disagree — {said}.", [expression]
        return "disagree", f"The sources disagree: {said}.", []
    ordered = sorted(chosen, key=lambda rv: str(rv[0].published or ""))
    last_report, last_value = ordered[-1]
    earlier = [(r, v) for r, v in ordered[:-1] if v.key != last_value.key]
    # An update changes one value of one kind: a later "Skerra Island Council" is no new captain,
    # and "two more" is no new count of lifeguards beside "six lifeguards".
    alike = last_value.kind in ("amount", "date", "time") and all(
        v.kind == last_value.kind and v.unit == last_value.unit for _, v in earlier) and all(
        _about(r, v, question) for r, v in [*earlier, (last_report, last_value)])
    if earlier and alike:
        before = "; ".join(f"{v.text} in the report of {_published(r) or 'an earlier date'}" for r, v in earlier)
        when = _published(last_report)
        return "update", (f"{last_value.text} (the latest report, {last_report.source}"
                          f"{f', {when}' if when else ''}; earlier: {before})."), []
    if earlier:
        return None  # different values that are no update of one another: nothing to say in Python
    sources = " and ".join(dict.fromkeys(r.source for r, _ in chosen))
    return "agree", f"{last_value.text} (as {sources} report{'s' if len(chosen) == 1 else ''}).", []


@dataclass
class SourcesAgent(SubAgent):
    """Per-source values chosen by the model, compared in Python (see the module docstring).

    Output: ``{"draft", "computed": [], "grounds": [the sentences], "resolution": {"kind": …,
    "values": […]}}``; an empty draft when fewer than two sources hold a value of the asked kind."""

    async def run(self, task: str, context: Mapping[str, Any] | None = None, *,
                  budget: Any = None, bus: EventBus | None = None, progress: AgentProgress | None = None,
                  run_id: str | None = None, task_id: str | None = None) -> AgentResult:
        from moot.teams.learning.specialists import evidence

        merged = dict(context) if context and "facts" in context else evidence(context or {})
        kind = value_kind(task)
        reports: list[Report] = []
        for item in merged.get("reports") or []:
            year = int(str(item["published"])[:4]) if item.get("published") else None
            options: list[Candidate] = []
            for sentence in item["sentences"]:
                options += candidates(kind, task, sentence, year=year, exclude=[str(item["source"])]) if kind else []
            unique = list({c.key: c for c in options}.values())[:MAX_CANDIDATES]
            reports.append(Report(str(item["source"]), item.get("published"), tuple(item["sentences"]), tuple(unique)))
        # The sentences, and each source's name and date: the draft names them ("the Brindle Post (14 October 2024)").
        grounds = [s for r in reports for s in r.sentences] + [f"{r.source} {r.published or ''}" for r in reports]
        usage, turns = Usage(), 0

        def finish(draft: str, detail: str | None, resolution: dict[str, Any] | None = None,
                   computed: Sequence[str] = ()) -> AgentResult:
            output = {"draft": draft, "computed": list(computed), "grounds": grounds, "resolution": resolution}
            return AgentResult(agent=self.name, output=output, text=draft, usage=usage, transcript=(),
                               stop_reason="completed", turns=turns, detail=detail)

        holding = [r for r in reports if r.options]
        if kind is None or not holding:
            return finish("", "no source holds a value of the kind asked")
        # A source whose one option fits the question plainly ("… from Tamsin Bridge" for "which
        # bridge", "cost 24,000 crowns" for "how much did it cost") needs no choice: on L5 the model
        # answered "none" for the Echo's bridge and the lanterns' 5 crowns for the festival's cost.
        settled: dict[int, Candidate] = {}
        for report in holding:
            fitting = [c for c in report.options if fits(c, report, task, kind)]
            if len(report.options) == 1 or len(fitting) == 1:
                settled[id(report)] = (fitting or list(report.options))[0]
        open_reports = [r for r in holding if id(r) not in settled]
        picks: list[str | None] = []
        if open_reports:
            picks, usage, turns = await self._choose(task, open_reports, budget, bus, run_id, task_id)
        chosen_by = dict(settled) | {id(r): next(c for c in r.options if c.text == pick)
                                     for r, pick in zip(open_reports, picks) if pick is not None}
        chosen = [(r, chosen_by[id(r)]) for r in holding if id(r) in chosen_by]
        if len(chosen) == 1:
            report, value = chosen[0]
            latest_holding = max(holding, key=lambda r: str(r.published or ""))
            if _GAP.search(task) or report is not latest_holding:
                # A gap needs two values; and a value from an older report, when the latest one
                # holds values too, may be the one it replaced.
                return finish("", "one source's value, where two or a later one were needed")
            when = _published(report)
            result: tuple[str, str, list[str]] | None = (
                "only", f"{value.text} (the {report.source}{f', {when}' if when else ''}).", [])
        else:
            result = compare(task, chosen)
        if result is None:
            return finish("", "the sources' values are about different things, or none was chosen")
        verdict, draft, computed = result
        latest = max(chosen, key=lambda rv: str(rv[0].published or ""))[1].text
        resolution = {"kind": verdict, "latest": latest, "values": [[r.source, r.published, v.text] for r, v in chosen]}
        return finish(draft, None, resolution, computed)

    async def _choose(self, question: str, reports: Sequence[Report], budget: Any, bus: EventBus | None,
                      run_id: str | None, task_id: str | None) -> tuple[list[str | None], Usage, int]:
        fields: dict[str, tuple[Sequence[str], str | None]] = {}
        blocks = []
        for n, report in enumerate(reports, 1):
            options = tuple(c.text for c in report.options) + ("none",)
            fields[f"source_{n}"] = (options, None)
            when = f", {report.published}" if report.published else ""
            blocks.append(f"source_{n} ({report.source}{when}): " + " ".join(report.sentences)
                          + "\n  choices: " + " | ".join(options))
        picked, usage, turns = await choose(self, f"Question: {question}\n\n" + "\n\n".join(blocks), fields,
                                            name="SourceValues", budget=budget, bus=bus, run_id=run_id, task_id=task_id)
        if picked is None:
            return [None] * len(reports), usage, turns
        picks = [picked[f"source_{n}"] for n in range(1, len(reports) + 1)]
        return [None if p == "none" else p for p in picks], usage, turns


def build_sources(model: Any) -> SourcesAgent:
    from moot.runtime import load_prompt

    return SourcesAgent("sources", "says what each source reports about the asked value; Python compares them",
                        load_prompt("sources", __package__), (), model, max_turns=2,
                        settings=ModelSettings(max_tokens=120))


__all__ = ["SourcesAgent", "build_sources", "candidates", "compare", "fits", "name_runs", "states_kind", "value_kind"]
