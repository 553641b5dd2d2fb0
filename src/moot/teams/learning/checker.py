"""The answer checker: every number, date and name in a draft must come from the evidence.

Runs in Python before an answer is returned. The evidence is the retrieved facts, the source
passages, the question itself and every value computed for the answer (the ComputeAgent's
value, the calculator's results). A draft that states anything else fails, and the verdict
names the offending spans so the draft can be sent back once with them, or replaced by a plain
statement of what the sources do and do not say (:func:`plain_statement`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_CITATION = re.compile(r"\[#\d+\]|#\d+")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_LIST_MARKER = re.compile(r"(?m)^\s*(?:step\s+)?\d{1,2}[.):]\s")
_STEP_COUNT = re.compile(r"\b(?:step|steps|stage|stages|no\.?)\s+(\d{1,2})\b|\b(\d{1,2})\s+(?:steps|stages)\b", re.I)
_NAME = re.compile(r"(?<![\w'’-])([A-Z][a-zà-ÿ'’]+(?:[ -][A-Z][a-zà-ÿ'’]+)*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]|\d+[.)])?\s*|\(\s*|\"\s*)$")
UNKNOWN_TEXT = re.compile(
    r"\b(do(?:es)? not (?:say|hold|mention|give|state)|don't know|do not know|not (?:mentioned|stated|given)|"
    r"no information|cannot be determined|can't be determined|not enough information|sources do not)\b", re.I)

COMMON_CAPITALISED = frozenset("""
I A An The This That These Those It Its They Their There Then Yes No Not Both Each Every All Some Any One Two
Three Four Five Six Seven Eight Nine Ten First Second Third Last Next After Before When While If So But And Or
According Based From In On At By For With Without To Of As Because Since Therefore However Also Only Step Steps
Source Sources Fact Facts Answer Question Result Note Total Sum Difference Monday Tuesday Wednesday Thursday
Friday Saturday Sunday January February March April May June July August September October November December
Mr Mrs Ms Dr Sir What Which Who Why How Where He She We You My Our Your His Her Yesterday Today Tomorrow
""".split())


def numbers_in(text: str) -> set[str]:
    """Numbers as compared: thousands separators and trailing zeros dropped (``4,200`` = ``4200.0``)."""
    out: set[str] = set()
    for match in _NUMBER.finditer(_CITATION.sub(" ", text)):
        token = match.group().replace(",", "").rstrip(".")
        if "." in token:
            token = token.rstrip("0").rstrip(".")
        if token:
            out.add(token)
    return out


def names_in(text: str) -> set[str]:
    """Capitalised words and runs of them that are not at a sentence start and not common words."""
    found: set[str] = set()
    clean = _CITATION.sub(" ", text)
    for match in _NAME.finditer(clean):
        words = [w for w in re.split(r"[ -]", match.group(1)) if w not in COMMON_CAPITALISED]
        if not words:
            continue
        if _SENTENCE_START.search(clean[: match.start()]) and len(match.group(1).split()) == 1:
            continue  # one capitalised word opening a sentence is just a sentence
        found.update(words)
    return found


_UNIT_CLASS_WORDS: dict[str, frozenset[str]] = {
    "money": frozenset("$ £ € crown crowns mark marks dollar dollars pound pounds euro euros franc francs pence "
                       "cent cents kronor".split()),
    "volume": frozenset("l litre litres liter liters ml millilitre millilitres gallon gallons".split()),
    "length": frozenset("m metre metres meter meters km kilometre kilometres kilometer kilometers cm mile miles".split()),
    "mass": frozenset("kg kilo kilos kilogram kilograms g gram grams tonne tonnes ton tons".split()),
    "share": frozenset("% percent per-cent".split()),
    "area": frozenset("hectare hectares acre acres".split()),
}
"""The kinds of unit a number can carry; "$1,800" is not the "1,800 litres" a source states."""
_UNIT_OF = {word: kind for kind, words in _UNIT_CLASS_WORDS.items() for word in words}
_NUMBER_WITH_UNIT = re.compile(r"([$£€])?\s?(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?:\s*(%)|\s+(?:per cent)|"
                               r"(?:\s+(?:million|billion|thousand))?[\s-]+([A-Za-z]+))?")
"""A number and the word after it (past "million"): "6.8 million crowns" carries crowns."""
_HOW_MANY = re.compile(r"\bhow many ([a-z][a-z-]*)(?: ([a-z][a-z-]*s))?\b", re.I)
_NOT_A_NOUN = frozenset("""more fewer less of in at on for from to by with are were was is do does did have has had will would
can could should must times""".split())
_TIME_UNITS = frozenset("second seconds minute minutes hour hours day days week weeks month months year years".split())
_PEOPLE = frozenset("people person persons visitors visitor attendees guests spectators residents".split())
_WORD_NUMBERS = frozenset("""one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
seventeen eighteen nineteen twenty thirty forty fifty hundred""".split())


_ASKED_KIND = (
    ("length", re.compile(r"\bhow (?:long|tall|high|wide|deep|far) (?:is|was|are|were)\b|\bwhat (?:length|height|width|depth|distance)\b", re.I)),
    ("money", re.compile(r"\bhow much (?:does|do|did|will|would|is|was|are|were)\b[^?]*\b(?:cost|costs|pay|paid|spend|spent|charge|charged)\b|"
                         r"\bwhat (?:is|was|are|were) the (?:price|cost|fee|fare|charge)\b", re.I)),
    ("mass", re.compile(r"\bhow heavy\b|\bhow much (?:does|did|do) [^?]* weigh\b", re.I)),
)


def asked_kind(question: str) -> str:
    """The kind of unit the question asks for (``length``, ``money``, ``mass``), or ""."""
    for kind, pattern in _ASKED_KIND:
        if pattern.search(question):
            return kind
    return ""


def units_of(text: str) -> dict[str, set[str]]:
    """Each number of ``text`` (as :func:`numbers_in` writes it) and the kinds of unit it carries
    there ("" for none: a bare number or a count of things)."""
    found: dict[str, set[str]] = {}
    for match in _NUMBER_WITH_UNIT.finditer(_CITATION.sub(" ", text)):
        key = next(iter(numbers_in(match.group(2))), None)
        if key is None:
            continue
        if match.group(1):
            kind = "money"
        elif match.group(3) or "per cent" in match.group(0):
            kind = "share"
        else:
            kind = _UNIT_OF.get((match.group(4) or "").lower(), "")
        found.setdefault(key, set()).add(kind)
    return found


def asked_count(question: str) -> tuple[str, ...] | None:
    """The things a "how many …" question counts, as (modifier, head) or (head,): "how many pear
    varieties grow" → ("pear", "varieties"); None for durations, comparisons and other questions."""
    match = _HOW_MANY.search(question)
    if match is None or match.group(1).lower() in _NOT_A_NOUN:
        return None
    words = [w.lower() for w in match.groups() if w and w.lower() not in _NOT_A_NOUN]
    if len(words) == 2 and words[1] in _NOT_A_NOUN:
        words = words[:1]
    if not words or words[-1] in _TIME_UNITS:
        return None
    return tuple(words)


def _stem_noun(word: str) -> str:
    word = word.lower()
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def counts_of(texts: Sequence[str], thing: tuple[str, ...]) -> bool:
    """True when some text gives a number of ``thing``: a number (or a number word) followed
    within three words by its head noun, with the modifier, if any, among those words and no
    unit between ("140 apple trees" counts apple trees; "12 varieties" does not count pear
    varieties; "3 crowns a bottle" does not count bottles)."""
    head = _stem_noun(thing[-1])
    heads = {_stem_noun(w) for w in _PEOPLE} if thing[-1] in _PEOPLE else {head}
    modifier = thing[0].lower() if len(thing) == 2 else None
    for text in texts:
        tokens = re.findall(r"[a-z][a-z-]*|\d[\d,.]*", text.lower())
        for i, token in enumerate(tokens):
            if not (token[0].isdigit() or token in _WORD_NUMBERS):
                continue
            window = tokens[i + 1:i + 4]
            for j, word in enumerate(window):
                if _stem_noun(word) in heads and (modifier is None or modifier in window[:j]):
                    return True
                if word in _UNIT_OF or word in ("a", "an", "per", "each", "of", "and", "or"):
                    break  # "3 crowns a bottle" is a price, not a number of bottles
    return False


@dataclass
class Evidence:
    """What a draft may draw on."""

    texts: list[str] = field(default_factory=list)
    computed: list[str] = field(default_factory=list)
    """Values computed in Python for this answer (the ComputeAgent's, the calculator's)."""
    question: str = ""
    """The question, when known: "how many pear varieties" needs a source that counts pear varieties."""

    @classmethod
    def build(cls, *, question: str, facts: Sequence[Mapping[str, Any]] = (),
              passages: Sequence[Mapping[str, Any]] = (), computed: Iterable[str] = ()) -> Evidence:
        texts = [question]
        for fact in facts:
            texts.append(" ".join(str(fact.get(k) or "") for k in ("content", "value", "entity", "source", "source_date")))
        for passage in passages:
            texts.append(" ".join(str(passage.get(k) or "") for k in ("text", "source", "published")))
        return cls(texts=texts, computed=[str(c) for c in computed if c], question=question)

    def numbers(self) -> set[str]:
        out: set[str] = set()
        for text in (*self.texts, *self.computed):
            out |= numbers_in(text)
            # ISO dates in metadata ("2024-03-05") ground the day, month and year as written in prose.
            for y, m, d in re.findall(r"\b(\d{4})-(\d{2})-(\d{2})\b", text):
                out |= {y, str(int(m)), str(int(d))}
        return out

    def words(self) -> str:
        return " ".join((*self.texts, *self.computed)).lower()


@dataclass
class Verdict:
    """The checker's finding about one draft."""

    ok: bool
    unsupported: list[str] = field(default_factory=list)
    """The offending spans: numbers, dates and names found in no fact, passage or computed value."""
    says_unknown: bool = False
    empty: bool = False

    def reason(self) -> str:
        if self.empty:
            return "no draft"
        if self.ok:
            return "every number and name is in the evidence"
        return "states " + ", ".join(repr(s) for s in self.unsupported) + ", found in no retrieved fact or computed value"


def check_draft(draft: str, evidence: Evidence) -> Verdict:
    """Check one draft against the evidence (see the module docstring)."""
    text = (draft or "").strip()
    if not text:
        return Verdict(ok=False, empty=True)
    allowed = evidence.numbers()
    free = {m.group().split()[-1].rstrip(".):") for m in _LIST_MARKER.finditer(text)}
    for match in _STEP_COUNT.finditer(text):
        free.add(match.group(1) or match.group(2))
    unsupported = sorted(n for n in numbers_in(text) - allowed - free)
    # A number the sources state only with another kind of unit: "$1,800" where they say "1,800 litres".
    stated = units_of(" ".join((*evidence.texts, *evidence.computed)))
    for number, kinds in sorted(units_of(text).items()):
        # A bare occurrence (a fact's value field: "1,800") says nothing about the unit; the
        # sentences that give the number a unit do.
        known = stated.get(number, set()) - {""}
        wrong = kinds - {""} - known
        if number in allowed and wrong and known:
            given_as = "/".join(sorted(stated.get(number, set()) - {""}))
            unsupported.append(f"{number} as {'/'.join(sorted(wrong))} (the sources give {number} as {given_as})")
    # "How long is the ferry?" answered in crowns: every number of the draft carries another kind of unit.
    wanted = asked_kind(evidence.question) if evidence.question else ""
    drafted = units_of(text)
    kinds = set().union(*drafted.values()) - {""} if drafted else set()
    if wanted and kinds and wanted not in kinds and not UNKNOWN_TEXT.search(text):
        unsupported.append(f"{max(drafted, key=len)} as {'/'.join(sorted(kinds))} (the question asks for {wanted})")
    # "How many pear varieties?" when no source counts pear varieties: any number stated is not the answer.
    thing = asked_count(evidence.question) if evidence.question else None
    if thing and not UNKNOWN_TEXT.search(text) and not any(n in unsupported for n in numbers_in(text)):
        given = numbers_in(text) - free - numbers_in(evidence.question) - numbers_in(" ".join(evidence.computed))
        if given and not counts_of([*evidence.texts[1:], *evidence.computed], thing):
            unsupported.append(f"{max(given, key=len)} (no source gives a number of {' '.join(thing)})")
    words = evidence.words()
    for name in sorted(names_in(text)):
        if not re.search(r"(?<![a-z])" + re.escape(name.lower().rstrip("'’s")), words):
            unsupported.append(name)
    return Verdict(ok=not unsupported, unsupported=unsupported, says_unknown=bool(UNKNOWN_TEXT.search(text)))


def plain_statement(question: str, facts: Sequence[Mapping[str, Any]], *, unsupported: Sequence[str] = (),
                    limit: int = 2) -> str:
    """What the sources do and do not say, when no draft survives the checker."""
    said = "; ".join(str(f.get("content") or "").rstrip(".") for f in list(facts)[:limit] if f.get("content"))
    missing = f" (nothing in them supports {', '.join(unsupported[:3])})" if unsupported else ""
    head = f"The sources do not say{missing}."
    return f"{head} What they do say: {said}." if said else head


__all__ = ["Evidence", "UNKNOWN_TEXT", "Verdict", "asked_count", "asked_kind", "check_draft", "counts_of", "names_in", "numbers_in",
           "plain_statement", "units_of"]
