"""The sources specialist: what each source says about the value asked, compared in Python.

Two sources giving different figures (or dates) for one thing — on the same date a disagreement, on
different dates an update — are what a single agent most often gets wrong one way or the other
(it answers one of them, or the older one). Python takes each source's best-matching passage that
gives a figure (ranked against the question: :func:`moot.memory.units.rank_units`, each source on
its own: a table row "Passenger capacity: 180" matches fewer of the question's words than another
source's sentence, and is still that source's answer). Where that passage gives exactly one figure
of the frame's unit, the code reads it; otherwise the model chooses, per source, the figure that
answers the question (an enum each; a figure nobody chose is kept only when it names what is
asked or shares a chosen figure's unit). The code keeps the figures of one unit, compares them
and writes each with its source and date: a disagreement names both, an update gives the latest
and what it was before.

Where the sources differ, the comparison is a *note*: it follows the answer the plain draft wrote
(which keeps what it read) and adds what that answer left out; an answer that gives only a value a
later report changed is replaced by it (``select``). Sources that agree, each figure read by
the code, give that figure with every source (a plain draft that took another figure of the passage
is replaced).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Literal

from moot.teams.learning.ask.drafts import AskContext, Draft
from moot.teams.learning.ask.frame import QuestionFrame
from moot.teams.learning.ask.recall import Passage, Recall
from moot.teams.learning.specialists.common import Amount, amounts, choose, dateline, fmt, of_unit, same_unit, tagger_ready
from moot.text.dates import find_dates
from moot.text.names import names_in
from moot.text.words import refers_back, stem, words

KINDS = frozenset({"value", "date", "change", "comparison"})
PER_SOURCE = 2
MAX_SOURCES = 6


Report = tuple[str, str]
"""A report: its source's name and its date. One board's notices of April and June are two reports
of a figure (a price raised in June). For a date asked, a report is a source: one source's dates of
different days are of different events (work began in May, finished in August), and what is
compared is what different sources say."""


def report_of(item: Passage | Amount, *, dated: bool = True) -> Report:
    return (item.source, item.published or "" if dated else "")


def named(report: Report) -> str:
    return f"{report[0]} ({report[1]})" if report[1] else report[0]


def per_source(recall: Recall, *, dated: bool = True) -> dict[Report, list[Passage]]:
    """Each report's best-matching passages (those that match at all), best first."""
    found: dict[Report, list[Passage]] = {}
    for p in sorted((p for p in recall.passages if p.score > 0), key=lambda p: -p.score):
        items = found.setdefault(report_of(p, dated=dated), [])
        if len(items) < PER_SOURCE:
            items.append(p)
    return found


def dates_in(passage: Passage) -> list[Amount]:
    """A passage's dates as amounts to compare (the day's ordinal). A day or a month has the unit
    ``date``; a year alone ("founded in 1962") the unit ``year``, so that it is compared with the
    years other sources give, never with a day."""
    anchor = date.fromisoformat(passage.published[:10]) if passage.published else None
    mentions = find_dates(passage.text, anchor=anchor)
    if dateline(passage.text, mentions, anchor):
        return []
    return [Amount("", float(m.day.toordinal()), "year" if m.precision == "year" else "date", m.text.rstrip(" .,;:"),
                   passage.id, passage.source, passage.published, passage.text, m.day)
            for m in mentions if m.precision in ("day", "month", "year")]


def about_asked(amount: Amount, asked: str) -> bool:
    """Whether a figure is about what the question asks: the frame's unit word (by stem) is its unit or
    is in its sentence. With no unit word in the frame, nothing is known to be about it."""
    if not asked:
        return False
    wanted = stem(asked)
    return same_unit(amount.unit, asked) or wanted in {stem(w) for w in words(amount.sentence)}


def compare(values: list[Amount]) -> str:
    """Each source's figure with its date: the latest first (a disagreement when the latest reports,
    of one date, differ), then what earlier reports gave."""
    values = sorted(values, key=lambda a: a.published or "")
    latest_date = values[-1].published
    latest = [a for a in values if a.published == latest_date]
    earlier = [a for a in values if a.published != latest_date]
    said = lambda a: f"{named(report_of(a))} gives {a.text}"  # noqa: E731
    if len({round(a.value, 6) for a in latest}) > 1:
        head = f"The sources disagree: {'; '.join(said(a) for a in latest)}."
    else:
        head = f"The latest report, {latest[-1].source} ({latest_date}), gives {latest[-1].text}."
    if earlier:
        head += " Earlier: " + "; ".join(f"{a.text} ({a.source}, {a.published})" for a in reversed(earlier)) + "."
    return head


def series(values: list[Amount]) -> tuple[str, list[str]] | None:
    """How one figure changed from report to report, computed: each report's figure, oldest first,
    with the change from the one before it, the change overall and the largest step; and the numbers
    computed. ``None`` unless every report has its own date and one figure (two figures of one date
    are a disagreement)."""
    dated = sorted(values, key=lambda a: a.published or "")
    if len(dated) < 2 or any(not a.published for a in dated) or len({a.published for a in dated}) < len(dated):
        return None
    signed = lambda x: f"{'+' if x > 0 else '−' if x < 0 else '±'}{fmt(abs(round(x, 2)))}"  # noqa: E731
    steps = [(b.value - a.value, a, b) for a, b in zip(dated, dated[1:])]
    first, last = dated[0], dated[-1]
    overall = last.value - first.value
    computed = [overall, *(d for d, _, _ in steps)]
    text = (f"From {first.text} ({first.source}, {first.published}) to {last.text} ({last.source}, {last.published}): "
            f"{'up' if overall > 0 else 'down' if overall < 0 else 'unchanged'} {fmt(abs(round(overall, 2)))}")
    if first.value:
        computed.append(overall / first.value * 100)
        text += f" ({signed(overall / first.value * 100)}%)"
    text += "."
    if len(steps) >= 2:
        text += " Report by report: " + "; ".join(f"{a.text} → {b.text} ({b.published}): {signed(d)}" for d, a, b in steps) + "."
        d, a, b = max(steps, key=lambda s: abs(s[0]))
        text += f" The largest change: {signed(d)}, from {a.text} ({a.published}) to {b.text} ({b.published})."
    return text, [v for x in computed for v in (f"{abs(x)}", f"{abs(round(x, 2))}")]


def subject_names(ctx: AskContext, amount: Amount, known: set[str]) -> set[str]:
    """The names a figure's sentence is about, beyond ``known`` (the question's and the sources'
    own): "Eastfield" for "The Eastfield workshop makes 90 chairs a week." A sentence that opens by
    pointing back ("It bakes 600 …") is read with the one before it in its source."""
    text = amount.sentence
    if refers_back(text) and amount.where[1:].isdigit():
        before = ctx.recall.passage(f"s{int(amount.where[1:]) - 1}")
        if before is not None and before.source == amount.source:
            text = f"{before.text} {text}"
    return {n for n, _ in names_in(text)} - known


def about_different_things(ctx: AskContext, values: list[Amount]) -> bool:
    """Whether two of the figures are about different named things (one workshop's chairs and
    another's), so they are neither one value reported twice nor an update of it."""
    known = {n for n, _ in names_in(ctx.question)} | {a.source for a in values}
    known |= {w for n in list(known) for w in n.split()}
    named = [subject_names(ctx, a, known) for a in values]
    named = [{n for n in names if n not in known and not set(n.split()) <= known} for names in named]
    return any(a and b and not (a & b) for i, a in enumerate(named) for b in named[i + 1:])


def agree(values: list[Amount]) -> str:
    """Sources that give one figure: the figure, and each source with its date."""
    said = "; ".join(named(report_of(a)) for a in sorted(values, key=lambda a: a.published or ""))
    return f"{values[0].text} — every source that gives it agrees: {said}."


class Sources:
    name = "sources"
    authority = 3
    stands_by = False

    def applies(self, frame: QuestionFrame, recall: Recall) -> str | None:
        if frame.kind not in KINDS or not (frame.unit or frame.kind == "date"):
            return None
        holding = [s for s, ps in per_source(recall, dated=frame.kind != "date").items()
                   if any(any(c.isdigit() for c in p.text) for p in ps)]
        if len(holding) >= 2:
            return f"sources: {len(holding)} sources give figures about what is asked; Python compares what each says"
        return None

    async def draft(self, ctx: AskContext) -> Draft | None:
        if ctx.frame.kind == "date":
            await tagger_ready()
        groups = per_source(ctx.recall, dated=ctx.frame.kind != "date")
        top = max((p.score for ps in groups.values() for p in ps), default=0.0)
        best: dict[Report, list[Amount]] = {}
        close: set[Report] = set()  # sources whose passage matches about as well as the best (half its score or more)
        for source, passages in groups.items():
            for passage in passages:
                found = (dates_in(passage) if ctx.frame.kind == "date" else
                         [a for a in amounts(ctx, passages=[passage], limit=8) if a.where != "question"])
                if found:
                    best[source] = found  # the source's best-matching passage that gives a figure
                    if passage.score >= 0.5 * top:
                        close.add(source)
                    break
        if len(best) < 2:
            return None
        counter = 0
        for source, found in best.items():
            relabelled = []
            for a in found:
                counter += 1
                relabelled.append(replace(a, id=f"q{counter}"))
            best[source] = relabelled
        sources = list(best)[:MAX_SOURCES]
        # A source whose passage matches the question closely and whose figures hold exactly one of
        # the asked unit ("12 boats" beside "400 people", asked about boats), or one date for a date
        # asked, gives that one, if it is about what is asked; the code reads it, the model is not
        # asked. Any other source's figure ("Vehicle deck: 24 cars", asked what the ship can
        # "carry") is the model's choice.
        dated = ctx.frame.kind == "date"
        by_unit = {s: best[s] if dated else of_unit(best[s], ctx.frame.unit) for s in sources}
        chosen: dict[Report, Amount] = {s: by_unit[s][0] for s in sources
                                        if s in close and len(by_unit[s]) == 1
                                        and (about_asked(by_unit[s][0], ctx.frame.unit) or (dated and not ctx.frame.unit))}
        read_by_python = set(chosen)
        # A date in a passage about something else is still a date: for a date asked, only the
        # sources that match the question closely are offered. Figures of other units are set
        # apart after the choice, by their unit.
        offered = [s for s in sources if s not in chosen and (s in close or not dated)]
        # A source with one figure leaves no choice: it is kept if it is about what is asked (below).
        lone = {s: best[s][0] for s in offered if len(best[s]) == 1}
        chosen |= lone
        ask = [s for s in offered if s not in chosen]
        if ask:
            # The model chooses, for those sources only, the figure asked. "none" is not offered:
            # the embedded model chose it for every source of every question of a development
            # level that had two or three figures to compare (2026-12-05); a source's figure of
            # another unit, or about another named thing, is set apart below.
            fields = {f"source_{i + 1}": (Literal[tuple(a.id for a in best[s])], ...) for i, s in enumerate(ask)}  # type: ignore[misc]
            menu = "\n\n".join(f"source_{i + 1} = {named(s)}:\n" + "\n".join(a.render() for a in best[s]) for i, s in enumerate(ask))
            picked = await choose(ctx, self.name, "choose_values", f"{menu}\n\nQuestion: {ctx.question}", fields,
                                  name="PerSource")
            if picked is None:
                return None
            for i, source in enumerate(ask):
                match = next((a for a in best[source] if a.id == getattr(picked, f"source_{i + 1}")), None)
                if match is not None:
                    chosen[source] = match
        # What nobody chose is kept only when it is about what is asked (its unit, or its sentence,
        # holds the frame's unit word) or of the unit of a figure that was chosen ("£9.60" on a
        # notice's fare row beside the "£9.80" chosen from a report); what the model chose is its reading.
        judged = [a.unit for s, a in chosen.items() if s not in lone and a.unit]
        values = [a for s, a in chosen.items() if s not in lone or about_asked(a, ctx.frame.unit)
                  or (dated and not ctx.frame.unit) or any(same_unit(a.unit, u) for u in judged)]
        if not values:
            return None
        # One unit: the one most of the figures are in; a bare figure whose row names what is asked
        # ("Passenger capacity: 180") is of that unit, so it stays beside "200 passengers".
        unit = max(sorted({a.unit for a in values}), key=lambda u: (sum(same_unit(u, a.unit) for a in values), bool(u)))
        values = [a for a in values if same_unit(a.unit, unit) or (not a.unit and about_asked(a, ctx.frame.unit))]
        if len(values) < 2:
            return None  # one source: nothing for this specialist to add
        if about_different_things(ctx, values):
            return None  # two workshops' chairs are parts, not reports of one value (compute may add them)
        if len({round(a.value, 6) for a in values}) < 2:
            if not all(report_of(a) in read_by_python for a in values) or ctx.frame.kind == "date":
                return None  # agreeing figures the model picked may be one listing position, not one value
            text = agree(values)
            return Draft(specialist=self.name, text=text, quotes=[a.where for a in values], replaces=True,
                         why=self.applies(ctx.frame, ctx.recall) or "")
        # A question about how the figure changed gets the change computed; any other, each report's figure.
        text, computed = (series(values) if ctx.frame.kind == "change" else None) or (compare(values), [])
        latest = max(a.published or "" for a in values)
        return Draft(specialist=self.name, text=text, quotes=[a.where for a in values], adds=True, computed=computed,
                     states=[a.text for a in values],
                     outdated=[a.text for a in values if (a.published or "") < latest and not any(
                         round(b.value, 6) == round(a.value, 6) for b in values if (b.published or "") == latest)],
                     why=self.applies(ctx.frame, ctx.recall) or "")


SPECIALIST = Sources()
