"""moot.text: sentences, front matter, dates, quantities and words, read by format."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from moot.text import content_words, find_dates, find_quantities, parse_number, read_front_matter, split_units, stem
from moot.text.dates import names_a_time, publication_date
from moot.text.frontmatter import FrontMatterError
from moot.text.numbers import unit_name


def test_units_follow_the_markdown_structure_and_keep_the_documents_words():
    text = (
        "# Harbour works\n\nDr. Ines Vale leads the works. The budget is 3.1 million euros.\n"
        "It rose from 2.4 million.\n\n"
        "1. Register at the depot.\n2. Collect gloves and\n   three bags.\n"
        "3. **Close the gate.** Once the bags are full, the gate is no longer needed.\n\n"
        "| Day | Level (%) |\n|-----|------|\n| Mon | 54 |\n| Tue | 51 |\n\n"
        "> A quoted line.\n\n```\ncode stays whole\n```\n"
    )
    units = split_units(text)
    assert [(u.kind, u.text) for u in units] == [
        ("heading", "Harbour works"),
        ("sentence", "Dr. Ines Vale leads the works."),
        ("sentence", "The budget is 3.1 million euros."),
        ("sentence", "It rose from 2.4 million."),
        ("item", "Register at the depot."),
        ("item", "Collect gloves and three bags."),
        ("item", "**Close the gate.** Once the bags are full, the gate is no longer needed."),  # one step, two sentences
        ("row", "| Mon | 54 |"),
        ("row", "| Tue | 51 |"),
        ("sentence", "A quoted line."),
        ("code", "code stays whole"),
    ]
    assert units[7].header == "| Day | Level (%) |"
    assert units[7].render() == "| Day | Level (%) | | Mon | 54 |"
    assert [u.index for u in units] == list(range(len(units)))
    flat = " ".join(text.split())
    for unit in units:
        if unit.kind in ("sentence", "heading"):
            assert unit.text in flat


def test_a_table_without_a_rule_line_has_no_header():
    units = split_units("| a | b |\n| c | d |")
    assert [(u.kind, u.header) for u in units] == [("row", ""), ("row", "")]


def test_dates_in_their_written_forms():
    anchor = date(2026, 7, 6)
    found = find_dates(
        "By 6 July 2026 it had grown; on July 9th, 2025 and in March 2024 too; 2026-05-18; Sept. 4; "
        "last Tuesday and next month; in 2019 it began.",
        anchor=anchor,
    )
    assert [(m.text, m.day, m.precision) for m in found] == [
        ("6 July 2026", date(2026, 7, 6), "day"),
        ("July 9th, 2025", date(2025, 7, 9), "day"),
        ("March 2024", date(2024, 3, 1), "month"),
        ("2026-05-18", date(2026, 5, 18), "day"),
        ("Sept. 4", date(2026, 9, 4), "day"),
        ("last Tuesday", date(2026, 6, 30), "day"),
        ("next month", date(2026, 8, 1), "month"),
        ("2019", date(2019, 1, 1), "year"),
    ]
    assert found[4].relative and not found[0].relative


def test_verbs_and_impossible_days_are_not_dates():
    assert find_dates("They may march on, and it may rain.") == []
    assert [m.text for m in find_dates("31 February 2026 or 2026-02-30")] == ["February 2026"]
    assert find_dates("last Tuesday") == []  # nothing to resolve it against


def test_a_phrase_that_names_only_a_time():
    for phrase in ("July", "hours", "two years", "the past decade", "14 March 2023", "Friday", "the year", "summer"):
        assert names_a_time(phrase), phrase
    # a thing named after a time, a thing counted, a time of something, a verb, a bare number: not only a time
    for phrase in ("Monday Club", "Day Centre", "sixty trips", "years of drought", "may", "2024", "Mill Lock", "spring",
                   "Summer Street"):
        assert not names_a_time(phrase), phrase


def test_a_publication_date_is_one_whole_date_only():
    assert publication_date("6 July 2026") == date(2026, 7, 6)
    assert publication_date("July 6, 2026") == date(2026, 7, 6)
    assert publication_date("6 July 2026, and 7 July") is None
    assert publication_date("soon") is None


def test_quantities_with_units_scales_currencies_and_number_words():
    text = ("It costs $4.50 per kg, up 12% since 2024; twenty-three boats and one hundred and five people; "
            "6.1 mg/L at 8:30; the 120-tonne target; 3.1 million euros; 1,200 volunteers; €450,000; 2.4m; "
            "the 3rd step; 40 per cent.")
    got = [(q.value, q.unit) for q in find_quantities(text)]
    assert got == [
        (4.5, "dollars per kg"), (12.0, "%"), (23.0, "boats"), (105.0, "people"), (6.1, "mg/l"), (120.0, "tonne"),
        (3_100_000.0, "euros"), (1200.0, "volunteers"), (450_000.0, "euros"), (2_400_000.0, ""), (40.0, "%"),
    ]


def test_pence_written_after_the_number_are_pounds():
    got = [(q.value, q.unit, q.text) for q in find_quantities("The school paid 14p per kWh; a 5p coin; page 10 p.")]
    assert got[:2] == [(0.14, "pounds per kwh", "14p per kWh"), (0.05, "pounds", "5p")]
    assert got[2][0] == 10.0 and got[2][1] != "pounds"


def test_unit_symbols_and_spellings_name_one_unit():
    assert unit_name("km") == unit_name("kilometers") == "kilometre"
    assert unit_name("M") == "metre" and unit_name("kWh") == "kilowatt-hour"
    assert unit_name("panels") == "panels"  # a counted thing is its own unit


def test_times_of_day_time_zones_and_hyphened_labels_are_written_but_are_no_amounts():
    def read(text: str) -> list[tuple[str, bool]]:
        return [(q.text, q.amount) for q in find_quantities(text)]

    # an e-mail header's offset is no amount, and the next line's word is no unit of it
    assert read("Sent: Tue, 4 Nov 2025 16:02:00 +0000\nSubject: stall fees") == [("0000", False)]
    assert read("Doors open at 7 pm and the hall closes at 10.30 a.m. on Sundays.")[0] == ("7 pm", False)
    assert read("We sold 90 adult passes and 41 under-12 passes.") == [("90 adult", True), ("41", True), ("12 passes", False)]
    # still numbers a checker finds written: only a reader listing figures to work with leaves them out
    assert [q.value for q in find_quantities("under-12 passes")] == [12.0]
    # a range, a currency and a percentage keep their amounts
    assert all(amount for _, amount in read("Ages 5-11 pay £3-£4, up +12% on last year."))


def test_dates_are_not_quantities():
    assert find_quantities("By 6 July 2026 the cleanup had removed 95 tonnes.") [0].text == "95 tonnes"
    assert len(find_quantities("By 6 July 2026 the cleanup had removed 95 tonnes.")) == 1


def test_parse_number():
    assert parse_number("1,200") == 1200
    assert parse_number("3.1 million") == 3_100_000
    assert parse_number("twenty-three") == 23
    assert parse_number("several") is None


def test_front_matter_yaml_toml_and_date_line():
    yaml_doc = read_front_matter("---\ntitle: Trout return: a story\nsource: Elm Herald\npublished: 2026-05-18\n---\n\nBody.")
    assert (yaml_doc.format, yaml_doc.title, yaml_doc.source, yaml_doc.published) == (
        "yaml", "Trout return: a story", "Elm Herald", date(2026, 5, 18))
    assert yaml_doc.body.strip() == "Body."
    assert yaml_doc.provenance_names() == ["Elm Herald"]
    toml_doc = read_front_matter('+++\ntitle = "Mill"\npublisher = "Gazette"\ndate = 2025-03-04\n+++\nText')
    assert (toml_doc.format, toml_doc.source, toml_doc.published, toml_doc.body) == ("toml", "Gazette", date(2025, 3, 4), "Text")
    line = read_front_matter("Date: 3 March 2025\nText")
    assert (line.format, line.published, line.body) == ("date-line", date(2025, 3, 3), "Text")
    plain = read_front_matter("No metadata here.\n---\n")
    assert (plain.format, plain.body, plain.published) == ("none", "No metadata here.\n---\n", None)


def test_a_front_matter_date_that_is_no_date_names_the_key():
    with pytest.raises(FrontMatterError, match="published: 'soon' is not a date"):
        read_front_matter("---\npublished: soon\n---\nText").published


def test_a_month_or_a_year_is_a_publication_date_read_as_its_first_day():
    # a monthly newsletter dated "2026-09" used to be refused, and the whole document went unlearned
    assert publication_date("2026-09") == date(2026, 9, 1) and publication_date("2026") == date(2026, 1, 1)
    assert publication_date("September 2026") == date(2026, 9, 1) and publication_date("6 July 2026") == date(2026, 7, 6)
    assert publication_date("2026-02-20T09:30") == datetime(2026, 2, 20, 9, 30)
    assert publication_date("2026-13") is None and publication_date("soon") is None
    assert read_front_matter("---\ndate: 2026-09\n---\nText").published == date(2026, 9, 1)


def test_words_and_stems():
    assert stem("volunteers") == stem("volunteer") == stem("Volunteering")
    assert content_words("The volunteers registered since January", stems=False) == ["volunteers", "registered", "january"]


def test_a_word_that_only_opens_a_sentence_is_a_name_only_when_the_dictionary_has_no_such_word():
    from moot.text import find_names, names_in

    assert names_in("Visitors can watch the wheel turn.") == []
    assert names_in("Sealed drains help the river.") == []
    assert names_in("Describe the plan of the Hadley Trust.") == [("Hadley Trust", False)]
    assert names_in("Norway has won the cup.") == [("Norway", True)]  # no lower-case "norway" in the lexicon
    assert names_in("Quillorn's port grew.") == [("Quillorn", True)]
    # written mid-sentence, a capitalised word is a name whatever the dictionary has
    assert names_in("The mill of Brown and Sons opened.") == [("Brown and Sons", False)]
    assert find_names(["Today the mill is run by Jory Penhallow.", "Volunteers help Jory Penhallow."]) == ["Jory Penhallow"]


def test_a_number_written_as_a_year_is_a_year_and_an_amount_is_not():
    years = {q.text: q.year for q in find_quantities(
        "The 2024 fair made £2025 from 2,000 visitors; 2000 km of road; 1825 days; 1987 members; 3412 cups.")}
    # "1987 members" reads as a year: without its comma a round count is written as a year is
    assert years == {"2024 fair": 2024, "£2025": None, "2,000 visitors": None, "2000 km": None, "1825 days": None,
                     "1987 members": 1987, "3412 cups": None}


def test_noun_phrases_mend_the_taggers_slips_inside_a_phrase():
    from moot.text import noun_phrases

    def phrases(sentence: str) -> list[str]:
        return [p.text for p in noun_phrases(sentence)]

    # a participle an article opens is a modifier; one after a relative "that" stays a verb
    assert "returned parcels" in phrases("Every one of the returned parcels was checked.")
    assert "caused delays" not in phrases("The firm that caused delays was fined.")
    # a base-form verb after an article's singular noun, before a preposition, is the phrase's head
    assert "ice cover" in phrases("The ice cover on the harbour has been thin all month.")
    # a possessive split at its apostrophe is joined like "of", its parts kept
    found = phrases("The sale of Tolvik's Quay fish market closed the stalls.")
    assert {"Tolvik's Quay fish market", "sale of Tolvik's Quay fish market", "Tolvik"} <= set(found)
    # a lone common noun is offered with the preposition that completes it, and alone as well
    found = phrases("The rise in fares pushed riders away, and the strain on the cable grew.")
    assert {"rise in fares", "strain on the cable", "rise", "fares"} <= set(found)
    # a longer phrase is not joined that way: only "of" and "at" join any two
    assert "ticket sales in May" not in [p.lower() for p in phrases("Ticket sales in May rose by a fifth.")]
    # a clause left without a verb has it inside a noun run, also where the run ends at the verb and
    # a determiner opens the next phrase
    found = phrases("The Yestle dam board sets the limits on Corvale pike.")
    assert "Yestle dam board" in found and not any("sets" in f for f in found)


def test_a_sentence_says_something_is_not_known_with_a_negated_verb_or_a_negative_subject():
    from moot.text import says_unknown

    assert says_unknown("The seepage has not been measured.")
    assert says_unknown("Nobody has ever measured how much the old culvert leaks.")
    assert says_unknown("No one has counted the cyclists on the towpath this year.")
    assert says_unknown("Nobody can say whether the footfall fell.")
    # a negative subject with any other verb says nothing about knowing
    assert not says_unknown("No one has complained about the new timetable.")
    assert not says_unknown("Nobody has left the harbour since Friday.")
