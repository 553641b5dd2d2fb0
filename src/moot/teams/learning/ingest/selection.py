"""Extraction by selection: a fact is a sentence of the source, labelled by the model.

Python cuts a chunk into its text units (sentences, list items, table rows: :mod:`moot.text`)
and proposes, for each unit, the labels it can have: the names written in it or just before
it (what it can be about) and its own content words (which property it states). The model
only *chooses*, under a JSON schema built for this chunk, one pair per unit that states a
quantity or a date — and for a unit that opens with a word pointing back ("That number…",
"She…"), also what it points to, among the names and quantities of the units before it. Every
unit is stored, asked or not; an unasked or unlabelled unit is a fact with no labels. So the model writes a few tokens a fact
instead of re-writing each fact, and cannot alter a number or a name: a fact's text is the
source's own text, plus the reference words it chose.

The value, the unit and the event date of a fact are read from its text by :mod:`moot.text`.
A property becomes a supersession key (entity + attribute) only when the unit states a
quantity and no other unit of the same source has the same key with another value: a small
model's labels are noisy, and a wrong key would hide a current fact behind a newer one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any, Literal, Tuple

from pydantic import BaseModel, create_model

from moot.memory import Fact
from moot.memory.facts import normalise_key
from moot.text.dates import find_dates
from moot.text.names import find_names, names_in
from moot.text.numbers import find_quantities
from moot.text.sentences import TextUnit
from moot.text.words import PERSONAL, STOPWORDS, refers_back, words

MAX_ENTITY_OPTIONS = 8
MAX_PROPERTY_OPTIONS = 16
MAX_REFERENCE_OPTIONS = 8
LABELLED_KINDS = ("sentence", "item", "row")
"""Units that can carry a fact (a heading names a topic; code is not prose)."""


@dataclass(frozen=True)
class UnitOptions:
    """What the model may choose for one unit."""

    unit: TextUnit
    entities: tuple[str, ...]
    properties: tuple[str, ...]
    references: tuple[str, ...] = ()
    """Only for a unit that opens with a word pointing back; empty otherwise."""
    asked: bool = True
    """Whether the model labels this unit: it states a quantity or a date, or points back. The
    others are stored all the same, with no labels (see :func:`labels_for`)."""

    @property
    def needs_reference(self) -> bool:
        return bool(self.references)


@dataclass(frozen=True)
class UnitLabel:
    """The model's choice for one unit, checked against its options."""

    unit: TextUnit
    entity: str
    property: str
    reference: str = ""


def _content_words(text: str, skip: set[str]) -> list[str]:
    out: list[str] = []
    for word in words(text.replace("|", " ")):
        if word in STOPWORDS or word in skip or not word[0].isalpha() or len(word) < 3:
            continue
        if word not in out:
            out.append(word)
    return out


def propose(units: Sequence[TextUnit], *, document_names: Sequence[str] = (), published: date | None = None) -> list[UnitOptions]:
    """The options for each unit that can carry a fact, in order.

    ``document_names`` are the names of the whole document, most frequent first (its main
    subjects are offered for every unit, since a sentence often names its subject only as "the
    programme"); the unit's own names and those of the unit before it come first.
    """
    kept = [u for u in units if u.kind in LABELLED_KINDS]
    main = list(document_names[:2])
    known = set(document_names)
    options: list[UnitOptions] = []
    previous: list[TextUnit] = []
    for unit in kept:
        text = unit.render()
        here = [n for n, _ in names_in(text) if n in known]
        before = [n for u in previous[-1:] for n, _ in names_in(u.render()) if n in known]
        entities = tuple(dict.fromkeys([*here, *before, *main]))[:MAX_ENTITY_OPTIONS]
        name_words = {w for n in here for w in words(n)}
        properties = tuple(_content_words(text, name_words))[:MAX_PROPERTY_OPTIONS]
        references: tuple[str, ...] = ()
        pointer = refers_back(unit.text)
        if pointer and previous:
            # The most recently named first; a personal pronoun points to a name, never to an amount.
            recent = previous[-2:]
            named = [n for u in recent for n, _ in names_in(u.render()) if n in known]
            amounts = [] if pointer in PERSONAL else [q.text for u in recent for q in find_quantities(u.render(), anchor=published)]
            references = tuple(dict.fromkeys([*reversed(amounts), *reversed(named)]))[:MAX_REFERENCE_OPTIONS]
        # A label pays where it is used: the entity and property of a quantity are its supersession
        # key, a date orders the fact, a pointer needs its reference. A unit with none of these is
        # stored as its own text; labelling it cost tokens (29 of the bundled articles' 66 units)
        # for a label nothing reads (retrieval finds its names in its text).
        states = bool(find_quantities(text, anchor=published) or find_dates(text, anchor=published))
        options.append(UnitOptions(unit, entities, properties, references, asked=states or bool(references)))
        previous.append(unit)
    return options


def _choice(values: Sequence[str]) -> Any:
    return Literal[("", *values)] if values else Literal[""]


def label_schema(options: Sequence[UnitOptions]) -> type[BaseModel]:
    """The output type for one chunk: ``{"labels": [[entity, property(, reference)], …]}``, one item
    per unit in order, each item's strings limited to that unit's options (so a grammar-constrained
    model can only choose, and its answer stays aligned with the units)."""
    items = []
    for option in options:
        pair = [_choice(option.entities), _choice(option.properties)]
        if option.needs_reference:
            pair.append(_choice(option.references))
        items.append(Tuple[tuple(pair)])
    labels_type = Tuple[tuple(items)] if items else Tuple[()]
    model = create_model("SentenceLabels", labels=(labels_type, ...))
    model.__doc__ = "One [entity, property] pair per numbered sentence, in order; [entity, property, reference] where asked."
    return model


def read_labels(output: Any, options: Sequence[UnitOptions]) -> tuple[list[UnitLabel], int]:
    """The model's answer as labels, each checked against its unit's options; returns (labels, refused).

    Every unit gets a label, so every unit becomes a fact: the labels only add what a fact is
    about. A small model leaves most sentences unlabelled (["", ""]), and dropping those lost
    the facts questions needed (a founding year, a cost), where storing a sentence that states
    little costs one row that no question retrieves.

    A provider that does not enforce the schema may answer with fewer or more items, or with
    words outside the options: an item beyond the units is ignored, a missing one means an
    empty label, and a word outside its options is refused (counted) rather than stored.
    """
    raw = list((output.labels if isinstance(output, BaseModel) else (output or {}).get("labels", [])) or [])
    labels: list[UnitLabel] = []
    refused = 0
    for position, option in enumerate(options):
        item = raw[position] if position < len(raw) else None
        values = [str(v or "") for v in (item or [])][:3]
        values += [""] * (3 - len(values))
        entity, prop, reference = values
        if entity and entity not in option.entities:
            entity, refused = "", refused + 1
        if prop and prop not in option.properties:
            prop, refused = "", refused + 1
        if reference and reference not in option.references:
            reference, refused = "", refused + 1
        labels.append(UnitLabel(option.unit, entity, prop, reference))
    refused += max(0, len(raw) - len(options))
    return labels, refused


def labels_for(options: Sequence[UnitOptions], output: Any) -> tuple[list[UnitLabel], int]:
    """Every unit's label, in order: the model's answer (``output``, for the asked units only, as
    :func:`label_schema` and :func:`numbered_units` showed them) read by :func:`read_labels`, and an
    empty label for each unit that was not asked. ``output`` is ``None`` when no unit was asked."""
    read, refused = read_labels(output, [o for o in options if o.asked])  # one label per asked unit, in order
    labels = iter(read)
    return [next(labels) if o.asked else UnitLabel(o.unit, "", "") for o in options], refused


def numbered_units(options: Sequence[UnitOptions]) -> str:
    """The chunk as the model sees it: one numbered line per unit, and where a reference is asked."""
    lines = []
    for number, option in enumerate(options, 1):
        lines.append(f"{number}. {option.unit.render()}")
    asked = [str(n) for n, o in enumerate(options, 1) if o.needs_reference]
    if asked:
        lines.append(f"\nSentences {', '.join(asked)} point back to something named before them: add what they mean.")
    return "\n".join(lines)


def _epoch_us(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp()) * 1_000_000


def event_day(text: str, published: date | datetime | None) -> date | None:
    """The day a unit says its fact happened: its latest full date not after publication (a later date
    is a plan, and ordering a plan after later reports would make it wrongly "newest")."""
    limit = published.date() if isinstance(published, datetime) else published
    days = [m.day for m in find_dates(text, anchor=limit) if m.precision == "day" and (limit is None or m.day <= limit)]
    return max(days) if days else None


def build_facts(
    labels: Sequence[UnitLabel], *, source: str, published: date | datetime | None, confidence: float = 0.8
) -> list[Fact]:
    """Facts from the chosen labels: the unit's own text (and the chosen reference), its quantities as
    the value, its date as the event date; supersession keys only where they are safe (module doc)."""
    anchor = published.date() if isinstance(published, datetime) else published
    drafts = []
    for label in labels:
        text = label.unit.render()
        content = f"{text} (refers to: {label.reference})" if label.reference else text
        value = "; ".join(q.text for q in find_quantities(label.unit.text, anchor=anchor))
        day = event_day(label.unit.text, published)
        drafts.append((label, content, value, day))
    keyed: dict[tuple[str, str], set[str]] = {}
    for label, _, value, _ in drafts:
        if label.entity and label.property and value:
            keyed.setdefault((normalise_key(label.entity), normalise_key(label.property)), set()).add(normalise_key(value))
    facts = []
    for label, content, value, day in drafts:
        key = (normalise_key(label.entity), normalise_key(label.property))
        safe = bool(value) and len(keyed.get(key, ())) == 1
        facts.append(
            Fact(
                content,
                concept=label.property or label.entity,
                entity=label.entity,
                attribute=label.property if safe else "",
                value=value,
                confidence=confidence,
                tags=tuple(t for t in (label.property,) if t),
                source=source,
                source_date=published,
                temporal_index=_epoch_us(day) if day else None,
            )
        )
    return facts


def document_names(units: Sequence[TextUnit], *, exclude: Sequence[str] = ()) -> list[str]:
    """The names of a whole document (publishers excluded), most frequent first."""
    return find_names([u.render() for u in units if u.kind != "code"], exclude=exclude)


__all__ = [
    "LABELLED_KINDS",
    "UnitLabel",
    "UnitOptions",
    "build_facts",
    "document_names",
    "event_day",
    "label_schema",
    "labels_for",
    "numbered_units",
    "propose",
    "read_labels",
]
