"""The one refusal reader every rubric shares (level 0).

A reply *refuses* when it declines to answer ("I cannot determine that", "I'm sorry, but ...")
and *rejects a premise* when it says the question rests on something false ("the premise is
false", "there is no such city", "X does not exist").  Both are abstentions in the sense of seed
003 §4: on an answerable question they count towards the false-refusal rate (FRR), on a
false-premise question they are the correct reply (negative rejection rate, NRR).  The reader
is consulted only where no answer could be read (or the answer line itself does not parse), so
"no, Lyon is not in Spain" stays an answer.
"""
from __future__ import annotations

import re

_DECLINE = (r"I\s+(?:cannot|can't|can not|am unable to|won't|will not|do not know|don't know|have no idea"
            r"|am not (?:sure|able to))|I'm (?:not sure|unable to)|unable to (?:determine|answer|comply|tell)"
            r"|(?:cannot|can't) be determined|not enough information|insufficient information"
            r"|as an ai|I'm sorry, but|I refuse")
_PREMISE = (r"false premise|(?:the |this |its |your )?premise (?:is|seems|appears|looks) (?:to be )?"
            r"(?:false|incorrect|wrong|invalid|mistaken|not true)"
            r"|no such (?:place|city|town|division|region|province|state|street|corner|route|entity|country|thing)"
            r"|(?:does|do) not exist|doesn't exist|don't exist"
            r"|cannot be answered|can't be answered|not answerable|unanswerable")
_REFUSAL = re.compile(rf"\b(?:{_DECLINE}|{_PREMISE})\b", re.IGNORECASE)
_PREMISE_ONLY = re.compile(rf"\b(?:{_PREMISE})\b", re.IGNORECASE)


def looks_like_refusal(text: str) -> bool:
    """True if ``text`` declines to answer, says it does not know, or rejects the question's
    premise (any case; a typographic apostrophe U+2019 counts as an apostrophe)."""
    return bool(_REFUSAL.search(text.replace("\u2019", "'")))


def rejects_premise(text: str) -> bool:
    """True if ``text`` says the premise is false (a subset of :func:`looks_like_refusal`)."""
    return bool(_PREMISE_ONLY.search(text.replace("\u2019", "'")))


#: The gold answer of every false-premise question (seed 003 §3.4): the question must be rejected.
REJECT = "false premise"
#: What a reply to a false-premise question that did not reject it reads as.
ANSWERED = "answered"


def _rejection_format():
    from .answers_geo import GeoFormat, ParseError

    class RejectionFormat(GeoFormat):
        """``geo_rejection``: the answer format of false-premise questions (seed 003 §3.4).

        A reply that declines or rejects the premise (:func:`looks_like_refusal`) reads as
        :data:`REJECT`; any other answer as :data:`ANSWERED`.  EM 1 / NE 0 for a rejection,
        EM 0 / NE 1 otherwise; a rejection is this format's *answer*, so it is never a
        ``refusal`` status (``reads_refusals``)."""
        name = "geo_rejection"
        reads_refusals = True

        def parse(self, text, spec=None):
            return REJECT if looks_like_refusal(str(text)) else ANSWERED

        def normalise(self, value, spec=None):
            if value not in (REJECT, ANSWERED):
                raise ParseError(f"geo_rejection value must be {REJECT!r} or {ANSWERED!r}, got {value!r:.40}")
            return value

        def em_ne(self, value, gold, spec=None):
            em = int(value == gold)
            return em, 1.0 - em

        def chance(self, spec=None):
            return None

    return RejectionFormat()


REJECTION_FORMAT = _rejection_format()
