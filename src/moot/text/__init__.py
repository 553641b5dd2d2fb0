"""Reading text by format: sentences, front matter, dates, numbers and quantities, words and stems.

One tested package that every team reads text through, built on well-kept libraries where one
exists (pysbd for sentence boundaries, TextBlob's bundled tagger for noun phrases, snowballstemmer for stems, text2num for number words,
PyYAML and tomllib for front matter, the standard library's calendar for dates). It reads
*formats* — a date, a number with its unit, a sentence boundary, a YAML header — never the
wording of particular sentences: what a sentence means is the model's job, under a schema.
"""

from __future__ import annotations

from moot.text.cues import Cue, find_cues, hedged, says_unknown
from moot.text.dates import DateMention, find_dates, names_a_time
from moot.text.frontmatter import FrontMatter, read_front_matter
from moot.text.names import find_names, names_in
from moot.text.numbers import Quantity, find_quantities, parse_number
from moot.text.phrases import Phrase, alternatives, noun_phrases
from moot.text.questions import INTERROGATIVES, opens_question, predicate, question_clauses
from moot.text.sentences import TextUnit, split_units
from moot.text.words import STOPWORDS, content_words, stem, words

__all__ = [
    "INTERROGATIVES",
    "STOPWORDS",
    "Cue",
    "DateMention",
    "FrontMatter",
    "Phrase",
    "Quantity",
    "TextUnit",
    "alternatives",
    "content_words",
    "find_cues",
    "find_dates",
    "find_names",
    "find_quantities",
    "hedged",
    "names_a_time",
    "names_in",
    "noun_phrases",
    "opens_question",
    "parse_number",
    "predicate",
    "question_clauses",
    "read_front_matter",
    "says_unknown",
    "split_units",
    "stem",
    "words",
]
