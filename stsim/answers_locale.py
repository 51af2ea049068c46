"""What a geoqa reply may write in the question's language (level 0: standard library, Babel).

A question asked with ``--language CODE`` (:mod:`stsim.geoqa.languages`) keeps its answer
instruction in English, but a model may still answer in the question's language: ``850 Meilen``,
``12.000`` (German grouping), ``Lettland und Russland``.  The readers of
:mod:`stsim.answers_geo` take the language from ``spec["language"]``
(:func:`stsim.answers.reading_spec`; English when absent) and use the tables below.

* :data:`LIST_WORDS` -- the words that join two names ("and", "or"), written between spaces.
* ``data/geoqa_conjoined_names.txt`` -- the entity names in which such a word stands between
  two words ("Bosnia and Herzegovina", "Treinta y Tres"): one name, not two.
"""
from __future__ import annotations

import re
import unicodedata

#: Language (ISO 639-1, as :data:`stsim.geoqa.languages.LANGUAGES`) -> (the words for "and",
#: the words for "or"), each read as a word between spaces; English's apply in every language
#: (the answer instruction is English).  Chinese and Japanese write them without spaces: a name
#: in Han or Kana is refused anyway (no Latin letter: the gold names are English).  Greek "ή"
#: (or) is left out: without its accent it is the article "η".  Source: each language's
#: conjunctions (Wiktionary, entries "and" and "or"), spelled as :func:`spaced_words` leaves
#: them (lower case, accents dropped).
LIST_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "en": (("and",), ("or",)),
    "de": (("und",), ("oder",)),
    "es": (("y",), ("o",)),
    "ru": (("и",), ("или",)),
    "el": (("και",), ()),
    "fa": (("و",), ("یا",)),
    "zh": ((), ()),
    "ja": ((), ()),
    "ka": (("და",), ("ან",)),
}

#: Letters written two ways in Persian text (Arabic kaf and yeh for the Persian ones).
_PERSIAN = str.maketrans({"\u0643": "\u06a9", "\u064a": "\u06cc"})


def casefold_words(text: str) -> str:
    """``text`` as lower-case words of any script, accents dropped, ``&`` spelled ``and``,
    every other non-word character a single space ("Kilómetros²" -> "kilometros 2",
    "Trinidad & Tobago" -> "trinidad and tobago", "χιλιόμετρα" -> "χιλιομετρα").  Unlike
    :func:`stsim.answers_geo.fold` it keeps Cyrillic, Greek, Persian, Georgian and CJK letters,
    so that a word in them is seen (and refused when unknown), not dropped."""
    t = unicodedata.normalize("NFKD", str(text).replace("&", " and "))
    t = "".join(c for c in t if not unicodedata.combining(c)).casefold().translate(_PERSIAN)
    return re.sub(r"[\W_]+", " ", t).strip()


def spaced_words(text: str) -> list[str]:
    """The whitespace-separated words of ``text``, lower-case, accents dropped, ``&`` a word
    ``and``, punctuation kept ("Trinidad & Tobago" -> ``["trinidad", "and", "tobago"]``,
    "A-k'o-su" -> ``["a-k'o-su"]``): a list word joins names only between spaces."""
    t = unicodedata.normalize("NFKD", str(text).replace("&", " and "))
    return "".join(c for c in t if not unicodedata.combining(c)).casefold().translate(_PERSIAN).split()


def list_words(lang: str | None) -> tuple[frozenset[str], frozenset[str]]:
    """(the "and" words, the "or" words) of English and of ``lang`` (:data:`LIST_WORDS`; an
    unknown or no language: English's)."""
    en, other = LIST_WORDS["en"], LIST_WORDS.get(lang or "en", ((), ()))
    return frozenset(en[0] + other[0]), frozenset(en[1] + other[1])
